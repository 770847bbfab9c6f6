/* SPDX-License-Identifier: BSD-2-Clause */
/* The state machines of the optional E-Trace modes (branchTrace.adoc "Implicit return mode",
 * "Branch prediction mode", "Jump target cache mode"). Encoder and decoder both run these
 * exact functions on the same events, so their copies cannot drift: every rule that decides
 * what is left out of the trace lives here, once. */
#ifndef TK_ETRACE_MODES_H
#define TK_ETRACE_MODES_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/status.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

/* ---- implicit return (return_stack.c) ------------------------------------------------------
 * One tracker for both implementations of the spec: with return_stack_size_p a stack of
 * 2^return_stack_size_p predicted return addresses (a return is implicit only if its target
 * is the top entry; the encoder checks that), with call_counter_size_p alone a count of
 * nested calls of at most 2^call_counter_size_p - 1 (any return is implicit while the count
 * is non-zero; the encoder does not check the target). The decoder always needs the
 * addresses, so the tracker keeps them in both modes; its capacity is what keeps encoder and
 * decoder counting alike: a call beyond it drops the oldest entry, so the count stays at its
 * maximum ("the counter will not over or underflow") and the newest returns are predicted.
 * Calls push, returns pop (a mispredicted one too: it is reported with irreport and the
 * depth before its pop, payload.adoc "the entry number of the return that failed"),
 * synchronisation packets empty it. A co-routine swap
 * (itype 12) is reported explicitly, pops and then pushes its link like a call. */
typedef struct tk_te_irstack {
    uint64_t *addr;
    uint32_t cap;   /* entries */
    uint32_t depth; /* entries in use (the "irdepth" reported) */
    uint32_t head;  /* ring buffer: index of the oldest entry */
    bool counter;   /* call counter mode: overflowing calls are not counted */
    /* What the encoder needs for the irreport rules (payload.adoc "Format 2 irreport and
     * irdepth"): returns since the last call, branches since the last return. */
    bool return_since_call;
    bool branch_since_return;
} tk_te_irstack;

/* Size the tracker from the parameters (stack if return_stack_size_p, else counter). With
 * neither, cap is 0 and every return is explicit. TK_ERR_CONFIG above 2^16 entries. */
tk_status tk_te_irstack_init(tk_te_irstack *s, const tk_te_params *p);
void tk_te_irstack_free(tk_te_irstack *s);
void tk_te_irstack_reset(tk_te_irstack *s);
void tk_te_irstack_push(tk_te_irstack *s, uint64_t link);
/* Top entry (the predicted return address); depth must be non-zero. */
static inline uint64_t tk_te_irstack_top(const tk_te_irstack *s)
{
    return s->addr[(s->head + s->depth - 1) % s->cap];
}
void tk_te_irstack_pop(tk_te_irstack *s);
/* Encoder side: is a return to target implicit (left out of the trace)? Counter mode: the
 * count is non-zero. Stack mode: the top entry equals the target. */
static inline bool tk_te_irstack_predicts(const tk_te_irstack *s, uint64_t target)
{
    if (s->depth == 0)
        return false;
    return s->counter || tk_te_irstack_top(s) == target;
}
static inline void tk_te_irstack_note_branch(tk_te_irstack *s)
{
    s->branch_since_return = true;
}
/* Does a reported irdepth name the current depth? The field has tk_te_irdepth_bits() bits
 * (0.029's is one bit short of a full stack's depth: compared modulo its width). */
static inline bool tk_te_irdepth_matches(const tk_te_irstack *s, const tk_te_params *p,
                                         uint64_t irdepth)
{
    const uint32_t bits = tk_te_irdepth_bits(p);
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    return ((uint64_t)s->depth & mask) == (irdepth & mask);
}
/* The depth must be reported with the packet of an instruction before a trap, privilege
 * change or resync (irreport rules of 2.0): after_return tells whether the reported
 * instruction follows a correctly predicted return. */
bool tk_te_irstack_must_report(const tk_te_irstack *s, bool after_return);

/* ---- branch predictor (bpred.c) -------------------------------------------------------------
 * 2^bpred_size_p two-bit entries indexed by address bits bpred_size_p:1 (bpred_size_p+1:2
 * without the C extension). States: 00 and 01 predict not taken, 11 and 10 predict taken; the
 * MSB is the prediction, the LSB the last outcome; two failures flip the prediction. All
 * entries go to 01 on every synchronisation packet. */
typedef struct tk_te_bpred {
    uint8_t *state;
    uint32_t size_bits;
    unsigned shift; /* 1, or 2 without compressed instructions */
} tk_te_bpred;

tk_status tk_te_bpred_init(tk_te_bpred *b, uint32_t size_bits, bool compressed);
void tk_te_bpred_free(tk_te_bpred *b);
void tk_te_bpred_reset(tk_te_bpred *b);
/* Predicted outcome of the branch at addr (true = taken). */
static inline bool tk_te_bpred_predict(const tk_te_bpred *b, uint64_t addr)
{
    const uint64_t i = (addr >> b->shift) & ((1ull << b->size_bits) - 1);
    return (b->state[i] >> 1) & 1u;
}
/* Record the actual outcome; returns whether the prediction was right. */
bool tk_te_bpred_update(tk_te_bpred *b, uint64_t addr, bool taken);
/* A branch known to go as predicted (one of a branch-count packet's correctly predicted
 * branches): its predicted outcome, with the entry updated for a success (as
 * tk_te_bpred_update with that outcome). One load and one store: a damaged count can ask
 * for 2^32 of them. */
static inline bool tk_te_bpred_follow(tk_te_bpred *b, uint64_t addr)
{
    uint8_t *const e = &b->state[(addr >> b->shift) & ((1ull << b->size_bits) - 1)];
    const bool taken = (*e >> 1) & 1u;
    *e = taken ? 3u : 0u;
    return taken;
}

/* ---- jump target cache (jtc.c) --------------------------------------------------------------
 * Direct mapped, 2^cache_size_p entries indexed by target address bits cache_size_p:1
 * (cache_size_p+1:2 without the C extension); all entries invalid after a sync. */
typedef struct tk_te_jtc {
    uint64_t *addr;
    uint8_t *valid;
    uint32_t size_bits;
    unsigned shift;
} tk_te_jtc;

tk_status tk_te_jtc_init(tk_te_jtc *c, uint32_t size_bits, bool compressed);
void tk_te_jtc_free(tk_te_jtc *c);
void tk_te_jtc_reset(tk_te_jtc *c);
static inline uint32_t tk_te_jtc_index(const tk_te_jtc *c, uint64_t target)
{
    return (uint32_t)((target >> c->shift) & ((1ull << c->size_bits) - 1));
}
/* Encoder: is target cached (then *index is its entry)? */
bool tk_te_jtc_lookup(const tk_te_jtc *c, uint64_t target, uint32_t *index);
/* Both: an uninferable jump's target was reported explicitly: cache it. */
void tk_te_jtc_insert(tk_te_jtc *c, uint64_t target);
/* Decoder: the address held by entry index; false if the entry is invalid. */
bool tk_te_jtc_get(const tk_te_jtc *c, uint32_t index, uint64_t *target);

/* ---- branch count (bpred.c) -----------------------------------------------------------------
 * Branch-count bookkeeping of the encoder (exampleAlgorithm.adoc "Format selection", pbc):
 * correctly predicted branches in a row since the last report, counted until one fails. */
enum { TK_TE_BCOUNT_MIN = 31 };                             /* F0SF0 reports count - 31 */
#define TK_TE_BCOUNT_MAX (0xffffffffull + TK_TE_BCOUNT_MIN) /* field saturates */

/* ---- packet layouts of the drafts (modes_spec.c) --------------------------------------------
 * Encoder and decoder work on the 2.0 ("logical") form of a packet; these map it to and from
 * what the --spec 0.29 / 0.26 codec carries (VERSIONS.md A.5-A.8):
 * - 0.029: the branch count lives in format 1 with branches = 0 (branch_fmt 01 without
 *   address, 10 with address and bpsuccess, which is set when a reported branch went as
 *   predicted, 2.0's branch_fmt 10 vs 11); format 0 is only the jump target cache; a trap
 *   packet's address is always the handler (no thaddr 0).
 * - 0.026: format 0 is a branch map with a full address, format 1 with a differential one;
 *   no optional modes, no flags, no thaddr 0, and the support packet is a separate te_support
 *   message, not a te_inst (TK_ERR_UNSUPPORTED here: the caller carries it apart). */
tk_status tk_te_packet_to_spec(const tk_te_params *p, const tk_te_packet *logical,
                               tk_te_packet *out);
/* *full_address tells whether the packet's address is absolute (0.026 full-delta, or the
 * full_address option). */
tk_status tk_te_packet_from_spec(const tk_te_params *p, const tk_te_packet *in,
                                 tk_te_packet *logical, bool *full_address);

#endif
