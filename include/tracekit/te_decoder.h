/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: te_inst packets plus the program image in, trace events out
 * (decoder.adoc, the ratified pseudo-code). */
#ifndef TRACEKIT_TE_DECODER_H
#define TRACEKIT_TE_DECODER_H

#include "event.h"
#include "image.h"
#include "te_packet.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_te_decoder tk_te_decoder;

tk_status tk_te_decoder_new(const tk_te_params *p, tk_image *img, tk_event_fn fn, void *ctx,
                            tk_te_decoder **out);
/* Feed the next packet. byte_offset and index locate it in the trace for diagnostics.
 * A trace that does not fit the image is reported through a TK_EV_ERROR event and the
 * decoder waits for the next sync; the return value is an error only when decoding cannot
 * go on (callback stop, out of memory). */
tk_status tk_te_decoder_packet(tk_te_decoder *d, const tk_te_packet *pkt, uint64_t byte_offset,
                               uint64_t index);
/* The caller lost packets here (a packet did not parse, bytes were dropped): the
 * instructions reached so far are emitted, a TK_EV_LOST event follows, and the decoder
 * skips packets up to the next format 3 sync. */
tk_status tk_te_decoder_lost(tk_te_decoder *d, uint64_t byte_offset, uint64_t index);
/* End of the trace: emits the instructions reached but not yet reported in a range. */
tk_status tk_te_decoder_finish(tk_te_decoder *d);
void tk_te_decoder_free(tk_te_decoder *d);

/* Behaviour switches (tk_te_decoder_set_flags). The default, 0, decodes like the reference
 * flow's decoder_model.py (the 2.0 pseudo-code as of 2022). */
enum {
    /* ecall/ebreak/c.ebreak are ordinary instructions, not uninferable discontinuities
     * (decoder.adoc as of 2025; the 2022 text and the reference model list them). */
    TK_TE_DEC_ECALL_SEQUENTIAL = 1u << 0,
    /* At a format 3 sync reached by following the path, ignore the privilege check of
     * 2.0.1 (stop only when te_inst.privilege == privilege or after an xRET). */
    TK_TE_DEC_NO_PRIV_CHECK = 1u << 1,
};
void tk_te_decoder_set_flags(tk_te_decoder *d, unsigned flags);

/* Counters, for tools and benchmarks. */
typedef struct tk_te_decoder_stats {
    size_t size; /* sizeof(tk_te_decoder_stats) */
    uint64_t packets;
    uint64_t instructions; /* reported in TK_EV_RANGE events so far */
    uint64_t errors;       /* TK_EV_ERROR events */
    uint64_t traps;
} tk_te_decoder_stats;
void tk_te_decoder_get_stats(const tk_te_decoder *d, tk_te_decoder_stats *st);

#ifdef __cplusplus
}
#endif
#endif
