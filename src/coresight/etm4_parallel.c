/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel ETMv4 flow decoding (etm4.h, tk_etm4_decode_parallel).
 *
 * The calling thread only deformats: tk_etm4_run_snapshot without parsing (no_parse) hands it
 * what the source's parser would be given (tk_etm4_stream_op), which it records and cuts into
 * pieces before A-Sync byte patterns. A worker replays a piece into a parser and decoder of its
 * own: the serial pipeline, cache-hot, on its stretch of trace.
 *
 * Stitching at the boundary between piece i-1 and i: piece i's lane starts knowing nothing and
 * settles after some packet (the decoder's state is known, etm4_state.h); it notes where that
 * packet ends and both states. The lane that decoded everything before ("the carry") is then
 * fed piece i's record, in the same chunks, until one of its packets ends there: with the same
 * parser and decoder states at the same byte, both lanes do the same from then on, so the
 * carry stops and piece i's events are the serial ones. Otherwise the carry decodes all of
 * piece i itself and piece i's events are dropped. A cut that is not a packet boundary of the
 * serial parse (a pattern inside a packet) just fails to stitch.
 *
 * Formatted buffers without FSYNC: the serial decode searches the frame alignment again after a
 * bad packet, which a deformatter that does not parse cannot do. The first bad packet of the
 * serial flow (seen by the carry, or by a lane after it settled) therefore ends the parallel
 * decode: what was handed over stays, and the serial decode runs again from the start with its
 * events before that point dropped. Damaged ETB/ETR trace decodes at serial speed or less. */
#include <stdlib.h>
#include <string.h>

#include "coresight/etm4_parallel_int.h"

enum { DEFAULT_PIECE = 512u << 10 };

const uint8_t *tk_par_op_bytes(const piece *p, const op *o)
{
    return o->ext ? o->ext : p->bytes + o->off; /* (never empty: empty runs are not kept) */
}

static void free_record(piece *p)
{
    free(p->bytes);
    free(p->ops);
    p->bytes = NULL;
    p->ops = NULL;
    p->nbytes = p->nops = p->cap_bytes = p->cap_ops = 0;
}

void tk_par_piece_free(par *pa, piece *p, bool drop_sink)
{
    if (!p)
        return;
    free_record(p);
    tk_etm4_parser_free(p->ps);
    if (p->dec && pa->ndecs < pa->max_decs)
        pa->decs[pa->ndecs++] = p->dec;
    else
        tk_etm4_decoder_free(p->dec);
    if (drop_sink && p->sink && pa->pc->sink_drop)
        pa->pc->sink_drop(pa->pc->ctx, p->sink);
    free(p);
}

/* ---- lanes: a parser and a decoder replaying records ---------------------------------- */

static tk_status discard(void *ctx, const tk_event *ev)
{
    (void)ctx, (void)ev;
    return TK_OK;
}

static tk_status lane_packet(void *ctx, const tk_etm4_packet *pkt)
{
    piece *p = ctx;
    tk_status st = tk_etm4_decoder_packet(p->dec, pkt);
    if (st)
        return st;
    /* a bad packet of the serial flow: where the serial decode may search the frames again
     * (an incomplete last packet starts no search) */
    if (p->pa->checked && tk_etm4_pkt_is_error(pkt) && pkt->type != TK_ETM4_INCOMPLETE_EOT &&
        (p->mode != LANE_RUN || p->settled || p->first))
        p->sign = true;
    const uint64_t end = pkt->index + pkt->size;
    if (p->mode == LANE_RUN && !p->settled && !p->first && tk_etm4_decoder_settled(p->dec)) {
        p->settled = true;
        p->settle_end = end;
        p->settle_count = tk_etm4_decoder_packet_count(p->dec);
        tk_etm4_decoder_get_state(p->dec, &p->dstate);
        tk_etm4_parser_get_state(p->ps, &p->pstate);
        /* events from here on are the piece's */
        tk_etm4_decoder_set_events(p->dec, p->sink_fn, p->sink);
    } else if (p->mode == LANE_SEAM && end >= p->target->settle_end) {
        /* decided at the first packet that reaches the target's settle point */
        p->mode = LANE_ALL;
        tk_etm4_dec_state d;
        tk_etm4_parser_state s;
        tk_etm4_decoder_get_state(p->dec, &d);
        tk_etm4_parser_get_state(p->ps, &s);
        if (end == p->target->settle_end && !p->sign && tk_etm4_decoder_settled(p->dec) &&
            tk_etm4_dec_state_equal(&d, &p->target->dstate) &&
            tk_etm4_parser_state_equal(&s, &p->target->pstate)) {
            p->matched = true;
            return TK_END; /* stops the parser: this lane's work is done */
        }
    }
    return TK_OK;
}

static tk_status lane_batch(void *ctx, const tk_etm4_pkt_lite *v, size_t n)
{
    const piece *p = ctx;
    return tk_etm4_decoder_packets(p->dec, v, n);
}

/* Replay src's record into lane from op *k, byte *at on: in chunks while chunked() says so,
 * then whole calls in batch mode. */
static tk_status replay(piece *lane, const piece *src, size_t *k, size_t *at,
                        bool (*chunked)(const piece *lane))
{
    tk_status st = TK_OK;
    bool batch = false;
    while (*k < src->nops && !st) {
        const op *o = &src->ops[*k];
        if (o->kind == TK_ETM4_STREAM_RESYNC) {
            tk_etm4_parser_resync(lane->ps);
            ++*k;
            continue;
        }
        const bool small = chunked(lane);
        if (!small && !batch) {
            if ((st = tk_etm4_parser_flush(lane->ps)))
                break;
            tk_etm4_parser_set_batch(lane->ps, lane_batch, lane);
            batch = true;
        }
        size_t n = o->n - *at;
        if (small && n > CHUNK)
            n = CHUNK;
        const uint8_t *d = tk_par_op_bytes(src, o) + *at;
        if (o->kind == TK_ETM4_STREAM_DATA)
            st = tk_etm4_parser_data(lane->ps, d, n, o->index + *at);
        else
            st = tk_etm4_parser_frames(lane->ps, d, n, o->index + *at + *at / 15);
        if ((*at += n) == o->n) {
            ++*k;
            *at = 0;
        }
    }
    return st;
}

static bool run_unsettled(const piece *lane)
{
    return !lane->first && !lane->settled;
}

static bool seam_open(const piece *lane)
{
    return lane->mode == LANE_SEAM;
}

static void *work(void *arg)
{
    piece *p = arg;
    const par *pa = p->pa;
    tk_status st = pa->pc->sink_new(pa->pc->ctx, &p->sink_fn, &p->sink);
    if (!st)
        tk_etm4_decoder_reset(p->dec, discard, NULL);
    if (!st)
        st = tk_etm4_parser_new(&pa->cfg, lane_packet, p, &p->ps);
    if (st) {
        p->fatal = st;
        return NULL;
    }
    if (p->first)
        tk_etm4_decoder_set_events(p->dec, p->sink_fn, p->sink);
    p->mode = LANE_RUN;
    size_t k = 0, at = 0;
    st = replay(p, p, &k, &at, run_unsettled);
    if (!st)
        st = tk_etm4_parser_flush(p->ps);
    p->fatal = st;
    return NULL;
}

/* ---- stitching ------------------------------------------------------------------------- */

/* The serial decode takes over for the events of packets from byte from on. */
static tk_status fall_back(par *pa, uint64_t from)
{
    pa->fallback = true;
    pa->fallback_from = from;
    return FALLBACK;
}

/* Join the oldest piece in flight onto the carry. */
static tk_status stitch_oldest(par *pa)
{
    piece *p = pa->flight[0];
    memmove(pa->flight, pa->flight + 1, --pa->nflight * sizeof(*pa->flight));
    pthread_join(p->thread, NULL);
    tk_status st = p->fatal;
    if (st) {
        tk_par_piece_free(pa, p, true);
        return st;
    }
    if (!pa->carry) { /* the first piece */
        free_record(p);
        pa->carry = p;
        return p->sign ? fall_back(pa, 0) : TK_OK;
    }
    piece *c = pa->carry;
    c->mode = p->settled ? LANE_SEAM : LANE_ALL;
    c->target = p;
    c->matched = false;
    /* packet by packet (no held-back compact packets) up to the settle point */
    if (c->mode == LANE_SEAM)
        tk_etm4_parser_set_batch(c->ps, NULL, NULL);
    size_t k = 0, at = 0;
    st = replay(c, p, &k, &at, seam_open);
    if (st == TK_END && c->matched) {
        /* from here on the piece's events are the serial ones */
        pa->st.stitched++;
        p->base = c->base + tk_etm4_decoder_packet_count(c->dec) - p->settle_count;
        p->out_from = p->settle_end;
        st = pa->pc->sink_done(pa->pc->ctx, c->sink, c->base);
        c->sink = NULL;
        tk_par_piece_free(pa, c, false);
        free_record(p);
        pa->carry = p;
        if (!st && p->sign)
            st = fall_back(pa, p->out_from);
        return st;
    }
    if (!st)
        st = tk_etm4_parser_flush(c->ps);
    pa->st.redecoded++;
    tk_par_piece_free(pa, p, true);
    if (!st && c->sign)
        st = fall_back(pa, c->out_from);
    return st;
}

tk_status tk_par_submit(par *pa)
{
    piece *p = pa->cur;
    pa->cur = NULL;
    if (!p || !p->nops) {
        tk_par_piece_free(pa, p, false);
        return TK_OK;
    }
    tk_status st;
    /* twice as many pieces as workers: a worker starts the next one while the oldest, whose
     * turn it is, still runs */
    while (pa->nflight > 2 * pa->pc->jobs)
        if ((st = stitch_oldest(pa))) {
            tk_par_piece_free(pa, p, false);
            return st;
        }
    p->pa = pa;
    /* A new decoder is made here, not on the worker: made on a worker thread (in the arena
     * glibc's malloc keeps for that thread), the same decode took 1.5x the CPU time (32 MiB,
     * --format ranges -j 2: 1.54-1.59 s against 0.95-1.01 s; the parser's place made no
     * difference). */
    if (pa->ndecs)
        p->dec = pa->decs[--pa->ndecs];
    else if ((st = tk_etm4_decoder_new(&pa->cfg, pa->mem, discard, NULL, &p->dec))) {
        tk_par_piece_free(pa, p, false);
        return st;
    }
    if (pthread_create(&p->thread, NULL, work, p)) {
        tk_par_piece_free(pa, p, false);
        return TK_ERR_NOMEM;
    }
    pa->flight[pa->nflight++] = p;
    pa->st.pieces++;
    return TK_OK;
}

/* ---- the serial decode, when it takes over ------------------------------------------- */

typedef struct tail_ctx {
    const par *pa;
    tk_event_fn fn;
    void *sink;
} tail_ctx;

static tk_status tail_event(void *ctx, const tk_event *ev)
{
    tail_ctx *t = ctx;
    return ev->byte_offset < t->pa->fallback_from ? TK_OK : t->fn(t->sink, ev);
}

static tk_status tail_frame_error(void *ctx, tk_status status, uint64_t offset, const char *msg)
{
    tail_ctx *t = ctx;
    const tk_etm4_run_opts *u = t->pa->user;
    return offset < t->pa->fallback_from || !u->on_frame_error
               ? TK_OK
               : u->on_frame_error(u->ctx, status, offset, msg);
}

static tk_status serial_tail(par *pa, const tk_cs_snapshot *ss, const tk_etm4_run_opts *o,
                             tk_diag *diag)
{
    tail_ctx t = {pa, NULL, NULL};
    tk_status st = tk_par_release_errors(pa, pa->fallback_from);
    if (!st)
        st = pa->pc->sink_new(pa->pc->ctx, &t.fn, &t.sink);
    if (st)
        return st;
    tk_etm4_run_opts s = *o;
    s.decode = true;
    s.no_parse = false;
    s.on_stream = NULL;
    s.on_packet = NULL;
    s.on_packets = NULL;
    s.on_event = tail_event;
    s.on_frame_error = tail_frame_error;
    s.ctx = &t;
    st = tk_etm4_run_snapshot(ss, &s, diag);
    tk_status s2 = pa->pc->sink_done(pa->pc->ctx, t.sink, 0);
    return st ? st : s2;
}

/* ---- the whole ------------------------------------------------------------------------- */

/* The one source the options select. */
static const tk_cs_source *pick_source(const tk_cs_snapshot *ss, const tk_etm4_run_opts *o,
                                       int *buffer, tk_diag *diag, tk_status *st)
{
    int b = o->buffer >= 0 ? o->buffer : tk_cs_snapshot_default_buffer(ss);
    *st = TK_OK;
    if (b < 0 || (size_t)b >= ss->nbuffers) {
        *st = tk_diag_set(diag, TK_ERR_UNSUPPORTED, "no ETMv4 trace buffer");
        return NULL;
    }
    const tk_cs_source *found = NULL;
    int n = 0;
    for (size_t i = 0; i < ss->nsources; i++) {
        const tk_cs_source *s = &ss->sources[i];
        if (s->buffer == b && tk_cs_protocol_is_etm4(s->protocol) &&
            (o->id < 0 || s->trace_id == o->id) && (!found || s->trace_id != found->trace_id)) {
            found = found ? found : s;
            n++;
        }
    }
    if (n != 1) {
        *st = n ? tk_diag_set(diag, TK_ERR_UNSUPPORTED,
                              "buffer %s has %d ETMv4 sources: parallel decoding takes one "
                              "(a trace ID)",
                              ss->buffers[b].name, n)
                : tk_diag_set(diag, TK_ERR_UNSUPPORTED, "buffer %s has no ETMv4 source",
                              ss->buffers[b].name);
        return NULL;
    }
    *buffer = b;
    return found;
}

static void par_free(par *pa)
{
    if (!pa)
        return;
    for (size_t i = 0; i < pa->ndecs; i++)
        tk_etm4_decoder_free(pa->decs[i]);
    for (size_t i = 0; i < pa->nerrs; i++)
        free(pa->errs[i].msg);
    free(pa->errs);
    free(pa->decs);
    free(pa->flight);
    free(pa);
}

/* After the record: stitch what is in flight and finish the carry. */
static tk_status finish(par *pa, tk_status st)
{
    if (!st)
        st = tk_par_submit(pa);
    /* the pieces in flight are joined (and freed) even after an error */
    while (pa->nflight) {
        if (!st) {
            st = stitch_oldest(pa);
            continue;
        }
        piece *p = pa->flight[0];
        memmove(pa->flight, pa->flight + 1, --pa->nflight * sizeof(*pa->flight));
        pthread_join(p->thread, NULL);
        tk_par_piece_free(pa, p, true);
    }
    piece *c = pa->carry;
    pa->carry = NULL;
    if (c) {
        if (!st)
            st = tk_etm4_parser_end(c->ps);
        if (!st)
            st = tk_etm4_decoder_end(c->dec);
        if (!st && c->sign)
            st = fall_back(pa, c->out_from); /* a bad last packet */
        if (!st) {
            st = pa->pc->sink_done(pa->pc->ctx, c->sink, c->base);
            c->sink = NULL;
        }
        tk_par_piece_free(pa, c, true);
    }
    tk_par_piece_free(pa, pa->cur, false);
    pa->cur = NULL;
    return st;
}

tk_status tk_etm4_decode_parallel(const tk_cs_snapshot *ss, const tk_etm4_run_opts *opts,
                                  const tk_etm4_par_config *cfg, tk_etm4_par_stats *stats,
                                  tk_diag *diag)
{
    if (!ss || !opts || opts->size < sizeof(*opts) || !cfg || cfg->size < sizeof(*cfg) ||
        !cfg->jobs || !cfg->sink_new || !cfg->sink_done)
        return TK_ERR_INVALID;
    tk_status st;
    int b;
    const tk_cs_source *src = pick_source(ss, opts, &b, diag, &st);
    if (!src)
        return st;
    par *pa = calloc(1, sizeof(*pa));
    if (pa) {
        pa->max_decs = 2 * cfg->jobs + 2;
        pa->flight = calloc(2 * cfg->jobs + 1, sizeof(*pa->flight));
        pa->decs = calloc(pa->max_decs, sizeof(*pa->decs));
    }
    if (!pa || !pa->flight || !pa->decs) {
        par_free(pa);
        return TK_ERR_NOMEM;
    }
    tk_etm4_config_from_source(&pa->cfg, ss, src);
    pa->mem = tk_cs_snapshot_source_mem(ss, src);
    pa->pc = cfg;
    pa->user = opts;
    pa->id = src->trace_id;
    pa->checked = ss->buffers[b].format == TK_CS_FMT_FRAMED;
    pa->piece_bytes = cfg->piece_bytes ? cfg->piece_bytes : DEFAULT_PIECE;
    pa->st.size = sizeof(pa->st);

    /* the record points into the buffer: it must outlive the deformatting */
    uint8_t *file = NULL;
    pa->buf = opts->data;
    pa->len = opts->data_len;
    if (!pa->buf) {
        if ((st = tk_cs_buffer_read(&ss->buffers[b], &file, &pa->len, diag))) {
            par_free(pa);
            return st;
        }
        pa->buf = file;
    }
    tk_etm4_run_opts o = *opts;
    o.data = pa->buf;
    o.data_len = pa->len;
    o.buffer = b;
    o.id = src->trace_id;
    o.decode = false;
    o.no_parse = true;
    o.on_packet = NULL;
    o.on_packets = NULL;
    o.on_event = NULL;
    o.on_frame_error = tk_par_on_frame_error;
    o.on_stream = tk_par_on_stream;
    o.ctx = pa;
    st = tk_etm4_run_snapshot(ss, &o, diag);
    if (pa->err)
        st = pa->err;
    st = finish(pa, st);
    if (st == FALLBACK && pa->fallback) {
        pa->st.fallback = true;
        st = serial_tail(pa, ss, &o, diag);
    } else if (!st) {
        st = tk_par_release_errors(pa, UINT64_MAX);
    }
    if (stats && stats->size >= sizeof(*stats))
        *stats = pa->st;
    par_free(pa);
    free(file);
    return st;
}
