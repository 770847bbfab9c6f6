/* SPDX-License-Identifier: BSD-2-Clause */
/* Wiring for a snapshot buffer: deformatter -> one packet parser per ETMv4 trace ID ->
 * (optionally) one flow decoder per trace ID.
 *
 * A buffer of formatter frames without FSYNC (ETB/ETR) has nothing that marks where frames
 * start: after a dropped or inserted byte every later frame is read off and the rest of the
 * buffer would be garbage. So on an ETMv4 error packet from such a buffer, or data of a trace
 * ID none of its sources has, the frame alignment is searched just after that offset
 * (tk_cs_frame_search with an A-Sync check, see frame_align.h and docs/robustness.md, "ETB
 * frame alignment"); when it is found elsewhere than where the deformatter reads frames, the
 * loss is reported and the deformatter restarts at the alignment found. The search runs only
 * after such a sign (and once more at its window's end when it decided nothing), at most once
 * per window of trace it judged, so a clean buffer costs one test per packet that is not an
 * atom or address (and a deformatter call per 16 KiB) and a hopeless one stays linear. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coresight/frame_align.h"
#include "tracekit/etm4.h"
#include "util/compiler.h"

/* Bytes of frames the alignment search judges at each candidate position, and the least it
 * judges near the end of a buffer or before a second damage (frame_align.h). */
#define ALIGN_WINDOW TK_CS_ALIGN_WINDOW
#define ALIGN_WINDOW_MIN TK_CS_ALIGN_WINDOW_MIN
/* Bytes between the first sign of lost alignment and where the search starts. */
#define ALIGN_MARGIN 64
/* A buffer without FSYNC goes to the deformatter in pieces of at most this size, so that a
 * search that decided nothing can be tried again where it is due (a search fails inside one
 * piece and is due at least a window later: the next piece ends there). A piece boundary
 * costs about 500 Ir (runs and batches cut in two): 64 per MiB. */
#define RETRY_PIECE ALIGN_WINDOW

struct runner;

typedef struct stream {
    tk_etm4_parser *parser;
    tk_etm4_decoder *decoder;
    struct runner *r;
} stream;

typedef struct runner {
    const tk_etm4_run_opts *o;
    int last_id; /* source of the last run handed to a parser, -1 before the first */
    stream s[128];
    /* Frame realignment (formatted buffers without FSYNC only). */
    const tk_cs_snapshot *ss;
    int buffer;
    const uint8_t *data;
    size_t len;
    bool deformatting;       /* errors may start a search (not while the parsers end) */
    bool known[128];         /* trace IDs of the buffer's sources, and IDs already searched at */
    bool ids[128];           /* trace IDs of the buffer's sources (set with probe) */
    tk_cs_etm4_probe *probe; /* the search's content check, made at the first search */
    uint64_t base;           /* frames are read at base + 16n */
    uint64_t next_search;    /* no search for a sign before this offset */
    uint64_t retry_at;       /* search again there (0: no), the last search decided nothing */
    uint64_t first_sign;     /* the first sign of the trouble searches are about */
    int first_id;            /* its kind, as lost_id */
    bool realign;            /* set with the two below when the deformatter must restart */
    uint64_t lost_at;        /* the first sign of trouble at the old alignment */
    int lost_id;             /* that sign: -1 an ETMv4 error packet, else data of this trace ID */
    uint64_t found_at;       /* where frames start again */
} runner;

static tk_status unparsed(runner *r, uint8_t id, uint64_t index);

/* The parser of source id, after handing over what the previous source's parser holds
 * back: parsers in batch mode keep compact packets, and packets and events of different
 * sources must come out in buffer order, exactly as without batches. NULL: not traced. */
static tk_status switch_to(runner *r, uint8_t id, tk_etm4_parser **out)
{
    tk_status st;
    *out = NULL;
    if (id >= 128 || !r->s[id].parser)
        return TK_OK;
    if (id != r->last_id) {
        if (r->last_id >= 0 && (st = tk_etm4_parser_flush(r->s[r->last_id].parser)))
            return st;
        r->last_id = id;
    }
    *out = r->s[id].parser;
    return TK_OK;
}

/* The parser for a run of source id at index (switch_to); NULL with *st the status to return
 * when there is none (unparsed()'s) or an error. */
static tk_etm4_parser *run_parser(runner *r, uint8_t id, uint64_t index, tk_status *st)
{
    tk_etm4_parser *ps;
    *st = switch_to(r, id, &ps);
    if (!*st && !ps)
        *st = unparsed(r, id, index);
    return *st ? NULL : ps;
}

static tk_status on_data(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    tk_status st;
    tk_etm4_parser *ps = run_parser(ctx, id, index, &st);
    if (!ps)
        return st;
    const runner *r = ctx;
    if (r->o->on_stream &&
        (st = r->o->on_stream(r->o->ctx, TK_ETM4_STREAM_DATA, id, data, n, index)))
        return st;
    return r->o->no_parse ? TK_OK : tk_etm4_parser_data(ps, data, n, index);
}

/* ---- frame realignment ------------------------------------------------------------------ */

/* Search the frame alignment after the first sign of trouble at offset symptom; *found is the
 * alignment when exactly one candidate passes and it is not the current one. The search starts
 * ALIGN_MARGIN bytes later: the sign may come before the damage (a packet that began before
 * it, the frame the damage is in), and frames that hold damaged bytes would make the right
 * alignment fail its check. Its window shrinks to what the buffer still holds, and when no
 * alignment passes, to shorter windows that may end before a second damage
 * (tk_cs_frame_search). Cost: a failed search (at most about 2 x 8 window parses) lets no
 * other start within its first window; a successful one covers the window it judged, and
 * signs after that window may start the next (a second damage), so each search is paid for by
 * at least ALIGN_WINDOW_MIN bytes of trace. */
static tk_status search_alignment(runner *r, uint64_t symptom, uint64_t from, int id, bool *found)
{
    *found = false;
    if (symptom < r->next_search || from + 15 + ALIGN_WINDOW_MIN > r->len)
        return TK_OK;
    tk_status st;
    if (!r->probe && (st = tk_cs_etm4_probe_new(r->ss, r->buffer, r->ids, &r->probe)))
        return st;
    const size_t avail = r->len - (size_t)from - 15;
    size_t at = 0, window = avail < ALIGN_WINDOW ? avail - avail % 16 : ALIGN_WINDOW;
    r->next_search = from + window;
    if (!r->retry_at) {
        r->first_sign = symptom;
        r->first_id = id;
    }
    r->retry_at = 0;
    if (tk_cs_frame_search(r->data, r->len, (size_t)from, ALIGN_WINDOW, ALIGN_WINDOW_MIN, r->ids,
                           tk_cs_etm4_probe_check, r->probe, &at, &window) != TK_OK) {
        /* Nothing decided. The parsers' errors stop once they hunt for an A-Sync (frames read
         * off never give one), and an even shift leaves no unknown ID: there may be no
         * other sign. So the search is tried again at the window's end. */
        r->retry_at = r->next_search;
        return TK_OK;
    }
    r->next_search = from + window;
    if ((at - r->base) % 16 == 0)
        return TK_OK; /* damage in place: frames are read at the right alignment */
    *found = true;
    r->lost_at = r->first_sign;
    r->lost_id = r->first_id;
    r->found_at = at;
    /* after the restart, unknown IDs are signs of a new damage again */
    memcpy(r->known, r->ids, sizeof(r->known));
    return TK_OK;
}

/* Was the frame alignment lost before offset? TK_ERR_STATE with r->realign set when it was
 * found elsewhere: it unwinds the deformatter, which tk_etm4_run_snapshot restarts there. */
static tk_status realign_from(runner *r, uint64_t offset, int id)
{
    bool found;
    tk_status st = search_alignment(r, offset, offset + ALIGN_MARGIN, id, &found);
    if (st || !found)
        return st;
    r->realign = true;
    return TK_ERR_STATE;
}

/* After a packet of a buffer without FSYNC: on an error, was the frame alignment lost? The
 * error has been handed on already (it is reported as such). */
static tk_status check_alignment(runner *r, const tk_etm4_packet *pkt)
{
    if (!tk_etm4_pkt_is_error(pkt) || pkt->type == TK_ETM4_INCOMPLETE_EOT || !r->deformatting)
        return TK_OK;
    tk_status st = realign_from(r, pkt->index, -1);
    /* the parser stops after this packet: the rest of its run is not parsed */
    if (st == TK_ERR_STATE && r->o->on_stream) {
        tk_status s2 = r->o->on_stream(r->o->ctx, TK_ETM4_STREAM_CUT, pkt->trace_id, NULL, 0,
                                       pkt->index + pkt->size);
        if (s2)
            return s2;
    }
    return st;
}

/* Data of a source without a parser. An ID no source of the buffer has is the other sign of
 * frames read off (an odd shift puts data bytes in the ID positions), and the only one when
 * the sources parsed are silent meanwhile. Each such ID starts one search at most: a source
 * missing from the snapshot's description costs one search, not one per run. */
static tk_status unparsed(runner *r, uint8_t id, uint64_t index)
{
    if (!r->data || id >= 128 || r->known[id] || !r->deformatting || index < r->next_search)
        return TK_OK;
    r->known[id] = true;
    return realign_from(r, index, id);
}

/* ---- packets and frames -------------------------------------------------------------------- */

static tk_status on_packet(void *ctx, const tk_etm4_packet *pkt)
{
    runner *r = ctx;
    tk_status st;
    if (r->o->on_packet && (st = r->o->on_packet(r->o->ctx, pkt)))
        return st;
    stream *s = &r->s[pkt->trace_id & 0x7f];
    if (s->decoder && (st = tk_etm4_decoder_packet(s->decoder, pkt)))
        return st;
    return r->data && tk_etm4_pkt_is_error(pkt) ? check_alignment(r, pkt) : TK_OK;
}

/* Whole frames of one source joined together (the deformatter's fast path). */
static tk_status on_frames(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    tk_status st;
    tk_etm4_parser *ps = run_parser(ctx, id, index, &st);
    if (!ps)
        return st;
    const runner *r = ctx;
    if (r->o->on_stream &&
        (st = r->o->on_stream(r->o->ctx, TK_ETM4_STREAM_FRAMES, id, data, n, index)))
        return st;
    return r->o->no_parse ? TK_OK : tk_etm4_parser_frames(ps, data, n, index);
}

/* The same with frames that restate the source joined too: longer runs, fewer calls and fewer
 * packets split between runs (used when no one records the stream). */
static tk_status on_frames_at(void *ctx, uint8_t id, const uint8_t *data, const uint16_t *at,
                              size_t n, uint64_t index)
{
    tk_status st;
    tk_etm4_parser *ps = run_parser(ctx, id, index, &st);
    if (!ps)
        return st;
    const runner *r = ctx;
    return r->o->no_parse ? TK_OK : tk_etm4_parser_frames_at(ps, data, at, n, index);
}

/* A framing error loses bytes of unknown sources: every stream hunts for its next A-Sync. */
static tk_status on_frame_error(void *ctx, tk_status status, uint64_t offset, const char *msg)
{
    runner *r = ctx;
    tk_status st;
    if (r->last_id >= 0 && (st = tk_etm4_parser_flush(r->s[r->last_id].parser)))
        return st; /* packets before the error first */
    for (int id = 0; id < 128; id++)
        if (r->s[id].parser) {
            if (r->o->on_stream && (st = r->o->on_stream(r->o->ctx, TK_ETM4_STREAM_RESYNC,
                                                         (uint8_t)id, NULL, 0, offset)))
                return st;
            tk_etm4_parser_resync(r->s[id].parser);
        }
    return r->o->on_frame_error ? r->o->on_frame_error(r->o->ctx, status, offset, msg) : TK_OK;
}

/* Packets straight to the flow decoder (no user packet callback). */
static tk_status to_decoder(void *ctx, const tk_etm4_packet *pkt)
{
    return tk_etm4_decoder_packet(ctx, pkt);
}

/* An error packet of a buffer without FSYNC: to the decoder, then the alignment check. */
TK_NOINLINE TK_COLD static tk_status decoder_error(const stream *s, const tk_etm4_packet *pkt)
{
    tk_status st = tk_etm4_decoder_packet(s->decoder, pkt);
    return st ? st : check_alignment(s->r, pkt);
}

/* The same as to_decoder for a buffer without FSYNC (ctx: the stream). The test comes first
 * so that the common case stays a tail call (no cost on a clean buffer but the test). */
static tk_status to_decoder_checked(void *ctx, const tk_etm4_packet *pkt)
{
    const stream *s = ctx;
    if (tk_etm4_pkt_is_error(pkt))
        return decoder_error(s, pkt);
    return tk_etm4_decoder_packet(s->decoder, pkt);
}

/* Compact packets straight to the flow decoder. */
static tk_status to_decoder_batch(void *ctx, const tk_etm4_pkt_lite *pkts, size_t n)
{
    return tk_etm4_decoder_packets(ctx, pkts, n);
}

static tk_status drop(void *ctx, const tk_etm4_packet *pkt)
{
    (void)ctx, (void)pkt;
    return TK_OK;
}

/* Packets to the caller only (no decode), for a buffer without FSYNC (ctx: the stream). */
static tk_status to_caller_checked(void *ctx, const tk_etm4_packet *pkt)
{
    stream *s = ctx;
    const tk_etm4_run_opts *o = s->r->o;
    tk_status st = o->on_packet ? o->on_packet(o->ctx, pkt) : TK_OK;
    return st || !tk_etm4_pkt_is_error(pkt) ? st : check_alignment(s->r, pkt);
}

tk_status tk_etm4_run_snapshot(const tk_cs_snapshot *ss, const tk_etm4_run_opts *o, tk_diag *diag)
{
    if (!ss || !o || o->size < sizeof(*o))
        return TK_ERR_INVALID;
    int b = o->buffer;
    if (b < 0) {
        b = tk_cs_snapshot_default_buffer(ss);
        if (b < 0)
            return tk_diag_set(diag, TK_ERR_UNSUPPORTED, "snapshot has no ETMv4 trace source");
    }
    if ((size_t)b >= ss->nbuffers)
        return tk_diag_set(diag, TK_ERR_INVALID, "no trace buffer %d", b);
    const tk_cs_buffer *buf = &ss->buffers[b];

    runner *r = calloc(1, sizeof(*r));
    if (!r)
        return TK_ERR_NOMEM;
    r->o = o;
    r->last_id = -1;
    r->ss = ss;
    r->buffer = b;
    /* Frames without FSYNC: errors may mean the alignment was lost (checked callbacks). */
    const bool checked = buf->format == TK_CS_FMT_FRAMED;
    tk_status st = TK_OK;
    int nstreams = 0, raw_id = -1;
    for (size_t i = 0; i < ss->nsources && !st; i++) {
        const tk_cs_source *src = &ss->sources[i];
        if (src->buffer != b || !tk_cs_protocol_is_etm4(src->protocol))
            continue;
        if (o->id >= 0 && src->trace_id != o->id)
            continue;
        stream *s = &r->s[src->trace_id];
        if (s->parser)
            continue; /* two sources with one ID: the first wins */
        s->r = r;
        tk_etm4_config cfg;
        tk_etm4_config_from_source(&cfg, ss, src);
        if (o->decode)
            st = tk_etm4_decoder_new(&cfg, tk_cs_snapshot_source_mem(ss, src), o->on_event, o->ctx,
                                     &s->decoder);
        /* Hand packets to their one consumer directly when there is only one: the per-packet
         * call is a noticeable part of the cost. */
        if (!st && o->decode && o->on_packet)
            st = tk_etm4_parser_new(&cfg, on_packet, r, &s->parser);
        else if (!st && o->decode) {
            /* Atoms and addresses reach the decoder in batches of compact packets. */
            st = checked ? tk_etm4_parser_new(&cfg, to_decoder_checked, s, &s->parser)
                         : tk_etm4_parser_new(&cfg, to_decoder, s->decoder, &s->parser);
            if (!st)
                tk_etm4_parser_set_batch(s->parser, to_decoder_batch, s->decoder);
        } else if (!st) {
            st = checked ? tk_etm4_parser_new(&cfg, to_caller_checked, s, &s->parser)
                         : tk_etm4_parser_new(&cfg, o->on_packet ? o->on_packet : drop, o->ctx,
                                              &s->parser);
            if (!st && o->on_packets && o->atom_runs)
                tk_etm4_parser_set_batch_runs(s->parser, o->on_packets, o->ctx);
            else if (!st && o->on_packets)
                tk_etm4_parser_set_batch(s->parser, o->on_packets, o->ctx);
        }
        nstreams++;
        raw_id = src->trace_id;
    }
    uint8_t *file = NULL;
    const uint8_t *data = o->data;
    size_t len = o->data_len;
    if (!st && !data) {
        st = tk_cs_buffer_read(buf, &file, &len, diag);
        data = file;
    }
    if (!st && buf->format == TK_CS_FMT_RAW) {
        /* Unformatted: the buffer holds a single source. */
        if (nstreams > 1)
            st = tk_diag_set(diag, TK_ERR_CONFIG, "unformatted buffer %s has %d sources", buf->name,
                             nstreams);
        else if (nstreams == 1) {
            if (o->on_stream)
                st = o->on_stream(o->ctx, TK_ETM4_STREAM_DATA, (uint8_t)raw_id, data, len, 0);
            if (!st && !o->no_parse)
                st = tk_etm4_parser_data(r->s[raw_id].parser, data, len, 0);
        }
    } else if (!st) {
        tk_cs_deformatter *d;
        unsigned flags = tk_cs_buffer_deformat_flags(buf->format);
        st = tk_cs_deformatter_new(flags, on_data, on_frame_error, r, &d);
        if (!st) {
            /* Runs for on_stream are as tk_etm4_parser_frames takes them (parallel decoding
             * replays them so). */
            if (o->on_stream)
                tk_cs_deformatter_set_frames_fn(d, on_frames);
            else
                tk_cs_deformatter_set_frames_at_fn(d, on_frames_at);
            if (checked) {
                r->data = data;
                r->len = len;
                for (size_t i = 0; i < ss->nsources; i++)
                    if (ss->sources[i].buffer == b)
                        r->known[ss->sources[i].trace_id & 0x7f] = true;
            }
            uint64_t pos = 0;
            for (;;) {
                /* A search that decided nothing is tried again at retry_at: a buffer without
                 * FSYNC goes to the deformatter in pieces so that the loop sees when it is
                 * reached (a call per RETRY_PIECE bytes, nothing per frame). */
                size_t end = len;
                if (r->data && len - (size_t)pos > RETRY_PIECE)
                    end = (size_t)pos + RETRY_PIECE;
                if (r->retry_at > pos && r->retry_at < end)
                    end = (size_t)r->retry_at; /* exactly there */
                r->deformatting = true;
                st = tk_cs_deformat(d, data + pos, end - (size_t)pos);
                if (!st && end == len)
                    st = tk_cs_deformat_end(d);
                r->deformatting = false;
                if (!st && end < len) {
                    bool found = false;
                    pos = end;
                    if (r->retry_at && pos >= r->retry_at &&
                        (st = search_alignment(r, pos, pos, -1, &found)))
                        break;
                    if (!found)
                        continue;
                } else if (st != TK_ERR_STATE || !r->realign)
                    break;
                /* The alignment was lost: report it, every source hunts for its next A-Sync
                 * (as after a framing error) and frames are read from the alignment found. */
                r->realign = false;
                char why[64], msg[256];
                if (r->lost_id < 0)
                    snprintf(why, sizeof(why), "an ETMv4 packet error");
                else
                    snprintf(why, sizeof(why), "data of trace ID 0x%x, no source of the buffer",
                             (unsigned)r->lost_id);
                snprintf(msg, sizeof(msg),
                         "frame alignment lost (first sign at offset %llu: %s), frames found "
                         "again at offset %llu: bytes in between skipped, each source resumes "
                         "at its first A-Sync once its trace ID is seen again",
                         (unsigned long long)r->lost_at, why, (unsigned long long)r->found_at);
                if ((st = on_frame_error(r, TK_ERR_FORMAT, r->lost_at, msg)))
                    break;
                pos = r->base = r->found_at;
                tk_cs_deformatter_restart(d, pos);
            }
            tk_cs_deformatter_free(d);
        }
    }
    /* The last source's held-back packets came before anything the ends report. */
    if (!st && r->last_id >= 0)
        st = tk_etm4_parser_flush(r->s[r->last_id].parser);
    for (int id = 0; id < 128; id++) {
        stream *s = &r->s[id];
        if (!st && s->parser)
            st = tk_etm4_parser_end(s->parser);
        if (!st && s->decoder)
            st = tk_etm4_decoder_end(s->decoder);
        tk_etm4_parser_free(s->parser);
        tk_etm4_decoder_free(s->decoder);
    }
    tk_cs_etm4_probe_free(r->probe);
    free(file);
    free(r);
    return st;
}
