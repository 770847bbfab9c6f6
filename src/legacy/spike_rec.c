/* SPDX-License-Identifier: BSD-2-Clause */
/* Spike CSV rows -> retirement records, so that the legacy encoders can read the same
 * execution files as the E-Trace encoder. */
#include <string.h>

#include "tracekit/legacy.h"
#include "tracekit/riscv.h"
#include "tracekit/te_ingress.h"

void tk_legacy_retire_from_spike(const tk_spike_row *row, bool have_next, uint64_t next_pc,
                                 unsigned xlen, tk_hart_retire *out)
{
    memset(out, 0, sizeof(*out));
    tk_rv_insn in;
    tk_rv_decode((uint32_t)row->insn, xlen, &in);
    const uint64_t mask = xlen == 32 ? 0xffffffffull : ~0ull;
    out->pc = row->address;
    out->insn = (uint32_t)row->insn;
    out->len = in.len ? in.len : (uint8_t)tk_rv_length((uint16_t)row->insn);
    out->priv = row->privilege;
    out->cause = row->ecause;
    out->tval = row->tval;
    const uint64_t fall = (row->address + out->len) & mask;
    const uint64_t target = (row->address + (uint64_t)in.imm) & mask;
    if (row->exception) {
        const bool retires = in.cf == TK_RV_CF_ECALL || in.cf == TK_RV_CF_EBREAK;
        out->flags = TK_HART_F_EXCEPTION | (retires ? TK_HART_F_RETIRED : 0);
        return;
    }
    out->flags = TK_HART_F_RETIRED;
    switch (in.cf) {
    case TK_RV_CF_BRANCH: {
        bool taken = have_next && next_pc == target && target != fall;
        if (row->interrupt)
            taken = false; /* the next row is the handler: the outcome is not shown */
        out->itype = taken ? TK_ITYPE_TAKEN : TK_ITYPE_NOT_TAKEN;
        out->epc = taken ? target : fall;
        break;
    }
    case TK_RV_CF_JAL:
        out->itype = TK_ITYPE_INF_JUMP;
        out->epc = target;
        break;
    case TK_RV_CF_JALR:
    case TK_RV_CF_XRET:
        out->itype = in.cf == TK_RV_CF_XRET ? TK_ITYPE_TRAP_RETURN : TK_ITYPE_UNINF_JUMP;
        out->epc = fall;
        break;
    default:
        out->epc = fall;
        break;
    }
    if (row->interrupt) {
        out->flags |= TK_HART_F_INTERRUPT;
        out->cause = row->ecause;
    } else {
        out->epc = 0;
    }
}
