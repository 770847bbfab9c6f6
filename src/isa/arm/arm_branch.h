/* SPDX-License-Identifier: BSD-2-Clause */
/* Branch classification of A64, A32 and T32 instructions: what an ETMv4 flow decoder needs
 * to know about each instruction it walks (Arm ARM DDI0487, sections C4.1 (A64) and F3/F4
 * (A32/T32) encoding indexes). */
#ifndef TK_ISA_ARM_BRANCH_H
#define TK_ISA_ARM_BRANCH_H

#include <stddef.h>
#include <stdint.h>

typedef enum tk_arm_isa {
    TK_ARM_A64 = 0,
    TK_ARM_A32 = 1,
    TK_ARM_T32 = 2,
} tk_arm_isa;

typedef enum tk_arm_kind {
    TK_ARM_OTHER = 0, /* not a branch: execution continues at the next instruction */
    TK_ARM_BRANCH,    /* a direct or indirect branch (an ETMv4 P0 instruction) */
} tk_arm_kind;

typedef struct tk_arm_insn {
    uint8_t size;       /* 2 or 4 bytes */
    uint8_t kind;       /* tk_arm_kind */
    uint8_t indirect;   /* target comes from a register (or memory) */
    uint8_t cond;       /* conditional: may be not taken */
    uint8_t link;       /* writes a return address (call) */
    uint8_t ret;        /* function return (RET, BX LR, POP {..pc}) */
    uint8_t eret;       /* exception return */
    uint8_t wfx;        /* WFI/WFE/WFIT/WFET: a P0 instruction when TRCIDR2.WFXMODE is set (then
                         * like a taken branch to the next instruction), else not a branch */
    uint8_t target_isa; /* ISA at a direct target (BLX immediate switches A32 <-> T32) */
    uint64_t target;    /* direct branches: the target address */
} tk_arm_insn;

/* Classify the instruction at addr from the bytes b[0..avail). Returns 0, or -1 when avail is
 * too short for the instruction (size set to the bytes needed). */
int tk_arm_classify(tk_arm_isa isa, uint64_t addr, const uint8_t *b, size_t avail,
                    tk_arm_insn *out);

#endif
