/* SPDX-License-Identifier: BSD-2-Clause */
/* Regression tests for bugs the fuzz targets found (docs/robustness.md lists them). Each
 * test is named after what it caught and rebuilds the failing input by hand. */
#include "testutil.h"

#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/etm4.h"
#include "tracekit/legacy.h"
#include "tracekit/te_ingress.h"

/* fuzz_encap: with a srcID that does not end on a byte boundary plus a type field, a header
 * whose length is too small to hold srcID remainder and type made the payload size negative
 * (a huge unsigned number) and the reader copied past its scratch buffer. */
static void test_encap_length_shorter_than_srcid_and_type(void **state)
{
    (void)state;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.srcid_bits = 7; /* 7 + 3 bits: more than the one byte length 1 gives */
    cfg.type_bits = 3;
    /* length 1, flow 2; then one byte; then a well-formed packet that must still be read */
    uint8_t good[TK_ENCAP_MAX_PACKET];
    size_t glen = 0;
    const uint8_t payload[2] = {0x5a, 0xa5};
    tk_encap_fields f = {.flow = 2, .srcid = 0x55, .type = 5};
    assert_int_equal(tk_encap_write(&cfg, &f, payload, sizeof(payload), good, sizeof(good), &glen),
                     TK_OK);
    uint8_t buf[2 + TK_ENCAP_MAX_PACKET] = {(2 << 5) | 1, 0xff};
    memcpy(buf + 2, good, glen);
    tk_encap_reader *r = NULL;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, 2 + glen), TK_OK);
    tk_encap_packet pkt;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_encap_reader_next(r, &pkt, &diag), TK_ERR_BAD_PACKET);
    assert_int_equal(diag.byte_offset, 0);
    assert_int_equal(diag.packet_index, 0);
    /* the reader skipped the bad packet by its length and reads the next one intact */
    assert_int_equal(tk_encap_reader_next(r, &pkt, &diag), TK_OK);
    assert_int_equal(pkt.offset, 2);
    assert_int_equal(pkt.srcid, 0x55);
    assert_int_equal(pkt.type, 5);
    assert_int_equal(pkt.payload_len, sizeof(payload));
    assert_memory_equal(pkt.payload, payload, sizeof(payload));
    assert_int_equal(tk_encap_reader_next(r, &pkt, &diag), TK_END);
    tk_encap_reader_free(r);
}

typedef struct etm4_seen {
    unsigned ccnt_f2;
    uint32_t commit;
} etm4_seen;

static tk_status on_etm4_packet(void *ctx, const tk_etm4_packet *pkt)
{
    etm4_seen *s = ctx;
    if (pkt->type == TK_ETM4_CCNT_F2 && pkt->has_commit) {
        s->ccnt_f2++;
        s->commit = pkt->commit;
    }
    return TK_OK;
}

/* fuzz_etm4: a cycle count format 2 packet with the "MAXSPEC - 15" commit offset computed
 * that offset in int32_t, and TRCIDR8.MAXSPEC (any 32-bit value a snapshot gives) of
 * 0x80000000 overflowed it: undefined behaviour (a UBSan abort in the sanitizer build). */
static void test_etm4_ccnt_f2_with_maxspec_above_int_max(void **state)
{
    (void)state;
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.idr8 = 0x80000000u;
    tk_etm4_config_init(&cfg);
    etm4_seen seen = {0, 0};
    tk_etm4_parser *p = NULL;
    assert_int_equal(tk_etm4_parser_new(&cfg, on_etm4_packet, &seen, &p), TK_OK);
    /* A-Sync (§6.4.2), then CCNT format 2 with the E bit (commit = MAXSPEC - 15 + 3) */
    const uint8_t trace[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x0d, 0x30};
    assert_int_equal(tk_etm4_parser_data(p, trace, sizeof(trace), 0), TK_OK);
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    tk_etm4_parser_free(p);
    assert_int_equal(seen.ccnt_f2, 1);
    assert_int_equal(seen.commit, 0x80000000u - 15u + 3u);
}

typedef struct etm4_errors {
    unsigned errors;
    const char *last;
} etm4_errors;

static tk_status on_etm4_event(void *ctx, const tk_event *ev)
{
    etm4_errors *e = ctx;
    if (ev->kind == TK_EV_ERROR) {
        e->errors++;
        e->last = ev->message; /* the decoder's messages are string literals */
    }
    return TK_OK;
}

static tk_status etm4_send(tk_etm4_decoder *d, uint8_t type, uint32_t count)
{
    tk_etm4_packet p;
    memset(&p, 0, sizeof(p));
    p.type = type;
    p.spec_depth = count; /* TRACE_INFO */
    p.commit = count;     /* COMMIT */
    p.cancel = count;     /* CANCEL_F1 */
    return tk_etm4_decoder_packet(d, &p);
}

/* fuzz_etm4, session 6 (bug 8, a timeout): Trace Info's spec depth counts P0 elements from
 * before the decoder's start, and the decoder counted a Commit or Cancel off them one element
 * at a time; both counts go up to 2^32, so a 390-byte input (a cancel of 2.8e9) took 8.4 s
 * under ASan. 32 rounds of a cancel and a commit of 2^32 - 1 here are 2.7e11 such steps, beyond the
 * test's 60 s timeout without the fix (src/coresight/etm4_decoder.c take_unseen). The
 * counts must still balance: one element more than the trace left is an error. */
static void test_etm4_huge_speculation_counts(void **state)
{
    (void)state;
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.idr8 = 64; /* MAXSPEC: the decoder keeps a speculation queue */
    tk_etm4_config_init(&cfg);
    assert_int_equal(cfg.max_spec, 64);
    tk_cs_mem *mem = NULL;
    assert_int_equal(tk_cs_mem_new(&mem), TK_OK);
    etm4_errors seen = {0, NULL};
    tk_etm4_decoder *d = NULL;
    assert_int_equal(tk_etm4_decoder_new(&cfg, mem, on_etm4_event, &seen, &d), TK_OK);
    for (int round = 0; round < 32; round++) {
        assert_int_equal(etm4_send(d, TK_ETM4_TRACE_INFO, UINT32_MAX), TK_OK);
        assert_int_equal(etm4_send(d, TK_ETM4_CANCEL_F1, UINT32_MAX), TK_OK);
        assert_int_equal(etm4_send(d, TK_ETM4_TRACE_INFO, UINT32_MAX), TK_OK);
        assert_int_equal(etm4_send(d, TK_ETM4_COMMIT, UINT32_MAX - 5), TK_OK);
        assert_int_equal(etm4_send(d, TK_ETM4_COMMIT, 5), TK_OK);
    }
    assert_int_equal(seen.errors, 0);
    assert_int_equal(etm4_send(d, TK_ETM4_COMMIT, 1), TK_OK);
    assert_int_equal(seen.errors, 1);
    assert_string_equal(seen.last, "commit of more elements than traced");
    assert_int_equal(etm4_send(d, TK_ETM4_CANCEL_F1, 1), TK_OK);
    assert_int_equal(seen.errors, 2);
    assert_string_equal(seen.last, "cancel of more elements than traced");
    /* a cancel after a Trace Info falls on the elements before it (none seen queued) */
    assert_int_equal(etm4_send(d, TK_ETM4_TRACE_INFO, 3), TK_OK);
    assert_int_equal(etm4_send(d, TK_ETM4_CANCEL_F1, 3), TK_OK);
    assert_int_equal(seen.errors, 2);
    tk_etm4_decoder_free(d);
    tk_cs_mem_free(mem);
}

typedef struct walk_count {
    uint64_t insns, errors;
} walk_count;

static tk_status count_walk(void *ctx, const tk_event *ev)
{
    walk_count *c = ctx;
    if (ev->kind == TK_EV_RANGE)
        c->insns += ev->ninsn;
    else if (ev->kind == TK_EV_ERROR)
        c->errors++;
    return TK_OK;
}

/* fuzz_legacy, after 30 000 executions (a 1.9 KB nibble file timed out under ASan): a branch
 * item whose walk enters a loop without conditional branch (dhrystone's 0x8000004c..56, the
 * tohost loop) walks the loop until lg_flow's WALK_LIMIT, 2^26 instructions per item, all of
 * them emitted: 268 million instructions from 1.9 KB, 2.8 s in a release build. Rebuilt here
 * from records: a two-instruction loop closed by a jump, then a taken branch the program does
 * not have after it (as damage makes). Fixed in src/legacy/flow.c: a walk that passes blocks
 * by rule and comes back to one stops (Brent's cycle check) with a mismatch. */
static void test_nibble_branch_free_loop_walk(void **state)
{
    (void)state;
    const uint32_t code[] = {0x00000013u, 0x00000013u, 0xff9ff06fu /* j -8 */};
    uint8_t bytes[sizeof(code)];
    for (size_t i = 0; i < sizeof(code) / 4; i++)
        for (size_t b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    tk_image *img = NULL;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, 0x1000, bytes, sizeof(bytes)), TK_OK);
    tk_hart_retire r[4];
    memset(r, 0, sizeof(r));
    const uint64_t pcs[4] = {0x1000, 0x1004, 0x1008, 0x2000};
    const uint32_t insns[4] = {code[0], code[1], code[2], 0x00000463u /* beq x0,x0,8 */};
    const uint8_t itypes[4] = {0, 0, TK_ITYPE_INF_JUMP, TK_ITYPE_TAKEN};
    for (int i = 0; i < 4; i++) {
        r[i].pc = pcs[i];
        r[i].insn = insns[i];
        r[i].len = 4;
        r[i].itype = itypes[i];
        r[i].priv = TK_PRIV_M;
        r[i].flags = TK_HART_F_RETIRED;
    }
    tk_nibble_params p;
    tk_nibble_params_init(&p);
    p.compressed = false;
    tk_nibble_encoder *e = NULL;
    assert_int_equal(tk_nibble_encoder_new(&p, &e), TK_OK);
    assert_int_equal(tk_nibble_encoder_push(e, r, 4, NULL, 0), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(e, true, 0x2008), TK_OK);
    walk_count c = {0, 0};
    tk_nibble_decoder *d = NULL;
    assert_int_equal(tk_nibble_decoder_new(&p, img, count_walk, &c, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, tk_nibble_encoder_trace(e)), TK_OK);
    print_message("branch-free loop: %llu instructions walked, %llu errors\n",
                  (unsigned long long)c.insns, (unsigned long long)c.errors);
    assert_true(c.errors >= 1); /* the taken branch is never found */
    assert_true(c.insns < 64);  /* the loop is noticed on its second round */
    tk_nibble_decoder_free(d);
    tk_nibble_encoder_free(e);
    tk_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encap_length_shorter_than_srcid_and_type),
        cmocka_unit_test(test_etm4_ccnt_f2_with_maxspec_above_int_max),
        cmocka_unit_test(test_etm4_huge_speculation_counts),
        cmocka_unit_test(test_nibble_branch_free_loop_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
