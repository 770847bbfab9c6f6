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
tk_status tk_te_decoder_finish(tk_te_decoder *d);
void tk_te_decoder_free(tk_te_decoder *d);

#ifdef __cplusplus
}
#endif
#endif
