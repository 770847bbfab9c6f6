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

/* Optional modes (docs/modes.md): with reference_quirks off, the encoder runs implicit return
 * (itype_width_p 4 and a return stack or call counter), branch prediction (F0SF0 branch
 * counts) and the jump target cache (F0SF1) when the parameters' options ask for them, on the
 * state machines it shares with the decoder (src/etrace/modes.h); implicit exception and
 * sijump are options of the codec and the ingress. The support packets' ioptions advertise
 * the modes actually run. Packets go to the callback in the layout of p->spec: 2.0, or the
 * v0.029 / v0.026 drafts (0.026 has no optional modes: TK_ERR_CONFIG; its support packet is
 * handed over in the 2.0 form, as 0.026 carried it in a separate te_support message). */

/* Called for every packet the encoder emits, in order. Return TK_OK to go on. */
typedef tk_status (*tk_te_packet_fn)(void *ctx, const tk_te_packet *pkt);

/* Behaviour switches. tk_te_encoder_new uses the defaults of tk_te_encoder_options_init. */
typedef struct tk_te_encoder_options {
    size_t size; /* sizeof(tk_te_encoder_options) */
    /* Reproduce encoder_model.py byte for byte (default on): the updiscon set {6,8,10,14}
     * (+12,13 without implicit return; xRET 3 is not one), the unconditional final F1/F2
     * followed by a support packet with ienable 0 and ended_rep, and in full-address mode
     * F1/F2 addresses not shifted by iaddress_lsb (VERSIONS.md C.8). Off: 3 is an updiscon,
     * F1/F2 full addresses are shifted, and the end of trace is handled like any loss of
     * qualification (F1/F2 only if the last instruction was not reported yet, then support
     * with ienable 0 and ended_rep, or ended_ntr when the last packet was due to an
     * updiscon). */
    bool reference_quirks;
    /* When irreport is not set, irdepth is sent as all ones (the reference model) instead of
     * copies of the transmitted updiscon bit (2.0 payload text). Only visible when
     * return_stack_size_p or call_counter_size_p is non-zero; a decoder ignores irdepth
     * then. Default: equal to reference_quirks, so the default output is byte-identical to
     * the reference and --spec-faithful output compresses better. */
    bool irdepth_ones;
    /* Trace from the first block (the reference). Off: wait for a trace-on trigger. */
    bool start_qualified;
    /* Take every block through the general path of the algorithm, never the fast path for
     * quiet cycles (the packets are the same; for tests that check exactly that). */
    bool general_path_only;
} tk_te_encoder_options;

void tk_te_encoder_options_init(tk_te_encoder_options *o);
tk_status tk_te_encoder_new_opts(const tk_te_params *p, const tk_te_encoder_options *o,
                                 tk_te_packet_fn fn, void *ctx, tk_te_encoder **out);
/* Packets were lost downstream: a support packet with qual_status trace_lost goes out before
 * the next instruction's packets, and tracing resumes with a format 3 start packet. */
tk_status tk_te_encoder_trace_lost(tk_te_encoder *e);
/* Number of packets emitted so far. */
uint64_t tk_te_encoder_packets(const tk_te_encoder *e);

tk_status tk_te_encoder_new(const tk_te_params *p, tk_te_packet_fn fn, void *ctx,
                            tk_te_encoder **out);
/* Push one cycle's blocks (n >= 1; n > 1 only with multiple retirement).
 * Multi-instruction blocks: only the first and last instruction can be "interesting"
 * (exampleAlgorithm "Multiple retirement considerations"); the encoder walks first, the
 * instructions between (whose addresses it cannot know), and last. The one packet single
 * retirement could place on an instruction between is a resync start packet due right after
 * a packet on the first instruction; it then goes on the last instruction instead.
 * Qualification: trigger bit TK_TRIGGER_ON starts tracing with the block, TK_TRIGGER_OFF
 * stops after it, halted/reset blocks are untraced; the last traced instruction is reported
 * and followed by a support packet (ended_rep/ended_ntr); tracing resumes with a start
 * packet. TK_TRIGGER_NOTIFY reports the block's last instruction with notify set.
 * Errors: TK_ERR_INVALID for an inconsistent block, or the callback's error. */
tk_status tk_te_encoder_push(tk_te_encoder *e, const tk_te_block *blocks, size_t n);
/* n consecutive cycles of one block each: the same packets as tk_te_encoder_push(e,
 * &blocks[i], 1) for each i in turn, faster (the common blocks are taken without going
 * through the pipe one by one). Errors as tk_te_encoder_push; blocks before the failing one
 * have been encoded. */
tk_status tk_te_encoder_push_run(tk_te_encoder *e, const tk_te_block *blocks, size_t n);
/* End of the instruction stream: flush the last packets (final address, support packet). */
tk_status tk_te_encoder_finish(tk_te_encoder *e);
void tk_te_encoder_free(tk_te_encoder *e);

/* tk_te_packet_encode with the field widths of a layout (tk_te_layout_init): the same bytes
 * and errors, faster for the packets an encoder emits most (2.0 formats 1 and 2, format 3
 * start), for packet callbacks that serialise every packet. Bytes of buf past the packet, up
 * to the 16th and within cap, may be overwritten. */
tk_status tk_te_packet_encode_layout(const tk_te_layout *l, const tk_te_packet *pkt, uint8_t *buf,
                                     size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
