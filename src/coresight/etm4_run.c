/* SPDX-License-Identifier: BSD-2-Clause */
/* Wiring for a snapshot buffer: deformatter -> one packet parser per ETMv4 trace ID ->
 * (optionally) one flow decoder per trace ID. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

typedef struct stream {
    tk_etm4_parser *parser;
    tk_etm4_decoder *decoder;
} stream;

typedef struct runner {
    const tk_etm4_run_opts *o;
    int last_id; /* source of the last run handed to a parser, -1 before the first */
    stream s[128];
} runner;

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

static tk_status on_data(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    tk_etm4_parser *ps;
    tk_status st = switch_to(ctx, id, &ps);
    return st || !ps ? st : tk_etm4_parser_data(ps, data, n, index);
}

static tk_status on_packet(void *ctx, const tk_etm4_packet *pkt)
{
    runner *r = ctx;
    tk_status st;
    if (r->o->on_packet && (st = r->o->on_packet(r->o->ctx, pkt)))
        return st;
    stream *s = &r->s[pkt->trace_id & 0x7f];
    return s->decoder ? tk_etm4_decoder_packet(s->decoder, pkt) : TK_OK;
}

/* Whole frames of one source joined together (the deformatter's fast path). */
static tk_status on_frames(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    tk_etm4_parser *ps;
    tk_status st = switch_to(ctx, id, &ps);
    return st || !ps ? st : tk_etm4_parser_frames(ps, data, n, index);
}

/* A framing error loses bytes of unknown sources: every stream hunts for its next A-Sync. */
static tk_status on_frame_error(void *ctx, tk_status status, uint64_t offset, const char *msg)
{
    runner *r = ctx;
    tk_status st;
    if (r->last_id >= 0 && (st = tk_etm4_parser_flush(r->s[r->last_id].parser)))
        return st; /* packets before the error first */
    for (int id = 0; id < 128; id++)
        if (r->s[id].parser)
            tk_etm4_parser_resync(r->s[id].parser);
    return r->o->on_frame_error ? r->o->on_frame_error(r->o->ctx, status, offset, msg) : TK_OK;
}

/* Packets straight to the flow decoder (no user packet callback). */
static tk_status to_decoder(void *ctx, const tk_etm4_packet *pkt)
{
    return tk_etm4_decoder_packet(ctx, pkt);
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

static const tk_cs_mem *source_mem(const tk_cs_snapshot *ss, const tk_cs_source *src)
{
    if (src->core >= 0 && (size_t)src->core < ss->ncores)
        return ss->cores[src->core].mem;
    for (size_t i = 0; i < ss->ncores; i++)
        if (tk_cs_mem_nregions(ss->cores[i].mem))
            return ss->cores[i].mem;
    return ss->ncores ? ss->cores[0].mem : NULL;
}

static uint8_t *read_file(const char *path, size_t *len, tk_diag *diag, tk_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *st = tk_diag_set(diag, TK_ERR_IO, "cannot open trace buffer %s", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
    if (!buf) {
        fclose(f);
        *st = TK_ERR_NOMEM;
        return NULL;
    }
    if (size > 0 && fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(buf);
        *st = tk_diag_set(diag, TK_ERR_IO, "cannot read %s", path);
        return NULL;
    }
    fclose(f);
    *len = size > 0 ? (size_t)size : 0;
    *st = TK_OK;
    return buf;
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
        tk_etm4_config cfg;
        tk_etm4_config_from_source(&cfg, ss, src);
        if (o->decode)
            st = tk_etm4_decoder_new(&cfg, source_mem(ss, src), o->on_event, o->ctx, &s->decoder);
        /* Hand packets to their one consumer directly when there is only one: the per-packet
         * call is a noticeable part of the cost. */
        if (!st && o->decode && o->on_packet)
            st = tk_etm4_parser_new(&cfg, on_packet, r, &s->parser);
        else if (!st && o->decode) {
            /* Atoms and addresses reach the decoder in batches of compact packets. */
            st = tk_etm4_parser_new(&cfg, to_decoder, s->decoder, &s->parser);
            if (!st)
                tk_etm4_parser_set_batch(s->parser, to_decoder_batch, s->decoder);
        } else if (!st) {
            st = tk_etm4_parser_new(&cfg, o->on_packet ? o->on_packet : drop, o->ctx, &s->parser);
            if (!st && o->on_packets)
                tk_etm4_parser_set_batch(s->parser, o->on_packets, o->ctx);
        }
        nstreams++;
        raw_id = src->trace_id;
    }
    uint8_t *file = NULL;
    const uint8_t *data = o->data;
    size_t len = o->data_len;
    if (!st && !data) {
        file = read_file(buf->path, &len, diag, &st);
        data = file;
    }
    if (!st && buf->format == TK_CS_FMT_RAW) {
        /* Unformatted: the buffer holds a single source. */
        if (nstreams > 1)
            st = tk_diag_set(diag, TK_ERR_CONFIG, "unformatted buffer %s has %d sources", buf->name,
                             nstreams);
        else if (nstreams == 1)
            st = tk_etm4_parser_data(r->s[raw_id].parser, data, len, 0);
    } else if (!st) {
        tk_cs_deformatter *d;
        unsigned flags = buf->format == TK_CS_FMT_DSTREAM ? TK_CS_DEFMT_FSYNC : 0;
        st = tk_cs_deformatter_new(flags, on_data, on_frame_error, r, &d);
        if (!st) {
            tk_cs_deformatter_set_frames_fn(d, on_frames);
            st = tk_cs_deformat(d, data, len);
            if (!st)
                st = tk_cs_deformat_end(d);
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
    free(file);
    free(r);
    return st;
}
