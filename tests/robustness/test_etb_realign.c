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
#define TAIL_DAMAGES 6
#define TWO_DAMAGES 6
#else
#define DAMAGES 24
#define TAIL_DAMAGES 24
#define TWO_DAMAGES 24
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
    uint64_t *async[128]; /* triples: A-Sync index, first address packet's index, 1 when a
                           * Trace Info came right after the A-Sync (what the alignment
                           * search looks for) */
    int ti_next[128];     /* -1: not right after an A-Sync; else whether a Trace Info was */
    size_t nasync[128], capasync[128];
    /* alignment reports (the first four kept) */
    unsigned realigns;
    uint64_t lost_at, found_at, found[4];
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
    if (t->ti_next[id] == 2 && pkt->type != TK_ETM4_ASYNC)
        t->ti_next[id] = pkt->type == TK_ETM4_TRACE_INFO;
    if (pkt->type == TK_ETM4_ASYNC) {
        t->pending[id] = true;
        t->last_async[id] = pkt->index;
        t->ti_next[id] = 2;
    }
    if (!t->pending[id] || pkt->type < TK_ETM4_ADDR_CTXT_L_32IS0 ||
        pkt->type > TK_ETM4_ADDR_L_64IS1)
        return TK_OK;
    t->pending[id] = false;
    if (t->nasync[id] == t->capasync[id]) {
        t->capasync[id] = t->capasync[id] ? 2 * t->capasync[id] : 1024;
        t->async[id] = realloc(t->async[id], t->capasync[id] * 3 * sizeof(uint64_t));
        assert_non_null(t->async[id]);
    }
    uint64_t *e = &t->async[id][3 * t->nasync[id]++];
    e[0] = t->last_async[id];
    e[1] = pkt->index;
    e[2] = t->ti_next[id] == 1;
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
        t->lost_at = offset;
        t->found_at = strtoull(again + strlen("frames found again at offset "), NULL, 10);
        if (t->realigns < 4)
            t->found[t->realigns] = t->found_at;
        t->realigns++;
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

/* One damage, in the clean buffer's offsets: k bytes dropped at pos, or inserted there (a
 * repeat of the k bytes before, the first one changed). */
typedef struct damage {
    size_t pos, k;
    bool insert;
} damage;

enum { M_ANY, M_TAIL, M_TWO, NMODES };
static const char *const mode_names[NMODES] = {"anywhere", "in the last 17 KiB",
                                               "two within 16 KiB"};

typedef struct mstats {
    unsigned damages, recovered, reports;
    uint64_t insns_after, lost, events;
} mstats;

/* The damaged copy of clean (len bytes) into buf; its length. */
static size_t apply(const uint8_t *clean, size_t len, const damage *d, int n, uint8_t *buf)
{
    size_t o = 0, c = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + o, clean + c, d[i].pos - c);
        o += d[i].pos - c;
        c = d[i].pos;
        if (d[i].insert) {
            memcpy(buf + o, clean + c - d[i].k, d[i].k);
            buf[o] ^= 0x5a; /* not a plain repeat */
            o += d[i].k;
        } else
            c += d[i].k;
    }
    memcpy(buf + o, clean + c, len - c);
    return o + len - c;
}

/* Offset in the copy minus offset in the original, after damage i. */
static int64_t shift_after(const damage *d, int i)
{
    int64_t s = 0;
    for (int j = 0; j <= i; j++)
        s += d[j].insert ? (int64_t)d[j].k : -(int64_t)d[j].k;
    return s;
}

static void check_snapshot(const char *name, uint64_t seed, mstats ms[NMODES])
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

    uint8_t *buf = malloc(len + 64);
    assert_non_null(buf);
    uint64_t rng = seed;
    for (unsigned t = 0; t < DAMAGES + TAIL_DAMAGES + TWO_DAMAGES; t++) {
        const int mode = t < DAMAGES ? M_ANY : t < DAMAGES + TAIL_DAMAGES ? M_TAIL : M_TWO;
        damage d[2];
        int nd = 1;
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        d[0].k = 1 + (size_t)((rng >> 8) % 15);
        d[0].insert = (rng >> 40) & 1;
        if (mode == M_TAIL) /* the last 17 KiB, up to 64 bytes before the end */
            d[0].pos = len - 64 - (size_t)((rng >> 24) % (17408 - 64));
        else /* room for the search window (16 KiB) and some A-Syncs after it */
            d[0].pos = 1024 + (size_t)((rng >> 24) % (len - 1024 - 24576 - 16384));
        if (mode == M_TWO) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            d[1].k = 1 + (size_t)((rng >> 8) % 15);
            d[1].insert = (rng >> 40) & 1;
            d[1].pos = d[0].pos + 512 + (size_t)((rng >> 24) % (16384 - 512));
            nd = 2;
        }
        const size_t blen = apply(clean_buf, len, d, nd, buf);
        char what[160];
        snprintf(what, sizeof(what), "%s: %zu bytes %s at %zu", name, d[0].k,
                 d[0].insert ? "inserted" : "dropped", d[0].pos);
        if (nd == 2)
            snprintf(what + strlen(what), sizeof(what) - strlen(what), ", %zu bytes %s at %zu",
                     d[1].k, d[1].insert ? "inserted" : "dropped", d[1].pos);
        trace *bad = calloc(1, sizeof(*bad));
        assert_non_null(bad);
        run(ss, b, buf, blen, true, bad);
        mstats *m = &ms[mode];
        m->damages++;
        m->reports += bad->realigns;
        /* every report names where frames really start again: a frame of the original after
         * the damage before it (in the copy: next whole frame after that damage + 16n), or
         * after a later one (a search that starts before a second damage may find the frames
         * after it: its parsers pass the bytes in between hunting for an A-Sync) */
        for (unsigned r = 0; r < bad->realigns && r < 4; r++) {
            int i = 0;
            while (i + 1 < nd &&
                   (int64_t)bad->found[r] >= (int64_t)d[i + 1].pos + shift_after(d, i))
                i++;
            const int64_t first = (int64_t)((d[i].pos / 16 + 1) * 16) + shift_after(d, i);
            bool ok = false;
            for (int l = i; l < nd; l++)
                ok |= ((int64_t)bad->found[r] - shift_after(d, l)) % 16 == 0;
            if ((int64_t)bad->found[r] < first || !ok)
                fail_msg("%s: report %u says frames start at %" PRIu64 ", they start at %" PRId64
                         " + 16n",
                         what, r, bad->found[r], first);
        }
        /* insns of the clean decode from the first damage on */
        uint64_t after = 0;
        for (size_t i = 0; i < clean->n; i++)
            if (clean->r[i].kind == TK_EV_RANGE && clean->r[i].off >= d[0].pos)
                after += clean->r[i].ninsn;
        m->insns_after += after;
        /* two damages that shift by 16n in all leave the frames after them where they were:
         * a report is then optional (the first damage's, if the search decides before the
         * second) */
        const bool back = nd == 2 && shift_after(d, 1) % 16 == 0;
        const bool expected = mode == M_ANY   ? bad->realigns == 1
                              : mode == M_TWO ? bad->realigns >= 1 || back
                                              : bad->realigns <= 1;
        const int64_t sh = shift_after(d, nd - 1);
        /* the last report has the alignment of the frames after the last damage */
        const int64_t last_first = (int64_t)((d[nd - 1].pos / 16 + 1) * 16) + sh;
        const uint64_t last_found = bad->realigns ? bad->found_at : back ? (uint64_t)last_first : 0;
        const bool last_right = !bad->realigns || ((int64_t)last_found - sh) % 16 == 0;
        /* a damage anywhere with room after it gives exactly one report, at the right place;
         * the other kinds are counted (the totals are checked at the end) */
        if ((!expected || !last_right) && mode == M_ANY)
            fail_msg("%s: %u alignment reports, the last one's frames at %" PRIu64
                     " (those after the damage: %" PRId64 " + 16n)",
                     what, bad->realigns, last_found, last_first);
        if (!expected || !last_right || (!bad->realigns && !back)) { /* all lost */
            /* in the tail, nothing can be found again without an A-Sync after the damage;
             * one 1 KiB or more after it, with its Trace Info right after it and its address
             * packet before the end, must be found: the search starts 64 bytes after the first sign
             * and judges down to 512 bytes */
            if (mode == M_TAIL)
                for (int id = 0; id < 128; id++)
                    for (size_t a = 0; a < pk->nasync[id]; a++)
                        if (pk->async[id][3 * a] >= d[0].pos + 1024 &&
                            pk->async[id][3 * a + 1] + 64 <= len && pk->async[id][3 * a + 2])
                            fail_msg("%s: not found again (%u reports), though source 0x%x "
                                     "has an A-Sync at %" PRIu64,
                                     what, bad->realigns, id, pk->async[id][3 * a]);
            m->lost += after;
            trace_free(bad);
            free(bad);
            continue;
        }
        /* Frames read from found_at on carry data of an unknown source until the first ID
         * byte (an even byte with bit 0 set; IHI0029 §D4.2): the sources resume after it. */
        uint64_t idb = blen;
        const uint64_t start = (int64_t)last_found > last_first ? last_found : (uint64_t)last_first;
        for (uint64_t f = start; f + 16 <= blen && idb == blen; f += 16)
            for (unsigned e = 0; e < 15 && idb == blen; e += 2)
                if (buf[f + e] & 1)
                    idb = f + e;
        const uint64_t found_clean = (uint64_t)((int64_t)idb - sh) + 2;
        uint64_t matched = 0;
        for (int id = 0; id < 128; id++) {
            /* the first address packet after the source's first A-Sync after the alignment
             * found (the A-Sync itself is after found_clean when the address is) */
            size_t a = 0;
            while (a < pk->nasync[id] && pk->async[id][3 * a] < found_clean)
                a++;
            if (!pk->nasync[id])
                continue;
            /* none: the damaged decode has nothing of this source after the report */
            const uint64_t ac = a < pk->nasync[id] ? pk->async[id][3 * a + 1] : UINT64_MAX;
            const uint64_t ad = a < pk->nasync[id] ? (uint64_t)((int64_t)ac + sh) : UINT64_MAX;
            size_t i = first_from(clean, id, ac), j = first_from(bad, id, last_found);
            /* between the report and the A-Sync: nothing, or the clean decode's events
             * already (an A-Sync read across the damage: a run of zeros reads as zeros at
             * every even shift, so the end of one may still be found) */
            if (j < bad->n && bad->r[j].off < ad) {
                const uint64_t off = (uint64_t)((int64_t)bad->r[j].off - sh);
                i = first_from(clean, id, off);
                if (i == clean->n || clean->r[i].off != off)
                    fail_msg("%s: source 0x%x has an event at %" PRIu64
                             " before its first address after an A-Sync at %" PRIu64
                             ", not one of the clean decode's (%u reports, the last at %" PRIu64
                             ")",
                             what, id, bad->r[j].off, ad, bad->realigns, last_found);
            }
            for (; i < clean->n; i++) {
                if (clean->r[i].id != id)
                    continue;
                while (j < bad->n && bad->r[j].id != id)
                    j++;
                if (j == bad->n)
                    fail_msg("%s: source 0x%x ends before the clean event at %" PRIu64, what, id,
                             clean->r[i].off);
                const rec *c = &clean->r[i], *e = &bad->r[j];
                const uint64_t off = (uint64_t)((int64_t)e->off - sh);
                if (c->kind != e->kind || c->off != off || c->first != e->first ||
                    c->last != e->last || c->ninsn != e->ninsn || c->status != e->status)
                    fail_msg("%s: source 0x%x, clean event at %" PRIu64 " (%#" PRIx64 "..%#" PRIx64
                             ") differs from the damaged one at %" PRIu64 " (%#" PRIx64
                             "..%#" PRIx64 ")",
                             what, id, c->off, c->first, c->last, e->off, e->first, e->last);
                if (c->kind == TK_EV_RANGE)
                    matched += c->ninsn;
                m->events++;
                j++;
            }
            while (j < bad->n && bad->r[j].id != id)
                j++;
            assert_true(j == bad->n); /* and nothing more */
        }
        assert_true(matched <= after);
        m->lost += after - matched;
        m->recovered++;
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
    mstats ms[NMODES];
    memset(ms, 0, sizeof(ms));
    check_snapshot("bugfix-exact-match", 0x9e3779b97f4a7c15ull, ms);
    check_snapshot("juno_r1_1", 0x2545f4914f6cdd1dull, ms);
    print_message("damages (1-15 bytes dropped or inserted) / re-aligned / reports / events "
                  "after the sources' next A-Sync equal to the clean decode's / instructions "
                  "lost of those after the damage\n");
    for (int i = 0; i < NMODES; i++)
        print_message("  %-20s %3u / %3u / %3u / %9" PRIu64 " / %9" PRIu64 " of %10" PRIu64 "\n",
                      mode_names[i], ms[i].damages, ms[i].recovered, ms[i].reports, ms[i].events,
                      ms[i].lost, ms[i].insns_after);
    /* anywhere with room after it, or two damages: always found again */
    assert_int_equal(ms[M_ANY].recovered, ms[M_ANY].damages);
    assert_int_equal(ms[M_TWO].recovered, ms[M_TWO].damages);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_etb_realign)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
