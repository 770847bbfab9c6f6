/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 flow-level robustness on a real trace: OpenCSD's bugfix-exact-match snapshot (ETB
 * buffer, six ETMv4 sources, memory dumps of the traced program). The stream of its busiest
 * source is taken out of the formatter frames and decoded as an unformatted buffer through
 * tk_etm4_run_snapshot (the parser's batch mode and the decoder's fast path, as the CLI).
 *
 *  - Overflow: a stretch of the stream, from a packet boundary up to a periodic A-Sync + Trace
 *    Info (or nothing: an insertion), is replaced by an Overflow packet (IHI0064 §6.4.4:
 *    the trace unit lost trace and resynchronises with A-Sync and Trace Info). The decoder
 *    must report the loss (one TK_EV_LOST at the packet's offset, no error), emit exactly the
 *    clean flow before it, nothing between it and the first address packet after the Trace
 *    Info (the address is unknown until then), and from that address on the clean flow again.
 *  - Wrong memory: the same trace with the memory images shifted by a few bytes, and with
 *    another snapshot's memory. It must be reported as a mismatch (error events located in
 *    the buffer), with no crash and no endless walk (an alarm; ranges bounded by the
 *    atoms of the trace). */
#include "testutil.h"

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coresight/ini.h"
#include "tracekit/coresight.h"
#include "tracekit/etm4.h"

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_etm4_flow: a decode took over 60 s (endless walk?)\n";
    ssize_t w = write(2, msg, sizeof(msg) - 1);
    (void)w;
    _exit(1);
}

/* ---- collecting -------------------------------------------------------------------------- */

typedef struct ev_rec {
    uint64_t first, last, ninsn, off;
} ev_rec;

typedef struct flow {
    ev_rec *r; /* ranges, in order */
    size_t n, cap;
    uint64_t ninsn, errors, mismatches, lost;
    uint64_t lost_off, first_error_off;
    size_t len; /* bytes of trace: every offset must be inside */
} flow;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    flow *f = ctx;
    switch (ev->kind) {
    case TK_EV_RANGE:
        assert_true(ev->ninsn > 0);
        assert_true(ev->byte_offset < f->len);
        if (f->n == f->cap) {
            f->cap = f->cap ? 2 * f->cap : 65536;
            f->r = realloc(f->r, f->cap * sizeof(*f->r));
            assert_non_null(f->r);
        }
        f->r[f->n++] = (ev_rec){ev->first, ev->last, ev->ninsn, ev->byte_offset};
        f->ninsn += ev->ninsn;
        break;
    case TK_EV_LOST:
        assert_true(ev->byte_offset < f->len);
        if (!f->lost++)
            f->lost_off = ev->byte_offset;
        break;
    case TK_EV_ERROR:
        assert_non_null(ev->message);
        assert_true(ev->message[0] != '\0');
        assert_true(ev->byte_offset < f->len);
        if (!f->errors++)
            f->first_error_off = ev->byte_offset;
        f->mismatches += ev->status == TK_ERR_MISMATCH || ev->status == TK_ERR_NO_CODE;
        break;
    default:
        break;
    }
    return TK_OK;
}

typedef struct pkt_rec {
    uint64_t index;
    uint8_t type;
    uint8_t atoms;
} pkt_rec;

typedef struct pkts {
    pkt_rec *p;
    size_t n, cap;
    uint64_t atoms;
} pkts;

static tk_status on_packet(void *ctx, const tk_etm4_packet *pkt)
{
    pkts *v = ctx;
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 65536;
        v->p = realloc(v->p, v->cap * sizeof(*v->p));
        assert_non_null(v->p);
    }
    v->p[v->n++] = (pkt_rec){pkt->index, pkt->type, pkt->atom_num};
    v->atoms += pkt->atom_num;
    return TK_OK;
}

static tk_status on_frame_error(void *ctx, tk_status st, uint64_t off, const char *msg)
{
    (void)ctx, (void)st, (void)off, (void)msg;
    fail_msg("frame error in a stream that has no frames");
    return TK_OK;
}

/* ---- the stream of one source ------------------------------------------------------------ */

typedef struct extract {
    uint8_t *b[128];
    size_t n[128], cap[128];
} extract;

static tk_status on_data(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    extract *x = ctx;
    (void)index;
    if (id >= 128)
        return TK_OK;
    if (x->n[id] + n > x->cap[id]) {
        x->cap[id] = 2 * (x->n[id] + n);
        x->b[id] = realloc(x->b[id], x->cap[id]);
        assert_non_null(x->b[id]);
    }
    memcpy(x->b[id] + x->n[id], data, n);
    x->n[id] += n;
    return TK_OK;
}

typedef struct fixture {
    tk_cs_snapshot *ss;
    char *dir;
    int buffer, id;
    uint8_t *s; /* the source's bytes, unformatted */
    size_t len;
    pkts pk;    /* its packets */
    flow clean; /* its clean decode */
} fixture;

static void decode(const fixture *fx, const uint8_t *data, size_t len, flow *f)
{
    memset(f, 0, sizeof(*f));
    f->len = len;
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = fx->buffer;
    o.id = fx->id;
    o.decode = true;
    o.on_event = on_event;
    o.on_frame_error = on_frame_error;
    o.ctx = f;
    o.data = data;
    o.data_len = len;
    tk_diag diag;
    tk_diag_clear(&diag);
    alarm(60);
    assert_int_equal(tk_etm4_run_snapshot(fx->ss, &o, &diag), TK_OK);
    alarm(0);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof(*fx));
    assert_non_null(fx);
    tk_diag diag;
    tk_diag_clear(&diag);
    fx->dir = tk_test_data_path("opencsd/snapshots/bugfix-exact-match");
    if (!fx->dir || tk_cs_snapshot_load(fx->dir, &fx->ss, &diag) != TK_OK) {
        fprintf(stderr, "bugfix-exact-match snapshot not found: skipped\n");
        free(fx->dir);
        free(fx);
        return -1;
    }
    fx->buffer = tk_cs_snapshot_default_buffer(fx->ss);
    assert_true(fx->buffer >= 0);
    tk_cs_buffer *b = &fx->ss->buffers[fx->buffer];
    assert_int_equal(b->format, TK_CS_FMT_FRAMED);
    size_t len = 0;
    uint8_t *raw = tk_test_read_file(b->path, &len);
    assert_non_null(raw);
    /* the sources' streams out of the formatter frames */
    extract *x = calloc(1, sizeof(*x));
    assert_non_null(x);
    tk_cs_deformatter *d;
    assert_int_equal(tk_cs_deformatter_new(0, on_data, NULL, x, &d), TK_OK);
    assert_int_equal(tk_cs_deformat(d, raw, len), TK_OK);
    assert_int_equal(tk_cs_deformat_end(d), TK_OK);
    tk_cs_deformatter_free(d);
    free(raw);
    fx->id = -1;
    for (int i = 0; i < 128; i++)
        if (x->n[i] && tk_cs_snapshot_find_id(fx->ss, (uint8_t)i) &&
            (fx->id < 0 || x->n[i] > x->n[fx->id]))
            fx->id = i;
    assert_true(fx->id > 0);
    fx->s = x->b[fx->id];
    fx->len = x->n[fx->id];
    for (int i = 0; i < 128; i++)
        if (i != fx->id)
            free(x->b[i]);
    free(x);
    /* From here the buffer is that one source, unformatted. */
    b->format = TK_CS_FMT_RAW;

    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = fx->buffer;
    o.id = fx->id;
    o.on_packet = on_packet;
    o.ctx = &fx->pk;
    o.data = fx->s;
    o.data_len = fx->len;
    assert_int_equal(tk_etm4_run_snapshot(fx->ss, &o, &diag), TK_OK);
    decode(fx, fx->s, fx->len, &fx->clean);
    assert_int_equal(fx->clean.errors, 0);
    assert_int_equal(fx->clean.lost, 0);
    assert_true(fx->clean.ninsn > 100000);
    print_message("bugfix-exact-match: trace ID 0x%x, %zu bytes, %zu packets, %" PRIu64
                  " instructions\n",
                  fx->id, fx->len, fx->pk.n, fx->clean.ninsn);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    if (!fx)
        return 0;
    free(fx->s);
    free(fx->pk.p);
    free(fx->clean.r);
    tk_cs_snapshot_free(fx->ss);
    free(fx->dir);
    free(fx);
    return 0;
}

static bool is_address(uint8_t t)
{
    return t >= TK_ETM4_ADDR_CTXT_L_32IS0 && t <= TK_ETM4_ADDR_L_64IS1;
}

/* First range at or after byte offset off (ranges are in offset order). */
static size_t range_at(const flow *f, uint64_t off)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (f->r[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- overflow ---------------------------------------------------------------------------- */

#define OVERFLOWS 12

static void test_overflow(void **state)
{
    const fixture *fx = *state;
    const pkts *pk = &fx->pk;
    /* periodic syncs: an A-Sync followed by a Trace Info, then an address packet before the
     * next A-Sync (packet indices into pk) */
    size_t *sync = malloc(pk->n * sizeof(*sync)), nsync = 0;
    assert_non_null(sync);
    for (size_t i = 1; i + 1 < pk->n; i++)
        if (pk->p[i].type == TK_ETM4_ASYNC && pk->p[i + 1].type == TK_ETM4_TRACE_INFO)
            sync[nsync++] = i;
    assert_true(nsync > OVERFLOWS);
    uint8_t *buf = malloc(fx->len + 2);
    assert_non_null(buf);
    uint64_t rng = 0x9e3779b97f4a7c15ull, lost_total = 0;
    unsigned done = 0;
    for (unsigned m = 0; m < OVERFLOWS; m++) {
        /* spread over the trace; the first sync starts the trace, so not that one */
        const size_t si = 1 + (size_t)(m * (nsync - 1) / OVERFLOWS);
        const size_t ai = sync[si], prev = sync[si - 1];
        /* the packet the overflow replaces from: one after the previous sync's Trace Info,
         * or the A-Sync itself (an Overflow inserted, nothing removed) */
        size_t pi =
            m % 4 == 0 ? ai : prev + 2 + (size_t)(tk_test_xorshift64star(&rng) % (ai - prev - 2));
        size_t fi = ai + 2;
        while (fi < pk->n && !is_address(pk->p[fi].type) && pk->p[fi].type != TK_ETM4_ASYNC)
            fi++;
        if (fi == pk->n || !is_address(pk->p[fi].type))
            continue; /* no address before the next sync */
        const uint64_t P = pk->p[pi].index, A = pk->p[ai].index, F = pk->p[fi].index;
        /* the damaged stream: [0, P) + Overflow (0x00 0x05, §6.4.4) + [A, end) */
        memcpy(buf, fx->s, P);
        buf[P] = 0x00;
        buf[P + 1] = 0x05;
        memcpy(buf + P + 2, fx->s + A, fx->len - A);
        const size_t blen = P + 2 + (fx->len - A);
        const int64_t delta = (int64_t)A - (int64_t)(P + 2); /* clean offset - damaged */
        flow f;
        decode(fx, buf, blen, &f);
        /* the loss reported, at the Overflow packet, and nothing else */
        assert_int_equal(f.lost, 1);
        assert_int_equal(f.lost_off, P);
        if (f.errors)
            fail_msg("overflow at %" PRIu64 ": %" PRIu64 " errors, the first at %" PRIu64, P,
                     f.errors, f.first_error_off);
        /* before it: the clean flow */
        const size_t cb = range_at(&fx->clean, P), db = range_at(&f, P);
        assert_int_equal(cb, db);
        assert_memory_equal(fx->clean.r, f.r, cb * sizeof(ev_rec));
        /* between it and the first address after the Trace Info (included: its packet may
         * close an exception's range in the clean decode, which needs the old address):
         * nothing is known */
        const size_t da = range_at(&f, (uint64_t)((int64_t)F - delta) + 1);
        assert_int_equal(da, db);
        /* from there on: the clean flow, at the same packets */
        const size_t ca = range_at(&fx->clean, F + 1);
        assert_int_equal(fx->clean.n - ca, f.n - da);
        for (size_t k = 0; k < f.n - da; k++) {
            const ev_rec *c = &fx->clean.r[ca + k], *g = &f.r[da + k];
            if (c->first != g->first || c->last != g->last || c->ninsn != g->ninsn ||
                c->off != (uint64_t)((int64_t)g->off + delta))
                fail_msg("overflow at %" PRIu64 ", sync at %" PRIu64 ": range %zu after the "
                         "address at %" PRIu64 " differs (0x%" PRIx64 "..0x%" PRIx64 " at %" PRIu64
                         ", clean 0x%" PRIx64 "..0x%" PRIx64 " at %" PRIu64 ")",
                         P, A, k, F, g->first, g->last, g->off, c->first, c->last, c->off);
        }
        uint64_t lost = 0;
        for (size_t k = cb; k < ca; k++)
            lost += fx->clean.r[k].ninsn;
        assert_int_equal(fx->clean.ninsn - f.ninsn, lost);
        lost_total += lost;
        done++;
        free(f.r);
    }
    assert_true(done >= OVERFLOWS / 2);
    print_message("%u overflows (%u inserted before an A-Sync, the others replacing up to "
                  "the A-Sync): loss reported at the Overflow packet, flow exact before it and "
                  "from the first address after the Trace Info; %" PRIu64
                  " instructions lost in all\n",
                  done, (OVERFLOWS + 3) / 4, lost_total);
    free(buf);
    free(sync);
}

/* ---- wrong memory ------------------------------------------------------------------------ */

/* The memory dumps of device file `file` of snapshot dir, each loaded at its address + shift. */
static void add_dumps(tk_cs_mem *mem, const char *dir, const char *file, int64_t shift)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    tk_ini ini;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_ini_load(path, &ini, &diag), TK_OK);
    for (size_t i = 0; i < ini.n; i++) {
        if (strncmp(ini.e[i].section, "dump", 4) || strcmp(ini.e[i].key, "file"))
            continue;
        const char *a = tk_ini_get(&ini, ini.e[i].section, "address");
        assert_non_null(a);
        const uint64_t addr = strtoull(a, NULL, 0) + (uint64_t)shift;
        snprintf(path, sizeof(path), "%s/%s", dir, ini.e[i].value);
        tk_cs_mem_add_file(mem, addr, path, 0, 0, NULL); /* missing files are skipped */
    }
    tk_ini_free(&ini);
}

/* The memory of the core that source id runs on, replaced by mem for the decode. */
static void decode_with(const fixture *fx, tk_cs_mem *mem, flow *f)
{
    const tk_cs_source *src = tk_cs_snapshot_find_id(fx->ss, (uint8_t)fx->id);
    assert_non_null(src);
    assert_true(src->core >= 0);
    tk_cs_core *core = &fx->ss->cores[src->core];
    tk_cs_mem *own = core->mem;
    core->mem = mem;
    decode(fx, fx->s, fx->len, f);
    core->mem = own;
}

static void check_wrong(const fixture *fx, const flow *f, const char *what)
{
    print_message("%-34s %8" PRIu64 " errors (%" PRIu64 " mismatches), the first at byte %" PRIu64
                  "; %zu ranges, %" PRIu64 " instructions\n",
                  what, f->errors, f->mismatches, f->first_error_off, f->n, f->ninsn);
    if (!f->mismatches)
        fail_msg("%s decoded without a mismatch reported", what);
    /* no endless walk: at most one range per atom, plus one per other packet (exceptions,
     * Q elements, source addresses) */
    assert_true(f->n <= fx->pk.atoms + fx->pk.n);
}

static void test_wrong_memory(void **state)
{
    const fixture *fx = *state;
    const tk_cs_source *src = tk_cs_snapshot_find_id(fx->ss, (uint8_t)fx->id);
    assert_non_null(src);
    const char *core_name = fx->ss->cores[src->core].name;
    /* the core's device file, from snapshot.ini's device list */
    char path[4096], file[256] = "";
    snprintf(path, sizeof(path), "%s/snapshot.ini", fx->dir);
    tk_ini ini;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_ini_load(path, &ini, &diag), TK_OK);
    for (size_t i = 0; i < ini.n && !file[0]; i++) {
        if (strcmp(ini.e[i].section, "device_list"))
            continue;
        tk_ini dev;
        snprintf(path, sizeof(path), "%s/%s", fx->dir, ini.e[i].value);
        if (tk_ini_load(path, &dev, &diag) != TK_OK)
            continue;
        const char *name = tk_ini_get(&dev, "device", "name");
        if (name && !strcmp(name, core_name))
            snprintf(file, sizeof(file), "%s", ini.e[i].value);
        tk_ini_free(&dev);
    }
    tk_ini_free(&ini);
    assert_true(file[0] != '\0');

    /* the right dumps at the right place: the clean decode again (the fixture works) */
    static const int64_t shifts[] = {0, 4, -8, 0x40, 0x1000};
    for (size_t s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
        tk_cs_mem *mem;
        assert_int_equal(tk_cs_mem_new(&mem), TK_OK);
        add_dumps(mem, fx->dir, file, shifts[s]);
        flow f;
        decode_with(fx, mem, &f);
        if (shifts[s] == 0) {
            assert_int_equal(f.errors, 0);
            assert_int_equal(f.n, fx->clean.n);
            assert_memory_equal(f.r, fx->clean.r, f.n * sizeof(ev_rec));
        } else {
            char what[64];
            snprintf(what, sizeof(what), "memory shifted by %+" PRId64 " bytes:", shifts[s]);
            check_wrong(fx, &f, what);
        }
        free(f.r);
        tk_cs_mem_free(mem);
    }

    /* another snapshot's memory (a Juno kernel image) */
    char *other = tk_test_data_path("opencsd/snapshots/juno_r1_1");
    tk_cs_snapshot *os = NULL;
    if (other && tk_cs_snapshot_load(other, &os, &diag) == TK_OK) {
        for (size_t c = 0; c < os->ncores; c++) {
            if (!tk_cs_mem_nregions(os->cores[c].mem))
                continue;
            flow f;
            decode_with(fx, os->cores[c].mem, &f);
            check_wrong(fx, &f, "juno_r1_1's memory:");
            free(f.r);
            break;
        }
        tk_cs_snapshot_free(os);
    }
    free(other);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    signal(SIGALRM, on_alarm);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_overflow),
                                       cmocka_unit_test(test_wrong_memory)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
