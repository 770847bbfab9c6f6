/* SPDX-License-Identifier: BSD-2-Clause */
#include "cs_scan.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

/* Pieces of 64 KiB: a piece's sink keeps only what it learned, so small pieces cost no
 * memory, and a snapshot's buffer of 1 MiB still makes 16 to share among the threads. */
enum { DEFAULT_PIECE = 64 << 10 };

/* What one decode (or one piece of it) learned. */
typedef struct learner {
    tk_cs_code *code;
    tk_cli_cs_scan scan;
} learner;

static tk_status learn(void *ctx, const tk_event *ev)
{
    learner *l = ctx;
    tk_cli_cs_scan *s = &l->scan;
    if (ev->kind == TK_EV_RANGE) {
        if (!s->any) {
            s->any = true;
            s->id = ev->trace_id;
            s->isa = ev->isa;
            s->first = ev->first;
        } else if (ev->trace_id != s->id) {
            if (s->other_id == UINT32_MAX)
                s->other_id = ev->trace_id;
            return TK_OK;
        }
    }
    return tk_cs_code_learn(l->code, ev);
}

static tk_status quiet_frame_error(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    (void)ctx, (void)st, (void)offset, (void)msg;
    return TK_OK;
}

static void run_opts(tk_etm4_run_opts *o, int buffer, int id)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
    o->buffer = buffer;
    o->id = id;
    o->on_frame_error = quiet_frame_error;
}

static tk_status serial(const tk_cs_snapshot *ss, int buffer, int id, tk_cs_code *code,
                        tk_cli_cs_scan *out, tk_diag *diag)
{
    learner l = {.code = code, .scan = {.other_id = UINT32_MAX}};
    tk_etm4_run_opts o;
    run_opts(&o, buffer, id);
    o.decode = true;
    o.on_event = learn;
    o.ctx = &l;
    tk_status st = tk_etm4_run_snapshot(ss, &o, diag);
    *out = l.scan;
    return st;
}

/* ---- on several threads ------------------------------------------------------------------ */

/* The trace IDs the deformatter hands bytes to (bit per ID). */
static tk_status note_stream(void *ctx, tk_etm4_stream_op op, uint8_t id, const uint8_t *data,
                             size_t n, uint64_t index)
{
    (void)data, (void)index;
    uint64_t *ids = ctx;
    if ((op == TK_ETM4_STREAM_DATA || op == TK_ETM4_STREAM_FRAMES) && n)
        ids[id >> 6 & 1] |= 1ull << (id & 63);
    return TK_OK;
}

/* The one source that has trace in the buffer: a snapshot often declares a source per core
 * and traces one, and the parallel decode takes one. -1: none or several. The bytes come
 * from deformatting only, which does not search a lost frame alignment again as a decode
 * may; the parallel decode runs serially where that happens, and the pass starts over. */
static int traced_source(const tk_cs_snapshot *ss, int buffer, tk_diag *diag)
{
    uint64_t ids[2] = {0, 0};
    tk_etm4_run_opts o;
    run_opts(&o, buffer, -1);
    o.no_parse = true;
    o.on_stream = note_stream;
    o.ctx = ids;
    if (tk_etm4_run_snapshot(ss, &o, diag) != TK_OK)
        return -1;
    for (int k = 0; k < 2; k++)
        if (ids[k] && !(ids[k] & (ids[k] - 1)) && !ids[!k])
            return 64 * k + __builtin_ctzll(ids[k]);
    return -1;
}

/* The pieces' learners, joined in trace order on the calling thread. */
typedef struct joined {
    learner all;
    bool unsure; /* a piece learned what the serial pass might not */
} joined;

static tk_status piece_new(void *ctx, tk_event_fn *fn, void **sink)
{
    (void)ctx;
    learner *l = calloc(1, sizeof(*l));
    if (!l || tk_cs_code_new(&l->code) != TK_OK) {
        free(l);
        return TK_ERR_NOMEM;
    }
    l->scan.other_id = UINT32_MAX;
    *fn = learn;
    *sink = l;
    return TK_OK;
}

static void piece_drop(void *ctx, void *sink)
{
    (void)ctx;
    learner *l = sink;
    tk_cs_code_free(l->code);
    free(l);
}

static tk_status piece_done(void *ctx, void *sink, uint64_t packet_base)
{
    (void)packet_base;
    joined *j = ctx;
    learner *l = sink;
    tk_cli_cs_scan *s = &j->all.scan;
    /* a piece that saw two sources skipped the ranges of the second, which the serial pass
     * might have taken for the first */
    if (l->scan.other_id != UINT32_MAX || (s->any && l->scan.any && l->scan.id != s->id))
        j->unsure = true;
    if (!s->any && l->scan.any) {
        s->any = true;
        s->id = l->scan.id;
        s->isa = l->scan.isa;
        s->first = l->scan.first;
    }
    tk_status st = j->unsure ? TK_OK : tk_cs_code_learn_after(j->all.code, l->code);
    if (st == TK_ERR_UNSUPPORTED)
        j->unsure = true;
    piece_drop(ctx, sink);
    return st == TK_ERR_UNSUPPORTED ? TK_OK : st;
}

/* TK_OK with *done false: the pass must run serially. */
static tk_status parallel(const tk_cs_snapshot *ss, int buffer, int id, unsigned jobs,
                          size_t piece_bytes, tk_cs_code *code, tk_cli_cs_scan *out, bool *done)
{
    *done = false;
    tk_diag d;
    tk_diag_clear(&d);
    if (id < 0 && (id = traced_source(ss, buffer, &d)) < 0)
        return TK_OK;
    joined j = {.all.scan.other_id = UINT32_MAX};
    if (tk_cs_code_new(&j.all.code) != TK_OK)
        return TK_ERR_NOMEM;
    tk_etm4_run_opts o;
    run_opts(&o, buffer, id);
    tk_etm4_par_config pc = {.size = sizeof(pc),
                             .jobs = jobs,
                             .piece_bytes = piece_bytes ? piece_bytes : DEFAULT_PIECE,
                             .ctx = &j,
                             .sink_new = piece_new,
                             .sink_done = piece_done,
                             .sink_drop = piece_drop};
    tk_etm4_par_stats stats = {.size = sizeof(stats)};
    tk_status st = tk_etm4_decode_parallel(ss, &o, &pc, &stats, &d);
    /* errors too are left to the serial pass, which reports them as it always has */
    if (st == TK_OK && !stats.fallback && !j.unsure) {
        st = tk_cs_code_learn_after(code, j.all.code);
        *out = j.all.scan;
        out->parallel = true;
        *done = st == TK_OK;
    }
    tk_cs_code_free(j.all.code);
    return st == TK_ERR_NOMEM ? st : TK_OK;
}

tk_status tk_cli_cs_scan_run(const tk_cs_snapshot *ss, int buffer, int id, unsigned jobs,
                             size_t piece_bytes, tk_cs_code *code, tk_cli_cs_scan *out,
                             tk_diag *diag)
{
    bool done = false;
    if (jobs > 1) {
        tk_status st = parallel(ss, buffer, id, jobs, piece_bytes, code, out, &done);
        if (st != TK_OK)
            return st;
    }
    return done ? TK_OK : serial(ss, buffer, id, code, out, diag);
}
