/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: private state shared by decoder.c (packet handling) and
 * decoder_walk.c (following the execution path through the block cache). The names follow
 * the pseudo-code of decoder.adoc so the two can be read side by side. */
#ifndef TK_ETRACE_DECODER_INT_H
#define TK_ETRACE_DECODER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "etrace/modes.h"
#include "tracekit/blocks.h"
#include "tracekit/te_decoder.h"

/* Outcome of the internal steps: TK_OK (go on / stopped where the packet says), DEC_DESYNC
 * (the trace did not fit the image; an error event was emitted and the decoder waits for the
 * next sync), DEC_STOPPED (the callback returned d->stop), or a negative tk_status that ends
 * decoding (callback stop, no memory). */
enum { DEC_DESYNC = 2, DEC_STOPPED = 3 };

typedef struct tk_walk_memo_slot tk_walk_memo_slot; /* walk_memo.h */
typedef struct tk_walk_chunk tk_walk_chunk;         /* walk_memo.h */

#define TK_DEC_NEAR_BLOCKS 1024u /* a power of two */

/* The fields of the packet being followed that the stop conditions look at. */
typedef struct tk_dec_walk {
    uint64_t address; /* reported address (byte address) */
    bool fmt3;        /* a format 3 sync is being followed */
    bool notify;      /* logical flags (already compared with their preceding bit) */
    bool updiscon;
    bool irreport;
    uint64_t irdepth;
    bool target_branch; /* the reported address holds a branch (its bit is in the map) */
    uint8_t privilege;  /* format 3 only */
    /* Support packet with ended_ntr: walk from an inferred address to the next uninferable
     * discontinuity, then stop (process_support). */
    bool until_discon;
    /* A branch-map packet's walk with none of the flags above: the walk memo may replay it
     * without looking at them (walk_memo.h: others it keeps under marks, or not at all). Set
     * by the packets that may; false (the default) otherwise. */
    bool plain;
} tk_dec_walk;

struct tk_te_decoder {
    tk_te_params p; /* options are updated by support packets */
    tk_image *img;
    tk_event_fn fn;
    void *ctx;
    unsigned flags;
    unsigned xlen;
    uint64_t addr_mask; /* xlen mask for reconstructed addresses */

    /* decoder.adoc globals */
    uint64_t pc;          /* last reported (reached) instruction */
    uint64_t last_pc;     /* instruction executed before pc */
    tk_rv_insn last_insn; /* its decoding, valid if last_valid */
    bool last_valid;
    uint64_t branch_map; /* bit 0 = oldest unprocessed branch, 1 = not taken */
    unsigned branches;
    bool stop_at_last_branch;
    bool inferred_address;
    bool start_of_trace;
    uint64_t address;
    uint8_t privilege;
    bool have_priv;
    tk_te_irstack ir; /* implicit return (shared with the encoder: etrace/modes.h) */

    /* Optional modes (etrace/modes.h). Branches still to resolve come in this order: the
     * branch_map bits, then pred_pending branches that went as predicted, then, if
     * fail_pending, one that did not (format 0 subformat 0). */
    tk_te_bpred bp;
    tk_te_jtc jtc;
    uint64_t pred_pending;
    bool fail_pending;
    uint64_t max_predicted; /* tk_te_decoder_set_max_predicted (0: no limit; the default
                               TK_TE_MAX_PREDICTED_DEFAULT) */
    bool walk_uninf;        /* the last walk stopped on an uninferable discontinuity's target */
    uint64_t tvec[4];       /* trap vector CSR per privilege, for implicit exceptions */
    uint8_t tvec_set;       /* bit per privilege */

    /* tracekit additions */
    bool have_pc;         /* pc holds a reported instruction */
    bool trap_pending;    /* F3SF1 with thaddr=0 seen: the handler comes with the next sync */
    bool desynced;        /* an error was reported; skip packets until the next sync */
    bool nosync_told;     /* "must start with format 3" already reported */
    uint64_t range_first; /* reached instructions not yet emitted: range_first..pc */
    uint64_t range_ninsn;
    uint64_t byte_offset; /* of the packet being processed */
    uint64_t packet_index;
    uint64_t context;
    tk_te_decoder_stats stats;
    tk_status stop;      /* what the callback returned to stop decoding */
    tk_event range_ev;   /* reused for every TK_EV_RANGE of the walk (no per-block zeroing) */
    uint64_t idle_limit; /* blocks a walk may follow without trace information */
    /* The block a walk stopped at the start of: the next walk starts there without a cache
     * lookup if pc is still its start (blocks never change while the image lives). */
    const tk_bblock *stop_block;
    /* Direct-mapped front of the image's block cache, keyed by start address: the targets
     * of returns and other uninferable jumps repeat, and one probe here saves a hash lookup. */
    const tk_bblock **near; /* TK_DEC_NEAR_BLOCKS entries (apart: the parallel decoder
                             * keeps copies of the scalars of a decoder per piece) */
    /* Block events (TK_TE_DEC_BLOCK_EVENTS): whole-block ranges are collected in blk and
     * handed over as one TK_EV_BLOCKS event (blk_ev) when the batch is full or before any
     * other event, so the order is the one of the ranges. blocks is false while the decoder
     * runs on another image than the one it was made with (the parallel decoder's stitching
     * thread): the sink keeps per-block data of its own image, so it gets ranges then. */
    bool blocks;
    uint32_t nblk;
    tk_block_exec *blk; /* TK_BLOCK_BATCH entries */
    tk_event blk_ev;    /* kind, priv, context and offsets of the batch's first block */
    uint64_t flushes;   /* batches handed over so far (tells whether a walk's entries are
                         * still together in blk) */
    uint64_t ranges;    /* TK_EV_RANGE events of walks (emit_range) so far: a walk that sent
                         * one (a range that is not a whole block) is not for the walk memo */
    /* Walks remembered by their inputs (walk_memo.h), 2^TK_WALK_MEMO_BITS slots; made when
     * the flags ask for block events; NULL before, or if they could not be allocated. */
    tk_walk_memo_slot *memo;
    tk_walk_chunk *chunks; /* 2^TK_WALK_CHUNK_SLOT_BITS, NULL like memo */
    bool memo_used;        /* something was stored in either since they were last empty */
    bool memo_off;         /* tk_dec_set_walk_memo(false) */
    tk_image *own_img;
    char msg[192];
};

/* decoder.c */
tk_status tk_dec_emit(tk_te_decoder *d, tk_event *ev);
/* tk_te_decoder_packet() for a scanner record (tk_te_scan_records): formats 1 and 2 straight
 * from the record, anything else through its tk_te_packet. */
tk_status tk_dec_packet_rec(tk_te_decoder *d, const tk_te_rec *rec, uint64_t byte_offset,
                            uint64_t index);
/* Hand the block batch over (TK_OK, or DEC_STOPPED with d->stop set). */
int tk_dec_flush_blocks_now(tk_te_decoder *d);
/* The batch header for the next entries (the batch is empty). */
static inline void tk_dec_batch_header(tk_te_decoder *d)
{
    d->blk_ev.byte_offset = d->byte_offset;
    d->blk_ev.packet_index = d->packet_index;
    d->blk_ev.priv = d->privilege;
    d->blk_ev.context = d->context;
}
static inline int tk_dec_flush_blocks(tk_te_decoder *d)
{
    return d->nblk ? tk_dec_flush_blocks_now(d) : TK_OK;
}
/* Go on with another image of the same program (the parallel decoder hands a decoder from
 * a worker's image to the stitching thread's): drops what points into the old one. */
void tk_dec_rebind_image(tk_te_decoder *d, tk_image *img);

/* parallel.c, for tests: where tk_te_decode_parallel cuts buf[0, len) at piece_bytes, found
 * as its scheduler finds them (one piece's end at a time). Writes up to max piece starts
 * (the first is 0) and returns how many pieces there are. */
size_t tk_te_par_cut_starts(const uint8_t *buf, size_t len, size_t piece_bytes, size_t *starts,
                            size_t max);
/* Report a mismatch between trace and image: emits TK_EV_ERROR, flushes the reached
 * instructions, and waits for the next sync. Returns DEC_DESYNC or a fatal status. */
int tk_dec_fail(tk_te_decoder *d, tk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Branches not yet resolved (map bits, predicted ones, failed one). */
static inline uint64_t tk_dec_pending(const tk_te_decoder *d)
{
    return d->branches + d->pred_pending + (d->fail_pending ? 1u : 0u);
}

/* decoder_walk.c */
bool tk_dec_is_uninferable_discon(const tk_te_decoder *d, const tk_rv_insn *i);
/* Blocks a walk may follow without using trace information before it is taken as lost,
 * from the size of the program's code. */
uint64_t tk_dec_idle_limit(const tk_image *img);
/* follow_execution_path(): from pc to w->address. */
int tk_dec_follow(tk_te_decoder *d, const tk_dec_walk *w);
/* The block starting at pc, or a desync error naming pc. */
int tk_dec_block(tk_te_decoder *d, uint64_t pc, const tk_bblock **out);
/* The instruction at pc (first of its block). */
int tk_dec_insn_at(tk_te_decoder *d, uint64_t pc, tk_rv_insn *out);

/* Outcome of executing one instruction (next_pc()). */
typedef struct tk_dec_step {
    uint64_t next;
    bool stop_here; /* reached through an uninferable discontinuity (or a jump to itself) */
    bool taken;
    bool indirect;
    bool consumed; /* a branch-map bit was used */
    bool popped;   /* the implicit return stack was popped */
    bool inferred; /* an uninferable jump resolved without trace (sijump, implicit return) */
    uint8_t end;   /* tk_range_end */
} tk_dec_step;
/* next_pc() for insn at this_pc; prev/prev_pc is the instruction executed before it (NULL if
 * unknown). With dry set, nothing in d changes and an unresolvable branch gives next = 0. */
int tk_dec_exec(tk_te_decoder *d, const tk_rv_insn *insn, uint64_t this_pc, const tk_rv_insn *prev,
                uint64_t prev_pc, uint64_t uninf_target, const tk_dec_walk *w, bool dry,
                tk_dec_step *out);

/* decoder_raw.c: feed the packets of a raw stream from the scanner s (up to its end) as
 * tk_te_decoder_run_raw does, counting them in *packets; raw (optional) gets the pages
 * already read back. Shared with the parallel decoder (parallel.c). */
tk_status tk_dec_run_scan(tk_te_decoder *d, tk_te_scan *s, tk_te_raw *raw, uint64_t *packets);
/* A damaged packet at offset: a TK_EV_ERROR event with msg (cut to the decoder's buffer),
 * then the decoder waits for the next sync (tk_te_decoder_lost). Returns TK_OK or the
 * status a callback stopped with. */
tk_status tk_dec_damaged(tk_te_decoder *d, tk_status status, uint64_t offset, uint64_t index,
                         const char *msg);
/* A reader's message "[file: ]offset N (packet K): what" without the location, which events
 * carry themselves. */
const char *tk_dec_what_of(const char *msg);

#endif
