/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: te_inst packet handling (decoder.adoc process_te_inst,
 * process_support, exception_address). Following the path between reported addresses is in
 * decoder_walk.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder_int.h"
#include "etrace/packet_layout.h"
#include "walk_memo.h"
#include "util/compiler.h"

tk_status tk_te_decoder_new(const tk_te_params *p, tk_image *img, tk_event_fn fn, void *ctx,
                            tk_te_decoder **out)
{
    if (!p || !img || !fn || !out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (p->s.iaddress_width == 0 || p->s.iaddress_width > 64 ||
        p->s.iaddress_lsb >= p->s.iaddress_width)
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
    d->idle_limit = tk_dec_idle_limit(img);
    d->max_predicted = TK_TE_MAX_PREDICTED_DEFAULT;
    d->near = calloc(TK_DEC_NEAR_BLOCKS, sizeof(*d->near));
    d->blk = malloc(TK_BLOCK_BATCH * sizeof(*d->blk));
    d->own_img = img;
    d->blk_ev.kind = TK_EV_BLOCKS;
    d->blk_ev.blocks = d->blk;
    tk_status st = d->near && d->blk ? TK_OK : TK_ERR_NOMEM;
    /* The mode state machines are sized from the static attributes even when their option
     * is off: a support packet may switch the option on. */
    if (st == TK_OK)
        st = tk_te_irstack_init(&d->ir, p);
    if (st == TK_OK)
        st = tk_te_bpred_init(&d->bp, p->s.bpred_size, true);
    if (st == TK_OK)
        st = tk_te_jtc_init(&d->jtc, p->s.cache_size, true);
    if (st != TK_OK) {
        tk_te_decoder_free(d);
        return st;
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
    tk_te_irstack_free(&d->ir);
    tk_te_bpred_free(&d->bp);
    tk_te_jtc_free(&d->jtc);
    free(d->near);
    free(d->blk);
    free(d->memo);
    free(d->chunks);
    free(d);
}

void tk_dec_rebind_image(tk_te_decoder *d, tk_image *img)
{
    if (d->img == img)
        return;
    d->img = img;
    /* Blocks of the new image would mean nothing to a sink made for the old one: ranges
     * from now on. A batch already collected stays valid (the old image outlives the
     * decoder) and goes to the same sink. */
    d->blocks = (d->flags & TK_TE_DEC_BLOCK_EVENTS) && img == d->own_img;
    /* both caches point into the old image's blocks */
    d->stop_block = NULL;
    memset(d->near, 0, TK_DEC_NEAR_BLOCKS * sizeof(*d->near));
    tk_walk_memo_clear(d);
}

void tk_te_decoder_set_trap_vector(tk_te_decoder *d, unsigned priv, uint64_t xtvec)
{
    if (!d || priv > 3)
        return;
    d->tvec[priv] = xtvec;
    d->tvec_set |= (uint8_t)(1u << priv);
}

void tk_te_decoder_set_flags(tk_te_decoder *d, unsigned flags)
{
    if (!d)
        return;
    d->flags = flags;
    d->blocks = (flags & TK_TE_DEC_BLOCK_EVENTS) && d->img == d->own_img;
    /* the flags decide where some walks stop (TK_TE_DEC_ECALL_SEQUENTIAL) */
    tk_walk_memo_clear(d);
    /* Only walks with block events use the memo (walk_memo.h): made now, or freed. If it
     * cannot be had, the walks all run. */
    (void)tk_dec_set_walk_memo(d, !d->memo_off);
}

void tk_te_decoder_set_max_predicted(tk_te_decoder *d, uint64_t max)
{
    if (d)
        d->max_predicted = max;
}

int tk_dec_flush_blocks_now(tk_te_decoder *d)
{
    d->blk_ev.nblocks = d->nblk;
    d->nblk = 0;
    d->flushes++;
    const tk_status st = d->fn(d->ctx, &d->blk_ev);
    if (st == TK_OK)
        return TK_OK;
    d->stop = st;
    return DEC_STOPPED;
}

void tk_te_decoder_get_stats(const tk_te_decoder *d, tk_te_decoder_stats *st)
{
    size_t n = st->size && st->size < sizeof(*st) ? st->size : sizeof(*st);
    memcpy(st, &d->stats, n);
    st->size = n;
}

tk_status tk_dec_emit(tk_te_decoder *d, tk_event *ev)
{
    /* the blocks collected so far come before this event */
    if (d->nblk && tk_dec_flush_blocks_now(d) != TK_OK)
        return (tk_status)DEC_STOPPED;
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

/* A synchronisation packet: the mode state machines start again, as the encoder's did when
 * it sent the packet (branchTrace.adoc: call counter reset, predictor entries to 01, cache
 * entries invalid). */
static void reset_modes(tk_te_decoder *d)
{
    tk_te_irstack_reset(&d->ir);
    tk_te_bpred_reset(&d->bp);
    tk_te_jtc_reset(&d->jtc);
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
    d->pred_pending = 0;
    d->fail_pending = false;
    d->last_valid = false;
    reset_modes(d);
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

/* Why a support packet cannot come from the encoder whose trace is being decoded (it was
 * damaged, or bytes around it were), or NULL: tk_te_support_check (support_check.c). */
static const char *support_refusal(const tk_te_decoder *d, const tk_te_packet *pkt)
{
    const unsigned state = (d->flags & TK_TE_DEC_FIXED_OPTIONS ? TK_TE_SUPPORT_FIXED_OPTIONS : 0) |
                           (d->start_of_trace ? 0 : TK_TE_SUPPORT_FOLLOWING) |
                           (d->desynced ? TK_TE_SUPPORT_DAMAGED : 0);
    return tk_te_support_check(&d->p, pkt->encoder_mode, pkt->ioptions, state);
}

/* process_support() */
static int process_support(tk_te_decoder *d, const tk_te_packet *pkt)
{
    int r;
    const char *why = support_refusal(d, pkt);
    if (why)
        /* Nothing of the packet is believed, not even qual_status: it stands for packets
         * that were lost, so the flow restarts at the next sync. */
        return tk_dec_fail(d, TK_ERR_BAD_PACKET,
                           "support packet not applied (ioptions 0x%" PRIx32
                           ", options in use 0x%" PRIx32 ", encoder_mode %u): %s",
                           pkt->ioptions, tk_te_params_ioptions(&d->p), (unsigned)pkt->encoder_mode,
                           why);
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
static int process_trap(tk_te_decoder *d, const tk_te_packet *pkt, bool thaddr, uint64_t addr)
{
    int r;
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

/* Implicit exception mode (branchTrace.adoc): the trap packet leaves the handler address
 * out; it is the trap vector of the privilege the handler runs in (the packet's), plus
 * 4 * cause for interrupts in vectored mode (xtvec.MODE = 1, privileged spec). */
static int inferred_handler(tk_te_decoder *d, const tk_te_packet *pkt, uint64_t *out)
{
    const unsigned priv = pkt->privilege & 3u;
    if (!((d->tvec_set >> priv) & 1u))
        return tk_dec_fail(d, TK_ERR_CONFIG,
                           "implicit exception: trap vector of privilege %u unknown (give the "
                           "decoder the xtvec value)",
                           priv);
    const uint64_t tvec = d->tvec[priv];
    uint64_t handler = tvec & ~3ull;
    if ((tvec & 3u) == 1 && pkt->interrupt)
        handler += 4u * (uint64_t)pkt->ecause;
    *out = handler & d->addr_mask;
    return TK_OK;
}

/* Format 3 subformat 0 or 1 (thaddr=1): the address of an instruction that retired. */
static int process_sync_address(tk_te_decoder *d, const tk_te_packet *pkt, uint64_t address)
{
    int r;
    const bool restart = d->start_of_trace || d->trap_pending || !d->have_pc;

    d->inferred_address = false;
    d->address = address;
    if (pkt->subformat == TK_TE_SF_TRAP || restart) {
        d->branches = 0;
        d->branch_map = 0;
        d->pred_pending = 0;
        d->fail_pending = false;
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
    reset_modes(d);
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
        uint64_t addr = field_address(d, pkt->address) & d->addr_mask;
        if (!tk_te_trap_has_address(&d->p, pkt) && (r = inferred_handler(d, pkt, &addr)) != TK_OK)
            return r;
        if (d->p.s.nocontext == 0)
            d->context = pkt->context;
        if ((r = process_trap(d, pkt, thaddr, addr)) != TK_OK || !thaddr)
            return r;
        return process_sync_address(d, pkt, addr);
    }
    default:
        if (d->p.s.nocontext == 0)
            d->context = pkt->context;
        return process_sync_address(d, pkt, field_address(d, pkt->address) & d->addr_mask);
    }
}

/* Append a packet's branch map (branches = 0: a full 31-entry map, and with stop_at_last the
 * walk ends at the 31st branch) after the branches still pending. */
static int take_branch_map(tk_te_decoder *d, unsigned branches, uint32_t branch_map,
                           bool stop_at_last)
{
    const unsigned n = branches ? branches : 31;
    if (stop_at_last)
        d->stop_at_last_branch = true;
    if (d->pred_pending || d->fail_pending)
        return tk_dec_fail(d, TK_ERR_MISMATCH,
                           "branch map while %llu predicted branches are not reached yet",
                           (unsigned long long)(d->pred_pending + d->fail_pending));
    if (d->branches + n > 63)
        return tk_dec_fail(d, TK_ERR_MISMATCH,
                           "%u branches left unprocessed before this packet's %u", d->branches, n);
    const uint64_t map = branch_map & ((1ull << n) - 1);
    d->branch_map |= map << d->branches;
    d->branches += n;
    return TK_OK;
}

/* Format 0 subformat 0 (payload.adoc): count + 31 branches went as the predictor said; with
 * branch_fmt 00 (no address) the next one did not and the packet reports it; with 11 the
 * reported address is a branch that did not either. */
static int take_branch_count(tk_te_decoder *d, const tk_te_packet *pkt)
{
    if (!d->p.o.branch_prediction)
        return tk_dec_fail(d, TK_ERR_MISMATCH,
                           "branch count packet but branch prediction is off (ioptions)");
    if (d->pred_pending || d->fail_pending)
        return tk_dec_fail(d, TK_ERR_MISMATCH,
                           "branch count while %llu predicted branches are not reached yet",
                           (unsigned long long)(d->pred_pending + d->fail_pending));
    const uint64_t claimed = pkt->branch_count + TK_TE_BCOUNT_MIN;
    if (d->max_predicted && claimed > d->max_predicted)
        return tk_dec_fail(d, TK_ERR_OVERFLOW,
                           "branch count packet claims %llu correctly predicted branches, more "
                           "than the limit of %llu (damaged trace, or a longer loop: raise "
                           "the limit, --max-predicted)",
                           (unsigned long long)claimed, (unsigned long long)d->max_predicted);
    d->pred_pending = claimed;
    d->fail_pending = pkt->branch_fmt != 2;
    if (pkt->branch_fmt == 0)
        d->stop_at_last_branch = true;
    return TK_OK;
}

/* Format 0 subformat 1: the address is the cache entry's, then an optional branch map. */
static int take_cached_target(tk_te_decoder *d, const tk_te_packet *pkt)
{
    uint64_t target;
    if (!d->p.o.jump_target_cache)
        return tk_dec_fail(d, TK_ERR_MISMATCH,
                           "jump target cache packet but the cache is off (ioptions)");
    if (!tk_te_jtc_get(&d->jtc, pkt->jtc_index, &target))
        return tk_dec_fail(d, TK_ERR_MISMATCH, "jump target cache entry %u is empty",
                           pkt->jtc_index);
    d->stop_at_last_branch = false;
    d->address = target;
    if (pkt->branches)
        return take_branch_map(d, pkt->branches, pkt->branch_map, false);
    return TK_OK;
}

/* The fields of a format 0, 1 or 2 packet that process_branch_address() reads: from a
 * tk_te_packet, or from a scanner record (tk_te_rec: formats 1 and 2). */
typedef struct branch_fields {
    const tk_te_packet *f0; /* format 0: the whole packet */
    unsigned format;
    unsigned branches;
    uint32_t branch_map;
    uint64_t address; /* as carried */
    uint64_t irdepth;
    bool notify, updiscon, irreport;
} branch_fields;

/* Formats 0, 1 and 2: branch map and/or address relative to the last sync. full: the address
 * is absolute (full_address option, or a 0.026 full-delta packet). */
static inline int process_branch_address(tk_te_decoder *d, const branch_fields *pkt, bool full)
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
    int r;
    bool explicit_address = false; /* the packet carries an address field */
    bool from_cache = false;
    if (pkt->format == TK_TE_F0) {
        if (pkt->f0->subformat == TK_TE_F0_BRANCH_COUNT) {
            if ((r = take_branch_count(d, pkt->f0)) != TK_OK)
                return r;
            explicit_address = pkt->f0->branch_fmt != 0;
        } else {
            if ((r = take_cached_target(d, pkt->f0)) != TK_OK)
                return r;
            from_cache = true;
        }
    } else if (pkt->format == TK_TE_F2 || pkt->branches != 0) {
        explicit_address = true;
    }
    if (explicit_address) {
        d->stop_at_last_branch = false;
        const uint64_t a = field_address(d, pkt->address);
        d->address = (full ? a : d->address + a) & d->addr_mask;
    }
    if (pkt->format == TK_TE_F1 &&
        (r = take_branch_map(d, pkt->branches, pkt->branch_map, pkt->branches == 0)) != TK_OK)
        return r;
    tk_dec_walk w = {.address = d->address,
                     .notify = pkt->notify,
                     .updiscon = pkt->updiscon,
                     .irreport = pkt->irreport,
                     .irdepth = pkt->irdepth,
                     .plain = !pkt->notify && !pkt->updiscon && !pkt->irreport};
    tk_rv_insn at;
    if (w.irreport && tk_image_fetch(d->img, w.address, &at) == TK_OK)
        w.target_branch = at.cf == TK_RV_CF_BRANCH;
    if ((r = tk_dec_follow(d, &w)) != TK_OK)
        return r;
    /* Jump target cache: the encoder caches every uninferable jump target it reports with
     * an address; the walk tells which reports those were (it stopped on the jump's target,
     * or at an address it will learn was one: "inferred"). */
    if (explicit_address && !from_cache && d->p.o.jump_target_cache &&
        (d->walk_uninf || d->inferred_address))
        tk_te_jtc_insert(&d->jtc, d->address);
    return TK_OK;
}

/* A walk that ended on the branch that failed its prediction (format 0 subformat 0) leaves
 * that branch pending; its outcome is the opposite of the prediction, which is known now that
 * the predictor has seen every earlier branch. Later packets' maps come after it. */
static void settle_failed_branch(tk_te_decoder *d)
{
    if (!d->fail_pending || d->branches || d->pred_pending || !d->have_pc)
        return;
    const bool taken = !tk_te_bpred_predict(&d->bp, d->pc);
    d->branch_map = taken ? 0 : 1;
    d->branches = 1;
    d->fail_pending = false;
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
    tk_te_packet logical;
    bool full;
    if (d->p.spec != TK_TE_SPEC_2_0) {
        if (tk_te_packet_from_spec(&d->p, pkt, &logical, &full) != TK_OK)
            return result(d, warn(d, TK_ERR_UNSUPPORTED, "packet not defined by spec %s",
                                  tk_te_spec_name(d->p.spec)));
        pkt = &logical;
    } else {
        full = d->p.o.full_address;
    }
    settle_failed_branch(d);
    int r;
    if (pkt->format == TK_TE_F3) {
        r = process_format3(d, pkt);
    } else {
        const branch_fields f = {.f0 = pkt,
                                 .format = pkt->format,
                                 .branches = pkt->branches,
                                 .branch_map = pkt->branch_map,
                                 .address = pkt->address,
                                 .irdepth = pkt->irdepth,
                                 .notify = pkt->notify,
                                 .updiscon = pkt->updiscon,
                                 .irreport = pkt->irreport};
        r = process_branch_address(d, &f, full);
    }
    return result(d, r);
}

/* tk_dec_packet_rec() in general (a frame of its own, apart from the common packet's). */
static TK_NOINLINE tk_status packet_rec_any(tk_te_decoder *d, const tk_te_rec *rec,
                                            uint64_t byte_offset, uint64_t index)
{
    if (d->p.spec != TK_TE_SPEC_2_0 || (rec->format != TK_TE_F1 && rec->format != TK_TE_F2)) {
        tk_te_packet pkt;
        tk_te_rec_to_packet(rec, &pkt);
        return tk_te_decoder_packet(d, &pkt, byte_offset, index);
    }
    d->byte_offset = byte_offset;
    d->packet_index = index;
    d->stats.packets++;
    settle_failed_branch(d);
    const branch_fields f = {.format = rec->format,
                             .branches = rec->branches,
                             .branch_map = rec->branch_map,
                             .address = rec->address,
                             .irdepth = rec->irdepth,
                             .notify = (rec->flags & TK_TE_REC_NOTIFY) != 0,
                             .updiscon = (rec->flags & TK_TE_REC_UPDISCON) != 0,
                             .irreport = (rec->flags & TK_TE_REC_IRREPORT) != 0};
    return result(d, process_branch_address(d, &f, d->p.o.full_address));
}

tk_status tk_dec_packet_rec(tk_te_decoder *d, const tk_te_rec *rec, uint64_t byte_offset,
                            uint64_t index)
{
    const unsigned f = rec->format;
    const unsigned n = f == TK_TE_F1 ? (rec->branches ? rec->branches : 31u) : 0u;
    if (!((f == TK_TE_F1 || f == TK_TE_F2) && d->p.spec == TK_TE_SPEC_2_0 && d->have_pc &&
          !d->start_of_trace && !d->pred_pending && !d->fail_pending && !d->p.o.jump_target_cache &&
          !(rec->flags & TK_TE_REC_IRREPORT) && d->branches + n <= 63))
        return packet_rec_any(d, rec, byte_offset, index);
    /* The common packet, in the middle of a flow: what process_branch_address() does for it
     * (nothing predicted or failed to settle, no cache to fill, no implicit-return report to
     * look up, a map that fits), without its general cases. */
    d->byte_offset = byte_offset;
    d->packet_index = index;
    d->stats.packets++;
    if (f == TK_TE_F2 || rec->branches) {
        d->stop_at_last_branch = false;
        const uint64_t a = field_address(d, rec->address);
        d->address = (d->p.o.full_address ? a : d->address + a) & d->addr_mask;
    }
    if (n) {
        if (!rec->branches)
            d->stop_at_last_branch = true; /* a full map without address */
        d->branch_map |= (rec->branch_map & ((1ull << n) - 1)) << d->branches;
        d->branches += n;
    }
    const tk_dec_walk w = {.address = d->address,
                           .notify = (rec->flags & TK_TE_REC_NOTIFY) != 0,
                           .updiscon = (rec->flags & TK_TE_REC_UPDISCON) != 0,
                           .plain = !(rec->flags & (TK_TE_REC_NOTIFY | TK_TE_REC_UPDISCON))};
    return result(d, tk_dec_follow(d, &w));
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

tk_status tk_te_decoder_flush(tk_te_decoder *d)
{
    if (!d)
        return TK_ERR_INVALID;
    return result(d, tk_dec_flush_blocks(d));
}

tk_status tk_te_decoder_finish(tk_te_decoder *d)
{
    if (!d)
        return TK_ERR_INVALID;
    int r = flush_range(d, TK_END_NONE, false, false, 0);
    if (r == TK_OK)
        r = tk_dec_flush_blocks(d);
    return result(d, r);
}
