/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 instruction trace: configuration from the trace unit registers, the packet parser and
 * the flow decoder that walks A64/A32/T32 code to turn packets into tk_events.
 *
 * Reference: Arm Embedded Trace Macrocell Architecture Specification ETMv4.0 to ETMv4.6
 * (IHI0064), chapter 6 "Descriptions of Trace Packets" (section numbers below refer to it). */
#ifndef TRACEKIT_ETM4_H
#define TRACEKIT_ETM4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coresight.h"
#include "event.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration ---------------------------------------------------------------------- */

typedef struct tk_etm4_config {
    uint32_t configr, idr0, idr1, idr2, idr8;
    uint32_t devarch; /* TRCDEVARCH (ETE) */
    uint8_t trace_id;
    bool ete;      /* an ETE trace unit (Armv9): TRCDEVARCH.ARCHVER = 5 */
    bool cortex_m; /* M-profile core: M exception numbering, v8-M function return packet */
    /* Derived (tk_etm4_config_init): */
    uint8_t version;   /* (TRCARCHMAJ << 4) | TRCARCHMIN, e.g. 0x42; ETE: 0x50 | revision */
    uint8_t cid_bytes; /* context ID bytes in context packets (TRCIDR2.CIDSIZE) */
    uint8_t vmid_bytes;
    uint8_t cc_bits;   /* cycle counter size (TRCIDR2.CCSIZE + 12) */
    bool commit_opt1;  /* TRCIDR0.COMMOPT with cycle counting: no commit in cycle count pkts */
    bool data_trace;   /* data address or value tracing enabled: DS marker packets valid */
    bool cond_trace;   /* conditional instruction tracing implemented and enabled */
    bool q_elements;   /* TRCIDR0.QSUPP: Q packets may appear */
    uint32_t max_spec; /* TRCIDR8.MAXSPEC */
    bool wfx_branch;   /* TRCIDR2.WFXMODE: WFI/WFE/WFIT/WFET are P0 instructions */
} tk_etm4_config;

/* Fill the derived fields from the register values already in cfg. */
void tk_etm4_config_init(tk_etm4_config *cfg);
/* Build a configuration from a snapshot source. */
void tk_etm4_config_from_source(tk_etm4_config *cfg, const tk_cs_snapshot *ss,
                                const tk_cs_source *src);

/* ---- packets (§6.4) --------------------------------------------------------------------- */

typedef enum tk_etm4_pkt_type {
    TK_ETM4_NOT_SYNC = 0, /* bytes before the first A-Sync (or after an error) */
    TK_ETM4_INCOMPLETE_EOT,
    TK_ETM4_BAD_SEQUENCE, /* malformed packet: err_type says which */
    TK_ETM4_RESERVED,     /* reserved header byte */
    TK_ETM4_RESERVED_CFG, /* header not valid in this configuration */
    TK_ETM4_EXTENSION,
    TK_ETM4_ASYNC,
    TK_ETM4_DISCARD,
    TK_ETM4_OVERFLOW,
    TK_ETM4_TRACE_INFO,
    TK_ETM4_TIMESTAMP,
    TK_ETM4_TRACE_ON,
    TK_ETM4_FUNC_RET,
    TK_ETM4_EXCEPT,
    TK_ETM4_EXCEPT_RTN,
    TK_ETM4_CCNT_F1,
    TK_ETM4_CCNT_F2,
    TK_ETM4_CCNT_F3,
    TK_ETM4_NUM_DS_MKR,
    TK_ETM4_UNNUM_DS_MKR,
    TK_ETM4_COMMIT,
    TK_ETM4_CANCEL_F1,
    TK_ETM4_CANCEL_F1_MISPRED,
    TK_ETM4_MISPREDICT,
    TK_ETM4_CANCEL_F2,
    TK_ETM4_CANCEL_F3,
    TK_ETM4_COND_I_F1,
    TK_ETM4_COND_I_F2,
    TK_ETM4_COND_I_F3,
    TK_ETM4_COND_FLUSH,
    TK_ETM4_COND_RES_F1,
    TK_ETM4_COND_RES_F2,
    TK_ETM4_COND_RES_F3,
    TK_ETM4_COND_RES_F4,
    TK_ETM4_IGNORE,
    TK_ETM4_EVENT,
    TK_ETM4_CTXT,
    TK_ETM4_ADDR_CTXT_L_32IS0,
    TK_ETM4_ADDR_CTXT_L_32IS1,
    TK_ETM4_ADDR_CTXT_L_64IS0,
    TK_ETM4_ADDR_CTXT_L_64IS1,
    TK_ETM4_ADDR_MATCH,
    TK_ETM4_ADDR_S_IS0,
    TK_ETM4_ADDR_S_IS1,
    TK_ETM4_ADDR_L_32IS0,
    TK_ETM4_ADDR_L_32IS1,
    TK_ETM4_ADDR_L_64IS0,
    TK_ETM4_ADDR_L_64IS1,
    TK_ETM4_Q,
    TK_ETM4_ATOM_F1,
    TK_ETM4_ATOM_F2,
    TK_ETM4_ATOM_F3,
    TK_ETM4_ATOM_F4,
    TK_ETM4_ATOM_F5,
    TK_ETM4_ATOM_F6,
    /* ETE (and ETMv4.6 for the TS marker) */
    TK_ETM4_ITE,          /* software instrumentation: value, EL */
    TK_ETM4_TRANS_ST,     /* transaction start */
    TK_ETM4_TRANS_COMMIT, /* transaction commit */
    TK_ETM4_TRANS_FAIL,   /* transaction failure (an exception packet of type 0x18) */
    TK_ETM4_PE_RESET,     /* PE reset (an exception packet of type 0) */
    TK_ETM4_TS_MARKER,
    TK_ETM4_SRC_ADDR_MATCH,
    TK_ETM4_SRC_ADDR_S_IS0,
    TK_ETM4_SRC_ADDR_S_IS1,
    TK_ETM4_SRC_ADDR_L_32IS0,
    TK_ETM4_SRC_ADDR_L_32IS1,
    TK_ETM4_SRC_ADDR_L_64IS0,
    TK_ETM4_SRC_ADDR_L_64IS1,
    TK_ETM4_PKT_TYPE_COUNT
} tk_etm4_pkt_type;

/* Context (§6.4.11): exception level, security state, AArch64 (sf), IDs. */
typedef struct tk_etm4_context {
    uint8_t el, ns, sf;
    uint8_t has_vmid, has_cid;
    uint32_t vmid, cid;
} tk_etm4_context;

/* One parsed packet. Fields beyond type/index/size are valid according to the type; the
 * address, context and timestamp hold the parser's state after the packet (so a short address
 * packet carries the full address it stands for). */
typedef struct tk_etm4_packet {
    uint8_t type;     /* tk_etm4_pkt_type */
    uint8_t err_type; /* for BAD_SEQUENCE/INCOMPLETE_EOT/RESERVED*: the type that went wrong */
    uint8_t size;     /* bytes in the packet (NOT_SYNC: skipped bytes, may be clipped at 255) */
    uint8_t header;   /* first byte */
    uint8_t trace_id; /* source (from the configuration) */
    uint64_t index;   /* position of the first byte (see tk_cs_deformat) */

    /* atoms (ATOM_*, MISPREDICT, CANCEL_F2/F3): bit i = atom i (oldest first), 1 = E */
    uint8_t atom_num;
    uint32_t atoms;

    /* addresses */
    uint64_t addr;
    uint8_t addr_is;   /* instruction set bit (IS0/IS1) */
    uint8_t addr_bits; /* bits carried by the packet */
    uint8_t addr_64;   /* address is 64-bit */
    uint8_t match_idx; /* ADDR_MATCH, Q */

    /* context (CTXT, ADDR_CTXT_*) */
    uint8_t ctx_updated; /* 0: CTXT said "same context" */
    tk_etm4_context ctx;

    /* TRACE_INFO (§6.4.3) */
    uint32_t info, p0_key, spec_depth, cc_threshold;
    uint8_t info_sections; /* PLCTL: bit0 info, 1 key, 2 spec, 3 cyct */

    /* TIMESTAMP, cycle counts */
    uint64_t timestamp;
    uint8_t ts_bits;
    uint8_t has_cc;
    uint32_t cc;
    uint8_t has_commit;
    uint32_t commit, cancel;

    /* EXCEPT (§6.4.7) */
    uint16_t exc_type;
    uint8_t exc_addr_interp; /* E1:E0 */
    uint8_t exc_fault_pending;

    /* EVENT, DS markers, Q, conditional packets */
    uint8_t value;
    uint32_t q_count;
    uint8_t q_type;
    uint8_t q_has_count;
    uint64_t ite_value; /* ITE payload (value holds its EL byte) */
} tk_etm4_packet;

const char *tk_etm4_pkt_name(tk_etm4_pkt_type type);
/* Error packets: the stream lost synchronisation at this packet. */
static inline bool tk_etm4_pkt_is_error(const tk_etm4_packet *p)
{
    return p->type >= TK_ETM4_INCOMPLETE_EOT && p->type <= TK_ETM4_RESERVED_CFG;
}
/* One line of text describing the packet (no index, no newline). Returns the length. */
int tk_etm4_pkt_format(const tk_etm4_packet *p, char *buf, size_t size);

/* ---- packet parser ---------------------------------------------------------------------- */

typedef tk_status (*tk_etm4_packet_fn)(void *ctx, const tk_etm4_packet *pkt);

/* Compact form of the packets that make up nearly all instruction trace: atoms (ATOM_F1..F6),
 * exact-match, short and long addresses (ADDR_MATCH, ADDR_S_*, ADDR_L_*). Filled in batches
 * by the parser's fast path (tk_etm4_parser_set_batch) instead of one call per packet.
 * tk_etm4_pkt_from_lite gives the tk_etm4_packet the complete parser reports for it. */
typedef struct tk_etm4_pkt_lite {
    uint64_t index; /* position of the first byte (an atom run: of its first atom) */
    union {
        uint64_t addr; /* address packets: the full address after the packet (as pkt->addr) */
        /* TK_ETM4_LITE_ATOMS: the headers of the run's atom packets, oldest first (size
         * of them; tk_etm4_atom_header decodes one) */
        uint8_t atom_headers[8];
    };
    /* atoms: bit i = atom i (oldest first), 1 = E; an atom run: byte k (bits 8k..8k+7) is
     * packet k's offset from index, for k < 4 (tk_etm4_lite_atom_index) */
    uint32_t atoms;
    uint8_t type; /* tk_etm4_pkt_type, or TK_ETM4_LITE_ATOMS */
    uint8_t header;
    uint8_t atom_num;
    uint8_t size;      /* bytes; an atom run: its atom packets (one byte each) */
    uint8_t addr_bits; /* address packets: bits carried (as pkt->addr_bits) */
    uint8_t addr_is;
    uint8_t addr_64;
    uint8_t match_idx; /* ADDR_MATCH */
    /* (an atom run: addr_bits, addr_is, addr_64, match_idx are the offsets of packets 4-7) */
} tk_etm4_pkt_lite;

/* type of a compact record that holds a run of 1 to 8 atom packets (batch mode with atom runs,
 * tk_etm4_parser_set_batch_runs): packet k of the run (k < size) has header atom_headers[k]
 * and is at tk_etm4_lite_atom_index(l, k), which is index + k unless the run spans a gap in
 * the byte positions, such as a formatter frame boundary. */
#define TK_ETM4_LITE_ATOMS 0xffu

/* Where packet k (< 8) of an atom run starts. */
static inline uint64_t tk_etm4_lite_atom_index(const tk_etm4_pkt_lite *l, unsigned k)
{
    unsigned off;
    switch (k) {
    case 0:
    case 1:
    case 2:
    case 3:
        off = (l->atoms >> (8 * k)) & 0xff;
        break;
    case 4:
        off = l->addr_bits;
        break;
    case 5:
        off = l->addr_is;
        break;
    case 6:
        off = l->addr_64;
        break;
    default:
        off = l->match_idx;
        break;
    }
    return l->index + off;
}

/* Packets a compact record stands for: size for an atom run, else 1. */
static inline unsigned tk_etm4_lite_packets(const tk_etm4_pkt_lite *l)
{
    return l->type == TK_ETM4_LITE_ATOMS ? l->size : 1u;
}

/* Packets n compact records stand for (the sum of tk_etm4_lite_packets; SIMD where built
 * for it). */
uint64_t tk_etm4_lite_count_packets(const tk_etm4_pkt_lite *l, size_t n);

/* An atom header (0xc0-0xff; anything else gives TK_ETM4_BAD_SEQUENCE with *num 0): its
 * packet type, number of atoms and their bits (bit i = atom i, 1 = E), as the parser reports
 * the packet. */
tk_etm4_pkt_type tk_etm4_atom_header(uint8_t header, uint8_t *num, uint32_t *bits);

/* Called with n >= 1 compact packets, in trace order. */
typedef tk_status (*tk_etm4_batch_fn)(void *ctx, const tk_etm4_pkt_lite *pkts, size_t n);

/* The complete packet for a compact one (every field the complete parser sets for its type;
 * the others zero). */
void tk_etm4_pkt_from_lite(const tk_etm4_pkt_lite *l, uint8_t trace_id, tk_etm4_packet *pkt);
/* The same for packet k (< tk_etm4_lite_packets(l)) of a compact record: of an atom run, its
 * k-th atom packet. */
void tk_etm4_pkt_from_lite_at(const tk_etm4_pkt_lite *l, unsigned k, uint8_t trace_id,
                              tk_etm4_packet *pkt);

typedef struct tk_etm4_parser tk_etm4_parser;

tk_status tk_etm4_parser_new(const tk_etm4_config *cfg, tk_etm4_packet_fn fn, void *ctx,
                             tk_etm4_parser **out);
void tk_etm4_parser_free(tk_etm4_parser *p);
/* Parse bytes of one source; index is the position of data[0] (consecutive calls may jump in
 * index, as deformatted runs do). Calls fn once per packet. Malformed packets are reported as
 * error packets; the parser then drops bytes until the next A-Sync (§6.4.1) and says how many
 * with a NOT_SYNC packet. Returns fn's first non-OK status. */
tk_status tk_etm4_parser_data(tk_etm4_parser *p, const uint8_t *data, size_t n, uint64_t index);
/* The same for bytes of whole formatter frames joined together (tk_cs_frames_fn): byte k is at
 * index + k + k / 15. Gives the same packets as one tk_etm4_parser_data call per frame; in
 * batch mode the compact packets are taken across frame boundaries in one pass. */
tk_status tk_etm4_parser_frames(tk_etm4_parser *p, const uint8_t *data, size_t n, uint64_t index);
/* The same for joined frames of any sizes (tk_cs_frames_at_fn): byte k is at index + at[k], and
 * a frame is a stretch of bytes whose index goes up by one (at[k + 1] == at[k] + 1). Gives the
 * same packets as one tk_etm4_parser_data call per frame. */
tk_status tk_etm4_parser_frames_at(tk_etm4_parser *p, const uint8_t *data, const uint16_t *at,
                                   size_t n, uint64_t index);
/* End of trace: a partial packet is reported as INCOMPLETE_EOT. Flushes the batch. */
tk_status tk_etm4_parser_end(tk_etm4_parser *p);
/* Batch mode (fn non-NULL): the packets tk_etm4_pkt_lite can hold go to fn in batches, every
 * other packet to the parser's tk_etm4_packet_fn as before, all in trace order (a batch is
 * handed over before any single packet that follows it). A batch may be held back across
 * tk_etm4_parser_data calls: tk_etm4_parser_end or tk_etm4_parser_flush hands it over.
 * fn NULL: every packet goes to the tk_etm4_packet_fn (the default). */
void tk_etm4_parser_set_batch(tk_etm4_parser *p, tk_etm4_batch_fn fn, void *ctx);
/* The same with the atoms in runs (TK_ETM4_LITE_ATOMS records, up to 8 atom packets each)
 * instead of a record per atom packet: what a consumer that reads packets needs, at about
 * half the parser's cost per packet. The flow decoder takes the records of
 * tk_etm4_parser_set_batch. fn NULL: batch mode off. */
void tk_etm4_parser_set_batch_runs(tk_etm4_parser *p, tk_etm4_batch_fn fn, void *ctx);
/* Hand over the compact packets held back (batch mode). */
tk_status tk_etm4_parser_flush(tk_etm4_parser *p);
/* Forget all state (as at the start of trace); held-back compact packets are dropped. */
void tk_etm4_parser_reset(tk_etm4_parser *p);
/* Bytes of this source were lost (e.g. a corrupt frame): drop any partial packet and hunt for
 * the next A-Sync, reporting the skipped bytes with a NOT_SYNC packet. */
void tk_etm4_parser_resync(tk_etm4_parser *p);

/* ---- flow decoder ----------------------------------------------------------------------- */

typedef struct tk_etm4_decoder tk_etm4_decoder;

/* mem is borrowed and must outlive the decoder. Events are emitted in trace order; ranges carry
 * trace_id and byte_offset (the index of the packet that completed them). */
tk_status tk_etm4_decoder_new(const tk_etm4_config *cfg, const tk_cs_mem *mem, tk_event_fn fn,
                              void *ctx, tk_etm4_decoder **out);
void tk_etm4_decoder_free(tk_etm4_decoder *d);
/* Feed one packet (from a tk_etm4_parser). */
tk_status tk_etm4_decoder_packet(tk_etm4_decoder *d, const tk_etm4_packet *pkt);
/* Feed n compact packets (a tk_etm4_batch_fn of tk_etm4_parser_set_batch: a record per
 * packet, no TK_ETM4_LITE_ATOMS runs): the same as feeding each one's tk_etm4_pkt_from_lite
 * to tk_etm4_decoder_packet. */
tk_status tk_etm4_decoder_packets(tk_etm4_decoder *d, const tk_etm4_pkt_lite *pkts, size_t n);
/* End of trace: flushes pending elements. */
tk_status tk_etm4_decoder_end(tk_etm4_decoder *d);

/* ---- running a snapshot ------------------------------------------------------------- */

/* What a source's parser is given, as tk_etm4_run_snapshot gives it (on_stream): parallel
 * decoding records it to give the same to parsers of its own. */
typedef enum tk_etm4_stream_op {
    TK_ETM4_STREAM_DATA,   /* tk_etm4_parser_data(data, n, index) */
    TK_ETM4_STREAM_FRAMES, /* tk_etm4_parser_frames(data, n, index) */
    TK_ETM4_STREAM_RESYNC, /* tk_etm4_parser_resync */
    /* the last DATA or FRAMES call was abandoned (the frame alignment was found lost) after
     * the packet that ends at index: the bytes from index on were not parsed */
    TK_ETM4_STREAM_CUT,
} tk_etm4_stream_op;
/* Returns TK_OK to go on; any other status stops the run, which returns it. */
typedef tk_status (*tk_etm4_stream_fn)(void *ctx, tk_etm4_stream_op op, uint8_t id,
                                       const uint8_t *data, size_t n, uint64_t index);

/* Options for tk_etm4_run_snapshot. Unset callbacks are not called. */
typedef struct tk_etm4_run_opts {
    size_t size; /* sizeof(tk_etm4_run_opts) */
    int buffer;  /* index of the trace buffer; -1: the first one with an ETMv4 source */
    int id;      /* only this trace ID; -1: every ETMv4 source of the buffer */
    bool decode; /* run the flow decoders too (on_event) */
    tk_etm4_packet_fn on_packet;
    tk_event_fn on_event;
    tk_cs_error_fn on_frame_error; /* deformatter errors */
    void *ctx;
    const uint8_t *data; /* trace bytes to use instead of the buffer's file (tests, benches) */
    size_t data_len;
    /* Packets in batch mode (tk_etm4_parser_set_batch): compact packets here, the others to
     * on_packet. Used only without decode. */
    tk_etm4_batch_fn on_packets;
    /* What each parser is given, just before it is given it. */
    tk_etm4_stream_fn on_stream;
    /* Deformat only: the parsers are given nothing (on_stream still sees what they would be
     * given), so no packet comes and no bad packet starts a frame alignment search. */
    bool no_parse;
    /* on_packets gets the atoms in runs (tk_etm4_parser_set_batch_runs) */
    bool atom_runs;
} tk_etm4_run_opts;

/* Deformat one buffer of a snapshot and parse (and decode) every ETMv4 source in it. Sources
 * of other protocols are skipped. Errors: TK_ERR_IO, TK_ERR_INVALID, TK_ERR_NOMEM, or the first
 * non-OK status a callback returns. */
tk_status tk_etm4_run_snapshot(const tk_cs_snapshot *ss, const tk_etm4_run_opts *opts,
                               tk_diag *diag);

/* ---- parallel decoding ------------------------------------------------------------------ */

/* Decoding one source's trace on several threads, with the events the serial decode gives, in
 * the same order. The calling thread deformats the buffer, as tk_etm4_run_snapshot does but
 * without parsing (no_parse), and cuts what the source's parser would be given into pieces
 * before A-Sync patterns; each piece is parsed and decoded on a worker thread by a parser and
 * decoder of its own, into a sink of its own.
 *
 * Stitching: a piece's decoder starts knowing nothing; its events count from the first packet
 * after which it is settled (address and context known, nothing pending or speculative, see
 * coresight/etm4_state.h). The parser and decoder that decoded the previous pieces then decode
 * the piece up to that packet, into the previous sink, and both states are compared: equal,
 * the piece's own events are exactly the serial ones from there on; not equal (a return stack,
 * a speculation window across the cut, a piece with no settled point), the previous ones decode
 * the whole piece and the piece's sink is dropped. Sinks are finished in trace order. At most
 * jobs + 1 pieces are held at a time, so memory is bounded by the piece size.
 *
 * Formatter frames without FSYNC (ETB/ETR): at a bad packet the serial decode may search the
 * frame alignment again, which needs the packets. At the first bad packet of the serial flow
 * the parallel decode stops: the sinks finished stay, and the serial decode runs again from the
 * start into one more sink with its events before that point dropped (damaged ETB/ETR trace
 * decodes at serial speed or a little less). */
typedef struct tk_etm4_par_config {
    size_t size;        /* sizeof(tk_etm4_par_config) */
    unsigned jobs;      /* worker threads (>= 1) */
    size_t piece_bytes; /* trace bytes per piece (0: 512 KiB); cuts fall on the next A-Sync */
    void *ctx;          /* passed to the sink callbacks */
    /* A sink for one piece (a worker thread, or the calling thread; several workers may call
     * it at the same time, so what it shares needs a lock): its event function and state. */
    tk_status (*sink_new)(void *ctx, tk_event_fn *fn, void **sink);
    /* All of a sink's events are in (calling thread, in trace order): write or merge its
     * results, then free it. Its events' packet_index counts from the first packet its piece's
     * decoder saw: add packet_base for the index in the trace (known only once the piece is
     * stitched). Returns an error to stop. */
    tk_status (*sink_done)(void *ctx, void *sink, uint64_t packet_base);
    /* A piece's sink that is not used (its piece was decoded by the previous decoder). */
    void (*sink_drop)(void *ctx, void *sink);
} tk_etm4_par_config;

typedef struct tk_etm4_par_stats {
    size_t size; /* sizeof(tk_etm4_par_stats) */
    uint64_t pieces;
    uint64_t stitched;  /* cuts where the states agreed */
    uint64_t redecoded; /* pieces decoded again by the previous decoder */
    bool fallback;      /* a bad packet in ETB/ETR frames: the serial decode finished it */
} tk_etm4_par_stats;

/* Decode the buffer and source that opts selects (buffer, id, data/data_len, on_frame_error
 * and ctx for framing errors, which are handed on in trace order once kept; decode, on_event,
 * on_packet, on_packets, on_stream and no_parse are not used) with cfg->jobs threads. The
 * selection must be exactly one ETMv4 source: TK_ERR_UNSUPPORTED (said in diag, before any
 * event) otherwise, e.g. a buffer of several sources without an id. Other errors as
 * tk_etm4_run_snapshot's, or a sink callback's status. stats is optional. */
tk_status tk_etm4_decode_parallel(const tk_cs_snapshot *ss, const tk_etm4_run_opts *opts,
                                  const tk_etm4_par_config *cfg, tk_etm4_par_stats *stats,
                                  tk_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
