/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V instruction decoding for trace: length, control-flow class, registers, immediates,
 * the 2.0 jump classes, and a disassembler for listings. RV32/RV64 with C. */
#ifndef TRACEKIT_RISCV_H
#define TRACEKIT_RISCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Control-flow kind of an instruction, what trace cares about. */
typedef enum tk_rv_cf {
    TK_RV_CF_NONE = 0, /* falls through to pc + len */
    TK_RV_CF_BRANCH,   /* conditional branch: beq..bgeu, c.beqz, c.bnez */
    TK_RV_CF_JAL,      /* jal, c.j, c.jal: target = pc + imm */
    TK_RV_CF_JALR,     /* jalr, c.jr, c.jalr: target = rs1 + imm */
    TK_RV_CF_XRET,     /* mret, sret, uret, dret, mnret */
    TK_RV_CF_ECALL,
    TK_RV_CF_EBREAK, /* ebreak, c.ebreak */
} tk_rv_cf;

/* Jump class of jal/jalr per the 2.0 RAS-hint table (spec/VERSIONS.md B.1). */
typedef enum tk_rv_jclass {
    TK_RV_J_NONE = 0,
    TK_RV_J_CALL,
    TK_RV_J_TAIL, /* jump without linkage */
    TK_RV_J_RETURN,
    TK_RV_J_SWAP,  /* co-routine swap */
    TK_RV_J_OTHER, /* other jump with linkage */
} tk_rv_jclass;

typedef struct tk_rv_insn {
    uint32_t raw;   /* instruction bits (16 significant bits if len == 2) */
    uint16_t op;    /* mnemonic id: TK_RV_OP_* (see riscv_ops.h) */
    uint8_t len;    /* 2 or 4 */
    uint8_t cf;     /* tk_rv_cf */
    uint8_t jclass; /* tk_rv_jclass, for JAL/JALR */
    uint8_t rd;     /* 0 when the instruction has no destination */
    uint8_t rs1;
    uint8_t rs2;
    int64_t imm; /* sign-extended immediate (branch/jump offset, jalr offset, lui/auipc value) */
    bool compressed;
    bool is_auipc; /* auipc */
    bool is_lui;   /* lui, c.lui */
} tk_rv_insn;

/* Decode the instruction whose low bits are in `bits` (pass at least 32 bits; only 16 are
 * used for a compressed one). xlen is 32 or 64. Unknown encodings decode with op
 * TK_RV_OP_UNKNOWN and the right length and TK_ERR_BAD_INSN is returned; lengths other than
 * 16/32 bits are TK_ERR_UNSUPPORTED. */
tk_status tk_rv_decode(uint32_t bits, unsigned xlen, tk_rv_insn *out);

/* Instruction length from the first 16 bits: 2, 4, or 0 for unsupported (48/64-bit). */
static inline unsigned tk_rv_length(uint16_t lo)
{
    if ((lo & 3u) != 3u)
        return 2;
    if ((lo & 0x1cu) != 0x1cu)
        return 4;
    return 0;
}

/* Is the target known from the instruction alone (branch, jal)? */
static inline bool tk_rv_is_inferable(const tk_rv_insn *i)
{
    return i->cf == TK_RV_CF_BRANCH || i->cf == TK_RV_CF_JAL;
}

/* Is insn a jump made inferable by the instruction before it (auipc/lui/c.lui writing the
 * jump's rs1)? (sequentially inferable jumps, spec "sijump") */
bool tk_rv_is_sijump_pair(const tk_rv_insn *prev, const tk_rv_insn *jump);
/* Target of a sequentially inferable jump given the pc of prev. */
uint64_t tk_rv_sijump_target(const tk_rv_insn *prev, uint64_t prev_pc, const tk_rv_insn *jump,
                             unsigned xlen);

/* itype for an instruction that retired (2.0 codes; itype_width 3 or 4). */
uint8_t tk_rv_itype(const tk_rv_insn *i, bool taken, bool sijump, unsigned itype_width);

/* Disassemble into buf (objdump-like: "addi\ta0,a0,1"). Branch/jump targets are printed as
 * absolute addresses computed from pc. Returns the number of characters written. */
int tk_rv_disasm(const tk_rv_insn *i, uint64_t pc, char *buf, size_t cap);
/* Mnemonic of an op id. */
const char *tk_rv_op_name(uint16_t op);

#ifdef __cplusplus
}
#endif
#endif
