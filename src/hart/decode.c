/* SPDX-License-Identifier: BSD-2-Clause */
/* Instruction decoder of the hart model: turns instruction bits into the pre-decoded form the
 * interpreter dispatches on. Compressed instructions expand to their 32-bit equivalents
 * (RISC-V unprivileged spec, chapter "C" extension, RVC expansion tables). */
#include <string.h>

#include "hart_internal.h"
#include "tracekit/te_ingress.h"

static inline uint32_t bits(uint32_t v, unsigned hi, unsigned lo)
{
    return (v >> lo) & ((1u << (hi - lo + 1)) - 1u);
}

static inline int32_t sext(uint32_t v, unsigned width)
{
    uint32_t m = 1u << (width - 1);
    return (int32_t)((v ^ m) - m);
}

/* Trace class of a jump per the 2.0 RAS-hint table (spec/VERSIONS.md B.1). jalr with rs1 = x0
 * has a target known from the instruction, so it is inferable. */
static uint8_t jump_itype(bool is_jal, unsigned rd, unsigned rs1)
{
    bool rd_link = rd == 1 || rd == 5;
    bool rs_link = rs1 == 1 || rs1 == 5;
    bool inferable = is_jal || rs1 == 0;
    if (is_jal)
        rs_link = false;
    if (rd_link && rs_link && rd != rs1)
        return TK_ITYPE_SWAP;
    if (rd_link)
        return inferable ? TK_ITYPE_INF_CALL : TK_ITYPE_UNINF_CALL;
    if (rs_link)
        return TK_ITYPE_RETURN;
    if (rd == 0)
        return inferable ? TK_ITYPE_INF_JUMP : TK_ITYPE_UNINF_JUMP;
    return inferable ? TK_ITYPE_INF_OTHER : TK_ITYPE_UNINF_OTHER;
}

static void set(hinsn *d, unsigned op, unsigned rd, unsigned rs1, unsigned rs2, int32_t imm)
{
    d->op = (uint8_t)op;
    d->rd = (uint8_t)rd;
    d->rs1 = (uint8_t)rs1;
    d->rs2 = (uint8_t)rs2;
    d->imm = imm;
}

static void fp(hinsn *d, unsigned fop, unsigned fmt, unsigned rd, unsigned rs1, unsigned rs2)
{
    set(d, OP_FP, rd, rs1, rs2, 0);
    d->fop = (uint8_t)fop;
    d->fmt = (uint8_t)fmt;
}

static void decode_op_fp(uint32_t w, unsigned xlen, hinsn *d)
{
    unsigned rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20);
    unsigned f3 = bits(w, 14, 12), f7 = bits(w, 31, 25), fmt = f7 & 3u;
    d->rm = (uint8_t)f3;
    d->op = OP_ILLEGAL;
    if (fmt > 1) {
        d->op = OP_UNSUPPORTED; /* half / quad precision */
        return;
    }
    switch (f7 >> 2) {
    case 0x00:
        fp(d, F_ADD, fmt, rd, rs1, rs2);
        return;
    case 0x01:
        fp(d, F_SUB, fmt, rd, rs1, rs2);
        return;
    case 0x02:
        fp(d, F_MUL, fmt, rd, rs1, rs2);
        return;
    case 0x03:
        fp(d, F_DIV, fmt, rd, rs1, rs2);
        return;
    case 0x0b:
        if (rs2 == 0)
            fp(d, F_SQRT, fmt, rd, rs1, rs2);
        return;
    case 0x04:
        if (f3 <= 2)
            fp(d, F_SGNJ + f3, fmt, rd, rs1, rs2);
        return;
    case 0x05:
        if (f3 <= 1)
            fp(d, F_MIN + f3, fmt, rd, rs1, rs2);
        return;
    case 0x08: /* fcvt.s.d (fmt 0, rs2 1) / fcvt.d.s (fmt 1, rs2 0) */
        if (rs2 == (fmt ^ 1u))
            fp(d, F_CVT_SD, fmt, rd, rs1, rs2);
        return;
    case 0x18:
        if (rs2 <= 1 || (xlen == 64 && rs2 <= 3))
            fp(d, F_CVT_W + rs2, fmt, rd, rs1, rs2);
        return;
    case 0x1a:
        if (rs2 <= 1 || (xlen == 64 && rs2 <= 3))
            fp(d, F_CVT_FROM_W + rs2, fmt, rd, rs1, rs2);
        return;
    case 0x1c:
        if (rs2 != 0)
            return;
        if (f3 == 0 && (fmt == 0 || xlen == 64))
            fp(d, F_MV_X, fmt, rd, rs1, rs2);
        else if (f3 == 1)
            fp(d, F_CLASS, fmt, rd, rs1, rs2);
        return;
    case 0x14:
        if (f3 == 0)
            fp(d, F_LE, fmt, rd, rs1, rs2);
        else if (f3 == 1)
            fp(d, F_LT, fmt, rd, rs1, rs2);
        else if (f3 == 2)
            fp(d, F_EQ, fmt, rd, rs1, rs2);
        return;
    case 0x1e:
        if (rs2 == 0 && f3 == 0 && (fmt == 0 || xlen == 64))
            fp(d, F_MV_F, fmt, rd, rs1, rs2);
        return;
    default:
        return;
    }
}

static void decode_op(uint32_t w, unsigned xlen, hinsn *d, bool w32)
{
    unsigned rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20);
    unsigned f3 = bits(w, 14, 12), f7 = bits(w, 31, 25);
    unsigned op = OP_ILLEGAL;
    if (!w32) {
        static const uint16_t base[8] = {OP_ADD, OP_SLL, OP_SLT, OP_SLTU,
                                         OP_XOR, OP_SRL, OP_OR,  OP_AND};
        static const uint16_t mul[8] = {OP_MUL, OP_MULH, OP_MULHSU, OP_MULHU,
                                        OP_DIV, OP_DIVU, OP_REM,    OP_REMU};
        switch (f7) {
        case 0x00:
            op = base[f3];
            break;
        case 0x20:
            op = f3 == 0   ? OP_SUB
                 : f3 == 5 ? OP_SRA
                 : f3 == 7 ? OP_ANDN
                 : f3 == 6 ? OP_ORN
                 : f3 == 4 ? OP_XNOR
                           : OP_ILLEGAL;
            break;
        case 0x01:
            op = mul[f3];
            break;
        case 0x10:
            op = f3 == 2 ? OP_SH1ADD : f3 == 4 ? OP_SH2ADD : f3 == 6 ? OP_SH3ADD : OP_ILLEGAL;
            break;
        case 0x05:
            op = f3 == 4   ? OP_MIN
                 : f3 == 5 ? OP_MINU
                 : f3 == 6 ? OP_MAX
                 : f3 == 7 ? OP_MAXU
                           : OP_ILLEGAL;
            break;
        case 0x30:
            op = f3 == 1 ? OP_ROL : f3 == 5 ? OP_ROR : OP_ILLEGAL;
            break;
        case 0x24:
            op = f3 == 1 ? OP_BCLR : f3 == 5 ? OP_BEXT : OP_ILLEGAL;
            break;
        case 0x14:
            op = f3 == 1 ? OP_BSET : OP_ILLEGAL;
            break;
        case 0x34:
            op = f3 == 1 ? OP_BINV : OP_ILLEGAL;
            break;
        case 0x04:
            op = (xlen == 32 && f3 == 4 && rs2 == 0) ? OP_ZEXT_H : OP_ILLEGAL;
            break;
        default:
            break;
        }
        if (xlen == 32) {
            /* RV32 keeps registers sign-extended from bit 31, so the 32-bit forms of the
             * word operations give exactly the RV32 results. */
            switch (op) {
            case OP_ADD:
                op = OP_ADDW;
                break;
            case OP_SUB:
                op = OP_SUBW;
                break;
            case OP_SLL:
                op = OP_SLLW;
                break;
            case OP_SRL:
                op = OP_SRLW;
                break;
            case OP_SRA:
                op = OP_SRAW;
                break;
            case OP_MUL:
                op = OP_MULW;
                break;
            case OP_MULH:
                op = OP_MULH32;
                break;
            case OP_MULHSU:
                op = OP_MULHSU32;
                break;
            case OP_MULHU:
                op = OP_MULHU32;
                break;
            case OP_DIV:
                op = OP_DIVW;
                break;
            case OP_DIVU:
                op = OP_DIVUW;
                break;
            case OP_REM:
                op = OP_REMW;
                break;
            case OP_REMU:
                op = OP_REMUW;
                break;
            case OP_ROL:
                op = OP_ROLW;
                break;
            case OP_ROR:
                op = OP_RORW;
                break;
            default:
                break;
            }
        }
    } else {
        if (xlen == 32)
            op = OP_ILLEGAL;
        else if (f7 == 0x00)
            op = f3 == 0 ? OP_ADDW : f3 == 1 ? OP_SLLW : f3 == 5 ? OP_SRLW : OP_ILLEGAL;
        else if (f7 == 0x20)
            op = f3 == 0 ? OP_SUBW : f3 == 5 ? OP_SRAW : OP_ILLEGAL;
        else if (f7 == 0x01) {
            static const uint16_t mw[8] = {OP_MULW, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL,
                                           OP_DIVW, OP_DIVUW,   OP_REMW,    OP_REMUW};
            op = mw[f3];
        } else if (f7 == 0x04)
            op = f3 == 0 ? OP_ADD_UW : (f3 == 4 && rs2 == 0) ? OP_ZEXT_H : OP_ILLEGAL;
        else if (f7 == 0x10)
            op = f3 == 2   ? OP_SH1ADD_UW
                 : f3 == 4 ? OP_SH2ADD_UW
                 : f3 == 6 ? OP_SH3ADD_UW
                           : OP_ILLEGAL;
        else if (f7 == 0x30)
            op = f3 == 1 ? OP_ROLW : f3 == 5 ? OP_RORW : OP_ILLEGAL;
    }
    set(d, op, rd, rs1, rs2, 0);
}

static void decode_op_imm(uint32_t w, unsigned xlen, hinsn *d, bool w32)
{
    unsigned rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), f3 = bits(w, 14, 12);
    int32_t imm = sext(bits(w, 31, 20), 12);
    unsigned shmax = w32 ? 31 : xlen - 1;
    unsigned sh = bits(w, 25, 20), f6 = bits(w, 31, 26), imm12 = bits(w, 31, 20);
    unsigned op = OP_ILLEGAL;
    if (w32 && xlen == 32) {
        set(d, OP_ILLEGAL, 0, 0, 0, 0);
        return;
    }
    if (w32) {
        sh &= 0x3fu;
        switch (f3) {
        case 0:
            op = OP_ADDIW;
            break;
        case 1:
            if (bits(w, 31, 25) == 0)
                op = OP_SLLIW, imm = (int32_t)sh;
            else if (f6 == 0x02)
                op = OP_SLLI_UW, imm = (int32_t)sh;
            else if (bits(w, 31, 25) == 0x30 && sh <= 2)
                op = sh == 0 ? OP_CLZW : sh == 1 ? OP_CTZW : OP_CPOPW;
            break;
        case 5:
            if (bits(w, 31, 25) == 0)
                op = OP_SRLIW, imm = (int32_t)(sh & 31u);
            else if (bits(w, 31, 25) == 0x20)
                op = OP_SRAIW, imm = (int32_t)(sh & 31u);
            else if (bits(w, 31, 25) == 0x30)
                op = OP_RORIW, imm = (int32_t)(sh & 31u);
            break;
        default:
            break;
        }
        set(d, op, rd, rs1, 0, imm);
        return;
    }
    switch (f3) {
    case 0:
        op = OP_ADDI;
        break;
    case 2:
        op = OP_SLTI;
        break;
    case 3:
        op = OP_SLTIU;
        break;
    case 4:
        op = OP_XORI;
        break;
    case 6:
        op = OP_ORI;
        break;
    case 7:
        op = OP_ANDI;
        break;
    case 1:
        if (sh > shmax)
            break;
        if (f6 == 0)
            op = OP_SLLI, imm = (int32_t)sh;
        else if (f6 == 0x12)
            op = OP_BCLRI, imm = (int32_t)sh;
        else if (f6 == 0x0a)
            op = OP_BSETI, imm = (int32_t)sh;
        else if (f6 == 0x1a)
            op = OP_BINVI, imm = (int32_t)sh;
        else if (imm12 == 0x600)
            op = OP_CLZ;
        else if (imm12 == 0x601)
            op = OP_CTZ;
        else if (imm12 == 0x602)
            op = OP_CPOP;
        else if (imm12 == 0x604)
            op = OP_SEXT_B;
        else if (imm12 == 0x605)
            op = OP_SEXT_H;
        break;
    case 5:
        if (imm12 == 0x287)
            op = OP_ORC_B;
        else if (imm12 == (xlen == 64 ? 0x6b8u : 0x698u))
            op = OP_REV8;
        else if (sh > shmax)
            break;
        else if (f6 == 0)
            op = OP_SRLI, imm = (int32_t)sh;
        else if (f6 == 0x10)
            op = OP_SRAI, imm = (int32_t)sh;
        else if (f6 == 0x12)
            op = OP_BEXTI, imm = (int32_t)sh;
        else if (f6 == 0x18)
            op = OP_RORI, imm = (int32_t)sh;
        break;
    }
    if (xlen == 32) {
        if (op == OP_ADDI)
            op = OP_ADDIW;
        else if (op == OP_SLLI)
            op = OP_SLLIW;
        else if (op == OP_SRLI)
            op = OP_SRLIW;
        else if (op == OP_SRAI)
            op = OP_SRAIW;
        else if (op == OP_CLZ)
            op = OP_CLZW;
        else if (op == OP_CTZ)
            op = OP_CTZW;
        else if (op == OP_CPOP)
            op = OP_CPOPW;
        else if (op == OP_RORI)
            op = OP_RORIW;
    }
    set(d, op, rd, rs1, 0, imm);
}

static void decode_system(uint32_t w, hinsn *d)
{
    unsigned rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), f3 = bits(w, 14, 12);
    static const uint16_t csr_ops[8] = {OP_ILLEGAL,     OP_CSRRW,  OP_CSRRS,  OP_CSRRC,
                                        OP_UNSUPPORTED, OP_CSRRWI, OP_CSRRSI, OP_CSRRCI};
    if (f3 != 0) {
        set(d, csr_ops[f3], rd, rs1, 0, (int32_t)bits(w, 31, 20));
        return;
    }
    set(d, OP_ILLEGAL, 0, 0, 0, 0);
    if (w == 0x00000073u)
        d->op = OP_ECALL;
    else if (w == 0x00100073u)
        d->op = OP_EBREAK;
    else if (w == 0x30200073u)
        d->op = OP_MRET, d->itype = TK_ITYPE_TRAP_RETURN;
    else if (w == 0x10200073u)
        d->op = OP_SRET, d->itype = TK_ITYPE_TRAP_RETURN;
    else if (w == 0x10500073u)
        d->op = OP_WFI;
    else if (bits(w, 31, 25) == 0x09 && rd == 0)
        set(d, OP_SFENCE_VMA, 0, rs1, bits(w, 24, 20), 0);
    else if (bits(w, 31, 25) == 0x11 || bits(w, 31, 25) == 0x51 || bits(w, 31, 25) == 0x31 ||
             bits(w, 31, 25) == 0x13 || w == 0x7b200073u)
        d->op = OP_UNSUPPORTED; /* hypervisor fences, dret */
}

static void decode32(uint32_t w, unsigned xlen, hinsn *d)
{
    unsigned rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20);
    unsigned f3 = bits(w, 14, 12);
    int32_t imm_i = sext(bits(w, 31, 20), 12);
    int32_t imm_s = sext((bits(w, 31, 25) << 5) | bits(w, 11, 7), 12);
    switch (bits(w, 6, 0)) {
    case 0x37:
        set(d, OP_LUI, rd, 0, 0, (int32_t)(w & 0xfffff000u));
        d->upper = 1;
        break;
    case 0x17:
        set(d, OP_AUIPC, rd, 0, 0, (int32_t)(w & 0xfffff000u));
        d->upper = 1;
        break;
    case 0x6f: {
        uint32_t im = (bits(w, 31, 31) << 20) | (bits(w, 19, 12) << 12) | (bits(w, 20, 20) << 11) |
                      (bits(w, 30, 21) << 1);
        set(d, OP_JAL, rd, 0, 0, sext(im, 21));
        d->itype = jump_itype(true, rd, 0);
        break;
    }
    case 0x67:
        if (f3 != 0)
            break;
        set(d, OP_JALR, rd, rs1, 0, imm_i);
        d->itype = jump_itype(false, rd, rs1);
        break;
    case 0x63: {
        static const uint16_t br[8] = {OP_BEQ, OP_BNE, OP_ILLEGAL, OP_ILLEGAL,
                                       OP_BLT, OP_BGE, OP_BLTU,    OP_BGEU};
        uint32_t im = (bits(w, 31, 31) << 12) | (bits(w, 7, 7) << 11) | (bits(w, 30, 25) << 5) |
                      (bits(w, 11, 8) << 1);
        set(d, br[f3], 0, rs1, rs2, sext(im, 13));
        if (d->op != OP_ILLEGAL)
            d->itype = TK_ITYPE_NOT_TAKEN;
        break;
    }
    case 0x03: {
        static const uint16_t ld[8] = {OP_LB,  OP_LH,  OP_LW,  OP_LD,
                                       OP_LBU, OP_LHU, OP_LWU, OP_ILLEGAL};
        unsigned op = ld[f3];
        if (xlen == 32 && (op == OP_LD || op == OP_LWU))
            op = OP_ILLEGAL;
        set(d, op, rd, rs1, 0, imm_i);
        break;
    }
    case 0x23: {
        static const uint16_t st[8] = {OP_SB,      OP_SH,      OP_SW,      OP_SD,
                                       OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL};
        unsigned op = st[f3];
        if (xlen == 32 && op == OP_SD)
            op = OP_ILLEGAL;
        set(d, op, 0, rs1, rs2, imm_s);
        break;
    }
    case 0x13:
        decode_op_imm(w, xlen, d, false);
        break;
    case 0x1b:
        decode_op_imm(w, xlen, d, true);
        break;
    case 0x33:
        decode_op(w, xlen, d, false);
        break;
    case 0x3b:
        decode_op(w, xlen, d, true);
        break;
    case 0x0f:
        if (f3 == 0)
            set(d, OP_FENCE, 0, 0, 0, 0);
        else if (f3 == 1)
            set(d, OP_FENCE_I, 0, 0, 0, 0);
        else if (f3 == 2)
            d->op = OP_UNSUPPORTED; /* cbo.* (Zicbom) */
        break;
    case 0x73:
        decode_system(w, d);
        break;
    case 0x2f: {
        unsigned f5 = bits(w, 31, 27);
        bool ok = f3 == 2 || (f3 == 3 && xlen == 64);
        bool known = f5 == 0x02 || f5 == 0x03 || f5 == 0x01 || f5 == 0x00 || f5 == 0x04 ||
                     f5 == 0x0c || f5 == 0x08 || f5 == 0x10 || f5 == 0x14 || f5 == 0x18 ||
                     f5 == 0x1c;
        if (f5 == 0x02 && rs2 != 0)
            known = false;
        if (ok && known) {
            set(d, OP_AMO, rd, rs1, rs2, 0);
            d->rs3 = (uint8_t)f5;
            d->rm = (uint8_t)f3;
        } else if (ok) {
            d->op = OP_UNSUPPORTED; /* Zacas and friends */
        }
        break;
    }
    case 0x07:
        if (f3 == 2)
            set(d, OP_FLW, rd, rs1, 0, imm_i);
        else if (f3 == 3)
            set(d, OP_FLD, rd, rs1, 0, imm_i);
        else
            d->op = OP_UNSUPPORTED; /* vector or half-precision loads */
        break;
    case 0x27:
        if (f3 == 2)
            set(d, OP_FSW, 0, rs1, rs2, imm_s);
        else if (f3 == 3)
            set(d, OP_FSD, 0, rs1, rs2, imm_s);
        else
            d->op = OP_UNSUPPORTED;
        break;
    case 0x43:
    case 0x47:
    case 0x4b:
    case 0x4f: {
        unsigned fmt = bits(w, 26, 25);
        if (fmt > 1) {
            d->op = OP_UNSUPPORTED;
            break;
        }
        fp(d, F_MADD + ((bits(w, 6, 0) - 0x43u) >> 2), fmt, rd, rs1, rs2);
        d->rs3 = (uint8_t)bits(w, 31, 27);
        d->rm = (uint8_t)f3;
        break;
    }
    case 0x53:
        decode_op_fp(w, xlen, d);
        break;
    case 0x57: /* OP-V */
    case 0x0b: /* custom-0 */
    case 0x2b: /* custom-1 */
    case 0x5b: /* custom-2 */
    case 0x7b: /* custom-3 */
        d->op = OP_UNSUPPORTED;
        break;
    default:
        break;
    }
}

/* RVC register fields rd'/rs1'/rs2' name x8..x15. */
#define CR(v) (8u + (v))

static void decode16(uint32_t c, unsigned xlen, hinsn *d)
{
    unsigned f3 = bits(c, 15, 13);
    unsigned rd = bits(c, 11, 7), rs2 = bits(c, 6, 2);
    unsigned rdp = CR(bits(c, 4, 2)), rs1p = CR(bits(c, 9, 7));
    int32_t imm6 = sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6);
    uint32_t ldoff = (bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6); /* c.ld / c.fld */
    uint32_t lwoff = (bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6);
    switch (c & 3u) {
    case 0:
        switch (f3) {
        case 0: {
            uint32_t im = (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) | (bits(c, 6, 6) << 2) |
                          (bits(c, 5, 5) << 3);
            if (im != 0)
                set(d, OP_ADDI, rdp, 2, 0, (int32_t)im);
            break;
        }
        case 1:
            set(d, OP_FLD, rdp, rs1p, 0, (int32_t)ldoff);
            break;
        case 2:
            set(d, OP_LW, rdp, rs1p, 0, (int32_t)lwoff);
            break;
        case 3:
            if (xlen == 64)
                set(d, OP_LD, rdp, rs1p, 0, (int32_t)ldoff);
            else
                set(d, OP_FLW, rdp, rs1p, 0, (int32_t)lwoff);
            break;
        case 4:
            d->op = OP_UNSUPPORTED;
            break; /* Zcb */
        case 5:
            set(d, OP_FSD, 0, rs1p, rdp, (int32_t)ldoff);
            break;
        case 6:
            set(d, OP_SW, 0, rs1p, rdp, (int32_t)lwoff);
            break;
        case 7:
            if (xlen == 64)
                set(d, OP_SD, 0, rs1p, rdp, (int32_t)ldoff);
            else
                set(d, OP_FSW, 0, rs1p, rdp, (int32_t)lwoff);
            break;
        }
        break;
    case 1:
        switch (f3) {
        case 0:
            set(d, OP_ADDI, rd, rd, 0, imm6);
            break;
        case 1:
            if (xlen == 32) {
                uint32_t im = (bits(c, 12, 12) << 11) | (bits(c, 11, 11) << 4) |
                              (bits(c, 10, 9) << 8) | (bits(c, 8, 8) << 10) | (bits(c, 7, 7) << 6) |
                              (bits(c, 6, 6) << 7) | (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5);
                set(d, OP_JAL, 1, 0, 0, sext(im, 12));
                d->itype = jump_itype(true, 1, 0);
            } else if (rd != 0) {
                set(d, OP_ADDIW, rd, rd, 0, imm6);
            }
            break;
        case 2:
            set(d, OP_ADDI, rd, 0, 0, imm6);
            break;
        case 3:
            if (rd == 2) {
                uint32_t im = (bits(c, 12, 12) << 9) | (bits(c, 6, 6) << 4) | (bits(c, 5, 5) << 6) |
                              (bits(c, 4, 3) << 7) | (bits(c, 2, 2) << 5);
                if (im != 0)
                    set(d, OP_ADDI, 2, 2, 0, sext(im, 10));
            } else if (imm6 != 0) {
                set(d, OP_LUI, rd, 0, 0, (int32_t)((uint32_t)imm6 << 12));
                d->upper = 1;
            }
            break;
        case 4: {
            unsigned f2 = bits(c, 11, 10);
            unsigned sh = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
            if (f2 == 0 || f2 == 1) {
                if (xlen == 32 && sh >= 32)
                    break;
                if (xlen == 32)
                    set(d, f2 == 0 ? OP_SRLIW : OP_SRAIW, rs1p, rs1p, 0, (int32_t)sh);
                else
                    set(d, f2 == 0 ? OP_SRLI : OP_SRAI, rs1p, rs1p, 0, (int32_t)sh);
            } else if (f2 == 2) {
                set(d, OP_ANDI, rs1p, rs1p, 0, imm6);
            } else {
                unsigned f = bits(c, 6, 5);
                if (!bits(c, 12, 12)) {
                    static const uint16_t o32[4] = {OP_SUBW, OP_XOR, OP_OR, OP_AND};
                    static const uint16_t o64[4] = {OP_SUB, OP_XOR, OP_OR, OP_AND};
                    set(d, xlen == 32 ? o32[f] : o64[f], rs1p, rs1p, rdp, 0);
                } else if (xlen == 64 && f <= 1) {
                    set(d, f == 0 ? OP_SUBW : OP_ADDW, rs1p, rs1p, rdp, 0);
                } else if (f >= 2) {
                    d->op = OP_UNSUPPORTED; /* Zcb */
                }
            }
            break;
        }
        case 5: {
            uint32_t im = (bits(c, 12, 12) << 11) | (bits(c, 11, 11) << 4) | (bits(c, 10, 9) << 8) |
                          (bits(c, 8, 8) << 10) | (bits(c, 7, 7) << 6) | (bits(c, 6, 6) << 7) |
                          (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5);
            set(d, OP_JAL, 0, 0, 0, sext(im, 12));
            d->itype = jump_itype(true, 0, 0);
            break;
        }
        case 6:
        case 7: {
            uint32_t im = (bits(c, 12, 12) << 8) | (bits(c, 11, 10) << 3) | (bits(c, 6, 5) << 6) |
                          (bits(c, 4, 3) << 1) | (bits(c, 2, 2) << 5);
            set(d, f3 == 6 ? OP_BEQ : OP_BNE, 0, rs1p, 0, sext(im, 9));
            d->itype = TK_ITYPE_NOT_TAKEN;
            break;
        }
        }
        break;
    case 2:
        switch (f3) {
        case 0: {
            unsigned sh = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
            if (xlen == 32 && sh >= 32)
                break;
            set(d, xlen == 32 ? OP_SLLIW : OP_SLLI, rd, rd, 0, (int32_t)sh);
            break;
        }
        case 1: {
            uint32_t im = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
            set(d, OP_FLD, rd, 2, 0, (int32_t)im);
            break;
        }
        case 2:
        case 3: {
            uint32_t imw = (bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6);
            uint32_t imd = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
            if (f3 == 2) {
                if (rd != 0)
                    set(d, OP_LW, rd, 2, 0, (int32_t)imw);
            } else if (xlen == 64) {
                if (rd != 0)
                    set(d, OP_LD, rd, 2, 0, (int32_t)imd);
            } else {
                set(d, OP_FLW, rd, 2, 0, (int32_t)imw);
            }
            break;
        }
        case 4:
            if (!bits(c, 12, 12)) {
                if (rs2 == 0) {
                    if (rd != 0) {
                        set(d, OP_JALR, 0, rd, 0, 0);
                        d->itype = jump_itype(false, 0, rd);
                    }
                } else {
                    set(d, xlen == 32 ? OP_ADDW : OP_ADD, rd, 0, rs2, 0);
                }
            } else {
                if (rs2 == 0 && rd == 0) {
                    set(d, OP_EBREAK, 0, 0, 0, 0);
                } else if (rs2 == 0) {
                    set(d, OP_JALR, 1, rd, 0, 0);
                    d->itype = jump_itype(false, 1, rd);
                } else {
                    set(d, xlen == 32 ? OP_ADDW : OP_ADD, rd, rd, rs2, 0);
                }
            }
            break;
        case 5: {
            uint32_t im = (bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6);
            set(d, OP_FSD, 0, 2, rs2, (int32_t)im);
            break;
        }
        case 6:
        case 7: {
            uint32_t imw = (bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6);
            uint32_t imd = (bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6);
            if (f3 == 6)
                set(d, OP_SW, 0, 2, rs2, (int32_t)imw);
            else if (xlen == 64)
                set(d, OP_SD, 0, 2, rs2, (int32_t)imd);
            else
                set(d, OP_FSW, 0, 2, rs2, (int32_t)imw);
            break;
        }
        }
        break;
    }
}

void tk__hart_decode(uint32_t w, unsigned xlen, hinsn *d)
{
    memset(d, 0, sizeof(*d));
    d->op = OP_ILLEGAL;
    if ((w & 3u) != 3u) {
        d->len = 2;
        d->raw = w & 0xffffu;
        if ((w & 0xffffu) != 0)
            decode16(w & 0xffffu, xlen, d);
    } else if ((w & 0x1cu) != 0x1cu) {
        d->len = 4;
        d->raw = w;
        decode32(w, xlen, d);
    } else {
        d->len = 4;
        d->raw = w;
        d->op = OP_UNSUPPORTED; /* 48-bit and longer encodings */
    }
    /* Writes to x0 are dropped by the interpreter resetting x0; a traced lui/auipc keeps its
     * rd for sijump detection. ILLEGAL/UNSUPPORTED carry no trace class. */
    if (d->op == OP_ILLEGAL || d->op == OP_UNSUPPORTED)
        d->itype = TK_ITYPE_NONE;
}
