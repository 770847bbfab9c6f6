/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted traces in the general packet encapsulation (issue 8). The raw .te_inst_raw framing
 * has no sync pattern: after a dropped or inserted byte it realigns on a packet boundary only
 * by chance (test_corruption.c, column no-sync). The encapsulation of encap.h has one: a run
 * of N = 31 + T + S "null" bytes is always followed by a packet start, and a writer inserts
 * such a sequence (tk_encap_write_sync) periodically. This test measures what that buys.
 *
 * The te_inst packets of every golden vector of etrace-ref are re-wrapped as a trace funnel
 * would send them: an 8-bit srcID (the traced hart's), a 2-byte timestamp on the first packet
 * after each sync sequence (a time reference per sync period), a sync sequence before the
 * first packet and then every SYNC_EVERY packets. The clean encapsulated trace must decode to
 * exactly the raw trace's flow. Both are then damaged with the same seeded kinds (rb_mutate)
 * and checked by rb_check_mutant: no crash or hang, every error inside the stream, restart at
 * the first or second aligned format 3 sync after the damage with the flow exact to the end.
 * The encapsulated stream is read as a tool should: a packet the reader rejects, of another
 * srcID, not te_inst or rejected by the codec is reported to the decoder as lost and the
 * reader moves to the next sync sequence (rb_decode_encap_flags). On top of the shared check,
 * the encapsulation must be read on its boundaries again after the first sync sequence that
 * follows the damage (asserted: the first format 3 sync after that sequence is fed at its
 * place), so its "never realigned" count must be 0 where the raw framing's is not.
 *
 * Skipping to the next sync sequence on every error gives up the rest of a sync period even
 * when the framing was still right (a damaged payload). The same stream is therefore also read
 * with rb_encap.keep_reading (rows encap-keep): on after the error, the next sync sequence
 * still realigning a misread framing, since no packet is longer than a sync sequence. Rows
 * encap-check read on too and apply the unframed stream's rule (tk_encap_config.unframed,
 * what `tracekit decode --encap` does): the last null before a normal packet must be a
 * null.alignment, so bytes zeroed in mid-stream, which read as idle nulls, are reported. */
#include "robust_fixture.h"

/* Mutations per vector and reading (raw, encap, encap-keep), split evenly over the kinds:
 * 25 vectors -> 2700 each; fewer in the sanitizer build (-DTK_SANITIZE=ON), which runs about five
 * times slower. */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATIONS_PER_VECTOR 48
#else
#define MUTATIONS_PER_VECTOR 108
#endif

/* te_inst packets between two sync sequences */
#define SYNC_EVERY 16

static const rb_encap encap_setting = {
    .cfg = {.size = sizeof(tk_encap_config), .srcid_bits = 8, .timestamp_bytes = 2},
    .srcid = 3,
};
/* the same stream read on after an error instead of skipping to the next sync sequence */
static const rb_encap encap_keep = {
    .cfg = {.size = sizeof(tk_encap_config), .srcid_bits = 8, .timestamp_bytes = 2},
    .srcid = 3,
    .keep_reading = true,
};

/* read on, and the unframed stream's rule: the last null before a normal packet is a
 * null.alignment, so zeroed bytes that read as idle nulls are reported (encap-check) */
static const rb_encap encap_check = {
    .cfg = {.size = sizeof(tk_encap_config),
            .srcid_bits = 8,
            .timestamp_bytes = 2,
            .unframed = true},
    .srcid = 3,
    .keep_reading = true,
};

typedef struct wrapped {
    uint8_t *buf;
    size_t len;
    uint64_t *seq_off; /* where each sync sequence starts */
    size_t nseq;
} wrapped;

/* v's raw packets in the encapsulation of e, a sync sequence every SYNC_EVERY packets. */
static void wrap_vector(const rb_vector *v, const rb_encap *e, wrapped *w)
{
    /* per raw packet (at least 2 bytes) at most srcID and timestamp bytes more, per
     * SYNC_EVERY packets a sync sequence of at most TK_ENCAP_MAX_PACKET bytes */
    const size_t cap = 3 * v->raw_len + TK_ENCAP_MAX_PACKET * (v->raw_len / SYNC_EVERY + 2);
    memset(w, 0, sizeof(*w));
    w->buf = malloc(cap);
    w->seq_off = malloc(sizeof(*w->seq_off) * (v->raw_len / SYNC_EVERY + 2));
    assert_true(w->buf && w->seq_off);
    tk_te_raw *r = NULL;
    assert_int_equal(tk_te_raw_from_buffer(v->raw, v->raw_len, &r), TK_OK);
    tk_te_raw_packet rp;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st;
    for (uint64_t n = 0; (st = tk_te_raw_next(r, &rp, &diag)) == TK_OK; n++) {
        const bool after_sync = n % SYNC_EVERY == 0;
        if (after_sync) {
            w->seq_off[w->nseq++] = w->len;
            const size_t s = tk_encap_write_sync(&e->cfg, w->buf + w->len, cap - w->len);
            assert_true(s > 0);
            w->len += s;
        }
        const tk_encap_fields f = {.flow = rp.msg_type,
                                   .extend = after_sync,
                                   .srcid = e->srcid,
                                   .timestamp = (n * 37) & 0xffff};
        size_t wr = 0;
        assert_int_equal(
            tk_encap_write(&e->cfg, &f, rp.payload, rp.len, w->buf + w->len, cap - w->len, &wr),
            TK_OK);
        w->len += wr;
    }
    assert_int_equal(st, TK_END);
    tk_te_raw_close(r);
}

typedef struct run_ctx {
    rb_kind_stats raw[RB_NKINDS], encap[RB_NKINDS], keep[RB_NKINDS], check[RB_NKINDS];
    unsigned vectors;
    size_t raw_bytes, encap_bytes;
} run_ctx;

static void run_vector(const char *prog, const char *setting, void *vctx)
{
    run_ctx *rc = vctx;
    rb_vector v;
    if (!rb_vector_load(&v, prog, setting, NULL))
        return;
    rc->vectors++;
    wrapped w;
    wrap_vector(&v, &encap_setting, &w);
    rc->raw_bytes += v.raw_len;
    rc->encap_bytes += w.len;
    rb_flow clean, eclean;
    rb_decode(&v, v.raw, v.raw_len, &clean);
    rb_decode_stream(&v, &encap_setting, w.buf, w.len, 0, &eclean);
    /* the wrapping changes nothing of the flow */
    assert_int_equal(eclean.errors + eclean.bad_packets + eclean.lost, 0);
    assert_int_equal(eclean.ninsn, clean.ninsn);
    assert_int_equal(eclean.nruns, clean.nruns);
    assert_memory_equal(eclean.runs, clean.runs, clean.nruns * sizeof(*clean.runs));
    rb_mutate_vector(&v, &clean, MUTATIONS_PER_VECTOR, rc->raw);
    const rb_mutant tmpl = {.encap = &encap_setting, .seq_off = w.seq_off, .nseq = w.nseq};
    rb_mutate_stream(&v, &eclean, w.buf, w.len, &tmpl, MUTATIONS_PER_VECTOR, rc->encap);
    const rb_mutant keep = {.encap = &encap_keep, .seq_off = w.seq_off, .nseq = w.nseq};
    rb_mutate_stream(&v, &eclean, w.buf, w.len, &keep, MUTATIONS_PER_VECTOR, rc->keep);
    const rb_mutant check = {.encap = &encap_check, .seq_off = w.seq_off, .nseq = w.nseq};
    rb_mutate_stream(&v, &eclean, w.buf, w.len, &check, MUTATIONS_PER_VECTOR, rc->check);
    rb_flow_free(&eclean);
    rb_flow_free(&clean);
    free(w.buf);
    free(w.seq_off);
    rb_vector_free(&v);
}

static double pct(unsigned long n, unsigned long of)
{
    return of ? 100.0 * (double)n / (double)of : 0.0;
}

static void test_encap_corruption_golden(void **state)
{
    (void)state;
    run_ctx rc;
    memset(&rc, 0, sizeof(rc));
    rb_for_each_vector(run_vector, &rc);
    assert_true(rc.vectors >= 20);
    printf("encap corruption: %u golden vectors, %d mutations each per framing; raw %zu bytes, "
           "encapsulated (srcID %u bits, timestamp %u bytes, sync every %d packets) %zu bytes\n",
           rc.vectors, MUTATIONS_PER_VECTOR, rc.raw_bytes, encap_setting.cfg.srcid_bits,
           encap_setting.cfg.timestamp_bytes, SYNC_EVERY, rc.encap_bytes);
    rb_print_stats_header(true);
    for (int k = 0; k < RB_NKINDS; k++) {
        rb_print_stats_row("raw", rb_kind_names[k], &rc.raw[k]);
        rb_print_stats_row("encap", rb_kind_names[k], &rc.encap[k]);
        rb_print_stats_row("encap-keep", rb_kind_names[k], &rc.keep[k]);
        rb_print_stats_row("encap-check", rb_kind_names[k], &rc.check[k]);
        /* a truncated final packet is always noticed by either reader */
        if (k == RB_TRUNC) {
            assert_int_equal(rc.raw[k].with_error, rc.raw[k].mutations);
            assert_int_equal(rc.encap[k].with_error, rc.encap[k].mutations);
            assert_int_equal(rc.keep[k].with_error, rc.keep[k].mutations);
            assert_int_equal(rc.check[k].with_error, rc.check[k].mutations);
        }
    }
    /* the point of the test: damage that shifts the framing, compared on the same vectors.
     * no-sync splits into damage in the trace's last stretch (no sync after it for the raw
     * framing; no sync sequence followed by a sync for the encapsulation, whose reader gives
     * up the rest of a damaged sync period) and a framing that never realigned although a
     * sync to restart at came later. */
    printf("no-sync share: all / never realigned although a sync came later\n");
    for (int k = 0; k < RB_NKINDS; k++) {
        const rb_kind_stats *a = &rc.raw[k], *b = &rc.encap[k], *c = &rc.keep[k];
        printf("  %-14s raw %5.1f%% / %4.1f%% (%lu)  encap %5.1f%% / %4.1f%% (%lu)  "
               "encap-keep %5.1f%% / %4.1f%% (%lu)\n",
               rb_kind_names[k], pct(a->no_sync_after, a->mutations),
               pct(a->never_realigned, a->mutations), a->never_realigned,
               pct(b->no_sync_after, b->mutations), pct(b->never_realigned, b->mutations),
               b->never_realigned, pct(c->no_sync_after, c->mutations),
               pct(c->never_realigned, c->mutations), c->never_realigned);
        /* rb_check_mutant already fails on the first such mutation; kept as the claim */
        assert_int_equal(b->never_realigned, 0);
        assert_int_equal(c->never_realigned, 0);
        assert_int_equal(rc.check[k].never_realigned, 0);
    }
    /* the alignment rule turns zeroed stretches read as idle nulls into reports */
    assert_true(rc.check[RB_ZERO].silent < rc.keep[RB_ZERO].silent);
    assert_true(rc.check[RB_ZERO].with_error > rc.keep[RB_ZERO].with_error);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_encap_corruption_golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
