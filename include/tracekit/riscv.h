/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V instruction decoding for trace: length, control-flow class, registers, immediates,
 * the 2.0 jump classes, and a disassembler for listings. RV32/RV64 with C. */
#ifndef TRACEKIT_RISCV_H
#define TRACEKIT_RISCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "riscv_ops.h"
#include "event.h"
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

/* A decoded instruction. Compressed instructions report the operands of their 32-bit
 * expansion (RISC-V unprivileged spec, "C" chapter): c.jr rs1 is rd=0,rs1; c.jalr rs1 is
 * rd=1,rs1; c.jal is rd=1; c.j is rd=0; c.beqz/c.bnez compare rs1 with rs2=0; c.mv is
 * rd,rs1=0,rs2; c.add is rd=rs1,rs2; c.lwsp/c.swsp have rs1=2. Register numbers name float
 * registers for the F/D operands of F/D instructions.
 * imm holds: the sign-extended I/S/B/J immediate; the full value of lui/auipc/c.lui
 * (imm20 << 12, sign-extended); the shift amount of shifts; the CSR number of CSR
 * instructions (the 5-bit uimm of csrr*i is in rs1, as in the encoding); bits 31:20 of fence.
 * Other fields (rounding mode, aq/rl, rs3 of fused multiply-add) are read from raw. */
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
    uint8_t xlen;  /* 32 or 64, as decoded (0 in a hand-built insn is taken as 64) */
} tk_rv_insn;

/* Decode the instruction whose low bits are in `bits` (pass at least 32 bits; only 16 are
 * used for a compressed one). xlen is 32 or 64. Unknown encodings decode with op
 * TK_RV_OP_UNKNOWN (the all-zero halfword with TK_RV_OP_C_UNIMP), the right length, no
 * operands, and TK_ERR_BAD_INSN is returned; lengths other than 16/32 bits are
 * TK_ERR_UNSUPPORTED (len 0); a bad xlen or NULL out is TK_ERR_INVALID. */
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

/* Is the target known from the instruction alone: branch, jal/c.jal/c.j, or jalr with
 * rs1 = x0 (target = imm)? (E-Trace 2.0 glossary "inferable jump"; the reference decoder
 * treats jalr x0-based the same way.) */
static inline bool tk_rv_is_inferable(const tk_rv_insn *i)
{
    return i->cf == TK_RV_CF_BRANCH || i->cf == TK_RV_CF_JAL ||
           (i->cf == TK_RV_CF_JALR && i->rs1 == 0);
}

/* jalr/c.jr/c.jalr whose target depends on a register (rs1 != x0). */
static inline bool tk_rv_is_uninferable_jump(const tk_rv_insn *i)
{
    return i->cf == TK_RV_CF_JALR && i->rs1 != 0;
}

/* Is insn a jump made inferable by the instruction before it (auipc/lui/c.lui writing the
 * jump's rs1)? (sequentially inferable jumps, spec "sijump") */
bool tk_rv_is_sijump_pair(const tk_rv_insn *prev, const tk_rv_insn *jump);
/* Target of a sequentially inferable jump given the pc of prev. */
uint64_t tk_rv_sijump_target(const tk_rv_insn *prev, uint64_t prev_pc, const tk_rv_insn *jump,
                             unsigned xlen);

/* itype for an instruction that retired (2.0 codes; itype_width 3 or 4). */
uint8_t tk_rv_itype(const tk_rv_insn *i, bool taken, bool sijump, unsigned itype_width);

/* Disassemble into buf (objdump -M no-aliases spelling: "addi\ta0,a0,1"). Branch/jump
 * targets are printed as absolute hex addresses computed from pc (no symbol). Returns the
 * length of the full text, like snprintf (buf is always terminated if cap > 0). */
int tk_rv_disasm(const tk_rv_insn *i, uint64_t pc, char *buf, size_t cap);
/* Mnemonic of an op id ("unknown" for an id out of range). */
const char *tk_rv_op_name(uint16_t op);
/* Operand format of an op id (tk_rv_fmt). */
unsigned tk_rv_op_fmt(uint16_t op);

/* Jump class of a decoded jal/jalr by the 2.0 table (computed by tk_rv_decode already, in
 * i->jclass; exposed for instructions built by hand). */
tk_rv_jclass tk_rv_jump_class(const tk_rv_insn *i);

/* How a trace event range that ends at instruction i ends (tk_range_end), by its control-flow
 * class and 2.0 jump class. Shared by every RISC-V flow decoder so they report alike. */
static inline uint8_t tk_rv_range_end(const tk_rv_insn *i)
{
    switch (i->cf) {
    case TK_RV_CF_BRANCH:
        return TK_END_BRANCH;
    case TK_RV_CF_JAL:
    case TK_RV_CF_JALR:
        switch (i->jclass) {
        case TK_RV_J_CALL:
            return TK_END_CALL;
        case TK_RV_J_RETURN:
            return TK_END_RETURN;
        case TK_RV_J_SWAP:
            return TK_END_SWAP;
        case TK_RV_J_OTHER:
            return TK_END_OTHER_JUMP;
        default:
            return TK_END_JUMP;
        }
    case TK_RV_CF_XRET:
        return TK_END_TRAP_RETURN;
    case TK_RV_CF_ECALL:
    case TK_RV_CF_EBREAK:
        return TK_END_TRAP;
    default:
        return TK_END_NONE;
    }
}

#ifdef __cplusplus
}
#endif
#endif
