/* SPDX-License-Identifier: BSD-2-Clause */
/* Support packets (format 3 subformat 3) the decoder must not believe (decoder.c,
 * support_refusal), on a real trace: the golden dhrystone vectors of etrace-ref, their packets
 * fed to the decoder with one support packet added or changed. A refused packet is one error
 * event (TK_ERR_BAD_PACKET) at that packet's offset and index; nothing of it is applied and the
 * flow restarts at the next sync, from where it equals the clean decode. A change of options at
 * a trace's clean end is believed (unless TK_TE_DEC_FIXED_OPTIONS), and read from then on. */
#include "robust_fixture.h"

#include "tracekit/te_packet.h"

/* The vector's packets, parsed once, with their offsets. */
typedef struct pkts {
    tk_te_packet *p;
    uint64_t *off;
    size_t n;
} pkts;

static void parse_all(const rb_vector *v, pkts *out)
{
    memset(out, 0, sizeof(*out));
    tk_te_raw *r = NULL;
    assert_int_equal(tk_te_raw_from_buffer(v->raw, v->raw_len, &r), TK_OK);
    size_t cap = 0;
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_raw_next(r, &rp, &diag);
        if (st == TK_END)
            break;
        assert_int_equal(st, TK_OK);
        if (out->n == cap) {
            cap = cap ? 2 * cap : 4096;
            out->p = realloc(out->p, cap * sizeof(*out->p));
            out->off = realloc(out->off, cap * sizeof(*out->off));
            assert_true(out->p && out->off);
        }
        assert_int_equal(
            tk_te_packet_decode(&v->params, rp.payload, rp.len, &out->p[out->n], &diag), TK_OK);
        out->off[out->n++] = rp.offset;
    }
    tk_te_raw_close(r);
    assert_true(out->n > 40);
}

static void pkts_free(pkts *k)
{
    free(k->p);
    free(k->off);
}

static bool is_support(const tk_te_packet *p)
{
    return p->format == TK_TE_F3 && p->subformat == TK_TE_SF_SUPPORT;
}

static bool is_sync(const tk_te_packet *p)
{
    return p->format == TK_TE_F3 &&
           (p->subformat == TK_TE_SF_START || p->subformat == TK_TE_SF_TRAP);
}

/* A decoding session: packets fed one by one into a flow (rb_on_event checks each event). */
typedef struct session {
    tk_te_decoder *d;
    rb_flow f;
    uint64_t index; /* next packet index; offsets are index * 4, inside stream_len */
} session;

static void session_open(session *s, const rb_vector *v, unsigned flags, size_t npkts)
{
    memset(s, 0, sizeof(*s));
    s->f.img = v->img;
    s->f.stream_len = 4 * npkts + 4;
    assert_int_equal(tk_te_decoder_new(&v->params, v->img, rb_on_event, &s->f, &s->d), TK_OK);
    tk_te_decoder_set_flags(s->d, flags);
}

/* Feed one packet; returns the number of error events it caused. */
static uint64_t feed(session *s, const tk_te_packet *p)
{
    const uint64_t before = s->f.errors;
    rb_note_packet(&s->f, 4 * s->index, is_sync(p));
    s->f.feeding = true;
    s->f.feed_off = 4 * s->index;
    s->f.feed_index = s->index;
    assert_int_equal(tk_te_decoder_packet(s->d, p, 4 * s->index, s->index), TK_OK);
    s->f.feeding = false;
    s->index++;
    return s->f.errors - before;
}

static void feed_range(session *s, const pkts *k, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        feed(s, &k->p[i]);
}

static void session_close(session *s)
{
    assert_int_equal(tk_te_decoder_finish(s->d), TK_OK);
    tk_te_decoder_free(s->d);
}

/* The first packet index after `from` that is a sync. */
static size_t next_sync(const pkts *k, size_t from)
{
    size_t i = from;
    while (i < k->n && !is_sync(&k->p[i]))
        i++;
    assert_true(i < k->n);
    return i;
}

static bool load(rb_vector *v, const char *setting, pkts *k)
{
    if (!rb_vector_load(v, "dhrystone", setting, NULL))
        return false;
    parse_all(v, k);
    assert_true(is_support(&k->p[0]));
    assert_true(is_support(&k->p[k->n - 1]));
    return true;
}

static void clean_flow(const rb_vector *v, const pkts *k, rb_flow *out)
{
    session s;
    session_open(&s, v, 0, k->n);
    feed_range(&s, k, 0, k->n);
    session_close(&s);
    assert_int_equal(s.f.errors, 0);
    *out = s.f;
}

/* The flow from the decoder's restart to the end equals the clean flow's end. */
static void expect_exact_after_restart(const rb_flow *clean, const rb_flow *f)
{
    assert_true(f->resynced);
    const uint64_t tail = f->ninsn - f->restart_insn;
    assert_true(tail > 0);
    assert_true(rb_common_suffix(clean, f) >= tail);
}

/* A support packet with other options in the middle of the flow: refused at its index. */
static void test_options_changed_mid_flow(void **state)
{
    (void)state;
    static const char *const settings[] = {"itype3_basic", "itype4_debug"};
    for (size_t t = 0; t < 2; t++) {
        rb_vector v;
        pkts k;
        if (!load(&v, settings[t], &k)) {
            skip();
            return;
        }
        rb_flow clean;
        clean_flow(&v, &k, &clean);
        /* between two syncs, a third of the way in */
        const size_t at = next_sync(&k, k.n / 3) + 2;
        assert_false(is_sync(&k.p[at]));
        tk_te_packet bad = k.p[0];
        bad.ienable = 1;
        bad.qual_status = TK_QUAL_NO_CHANGE;
        bad.ioptions ^= TK_TE_IOPT_FULL_ADDRESS;
        session s;
        session_open(&s, &v, 0, k.n + 1);
        feed_range(&s, &k, 0, at);
        const uint64_t before = s.f.ninsn;
        assert_int_equal(feed(&s, &bad), 1); /* one error, at this packet (rb_on_event) */
        assert_true(s.f.ninsn >= before);
        feed_range(&s, &k, at, k.n);
        session_close(&s);
        assert_int_equal(s.f.errors, 1);
        expect_exact_after_restart(&clean, &s.f);
        /* the flow restarted at the first sync after the refused packet: its first
         * instruction is the sync's, which the clean decode emitted after the packets before
         * the sync and once the packet after it was read */
        const size_t sync = next_sync(&k, at);
        const uint64_t restart = clean.ninsn - (s.f.ninsn - s.f.restart_insn);
        assert_true(restart >= clean.pkt_insn[sync]);
        assert_true(restart <= clean.pkt_insn[sync + 1]);
        print_message("%s: refused mid-flow options change; %llu of %llu instructions decoded\n",
                      settings[t], (unsigned long long)s.f.ninsn, (unsigned long long)clean.ninsn);
        rb_flow_free(&s.f);
        rb_flow_free(&clean);
        pkts_free(&k);
        rb_vector_free(&v);
    }
}

/* The first support packet changed: encoder_mode 1, an undefined ioptions bit, or a mode the
 * encoder does not implement (the golden vectors' bpred_size_p, cache_size_p and
 * return_stack_size_p are 0). Each is refused at index 0; the sync that follows starts the
 * flow, which is then the clean one exactly. */
static void test_impossible_first_support_packet(void **state)
{
    (void)state;
    rb_vector v;
    pkts k;
    if (!load(&v, "itype3_basic", &k)) {
        skip();
        return;
    }
    assert_int_equal(v.params.s.bpred_size, 0);
    assert_int_equal(v.params.s.cache_size, 0);
    assert_int_equal(v.params.s.call_counter_size, 0);
    rb_flow clean;
    clean_flow(&v, &k, &clean);
    const uint32_t io = k.p[0].ioptions;
    const struct {
        uint8_t em;
        uint32_t io;
    } cases[] = {
        {1, io},
        {0, io | (1u << 5)}, /* sijump: not transmitted with 5-bit ioptions */
        {0, io | TK_TE_IOPT_BRANCH_PREDICTION},
        {0, io | TK_TE_IOPT_JUMP_TARGET_CACHE},
        {0, io | TK_TE_IOPT_IMPLICIT_RETURN},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        tk_te_packet first = k.p[0];
        first.encoder_mode = cases[c].em;
        first.ioptions = cases[c].io;
        session s;
        session_open(&s, &v, 0, k.n);
        assert_int_equal(feed(&s, &first), 1);
        feed_range(&s, &k, 1, k.n);
        session_close(&s);
        assert_int_equal(s.f.errors, 1);
        assert_int_equal(s.f.ninsn, clean.ninsn);
        assert_int_equal(rb_common_prefix(&clean, &s.f), clean.ninsn);
        rb_flow_free(&s.f);
    }
    rb_flow_free(&clean);
    pkts_free(&k);
    rb_vector_free(&v);
}

/* Damage, then a support packet with other options: refused too (a reconfigured encoder
 * ends its trace cleanly first), so the next sync recovers with the right options. */
static void test_options_changed_after_damage(void **state)
{
    (void)state;
    rb_vector v;
    pkts k;
    if (!load(&v, "itype4_debug", &k)) {
        skip();
        return;
    }
    rb_flow clean;
    clean_flow(&v, &k, &clean);
    const size_t at = next_sync(&k, k.n / 2) + 3;
    tk_te_packet bad = k.p[k.n - 1]; /* the closing support packet: qualification ended */
    bad.ioptions ^= TK_TE_IOPT_FULL_ADDRESS;
    session s;
    session_open(&s, &v, 0, k.n + 2);
    feed_range(&s, &k, 0, at);
    assert_int_equal(tk_te_decoder_lost(s.d, 4 * s.index, s.index), TK_OK);
    s.index++;
    assert_int_equal(feed(&s, &bad), 1);
    feed_range(&s, &k, at, k.n);
    session_close(&s);
    assert_int_equal(s.f.lost, 1);
    assert_int_equal(s.f.errors, 1);
    expect_exact_after_restart(&clean, &s.f);
    rb_flow_free(&s.f);
    rb_flow_free(&clean);
    pkts_free(&k);
    rb_vector_free(&v);
}

/* After the trace's clean end, a support packet may announce new options (the encoder was
 * disabled and reprogrammed): the decoder takes them. Here the trace (full addresses) runs
 * again after an announcement of delta addresses without its own support packet, so the
 * decoder reads its absolute addresses as deltas and reports mismatches: the options did
 * change. With TK_TE_DEC_FIXED_OPTIONS the announcement is refused and the second run decodes
 * exactly like the first. */
static void test_options_changed_after_clean_end(void **state)
{
    (void)state;
    rb_vector v;
    pkts k;
    if (!load(&v, "itype4_debug", &k)) {
        skip();
        return;
    }
    assert_true(v.params.o.full_address);
    rb_flow clean;
    clean_flow(&v, &k, &clean);
    tk_te_packet announce = k.p[0];
    announce.ioptions &= ~(uint32_t)TK_TE_IOPT_FULL_ADDRESS;
    for (int fixed = 0; fixed < 2; fixed++) {
        session s;
        session_open(&s, &v, fixed ? TK_TE_DEC_FIXED_OPTIONS : 0, 2 * k.n + 1);
        feed_range(&s, &k, 0, k.n);
        assert_int_equal(s.f.errors, 0);
        assert_int_equal(s.f.ninsn, clean.ninsn);
        assert_int_equal(feed(&s, &announce), fixed ? 1 : 0);
        feed_range(&s, &k, 1, k.n);
        session_close(&s);
        if (fixed) {
            assert_int_equal(s.f.errors, 1);
            assert_int_equal(s.f.ninsn, 2 * clean.ninsn);
        } else {
            assert_true(s.f.mismatches > 0);
        }
        rb_flow_free(&s.f);
    }
    rb_flow_free(&clean);
    pkts_free(&k);
    rb_vector_free(&v);
}

/* The encoder lost packets (back-pressure, payload.adoc: a support packet with qual_status
 * trace_lost is sent, then trace resumes with a sync): the packets between a point in the
 * flow and the next sync are replaced by that support packet. The decoder reports the loss
 * (TK_EV_LOST, no error) and the flow from the sync on is exact. */
static void test_trace_lost_support_packet(void **state)
{
    (void)state;
    rb_vector v;
    pkts k;
    if (!load(&v, "itype3_basic", &k)) {
        skip();
        return;
    }
    rb_flow clean;
    clean_flow(&v, &k, &clean);
    const size_t from = next_sync(&k, k.n / 2) + 2, sync = next_sync(&k, from);
    assert_true(sync > from);
    tk_te_packet lost = k.p[k.n - 1];
    lost.ienable = 1;
    lost.qual_status = TK_QUAL_TRACE_LOST;
    session s;
    session_open(&s, &v, 0, k.n);
    feed_range(&s, &k, 0, from);
    assert_int_equal(feed(&s, &lost), 0);
    feed_range(&s, &k, sync, k.n);
    session_close(&s);
    assert_int_equal(s.f.errors, 0);
    assert_int_equal(s.f.lost, 1);
    expect_exact_after_restart(&clean, &s.f);
    /* nothing before the loss was lost either: the start is the clean flow's */
    assert_true(rb_common_prefix(&clean, &s.f) >= clean.pkt_insn[from]);
    rb_flow_free(&s.f);
    rb_flow_free(&clean);
    pkts_free(&k);
    rb_vector_free(&v);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_changed_mid_flow),
        cmocka_unit_test(test_impossible_first_support_packet),
        cmocka_unit_test(test_options_changed_after_damage),
        cmocka_unit_test(test_options_changed_after_clean_end),
        cmocka_unit_test(test_trace_lost_support_packet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
