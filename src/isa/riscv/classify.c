/* SPDX-License-Identifier: BSD-2-Clause */
/* Trace classification of decoded instructions: sequentially inferable jumps and the
 * E-Trace 2.0 itype codes (spec/VERSIONS.md B.1), plus the op name/format tables. */
#include "tracekit/riscv.h"

#define TK_RV_NAME_(id, name, fmt) name,
static const char *const op_names[TK_RV_OP_COUNT] = {TK_RV_OP_LIST(TK_RV_NAME_)};
#undef TK_RV_NAME_

#define TK_RV_FMT_(id, name, fmt) TK_RV_FMT_##fmt,
static const unsigned char op_fmts[TK_RV_OP_COUNT] = {TK_RV_OP_LIST(TK_RV_FMT_)};
#undef TK_RV_FMT_

const char *tk_rv_op_name(uint16_t op)
{
    return op < TK_RV_OP_COUNT ? op_names[op] : op_names[TK_RV_OP_UNKNOWN];
}

unsigned tk_rv_op_fmt(uint16_t op)
{
    return op < TK_RV_OP_COUNT ? op_fmts[op] : TK_RV_FMT_NONE;
}

/* E-Trace 2.0 "sequentially inferable jump": a jalr whose rs1 was written by the
 * immediately preceding auipc, lui or c.lui, so rs1 is known from the program alone. */
bool tk_rv_is_sijump_pair(const tk_rv_insn *prev, const tk_rv_insn *jump)
{
    if (!prev || !jump || jump->cf != TK_RV_CF_JALR || jump->rs1 == 0)
        return false;
    return (prev->is_auipc || prev->is_lui) && prev->rd == jump->rs1;
}

uint64_t tk_rv_sijump_target(const tk_rv_insn *prev, uint64_t prev_pc, const tk_rv_insn *jump,
                             unsigned xlen)
{
    uint64_t base = (uint64_t)prev->imm;
    uint64_t t;

    if (prev->is_auipc)
        base += prev_pc;
    /* jalr clears bit 0 of the sum (unprivileged spec, jalr). */
    t = (base + (uint64_t)jump->imm) & ~(uint64_t)1;
    return xlen == 32 ? (t & 0xffffffffu) : t;
}

/* itype codes of E-Trace 2.0 (spec/VERSIONS.md B.1 and C.9 (D) 4(d)/(e)). Traps (1, 2) are
 * not a property of the instruction and are left to the caller. xRET is 3, as the spec
 * says; the reference post-iss differs (see VERSIONS.md C.9 quirks), which the encoder's
 * ingress converter handles on top of this. */
uint8_t tk_rv_itype(const tk_rv_insn *i, bool taken, bool sijump, unsigned itype_width)
{
    bool inferable;

    switch (i->cf) {
    case TK_RV_CF_BRANCH:
        return taken ? 5 : 4;
    case TK_RV_CF_XRET:
        return 3;
    case TK_RV_CF_JAL:
    case TK_RV_CF_JALR:
        break;
    default:
        return 0;
    }
    inferable = i->cf == TK_RV_CF_JAL || i->rs1 == 0 || sijump;
    if (itype_width < 4)
        return inferable ? 0 : 6;
    switch ((tk_rv_jclass)i->jclass) {
    case TK_RV_J_CALL:
        return inferable ? 9 : 8;
    case TK_RV_J_TAIL:
        return inferable ? 11 : 10;
    case TK_RV_J_SWAP:
        return 12;
    case TK_RV_J_RETURN:
        return 13;
    default:
        return inferable ? 15 : 14;
    }
}
