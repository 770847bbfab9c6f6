/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V instruction decoder: RV32/RV64 IMAFD, Zicsr, Zifencei, C, Zba/Zbb/Zbs.
 * Switch-based on the major opcode (RISC-V unprivileged spec, "RV32/64G Instruction Set
 * Listings" and the "C" chapter). This is on the trace decoders' hot path: no tables to
 * search, no strings. */
#include "tracekit/riscv.h"

#include <string.h>

static inline uint32_t bits(uint32_t x, unsigned hi, unsigned lo)
{
    return (x >> lo) & ((1u << (hi - lo + 1)) - 1u);
}

static inline int64_t sext(uint64_t v, unsigned width)
{
    uint64_t m = 1ull << (width - 1);
    return (int64_t)((v ^ m) - m);
}

static inline int64_t imm_i(uint32_t r)
{
    return (int32_t)r >> 20;
}

static inline int64_t imm_s(uint32_t r)
{
    return (int64_t)(((int32_t)r >> 25) * 32) | bits(r, 11, 7);
}

static inline int64_t imm_b(uint32_t r)
{
    uint32_t v = (bits(r, 31, 31) << 12) | (bits(r, 7, 7) << 11) | (bits(r, 30, 25) << 5) |
                 (bits(r, 11, 8) << 1);
    return sext(v, 13);
}

static inline int64_t imm_j(uint32_t r)
{
    uint32_t v = (bits(r, 31, 31) << 20) | (bits(r, 19, 12) << 12) | (bits(r, 20, 20) << 11) |
                 (bits(r, 30, 21) << 1);
    return sext(v, 21);
}

static inline int64_t imm_u(uint32_t r)
{
    return (int32_t)(r & 0xfffff000u);
}

/* Field setters by encoding type. */
static inline void set_r(tk_rv_insn *o, uint32_t r)
{
    o->rd = bits(r, 11, 7);
    o->rs1 = bits(r, 19, 15);
    o->rs2 = bits(r, 24, 20);
}

static inline void set_i(tk_rv_insn *o, uint32_t r)
{
    o->rd = bits(r, 11, 7);
    o->rs1 = bits(r, 19, 15);
    o->imm = imm_i(r);
}

static inline void set_s(tk_rv_insn *o, uint32_t r)
{
    o->rs1 = bits(r, 19, 15);
    o->rs2 = bits(r, 24, 20);
    o->imm = imm_s(r);
}

/* 2.0 jump class (spec/VERSIONS.md B.1; E-Trace 2.0 itype table, RAS hints of the
 * unprivileged spec "jalr" section). x1 and x5 are the link registers. */
tk_rv_jclass tk_rv_jump_class(const tk_rv_insn *i)
{
    bool rd_link = i->rd == 1 || i->rd == 5;
    bool rs_link = i->rs1 == 1 || i->rs1 == 5;

    if (i->cf == TK_RV_CF_JAL)
        return rd_link ? TK_RV_J_CALL : i->rd == 0 ? TK_RV_J_TAIL : TK_RV_J_OTHER;
    if (i->cf != TK_RV_CF_JALR)
        return TK_RV_J_NONE;
    if (rd_link && rs_link)
        return i->rd == i->rs1 ? TK_RV_J_CALL : TK_RV_J_SWAP;
    if (rd_link)
        return TK_RV_J_CALL;
    if (rs_link)
        return TK_RV_J_RETURN;
    return i->rd == 0 ? TK_RV_J_TAIL : TK_RV_J_OTHER;
}

static tk_rv_op decode_op_imm(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);
    unsigned f6 = bits(r, 31, 26);
    unsigned shmask = xlen == 64 ? 0x3f : 0x1f;

    set_i(o, r);
    switch (f3) {
    case 0:
        return TK_RV_OP_ADDI;
    case 2:
        return TK_RV_OP_SLTI;
    case 3:
        return TK_RV_OP_SLTIU;
    case 4:
        return TK_RV_OP_XORI;
    case 6:
        return TK_RV_OP_ORI;
    case 7:
        return TK_RV_OP_ANDI;
    default:
        break;
    }
    /* Shifts and their Zbb/Zbs relatives: imm[11:6] selects, imm[5] is shamt[5] (RV64). */
    if (xlen == 32 && bits(r, 25, 25))
        return TK_RV_OP_UNKNOWN;
    o->imm = bits(r, 25, 20) & shmask;
    if (f3 == 1) {
        switch (f6) {
        case 0x00:
            return TK_RV_OP_SLLI;
        case 0x12:
            return TK_RV_OP_BCLRI;
        case 0x1a:
            return TK_RV_OP_BINVI;
        case 0x0a:
            return TK_RV_OP_BSETI;
        case 0x18:
            if (bits(r, 25, 25))
                return TK_RV_OP_UNKNOWN;
            o->imm = 0;
            switch (bits(r, 24, 20)) {
            case 0:
                return TK_RV_OP_CLZ;
            case 1:
                return TK_RV_OP_CTZ;
            case 2:
                return TK_RV_OP_CPOP;
            case 4:
                return TK_RV_OP_SEXT_B;
            case 5:
                return TK_RV_OP_SEXT_H;
            }
            return TK_RV_OP_UNKNOWN;
        }
        return TK_RV_OP_UNKNOWN;
    }
    /* f3 == 5 */
    switch (bits(r, 31, 20)) {
    case 0x287:
        o->imm = 0;
        return TK_RV_OP_ORC_B;
    case 0x698:
    case 0x6b8:
        if (bits(r, 31, 20) == (xlen == 64 ? 0x6b8u : 0x698u)) {
            o->imm = 0;
            return TK_RV_OP_REV8;
        }
        return TK_RV_OP_UNKNOWN;
    }
    switch (f6) {
    case 0x00:
        return TK_RV_OP_SRLI;
    case 0x10:
        return TK_RV_OP_SRAI;
    case 0x12:
        return TK_RV_OP_BEXTI;
    case 0x18:
        return TK_RV_OP_RORI;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode_op_imm32(uint32_t r, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);
    unsigned f7 = bits(r, 31, 25);

    set_i(o, r);
    if (f3 == 0)
        return TK_RV_OP_ADDIW;
    o->imm = bits(r, 24, 20);
    if (f3 == 1) {
        if (f7 == 0)
            return TK_RV_OP_SLLIW;
        if ((f7 >> 1) == 0x02) { /* slli.uw: 6-bit shamt */
            o->imm = bits(r, 25, 20);
            return TK_RV_OP_SLLI_UW;
        }
        if (f7 == 0x30) {
            o->imm = 0;
            switch (bits(r, 24, 20)) {
            case 0:
                return TK_RV_OP_CLZW;
            case 1:
                return TK_RV_OP_CTZW;
            case 2:
                return TK_RV_OP_CPOPW;
            }
        }
        return TK_RV_OP_UNKNOWN;
    }
    if (f3 == 5) {
        if (f7 == 0)
            return TK_RV_OP_SRLIW;
        if (f7 == 0x20)
            return TK_RV_OP_SRAIW;
        if (f7 == 0x30)
            return TK_RV_OP_RORIW;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode_op(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    static const uint16_t base[8] = {TK_RV_OP_ADD, TK_RV_OP_SLL, TK_RV_OP_SLT, TK_RV_OP_SLTU,
                                     TK_RV_OP_XOR, TK_RV_OP_SRL, TK_RV_OP_OR,  TK_RV_OP_AND};
    static const uint16_t mul[8] = {TK_RV_OP_MUL, TK_RV_OP_MULH, TK_RV_OP_MULHSU, TK_RV_OP_MULHU,
                                    TK_RV_OP_DIV, TK_RV_OP_DIVU, TK_RV_OP_REM,    TK_RV_OP_REMU};
    unsigned f3 = bits(r, 14, 12);
    unsigned f7 = bits(r, 31, 25);

    set_r(o, r);
    switch (f7) {
    case 0x00:
        return base[f3];
    case 0x01:
        return mul[f3];
    case 0x20:
        switch (f3) {
        case 0:
            return TK_RV_OP_SUB;
        case 4:
            return TK_RV_OP_XNOR;
        case 5:
            return TK_RV_OP_SRA;
        case 6:
            return TK_RV_OP_ORN;
        case 7:
            return TK_RV_OP_ANDN;
        }
        break;
    case 0x10:
        switch (f3) {
        case 2:
            return TK_RV_OP_SH1ADD;
        case 4:
            return TK_RV_OP_SH2ADD;
        case 6:
            return TK_RV_OP_SH3ADD;
        }
        break;
    case 0x05:
        switch (f3) {
        case 4:
            return TK_RV_OP_MIN;
        case 5:
            return TK_RV_OP_MINU;
        case 6:
            return TK_RV_OP_MAX;
        case 7:
            return TK_RV_OP_MAXU;
        }
        break;
    case 0x30:
        if (f3 == 1)
            return TK_RV_OP_ROL;
        if (f3 == 5)
            return TK_RV_OP_ROR;
        break;
    case 0x24:
        if (f3 == 1)
            return TK_RV_OP_BCLR;
        if (f3 == 5)
            return TK_RV_OP_BEXT;
        break;
    case 0x34:
        if (f3 == 1)
            return TK_RV_OP_BINV;
        break;
    case 0x14:
        if (f3 == 1)
            return TK_RV_OP_BSET;
        break;
    case 0x04: /* zext.h is pack rd,rs,x0 (OP on RV32, OP-32 on RV64) */
        if (xlen == 32 && f3 == 4 && o->rs2 == 0) {
            o->rs2 = 0;
            return TK_RV_OP_ZEXT_H;
        }
        break;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode_op32(uint32_t r, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);
    unsigned f7 = bits(r, 31, 25);

    set_r(o, r);
    switch (f7) {
    case 0x00:
        if (f3 == 0)
            return TK_RV_OP_ADDW;
        if (f3 == 1)
            return TK_RV_OP_SLLW;
        if (f3 == 5)
            return TK_RV_OP_SRLW;
        break;
    case 0x20:
        if (f3 == 0)
            return TK_RV_OP_SUBW;
        if (f3 == 5)
            return TK_RV_OP_SRAW;
        break;
    case 0x01:
        switch (f3) {
        case 0:
            return TK_RV_OP_MULW;
        case 4:
            return TK_RV_OP_DIVW;
        case 5:
            return TK_RV_OP_DIVUW;
        case 6:
            return TK_RV_OP_REMW;
        case 7:
            return TK_RV_OP_REMUW;
        }
        break;
    case 0x04:
        if (f3 == 0)
            return TK_RV_OP_ADD_UW;
        if (f3 == 4 && o->rs2 == 0)
            return TK_RV_OP_ZEXT_H;
        break;
    case 0x10:
        if (f3 == 2)
            return TK_RV_OP_SH1ADD_UW;
        if (f3 == 4)
            return TK_RV_OP_SH2ADD_UW;
        if (f3 == 6)
            return TK_RV_OP_SH3ADD_UW;
        break;
    case 0x30:
        if (f3 == 1)
            return TK_RV_OP_ROLW;
        if (f3 == 5)
            return TK_RV_OP_RORW;
        break;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode_system(uint32_t r, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);

    if (f3 == 0) {
        switch (r) {
        case 0x00000073:
            o->cf = TK_RV_CF_ECALL;
            return TK_RV_OP_ECALL;
        case 0x00100073:
            o->cf = TK_RV_CF_EBREAK;
            return TK_RV_OP_EBREAK;
        case 0x00200073:
            o->cf = TK_RV_CF_XRET;
            return TK_RV_OP_URET;
        case 0x10200073:
            o->cf = TK_RV_CF_XRET;
            return TK_RV_OP_SRET;
        case 0x30200073:
            o->cf = TK_RV_CF_XRET;
            return TK_RV_OP_MRET;
        case 0x70200073:
            o->cf = TK_RV_CF_XRET;
            return TK_RV_OP_MNRET;
        case 0x7b200073:
            o->cf = TK_RV_CF_XRET;
            return TK_RV_OP_DRET;
        case 0x10500073:
            return TK_RV_OP_WFI;
        }
        if (bits(r, 31, 25) == 0x09 && bits(r, 11, 7) == 0) {
            o->rs1 = bits(r, 19, 15);
            o->rs2 = bits(r, 24, 20);
            return TK_RV_OP_SFENCE_VMA;
        }
        return TK_RV_OP_UNKNOWN;
    }
    if (f3 == 4)
        return TK_RV_OP_UNKNOWN;
    o->rd = bits(r, 11, 7);
    o->rs1 = bits(r, 19, 15);
    o->imm = bits(r, 31, 20);
    switch (f3) {
    case 1:
        return TK_RV_OP_CSRRW;
    case 2:
        return TK_RV_OP_CSRRS;
    case 3:
        return TK_RV_OP_CSRRC;
    case 5:
        return TK_RV_OP_CSRRWI;
    case 6:
        return TK_RV_OP_CSRRSI;
    default:
        return TK_RV_OP_CSRRCI;
    }
}

static tk_rv_op decode_amo(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);
    unsigned f5 = bits(r, 31, 27);
    bool d;

    if (f3 == 2)
        d = false;
    else if (f3 == 3 && xlen == 64)
        d = true;
    else
        return TK_RV_OP_UNKNOWN;
    set_r(o, r);
    switch (f5) {
    case 0x02:
        if (o->rs2 != 0)
            return TK_RV_OP_UNKNOWN;
        return d ? TK_RV_OP_LR_D : TK_RV_OP_LR_W;
    case 0x03:
        return d ? TK_RV_OP_SC_D : TK_RV_OP_SC_W;
    case 0x01:
        return d ? TK_RV_OP_AMOSWAP_D : TK_RV_OP_AMOSWAP_W;
    case 0x00:
        return d ? TK_RV_OP_AMOADD_D : TK_RV_OP_AMOADD_W;
    case 0x04:
        return d ? TK_RV_OP_AMOXOR_D : TK_RV_OP_AMOXOR_W;
    case 0x0c:
        return d ? TK_RV_OP_AMOAND_D : TK_RV_OP_AMOAND_W;
    case 0x08:
        return d ? TK_RV_OP_AMOOR_D : TK_RV_OP_AMOOR_W;
    case 0x10:
        return d ? TK_RV_OP_AMOMIN_D : TK_RV_OP_AMOMIN_W;
    case 0x14:
        return d ? TK_RV_OP_AMOMAX_D : TK_RV_OP_AMOMAX_W;
    case 0x18:
        return d ? TK_RV_OP_AMOMINU_D : TK_RV_OP_AMOMINU_W;
    case 0x1c:
        return d ? TK_RV_OP_AMOMAXU_D : TK_RV_OP_AMOMAXU_W;
    }
    return TK_RV_OP_UNKNOWN;
}

/* OP-FP. Single and double differ by funct7 bit 0 (fmt field); the D op ids follow the
 * S ones in riscv_ops.h only where both exist, so pick explicitly. */
static tk_rv_op decode_op_fp(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);
    unsigned f7 = bits(r, 31, 25);
    unsigned rs2 = bits(r, 24, 20);
    bool dbl = f7 & 1;

    set_r(o, r);
    if (f7 & 2)
        return TK_RV_OP_UNKNOWN; /* fmt H/Q */
    switch (f7 >> 2) {
    case 0x00:
        return dbl ? TK_RV_OP_FADD_D : TK_RV_OP_FADD_S;
    case 0x01:
        return dbl ? TK_RV_OP_FSUB_D : TK_RV_OP_FSUB_S;
    case 0x02:
        return dbl ? TK_RV_OP_FMUL_D : TK_RV_OP_FMUL_S;
    case 0x03:
        return dbl ? TK_RV_OP_FDIV_D : TK_RV_OP_FDIV_S;
    case 0x0b:
        if (rs2 != 0)
            break;
        o->rs2 = 0;
        return dbl ? TK_RV_OP_FSQRT_D : TK_RV_OP_FSQRT_S;
    case 0x04:
        if (f3 > 2)
            break;
        if (dbl)
            return f3 == 0 ? TK_RV_OP_FSGNJ_D : f3 == 1 ? TK_RV_OP_FSGNJN_D : TK_RV_OP_FSGNJX_D;
        return f3 == 0 ? TK_RV_OP_FSGNJ_S : f3 == 1 ? TK_RV_OP_FSGNJN_S : TK_RV_OP_FSGNJX_S;
    case 0x05:
        if (f3 > 1)
            break;
        if (dbl)
            return f3 == 0 ? TK_RV_OP_FMIN_D : TK_RV_OP_FMAX_D;
        return f3 == 0 ? TK_RV_OP_FMIN_S : TK_RV_OP_FMAX_S;
    case 0x08: /* fcvt.s.d (0x20, rs2=1), fcvt.d.s (0x21, rs2=0) */
        o->rs2 = 0;
        if (!dbl && rs2 == 1)
            return TK_RV_OP_FCVT_S_D;
        if (dbl && rs2 == 0)
            return TK_RV_OP_FCVT_D_S;
        break;
    case 0x14:
        if (f3 > 2)
            break;
        if (dbl)
            return f3 == 2 ? TK_RV_OP_FEQ_D : f3 == 1 ? TK_RV_OP_FLT_D : TK_RV_OP_FLE_D;
        return f3 == 2 ? TK_RV_OP_FEQ_S : f3 == 1 ? TK_RV_OP_FLT_S : TK_RV_OP_FLE_S;
    case 0x18: /* fcvt.{w,wu,l,lu}.{s,d} */
        if (rs2 > 3 || (rs2 > 1 && xlen == 32))
            break;
        o->rs2 = 0;
        if (dbl)
            return (tk_rv_op)(TK_RV_OP_FCVT_W_D + rs2);
        return (tk_rv_op)(TK_RV_OP_FCVT_W_S + rs2);
    case 0x1a: /* fcvt.{s,d}.{w,wu,l,lu} */
        if (rs2 > 3 || (rs2 > 1 && xlen == 32))
            break;
        o->rs2 = 0;
        if (dbl)
            return (tk_rv_op)(TK_RV_OP_FCVT_D_W + rs2);
        return (tk_rv_op)(TK_RV_OP_FCVT_S_W + rs2);
    case 0x1c:
        if (rs2 != 0)
            break;
        if (f3 == 0) {
            if (dbl && xlen == 32)
                break;
            return dbl ? TK_RV_OP_FMV_X_D : TK_RV_OP_FMV_X_W;
        }
        if (f3 == 1)
            return dbl ? TK_RV_OP_FCLASS_D : TK_RV_OP_FCLASS_S;
        break;
    case 0x1e:
        if (rs2 != 0 || f3 != 0 || (dbl && xlen == 32))
            break;
        return dbl ? TK_RV_OP_FMV_D_X : TK_RV_OP_FMV_W_X;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode32(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned f3 = bits(r, 14, 12);

    switch (r & 0x7f) {
    case 0x37:
        o->rd = bits(r, 11, 7);
        o->imm = imm_u(r);
        o->is_lui = true;
        return TK_RV_OP_LUI;
    case 0x17:
        o->rd = bits(r, 11, 7);
        o->imm = imm_u(r);
        o->is_auipc = true;
        return TK_RV_OP_AUIPC;
    case 0x6f:
        o->rd = bits(r, 11, 7);
        o->imm = imm_j(r);
        o->cf = TK_RV_CF_JAL;
        return TK_RV_OP_JAL;
    case 0x67:
        if (f3 != 0)
            return TK_RV_OP_UNKNOWN;
        set_i(o, r);
        o->cf = TK_RV_CF_JALR;
        return TK_RV_OP_JALR;
    case 0x63: {
        static const uint16_t br[8] = {TK_RV_OP_BEQ,     TK_RV_OP_BNE, TK_RV_OP_UNKNOWN,
                                       TK_RV_OP_UNKNOWN, TK_RV_OP_BLT, TK_RV_OP_BGE,
                                       TK_RV_OP_BLTU,    TK_RV_OP_BGEU};
        if (br[f3] == TK_RV_OP_UNKNOWN)
            return TK_RV_OP_UNKNOWN;
        o->rs1 = bits(r, 19, 15);
        o->rs2 = bits(r, 24, 20);
        o->imm = imm_b(r);
        o->cf = TK_RV_CF_BRANCH;
        return br[f3];
    }
    case 0x03: {
        static const uint16_t ld[8] = {TK_RV_OP_LB,  TK_RV_OP_LH,  TK_RV_OP_LW,  TK_RV_OP_LD,
                                       TK_RV_OP_LBU, TK_RV_OP_LHU, TK_RV_OP_LWU, TK_RV_OP_UNKNOWN};
        if (xlen == 32 && (f3 == 3 || f3 == 6))
            return TK_RV_OP_UNKNOWN;
        set_i(o, r);
        return ld[f3];
    }
    case 0x23:
        if (f3 > 3 || (f3 == 3 && xlen == 32))
            return TK_RV_OP_UNKNOWN;
        set_s(o, r);
        return (tk_rv_op)(TK_RV_OP_SB + f3);
    case 0x13:
        return decode_op_imm(r, xlen, o);
    case 0x1b:
        return xlen == 64 ? decode_op_imm32(r, o) : TK_RV_OP_UNKNOWN;
    case 0x33:
        return decode_op(r, xlen, o);
    case 0x3b:
        return xlen == 64 ? decode_op32(r, o) : TK_RV_OP_UNKNOWN;
    case 0x0f:
        if (f3 == 1)
            return TK_RV_OP_FENCE_I;
        if (f3 != 0)
            return TK_RV_OP_UNKNOWN;
        if (r == 0x8330000f)
            return TK_RV_OP_FENCE_TSO;
        o->imm = bits(r, 31, 20);
        return TK_RV_OP_FENCE;
    case 0x73:
        return decode_system(r, o);
    case 0x2f:
        return decode_amo(r, xlen, o);
    case 0x07:
        if (f3 != 2 && f3 != 3)
            return TK_RV_OP_UNKNOWN;
        set_i(o, r);
        return f3 == 2 ? TK_RV_OP_FLW : TK_RV_OP_FLD;
    case 0x27:
        if (f3 != 2 && f3 != 3)
            return TK_RV_OP_UNKNOWN;
        set_s(o, r);
        return f3 == 2 ? TK_RV_OP_FSW : TK_RV_OP_FSD;
    case 0x43:
    case 0x47:
    case 0x4b:
    case 0x4f: {
        unsigned fmt = bits(r, 26, 25);
        unsigned k = bits(r, 3, 2); /* 0 fmadd, 1 fmsub, 2 fnmsub, 3 fnmadd */
        if (fmt > 1)
            return TK_RV_OP_UNKNOWN;
        set_r(o, r);
        return (tk_rv_op)((fmt ? TK_RV_OP_FMADD_D : TK_RV_OP_FMADD_S) + k);
    }
    case 0x53:
        return decode_op_fp(r, xlen, o);
    }
    return TK_RV_OP_UNKNOWN;
}

/* Compressed immediates (unprivileged spec, "C" chapter, instruction formats). */
static inline int64_t cimm6(uint32_t r)
{
    return sext((bits(r, 12, 12) << 5) | bits(r, 6, 2), 6);
}

static inline int64_t cj_imm(uint32_t r)
{
    uint32_t v = (bits(r, 12, 12) << 11) | (bits(r, 11, 11) << 4) | (bits(r, 10, 9) << 8) |
                 (bits(r, 8, 8) << 10) | (bits(r, 7, 7) << 6) | (bits(r, 6, 6) << 7) |
                 (bits(r, 5, 3) << 1) | (bits(r, 2, 2) << 5);
    return sext(v, 12);
}

static inline int64_t cb_imm(uint32_t r)
{
    uint32_t v = (bits(r, 12, 12) << 8) | (bits(r, 11, 10) << 3) | (bits(r, 6, 5) << 6) |
                 (bits(r, 4, 3) << 1) | (bits(r, 2, 2) << 5);
    return sext(v, 9);
}

/* Offsets of c.lw/c.flw (word) and c.ld/c.fld (double) with rs1'. */
static inline uint32_t cl_w(uint32_t r)
{
    return (bits(r, 12, 10) << 3) | (bits(r, 6, 6) << 2) | (bits(r, 5, 5) << 6);
}

static inline uint32_t cl_d(uint32_t r)
{
    return (bits(r, 12, 10) << 3) | (bits(r, 6, 5) << 6);
}

static tk_rv_op decode_q0(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned rdp = bits(r, 4, 2) + 8;
    unsigned rs1p = bits(r, 9, 7) + 8;

    switch (bits(r, 15, 13)) {
    case 0: {
        uint32_t v = (bits(r, 12, 11) << 4) | (bits(r, 10, 7) << 6) | (bits(r, 6, 6) << 2) |
                     (bits(r, 5, 5) << 3);
        if (r == 0)
            return TK_RV_OP_C_UNIMP;
        if (v == 0)
            return TK_RV_OP_UNKNOWN;
        o->rd = rdp;
        o->rs1 = 2;
        o->imm = v;
        return TK_RV_OP_C_ADDI4SPN;
    }
    case 1:
        o->rd = rdp;
        o->rs1 = rs1p;
        o->imm = cl_d(r);
        return TK_RV_OP_C_FLD;
    case 2:
        o->rd = rdp;
        o->rs1 = rs1p;
        o->imm = cl_w(r);
        return TK_RV_OP_C_LW;
    case 3:
        o->rd = rdp;
        o->rs1 = rs1p;
        o->imm = xlen == 64 ? cl_d(r) : cl_w(r);
        return xlen == 64 ? TK_RV_OP_C_LD : TK_RV_OP_C_FLW;
    case 5:
        o->rs2 = rdp;
        o->rs1 = rs1p;
        o->imm = cl_d(r);
        return TK_RV_OP_C_FSD;
    case 6:
        o->rs2 = rdp;
        o->rs1 = rs1p;
        o->imm = cl_w(r);
        return TK_RV_OP_C_SW;
    case 7:
        o->rs2 = rdp;
        o->rs1 = rs1p;
        o->imm = xlen == 64 ? cl_d(r) : cl_w(r);
        return xlen == 64 ? TK_RV_OP_C_SD : TK_RV_OP_C_FSW;
    }
    return TK_RV_OP_UNKNOWN;
}

static tk_rv_op decode_q1(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned rd = bits(r, 11, 7);
    unsigned rs1p = bits(r, 9, 7) + 8;
    unsigned rs2p = bits(r, 4, 2) + 8;

    switch (bits(r, 15, 13)) {
    case 0:
        o->rd = o->rs1 = rd;
        o->imm = cimm6(r);
        return TK_RV_OP_C_ADDI;
    case 1:
        if (xlen == 32) {
            o->rd = 1;
            o->imm = cj_imm(r);
            o->cf = TK_RV_CF_JAL;
            return TK_RV_OP_C_JAL;
        }
        if (rd == 0)
            return TK_RV_OP_UNKNOWN;
        o->rd = o->rs1 = rd;
        o->imm = cimm6(r);
        return TK_RV_OP_C_ADDIW;
    case 2:
        o->rd = rd;
        o->imm = cimm6(r);
        return TK_RV_OP_C_LI;
    case 3:
        if (rd == 2) {
            uint32_t v = (bits(r, 12, 12) << 9) | (bits(r, 6, 6) << 4) | (bits(r, 5, 5) << 6) |
                         (bits(r, 4, 3) << 7) | (bits(r, 2, 2) << 5);
            if (v == 0)
                return TK_RV_OP_UNKNOWN;
            o->rd = o->rs1 = 2;
            o->imm = sext(v, 10);
            return TK_RV_OP_C_ADDI16SP;
        }
        if (cimm6(r) == 0)
            return TK_RV_OP_UNKNOWN;
        o->rd = rd;
        o->imm = cimm6(r) * 4096;
        o->is_lui = true;
        return TK_RV_OP_C_LUI;
    case 4:
        o->rd = o->rs1 = rs1p;
        switch (bits(r, 11, 10)) {
        case 0:
        case 1:
            if (xlen == 32 && bits(r, 12, 12))
                return TK_RV_OP_UNKNOWN;
            o->imm = (bits(r, 12, 12) << 5) | bits(r, 6, 2);
            return bits(r, 11, 10) ? TK_RV_OP_C_SRAI : TK_RV_OP_C_SRLI;
        case 2:
            o->imm = cimm6(r);
            return TK_RV_OP_C_ANDI;
        default:
            o->rs2 = rs2p;
            if (!bits(r, 12, 12)) {
                static const uint16_t ar[4] = {TK_RV_OP_C_SUB, TK_RV_OP_C_XOR, TK_RV_OP_C_OR,
                                               TK_RV_OP_C_AND};
                return ar[bits(r, 6, 5)];
            }
            if (xlen == 64 && bits(r, 6, 5) == 0)
                return TK_RV_OP_C_SUBW;
            if (xlen == 64 && bits(r, 6, 5) == 1)
                return TK_RV_OP_C_ADDW;
            return TK_RV_OP_UNKNOWN;
        }
    case 5:
        o->imm = cj_imm(r);
        o->cf = TK_RV_CF_JAL;
        return TK_RV_OP_C_J;
    default:
        o->rs1 = rs1p;
        o->imm = cb_imm(r);
        o->cf = TK_RV_CF_BRANCH;
        return bits(r, 15, 13) == 6 ? TK_RV_OP_C_BEQZ : TK_RV_OP_C_BNEZ;
    }
}

static tk_rv_op decode_q2(uint32_t r, unsigned xlen, tk_rv_insn *o)
{
    unsigned rd = bits(r, 11, 7);
    unsigned rs2 = bits(r, 6, 2);
    uint32_t off_w = (bits(r, 12, 12) << 5) | (bits(r, 6, 4) << 2) | (bits(r, 3, 2) << 6);
    uint32_t off_d = (bits(r, 12, 12) << 5) | (bits(r, 6, 5) << 3) | (bits(r, 4, 2) << 6);
    uint32_t soff_w = (bits(r, 12, 9) << 2) | (bits(r, 8, 7) << 6);
    uint32_t soff_d = (bits(r, 12, 10) << 3) | (bits(r, 9, 7) << 6);

    switch (bits(r, 15, 13)) {
    case 0:
        if (xlen == 32 && bits(r, 12, 12))
            return TK_RV_OP_UNKNOWN;
        o->rd = o->rs1 = rd;
        o->imm = (bits(r, 12, 12) << 5) | rs2;
        return TK_RV_OP_C_SLLI;
    case 1:
        o->rd = rd;
        o->rs1 = 2;
        o->imm = off_d;
        return TK_RV_OP_C_FLDSP;
    case 2:
        if (rd == 0)
            return TK_RV_OP_UNKNOWN;
        o->rd = rd;
        o->rs1 = 2;
        o->imm = off_w;
        return TK_RV_OP_C_LWSP;
    case 3:
        o->rd = rd;
        o->rs1 = 2;
        if (xlen == 32) {
            o->imm = off_w;
            return TK_RV_OP_C_FLWSP;
        }
        if (rd == 0)
            return TK_RV_OP_UNKNOWN;
        o->imm = off_d;
        return TK_RV_OP_C_LDSP;
    case 4:
        if (!bits(r, 12, 12)) {
            if (rs2 == 0) {
                if (rd == 0)
                    return TK_RV_OP_UNKNOWN;
                o->rs1 = rd;
                o->cf = TK_RV_CF_JALR;
                return TK_RV_OP_C_JR;
            }
            o->rd = rd;
            o->rs2 = rs2;
            return TK_RV_OP_C_MV;
        }
        if (rs2 == 0) {
            if (rd == 0) {
                o->cf = TK_RV_CF_EBREAK;
                return TK_RV_OP_C_EBREAK;
            }
            o->rd = 1;
            o->rs1 = rd;
            o->cf = TK_RV_CF_JALR;
            return TK_RV_OP_C_JALR;
        }
        o->rd = o->rs1 = rd;
        o->rs2 = rs2;
        return TK_RV_OP_C_ADD;
    case 5:
        o->rs1 = 2;
        o->rs2 = rs2;
        o->imm = soff_d;
        return TK_RV_OP_C_FSDSP;
    case 6:
        o->rs1 = 2;
        o->rs2 = rs2;
        o->imm = soff_w;
        return TK_RV_OP_C_SWSP;
    default:
        o->rs1 = 2;
        o->rs2 = rs2;
        if (xlen == 32) {
            o->imm = soff_w;
            return TK_RV_OP_C_FSWSP;
        }
        o->imm = soff_d;
        return TK_RV_OP_C_SDSP;
    }
}

tk_status tk_rv_decode(uint32_t bits32, unsigned xlen, tk_rv_insn *out)
{
    tk_rv_op op;

    if (!out || (xlen != 32 && xlen != 64))
        return TK_ERR_INVALID;
    memset(out, 0, sizeof(*out));
    switch (bits32 & 3u) {
    case 0:
    case 1:
    case 2: {
        uint32_t r = bits32 & 0xffffu;
        out->raw = r;
        out->len = 2;
        out->compressed = true;
        op = (bits32 & 3u) == 0   ? decode_q0(r, xlen, out)
             : (bits32 & 3u) == 1 ? decode_q1(r, xlen, out)
                                  : decode_q2(r, xlen, out);
        break;
    }
    default:
        out->raw = bits32;
        if ((bits32 & 0x1cu) == 0x1cu) {
            out->len = 0;
            out->xlen = (uint8_t)xlen;
            return TK_ERR_UNSUPPORTED;
        }
        out->len = 4;
        op = decode32(bits32, xlen, out);
        break;
    }
    out->op = (uint16_t)op;
    out->xlen = (uint8_t)xlen;
    if (op == TK_RV_OP_UNKNOWN || op == TK_RV_OP_C_UNIMP) {
        /* Keep the length; forget half-filled operands so callers never act on them. */
        uint32_t raw = out->raw;
        uint8_t len = out->len;
        bool c = out->compressed;
        memset(out, 0, sizeof(*out));
        out->raw = raw;
        out->len = len;
        out->compressed = c;
        out->op = (uint16_t)op;
        out->xlen = (uint8_t)xlen;
        return TK_ERR_BAD_INSN;
    }
    if (out->cf == TK_RV_CF_JAL || out->cf == TK_RV_CF_JALR)
        out->jclass = (uint8_t)tk_rv_jump_class(out);
    return TK_OK;
}
