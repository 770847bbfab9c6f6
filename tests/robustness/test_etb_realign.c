/* SPDX-License-Identifier: BSD-2-Clause */
/* ETB buffers with dropped or inserted bytes through tk_etm4_run_snapshot (docs/robustness.md,
 * "ETB frame alignment"): the pipeline must report that the frame alignment was lost, with the
 * offset of the first sign of it and the offset where frames were found again, and from each
 * source's first A-Sync after that offset decode exactly what the clean buffer decodes.
 *
 * For each of two snapshots (bugfix-exact-match: six ETMv4 sources, 1 MiB; juno_r1_1: a Juno
 * board's kernel trace, 64 KiB, whose memory image does not cover everything: its "no code"
 * errors are part of the decode and compared too), seeded damages drop 1-15 bytes or insert
 * 1-15 bytes (a repeat of the bytes before, the first one changed) at a random place. Checked:
 *  - exactly one "frame alignment lost" report, at or after the first frame the damage
 *    touches, whose "found again" offset is where the original's frames start in the damaged
 *    copy (next whole frame after the damage + 16n);
 *  - for every source: the events (ranges and errors) located at or after the first address
 *    packet that follows its first A-Sync after that offset are the clean decode's events
 *    from the same packet on, in order, with the same addresses and counts and offsets shifted
 *    by the bytes dropped or inserted (between the A-Sync and that packet the clean decode may
 *    still use the address it had before: the damaged one does not know it);
 *  - the damaged decode has no event of the source between the report and that packet
 *    (sources hunt for their A-Sync, they do not decode garbage).
 * The clean decode of the followed snapshot must itself have no alignment report. */
#include "testutil.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/coresight.h"
#include "tracekit/etm4.h"

#if defined(__SANITIZE_ADDRESS__)
#define DAMAGES 8
#else
#define DAMAGES 24
#endif

typedef struct rec {
    uint64_t off, first, last, ninsn;
    int32_t status;
    uint16_t kind;
    uint8_t id;
} rec;

typedef struct trace {
    rec *r;
    size_t n, cap;
    /* per source (packet pass): the first address packet after each A-Sync, where a decoder
     * that starts at the A-Sync knows the address again (an atom between the Trace Info and
     * it continues the clean decode's flow from before the A-Sync) */
    bool pending[128];
    uint64_t last_async[128];
    uint64_t *async[128]; /* pairs: A-Sync index, first address packet's index */
    size_t nasync[128], capasync[128];
    /* alignment reports */
    unsigned realigns;
    uint64_t lost_at, found_at;
    size_t len;
} trace;

static void trace_free(trace *t)
{
    free(t->r);
    for (int i = 0; i < 128; i++)
        free(t->async[i]);
    memset(t, 0, sizeof(*t));
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    trace *t = ctx;
    if (ev->kind != TK_EV_RANGE && ev->kind != TK_EV_ERROR)
        return TK_OK;
    if (ev->kind == TK_EV_ERROR) {
        assert_non_null(ev->message);
        assert_true(ev->byte_offset < t->len);
    }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 65536;
        t->r = realloc(t->r, t->cap * sizeof(*t->r));
        assert_non_null(t->r);
    }
    t->r[t->n++] = (rec){ev->byte_offset,
                         ev->first,
                         ev->last,
                         ev->ninsn,
                         ev->status,
                         ev->kind,
                         (uint8_t)(ev->trace_id & 0x7f)};
    return TK_OK;
}

static tk_status on_packet(void *ctx, const tk_etm4_packet *pkt)
{
    trace *t = ctx;
    const int id = pkt->trace_id & 0x7f;
    if (pkt->type == TK_ETM4_ASYNC) {
        t->pending[id] = true;
        t->last_async[id] = pkt->index;
    }
    if (!t->pending[id] || pkt->type < TK_ETM4_ADDR_CTXT_L_32IS0 ||
        pkt->type > TK_ETM4_ADDR_L_64IS1)
        return TK_OK;
    t->pending[id] = false;
    if (t->nasync[id] == t->capasync[id]) {
        t->capasync[id] = t->capasync[id] ? 2 * t->capasync[id] : 1024;
        t->async[id] = realloc(t->async[id], t->capasync[id] * 2 * sizeof(uint64_t));
        assert_non_null(t->async[id]);
    }
    t->async[id][2 * t->nasync[id]] = t->last_async[id];
    t->async[id][2 * t->nasync[id]++ + 1] = pkt->index;
    return TK_OK;
}

static tk_status on_frame_error(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    trace *t = ctx;
    assert_non_null(msg);
    assert_true(offset < t->len);
    const char *again = strstr(msg, "frames found again at offset ");
    if (strstr(msg, "frame alignment lost")) {
        assert_int_equal(st, TK_ERR_FORMAT);
        assert_non_null(again);
        t->realigns++;
        t->lost_at = offset;
        t->found_at = strtoull(again + strlen("frames found again at offset "), NULL, 10);
    }
    return TK_OK;
}

/* decode: events; else packets (A-Syncs) */
static void run(const tk_cs_snapshot *ss, int buffer, const uint8_t *buf, size_t len, bool decode,
                trace *t)
{
    t->len = len;
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = buffer;
    o.id = -1;
    o.decode = decode;
    o.on_event = on_event;
    o.on_packet = decode ? NULL : on_packet;
    o.on_frame_error = on_frame_error;
    o.ctx = t;
    o.data = buf;
    o.data_len = len;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
}

/* First record of source id at or after offset off. */
static size_t first_from(const trace *t, int id, uint64_t off)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->r[i].id == id && t->r[i].off >= off)
            return i;
    return t->n;
}

static void check_snapshot(const char *name, uint64_t seed, unsigned *recovered, uint64_t *events)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "opencsd/snapshots/%s", name);
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (!dir || tk_cs_snapshot_load(dir, &ss, &diag) != TK_OK) {
        print_message("%s: not found, skipped\n", name);
        free(dir);
        return;
    }
    const int b = tk_cs_snapshot_default_buffer(ss);
    assert_true(b >= 0);
    assert_int_equal(ss->buffers[b].format, TK_CS_FMT_FRAMED);
    size_t len = 0;
    uint8_t *clean_buf = tk_test_read_file(ss->buffers[b].path, &len);
    assert_non_null(clean_buf);
    assert_true(len >= 65536);

    trace *clean = calloc(1, sizeof(*clean)), *pk = calloc(1, sizeof(*pk));
    assert_true(clean && pk);
    run(ss, b, clean_buf, len, true, clean);
    run(ss, b, clean_buf, len, false, pk);
    assert_int_equal(clean->realigns, 0);
    assert_int_equal(pk->realigns, 0);

    uint8_t *buf = malloc(len + 16);
    assert_non_null(buf);
    uint64_t rng = seed;
    for (unsigned t = 0; t < DAMAGES; t++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        /* leave room for the search window (16 KiB) and some A-Syncs after it */
        const size_t pos = 1024 + (size_t)((rng >> 24) % (len - 1024 - 24576));
        const size_t k = 1 + (size_t)((rng >> 8) % 15);
        const bool insert = (rng >> 40) & 1;
        size_t blen;
        memcpy(buf, clean_buf, pos);
        if (insert) {
            memcpy(buf + pos, clean_buf + pos - k, len - pos + k);
            buf[pos] ^= 0x5a;
            blen = len + k;
        } else {
            memcpy(buf + pos, clean_buf + pos + k, len - pos - k);
            blen = len - k;
        }
        /* clean offset c >= the next frame after the damage is at c - k / c + k in the copy */
        const size_t next = (pos / 16 + 1) * 16, truth = insert ? next + k : next - k;
        trace *bad = calloc(1, sizeof(*bad));
        assert_non_null(bad);
        run(ss, b, buf, blen, true, bad);
        if (bad->realigns != 1 || bad->lost_at < pos / 16 * 16 || bad->found_at < truth ||
            (bad->found_at - truth) % 16)
            fail_msg("%s: %zu bytes %s at %zu: %u alignment reports, the last lost at %" PRIu64
                     " found at %" PRIu64 "; the frames start at %zu + 16n",
                     name, k, insert ? "inserted" : "dropped", pos, bad->realigns, bad->lost_at,
                     bad->found_at, truth);
        /* Frames read from found_at on carry data of an unknown source until the first ID
         * byte (an even byte with bit 0 set; IHI0029 §D4.2): the sources resume after it. */
        uint64_t idb = blen;
        for (uint64_t f = bad->found_at; f + 16 <= blen && idb == blen; f += 16)
            for (unsigned e = 0; e < 15 && idb == blen; e += 2)
                if (buf[f + e] & 1)
                    idb = f + e;
        const uint64_t found_clean = (insert ? idb - k : idb + k) + 2;
        for (int id = 0; id < 128; id++) {
            /* the first address packet after the source's first A-Sync after the alignment
             * found (the A-Sync itself is after found_clean when the address is) */
            size_t a = 0;
            while (a < pk->nasync[id] && pk->async[id][2 * a] < found_clean)
                a++;
            if (!pk->nasync[id])
                continue;
            /* none: the damaged decode has nothing of this source after the report */
            const uint64_t ac = a < pk->nasync[id] ? pk->async[id][2 * a + 1] : UINT64_MAX;
            const uint64_t ad = a < pk->nasync[id] ? (insert ? ac + k : ac - k) : UINT64_MAX;
            size_t i = first_from(clean, id, ac), j = first_from(bad, id, bad->found_at);
            /* between the report and the A-Sync: nothing */
            if (j < bad->n && bad->r[j].off < ad)
                fail_msg("%s: %zu bytes %s at %zu: source 0x%x has an event at %" PRIu64
                         " before its first address after an A-Sync at %" PRIu64,
                         name, k, insert ? "inserted" : "dropped", pos, id, bad->r[j].off, ad);
            for (; i < clean->n; i++) {
                if (clean->r[i].id != id)
                    continue;
                while (j < bad->n && bad->r[j].id != id)
                    j++;
                if (j == bad->n)
                    fail_msg("%s: %zu bytes %s at %zu: source 0x%x ends before the clean "
                             "event at %" PRIu64,
                             name, k, insert ? "inserted" : "dropped", pos, id, clean->r[i].off);
                const rec *c = &clean->r[i], *d = &bad->r[j];
                const uint64_t off = insert ? d->off - k : d->off + k;
                if (c->kind != d->kind || c->off != off || c->first != d->first ||
                    c->last != d->last || c->ninsn != d->ninsn || c->status != d->status)
                    fail_msg("%s: %zu bytes %s at %zu: source 0x%x, clean event at %" PRIu64
                             " (%#" PRIx64 "..%#" PRIx64 ") differs from the damaged one at "
                             "%" PRIu64 " (%#" PRIx64 "..%#" PRIx64 ")",
                             name, k, insert ? "inserted" : "dropped", pos, id, c->off, c->first,
                             c->last, d->off, d->first, d->last);
                (*events)++;
                j++;
            }
            while (j < bad->n && bad->r[j].id != id)
                j++;
            assert_true(j == bad->n); /* and nothing more */
        }
        (*recovered)++;
        trace_free(bad);
        free(bad);
    }
    free(buf);
    free(clean_buf);
    trace_free(clean);
    trace_free(pk);
    free(clean);
    free(pk);
    tk_cs_snapshot_free(ss);
    free(dir);
}

static void test_etb_realign(void **state)
{
    (void)state;
    unsigned recovered = 0;
    uint64_t events = 0;
    check_snapshot("bugfix-exact-match", 0x9e3779b97f4a7c15ull, &recovered, &events);
    check_snapshot("juno_r1_1", 0x2545f4914f6cdd1dull, &recovered, &events);
    print_message("%u damages (1-15 bytes dropped or inserted): every one reported and re-aligned, "
                  "%" PRIu64 " events after the sources' next A-Sync equal to the clean decode's\n",
                  recovered, events);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_etb_realign)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
