/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace encoder model: ingress blocks in, te_inst packets out (branchTrace.adoc, the
 * encoder algorithm of the spec with its 2.0 clarifications). */
#ifndef TRACEKIT_TE_ENCODER_H
#define TRACEKIT_TE_ENCODER_H

#include "te_ingress.h"
#include "te_packet.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_te_encoder tk_te_encoder;

/* Called for every packet the encoder emits, in order. Return TK_OK to go on. */
typedef tk_status (*tk_te_packet_fn)(void *ctx, const tk_te_packet *pkt);

tk_status tk_te_encoder_new(const tk_te_params *p, tk_te_packet_fn fn, void *ctx,
                            tk_te_encoder **out);
/* Push one cycle's blocks (n >= 1; n > 1 only with multiple retirement). */
tk_status tk_te_encoder_push(tk_te_encoder *e, const tk_te_block *blocks, size_t n);
/* End of the instruction stream: flush the last packets (final address, support packet). */
tk_status tk_te_encoder_finish(tk_te_encoder *e);
void tk_te_encoder_free(tk_te_encoder *e);

#ifdef __cplusplus
}
#endif
#endif
