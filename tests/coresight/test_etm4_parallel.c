/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel ETMv4 decoding (tk_etm4_decode_parallel): the events, in order and field by field,
 * equal the serial decode's for many piece sizes and thread counts; seams are stitched rather
 * than decoded again where the states agree; a sink's error stops the decode without leaks; a
 * selection of several sources is refused before any event. */
#include "testutil.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracekit/etm4.h"

/* Events as one 64-bit value each (a hash of every field a consumer sees but packet_index)
 * and their packet_index, which a piece's sink gets relative to its piece (sink_done's
 * packet_base). */
typedef struct ev_list {
    uint64_t *v, *pi;
    size_t n, cap;
} ev_list;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

static tk_status list_add(ev_list *l, uint64_t h, uint64_t pi)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1 << 12;
        uint64_t *v = realloc(l->v, cap * sizeof(*v));
        if (v)
            l->v = v;
        uint64_t *q = v ? realloc(l->pi, cap * sizeof(*q)) : NULL;
        if (!q)
            return TK_ERR_NOMEM;
        l->pi = q;
        l->cap = cap;
    }
    l->v[l->n] = h;
    l->pi[l->n++] = pi;
    return TK_OK;
}

static void list_free(ev_list *l)
{
    free(l->v);
    free(l->pi);
}

static tk_status list_event(void *ctx, const tk_event *ev)
{
    ev_list *l = ctx;
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix(h, ev->kind | ((uint64_t)ev->end << 16) | ((uint64_t)ev->taken << 24) |
                   ((uint64_t)ev->indirect << 32) | ((uint64_t)ev->isa << 40));
    h = mix(h, ev->first);
    h = mix(h, ev->last);
    h = mix(h, ev->ninsn);
    h = mix(h, ev->next);
    h = mix(h, ev->byte_offset);
    h = mix(h, ev->cause);
    h = mix(h, ev->context);
    h = mix(h, (uint64_t)ev->status);
    return list_add(l, h, ev->packet_index);
}

/* Each piece lists its events; done appends them to the total, so the comparison with the
 * serial list is element by element, in order. */
typedef struct sinks {
    ev_list total;
    /* made: sink_new runs on the worker threads, at the same time (done and dropped are
     * the calling thread's) */
    atomic_uint made;
    unsigned done, dropped;
    unsigned fail_done_at; /* sink_done returns TK_ERR_IO at this call (0: never) */
    unsigned fail_new_at;  /* sink_new returns TK_ERR_NOMEM at this call (0: never) */
} sinks;

static tk_status sink_new(void *ctx, tk_event_fn *fn, void **sink)
{
    sinks *s = ctx;
    if (atomic_fetch_add(&s->made, 1) + 1 == s->fail_new_at)
        return TK_ERR_NOMEM;
    *sink = calloc(1, sizeof(ev_list));
    *fn = list_event;
    return *sink ? TK_OK : TK_ERR_NOMEM;
}

static tk_status sink_done(void *ctx, void *sink, uint64_t packet_base)
{
    sinks *s = ctx;
    ev_list *l = sink;
    tk_status st = ++s->done == s->fail_done_at ? TK_ERR_IO : TK_OK;
    for (size_t i = 0; i < l->n && !st; i++)
        st = list_add(&s->total, l->v[i], l->pi[i] + packet_base);
    list_free(l);
    free(l);
    return st;
}

static void sink_drop(void *ctx, void *sink)
{
    sinks *s = ctx;
    ev_list *l = sink;
    s->dropped++;
    list_free(l);
    free(l);
}

static tk_cs_snapshot *load(const char *rel)
{
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_cs_snapshot_load(dir, &ss, &diag);
    free(dir);
    return st ? NULL : ss;
}

static tk_etm4_run_opts opts_for(int id)
{
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = -1;
    o.id = id;
    return o;
}

static void serial(const tk_cs_snapshot *ss, int id, ev_list *out)
{
    tk_etm4_run_opts o = opts_for(id);
    o.decode = true;
    o.on_event = list_event;
    o.ctx = out;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
}

static tk_etm4_par_config config(sinks *s, unsigned jobs, size_t piece)
{
    return (tk_etm4_par_config){.size = sizeof(tk_etm4_par_config),
                                .jobs = jobs,
                                .piece_bytes = piece,
                                .ctx = s,
                                .sink_new = sink_new,
                                .sink_done = sink_done,
                                .sink_drop = sink_drop};
}

/* Parallel decodes of snapshot rel equal its serial decode; returns the seams stitched. */
static uint64_t check_equal(const char *rel, int id, unsigned jobs, size_t piece)
{
    tk_cs_snapshot *ss = load(rel);
    assert_non_null(ss);
    ev_list want = {0};
    serial(ss, id, &want);
    assert_true(want.n > 0);
    sinks s = {0};
    tk_etm4_par_config pc = config(&s, jobs, piece);
    tk_etm4_par_stats stats = {.size = sizeof(stats)};
    tk_etm4_run_opts o = opts_for(id);
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, &stats, &diag), TK_OK);
    assert_int_equal(s.total.n, want.n);
    assert_memory_equal(s.total.v, want.v, want.n * sizeof(*want.v));
    assert_memory_equal(s.total.pi, want.pi, want.n * sizeof(*want.pi));
    /* every piece's sink is either finished (in order) or dropped: none is lost */
    assert_int_equal(s.done + s.dropped, s.made);
    if (!stats.fallback) {
        assert_int_equal(s.made, stats.pieces);
        assert_int_equal(stats.stitched + stats.redecoded + 1, stats.pieces);
        assert_int_equal(s.dropped, stats.redecoded);
    }
    list_free(&want);
    list_free(&s.total);
    tk_cs_snapshot_free(ss);
    return stats.stitched;
}

static void test_same_events(void **state)
{
    (void)state;
    const char *b = "opencsd/snapshots/bugfix-exact-match";
    /* small pieces: about 500 seams; the syncs come every 4.6 KiB */
    assert_true(check_equal(b, 0x12, 2, 2048) > 100);
    assert_true(check_equal(b, 0x12, 3, 40000) > 10);
    assert_true(check_equal(b, 0x12, 1, 100000) > 5);
    /* one piece: the serial decode on a worker */
    assert_int_equal(check_equal(b, 0x12, 2, 1u << 30), 0);
    /* the missing kernel code gives error events; and a capture with bad packets */
    check_equal("opencsd/snapshots/juno_r1_1", 0x10, 2, 2048);
    check_equal("opencsd/snapshots/a55-test-tpiu", -1, 2, 2048);
}

/* ETB/ETR frames with bad packets: the parallel decode hands over to the serial one at the
 * first, with the same events in the end. */
static void test_damaged_frames(void **state)
{
    (void)state;
    tk_cs_snapshot *ss = load("opencsd/snapshots/bugfix-exact-match");
    assert_non_null(ss);
    uint8_t *buf;
    size_t len;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_cs_buffer_read(&ss->buffers[0], &buf, &len, &diag), TK_OK);
    buf[600001] = 0; /* a bad packet (I_BAD_SEQUENCE) two thirds in */
    tk_etm4_run_opts o = opts_for(0x12);
    o.data = buf;
    o.data_len = len;
    ev_list want = {0};
    o.decode = true;
    o.on_event = list_event;
    o.ctx = &want;
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
    o = opts_for(0x12);
    o.data = buf;
    o.data_len = len;
    sinks s = {0};
    tk_etm4_par_config pc = config(&s, 2, 8192);
    tk_etm4_par_stats stats = {.size = sizeof(stats)};
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, &stats, &diag), TK_OK);
    assert_true(stats.fallback);
    assert_true(stats.stitched > 10); /* up to the damage: in parallel */
    assert_int_equal(s.total.n, want.n);
    assert_memory_equal(s.total.v, want.v, want.n * sizeof(*want.v));
    assert_memory_equal(s.total.pi, want.pi, want.n * sizeof(*want.pi));
    assert_int_equal(s.done + s.dropped, s.made);
    list_free(&want);
    list_free(&s.total);
    free(buf);
    tk_cs_snapshot_free(ss);
}

/* Speculation: the queue spans the cuts, so seams are decoded again; the events still agree. */
static void test_speculation(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("opencsd/snapshots-ete/maxspec78_commopt0");
    const int there = access(dir, R_OK) == 0;
    free(dir);
    if (!there) {
        skip();
        return;
    }
    check_equal("opencsd/snapshots-ete/maxspec78_commopt0", -1, 2, 1024);
    check_equal("opencsd/snapshots-ete/ete_spec_1", -1, 3, 256);
}

static void test_errors(void **state)
{
    (void)state;
    tk_cs_snapshot *ss = load("opencsd/snapshots/bugfix-exact-match");
    assert_non_null(ss);
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_etm4_par_stats stats = {.size = sizeof(stats)};

    /* six ETMv4 sources in the buffer and no trace ID: refused before any sink */
    sinks s = {0};
    tk_etm4_par_config pc = config(&s, 2, 4096);
    tk_etm4_run_opts o = opts_for(-1);
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, &stats, &diag), TK_ERR_UNSUPPORTED);
    assert_non_null(strstr(diag.message, "6 ETMv4 sources"));
    assert_int_equal(s.made, 0);

    /* a sink that fails to finish: its error, every sink freed (ASan checks) */
    o = opts_for(0x12);
    s = (sinks){.fail_done_at = 3};
    pc = config(&s, 2, 4096);
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, NULL, &diag), TK_ERR_IO);
    list_free(&s.total);
    /* a sink that cannot be made */
    s = (sinks){.fail_new_at = 5};
    pc = config(&s, 3, 4096);
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, NULL, &diag), TK_ERR_NOMEM);
    list_free(&s.total);

    /* bad arguments */
    s = (sinks){0};
    pc = config(&s, 0, 4096);
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, NULL, &diag), TK_ERR_INVALID);
    pc = config(&s, 2, 4096);
    pc.sink_done = NULL;
    assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, NULL, &diag), TK_ERR_INVALID);
    assert_int_equal(s.made, 0);
    tk_cs_snapshot_free(ss);
}

/* Bug 9 (fuzz_etm4_parallel): an empty buffer recorded an empty run, whose bytes were a null
 * pointer plus zero (UBSan). Now: no piece, no event, the same as the serial decode. */
static void test_empty_buffer(void **state)
{
    (void)state;
    const tk_cs_etm_regs regs = {.configr = 0xc1, .idr = {0x28000ea1, 0x4100f403, 0x488}};
    for (int format = TK_CS_FMT_FRAMED; format <= TK_CS_FMT_TPIU_HSYNC; format++) {
        tk_cs_snapshot *ss = NULL;
        if (tk_cs_snapshot_from_file("empty", (tk_cs_buffer_format)format, &regs, 0x10, &ss))
            continue; /* a format that takes no bare file */
        static const uint8_t none[1];
        tk_etm4_run_opts o = opts_for(0x10);
        o.data = none;
        o.data_len = 0;
        sinks s = {0};
        tk_etm4_par_config pc = config(&s, 2, 64);
        tk_etm4_par_stats stats = {.size = sizeof(stats)};
        tk_diag diag;
        tk_diag_clear(&diag);
        assert_int_equal(tk_etm4_decode_parallel(ss, &o, &pc, &stats, &diag), TK_OK);
        assert_int_equal(stats.pieces, 0);
        assert_int_equal(s.made, 0);
        assert_int_equal(s.total.n, 0);
        tk_cs_snapshot_free(ss);
    }
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_events),    cmocka_unit_test(test_speculation),
        cmocka_unit_test(test_damaged_frames), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_empty_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
