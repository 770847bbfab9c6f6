/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted and truncated trace, made at test time from copies of the bugfix-exact-match
 * capture: every detectable corruption is reported at its offset, and every packet from the
 * next A-Sync on is exactly the packet of the clean trace (nothing after it is lost). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

typedef struct rec {
    uint64_t index;
    uint64_t hash; /* of the packet's text: type and every value */
    uint8_t type;
} rec;

typedef struct recs {
    rec *r;
    size_t n, cap;
    uint64_t frame_err_off[64];
    size_t nframe_err;
} recs;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static tk_status record(void *ctx, const tk_etm4_packet *p)
{
    recs *l = ctx;
    char text[256];
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->r = realloc(l->r, l->cap * sizeof(*l->r));
    }
    tk_etm4_pkt_format(p, text, sizeof(text));
    l->r[l->n++] = (rec){p->index, fnv(text), p->type};
    return TK_OK;
}

static tk_status frame_err(void *ctx, tk_status st, uint64_t off, const char *msg)
{
    recs *l = ctx;
    (void)st, (void)msg;
    if (l->nframe_err < 64)
        l->frame_err_off[l->nframe_err++] = off;
    return TK_OK;
}

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

static tk_cs_snapshot *ss;
static uint8_t *raw;
static size_t raw_len;
static bytes stream; /* the ID 0x12 bytes, deformatted */
static tk_etm4_config cfg;
static recs clean;

static void parse(const uint8_t *b, size_t n, recs *out)
{
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(&cfg, record, out, &p), TK_OK);
    assert_int_equal(tk_etm4_parser_data(p, b, n, 0), TK_OK);
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    tk_etm4_parser_free(p);
}

static int setup(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("opencsd/snapshots/bugfix-exact-match");
    tk_diag diag;
    tk_status st = tk_cs_snapshot_load(dir, &ss, &diag);
    free(dir);
    if (st)
        return -1;
    raw = tk_test_read_file(ss->buffers[0].path, &raw_len);
    if (!raw)
        return -1;
    tk_cs_deformatter *d;
    tk_cs_deformatter_new(0, grab, NULL, &stream, &d);
    tk_cs_deformat(d, raw, raw_len);
    tk_cs_deformat_end(d);
    tk_cs_deformatter_free(d);
    tk_etm4_config_from_source(&cfg, ss, tk_cs_snapshot_find_id(ss, 0x12));
    parse(stream.b, stream.n, &clean);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(clean.r);
    free(stream.b);
    free(raw);
    tk_cs_snapshot_free(ss);
    return 0;
}

/* First clean packet at or after index (binary search). */
static size_t first_at(const recs *l, uint64_t index)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->r[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The corrupted run must match the clean one before `bad` and from the first A-Sync after
 * `bad`, packet for packet. Returns the index of that A-Sync. */
static uint64_t check_resync(const recs *got, uint64_t bad)
{
    size_t k = first_at(&clean, bad);
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(got->r[i].index, clean.r[i].index);
        assert_int_equal(got->r[i].hash, clean.r[i].hash);
    }
    size_t a = k;
    while (a < clean.n && clean.r[a].type != TK_ETM4_ASYNC)
        a++;
    assert_true(a < clean.n);
    size_t g = k;
    while (g < got->n && got->r[g].index < clean.r[a].index)
        g++;
    assert_int_equal(got->n - g, clean.n - a);
    for (size_t i = 0; a + i < clean.n; i++) {
        assert_int_equal(got->r[g + i].index, clean.r[a + i].index);
        assert_int_equal(got->r[g + i].hash, clean.r[a + i].hash);
    }
    return clean.r[a].index;
}

/* A reserved header in the middle of the stream. */
static void test_reserved_header(void **state)
{
    (void)state;
    assert_true(clean.n > 600000);
    for (int pct = 7; pct < 100; pct += 31) {
        size_t k = clean.n * (size_t)pct / 100;
        uint64_t at = clean.r[k].index;
        uint8_t *copy = malloc(stream.n);
        memcpy(copy, stream.b, stream.n);
        copy[at] = 0x08; /* reserved in every ETMv4 version */
        recs got = {0};
        parse(copy, stream.n, &got);
        assert_int_equal(got.r[k].type, TK_ETM4_RESERVED);
        assert_int_equal(got.r[k].index, at);
        assert_int_equal(got.r[k + 1].type, TK_ETM4_NOT_SYNC);
        uint64_t async = check_resync(&got, at);
        print_message("corrupt at %llu: error reported there, resynchronised at %llu\n",
                      (unsigned long long)at, (unsigned long long)async);
        free(got.r);
        free(copy);
    }
}

/* The stream ends inside a packet: every complete packet is kept, the last one is reported as
 * incomplete at its start. */
static void test_truncated(void **state)
{
    (void)state;
    size_t k = clean.n / 2;
    while (clean.r[k + 1].index - clean.r[k].index < 3)
        k++;
    recs got = {0};
    parse(stream.b, clean.r[k].index + 2, &got);
    assert_int_equal(got.n, k + 1);
    for (size_t i = 0; i < k; i++)
        assert_int_equal(got.r[i].hash, clean.r[i].hash);
    assert_int_equal(got.r[k].type, TK_ETM4_INCOMPLETE_EOT);
    assert_int_equal(got.r[k].index, clean.r[k].index);
    free(got.r);
}

/* DSTREAM framing (an FSYNC before every frame, in 512-byte blocks with footers, as in
 * a55-test-tpiu) with a corrupt frame: the
 * deformatter reports the offset, every source hunts for its next A-Sync, nothing after it is
 * lost. */
static void run_dstream(const uint8_t *buf, size_t len, recs *out)
{
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = 0;
    o.id = -1;
    o.on_packet = record;
    o.on_frame_error = frame_err;
    o.ctx = out;
    o.data = buf;
    o.data_len = len;
    tk_diag diag;
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
}

static void test_dstream_frame(void **state)
{
    (void)state;
    size_t frames = raw_len / 16, n = frames * 20, len;
    uint8_t *t = malloc(n);
    for (size_t f = 0; f < frames; f++) {
        static const uint8_t fsync[4] = {0xff, 0xff, 0xff, 0x7f};
        memcpy(t + f * 20, fsync, 4);
        memcpy(t + f * 20 + 4, raw + f * 16, 16);
    }
    tk_cs_buffer_format saved = ss->buffers[0].format;
    ss->buffers[0].format = TK_CS_FMT_DSTREAM;
    recs ref = {0}, got = {0};
    uint8_t *ds = tk_test_dstream_file(t, n, &len);
    run_dstream(ds, len, &ref);
    free(ds);
    assert_int_equal(ref.nframe_err, 0);
    assert_int_equal(ref.n, clean.n);
    size_t bad_frame = frames / 3;
    uint64_t bad_off = bad_frame * 20 + 4 + 8;
    t[bad_off] = 0xff; /* a halfword 0xffff inside a frame: FSYNC start, invalid there */
    t[bad_off + 1] = 0xff;
    ds = tk_test_dstream_file(t, n, &len);
    run_dstream(ds, len, &got);
    ss->buffers[0].format = saved;
    assert_int_equal(got.nframe_err, 1);
    assert_int_equal(got.frame_err_off[0], tk_test_dstream_offset(bad_off)); /* in the file */
    /* Compare against the clean DSTREAM run, whose indices are offsets in its file. */
    recs keep = clean;
    clean = ref;
    uint64_t async = check_resync(&got, tk_test_dstream_offset(bad_frame * 20 + 4));
    clean = keep;
    assert_true(async > tk_test_dstream_offset(bad_off));
    free(ref.r);
    free(got.r);
    free(ds);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserved_header),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_dstream_frame),
    };
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    return cmocka_run_group_tests(tests, setup, teardown);
}
