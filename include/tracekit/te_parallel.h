/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel E-Trace flow decoding: a reference raw stream (.te_inst_raw) is cut before format
 * 3 sync packets (start or trap) into pieces decoded on several threads, each with its own
 * decoder, program image (block cache) and sink; the pieces are stitched in order so the
 * result equals the serial decode.
 *
 * Stitching: piece i starts with a fresh decoder at its first packet P, a sync. The decoder
 * that finished piece i-1 then processes P too, as the serial decoder would, and the two
 * states are compared (everything that influences later packets: reported pc and address,
 * branch map, return stack, privilege, context, options, sync flags). When they agree, the
 * events piece i produced after P are exactly the serial ones, except that the serial decoder
 * was in the middle of an instruction range at P: the instructions of that range before P
 * are handed to piece i-1's sink as one range (so every instruction, branch and PC is
 * reported once and in order; only that range is cut in two). When they do not agree
 * (rare: e.g. the sync interrupts a branch map without address), piece i is decoded again
 * from piece i-1's decoder, serially. Pieces are decoded in waves of `jobs` pieces, so
 * memory stays bounded by the piece size whatever the trace length. */
#ifndef TRACEKIT_TE_PARALLEL_H
#define TRACEKIT_TE_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "image.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_te_par_config {
    size_t size;            /* sizeof(tk_te_par_config) */
    unsigned jobs;          /* threads (>= 1) */
    size_t piece_bytes;     /* trace bytes per piece (0: 1 MiB); cuts fall on the next sync */
    unsigned flags;         /* tk_te_decoder_set_flags */
    uint64_t tvec[4];       /* tk_te_decoder_set_trap_vector, for privileges whose bit ... */
    uint8_t tvec_set;       /* ... is set here */
    uint64_t max_predicted; /* tk_te_decoder_set_max_predicted (0: default, UINT64_MAX: none) */
    void *ctx;              /* passed to every callback */
    /* A program image for one thread's decoder (called on the calling thread, jobs + 1
     * times at most); freed with tk_image_free. */
    tk_status (*open_image)(void *ctx, tk_image **out);
    /* A sink for one piece (worker thread): its event function and state. */
    tk_status (*sink_new)(void *ctx, tk_image *img, tk_event_fn *fn, void **sink);
    /* Piece done (calling thread, in trace order): write or merge its results, then free
     * it. Returns an error to stop. */
    tk_status (*sink_done)(void *ctx, void *sink);
    /* Piece discarded (its serial re-decode went into the previous piece's sink). */
    void (*sink_drop)(void *ctx, void *sink);
    /* Optional: the pages before offset may be given back now (tk_te_raw_release); reading
     * them again faults them back in from the page cache. */
    void (*release)(void *ctx, uint64_t offset);
} tk_te_par_config;

typedef struct tk_te_par_stats {
    size_t size; /* sizeof(tk_te_par_stats) */
    uint64_t packets;
    uint64_t pieces;
    uint64_t stitched;  /* seams where the states agreed */
    uint64_t redecoded; /* pieces decoded again serially */
} tk_te_par_stats;

/* Decode buf[0..len) (the raw framing) with cfg->jobs threads. Errors: TK_ERR_INVALID,
 * TK_ERR_NOMEM, a callback's status, or the first fatal decoder status. Damaged packets are
 * TK_EV_ERROR events in the sink of the piece they are in, and the decoder resynchronises,
 * as tk_te_decoder_run_raw does; *first_bad (optional) receives the status of the first one
 * (TK_OK if none). */
tk_status tk_te_decode_parallel(const tk_te_params *p, const uint8_t *buf, size_t len,
                                const tk_te_par_config *cfg, tk_te_par_stats *stats,
                                tk_status *first_bad);

#ifdef __cplusplus
}
#endif
#endif
