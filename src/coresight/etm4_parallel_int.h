/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel ETMv4 decoding (etm4_parallel.c): the pieces, their records and lanes, shared by the
 * recording (etm4_parallel_record.c: what the calling thread deformats, cut into pieces) and
 * the lanes and stitching (etm4_parallel.c). */
#ifndef TK_CORESIGHT_ETM4_PARALLEL_INT_H
#define TK_CORESIGHT_ETM4_PARALLEL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "coresight/etm4_state.h"
#include "util/grow.h"
#include "tracekit/etm4.h"

/* Before a lane settles it is fed in chunks (a multiple of a frame's 15 data bytes): the
 * parser's state is compared between calls' packets, in non-batch mode. */
enum { CHUNK = 240 };
/* The status that ends the parallel decode for the serial one (never returned). */
#define FALLBACK TK_ERR_STATE

/* One recorded call: parser_data or parser_frames of n bytes, or a resync. The bytes are the
 * trace buffer's own where the parser would be given those (a raw buffer), else a copy. */
typedef struct op {
    uint8_t kind;       /* tk_etm4_stream_op, not CUT */
    const uint8_t *ext; /* in the trace buffer, or NULL: the piece's bytes from off */
    size_t off, n;
    uint64_t index;
} op;

enum lane_mode { LANE_RUN, LANE_SEAM, LANE_ALL };

struct par;

typedef struct piece {
    struct par *pa;
    /* the record */
    uint8_t *bytes;
    size_t nbytes, cap_bytes;
    op *ops;
    size_t nops, cap_ops;
    uint64_t cut_index; /* byte index where it starts (before an A-Sync pattern) */
    bool first;         /* the trace's first piece: its lane is the serial one */
    /* its lane */
    pthread_t thread;
    tk_etm4_parser *ps;
    tk_etm4_decoder *dec;
    tk_event_fn sink_fn;
    void *sink;
    enum lane_mode mode;
    bool settled;          /* LANE_RUN: settled after the packet ending at settle_end */
    uint64_t settle_end;   /* byte index after that packet */
    uint64_t settle_count; /* packets the lane had decoded then */
    tk_etm4_dec_state dstate;
    tk_etm4_parser_state pstate;
    const struct piece *target; /* LANE_SEAM: the piece whose settle point is looked for */
    bool matched;               /* LANE_SEAM: found, with the same states */
    bool sign;                  /* a bad packet of the serial flow (formatted buffers) */
    uint64_t base;              /* packets of the trace before the lane's first */
    uint64_t out_from;          /* its sink has the events of packets from this byte on */
    tk_status fatal;
} piece;

/* A framing error, handed on in trace order once the decode is known to keep it. */
typedef struct frame_err {
    tk_status status;
    uint64_t offset;
    char *msg;
} frame_err;

typedef struct par {
    tk_etm4_config cfg;
    const tk_cs_mem *mem;
    const tk_etm4_par_config *pc;
    const tk_etm4_run_opts *user;
    uint8_t id;
    bool checked;       /* formatter frames without FSYNC: bad packets may mean realignment */
    const uint8_t *buf; /* the trace buffer, alive until the end */
    size_t len;
    size_t piece_bytes;
    piece *cur;     /* being recorded */
    piece **flight; /* handed to workers, oldest first */
    size_t nflight;
    piece *carry; /* its lane has decoded everything up to the last stitched piece */
    bool started; /* a piece was recorded */
    /* A-Sync pattern search across calls: the last 11 bytes and their indices */
    uint8_t tail[11];
    uint64_t tail_index[11];
    unsigned ntail;
    tk_status err;          /* the first error of a callback or a piece (stops the record) */
    bool fallback;          /* a bad packet in a formatted buffer: the serial decode takes over */
    uint64_t fallback_from; /* ... for the events of packets from this byte on */
    frame_err *errs;
    size_t nerrs, cap_errs;
    tk_etm4_par_stats st;
    /* Decoders of finished lanes, for the next ones (calling thread only): a decoder keeps
     * its block cache, so each block of code is walked once per decoder. */
    tk_etm4_decoder **decs;
    size_t ndecs, max_decs;
} par;

const uint8_t *tk_par_op_bytes(const piece *p, const op *o);
/* Free a piece and its record and lane (its decoder goes back to the pool). */
void tk_par_piece_free(par *pa, piece *p, bool drop_sink);
/* Hand the piece being recorded (pa->cur) to a worker, after making room. */
tk_status tk_par_submit(par *pa);

/* Recording (etm4_parallel_record.c): the tk_etm4_run_opts callbacks of the calling thread's
 * deformatting, and the framing errors kept until the decode is known to keep them. */
tk_status tk_par_on_stream(void *ctx, tk_etm4_stream_op kind, uint8_t id, const uint8_t *d,
                           size_t n, uint64_t index);
tk_status tk_par_on_frame_error(void *ctx, tk_status status, uint64_t offset, const char *msg);
/* Hand on the framing errors before byte to (all: UINT64_MAX), once. */
tk_status tk_par_release_errors(par *pa, uint64_t to);

#endif
