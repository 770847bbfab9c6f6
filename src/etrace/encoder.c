/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace encoder: the reference compressed branch trace algorithm (exampleAlgorithm.adoc,
 * figure "algo", 2021 chart as implemented by the reference encoder_model.py; VERSIONS.md B.3
 * and C.8). A 3-stage pipe of previous, current and next instruction ("steps"); every packet
 * describes the current one. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encoder_branch_map.h"
#include "encoder_resync.h"
#include "etrace/packet_clear.h"
#include "etrace/modes.h"
#include "tracekit/te_encoder.h"
#include "util/compiler.h"

/* One instruction as the algorithm sees it. */
typedef struct te_step {
    uint64_t addr;
    uint64_t tval; /* with cause: read only when exc (the fast path leaves them stale) */
    uint64_t context;
    uint64_t time;
    uint32_t cause;
    uint32_t ir_depth; /* return stack depth before this return (irdepth if mispredicted) */
    uint8_t itype;
    uint8_t priv;
    uint8_t ctype;
    uint8_t size; /* bytes of the (last) instruction */
    bool sijump;
    bool updiscon;   /* uninferable discontinuity (depends on the options) */
    bool addr_known; /* false for the instructions inside a multi-instruction block */
    /* the rest is constant on the fast path (adjacent: one store) */
    bool retired;     /* iretire != 0 (false for an exception-only step) */
    bool qualified;   /* traced */
    bool notify;      /* trace-notify trigger on this instruction */
    bool ir_implicit; /* a return predicted by the implicit-return state */
    bool exc;         /* itype 1 or 2 */
} te_step;

/* Decisions of one cycle (names of the flow chart). */
typedef struct te_flags {
    bool notify, updiscon, prev_updiscon, curr_updiscon, prev_exception, curr_exc_only,
        next_exc_only, next_exception, prev_reported, first_qualified, ppccd, ppccd_br, er_n, cci,
        resync_br, rpt_br, resync_exceeded;
} te_flags;

/* Classes of itype values for the fast path (tk_te_encoder.itype_class); values above 15
 * have none and take the general path, which rejects them. */
enum { IT_FAST = 1, IT_UPDISCON = 2, IT_BRANCH = 4, IT_NOT_TAKEN = 8 };
/* In run_plain()'s tables: the block needs more than a branch map update. */
enum { IT_SLOW = 16 };

/* Why a packet went out for the current instruction (for ended_rep / ended_ntr). */
enum te_reason { R_NONE, R_SYNC, R_UPDISCON, R_OTHER };

struct tk_te_encoder {
    tk_te_params p;
    tk_te_encoder_options o;
    tk_te_packet_fn fn;
    void *ctx;
    te_step ring[3]; /* the pipe, rotated by pointer: no copies per instruction */
    te_step *prev, *curr, *next;
    te_flags flags;
    tk_te_branch_map map;
    tk_te_resync resync;
    uint64_t last_addr; /* last address sent, for differential addresses */
    uint64_t addr_mask; /* iaddress_width - iaddress_lsb bits */
    /* put_address()'s widths, from the parameters once (it runs for most packets) */
    uint32_t addr_bits;
    uint64_t irdepth_mask; /* irdepth_bits ones (0: no irdepth field) */
    uint64_t packets;
    uint32_t updiscon_set; /* bit per itype */
    bool have_last_addr;
    bool flags_valid;   /* flags hold the decisions of the last encoded cycle */
    bool trap_reported; /* trap reported with thaddr 0 on this cycle (trep) */
    bool started;       /* initial support packet sent */
    bool finished;
    bool trace_on;     /* trigger state */
    bool lost_pending; /* trace_lost support packet due */
    bool force_sync;   /* next traced instruction must start with a sync */
    /* run_fast() and push_lazy() may start: curr and next are plain, traced, in one
     * privilege and context, no sync or support packet is due and the resync timer is at
     * most its maximum; the next cycle can then only be quiet or send what the fast paths
     * send (an uninferable discontinuity's target, curr an updiscon; resync; a full map).
     * Kept by update_steady() after every step the general path takes. */
    bool runnable;
    /* A block that may take the fast paths has (block_bytes(b) & fast_mask) == fast_want:
     * ilastsize <= 3, the privilege of the newest step, no trigger, halted or reset (set by
     * update_steady(), kept by the fast paths, which change no privilege). */
    uint64_t fast_mask, fast_want;
    /* Pushes on the fast path (push_lazy()) leave the pipe as it is and keep the blocks in a
     * ring; settle() writes their steps (the pipe holds three, a block makes one or three)
     * before anything else reads the pipe. While lazy, map holds the newest step's branch
     * too (as in run_fast()); lz_context is the context (no fast cycle changes it), lz_limit
     * the map's limit (TK_TE_MAX_BRANCHES, 1 at the resync maximum, 0 past it). */
    bool lazy;
    uint8_t lz_x; /* X_* bits of the newest step */
    uint8_t lz_limit;
    size_t lz_n; /* blocks in the ring (the newest at (lz_n - 1) & 3) */
    uint64_t lz_context;
    tk_te_block lz_ring[4];
    bool modes_off; /* none of implicit return, branch prediction, jump target cache runs */
    bool sijump_on; /* p.o.sijump */
    uint8_t itype_class[256]; /* IT_* bits per itype value, for the fast path */
    /* run_plain(), by the newest step's state ([0]: neither an updiscon nor the target of
     * one, [1]: either) and by itype | ilastsize << 8 (ilastsize <= 3): in the low 32 bits
     * the iretire of a block of one instruction (1 << ilastsize; 0 for a trap, which the
     * slow part rejects), above them the itype's IT_* bits, with IT_SLOW for an updiscon or
     * a trap ([0]) or for all ([1]) */
    uint64_t plain[2][1024];
    /* implicit return (spec-faithful mode only; the reference model has none) */
    bool ir_on;
    bool ir_before_sync; /* the current packet reports the instruction before a format 3 */
    tk_te_irstack irs;   /* shared with the decoder (etrace/modes.h) */
    /* branch prediction and jump target cache (spec-faithful mode only), shared state
     * machines; pbc counts the branches predicted correctly since the last packet while
     * "counting" (all of them were) */
    bool bp_on, jtc_on;
    tk_te_bpred bp;
    tk_te_jtc jtc;
    uint64_t pbc;
    bool counting;
    bool count_failed; /* the current branch failed its prediction after 31 or more */
};

static uint64_t mask_bits(uint32_t bits)
{
    return bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
}

/* The block's one-byte fields from itype to reset, as one word (run_fast()). */
#define BLOCK_BYTES_AT offsetof(tk_te_block, itype)
_Static_assert(offsetof(tk_te_block, reset) == BLOCK_BYTES_AT + 7,
               "tk_te_block: itype..reset must be 8 adjacent bytes");

static inline uint64_t block_bytes(const tk_te_block *b)
{
    uint64_t w;
    memcpy(&w, (const unsigned char *)b + BLOCK_BYTES_AT, sizeof(w));
    return w;
}

/* A word of the bytes itype..reset, from their values (byte order as in memory). */
static uint64_t bytes_word(uint8_t ilastsize, uint8_t priv, uint8_t trigger, uint8_t halted,
                           uint8_t reset)
{
    tk_te_block t;
    memset(&t, 0, sizeof(t));
    t.ilastsize = ilastsize;
    t.priv = priv;
    t.trigger = trigger;
    t.halted = halted;
    t.reset = reset;
    return block_bytes(&t);
}

void tk_te_encoder_options_init(tk_te_encoder_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->reference_quirks = true;
    o->irdepth_ones = true;
    o->start_qualified = true;
}

tk_status tk_te_encoder_new_opts(const tk_te_params *p, const tk_te_encoder_options *o,
                                 tk_te_packet_fn fn, void *ctx, tk_te_encoder **out)
{
    *out = NULL;
    if (!p || !fn || p->s.iaddress_width == 0 || p->s.iaddress_width > 64 ||
        p->s.iaddress_lsb >= p->s.iaddress_width)
        return TK_ERR_INVALID;
    tk_te_encoder *e = calloc(1, sizeof(*e));
    if (!e)
        return TK_ERR_NOMEM;
    e->p = *p;
    tk_te_encoder_options_init(&e->o);
    if (o)
        memcpy(&e->o, o, o->size && o->size < sizeof(*o) ? o->size : sizeof(*o));
    e->fn = fn;
    e->ctx = ctx;
    e->addr_mask = mask_bits(tk_te_addr_bits(p));
    e->addr_bits = tk_te_addr_bits(p);
    e->irdepth_mask = tk_te_irdepth_bits(p) ? mask_bits(tk_te_irdepth_bits(p)) : 0;
    tk_te_resync_init(&e->resync, p->o.resync_max);
    /* Uninferable discontinuities (VERSIONS.md B.1 caveat). The reference leaves out xRET (3)
     * and, with implicit return, the swap (12) too. */
    e->updiscon_set = (1u << TK_ITYPE_UNINF_JUMP3) | (1u << TK_ITYPE_UNINF_CALL) |
                      (1u << TK_ITYPE_UNINF_JUMP) | (1u << TK_ITYPE_UNINF_OTHER);
    if (!p->o.implicit_return)
        e->updiscon_set |= (1u << TK_ITYPE_RETURN) | (1u << TK_ITYPE_SWAP);
    if (!e->o.reference_quirks) {
        e->updiscon_set |= (1u << TK_ITYPE_TRAP_RETURN) | (1u << TK_ITYPE_SWAP);
        /* implicit return needs the 4-bit itype (calls and returns) and a counter or stack;
         * otherwise returns stay uninferable */
        e->ir_on = p->o.implicit_return && p->s.itype_width == 4 &&
                   (p->s.return_stack_size > 0 || p->s.call_counter_size > 0);
        e->updiscon_set |= 1u << TK_ITYPE_RETURN; /* unless predicted, see ir_return() */
        e->bp_on = p->o.branch_prediction;
        e->jtc_on = p->o.jump_target_cache;
        tk_status st = TK_OK;
        if (p->spec == TK_TE_SPEC_0_26 && (e->ir_on || e->bp_on || e->jtc_on))
            st = TK_ERR_CONFIG; /* 0.026 has none of the optional modes */
        if (st == TK_OK && e->ir_on)
            st = tk_te_irstack_init(&e->irs, p);
        if (st == TK_OK && e->bp_on)
            st = tk_te_bpred_init(&e->bp, p->s.bpred_size, true);
        if (st == TK_OK && e->jtc_on)
            st = tk_te_jtc_init(&e->jtc, p->s.cache_size, true);
        if (st != TK_OK) {
            tk_te_encoder_free(e);
            return st;
        }
    }
    /* Advertise (ioptions) only the modes this encoder runs: the reference model has none,
     * and implicit return needs the 4-bit itype and a stack or counter. */
    e->p.o.implicit_return = e->ir_on;
    e->p.o.branch_prediction = e->bp_on;
    e->p.o.jump_target_cache = e->jtc_on;
    e->counting = true;
    e->modes_off = !e->ir_on && !e->bp_on && !e->jtc_on;
    e->sijump_on = p->o.sijump;
    for (unsigned t = 0; t < 16; t++)
        e->itype_class[t] =
            (uint8_t)((t != TK_ITYPE_EXCEPTION && t != TK_ITYPE_INTERRUPT ? IT_FAST : 0) |
                      ((e->updiscon_set >> t) & 1u ? IT_UPDISCON : 0) |
                      (t == TK_ITYPE_NOT_TAKEN || t == TK_ITYPE_TAKEN ? IT_BRANCH : 0) |
                      (t == TK_ITYPE_NOT_TAKEN ? IT_NOT_TAKEN : 0));
    for (unsigned k = 0; k < 1024; k++) {
        const unsigned cls = e->itype_class[k & 0xff];
        const uint64_t iretire = cls & IT_FAST ? 1u << (k >> 8) : 0;
        const unsigned slow = cls & IT_FAST && !(cls & IT_UPDISCON) ? 0 : IT_SLOW;
        e->plain[0][k] = iretire | (uint64_t)(cls | slow) << 32;
        e->plain[1][k] = iretire | (uint64_t)(cls | IT_SLOW) << 32;
    }
    e->trace_on = e->o.start_qualified;
    e->fast_mask = bytes_word(0xfc, 0xff, 0xff, 0xff, 0xff);
    e->prev = &e->ring[0];
    e->curr = &e->ring[1];
    e->next = &e->ring[2];
    *out = e;
    return TK_OK;
}

tk_status tk_te_encoder_new(const tk_te_params *p, tk_te_packet_fn fn, void *ctx,
                            tk_te_encoder **out)
{
    return tk_te_encoder_new_opts(p, NULL, fn, ctx, out);
}

void tk_te_encoder_free(tk_te_encoder *e)
{
    if (!e)
        return;
    tk_te_irstack_free(&e->irs);
    if (e->bp_on)
        tk_te_bpred_free(&e->bp);
    if (e->jtc_on)
        tk_te_jtc_free(&e->jtc);
    free(e);
}

uint64_t tk_te_encoder_packets(const tk_te_encoder *e)
{
    return e->packets;
}

static void settle(tk_te_encoder *e);

tk_status tk_te_encoder_trace_lost(tk_te_encoder *e)
{
    settle(e); /* (the fast path runs only while runnable) */
    e->lost_pending = true;
    e->runnable = false;
    return TK_OK;
}

/* ---- packet output ---- */

/* Every packet advances the resync timer and empties the branch map (all packets that can
 * follow unreported branches carry them). */
static tk_status send(tk_te_encoder *e, tk_te_packet *pkt)
{
    e->packets++;
    tk_te_branch_map_clear(&e->map);
    e->pbc = 0;
    e->counting = true;
    e->count_failed = false;
    tk_te_resync_packet(&e->resync);
    if (e->p.spec == TK_TE_SPEC_2_0)
        return e->fn(e->ctx, pkt);
    /* the drafts' layouts (etrace/modes.h); 0.026's support packet is a separate te_support
     * message, handed over as it is */
    tk_te_packet wire;
    tk_status st = tk_te_packet_to_spec(&e->p, pkt, &wire);
    if (st == TK_ERR_UNSUPPORTED && pkt->format == TK_TE_F3 && pkt->subformat == TK_TE_SF_SUPPORT)
        return e->fn(e->ctx, pkt);
    return st == TK_OK ? e->fn(e->ctx, &wire) : st;
}

static bool is_exc(const te_step *s)
{
    return s->exc;
}

static bool is_updiscon(const tk_te_encoder *e, const te_step *s)
{
    (void)e;
    return s->updiscon;
}

/* The per-step classification, done once when the step enters the pipe. */
static void classify_step(const tk_te_encoder *e, te_step *s)
{
    s->exc = s->itype == TK_ITYPE_EXCEPTION || s->itype == TK_ITYPE_INTERRUPT;
    /* 2.0 sijump: a jump made inferable by the instruction before it, if enabled */
    s->updiscon = ((e->updiscon_set >> s->itype) & 1u) && !(s->sijump && e->p.o.sijump);
}

static tk_status send_support(tk_te_encoder *e, bool enable, uint8_t qual)
{
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.format = TK_TE_F3;
    pkt.subformat = TK_TE_SF_SUPPORT;
    pkt.ienable = enable;
    pkt.encoder_mode = 0; /* branch trace */
    pkt.qual_status = qual;
    pkt.ioptions = tk_te_params_ioptions(&e->p);
    e->trap_reported = false;
    return send(e, &pkt);
}

static void fill_sync_common(const tk_te_encoder *e, tk_te_packet *pkt, const te_step *s)
{
    /* branch: 0 when the reported instruction is a taken branch */
    pkt->branch = s->itype == TK_ITYPE_TAKEN ? 0 : 1;
    pkt->privilege = (uint8_t)(s->priv & mask_bits(e->p.s.privilege_width));
    pkt->time = s->time & mask_bits(tk_te_time_bits(&e->p));
    pkt->context = s->context & mask_bits(tk_te_context_bits(&e->p));
}

/* A format 3 start or trap packet: the decoder restarts its mode state machines (empty
 * return stack, predictor entries at 01, cache invalid). The reported instruction's own
 * effects on them come after (bp_commit, ir_call). */
static void ir_sync(tk_te_encoder *e, te_step *s)
{
    if (e->bp_on)
        tk_te_bpred_reset(&e->bp);
    if (e->jtc_on)
        tk_te_jtc_reset(&e->jtc);
    if (!e->ir_on)
        return;
    tk_te_irstack_reset(&e->irs);
    if (s->itype == TK_ITYPE_RETURN && s->ir_implicit) {
        /* the return being reported cannot be inferred from an empty stack */
        s->ir_implicit = false;
        s->updiscon = true;
    }
}

static tk_status send_start(tk_te_encoder *e, te_step *s)
{
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.format = TK_TE_F3;
    pkt.subformat = TK_TE_SF_START;
    fill_sync_common(e, &pkt, s);
    pkt.address = (s->addr >> e->p.s.iaddress_lsb) & e->addr_mask;
    e->trap_reported = false;
    e->last_addr = s->addr;
    e->have_last_addr = true;
    ir_sync(e, s);
    tk_status st = send(e, &pkt);
    tk_te_resync_restart(&e->resync);
    return st;
}

/* F3SF1 (2.0 payload "trap"). thaddr 1: address is the handler's first instruction; thaddr
 * 0: the trap's EPC (the trap follows an updiscon, or a second trap came before the handler
 * retired); the handler then follows in a start packet. */
static tk_status send_trap(tk_te_encoder *e, te_step *s, const te_step *exc, bool thaddr)
{
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.format = TK_TE_F3;
    pkt.subformat = TK_TE_SF_TRAP;
    fill_sync_common(e, &pkt, s);
    pkt.ecause = (uint32_t)(exc->cause & mask_bits(e->p.s.ecause_width));
    pkt.interrupt = exc->itype == TK_ITYPE_INTERRUPT;
    pkt.thaddr = thaddr;
    pkt.address = (s->addr >> e->p.s.iaddress_lsb) & e->addr_mask;
    if (!pkt.interrupt)
        pkt.tval = exc->tval & mask_bits(e->p.s.iaddress_width);
    /* trep: the next cycle must not report this trap again */ e->trap_reported =
        !thaddr && (e->flags.prev_updiscon || e->flags.next_exception);
    e->last_addr = s->addr;
    e->have_last_addr = true;
    ir_sync(e, s);
    tk_status st = send(e, &pkt);
    tk_te_resync_restart(&e->resync);
    return st;
}

static tk_status send_context(tk_te_encoder *e, const te_step *s)
{
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.format = TK_TE_F3;
    pkt.subformat = TK_TE_SF_CONTEXT;
    fill_sync_common(e, &pkt, s);
    pkt.branch = 0;
    e->trap_reported = false;
    return send(e, &pkt);
}

/* irreport (payload.adoc "Format 2 irreport and irdepth"): the packet reports the target of
 * a mispredicted return, or the instruction before a format 3 when the decoder needs the
 * stack depth to stop in the right call. */
static bool ir_report(const tk_te_encoder *e, const te_step *s)
{
    if (!e->ir_on || s != e->curr)
        return false;
    const te_step *p = e->prev;
    if (p->itype == TK_ITYPE_RETURN && !p->ir_implicit)
        return p->ir_depth != 0; /* a mispredicted return (at depth 0 none was predicted) */
    if (!e->ir_before_sync)
        return false;
    return tk_te_irstack_must_report(&e->irs, p->itype == TK_ITYPE_RETURN);
}

/* Jump target cache (branchTrace.adoc "Jump target cache mode"): the target of an
 * uninferable jump found in the cache goes as its index (F0SF1) when the packet needs no
 * flag F0SF1 lacks (updiscon, notify). Every other address report but a notification caches
 * its address: the decoder caches the same ones (those it reaches through the uninferable
 * jump, or "inferred", decoder.c). A branch count packet (use_index false) keeps its
 * address. */
static void jump_target_cache(tk_te_encoder *e, const te_step *s, tk_te_packet *pkt, bool use_index)
{
    const bool target = e->flags_valid && e->flags.prev_updiscon && s == e->curr;
    uint32_t index;
    if (use_index && target && !pkt->updiscon && !pkt->notify &&
        tk_te_jtc_lookup(&e->jtc, s->addr, &index)) {
        tk_te_packet c = *pkt;
        c.format = TK_TE_F0;
        c.subformat = TK_TE_F0_JTC;
        c.jtc_index = index;
        c.has_address = false;
        c.address = 0;
        if (!c.irreport) {
            /* irdepth copies the bit irreport is relative to: branch_map[MSB] or
             * branches[MSB] (it compresses away) */
            const uint32_t dbits = tk_te_irdepth_bits(&e->p);
            unsigned prev = (c.branches >> 4) & 1u;
            if (c.branches) {
                unsigned bm = c.branches == 1   ? 1
                              : c.branches < 4  ? 3
                              : c.branches < 8  ? 7
                              : c.branches < 16 ? 15
                                                : 31;
                prev = (c.branch_map >> (bm - 1)) & 1u;
            }
            c.irdepth = prev ? mask_bits(dbits) : 0;
        }
        /* "the encoder may still choose to output the differential address using format 1
         * or 2 if the resulting packet is shorter" (payload.adoc): a small difference can
         * take fewer bytes than a large index. Both name the same cached address. */
        uint8_t buf[TK_TE_MAX_PAYLOAD];
        size_t with_index, with_address;
        if (tk_te_packet_encode(&e->p, &c, buf, sizeof(buf), &with_index) == TK_OK &&
            (tk_te_packet_encode(&e->p, pkt, buf, sizeof(buf), &with_address) != TK_OK ||
             with_index <= with_address))
            *pkt = c;
        return;
    }
    if (target || !pkt->notify)
        tk_te_jtc_insert(&e->jtc, s->addr);
}

/* The address fields of a packet that reports addr (formats 1 and 2, a branch count with
 * address): the address (differential unless full address), notify and updiscon as given,
 * irreport, and irdepth unless irreport (the caller's then); last_addr becomes addr. */
static inline void put_address(tk_te_encoder *e, tk_te_packet *pkt, uint64_t addr, bool notify,
                               bool updiscon, bool irreport)
{
    pkt->has_address = true;
    const uint32_t aw = e->addr_bits, lsb = e->p.s.iaddress_lsb;
    uint64_t ref_msb; /* the bit the transmitted flags are relative to */
    if (e->p.o.full_address) {
        uint64_t a = (e->o.reference_quirks ? addr : addr >> lsb);
        pkt->address = a & e->addr_mask;
        ref_msb = (addr >> (e->p.s.iaddress_width - 1)) & 1u;
    } else {
        uint64_t diff = addr - e->last_addr; /* modulo 2^64: bits below 64 are exact */
        pkt->address = (diff >> lsb) & e->addr_mask;
        ref_msb = (diff >> (e->p.s.iaddress_width - 1)) & 1u;
    }
    const uint64_t field_msb = (pkt->address >> (aw - 1)) & 1u;
    /* The reference's unshifted full address with lsb > 0 makes its flag bits relative to a
     * bit the field does not hold; keep its transmitted bits (VERSIONS.md C.8). */
    pkt->notify = notify != (ref_msb != field_msb);
    pkt->updiscon = updiscon;
    pkt->irreport = irreport;
    if (!irreport && e->irdepth_mask) {
        bool tx_updiscon = (pkt->updiscon != (pkt->notify != (field_msb != 0)));
        pkt->irdepth = (e->o.irdepth_ones || tx_updiscon) ? e->irdepth_mask : 0;
    }
    e->last_addr = addr;
}

/* F1 (branches pending) or F2 with the address of s; F1 without address when the map is full
 * and nothing else needs reporting. */
static tk_status send_branch(tk_te_encoder *e, const te_step *s, bool with_address)
{
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.branches = e->map.count;
    pkt.branch_map = e->map.bits;
    /* 31 or more branches went as predicted: a branch count (F0SF0) instead of the map */
    const bool count = e->bp_on && e->counting && e->pbc >= TK_TE_BCOUNT_MIN;
    if (count) {
        pkt.format = TK_TE_F0;
        pkt.subformat = TK_TE_F0_BRANCH_COUNT;
        pkt.branch_count = e->pbc - TK_TE_BCOUNT_MIN;
        pkt.branches = 0;
        pkt.branch_map = 0;
    }
    if (!with_address) {
        if (count) /* branch_fmt 00: the branch after the counted ones failed */
            return send(e, &pkt);
        /* 2.0 F1 with branches = 0: a full 31-entry map and no address */
        pkt.format = TK_TE_F1;
        pkt.branches = 0;
        return send(e, &pkt);
    }
    /* 10: the address (of a branch: predicted correctly), 11: of a branch that failed */
    if (count)
        pkt.branch_fmt = e->count_failed ? 3 : 2;
    else
        pkt.format = e->map.count ? TK_TE_F1 : TK_TE_F2;
    const bool irreport = ir_report(e, s);
    /* (after a quiet cycle the flags are stale; notify and updiscon are then both false) */
    put_address(e, &pkt, s->addr, e->flags_valid && e->flags.notify,
                e->flags_valid && e->flags.updiscon, irreport);
    if (irreport) {
        /* the failed return's entry number (the depth before it), else the depth now */
        const te_step *p = e->prev;
        const bool failed = p->itype == TK_ITYPE_RETURN && !p->ir_implicit && s == e->curr;
        pkt.irdepth = (failed ? p->ir_depth : e->irs.depth) & mask_bits(tk_te_irdepth_bits(&e->p));
    }
    if (e->jtc_on)
        jump_target_cache(e, s, &pkt, !count);
    return send(e, &pkt);
}

/* ---- the algorithm ---- */

static void init_flags(tk_te_encoder *e)
{
    const te_step *p = e->prev, *c = e->curr, *n = e->next;
    te_flags *f = &e->flags;
    f->notify = c->notify;
    f->prev_updiscon = is_updiscon(e, p);
    f->curr_updiscon = is_updiscon(e, c);
    /* updiscon: the packet for the instruction after an updiscon is followed by a format 3
     * (trap, privilege change or resync) */
    f->updiscon =
        f->prev_updiscon && (is_exc(n) || n->priv != c->priv || tk_te_resync_at_max(&e->resync));
    f->prev_exception = is_exc(p);
    f->curr_exc_only = !c->retired && is_exc(c);
    f->next_exc_only = !n->retired && is_exc(n);
    f->next_exception = is_exc(n);
    f->prev_reported = f->prev_exception && e->trap_reported;
    e->trap_reported = false;
    f->first_qualified = (!p->qualified && c->qualified) || e->force_sync;
    /* ctype 2 (precise) is treated as a privilege change, 3 (asynchronous discontinuity)
     * as a trap: both need a sync on the new context (ingressPort "ctype"). */
    bool cchg = c->context != p->context;
    f->ppccd = c->priv != p->priv || (cchg && (c->ctype == 2 || c->ctype == 3 || f->prev_updiscon));
    bool nchg = n->context != c->context;
    f->ppccd_br = (e->map.count != 0 &&
                   (n->priv != c->priv || (nchg && (n->ctype == 2 || f->curr_updiscon)))) ||
                  (nchg && n->ctype == 3 && n->qualified);
    f->er_n = (c->retired && is_exc(c)) || f->notify;
    f->cci = cchg && c->ctype == 1;
    f->resync_br = tk_te_resync_at_max(&e->resync) && e->map.count != 0;
    /* a full map, unless all its branches went as predicted (they are counted on), or a
     * failed prediction after 31 correct ones (exampleAlgorithm.adoc rpt_br) */
    f->rpt_br = (tk_te_branch_map_full(&e->map) && !(e->counting && e->pbc >= TK_TE_BCOUNT_MIN)) ||
                e->count_failed;
    f->resync_exceeded = tk_te_resync_exceeded(&e->resync);
}

/* The common cycle in which no decision of the chart can fire: the instruction and its
 * neighbours are plain, in the same privilege and context, the resync timer is below its
 * maximum and the branch map has room. Only the branch map changes. */
static bool quiet_cycle(const tk_te_encoder *e)
{
    const te_step *p = e->prev, *c = e->curr, *n = e->next;
    return !(p->exc | p->updiscon | c->exc | c->notify | n->exc | e->force_sync) & p->qualified &
           n->qualified & (c->priv == p->priv) & (n->priv == c->priv) & (c->context == p->context) &
           (n->context == c->context) & (e->resync.count < e->resync.max) &
           !tk_te_branch_map_full(&e->map);
}

/* A return in the current cycle: implicit if the state predicts its target (the next
 * instruction); otherwise an uninferable discontinuity, reported with irreport. */
static void ir_return(tk_te_encoder *e)
{
    te_step *c = e->curr;
    const te_step *n = e->next;
    if (!c->retired || (c->itype != TK_ITYPE_RETURN && c->itype != TK_ITYPE_SWAP))
        return;
    c->ir_depth = e->irs.depth;
    bool hit = tk_te_irstack_predicts(&e->irs, n->addr) && n->qualified && n->addr_known;
    tk_te_irstack_pop(&e->irs); /* a mispredicted return uses up its entry too */
    if (c->itype == TK_ITYPE_RETURN) {
        c->ir_implicit = hit;
        c->updiscon = c->updiscon && !hit; /* (a sijump return stays inferable) */
    }
}

/* Calls (and the call half of a co-routine swap) push the address after them. */
static void ir_call(tk_te_encoder *e)
{
    const te_step *c = e->curr;
    if (!c->retired)
        return;
    if (c->itype == TK_ITYPE_UNINF_CALL || c->itype == TK_ITYPE_INF_CALL ||
        c->itype == TK_ITYPE_SWAP) {
        tk_te_irstack_push(&e->irs, c->addr + c->size);
    }
}

static tk_status encode_chain(tk_te_encoder *e, enum te_reason *why);

/* Branch prediction (exampleAlgorithm.adoc "Format selection"): while every branch since the
 * last packet went as predicted they are counted (and still mapped, so that a map can be sent
 * while fewer than 31 are); a failure ends the counting, except after 31 or more, when a
 * branch count reports the failing branch. Returns true if the branch is not to be mapped. */
static bool branch_predicted(tk_te_encoder *e, const te_step *c)
{
    const bool taken = c->itype == TK_ITYPE_TAKEN;
    const bool ok = tk_te_bpred_predict(&e->bp, c->addr) == taken;
    if (e->counting && ok) {
        e->pbc++;
        return tk_te_branch_map_full(&e->map); /* beyond 31: only counted */
    }
    if (e->counting && e->pbc >= TK_TE_BCOUNT_MIN) {
        e->count_failed = true; /* implied by the branch count packet */
        return true;
    }
    e->counting = false;
    return false;
}

/* The current instruction's own effects on the shared state machines, after the packets of
 * its cycle (a sync among them has reset them, as the decoder's will be reset before it
 * executes this instruction). */
static void after_decisions(tk_te_encoder *e, bool is_branch)
{
    if (is_branch && e->bp_on)
        tk_te_bpred_update(&e->bp, e->curr->addr, e->curr->itype == TK_ITYPE_TAKEN);
    if (e->ir_on)
        ir_call(e);
}

/* One cycle for the current instruction; *why tells which packet went out. */
static tk_status encode(tk_te_encoder *e, enum te_reason *why)
{
    te_step *c = e->curr;
    *why = R_NONE;
    if (!c->qualified || !c->addr_known)
        return TK_OK;
    const bool is_branch = c->itype == TK_ITYPE_NOT_TAKEN || c->itype == TK_ITYPE_TAKEN;
    if (is_branch) {
        if (!e->bp_on || !branch_predicted(e, c))
            tk_te_branch_map_add(&e->map, c->itype == TK_ITYPE_TAKEN);
        if (e->ir_on)
            tk_te_irstack_note_branch(&e->irs);
    }
    if (e->ir_on)
        ir_return(e);
    if (quiet_cycle(e) && !e->count_failed) {
        after_decisions(e, is_branch);
        e->flags_valid = false;
        return TK_OK;
    }
    init_flags(e);
    e->flags_valid = true;
    if (e->ir_on) {
        const te_step *n = e->next;
        e->ir_before_sync = n->exc || n->priv != c->priv ||
                            (n->context != c->context && n->ctype >= 2) ||
                            tk_te_resync_at_max(&e->resync) || !n->qualified;
    }
    tk_status st = encode_chain(e, why);
    after_decisions(e, is_branch);
    return st;
}

/* The decisions of the chart, in order, once the flags are known. */
static tk_status encode_chain(tk_te_encoder *e, enum te_reason *why)
{
    te_step *c = e->curr;
    te_flags *f = &e->flags;
    if (f->prev_exception) {
        *why = R_SYNC;
        e->force_sync = false;
        if (f->curr_exc_only) { /* a second trap before the handler retired */
            if (e->p.spec != TK_TE_SPEC_2_0)
                return TK_OK; /* no EPC-only trap packet before 2.0: the next one reports */
            return send_trap(e, c, e->prev, false);
        }
        if (f->prev_reported) /* trap already reported with thaddr 0 */
            return send_start(e, c);
        return send_trap(e, c, e->prev, true);
    }
    if (f->first_qualified || f->ppccd || f->resync_exceeded) {
        *why = R_SYNC;
        e->force_sync = false;
        return send_start(e, c);
    }
    if (f->prev_updiscon) {
        *why = R_UPDISCON;
        if (f->curr_exc_only) { /* trap at the target of an updiscon: EPC with thaddr 0 */
            if (e->p.spec != TK_TE_SPEC_2_0)
                return TK_OK; /* the drafts report only the handler */
            return send_trap(e, c, c, false);
        }
        return send_branch(e, c, true);
    }
    /* the last traced instruction is reported too (chart: "next unqualified") */
    if (f->resync_br || f->er_n || f->next_exc_only || f->ppccd_br || !e->next->qualified ||
        (e->counting && e->pbc >= TK_TE_BCOUNT_MAX)) {
        *why = R_OTHER;
        return send_branch(e, c, true);
    }
    tk_status st = TK_OK;
    if (f->rpt_br) {
        *why = R_OTHER;
        st = send_branch(e, c, false);
    }
    if (st == TK_OK && f->cci)
        st = send_context(e, c);
    return st;
}

/* Qualification ends after the current instruction: report it if no packet did (in the
 * reference-quirks mode encode() does not look at the next instruction's qualification), then
 * a support packet (payload "qual_status"). */
static tk_status end_qualification(tk_te_encoder *e, enum te_reason why, bool enable)
{
    tk_status st = TK_OK;
    if (why == R_NONE && e->have_last_addr) {
        why = R_OTHER;
        st = send_branch(e, e->curr, true);
    }
    if (st == TK_OK)
        st = send_support(e, enable, why == R_UPDISCON ? TK_QUAL_ENDED_NTR : TK_QUAL_ENDED_REP);
    return st;
}

static tk_status start(tk_te_encoder *e)
{
    if (e->started)
        return TK_OK;
    e->started = true;
    /* 2.0: a support packet precedes the first sync */
    return send_support(e, true, TK_QUAL_NO_CHANGE);
}

/* Advance the pipe: the oldest slot becomes the new next. */
static void rotate(tk_te_encoder *e)
{
    te_step *oldest = e->prev;
    e->prev = e->curr;
    e->curr = e->next;
    e->next = oldest;
}

static tk_status push_step(tk_te_encoder *e, const te_step *s)
{
    rotate(e);
    *e->next = *s;
    classify_step(e, e->next);
    if (e->lost_pending) {
        e->lost_pending = false;
        e->force_sync = true;
        tk_status st = send_support(e, true, TK_QUAL_TRACE_LOST);
        if (st != TK_OK)
            return st;
    }
    enum te_reason why;
    tk_status st = encode(e, &why);
    if (st == TK_OK && e->curr->qualified && e->curr->addr_known && !e->next->qualified)
        st = end_qualification(e, why, true);
    return st;
}

static tk_status check_block(const tk_te_block *b)
{
    if (b->itype > 15 || b->ilastsize > 3)
        return TK_ERR_INVALID;
    if (b->iretire != 0 && b->iretire < (1u << b->ilastsize))
        return TK_ERR_INVALID;
    return TK_OK;
}

static tk_status push_block(tk_te_encoder *e, const tk_te_block *b)
{
    tk_status st = check_block(b);
    if (st != TK_OK)
        return st;
    bool traced = !b->halted && !b->reset && (e->trace_on || (b->trigger & TK_TRIGGER_ON));
    if (!b->halted && !b->reset) {
        if (b->trigger & TK_TRIGGER_ON)
            e->trace_on = true;
        if (b->trigger & TK_TRIGGER_OFF)
            e->trace_on = false;
    }
    te_step s;
    memset(&s, 0, sizeof(s));
    if (!traced) {
        /* keep the fields of the last step so nothing but qualification changes */
        s = *e->next;
        s.itype = TK_ITYPE_NONE;
        s.retired = false;
        s.notify = false;
        s.qualified = false;
        return push_step(e, &s);
    }
    if (b->iretire == 0 && b->itype != TK_ITYPE_EXCEPTION && b->itype != TK_ITYPE_INTERRUPT &&
        !e->o.reference_quirks)
        return TK_OK; /* nothing retired, nothing trapped: an empty cycle */
    s.tval = b->tval;
    s.context = b->context;
    s.time = b->time;
    s.cause = b->cause;
    s.priv = b->priv;
    s.ctype = b->ctype;
    s.qualified = true;
    s.addr_known = true;
    uint32_t last_hw = 1u << b->ilastsize;
    if (b->iretire > last_hw) {
        /* first instruction, then the ones between (collapsed into one unknown step) */
        s.addr = b->iaddr;
        s.retired = true;
        s.itype = TK_ITYPE_NONE;
        if ((st = push_step(e, &s)) != TK_OK)
            return st;
        s.addr_known = false;
        if ((st = push_step(e, &s)) != TK_OK)
            return st;
        s.addr_known = true;
    }
    s.addr = b->iretire ? tk_te_block_last_addr(b) : b->iaddr;
    s.size = (uint8_t)(2u << b->ilastsize);
    s.retired = b->iretire != 0;
    s.itype = b->itype;
    s.sijump = b->sijump;
    s.notify = (b->trigger & TK_TRIGGER_NOTIFY) != 0;
    return push_step(e, &s);
}

/* After a step of the general path: can the next cycles take the fast paths? The next push
 * makes curr the previous instruction and next the current one. For a cycle of the chart to
 * be quiet (quiet_cycle()), the previous instruction must be traced, neither a trap nor an
 * uninferable discontinuity, the current one traced, no trap and no notification, both in
 * one privilege and context, and the resync timer below its maximum (at it, a cycle with an
 * empty map is quiet too: init_flags() finds nothing to send); with tracing on, the fast
 * paths need only check the new block, whether the branch map has room for the current
 * instruction and, at the resync maximum, whether the map stays empty. A current
 * instruction inside a multi-instruction block (addr_known false) has no cycle of its own
 * and is quiet under the same conditions. The fast paths also send the packets of such runs
 * (the target of an uninferable discontinuity; run_fast() also resync and full maps), so
 * they may start when the previous instruction is an uninferable discontinuity too
 * (runnable). */
static void update_steady(tk_te_encoder *e)
{
    const te_step *c = e->curr, *n = e->next;
    e->runnable = !e->o.general_path_only & e->modes_off & !e->lost_pending & !e->force_sync &
                  !e->finished & e->started & e->trace_on & (e->resync.count <= e->resync.max) &
                  c->qualified & !c->exc & n->qualified & !n->exc & !n->notify &
                  (c->priv == n->priv) & (c->context == n->context);
    e->fast_want = bytes_word(0, n->priv, 0, 0, 0);
}

/* Write one traced, plain instruction of block b into the pipe (rotating it). */
static inline void store_step(tk_te_encoder *e, const tk_te_block *b, uint64_t addr, uint8_t itype,
                              uint8_t size, bool addr_known, bool sijump, bool updiscon)
{
    rotate(e);
    te_step *s = e->next;
    s->addr = addr;
    s->context = b->context;
    s->time = b->time;
    s->ir_depth = 0;
    s->itype = itype;
    s->priv = b->priv;
    s->ctype = b->ctype;
    s->size = size;
    s->sijump = sijump;
    s->updiscon = updiscon;
    s->addr_known = addr_known;
    s->retired = true;
    s->qualified = true;
    s->notify = false;
    s->ir_implicit = false;
    s->exc = false;
}

/* The steps of block b as push_block() makes them (b is plain: see run_fast()). */
static void store_block(tk_te_encoder *e, const tk_te_block *b)
{
    const unsigned cls = e->itype_class[b->itype];
    const bool updiscon = (cls & IT_UPDISCON) && !(b->sijump && e->sijump_on);
    const uint8_t size = (uint8_t)(2u << b->ilastsize);
    if (b->iretire != 1u << b->ilastsize) {
        store_step(e, b, b->iaddr, TK_ITYPE_NONE, 0, true, false, false);
        store_step(e, b, b->iaddr, TK_ITYPE_NONE, 0, false, false, false);
        store_step(e, b, tk_te_block_last_addr(b), b->itype, size, true, b->sijump, updiscon);
    } else {
        store_step(e, b, b->iaddr, b->itype, size, true, b->sijump, updiscon);
    }
}

/* The packet of the cycle after an uninferable discontinuity, for run_fast(): the cycle of
 * its target at addr (a traced instruction whose successor is plain, in the same privilege
 * and context) reports that address with the branches up to and including its own
 * (exampleAlgorithm "prev_updiscon"); updiscon is set when the resync timer is at its maximum
 * (a format 3 comes next). Also the address of resync_br (at_max false: the flag is set only
 * after an updiscon). What encode() and send_branch() do for those cycles. */
static TK_NOINLINE tk_status report_target(tk_te_encoder *e, uint64_t addr, uint32_t bits,
                                           unsigned count, bool at_max)
{
    /* send_branch() for this cycle, shorter: run_fast() runs only with none of the optional
     * modes (modes_off), so no branch count, irreport or jump target cache */
    tk_te_packet pkt;
    tk_te_packet_clear(&pkt);
    pkt.format = count ? TK_TE_F1 : TK_TE_F2;
    pkt.branches = (uint8_t)count;
    pkt.branch_map = bits;
    put_address(e, &pkt, addr, false, at_max, false);
    e->trap_reported = false;
    e->flags.notify = false;
    e->flags.updiscon = at_max;
    e->flags_valid = true;
    return send(e, &pkt);
}

/* The full map of a quiet stretch (rpt_br: F1 without address), for run_fast(). */
static TK_NOINLINE tk_status report_full(tk_te_encoder *e, uint32_t bits)
{
    const te_step s = {.addr = 0};
    e->map.bits = bits;
    e->map.count = TK_TE_MAX_BRANCHES;
    e->trap_reported = false;
    e->flags_valid = false;
    return send_branch(e, &s, false);
}

/* run_fast()'s state of the newest step: an updiscon, the target of one (its cycle sends
 * the packet). */
enum { X_UPD = 1, X_TARGET = 2 };

/* run_plain()'s quick test of one block (inlined four times in its loop). PL_QUIET: a block
 * without trap, updiscon or anything else that the cycle before it and its own first cycles
 * could report, after a newest step that is neither an updiscon nor its target (ct:
 * plain[0]); its branch is added to the map (*m, *c). PL_FULL: the same, and the map now has
 * limit entries. PL_STOP: a block run_plain() does not take (another privilege or context,
 * a trigger, halted or reset, iretire too small). PL_SLOW: the loop body decides (IT_SLOW).
 * Nothing is changed unless PL_QUIET or PL_FULL. */
enum { PL_QUIET, PL_FULL, PL_STOP, PL_SLOW };

static TK_ALWAYS_INLINE unsigned plain_step(const tk_te_block *b, const uint64_t *ct, uint64_t mask,
                                            uint64_t want, uint64_t context, unsigned limit,
                                            uint32_t *m, unsigned *c)
{
    if ((block_bytes(b) & mask) != want || b->context != context)
        return PL_STOP;
    /* itype | ilastsize << 8, with ilastsize <= 3 (checked by the mask) */
    const uint64_t t = ct[b->itype | (unsigned)b->ilastsize << 8];
    /* fewer instructions than the last one's size implies (t: 0 for a trap, IT_SLOW) */
    if ((uint32_t)t != b->iretire && b->iretire < (uint32_t)t)
        return PL_STOP;
    if (t & (uint64_t)(IT_BRANCH | IT_SLOW) << 32) {
        if (t & (uint64_t)IT_SLOW << 32)
            return PL_SLOW;
        *m |= (uint32_t)((t >> 32) / IT_NOT_TAKEN & 1u) << *c;
        if (++*c >= limit)
            return PL_FULL;
    }
    return PL_QUIET;
}

/* What updiscon_triple() did: nothing (TRIPLE_NONE), or it took the three blocks: the
 * newest step's X_* bits (X_UPD or 0), with TRIPLE_STOP if run_plain() must stop. */
enum { TRIPLE_STOP = 4, TRIPLE_NONE = 8 };

/* run_plain()'s slow loop for its most common case, without its per-block state: u, one
 * instruction that passed plain_step() (PL_SLOW, after a plain newest step), is an updiscon;
 * its target t (u + 1) is one plain instruction that is not one, with room in the map for
 * its branch; n (u + 2) is one plain instruction. The cycle of t then sends t's address
 * with the map up to and including t's branch (report_target(); updiscon at the resync
 * maximum), and n's branch starts the new map. Anything else: TRIPLE_NONE, nothing changed, and the
 * loop decides. (ct0: run_plain()'s table for a plain newest step; u + 2 must be in the run.) */
static TK_ALWAYS_INLINE int updiscon_triple(tk_te_encoder *e, const tk_te_block *u,
                                            const uint64_t *ct0, uint64_t mask, uint64_t want,
                                            uint64_t context, unsigned limit, bool sijump_on,
                                            uint32_t *m, unsigned *c, tk_status *st)
{
    const tk_te_block *t = u + 1, *n = u + 2;
    /* u of one instruction too: on grouped ingress, where the jump is most often the last of
     * several and its target a block of several, this path gives up at its first test */
    const uint64_t tu = ct0[u->itype | (unsigned)u->ilastsize << 8];
    const unsigned ucls = (unsigned)(tu >> 32);
    if ((uint32_t)tu != u->iretire || (ucls & (IT_FAST | IT_UPDISCON)) != (IT_FAST | IT_UPDISCON) ||
        (u->sijump && sijump_on))
        return TRIPLE_NONE;
    /* One instruction each (a trap's entry has iretire 0); t neither an updiscon nor a trap
     * (IT_SLOW), n no trap. The mask first: it bounds ilastsize, and so the table index. */
    if ((block_bytes(t) & mask) != want || t->context != context)
        return TRIPLE_NONE;
    const uint64_t tt = ct0[t->itype | (unsigned)t->ilastsize << 8];
    const unsigned tcls = (unsigned)(tt >> 32);
    if ((uint32_t)tt != t->iretire || (tcls & IT_SLOW) || (block_bytes(n) & mask) != want ||
        n->context != context)
        return TRIPLE_NONE;
    const uint64_t tn = ct0[n->itype | (unsigned)n->ilastsize << 8];
    const unsigned ncls = (unsigned)(tn >> 32);
    if ((uint32_t)tn != n->iretire || !(ncls & IT_FAST))
        return TRIPLE_NONE;
    const unsigned tbr = (tcls / IT_BRANCH) & 1u;
    if (*c + tbr >= limit)
        return TRIPLE_NONE;
    const uint32_t bits = *m | ((tcls / IT_NOT_TAKEN) & 1u) << *c;
    const bool at_max = e->resync.count == e->resync.max;
    *st = report_target(e, tk_te_block_last_addr(t), bits, *c + tbr, at_max);
    *m = (ncls / IT_NOT_TAKEN) & 1u;
    *c = (ncls / IT_BRANCH) & 1u;
    const int x = (ncls & IT_UPDISCON) && !(n->sijump && sijump_on) ? X_UPD : 0;
    return *st != TK_OK || e->resync.count >= e->resync.max || *c >= limit ? x | TRIPLE_STOP : x;
}

/* The innermost loop of run_fast(), while the resync timer is at most its maximum: blocks
 * without trap (same privilege and context, no trigger, halted or reset; about 13
 * instructions for a block that leaves the branch map as it is), each completing the cycle
 * of the step before it: quiet, or the packet of an updiscon's target. *bits and *count hold
 * the branch map including the newest step's branch, *state the newest step's X_* bits
 * (x_addr: its address). The loop stops after a block whose predecessor's cycle would find
 * limit branches in the map (31: full; 1 at the resync maximum, where a cycle is quiet only
 * with an empty map, else resync_br), or after a packet brings the timer to its maximum or
 * past it. Returns the number of blocks taken (*st: the callback's error, the block whose
 * cycle failed taken). */
static TK_NOINLINE size_t run_plain(tk_te_encoder *e, const tk_te_block *b, size_t n, uint64_t want,
                                    uint64_t context, uint64_t x_addr, unsigned limit,
                                    uint32_t *bits, unsigned *count, unsigned *state, tk_status *st)
{
    const uint64_t mask = e->fast_mask;
    uint32_t m = *bits;
    unsigned c = *count, x = *state;
    /* (both tables and the sijump option in registers: the updiscon's blocks switch) */
    const uint64_t *const ct0 = e->plain[0], *const ct1 = e->plain[1];
    const uint64_t *ct = x != 0 ? ct1 : ct0;
    const bool sijump_on = e->sijump_on;
    const tk_te_block *const first = b, *const end = b + n;
    /* four blocks remain while b < end4 (one compare, not a subtraction and a compare) */
    const tk_te_block *const end4 = n >= 4 ? end - 3 : first;
    if (c >= limit)
        return 0;
    for (;;) {
        /* four blocks at a time (one test of the end) while they are quiet */
        unsigned r = PL_QUIET;
        while (b < end4) {
            /* One row per instruction streams 48 bytes per instruction from memory, more
             * than the hardware prefetcher kept up with (dhrystone's 9.7 MB of rows: 172 ->
             * 205 M instr/s, median of 25 runs; a run that fits the cache runs at 210-400):
             * the three cache lines of the four blocks 2 KB ahead. (An integer address: no
             * pointer past the array is formed; a prefetch never faults.) */
            TK_PREFETCH((uintptr_t)b + 2048);
            TK_PREFETCH((uintptr_t)b + 2048 + 64);
            TK_PREFETCH((uintptr_t)b + 2048 + 128);
            if ((r = plain_step(b, ct, mask, want, context, limit, &m, &c)) != PL_QUIET)
                break;
            if ((r = plain_step(b + 1, ct, mask, want, context, limit, &m, &c)) != PL_QUIET) {
                b += 1;
                break;
            }
            if ((r = plain_step(b + 2, ct, mask, want, context, limit, &m, &c)) != PL_QUIET) {
                b += 2;
                break;
            }
            if ((r = plain_step(b + 3, ct, mask, want, context, limit, &m, &c)) != PL_QUIET) {
                b += 3;
                break;
            }
            b += 4;
        }
        if (r == PL_QUIET) { /* fewer than four left */
            if (b == end)
                break;
            r = plain_step(b, ct, mask, want, context, limit, &m, &c);
            if (r == PL_QUIET) {
                b++;
                continue;
            }
        }
        if (r == PL_FULL) {
            b++;
            break;
        }
        if (r == PL_STOP)
            break;
        if (x == 0 && end - b >= 3) {
            /* The common updiscon (one per packet on a program's trace) in one go: b, its
             * target and the block whose cycle sends the target's address, as the loop below
             * would take them one at a time (about 32 instructions fewer per updiscon on
             * dhrystone's rows: run_plain() 19.9 -> 18.7 per instruction). */
            const int u =
                updiscon_triple(e, b, ct0, mask, want, context, limit, sijump_on, &m, &c, st);
            if (u != TRIPLE_NONE) {
                b += 3;
                x = (unsigned)u & X_UPD;
                if (u & TRIPLE_STOP)
                    goto done;
                if (x == 0)
                    continue;
                /* the third block is an updiscon: the loop below takes its successors */
                ct = ct1;
                if (b == end || (block_bytes(b) & mask) != want || b->context != context)
                    goto done;
            }
        }
        /* IT_SLOW: an updiscon, a trap, or (x) the blocks after an updiscon, taken here one at
         * a time until x is clear (the updiscon, its target, the block that sends the
         * target's address) */
        for (;;) {
            const uint64_t t = ct[b->itype | (unsigned)b->ilastsize << 8];
            /* A block of several instructions (a wide core's grouped ingress) is one cycle
             * like a block of one, unless it follows an updiscon: its first instruction is
             * then the target, whose packet run_fast() sends. */
            if ((uint32_t)t != b->iretire && x != 0)
                goto done;
            const unsigned cls = (unsigned)(t >> 32);
            if (!(cls & IT_FAST))
                goto done;
            bool stop = false;
            if (x & X_TARGET) {
                /* at the maximum, updiscon: a format 3 follows */
                const bool at_max = e->resync.count == e->resync.max;
                *st = report_target(e, b > first ? tk_te_block_last_addr(b - 1) : x_addr, m, c,
                                    at_max);
                m = 0;
                c = 0;
                stop = *st != TK_OK || e->resync.count >= e->resync.max;
            }
            if (cls & IT_BRANCH)
                m |= (uint32_t)((cls / IT_NOT_TAKEN) & 1u) << c++;
            x = (x & X_UPD ? X_TARGET : 0) |
                ((cls & IT_UPDISCON) && !(b->sijump && sijump_on) ? X_UPD : 0);
            ct = x != 0 ? ct1 : ct0;
            b++;
            if (stop || c >= limit)
                goto done;
            if (x == 0)
                break;
            /* the next block: what plain_step() checks first (the rest is above) */
            if (b == end || (block_bytes(b) & mask) != want || b->context != context)
                goto done;
        }
    }
done:
    *bits = m;
    *count = c;
    *state = x;
    return (size_t)(b - first);
}

/* A run of cycles of one block each while the pipe is runnable, without writing the pipe for
 * every block: the loop keeps what the cycles need (the map of the branches up to and
 * including the newest block's, whether the newest block is an updiscon or the target of
 * one, the resync timer) and writes the last blocks' steps at the end (the pipe holds three
 * steps, a block makes at least one). Each block taken completes the cycle of the newest
 * step before it, as push_block() would: a quiet cycle (quiet_cycle(); at the resync
 * maximum only while the map is empty: no branch to flush), or the cycle of an updiscon's
 * target, which sends its address (report_target()). run_plain() takes the common blocks;
 * the rest (blocks of several instructions, the resync timer at its maximum) goes through
 * the checks here. Returns the number of blocks taken (*st: the callback's error, if any;
 * the block whose cycle failed is taken, as on the general path); the block after them
 * needs the general path. */
static size_t run_fast(tk_te_encoder *e, const tk_te_block *blocks, size_t n, tk_status *st)
{
    *st = TK_OK;
    if (!e->runnable || n == 0)
        return 0;
    const te_step *x = e->next; /* the newest step: the last of a block, address known */
    const uint64_t context = x->context;
    /* one compare for: ilastsize <= 3, the privilege unchanged, no trigger, halted, reset */
    const uint64_t mask = e->fast_mask, want = e->fast_want;
    const uint64_t rmax = e->resync.max;
    /* the map including the newest step's branch (taken out again at the end) */
    const unsigned x_cls = e->itype_class[x->itype];
    uint32_t bits = e->map.bits | ((x_cls / IT_NOT_TAKEN) & 1u) << e->map.count;
    unsigned count = e->map.count + ((x_cls / IT_BRANCH) & 1u);
    unsigned state = (x->updiscon ? X_UPD : 0) | (e->curr->updiscon ? X_TARGET : 0);
    size_t i = 0;
    while (i < n) {
        if (e->resync.count <= rmax) {
            const uint64_t x_addr = i ? tk_te_block_last_addr(&blocks[i - 1]) : x->addr;
            const unsigned limit = e->resync.count < rmax ? TK_TE_MAX_BRANCHES : 1;
            i += run_plain(e, blocks + i, n - i, want, context, x_addr, limit, &bits, &count,
                           &state, st);
            if (i == n || *st != TK_OK)
                break;
        }
        /* the general checks: a block of several instructions, the resync timer at its
         * maximum, a full map */
        const uint64_t rc = e->resync.count;
        const tk_te_block *b = &blocks[i];
        if ((block_bytes(b) & mask) != want || b->context != context)
            break;
        const unsigned t = e->itype_class[b->itype];
        if (!(t & IT_FAST))
            break;
        const uint32_t last_hw = 1u << (b->ilastsize & 3u);
        if (b->iretire < last_hw)
            break;
        const bool multi = b->iretire != last_hw;
        /* a block of several instructions after an updiscon: its first one is the target */
        const bool first_target = multi && (state & X_UPD);
        /* the cycle of the newest step, in the order of encode_chain(): a start packet past
         * the resync maximum (resync_exceeded), the address of an updiscon's target or of
         * the last branch at the maximum (resync_br), a full map (rpt_br), or quiet */
        enum { P_NONE, P_START, P_ADDR, P_FULL } pk = P_NONE;
        if (rc > rmax)
            pk = P_START;
        else if ((state & X_TARGET) || (rc == rmax && count != 0))
            pk = P_ADDR;
        else if (count >= TK_TE_MAX_BRANCHES)
            pk = P_FULL;
        if (pk == P_START && i == 0) /* (not at the start: the timer was at most the max) */
            break;
        const unsigned count_after = pk == P_NONE ? count : 0;
        const uint64_t rc_after = pk == P_NONE ? rc : pk == P_START ? 0 : rc + 1;
        /* the first instruction's cycle of several (itype 0): the target's packet (unless a
         * start packet is due), or quiet on the terms above */
        if (first_target ? rc_after > rmax
                         : multi && (rc_after > rmax || (rc_after == rmax && count_after != 0)))
            break;
        if (pk != P_NONE) {
            const tk_te_block *xb = i ? b - 1 : NULL; /* else the newest step is x */
            if (pk == P_START) {
                te_step s = {.addr = tk_te_block_last_addr(xb),
                             .itype = xb->itype,
                             .priv = xb->priv,
                             .time = xb->time,
                             .context = xb->context};
                *st = send_start(e, &s);
            } else if (pk == P_ADDR) {
                /* updiscon: a target's packet at the maximum (a format 3 follows) */
                *st = report_target(e, xb ? tk_te_block_last_addr(xb) : x->addr, bits, count,
                                    (state & X_TARGET) && rc == rmax);
            } else {
                *st = report_full(e, bits);
            }
            bits = 0;
            count = 0;
        }
        if (first_target && *st == TK_OK) {
            /* (the instructions between have no cycle; the last one's comes with the next
             * block: a start packet then if this one brings the timer past the maximum) */
            *st = report_target(e, b->iaddr, bits, count, rc_after == rmax);
            bits = 0;
            count = 0;
        }
        bits |= ((t / IT_NOT_TAKEN) & 1u) << count;
        count += (t / IT_BRANCH) & 1u;
        if (*st != TK_OK) { /* b is taken (the general path stops inside it) */
            i++;
            break;
        }
        /* (after a block of several, the last step follows an itype 0: no target) */
        state = ((state & X_UPD) && !multi ? X_TARGET : 0) |
                ((t & IT_UPDISCON) && !(b->sijump && e->sijump_on) ? X_UPD : 0);
        i++;
    }
    if (i == 0)
        return 0;
    /* the newest step's branch is not in the pipe's map yet */
    const unsigned last_cls = e->itype_class[blocks[i - 1].itype];
    count -= (last_cls / IT_BRANCH) & 1u;
    e->map.bits = bits & ~((uint32_t)((last_cls / IT_BRANCH) & 1u) << count);
    e->map.count = (uint8_t)count;
    e->flags_valid = false;
    /* the pipe holds three steps: from the newest blocks back to three steps (a block of
     * several instructions makes three) */
    size_t k = i;
    for (unsigned steps = 0; k > 0 && steps < 3; k--)
        steps += blocks[k - 1].iretire != 1u << blocks[k - 1].ilastsize ? 3 : 1;
    for (; k < i; k++)
        store_block(e, &blocks[k]);
    update_steady(e);
    return i;
}

/* The branch of an instruction of class cls (IT_* bits), if it is one, into the map. */
static inline void map_add_class(tk_te_branch_map *m, unsigned cls)
{
    const unsigned c = m->count;
    m->bits |= ((cls / IT_NOT_TAKEN) & 1u) << c;
    m->count = (uint8_t)(c + ((cls / IT_BRANCH) & 1u));
}

/* Start deferring the pipe (see tk_te_encoder.lazy): only while run_fast() could run. */
static bool lazy_begin(tk_te_encoder *e)
{
    if (!e->runnable)
        return false;
    const te_step *x = e->next;
    map_add_class(&e->map, e->itype_class[x->itype]);
    e->lz_x = (uint8_t)((x->updiscon ? X_UPD : 0) | (e->curr->updiscon ? X_TARGET : 0));
    e->lz_context = x->context;
    e->lz_limit = e->resync.count < e->resync.max ? TK_TE_MAX_BRANCHES : 1;
    e->lz_n = 0;
    e->lazy = true;
    return true;
}

/* Write the deferred blocks' steps into the pipe and the map back to the pipe's (without the
 * newest step's branch): the pipe is then what push_block() would have made. */
static void settle(tk_te_encoder *e)
{
    if (!e->lazy)
        return;
    e->lazy = false;
    const size_t n = e->lz_n;
    const uint8_t newest = n ? e->lz_ring[(n - 1) & 3].itype : e->next->itype;
    const unsigned br = (e->itype_class[newest] / IT_BRANCH) & 1u;
    e->map.count = (uint8_t)(e->map.count - br);
    e->map.bits &= ~((uint32_t)br << e->map.count);
    if (n == 0)
        return;
    e->flags_valid = false;
    size_t k = n; /* back to three steps (at most three blocks: the ring holds four) */
    for (unsigned steps = 0; k > 0 && steps < 3; k--) {
        const tk_te_block *b = &e->lz_ring[(k - 1) & 3];
        steps += b->iretire != 1u << b->ilastsize ? 3 : 1;
    }
    for (; k < n; k++)
        store_block(e, &e->lz_ring[k & 3]);
    update_steady(e); /* (a packet may have brought the resync timer past its maximum) */
}

/* The checks of a block on the fast path (push_lazy(), push_lazy_packet()): no trap,
 * trigger, privilege or context change, and one instruction, or several after a step that
 * is neither an updiscon nor its target (the first one's cycle is then quiet), or whatever
 * the step if any_x. Returns the block's IT_* bits (IT_FAST set), or 0 if the general path
 * must take it. */
static inline unsigned lazy_class(const tk_te_encoder *e, const tk_te_block *b, bool any_x)
{
    if ((block_bytes(b) & e->fast_mask) != e->fast_want || b->context != e->lz_context)
        return 0;
    /* itype | ilastsize << 8 (ilastsize <= 3: the mask): in the low half the iretire of a
     * block of one instruction */
    const uint64_t t = e->plain[0][b->itype | (unsigned)b->ilastsize << 8];
    const unsigned cls = (unsigned)(t >> 32);
    if (!(cls & IT_FAST) ||
        ((uint32_t)t != b->iretire && (b->iretire < (uint32_t)t || (!any_x && e->lz_x != 0))))
        return 0;
    return cls;
}

/* Take block b on the fast path: its branch goes into the map, the block into the ring. */
static inline void lazy_take(tk_te_encoder *e, const tk_te_block *b, unsigned cls)
{
    map_add_class(&e->map, cls);
    memcpy(&e->lz_ring[e->lz_n++ & 3], b, sizeof(*b));
    /* 2.0 sijump: a jump made inferable by the instruction before it, if enabled */
    const bool upd = (cls & IT_UPDISCON) && !(b->sijump && e->sijump_on);
    e->lz_x = (uint8_t)((e->lz_x & X_UPD ? X_TARGET : 0) | (upd ? X_UPD : 0));
}

/* The common case, in a handful of operations: a block that completes a quiet cycle while
 * run_fast() could run. Only the branch map changes, and the block is kept for settle().
 * Returns false (nothing done) when the general path must run. */
static inline bool push_lazy(tk_te_encoder *e, const tk_te_block *b)
{
    /* (lazy implies runnable: whatever clears runnable settles first) */
    if (!e->lazy && !lazy_begin(e))
        return false;
    const unsigned cls = lazy_class(e, b, false);
    /* The newest step's cycle sends a packet (push_lazy_packet()) after an updiscon (its
     * target's), with a full map (rpt_br), and at the resync maximum unless the map is empty
     * (resync_br). */
    if (!cls || (e->lz_x & X_TARGET) || e->map.count >= e->lz_limit)
        return false;
    /* lazy_take() for this case, with branches for what most blocks are not (a branch, an
     * updiscon): tk_te_encoder_push() 54.7 -> 48.5 instructions per row on dhrystone */
    if (cls & IT_BRANCH)
        map_add_class(&e->map, cls);
    memcpy(&e->lz_ring[e->lz_n++ & 3], b, sizeof(*b));
    /* (lz_x is 0 or X_UPD here: an updiscon's successor becomes its target) */
    unsigned x = (unsigned)e->lz_x * X_TARGET;
    if (cls & IT_UPDISCON)
        x |= b->sijump && e->sijump_on ? 0 : X_UPD;
    e->lz_x = (uint8_t)x;
    return true;
}

/* A block that completes a cycle with a packet while lazy, in the order of run_fast()'s
 * checks: past the resync maximum a start packet for the newest step; the address of an
 * updiscon's target (the newest step; updiscon at the resync maximum: a format 3 follows),
 * of the newest step at the resync maximum with branches in the map (resync_br), or a full
 * map (rpt_br); or, after an updiscon whose cycle is quiet, a block of several instructions,
 * whose first one is the target (its address, as run_fast()'s first_target). Then b as in
 * push_lazy(). Returns false (nothing done) when the general path must run; true when b is
 * taken (*st: the callback's error, if any). */
static TK_NOINLINE bool push_lazy_packet(tk_te_encoder *e, const tk_te_block *b, tk_status *st)
{
    if (!e->lazy)
        return false;
    const bool start = e->lz_limit == 0; /* past the maximum */
    const bool target = e->lz_x & X_TARGET, at_max = e->resync.count == e->resync.max;
    const bool addr = !start && (target || (at_max && e->map.count != 0));
    const bool full = !start && !addr && e->map.count >= TK_TE_MAX_BRANCHES;
    const bool first = !start && !addr && !full && e->lz_x == X_UPD;
    if (!start && !addr && !full && !first)
        return false; /* (push_lazy() takes it, or the general path) */
    /* A block of several instructions: after a target's address its first instruction's
     * cycle is quiet below the resync maximum (after an updiscon that is also the target of
     * one, and after resync_br, run_fast() decides); after an updiscon, first. One
     * instruction after a quiet updiscon: push_lazy() found something else. */
    const unsigned x = e->lz_x;
    const bool multi_ok = first || (addr ? x == X_TARGET && !at_max : x == 0);
    const unsigned cls = lazy_class(e, b, multi_ok);
    const bool multi = b->iretire != 1u << b->ilastsize;
    if (!cls || (multi && !multi_ok) || (first && !multi))
        return false;
    const tk_te_block *nb = e->lz_n ? &e->lz_ring[(e->lz_n - 1) & 3] : NULL; /* the newest */
    if (start) {
        /* (the timer passed the maximum on a packet of this stretch: nb is set) */
        if (!nb)
            return false;
        /* the start packet's fields of the newest step (as run_fast()) */
        te_step s = {.addr = tk_te_block_last_addr(nb),
                     .itype = nb->itype,
                     .priv = nb->priv,
                     .time = nb->time,
                     .context = nb->context};
        *st = send_start(e, &s);
    } else if (addr) {
        *st = report_target(e, nb ? tk_te_block_last_addr(nb) : e->next->addr, e->map.bits,
                            e->map.count, target && at_max);
    } else if (full) {
        *st = report_full(e, e->map.bits);
    } else {
        *st = report_target(e, b->iaddr, e->map.bits, e->map.count, at_max);
    }
    /* (the packet cleared the map and advanced the timer) */
    e->lz_limit = e->resync.count < e->resync.max    ? TK_TE_MAX_BRANCHES
                  : e->resync.count == e->resync.max ? 1
                                                     : 0;
    lazy_take(e, b, cls);
    if (multi)
        e->lz_x &= X_UPD; /* (b's last instruction follows an itype 0: no target) */
    return true;
}

/* The general path (not inlined: the fast path's caller stays lean, with a tail call). */
static TK_NOINLINE tk_status push_general(tk_te_encoder *e, const tk_te_block *blocks, size_t n)
{
    if (e->finished)
        return TK_ERR_STATE;
    tk_status st = start(e);
    for (size_t i = 0; st == TK_OK && i < n;) {
        if (push_lazy(e, &blocks[i]) || push_lazy_packet(e, &blocks[i], &st)) {
            i++;
            continue;
        }
        settle(e);
        /* the cycle of an uninferable jump's target, the resync timer at its maximum... */
        const size_t k = run_fast(e, blocks + i, n - i, &st);
        if (k) {
            i += k;
            continue;
        }
        if (st == TK_OK)
            st = push_block(e, &blocks[i++]);
        update_steady(e);
    }
    return st;
}

/* A cycle of several blocks (grouped ingress): the fast path's blocks without
 * push_general()'s set-up, which saves many registers (not inlined either: the one-block
 * push stays lean). */
static TK_NOINLINE tk_status push_cycle(tk_te_encoder *e, const tk_te_block *blocks, size_t n)
{
    if (n == 0) /* push_general()'s checks and start packet, as ever */
        return push_general(e, blocks, 0);
    size_t i = 0;
    while (i < n && push_lazy(e, &blocks[i]))
        i++;
    return i == n ? TK_OK : push_general(e, blocks + i, n - i);
}

/* A block tk_te_encoder_push's fast path did not take: most often one that completes a
 * cycle with a packet (push_lazy_packet(), without push_general()'s set-up). */
static TK_NOINLINE tk_status push_one(tk_te_encoder *e, const tk_te_block *b)
{
    tk_status st = TK_OK;
    if (push_lazy_packet(e, b, &st))
        return st;
    return push_general(e, b, 1);
}

tk_status tk_te_encoder_push_run(tk_te_encoder *e, const tk_te_block *blocks, size_t n)
{
    if (e->finished)
        return TK_ERR_STATE;
    settle(e);
    tk_status st = start(e);
    size_t i = 0;
    while (st == TK_OK && i < n) {
        i += run_fast(e, blocks + i, n - i, &st);
        if (st == TK_OK && i < n) {
            st = push_block(e, &blocks[i++]);
            update_steady(e);
        }
    }
    return st;
}

tk_status tk_te_encoder_push(tk_te_encoder *e, const tk_te_block *blocks, size_t n)
{
    if (n == 1 && push_lazy(e, blocks))
        return TK_OK;
    return n == 1 ? push_one(e, blocks) : push_cycle(e, blocks, n);
}

tk_status tk_te_encoder_finish(tk_te_encoder *e)
{
    if (e->finished)
        return TK_ERR_STATE;
    settle(e);
    e->finished = true;
    e->runnable = false;
    tk_status st = start(e);
    if (st != TK_OK)
        return st;
    enum te_reason why;
    if (e->o.reference_quirks) {
        /* encoder_model.py: flush with the last instruction as its own successor, then report
         * it unconditionally and disable. */
        /* the last instruction is also its own successor */
        rotate(e);
        *e->next = *e->curr;
        st = encode(e, &why);
        if (st == TK_OK && e->curr->qualified && e->curr->addr_known && !e->flags_valid)
            init_flags(e); /* the final packet carries this cycle's updiscon and notify */
        if (st == TK_OK && e->curr->qualified && e->have_last_addr)
            st = send_branch(e, e->curr, true);
        if (st == TK_OK)
            st = send_support(e, false, e->curr->qualified ? TK_QUAL_ENDED_REP : 0);
        return st;
    }
    if (!e->next->qualified)
        return send_support(e, false, TK_QUAL_NO_CHANGE);
    te_step end = *e->next;
    end.qualified = false;
    end.itype = TK_ITYPE_NONE;
    end.retired = false;
    classify_step(e, &end);
    rotate(e);
    *e->next = end;
    st = encode(e, &why);
    if (st == TK_OK)
        st = end_qualification(e, why, false);
    return st;
}
