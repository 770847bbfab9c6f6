/* SPDX-License-Identifier: BSD-2-Clause */
/* Regression tests for bugs the fuzz targets found (docs/robustness.md lists them). Each
 * test is named after what it caught and rebuilds the failing input by hand. */
#include "testutil.h"

#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/etm4.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encap_length_shorter_than_srcid_and_type),
        cmocka_unit_test(test_etm4_ccnt_f2_with_maxspec_above_int_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
