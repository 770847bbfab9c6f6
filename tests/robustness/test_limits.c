/* SPDX-License-Identifier: BSD-2-Clause */
/* Limits: inputs built to make time or memory grow without bound must not. Endless zero
 * padding through every byte-stream reader, a flood of branch-map packets, a call stack far
 * deeper than the implicit-return stack, and code whose path never reaches the reported
 * address. Memory is measured as growth of the peak resident set; a hang is turned into a
 * failure by an alarm. */
#include "testutil.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tracekit/coresight.h"
#include "tracekit/encap.h"
#include "tracekit/etm4.h"
#include "tracekit/te_decoder.h"

/* 4 MiB of padding: large against any buffer the readers keep, quick under ASan. */
#define PAD_BYTES (4u << 20)
/* Peak resident set may grow this much during one test (the inputs themselves excluded). */
#define RSS_SLACK_KB (8 * 1024)
#define HANG_SECONDS 60

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_limits: no result after the time limit: a hang\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(1);
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* ---- zero padding --------------------------------------------------------------------- */

static void test_zero_padding_raw_framing(void **state)
{
    (void)state;
    uint8_t *zeros = calloc(PAD_BYTES, 1);
    assert_non_null(zeros);
    tk_te_raw *r = NULL;
    assert_int_equal(tk_te_raw_from_buffer(zeros, PAD_BYTES, &r), TK_OK);
    long before = peak_rss_kb();
    uint64_t errors = 0;
    tk_te_raw_packet rp;
    tk_diag diag;
    tk_status st;
    /* every zero byte is a header of length 0: one error each, one byte at a time */
    while ((st = tk_te_raw_next(r, &rp, &diag)) != TK_END) {
        assert_int_equal(st, TK_ERR_BAD_PACKET);
        assert_int_equal(diag.byte_offset, errors);
        errors++;
        assert_true(errors <= PAD_BYTES);
    }
    assert_int_equal(errors, PAD_BYTES);
    assert_true(peak_rss_kb() - before < RSS_SLACK_KB);
    tk_te_raw_close(r);
    free(zeros);
}

static void test_zero_padding_encapsulation(void **state)
{
    (void)state;
    uint8_t *zeros = calloc(PAD_BYTES, 1);
    assert_non_null(zeros);
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.srcid_bits = 8;
    cfg.timestamp_bytes = 4;
    tk_encap_reader *r = NULL;
    tk_encap_packet pkt;
    tk_diag diag;
    /* null.idle bytes are skipped in one call */
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, zeros, PAD_BYTES), TK_OK);
    assert_int_equal(tk_encap_reader_next(r, &pkt, &diag), TK_END);
    assert_int_equal(tk_encap_reader_get_offset(r), PAD_BYTES);
    /* a sync search through padding with no packet after it ends */
    assert_int_equal(tk_encap_reader_sync_set(r, 0), TK_OK);
    assert_int_equal(tk_encap_reader_sync_forward(r), TK_END);
    tk_encap_reader_free(r);
    /* reported one by one when asked for */
    cfg.report_nulls = true;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, zeros, PAD_BYTES), TK_OK);
    uint64_t nulls = 0;
    while (tk_encap_reader_next(r, &pkt, &diag) == TK_OK) {
        assert_true(pkt.is_null);
        nulls++;
    }
    assert_int_equal(nulls, PAD_BYTES);
    tk_encap_reader_free(r);
    free(zeros);
}

static tk_status count_run(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    (void)id;
    (void)data;
    (void)index;
    *(uint64_t *)ctx += n;
    return TK_OK;
}

static tk_status count_pkt(void *ctx, const tk_etm4_packet *pkt)
{
    (void)pkt;
    (*(uint64_t *)ctx)++;
    return TK_OK;
}

static void test_zero_padding_coresight(void **state)
{
    (void)state;
    uint8_t *zeros = calloc(PAD_BYTES, 1);
    assert_non_null(zeros);
    long before = peak_rss_kb();
    /* formatter frames of zeros: all source ID 0 (null source), nothing delivered */
    uint64_t delivered = 0;
    tk_cs_deformatter *d = NULL;
    assert_int_equal(tk_cs_deformatter_new(0, count_run, NULL, &delivered, &d), TK_OK);
    assert_int_equal(tk_cs_deformat(d, zeros, PAD_BYTES), TK_OK);
    assert_int_equal(tk_cs_deformat_end(d), TK_OK);
    tk_cs_deformatter_free(d);
    assert_true(delivered <= PAD_BYTES);
    /* an ETMv4 stream of zeros (A-Sync prefixes that never end): packets stay few, no
     * byte is buffered without bound */
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.idr0 = 0x28000ea1; /* a Cortex-A53-like unit: 64-bit addresses, no data trace */
    cfg.idr2 = 0x00000488;
    tk_etm4_config_init(&cfg);
    uint64_t packets = 0;
    tk_etm4_parser *p = NULL;
    assert_int_equal(tk_etm4_parser_new(&cfg, count_pkt, &packets, &p), TK_OK);
    assert_int_equal(tk_etm4_parser_data(p, zeros, PAD_BYTES, 0), TK_OK);
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    tk_etm4_parser_free(p);
    assert_true(packets <= PAD_BYTES);
    assert_true(peak_rss_kb() - before < RSS_SLACK_KB);
    free(zeros);
}

/* ---- decoder on tiny programs ---------------------------------------------------------- */

#define CODE_BASE 0x80000000ull

typedef struct counts {
    uint64_t insns, ranges, errors, mismatches;
    tk_status last_status; /* of the last error */
    uint64_t last_offset;
} counts;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    counts *c = ctx;
    if (ev->kind == TK_EV_RANGE) {
        c->insns += ev->ninsn;
        c->ranges++;
    } else if (ev->kind == TK_EV_ERROR) {
        c->errors++;
        c->last_status = ev->status;
        c->last_offset = ev->byte_offset;
        if (ev->status == TK_ERR_MISMATCH)
            c->mismatches++;
    }
    return TK_OK;
}

/* Parameters: full addresses (so packets are easy to build), implicit return with a
 * 2^4-entry stack. */
static void tiny_params(tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = 64;
    p->s.return_stack_size = 4;
    p->o.full_address = true;
    p->o.implicit_return = true;
}

static tk_image *tiny_image(const uint32_t *code, size_t n)
{
    uint8_t bytes[64];
    assert_true(n * 4 <= sizeof(bytes));
    for (size_t i = 0; i < n; i++)
        for (size_t b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    tk_image *img = NULL;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, CODE_BASE, bytes, 4 * n), TK_OK);
    return img;
}

/* Encode then decode the packet, so the decoder sees exactly what a trace would carry. */
static void feed(tk_te_decoder *d, const tk_te_params *p, const tk_te_packet *in, uint64_t idx)
{
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len = 0;
    assert_int_equal(tk_te_packet_encode(p, in, buf, sizeof(buf), &len), TK_OK);
    tk_te_packet pkt;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_te_packet_decode(p, buf, len, &pkt, &diag), TK_OK);
    assert_int_equal(tk_te_decoder_packet(d, &pkt, idx * 8, idx), TK_OK);
}

static void feed_start(tk_te_decoder *d, const tk_te_params *p, uint64_t addr)
{
    tk_te_packet s;
    memset(&s, 0, sizeof(s));
    s.format = TK_TE_F3;
    s.subformat = TK_TE_SF_START;
    s.has_address = true;
    s.branch = 1;
    s.privilege = 3;
    s.address = addr >> p->s.iaddress_lsb;
    feed(d, p, &s, 0);
}

/* A loop that runs for ever without using trace information: call a function that returns
 * (predicted by the implicit-return stack), jump back, call again. The reported address is
 * never reached; the decoder must say so instead of walking for ever. */
static void test_unreachable_address_through_implicit_returns(void **state)
{
    (void)state;
    const uint32_t code[] = {
        0x008000ef, /* 0: jal ra, 8   (call) */
        0xffdff06f, /* 4: j 0 */
        0x00008067, /* 8: ret */
    };
    tk_image *img = tiny_image(code, 3);
    tk_te_params p;
    tiny_params(&p);
    counts c = {0};
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, &c, &d), TK_OK);
    feed_start(d, &p, CODE_BASE);
    tk_te_packet f2;
    memset(&f2, 0, sizeof(f2));
    f2.format = TK_TE_F2;
    f2.has_address = true;
    f2.address = (CODE_BASE + 0x100) >> p.s.iaddress_lsb; /* not in the loop */
    feed(d, &p, &f2, 1);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_true(c.errors >= 1);
    print_message("unreachable address: %llu instructions walked before the error\n",
                  (unsigned long long)c.insns);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* Recursion a million calls deep, each call guarded by a not-taken branch (one branch-map
 * bit per level): the implicit-return stack keeps its 16 entries, memory stays flat. */
static void test_deep_call_stack(void **state)
{
    (void)state;
    const uint32_t code[] = {
        0x00001463, /* 0: bne x0, x0, 8 (never taken) */
        0xffdff0ef, /* 4: jal ra, 0    (call itself) */
    };
    tk_image *img = tiny_image(code, 2);
    tk_te_params p;
    tiny_params(&p);
    counts c = {0};
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, &c, &d), TK_OK);
    feed_start(d, &p, CODE_BASE);
    long before = peak_rss_kb();
    tk_te_packet f1;
    memset(&f1, 0, sizeof(f1));
    f1.format = TK_TE_F1;
    f1.branches = 0;                   /* full map of 31 branches, no address */
    f1.branch_map = 0x7fffffff;        /* 1 = not taken */
    const unsigned packets = 1u << 15; /* about a million levels */
    for (unsigned i = 0; i < packets; i++)
        feed(d, &p, &f1, 1 + i);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_int_equal(c.errors, 0);
    /* every level is two instructions; the decoder stops at the 31st branch of each map */
    assert_true(c.insns >= 2ull * 31 * (packets - 1));
    assert_true(peak_rss_kb() - before < RSS_SLACK_KB);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* A flood of branch maps with nothing to spend them on: a straight run of code with no
 * branch ends in a jump back to the start, so branch bits pile up. The decoder must refuse
 * them (branches left over) rather than store them. */
static void test_branch_map_flood_without_branches(void **state)
{
    (void)state;
    const uint32_t code[] = {
        0x00000013, /* 0: nop */
        0xffdff06f, /* 4: j 0 */
    };
    tk_image *img = tiny_image(code, 2);
    tk_te_params p;
    tiny_params(&p);
    counts c = {0};
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, &c, &d), TK_OK);
    feed_start(d, &p, CODE_BASE);
    long before = peak_rss_kb();
    tk_te_packet f1;
    memset(&f1, 0, sizeof(f1));
    f1.format = TK_TE_F1;
    f1.branch_map = 0;
    for (unsigned i = 0; i < 100000; i++) {
        if (i % 16 == 0)
            feed_start(d, &p, CODE_BASE);
        feed(d, &p, &f1, 1 + i);
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_true(c.errors >= 1);
    assert_true(peak_rss_kb() - before < RSS_SLACK_KB);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* A branch-count packet (branch prediction mode) claiming as many correctly predicted
 * branches as its 32-bit field holds: the decoder follows each of them, which took 20
 * minutes in the fuzzer (bug 7). With a limit the claim is refused at once, with the
 * packet's offset, and the next sync decodes again; a claim within the limit is followed
 * branch by branch. */
/* A decoder in branch prediction mode over a two-instruction loop, counting into c. */
static tk_te_decoder *bp_loop_decoder(tk_te_params *p, counts *c, tk_image **img)
{
    const uint32_t code[] = {
        0x00000013, /* 0: nop */
        0xfe000ee3, /* 4: beq x0, x0, 0 (back to the nop either way: ...) */
        0xff9ff06f, /* 8: j 0 (... taken or not) */
    };
    *img = tiny_image(code, 3);
    tiny_params(p);
    p->s.bpred_size = 3;
    p->o.branch_prediction = true;
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(p, *img, on_event, c, &d), TK_OK);
    return d;
}

static void test_predicted_branch_count_limit(void **state)
{
    (void)state;
    tk_image *img;
    tk_te_params p;
    counts c = {0};
    tk_te_decoder *d = bp_loop_decoder(&p, &c, &img);
    tk_te_decoder_set_max_predicted(d, 1000);
    feed_start(d, &p, CODE_BASE);
    tk_te_packet f0;
    memset(&f0, 0, sizeof(f0));
    f0.format = TK_TE_F0;
    f0.subformat = 0;
    f0.branch_fmt = 0;               /* count, then one branch that went against the predictor */
    f0.branch_count = 0xffffffffull; /* 2^32 - 1 + 31 predicted branches */
    feed(d, &p, &f0, 5);
    assert_int_equal(c.errors, 1);
    assert_int_equal(c.last_status, TK_ERR_OVERFLOW);
    assert_int_equal(c.last_offset, 5 * 8);
    assert_true(c.insns < 10);
    /* after the next sync, a claim within the limit is followed: each predicted branch is
     * two or three instructions of the loop */
    feed_start(d, &p, CODE_BASE);
    const uint64_t before = c.insns;
    f0.branch_count = 1000 - 31 - 1; /* 999 predicted, below the limit */
    feed(d, &p, &f0, 6);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_int_equal(c.errors, 1);
    assert_true(c.insns - before >= 2 * 999);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

/* Without a limit set, a decoder refuses claims above TK_TE_MAX_PREDICTED_DEFAULT, follows
 * claims up to it, and a limit of 0 lifts it. */
static void test_predicted_branch_count_default_limit(void **state)
{
    (void)state;
    tk_image *img;
    tk_te_params p;
    counts c = {0};
    tk_te_decoder *d = bp_loop_decoder(&p, &c, &img);
    tk_te_packet f0;
    memset(&f0, 0, sizeof(f0));
    f0.format = TK_TE_F0;
    f0.branch_count = 0xffffffffull; /* 2^32 - 1 + 31 */
    feed_start(d, &p, CODE_BASE);
    feed(d, &p, &f0, 1);
    assert_int_equal(c.errors, 1);
    assert_int_equal(c.last_status, TK_ERR_OVERFLOW);
    /* exactly the default is followed */
    feed_start(d, &p, CODE_BASE);
    uint64_t before = c.insns;
    f0.branch_count = TK_TE_MAX_PREDICTED_DEFAULT - 31; /* claims exactly the default */
    feed(d, &p, &f0, 3);
    assert_int_equal(c.errors, 1);
    assert_true(c.insns - before >= 2 * TK_TE_MAX_PREDICTED_DEFAULT);
    /* one more is refused; with the limit lifted it is followed */
    feed_start(d, &p, CODE_BASE);
    f0.branch_count = TK_TE_MAX_PREDICTED_DEFAULT - 30;
    feed(d, &p, &f0, 5);
    assert_int_equal(c.errors, 2);
    tk_te_decoder_set_max_predicted(d, 0);
    feed_start(d, &p, CODE_BASE);
    before = c.insns;
    feed(d, &p, &f0, 7);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_int_equal(c.errors, 2);
    assert_true(c.insns - before >= 2 * (TK_TE_MAX_PREDICTED_DEFAULT + 1));
    tk_te_decoder_free(d);
    tk_image_free(img);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    alarm(HANG_SECONDS);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_padding_raw_framing),
        cmocka_unit_test(test_zero_padding_encapsulation),
        cmocka_unit_test(test_zero_padding_coresight),
        cmocka_unit_test(test_unreachable_address_through_implicit_returns),
        cmocka_unit_test(test_deep_call_stack),
        cmocka_unit_test(test_branch_map_flood_without_branches),
        cmocka_unit_test(test_predicted_branch_count_limit),
        cmocka_unit_test(test_predicted_branch_count_default_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
