/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: te_inst packets plus the program image in, trace events out
 * (decoder.adoc, the ratified pseudo-code). */
#ifndef TRACEKIT_TE_DECODER_H
#define TRACEKIT_TE_DECODER_H

#include "encap.h"
#include "event.h"
#include "image.h"
#include "te_packet.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the decoder emits, in trace order:
 * - TK_EV_RANGE for each run of instructions the trace says retired: first..last
 *   sequential, ninsn of them, ending at a control transfer (end, taken, indirect, next).
 *   An instruction is emitted once the decoder knows how it left the run, so the last
 *   instruction reached by a packet comes in a later range (or, with end TK_END_NONE, at a
 *   trap, at the end of qualification, before an error, or from tk_te_decoder_finish()).
 *   Listed one by one, the ranges give exactly the reference decoder's .decoder.trace.
 * - TK_EV_TRAP (cause, interrupt, first = EPC or 0 if unknown, next = handler or 0 when a
 *   later sync reports it: thaddr=0) after the range the trap ended.
 * - TK_EV_TRACE_ON (first = address) at a sync that starts the flow; TK_EV_TRACE_OFF or
 *   TK_EV_LOST (first = last address) when a support packet ends qualification.
 * - TK_EV_PRIVILEGE (priv) when a sync reports a new privilege: it applies to the
 *   instructions not yet emitted. TK_EV_CONTEXT for format 3 subformat 2.
 * - TK_EV_ERROR (status, message) when the trace does not fit the image (TK_ERR_MISMATCH,
 *   TK_ERR_NO_CODE, TK_ERR_BAD_INSN), a packet comes before the first sync
 *   (TK_ERR_NO_SYNC, once) or uses an unsupported format (TK_ERR_UNSUPPORTED). */
typedef struct tk_te_decoder tk_te_decoder;

/* p is copied (support packets then update its options); img must outlive the decoder.
 * Errors: TK_ERR_INVALID, TK_ERR_CONFIG (address widths, return stack over 2^16), NOMEM. */
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
/* End of the trace: emits the instructions reached but not yet reported in a range. The
 * decoder is not fed again after this. */
tk_status tk_te_decoder_finish(tk_te_decoder *d);
/* Hand over the blocks collected for a TK_EV_BLOCKS event so far (TK_TE_DEC_BLOCK_EVENTS),
 * e.g. before the caller does something of its own between packets. Returns the status the
 * callback stopped with, else TK_OK. */
tk_status tk_te_decoder_flush(tk_te_decoder *d);
void tk_te_decoder_free(tk_te_decoder *d);

/* Decode a whole reference .te_inst_raw stream (tk_te_raw_open/from_buffer): each packet is
 * parsed with the decoder's parameters and fed in. A damaged packet (bad header, payload
 * that does not parse, truncated end) becomes a TK_EV_ERROR event with its offset, index
 * and message, and the decoder resumes at the next sync. Returns TK_OK, the first such
 * error (after decoding everything else), or the status a callback stopped with. Does not
 * call tk_te_decoder_finish(). */
tk_status tk_te_decoder_run_raw(tk_te_decoder *d, tk_te_raw *raw);

/* What tk_te_decoder_run_encap found in the stream. */
#define TK_TE_ENCAP_MAX_SOURCES 16
typedef struct tk_te_encap_stats {
    size_t size;            /* sizeof(tk_te_encap_stats) */
    uint64_t packets;       /* te_inst packets of the source, fed to the decoder */
    uint64_t other_packets; /* normal packets of other sources or types (data): skipped */
    uint64_t damaged;       /* packets the reader or the packet codec rejected */
    uint64_t truncated;     /* packets cut by the end of the stream (the first one reported) */
    uint32_t nsources;      /* distinct srcIDs seen; the first TK_TE_ENCAP_MAX_SOURCES: */
    uint16_t sources[TK_TE_ENCAP_MAX_SOURCES];
    uint64_t source_packets[TK_TE_ENCAP_MAX_SOURCES];
} tk_te_encap_stats;
/* tk_te_encap_next's srcid for every source: one past the widest srcID (16 bits). */
#define TK_TE_ENCAP_ALL_SOURCES 0x10000u
/* The next packet of source srcid (any type) from r, as tk_te_decoder_run_encap reads them,
 * for tools that list a stream themselves: packets of other sources are counted in st and
 * skipped. With srcid TK_TE_ENCAP_ALL_SOURCES every source's packets are returned in stream
 * order (pkt->srcid says whose; none is counted as another source's). A packet cut by the end
 * of the stream is TK_ERR_TRUNCATED once; the bytes after its header are read again (it may be
 * a misread byte), and packets they cut too are skipped. TK_ERR_INVALID for a srcid over
 * 0xffff other than TK_TE_ENCAP_ALL_SOURCES; other errors as tk_encap_reader_next; TK_END at
 * the end. */
tk_status tk_te_encap_next(tk_encap_reader *r, uint32_t srcid, tk_te_encap_stats *st,
                           tk_encap_packet *pkt, tk_diag *diag);

/* Decode the te_inst packets of source srcid from a stream in the general packet
 * encapsulation (encap.h; cfg: its srcID, timestamp and type widths), e.g. a trace funnel's
 * output with several harts. Instruction trace is type 0 (all packets when the layout has no
 * type field); the flow field, which routes packets to sinks, is not looked at. Packets of
 * other sources and types are skipped, null packets and sync sequences are read over. Events carry
 * the stream's byte offsets and packet indexes (normal packets of every source). A packet the
 * reader or the codec rejects becomes a TK_EV_ERROR event at its offset and the decoder resumes at
 * the next sync; reading goes on after it (a misread framing realigns within the next sync
 * sequence). Returns as tk_te_decoder_run_raw; stats (optional) says what the stream held.
 * TK_ERR_INVALID for a srcid over 0xffff (TK_TE_ENCAP_ALL_SOURCES included: a decoder follows
 * one hart's flow). */
tk_status tk_te_decoder_run_encap(tk_te_decoder *d, tk_te_raw *raw, const tk_encap_config *cfg,
                                  uint32_t srcid, tk_te_encap_stats *stats);

/* Add spike's reset code at 0x1000 (auipc t0,0; addi a1,t0,32; csrr a0,mhartid;
 * ld t0,24(t0) or lw for RV32; jr t0), where the reference flow's traces begin and which
 * decoder_model.py adds to every image. Nothing is added if img already has code there. */
tk_status tk_te_add_spike_reset_code(tk_image *img, bool rv32);

/* Behaviour switches (tk_te_decoder_set_flags). The default, 0, decodes like the reference
 * flow's decoder_model.py (the 2.0 pseudo-code as of 2022). */
enum {
    /* ecall/ebreak/c.ebreak are ordinary instructions, not uninferable discontinuities
     * (decoder.adoc as of 2025; the 2022 text and the reference model list them). */
    TK_TE_DEC_ECALL_SEQUENTIAL = 1u << 0,
    /* At a format 3 sync reached by following the path, ignore the privilege check of
     * 2.0.1 (stop only when te_inst.privilege == privilege or after an xRET). */
    TK_TE_DEC_NO_PRIV_CHECK = 1u << 1,
    /* The options the decoder was given are the encoder's (the tool programmed them and read
     * them back, trace control interface trTeInstFeatures): a support packet announcing others
     * is damaged, reported (TK_ERR_BAD_PACKET) and not applied. Without this flag a support
     * packet may change the options at a trace's start or after its clean end. */
    TK_TE_DEC_FIXED_OPTIONS = 1u << 2,
    /* Emit TK_EV_BLOCKS (event.h, blocks.h): every TK_EV_RANGE that covers exactly one
     * whole basic block of the image goes into a batch of up to TK_BLOCK_BATCH entries
     * instead of its own callback. Any other event (a range starting or ending inside a
     * block, trap, privilege, context, error, loss, trace on/off) hands the batch over
     * first, and so do a full batch, tk_te_decoder_flush(), tk_te_decoder_finish() and the
     * end of tk_te_decoder_run_raw(), so the flow comes in the same order as without the
     * flag: expanded with tk_blocks_as_ranges() it is the same events, except that a batch
     * carries the byte_offset and packet_index of its first block for all its entries. A
     * batch may hold blocks of several packets. */
    TK_TE_DEC_BLOCK_EVENTS = 1u << 3,
};
void tk_te_decoder_set_flags(tk_te_decoder *d, unsigned flags);

/* A limit on the work one packet may ask for. A branch-count packet (branch prediction mode)
 * may claim up to 2^32 + 30 branches that went as predicted, and the decoder follows every
 * one of them (about 30 ns each in a two-instruction loop): so 8 bytes of damaged or hostile
 * trace could cost two minutes, and a small file hours. A packet claiming more than max is a
 * TK_ERR_OVERFLOW error event at its offset, and the decoder resynchronises at the next sync.
 * The default, TK_TE_MAX_PREDICTED_DEFAULT (at most about half a second per packet), is a
 * loop of 16 Mi iterations without any other packet (no mispredicted or uninferable branch,
 * no periodic resync); a trace of a longer one needs a higher limit, or 0: as many as the
 * format allows. */
#define TK_TE_MAX_PREDICTED_DEFAULT (1ull << 24)
void tk_te_decoder_set_max_predicted(tk_te_decoder *d, uint64_t max);

/* Implicit exception mode: trap packets leave the handler address out and the decoder
 * infers it from the trap vector CSR (mtvec, stvec...) of the privilege level the handler
 * runs in (the packet's privilege: 0 U, 1 S, 3 M), value as the CSR holds it (MODE in bits
 * 1:0; vectored interrupts go to base + 4 * cause). A trap without address for a privilege
 * whose vector was not given is a TK_ERR_CONFIG error event. */
void tk_te_decoder_set_trap_vector(tk_te_decoder *d, unsigned priv, uint64_t xtvec);

/* Counters, for tools and benchmarks. */
typedef struct tk_te_decoder_stats {
    size_t size; /* sizeof(tk_te_decoder_stats) */
    uint64_t packets;
    uint64_t instructions; /* reported in TK_EV_RANGE events so far */
    uint64_t errors;       /* TK_EV_ERROR events */
    uint64_t traps;
    /* Walks not done again but replayed from the decoder's memo of earlier walks with the
     * same start, branch map and address (block events only; the events are the same). */
    uint64_t walks_replayed;
    /* Stretches of a walk (8 branches and the jumps between them) replayed from its memo of
     * the stretches walked before, within walks it had to do. */
    uint64_t chunks_replayed;
} tk_te_decoder_stats;
void tk_te_decoder_get_stats(const tk_te_decoder *d, tk_te_decoder_stats *st);

#ifdef __cplusplus
}
#endif
#endif
