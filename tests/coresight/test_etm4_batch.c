/* SPDX-License-Identifier: BSD-2-Clause */
/* The parser's batch modes (compact packets, tk_etm4_parser_set_batch, and with the atoms in
 * runs, tk_etm4_parser_set_batch_runs) and the decoder's batch entry (tk_etm4_decoder_packets)
 * against the complete paths, so that the fast paths can never diverge silently: the same
 * packets (type, index, size, printed values) and the same events, on real snapshots and on
 * damaged copies of a real stream (random byte mutations, fed in random pieces). Every test
 * runs in each batch mode (its state), the parser-level ones also with the walk of atom runs
 * built without pext (test_snapshots and test_joined_frames go through tk_etm4_run_snapshot,
 * whose parsers take the CPU's build; test_joined_frames compares the deformatter's builds
 * itself). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "coresight/deformat_int.h"
#include "coresight/etm4_state.h"
#include "tracekit/etm4.h"

/* ---- recording ---------------------------------------------------------------------- */

typedef struct rec {
    uint64_t index, hash;
    uint8_t type, size, header, lite;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap, nlite, nruns; /* nruns: TK_ETM4_LITE_ATOMS records */
    uint8_t trace_id;            /* for compact packets fed to the parser directly */
} recs;

static uint64_t fnv(const void *data, size_t n, uint64_t h)
{
    const uint8_t *s = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static void push(recs *l, rec r)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->r = realloc(l->r, l->cap * sizeof(*l->r));
        assert_non_null(l->r);
    }
    l->r[l->n++] = r;
}

static rec make_rec(const tk_etm4_packet *p, uint8_t lite)
{
    char text[256];
    int len = tk_etm4_pkt_format(p, text, sizeof(text));
    uint64_t h = fnv(text, (size_t)len, 1469598103934665603ull);
    h = fnv(&p->trace_id, 1, h);
    return (rec){p->index, h, p->type, p->size, p->header, lite};
}

static tk_status on_pkt(void *ctx, const tk_etm4_packet *p)
{
    push(ctx, make_rec(p, 0));
    return TK_OK;
}

static tk_status on_lite(void *ctx, const tk_etm4_pkt_lite *v, size_t n)
{
    recs *l = ctx;
    assert_true(n >= 1);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += tk_etm4_lite_packets(&v[i]);
    assert_int_equal(tk_etm4_lite_count_packets(v, n), total);
    for (size_t i = 0; i < n; i++) {
        tk_etm4_packet p;
        /* Only atoms (one by one or in runs of 1 to 8) and addresses come as compact
         * packets. */
        assert_true((v[i].type >= TK_ETM4_ATOM_F1 && v[i].type <= TK_ETM4_ATOM_F6) ||
                    (v[i].type >= TK_ETM4_ADDR_MATCH && v[i].type <= TK_ETM4_ADDR_L_64IS1) ||
                    v[i].type == TK_ETM4_LITE_ATOMS);
        const unsigned np = tk_etm4_lite_packets(&v[i]);
        assert_true(np >= 1 && np <= 8);
        l->nruns += v[i].type == TK_ETM4_LITE_ATOMS;
        for (unsigned k = 0; k < np; k++) {
            tk_etm4_pkt_from_lite_at(&v[i], k, l->trace_id, &p);
            push(l, make_rec(&p, 1));
            l->nlite++;
        }
    }
    return TK_OK;
}

/* The batch modes a test runs in (its state; NULL: MODE_RECORDS). */
enum {
    MODE_RECORDS,     /* a record per packet */
    MODE_RUNS,        /* atom runs, the walk this CPU takes */
    MODE_RUNS_NO_PEXT /* atom runs, the walk without pext (the same where pext is not used) */
};

static void set_batch(tk_etm4_parser *p, int mode, tk_etm4_batch_fn fn, void *ctx)
{
    if (mode == MODE_RECORDS) {
        tk_etm4_parser_set_batch(p, fn, ctx);
        return;
    }
    tk_etm4_parser_set_batch_runs(p, fn, ctx);
    if (mode == MODE_RUNS_NO_PEXT)
        tk_etm4_parser_use_pext(p, false);
}

static int mode_of(void **state)
{
    return *state ? *(const int *)*state : MODE_RECORDS;
}

/* Whether the test runs with atom runs. */
static bool runs_of(void **state)
{
    return mode_of(state) != MODE_RECORDS;
}

static void same_packets(const recs *a, const recs *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->r[i].index, b->r[i].index);
        assert_int_equal(a->r[i].type, b->r[i].type);
        assert_int_equal(a->r[i].size, b->r[i].size);
        assert_int_equal(a->r[i].header, b->r[i].header);
        assert_int_equal(a->r[i].hash, b->r[i].hash);
    }
}

/* Events: every field that identifies them. */
typedef struct evs {
    uint64_t *h;
    size_t n, cap, ranges;
} evs;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    evs *l = ctx;
    uint64_t h = 1469598103934665603ull;
    uint64_t f[] = {ev->kind,    ev->end,  ev->taken,       ev->indirect,     ev->cause,
                    ev->first,   ev->last, ev->ninsn,       ev->next,         ev->context,
                    ev->time,    ev->priv, ev->byte_offset, ev->packet_index, (uint64_t)ev->status,
                    ev->trace_id};
    h = fnv(f, sizeof(f), h);
    if (ev->message)
        h = fnv(ev->message, strlen(ev->message), h);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->h = realloc(l->h, l->cap * sizeof(*l->h));
        assert_non_null(l->h);
    }
    l->h[l->n++] = h;
    l->ranges += ev->kind == TK_EV_RANGE;
    return TK_OK;
}

static void same_events(const evs *a, const evs *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        assert_int_equal(a->h[i], b->h[i]);
}

/* ---- real snapshots ----------------------------------------------------------------- */

static tk_status ignore_pkt(void *ctx, const tk_etm4_packet *p)
{
    (void)ctx, (void)p;
    return TK_OK;
}

static void run(const tk_cs_snapshot *ss, bool decode, tk_etm4_packet_fn pf, tk_etm4_batch_fn bf,
                void *pctx, evs *ev)
{
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = -1;
    o.id = -1;
    o.decode = decode;
    o.on_packet = pf;
    o.on_packets = bf;
    o.on_event = on_event;
    o.ctx = decode ? (void *)ev : pctx;
    tk_diag diag;
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
}

static void check_snapshot(const char *rel, bool runs)
{
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss;
    tk_diag diag;
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_OK);
    free(dir);

    /* Packets: complete parser vs batch mode. With several sources the compact packets are
     * checked per source below; the whole-buffer comparison needs the trace ID in them. */
    recs full = {0}, batch = {0};
    run(ss, false, on_pkt, NULL, &full, NULL);
    int b = tk_cs_snapshot_default_buffer(ss);
    for (size_t s = 0; s < ss->nsources; s++) {
        const tk_cs_source *src = &ss->sources[s];
        if (src->buffer != b || !tk_cs_protocol_is_etm4(src->protocol))
            continue;
        tk_etm4_run_opts o;
        memset(&o, 0, sizeof(o));
        o.size = sizeof(o);
        o.buffer = b;
        o.id = src->trace_id;
        o.on_packet = on_pkt;
        o.on_packets = on_lite;
        o.atom_runs = runs;
        recs one = {0};
        o.ctx = &one;
        one.trace_id = src->trace_id;
        assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
        recs ref = {0};
        o.on_packets = NULL;
        o.ctx = &ref;
        assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
        same_packets(&ref, &one);
        assert_true(runs || !one.nruns);
        batch.nruns += one.nruns;
        batch.nlite += one.nlite;
        batch.n += one.n;
        free(one.r);
        free(ref.r);
    }
    assert_int_equal(batch.n, full.n);
    assert_true(!runs || batch.nruns > 0 || batch.nlite < 100); /* atom runs were seen */

    /* Decoding: packets one by one (a packet callback forces the complete path) vs batches. */
    evs e_full = {0}, e_batch = {0};
    run(ss, true, ignore_pkt, NULL, NULL, &e_full);
    run(ss, true, NULL, NULL, NULL, &e_batch);
    same_events(&e_full, &e_batch);
    print_message("%s: %zu packets (%zu compact), %zu events (%zu ranges), identical\n", rel,
                  full.n, batch.nlite, e_full.n, e_full.ranges);
    free(full.r);
    free(e_full.h);
    free(e_batch.h);
    tk_cs_snapshot_free(ss);
}

static void test_snapshots(void **state)
{
    static const char *const list[] = {
        "opencsd/snapshots/bugfix-exact-match",   "opencsd/snapshots/juno_r1_1",
        "opencsd/snapshots/juno-ret-stck",        "opencsd/snapshots/a57_single_step",
        "opencsd/snapshots/init-short-addr",      "opencsd/snapshots-ete/ete_spec_1",
        "opencsd/snapshots-ete/q_elem",           "opencsd/snapshots-ete/infrastructure",
        "opencsd/snapshots-ete/002-ack_test_scr",
    };
    for (size_t i = 0; i < sizeof(list) / sizeof(list[0]); i++)
        check_snapshot(list[i], runs_of(state));
}

/* ---- damaged streams ---------------------------------------------------------------- */

typedef struct bytes {
    uint8_t *b;
    size_t n;
} bytes;

static tk_status grab(void *ctx, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    bytes *s = ctx;
    (void)index;
    if (id == 0x12) {
        s->b = realloc(s->b, s->n + n);
        memcpy(s->b + s->n, d, n);
        s->n += n;
    }
    return TK_OK;
}

/* Parse (and decode) b in pieces of random size (the same pieces for both paths). */
typedef struct both {
    recs pk;
    evs ev;
    tk_etm4_decoder *dec;
} both;

static tk_status full_to_both(void *ctx, const tk_etm4_packet *p)
{
    both *x = ctx;
    push(&x->pk, make_rec(p, 0));
    return tk_etm4_decoder_packet(x->dec, p);
}

static tk_status lite_to_both(void *ctx, const tk_etm4_pkt_lite *v, size_t n)
{
    both *x = ctx;
    x->pk.trace_id = 0x12;
    assert_int_equal(on_lite(&x->pk, v, n), TK_OK);
    for (size_t i = 0; i < n; i++) {
        /* the decoder takes a record per packet: atom runs go to it packet by packet */
        if (v[i].type != TK_ETM4_LITE_ATOMS) {
            tk_status st = tk_etm4_decoder_packets(x->dec, &v[i], 1);
            if (st)
                return st;
            continue;
        }
        for (unsigned k = 0; k < v[i].size; k++) {
            tk_etm4_packet p;
            tk_etm4_pkt_from_lite_at(&v[i], k, 0x12, &p);
            tk_status st = tk_etm4_decoder_packet(x->dec, &p);
            if (st)
                return st;
        }
    }
    return TK_OK;
}

static void parse_pieces(const tk_etm4_config *cfg, const tk_cs_mem *mem, const uint8_t *b,
                         size_t n, uint64_t seed, bool batch, int mode, both *x)
{
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_decoder_new(cfg, mem, on_event, &x->ev, &x->dec), TK_OK);
    assert_int_equal(tk_etm4_parser_new(cfg, full_to_both, x, &p), TK_OK);
    if (batch)
        set_batch(p, mode, lite_to_both, x);
    uint64_t s = seed;
    for (size_t i = 0; i < n;) {
        size_t k = 1 + tk_test_xorshift64(&s) % 97;
        if (k > n - i)
            k = n - i;
        /* indices jump between pieces, as deformatted runs do */
        assert_int_equal(tk_etm4_parser_data(p, b + i, k, i * 2), TK_OK);
        i += k;
    }
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    assert_int_equal(tk_etm4_decoder_end(x->dec), TK_OK);
    tk_etm4_parser_free(p);
    tk_etm4_decoder_free(x->dec);
}

/* bugfix-exact-match: the snapshot, and the deformatted bytes of its one source (0x12) and its
 * configuration. */
static tk_cs_snapshot *load_stream(bytes *stream, const tk_cs_source **src, tk_etm4_config *cfg)
{
    char *dir = tk_test_data_path("opencsd/snapshots/bugfix-exact-match");
    tk_cs_snapshot *ss;
    tk_diag diag;
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_OK);
    free(dir);
    size_t raw_len;
    uint8_t *raw = tk_test_read_file(ss->buffers[0].path, &raw_len);
    assert_non_null(raw);
    tk_cs_deformatter *d;
    assert_int_equal(tk_cs_deformatter_new(0, grab, NULL, stream, &d), TK_OK);
    assert_int_equal(tk_cs_deformat(d, raw, raw_len), TK_OK);
    assert_int_equal(tk_cs_deformat_end(d), TK_OK);
    tk_cs_deformatter_free(d);
    free(raw);
    *src = tk_cs_snapshot_find_id(ss, 0x12);
    assert_non_null(*src);
    tk_etm4_config_from_source(cfg, ss, *src);
    return ss;
}

static void test_mutations(void **state)
{
    bytes stream = {0};
    const tk_cs_source *src;
    tk_etm4_config cfg;
    tk_cs_snapshot *ss = load_stream(&stream, &src, &cfg);
    const tk_cs_mem *mem = ss->cores[src->core >= 0 ? src->core : 0].mem;

    /* A 64 KiB window of the stream keeps the test quick; 40 damaged copies of it. */
    size_t win = stream.n < 65536 ? stream.n : 65536;
    uint8_t *copy = malloc(win);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    size_t errors = 0, lites = 0;
    for (int round = 0; round < 40; round++) {
        size_t start = (size_t)(tk_test_xorshift64(&s) % (stream.n - win + 1));
        memcpy(copy, stream.b + start, win);
        int nmut = round == 0 ? 0 : 1 + (int)(tk_test_xorshift64(&s) % 24);
        for (int m = 0; m < nmut; m++) {
            size_t at = (size_t)(tk_test_xorshift64(&s) % win);
            switch (tk_test_xorshift64(&s) % 4) {
            case 0: /* a random byte */
                copy[at] = (uint8_t)tk_test_xorshift64(&s);
                break;
            case 1: /* one flipped bit */
                copy[at] ^= (uint8_t)(1u << (tk_test_xorshift64(&s) % 8));
                break;
            case 2: /* a fake address header */
                copy[at] = (uint8_t)(0x90 + tk_test_xorshift64(&s) % 16);
                break;
            default: /* a stretch of zeros (A-Sync prefixes) */
                for (size_t z = 0; z < 12 && at + z < win; z++)
                    copy[at + z] = 0;
                break;
            }
        }
        uint64_t seed = tk_test_xorshift64(&s) | 1;
        both a = {0}, b = {0};
        parse_pieces(&cfg, mem, copy, win, seed, false, MODE_RECORDS, &a);
        parse_pieces(&cfg, mem, copy, win, seed, true, mode_of(state), &b);
        same_packets(&a.pk, &b.pk);
        same_events(&a.ev, &b.ev);
        assert_true(b.pk.nlite > 0);
        assert_true(runs_of(state) == (b.pk.nruns > 0));
        lites += b.pk.nlite;
        for (size_t i = 0; i < a.pk.n; i++)
            errors +=
                a.pk.r[i].type >= TK_ETM4_INCOMPLETE_EOT && a.pk.r[i].type <= TK_ETM4_RESERVED_CFG;
        free(a.pk.r);
        free(b.pk.r);
        free(a.ev.h);
        free(b.ev.h);
    }
    /* The damage must really have exercised the error paths. */
    assert_true(errors > 20);
    print_message("40 damaged windows: %zu error packets, %zu compact packets, identical\n", errors,
                  lites);
    free(copy);
    free(stream.b);
    tk_cs_snapshot_free(ss);
}

/* ---- joined frames ----------------------------------------------------------------- */

/* Every deformatted byte as (id, index, value), whichever callback it came through. */
typedef struct dbytes {
    uint64_t *v; /* id << 56 | index << 8 | byte */
    size_t n, cap, joined_calls;
} dbytes;

static void dpush(dbytes *l, uint8_t id, uint64_t index, uint8_t b)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 65536;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        assert_non_null(l->v);
    }
    l->v[l->n++] = (uint64_t)id << 56 | index << 8 | b;
}

static tk_status d_run(void *ctx, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    for (size_t k = 0; k < n; k++)
        dpush(ctx, id, index + k, d[k]);
    return TK_OK;
}

static tk_status d_frames(void *ctx, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    dbytes *l = ctx;
    /* whole frames; the last may have had one ID byte restating the source */
    assert_true(n % 15 == 0 || n % 15 == 14);
    l->joined_calls++;
    for (size_t k = 0; k < n; k++)
        dpush(l, id, index + k + k / 15, d[k]);
    return TK_OK;
}

static tk_status d_frames_at(void *ctx, uint8_t id, const uint8_t *d, const uint16_t *at, size_t n,
                             uint64_t index)
{
    dbytes *l = ctx;
    /* whole frames of 15 bytes, or 14 after an ID byte restating the source, each starting
     * 16 after the one before */
    l->joined_calls++;
    assert_int_equal(at[0], 0);
    for (size_t k = 0, start = 0; k < n; k++) {
        if (k > start && at[k] != at[k - 1] + 1) {
            assert_true(k - start == 15 || k - start == 14);
            assert_int_equal(at[k], at[start] + 16);
            start = k;
        }
        dpush(l, id, index + at[k], d[k]);
    }
    return TK_OK;
}

static tk_status d_err(void *ctx, tk_status st, uint64_t off, const char *msg)
{
    (void)st, (void)msg;
    dpush(ctx, 0xff, off, 0);
    return TK_OK;
}

/* Per-frame runs, joined frames (tk_cs_deformatter_set_frames_fn) and joined frames across
 * ID bytes that restate the source (tk_cs_deformatter_set_frames_at_fn), both joined ways also
 * without AVX2: the same bytes. */
static void deformat_both(const uint8_t *raw, size_t len, unsigned flags, size_t piece)
{
    dbytes l[5] = {{0}};
    tk_cs_deformatter *d;
    for (int joined = 0; joined < 5; joined++) {
        assert_int_equal(tk_cs_deformatter_new(flags, d_run, d_err, &l[joined], &d), TK_OK);
        if (joined == 1 || joined == 3)
            tk_cs_deformatter_set_frames_fn(d, d_frames);
        else if (joined == 2 || joined == 4)
            tk_cs_deformatter_set_frames_at_fn(d, d_frames_at);
        if (joined >= 3)
            tk_cs_deformatter_use_avx2(d, false);
        for (size_t i = 0; i < len; i += piece)
            assert_int_equal(tk_cs_deformat(d, raw + i, len - i < piece ? len - i : piece), TK_OK);
        assert_int_equal(tk_cs_deformat_end(d), TK_OK);
        tk_cs_deformatter_free(d);
    }
    for (int joined = 1; joined < 5; joined++) {
        assert_int_equal(l[0].n, l[joined].n);
        assert_memory_equal(l[0].v, l[joined].v, l[0].n * sizeof(*l[0].v));
    }
    /* memory-aligned frames of one source fed at once are joined (DSTREAM frames: one at a
     * time; each tk_cs_deformat call hands its joined frames over before returning); this
     * capture restates its ID every 8 frames, which ends a run only without frames_at */
    if (!(flags & TK_CS_DEFMT_FSYNC) && piece >= len) {
        assert_true(l[1].joined_calls * 4 < len / 16);
        assert_true(l[2].joined_calls * 100 < len / 16);
        assert_true(l[4].joined_calls * 100 < len / 16);
    }
    for (int i = 0; i < 5; i++)
        free(l[i].v);
}

/* The deformatter's joined runs hold the same bytes at the same indices as per-frame runs,
 * and the whole pipeline (deformatter, parser in batch mode over joined frames) gives the same
 * packets as the complete path, on the real buffer and on damaged copies of it. */
static void test_joined_frames(void **state)
{
    char *dir = tk_test_data_path("opencsd/snapshots/bugfix-exact-match");
    tk_cs_snapshot *ss;
    tk_diag diag;
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_OK);
    free(dir);
    size_t len;
    uint8_t *raw = tk_test_read_file(ss->buffers[0].path, &len);
    assert_non_null(raw);
    uint8_t *copy = malloc(len);
    uint64_t s = 0x1234567887654321ull;
    for (int round = 0; round < 6; round++) {
        memcpy(copy, raw, len);
        for (int m = 0; round && m < 40; m++) {
            size_t at = (size_t)(tk_test_xorshift64(&s) % len);
            /* ID bytes (odd even-position bytes), reserved IDs and random data */
            copy[at] = (at & 1) || tk_test_xorshift64(&s) % 2
                           ? (uint8_t)tk_test_xorshift64(&s)
                           : (uint8_t)(tk_test_xorshift64(&s) % 0x80 * 2 + 1);
        }
        deformat_both(copy, len, 0, round ? 1 + tk_test_xorshift64(&s) % 5000 : len);
        tk_etm4_run_opts o;
        memset(&o, 0, sizeof(o));
        o.size = sizeof(o);
        o.buffer = 0;
        o.id = -1;
        o.on_packet = on_pkt;
        o.data = copy;
        o.data_len = len;
        recs full = {0}, batch = {0};
        o.ctx = &full;
        assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
        batch.trace_id = 0x12; /* the only source in this buffer */
        o.on_packets = on_lite;
        o.atom_runs = runs_of(state);
        o.ctx = &batch;
        assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
        same_packets(&full, &batch);
        assert_true(batch.nlite > full.n / 2);
        assert_true(runs_of(state) == (batch.nruns > 0));
        free(full.r);
        free(batch.r);
    }
    /* DSTREAM framing: no two frames are adjacent, nothing is joined across FSYNCs. */
    size_t frames = len / 16;
    uint8_t *ds = malloc(frames * 20);
    for (size_t f = 0; f < frames; f++) {
        static const uint8_t fsync[4] = {0xff, 0xff, 0xff, 0x7f};
        memcpy(ds + f * 20, fsync, 4);
        memcpy(ds + f * 20 + 4, raw + f * 16, 16);
    }
    deformat_both(ds, frames * 20, TK_CS_DEFMT_FSYNC, 4096);
    free(ds);
    /* A DSTREAM capture: joined runs stop at the block footers, indices stay file offsets. */
    char *path = tk_test_data_path("opencsd/snapshots/a55-test-tpiu/DSTREAM_0.bin");
    size_t ds_len;
    uint8_t *capture = tk_test_read_file(path, &ds_len);
    free(path);
    assert_non_null(capture);
    static const size_t pieces[] = {1, 7, 509, 4096};
    for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++)
        deformat_both(capture, ds_len, TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_DSTREAM_BLOCKS, pieces[i]);
    free(capture);
    free(copy);
    free(raw);
    tk_cs_snapshot_free(ss);
}

/* Joined frames of any layout (tk_etm4_parser_frames_at): the batch path over them gives the
 * complete parser's packets for one tk_etm4_parser_data call per frame, on damaged windows of
 * the real stream laid out in frames of 15 and 14 bytes at random, handed over in runs of
 * random length (as the deformatter's joined runs), so packets straddle frames and runs. */
/* The parser's state after each joined run of ways 1 and 2 (the same runs): the batch path
 * keeps the address history in registers in a form of its own, and the history's valid bits
 * show in no packet, so they are compared here. */
#define MAX_RUNS 4096
typedef struct run_states {
    tk_etm4_parser_state s[MAX_RUNS];
    size_t n;
} run_states;

static void frames_at_packets(const tk_etm4_config *cfg, const uint8_t *b, size_t n,
                              const uint8_t *len14, uint64_t seed, int way, int mode, recs *out,
                              run_states *states)
{
    size_t nf = 0, pos = 0;
    static uint16_t at[65536];
    static size_t start[65536 / 14 + 2];
    while (pos < n) { /* frame f: its bytes from start[f], at index 16 f */
        size_t k = len14[nf % 251] ? 14 : 15;
        start[nf] = pos;
        for (size_t i = 0; i < k && pos < n; i++)
            at[pos++] = (uint16_t)(16 * nf + i);
        nf++;
    }
    start[nf] = n;
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(cfg, on_pkt, out, &p), TK_OK);
    if (way)
        set_batch(p, mode, on_lite, out);
    uint64_t s = seed;
    for (size_t f = 0; f < nf;) {
        size_t g = way == 0 ? f + 1 : f + 1 + tk_test_xorshift64(&s) % 300; /* frames f..g-1 */
        if (g > nf)
            g = nf;
        if (way == 0) /* the complete parser, one call per frame */
            assert_int_equal(tk_etm4_parser_data(p, b + start[f], start[g] - start[f], 16 * f),
                             TK_OK);
        else /* at[] counts from the run's first frame */
            for (size_t k = start[f]; k < start[g]; k++)
                at[k] = (uint16_t)(at[k] - 16 * f);
        if (way) {
            assert_int_equal(tk_etm4_parser_frames_at(p, b + start[f], at + start[f],
                                                      start[g] - start[f], 16 * f),
                             TK_OK);
            assert_true(states->n < MAX_RUNS);
            tk_etm4_parser_get_state(p, &states->s[states->n++]);
        }
        f = g;
    }
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    tk_etm4_parser_free(p);
}

static void test_frames_at(void **state)
{
    bytes stream = {0};
    const tk_cs_source *src;
    tk_etm4_config cfg;
    tk_cs_snapshot *ss = load_stream(&stream, &src, &cfg);

    const size_t win = 60000; /* at[] is 16 bits: 60000 bytes are at most 4286 frames */
    assert_true(stream.n >= win);
    uint8_t *copy = malloc(win), len14[251];
    uint64_t s = 0x0123456789abcdefull;
    size_t errors = 0, lites = 0, runs = 0;
    for (int round = 0; round < 24; round++) {
        size_t start = (size_t)(tk_test_xorshift64(&s) % (stream.n - win + 1));
        memcpy(copy, stream.b + start, win);
        for (int m = 0; round && m < (int)(tk_test_xorshift64(&s) % 24); m++) {
            size_t at = (size_t)(tk_test_xorshift64(&s) % win);
            copy[at] = tk_test_xorshift64(&s) % 2
                           ? (uint8_t)tk_test_xorshift64(&s)
                           : (uint8_t)(0x90 + tk_test_xorshift64(&s) % 16); /* addresses */
        }
        for (size_t f = 0; f < sizeof(len14); f++) /* none, some or most frames of 14 bytes */
            len14[f] = tk_test_xorshift64(&s) % 4 < (unsigned)round % 5;
        uint64_t seed = tk_test_xorshift64(&s);
        recs way[3] = {{0}, {.trace_id = 0x12}, {.trace_id = 0x12}};
        static run_states states[3];
        for (int w = 0; w < 3; w++) { /* complete per frame, complete joined, batch joined */
            states[w].n = 0;
            frames_at_packets(&cfg, copy, win, len14, seed, w, mode_of(state), &way[w], &states[w]);
        }
        for (int w = 1; w < 3; w++)
            same_packets(&way[0], &way[w]);
        assert_int_equal(states[1].n, states[2].n);
        for (size_t i = 0; i < states[1].n; i++)
            assert_true(tk_etm4_parser_state_equal(&states[1].s[i], &states[2].s[i]));
        runs += states[1].n;
        assert_true(way[2].nlite > way[0].n / 2);
        assert_true(runs_of(state) == (way[2].nruns > 0));
        lites += way[2].nlite;
        for (size_t i = 0; i < way[0].n; i++)
            errors += way[0].r[i].type >= TK_ETM4_INCOMPLETE_EOT &&
                      way[0].r[i].type <= TK_ETM4_RESERVED_CFG;
        for (int w = 0; w < 3; w++)
            free(way[w].r);
    }
    assert_true(errors > 10);
    print_message("24 windows in frames of 15 and 14 bytes: %zu error packets, %zu compact "
                  "packets, identical; parser states after %zu runs equal\n",
                  errors, lites, runs);
    free(copy);
    free(stream.b);
    tk_cs_snapshot_free(ss);
}

/* The address history's valid bits (§6.4.12: how many low bits of each entry were given since
 * the last Trace Info reset it) show in no packet, and in real trace a 64-bit address soon sets
 * them all; here every kind of address packet follows a Trace Info in random order, and the
 * batch path must leave the parser in the complete parser's state after every call. */
static void test_address_history_state(void **state)
{
    enum { N = 6000 };
    static uint8_t b[N + 64];
    uint64_t s = 0x5eed5eedull;
    size_t n = 0;
    for (int k = 0; k < 11; k++)
        b[n++] = 0x00;
    b[n++] = 0x80; /* A-Sync */
    while (n < N) {
        const unsigned r = (unsigned)(tk_test_xorshift64(&s) % 16);
        if (r < 2) { /* Trace Info, no sections: the history is reset */
            b[n++] = 0x01;
            b[n++] = 0x00;
        } else if (r < 6) { /* atoms */
            for (unsigned k = (unsigned)(tk_test_xorshift64(&s) % 5); k; k--)
                b[n++] = (uint8_t)(0xc0 + tk_test_xorshift64(&s) % 64);
        } else if (r < 10) { /* short address, IS0 or IS1, one or two bytes */
            b[n++] = (uint8_t)(0x95 + tk_test_xorshift64(&s) % 2);
            const uint8_t b1 = (uint8_t)tk_test_xorshift64(&s);
            b[n++] = b1;
            if (b1 & 0x80)
                b[n++] = (uint8_t)tk_test_xorshift64(&s);
        } else if (r < 12) { /* exact match */
            b[n++] = (uint8_t)(0x90 + tk_test_xorshift64(&s) % 3);
        } else { /* long 32-bit or 64-bit address, IS0 or IS1 */
            static const uint8_t h[4] = {0x9a, 0x9b, 0x9d, 0x9e};
            const uint8_t hh = h[tk_test_xorshift64(&s) % 4];
            b[n++] = hh;
            for (int k = hh < 0x9d ? 4 : 8; k; k--)
                b[n++] = (uint8_t)tk_test_xorshift64(&s);
        }
    }
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.trace_id = 0x12;
    tk_etm4_config_init(&cfg);
    size_t calls = 0, low = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        recs full = {0}, lite = {.trace_id = 0x12};
        tk_etm4_parser *p[2];
        assert_int_equal(tk_etm4_parser_new(&cfg, on_pkt, &full, &p[0]), TK_OK);
        assert_int_equal(tk_etm4_parser_new(&cfg, on_pkt, &lite, &p[1]), TK_OK);
        set_batch(p[1], mode_of(state), on_lite, &lite);
        uint64_t cut = seed;
        for (size_t i = 0; i < n;) {
            size_t k = 1 + tk_test_xorshift64(&cut) % (seed * 40);
            if (k > n - i)
                k = n - i;
            tk_etm4_parser_state st[2];
            for (int w = 0; w < 2; w++) {
                assert_int_equal(tk_etm4_parser_data(p[w], b + i, k, i), TK_OK);
                tk_etm4_parser_get_state(p[w], &st[w]);
            }
            assert_true(tk_etm4_parser_state_equal(&st[0], &st[1]));
            low += st[0].addr_bits[0] < 32;
            calls++;
            i += k;
        }
        for (int w = 0; w < 2; w++) {
            assert_int_equal(tk_etm4_parser_end(p[w]), TK_OK);
            tk_etm4_parser_free(p[w]);
        }
        same_packets(&full, &lite);
        assert_true(lite.nlite > full.n / 2);
        assert_true(runs_of(state) == (lite.nruns > 0));
        free(full.r);
        free(lite.r);
    }
    assert_true(low > calls / 20); /* states with few valid bits were compared */
    print_message("address history: parser states after %zu calls equal (%zu with fewer than "
                  "32 valid bits)\n",
                  calls, low);
}

/* Every header 0xc0-0xff is an atom packet of the complete parser (the batch path takes a run
 * of them without looking at each one), and the batch path gives the same packets for all 64,
 * in runs of every length from 1 to 64 between address packets and one of 600, cut
 * anywhere. */
static void test_every_atom_header(void **state)
{
    uint8_t b[4096];
    size_t n = 0;
    for (int k = 0; k < 11; k++)
        b[n++] = 0x00;
    b[n++] = 0x80; /* A-Sync */
    for (unsigned run = 1; run <= 64; run++) {
        for (unsigned k = 0; k < run; k++)
            b[n++] = (uint8_t)(0xc0 + (k * 7 + run) % 64);
        b[n++] = 0x95; /* a short address */
        b[n++] = (uint8_t)(run & 0x7f);
    }
    /* a run longer than the 255 positions the run mode looks ahead */
    for (unsigned k = 0; k < 600; k++)
        b[n++] = (uint8_t)(0xc0 + k % 64);
    b[n++] = 0x95;
    b[n++] = 0x01;
    assert_true(n <= sizeof(b));
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.trace_id = 0x12;
    tk_etm4_config_init(&cfg);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        recs full = {0}, lite = {.trace_id = 0x12};
        for (int batch = 0; batch < 2; batch++) {
            recs *l = batch ? &lite : &full;
            tk_etm4_parser *p;
            assert_int_equal(tk_etm4_parser_new(&cfg, on_pkt, l, &p), TK_OK);
            if (batch)
                set_batch(p, mode_of(state), on_lite, l);
            uint64_t s = seed;
            for (size_t i = 0; i < n;) {
                size_t k = seed == 1 ? n : 1 + tk_test_xorshift64(&s) % 40;
                if (k > n - i)
                    k = n - i;
                assert_int_equal(tk_etm4_parser_data(p, b + i, k, i), TK_OK);
                i += k;
            }
            assert_int_equal(tk_etm4_parser_end(p), TK_OK);
            tk_etm4_parser_free(p);
        }
        size_t atoms = 0;
        for (size_t i = 0; i < full.n; i++)
            if (full.r[i].header >= 0xc0) {
                assert_true(full.r[i].type >= TK_ETM4_ATOM_F1 && full.r[i].type <= TK_ETM4_ATOM_F6);
                atoms++;
            }
        assert_int_equal(atoms, 64 * 65 / 2 + 600);
        same_packets(&full, &lite);
        assert_true(lite.nlite >= atoms);
        assert_true(runs_of(state) == (lite.nruns > 0));
        free(full.r);
        free(lite.r);
    }
}

/* Atom runs over frames with wide gaps between them (at[] jumping by hundreds: a record holds
 * its packets' offsets in a byte each, so a run must end before a gap over 255) and frames of
 * a few bytes (several gaps in one run of 8): packet indices as one tk_etm4_parser_data call
 * per frame gives them. */
static void test_runs_wide_gaps(void **state)
{
    enum { N = 700 }; /* 700 bytes in frames at most 306 apart: positions below 65536 */
    static uint8_t b[N];
    static uint16_t at[N];
    uint64_t s = 0xfeedull;
    size_t n = 0;
    for (int k = 0; k < 11; k++)
        b[n++] = 0x00;
    b[n++] = 0x80; /* A-Sync */
    while (n < N - 3) {
        if (tk_test_xorshift64(&s) % 8) { /* mostly atoms */
            b[n++] = (uint8_t)(0xc0 + tk_test_xorshift64(&s) % 64);
        } else { /* a short address */
            b[n++] = 0x95;
            b[n++] = (uint8_t)(tk_test_xorshift64(&s) & 0x7f);
        }
    }
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.trace_id = 0x12;
    tk_etm4_config_init(&cfg);
    for (uint64_t seed = 1; seed <= 6; seed++) {
        /* frames of 1 to 6 bytes, the next one up to 300 positions on (or 2) */
        size_t starts[N + 1], nf = 0;
        uint32_t pos = 0;
        uint64_t r = seed;
        for (size_t i = 0; i < n;) {
            const size_t len = 1 + tk_test_xorshift64(&r) % 6;
            starts[nf++] = i;
            for (size_t k = 0; k < len && i < n; k++)
                at[i++] = (uint16_t)pos++;
            pos += (uint32_t)(tk_test_xorshift64(&r) % (seed < 4 ? 300 : 3));
        }
        starts[nf] = n;
        assert_true(pos < 65536); /* (no wrap of the 16-bit positions) */
        recs full = {0}, runs = {.trace_id = 0x12};
        tk_etm4_parser *p[2];
        assert_int_equal(tk_etm4_parser_new(&cfg, on_pkt, &full, &p[0]), TK_OK);
        assert_int_equal(tk_etm4_parser_new(&cfg, on_pkt, &runs, &p[1]), TK_OK);
        set_batch(p[1], mode_of(state) == MODE_RUNS_NO_PEXT ? MODE_RUNS_NO_PEXT : MODE_RUNS,
                  on_lite, &runs);
        for (size_t f = 0; f < nf; f++)
            assert_int_equal(tk_etm4_parser_data(p[0], b + starts[f], starts[f + 1] - starts[f],
                                                 1000 + at[starts[f]]),
                             TK_OK);
        assert_int_equal(tk_etm4_parser_frames_at(p[1], b, at, n, 1000), TK_OK);
        for (int w = 0; w < 2; w++) {
            assert_int_equal(tk_etm4_parser_end(p[w]), TK_OK);
            tk_etm4_parser_free(p[w]);
        }
        same_packets(&full, &runs);
        assert_true(runs.nruns > 0);
        free(full.r);
        free(runs.r);
    }
}

/* tk_etm4_lite_count_packets against a record at a time: every count up to 70 records (its
 * eight-at-a-time loop where the CPU has AVX2, its four-at-a-time loop and its tail), from
 * every start in an array of random records with every type, atom runs of 1 to 8 packets and
 * the other fields random. */
static void test_count_packets(void **state)
{
    (void)state;
    enum { N = 80 };
    tk_etm4_pkt_lite v[N];
    uint64_t s = 0xc0117ull;
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < N; i++) {
            uint8_t raw[sizeof(v[i])];
            for (size_t k = 0; k < sizeof(raw); k++)
                raw[k] = (uint8_t)tk_test_xorshift64(&s);
            memcpy(&v[i], raw, sizeof(raw));
            if (tk_test_xorshift64(&s) % 2) {
                v[i].type = TK_ETM4_LITE_ATOMS;
                v[i].size = (uint8_t)(1 + tk_test_xorshift64(&s) % 8);
            } else if (v[i].type == TK_ETM4_LITE_ATOMS) {
                v[i].type = TK_ETM4_ADDR_MATCH;
            }
        }
        for (size_t start = 0; start < 8; start++)
            for (size_t n = 0; n <= 70 && start + n <= N; n++) {
                uint64_t want = 0;
                for (size_t i = start; i < start + n; i++)
                    want += tk_etm4_lite_packets(&v[i]);
                assert_int_equal(tk_etm4_lite_count_packets(v + start, n), want);
            }
    }
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    static int runs = MODE_RUNS, no_pext = MODE_RUNS_NO_PEXT;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshots),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_joined_frames),
        cmocka_unit_test(test_frames_at),
        cmocka_unit_test(test_address_history_state),
        cmocka_unit_test(test_every_atom_header),
        cmocka_unit_test(test_runs_wide_gaps),
        cmocka_unit_test(test_count_packets),
        cmocka_unit_test_prestate(test_snapshots, &runs),
        cmocka_unit_test_prestate(test_mutations, &runs),
        cmocka_unit_test_prestate(test_joined_frames, &runs),
        cmocka_unit_test_prestate(test_frames_at, &runs),
        cmocka_unit_test_prestate(test_address_history_state, &runs),
        cmocka_unit_test_prestate(test_every_atom_header, &runs),
        cmocka_unit_test_prestate(test_mutations, &no_pext),
        cmocka_unit_test_prestate(test_frames_at, &no_pext),
        cmocka_unit_test_prestate(test_address_history_state, &no_pext),
        cmocka_unit_test_prestate(test_every_atom_header, &no_pext),
        cmocka_unit_test_prestate(test_runs_wide_gaps, &no_pext),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
