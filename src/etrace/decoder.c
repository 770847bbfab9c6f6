/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: te_inst packet handling (decoder.adoc process_te_inst,
 * process_support, exception_address). Following the path between reported addresses is in
 * decoder_walk.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder_int.h"

tk_status tk_te_decoder_new(const tk_te_params *p, tk_image *img, tk_event_fn fn, void *ctx,
                            tk_te_decoder **out)
{
    if (!p || !img || !fn || !out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (p->s.iaddress_width == 0 || p->s.iaddress_width > 64 ||
        p->s.iaddress_lsb >= p->s.iaddress_width)
        return TK_ERR_CONFIG;
    /* Implicit return depth: 2^return_stack_size_p, else 2^call_counter_size_p. */
    uint32_t depth_bits = p->s.return_stack_size ? p->s.return_stack_size : p->s.call_counter_size;
    if (depth_bits > 16)
        return TK_ERR_CONFIG;
    tk_te_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return TK_ERR_NOMEM;
    d->p = *p;
    d->img = img;
    d->fn = fn;
    d->ctx = ctx;
    d->xlen = tk_image_xlen(img);
    d->addr_mask = d->xlen >= 64 ? ~0ull : (1ull << d->xlen) - 1;
    d->irstack_max = 1u << depth_bits;
    d->irstack = calloc(d->irstack_max, sizeof(d->irstack[0]));
    if (!d->irstack) {
        free(d);
        return TK_ERR_NOMEM;
    }
    d->start_of_trace = true;
    d->stats.size = sizeof(d->stats);
    *out = d;
    return TK_OK;
}

void tk_te_decoder_free(tk_te_decoder *d)
{
    if (!d)
        return;
    free(d->irstack);
    free(d);
}

void tk_te_decoder_set_flags(tk_te_decoder *d, unsigned flags)
{
    if (d)
        d->flags = flags;
}

void tk_te_decoder_get_stats(const tk_te_decoder *d, tk_te_decoder_stats *st)
{
    size_t n = st->size && st->size < sizeof(*st) ? st->size : sizeof(*st);
    memcpy(st, &d->stats, n);
    st->size = n;
}

tk_status tk_dec_emit(tk_te_decoder *d, tk_event *ev)
{
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    ev->priv = d->privilege;
    ev->context = d->context;
    if (ev->kind == TK_EV_RANGE)
        d->stats.instructions += ev->ninsn;
    tk_status st = d->fn(d->ctx, ev);
    if (st == TK_OK)
        return TK_OK;
    d->stop = st;
    return (tk_status)DEC_STOPPED;
}

static tk_status emit_at(tk_te_decoder *d, uint16_t kind, uint64_t addr)
{
    tk_event ev = {.kind = kind, .first = addr, .last = addr, .next = addr};
    return tk_dec_emit(d, &ev);
}

static tk_status flush_range(tk_te_decoder *d, uint8_t end, bool taken, bool indirect,
                             uint64_t next)
{
    if (!d->range_ninsn)
        return TK_OK;
    tk_event ev = {.kind = TK_EV_RANGE,
                   .end = end,
                   .taken = taken,
                   .indirect = indirect,
                   .first = d->range_first,
                   .last = d->pc,
                   .ninsn = d->range_ninsn,
                   .next = next};
    d->range_ninsn = 0;
    return tk_dec_emit(d, &ev);
}

/* Forget the flow: the next format 3 sync starts it again. */
static void lose_sync(tk_te_decoder *d)
{
    d->start_of_trace = true;
    d->have_pc = false;
    d->inferred_address = false;
    d->stop_at_last_branch = false;
    d->trap_pending = false;
    d->branches = 0;
    d->branch_map = 0;
    d->irstack_depth = 0;
    d->last_valid = false;
}

static int report_error(tk_te_decoder *d, tk_status status, const char *fmt, va_list ap)
{
    vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
    d->stats.errors++;
    tk_event ev = {.kind = TK_EV_ERROR, .status = status, .message = d->msg, .first = d->pc};
    return tk_dec_emit(d, &ev);
}

int tk_dec_fail(tk_te_decoder *d, tk_status status, const char *fmt, ...)
{
    /* Everything reached before the error is emitted first. */
    tk_status st = flush_range(d, TK_END_NONE, false, false, 0);
    if (st != TK_OK)
        return st;
    va_list ap;
    va_start(ap, fmt);
    int r = report_error(d, status, fmt, ap);
    va_end(ap);
    lose_sync(d);
    d->desynced = true;
    return r != TK_OK ? r : DEC_DESYNC;
}

/* An error that does not change the decoder state (a packet is ignored). */
static int warn(tk_te_decoder *d, tk_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = report_error(d, status, fmt, ap);
    va_end(ap);
    return r;
}

/* The byte address carried in an address field: shifted left by iaddress_lsb_p and
 * sign-extended from iaddress_width_p (so addresses in the upper half of a 64-bit space
 * survive a narrower field). Not masked to xlen. */
static uint64_t field_address(const tk_te_decoder *d, uint64_t field)
{
    const unsigned w = d->p.s.iaddress_width;
    uint64_t a = field << d->p.s.iaddress_lsb;
    if (w < 64) {
        const uint64_t sign = 1ull << (w - 1);
        a &= (sign << 1) - 1;
        a = (a ^ sign) - sign;
    }
    return a;
}

/* process_support() */
static int process_support(tk_te_decoder *d, const tk_te_packet *pkt)
{
    int r;
    tk_te_params_apply_ioptions(&d->p, pkt->ioptions); /* VERSIONS.md C.6 bit order */
    if (pkt->qual_status == TK_QUAL_NO_CHANGE)
        return TK_OK;
    if (pkt->qual_status == TK_QUAL_ENDED_NTR && d->inferred_address && d->have_pc) {
        /* The packet that reported pc would have been sent anyway because of an updiscon:
         * the last traced instruction is the next visit of pc, after the uninferable jump
         * (payload.adoc, qual_status). */
        const tk_dec_walk w = {.address = d->pc, .until_discon = true};
        if ((r = tk_dec_follow(d, &w)) != TK_OK)
            return r;
    }
    if ((r = flush_range(d, TK_END_NONE, false, false, 0)) != TK_OK)
        return r;
    const uint64_t at = d->pc;
    lose_sync(d);
    d->desynced = false;
    d->nosync_told = false;
    return emit_at(d, pkt->qual_status == TK_QUAL_TRACE_LOST ? TK_EV_LOST : TK_EV_TRACE_OFF, at);
}

/* A trap (F3SF1): end the current range where the trap happened and report it.
 * exception_address() of decoder.adoc gives the EPC for exceptions. */
static int process_trap(tk_te_decoder *d, const tk_te_packet *pkt, bool thaddr)
{
    int r;
    const uint64_t addr = field_address(d, pkt->address) & d->addr_mask;
    const uint64_t handler = thaddr ? addr : 0;
    uint64_t epc = thaddr ? 0 : addr;

    if (d->have_pc) {
        tk_rv_insn insn;
        if ((r = tk_dec_insn_at(d, d->pc, &insn)) != TK_OK)
            return r;
        const tk_rv_insn *prev = d->last_valid ? &d->last_insn : NULL;
        tk_dec_step s;
        if (pkt->interrupt) {
            /* The interrupt is taken after pc retires; its EPC is pc's successor when the
             * code alone tells it (the pseudo-code does not report one). */
            tk_dec_exec(d, &insn, d->pc, prev, d->last_pc, 0, NULL, true, &s);
            epc = s.next;
            r = flush_range(d, TK_END_TRAP, false, false, handler);
        } else if (tk_dec_is_uninferable_discon(d, &insn) && !thaddr) {
            /* exception at the target of an uninferable jump: the packet gives the EPC */
            epc = addr;
            tk_dec_exec(d, &insn, d->pc, prev, d->last_pc, epc, NULL, true, &s);
            r = flush_range(d, s.end, false, true, epc);
        } else if (insn.cf == TK_RV_CF_ECALL || insn.cf == TK_RV_CF_EBREAK) {
            epc = d->pc; /* ecall/ebreak retire and trap themselves */
            r = flush_range(d, TK_END_TRAP, false, false, handler);
        } else {
            /* pc retired; the instruction after it trapped without retiring */
            r = tk_dec_exec(d, &insn, d->pc, prev, d->last_pc, d->pc, NULL, false, &s);
            if (r != TK_OK)
                return r;
            if (s.stop_here && s.indirect) {
                epc = d->pc; /* an uninferable jump that itself faulted */
                r = flush_range(d, TK_END_TRAP, false, false, handler);
            } else {
                epc = s.next;
                r = flush_range(d, s.end, s.taken, false, epc);
            }
        }
        if (r != TK_OK)
            return r;
    } else if ((r = flush_range(d, TK_END_NONE, false, false, 0)) != TK_OK) {
        return r;
    }

    d->stats.traps++;
    tk_event ev = {.kind = TK_EV_TRAP,
                   .cause = pkt->ecause,
                   .interrupt = pkt->interrupt,
                   .first = epc,
                   .last = epc,
                   .next = handler};
    if ((r = tk_dec_emit(d, &ev)) != TK_OK)
        return r;
    if (!thaddr) {
        /* Nothing retired yet in the handler; a format 3 subformat 0 will report it. */
        d->trap_pending = true;
        d->have_pc = false;
        d->inferred_address = false;
    }
    return TK_OK;
}

/* Format 3 subformat 0 or 1 (thaddr=1): the address of an instruction that retired. */
static int process_sync_address(tk_te_decoder *d, const tk_te_packet *pkt)
{
    int r;
    const bool restart = d->start_of_trace || d->trap_pending || !d->have_pc;
    const uint64_t address = field_address(d, pkt->address) & d->addr_mask;

    d->inferred_address = false;
    d->address = address;
    if (pkt->subformat == TK_TE_SF_TRAP || restart) {
        d->branches = 0;
        d->branch_map = 0;
    }
    const tk_bblock *b;
    if ((r = tk_dec_block(d, address, &b)) != TK_OK)
        return r;
    if (b->ninsn == 1 && b->term.cf == TK_RV_CF_BRANCH) {
        /* one unprocessed branch: the sync's own instruction (branch bit: 1 = not taken) */
        d->branch_map |= (uint64_t)(pkt->branch & 1) << d->branches;
        d->branches++;
    }
    if (pkt->subformat == TK_TE_SF_START && !restart) {
        const tk_dec_walk w = {.address = address, .fmt3 = true, .privilege = pkt->privilege};
        if ((r = tk_dec_follow(d, &w)) != TK_OK)
            return r;
    } else {
        if ((r = flush_range(d, TK_END_NONE, false, false, 0)) != TK_OK)
            return r;
        if (d->start_of_trace && (r = emit_at(d, TK_EV_TRACE_ON, address)) != TK_OK)
            return r;
        d->pc = address;
        d->last_pc = address;
        d->last_valid = false;
        d->range_first = address;
        d->range_ninsn = 1;
    }
    if (!d->have_priv || pkt->privilege != d->privilege) {
        d->privilege = pkt->privilege;
        d->have_priv = true;
        if ((r = emit_at(d, TK_EV_PRIVILEGE, address)) != TK_OK)
            return r;
    }
    d->start_of_trace = false;
    d->irstack_depth = 0;
    d->trap_pending = false;
    d->desynced = false;
    d->nosync_told = false;
    d->have_pc = true;
    return TK_OK;
}

static int process_format3(tk_te_decoder *d, const tk_te_packet *pkt)
{
    int r;
    switch (pkt->subformat) {
    case TK_TE_SF_SUPPORT:
        return process_support(d, pkt);
    case TK_TE_SF_CONTEXT: {
        /* Imprecise context change: no effect on the flow (decoder.adoc ignores it). */
        d->context = pkt->context;
        tk_event ev = {.kind = TK_EV_CONTEXT, .first = d->pc, .last = d->pc};
        return tk_dec_emit(d, &ev);
    }
    case TK_TE_SF_TRAP: {
        /* 0.029 has no thaddr: its address is always the handler. */
        const bool thaddr = d->p.spec != TK_TE_SPEC_2_0 || pkt->thaddr;
        if (d->p.s.nocontext == 0)
            d->context = pkt->context;
        if ((r = process_trap(d, pkt, thaddr)) != TK_OK || !thaddr)
            return r;
        return process_sync_address(d, pkt);
    }
    default:
        if (d->p.s.nocontext == 0)
            d->context = pkt->context;
        return process_sync_address(d, pkt);
    }
}

/* Formats 0, 1 and 2: branch map and/or address relative to the last sync. */
static int process_branch_address(tk_te_decoder *d, const tk_te_packet *pkt)
{
    if (d->start_of_trace || !d->have_pc) {
        /* decoder.adoc: "Expecting trace to start with format 3" (or, after a trap with
         * thaddr=0, the sync with the handler address). After an error, packets up to the
         * next sync are skipped quietly. */
        if (d->desynced || d->nosync_told)
            return TK_OK;
        d->nosync_told = true;
        return warn(d, TK_ERR_NO_SYNC,
                    "format %u packet before the first format 3 sync (skipped up to the next "
                    "sync)",
                    pkt->format);
    }
    if (pkt->format == TK_TE_F0)
        return tk_dec_fail(d, TK_ERR_UNSUPPORTED,
                           "format 0 packets (branch prediction, jump target cache) are not "
                           "supported");
    if (pkt->format == TK_TE_F2 || pkt->branches != 0) {
        d->stop_at_last_branch = false;
        const uint64_t a = field_address(d, pkt->address);
        d->address = (d->p.o.full_address ? a : d->address + a) & d->addr_mask;
    }
    if (pkt->format == TK_TE_F1) {
        const unsigned n = pkt->branches ? pkt->branches : 31;
        d->stop_at_last_branch = pkt->branches == 0;
        if (d->branches + n > 63)
            return tk_dec_fail(d, TK_ERR_MISMATCH,
                               "%u branches left unprocessed before this packet's %u", d->branches,
                               n);
        const uint64_t map = pkt->branch_map & ((1ull << n) - 1);
        d->branch_map |= map << d->branches;
        d->branches += n;
    }
    const tk_dec_walk w = {.address = d->address,
                           .notify = pkt->notify,
                           .updiscon = pkt->updiscon,
                           .irreport = pkt->irreport,
                           .irdepth = pkt->irdepth};
    return tk_dec_follow(d, &w);
}

static tk_status result(tk_te_decoder *d, int r)
{
    if (r == DEC_STOPPED)
        return d->stop;
    if (r < 0)
        return (tk_status)r;
    return TK_OK; /* DEC_DESYNC was reported as an event */
}

tk_status tk_te_decoder_packet(tk_te_decoder *d, const tk_te_packet *pkt, uint64_t byte_offset,
                               uint64_t index)
{
    if (!d || !pkt)
        return TK_ERR_INVALID;
    d->byte_offset = byte_offset;
    d->packet_index = index;
    d->stats.packets++;
    int r = pkt->format == TK_TE_F3 ? process_format3(d, pkt) : process_branch_address(d, pkt);
    return result(d, r);
}

tk_status tk_te_decoder_lost(tk_te_decoder *d, uint64_t byte_offset, uint64_t index)
{
    if (!d)
        return TK_ERR_INVALID;
    d->byte_offset = byte_offset;
    d->packet_index = index;
    int r = flush_range(d, TK_END_NONE, false, false, 0);
    if (r == TK_OK) {
        const uint64_t at = d->pc;
        const bool had_pc = d->have_pc;
        lose_sync(d);
        d->desynced = true;
        r = emit_at(d, TK_EV_LOST, had_pc ? at : 0);
    }
    return result(d, r);
}

tk_status tk_te_decoder_finish(tk_te_decoder *d)
{
    if (!d)
        return TK_ERR_INVALID;
    return result(d, flush_range(d, TK_END_NONE, false, false, 0));
}
