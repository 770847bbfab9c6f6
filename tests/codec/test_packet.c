/* SPDX-License-Identifier: BSD-2-Clause */
/* te_inst codec: packets built by hand for every 2.0 format/subformat checked bit for bit
 * against an independent bit-string model of the payload tables, literal byte vectors,
 * random round trips over many parameter sets, and malformed payloads. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "bit_model.h"
#include "codec_gen.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

/* Sign compression as payload.adoc describes it, one bit at a time. */
static size_t bs_compress(const bitstr *s, uint8_t *out)
{
    char msb = s->b[s->n - 1];
    unsigned keep = s->n;
    while (keep > 1 && s->b[keep - 2] == msb)
        keep--;
    size_t nbytes = (keep + 7) / 8;
    for (size_t i = 0; i < nbytes; i++) {
        uint8_t byte = 0;
        for (unsigned k = 0; k < 8; k++) {
            unsigned bit = (unsigned)(8 * i + k);
            char c = bit < keep ? s->b[bit] : msb;
            byte |= (uint8_t)((c == '1') << k);
        }
        out[i] = byte;
    }
    return nbytes;
}

static void expect_bits(const tk_te_params *p, const tk_te_packet *k, const bitstr *want)
{
    uint8_t got[TK_TE_MAX_PAYLOAD], exp[TK_TE_MAX_PAYLOAD];
    size_t len = 0;
    bs_expect_encoding(p, k, want, got, &len);
    size_t elen = bs_compress(want, exp);
    assert_int_equal(len, elen);
    assert_memory_equal(got, exp, len);
}

static void base_params(tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = 32;
    p->s.iaddress_lsb = 1;
    p->s.privilege_width = 2;
    p->s.context_width = 7;
    p->s.notime = 0;
    p->s.time_width = 5;
    p->s.ecause_width = 5;
    p->s.cache_size = 3;
    p->s.f0s_width = 1;
    p->s.return_stack_size = 2; /* irdepth: 2 + 1 + 1 = 4 bits in 2.0 */
    p->s.call_counter_size = 1;
}

/* ---- hand-built packets ---------------------------------------------------------------- */

static void test_f3_sync_and_trap(void **state)
{
    (void)state;
    tk_te_params p;
    base_params(&p);
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 0;
    k.branch = 1;
    k.privilege = 3;
    k.time = 0x15;
    k.context = 0x42;
    k.address = 0x40001234; /* 31-bit field */
    k.has_address = true;
    bitstr s = {.n = 0};
    BS_FIELDS(&s, 3, 2, 0, 2, 1, 1, 3, 2, 0x15, 5, 0x42, 7, 0x40001234, 31);
    expect_bits(&p, &k, &s);

    /* trap, exception: ecause, interrupt, thaddr, address, tval[iaddress_width] */
    k.subformat = 1;
    k.ecause = 0x1b;
    k.interrupt = 0;
    k.thaddr = 1;
    k.tval = 0xdeadbeef;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 1, 2, 1, 1, 3, 2, 0x15, 5, 0x42, 7, 0x1b, 5, 0, 1, 1, 1, 0x40001234, 31,
              0xdeadbeef, 32);
    expect_bits(&p, &k, &s);

    /* interrupt: tval omitted */
    k.interrupt = 1;
    k.tval = 0;
    s.n -= 32;
    s.b[2 + 2 + 1 + 2 + 5 + 7 + 5] = '1';
    expect_bits(&p, &k, &s);

    /* implicit exception mode with thaddr=1: address omitted too */
    p.o.implicit_except = true;
    k.address = 0;
    k.has_address = false;
    s.n -= 31;
    expect_bits(&p, &k, &s);
    /* ... but kept with thaddr=0 (2.0) */
    k.thaddr = 0;
    k.address = 0x7ffffffe;
    k.has_address = true;
    s.b[s.n - 1] = '0';
    bs_add(&s, 0x7ffffffe, 31);
    expect_bits(&p, &k, &s);
}

static void test_f3_context_and_support(void **state)
{
    (void)state;
    tk_te_params p;
    base_params(&p);
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 2; /* privilege, time, context; no branch bit */
    k.privilege = 1;
    k.time = 0x1f;
    k.context = 0x3;
    bitstr s = {.n = 0};
    BS_FIELDS(&s, 3, 2, 2, 2, 1, 2, 0x1f, 5, 3, 7);
    expect_bits(&p, &k, &s);

    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 3;
    k.ienable = 1;
    k.encoder_mode = 0;
    k.qual_status = TK_QUAL_ENDED_REP;
    k.ioptions = TK_TE_IOPT_FULL_ADDRESS;
    k.denable = 1;
    k.dloss = 0;
    k.doptions = 0x9;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 3, 2, 1, 1);
    bs_add(&s, 0, 1); /* encoder_mode width 1 */
    bs_add(&s, 1, 2);
    bs_add(&s, 4, 5); /* ioptions width 5 */
    BS_FIELDS(&s, 1, 1, 0, 1);
    bs_add(&s, 9, 4); /* doptions width 4 */
    expect_bits(&p, &k, &s);
}

static void test_f2_and_f1(void **state)
{
    (void)state;
    tk_te_params p;
    base_params(&p);
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    k.format = 2;
    k.has_address = true;
    k.address = 0x7ffffffc; /* MSB (bit 30) = 1 */
    k.notify = false;       /* wire notify = 1 */
    k.updiscon = true;      /* wire updiscon = 0 */
    k.irreport = true;      /* wire irreport = 1 */
    k.irdepth = 0x5;
    bitstr s = {.n = 0};
    BS_FIELDS(&s, 2, 2, 0x7ffffffc, 31, 1, 1, 0, 1, 1, 1, 5, 4);
    expect_bits(&p, &k, &s);

    /* F1 with 5 branches: a 7-bit map */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branches = 5;
    k.branch_map = 0x13;
    k.has_address = true;
    k.address = 0x10;
    k.notify = true; /* wire 1 (MSB 0) */
    k.updiscon = false;
    k.irreport = false;
    k.irdepth = 0xf; /* all ones, like encoder_model.py when not reporting */
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 5, 5, 0x13, 7, 0x10, 31, 1, 1, 1, 1, 1, 1, 0xf, 4);
    expect_bits(&p, &k, &s);

    /* every map length of the table: 1, 3, 7, 15, 31 */
    static const unsigned lens[32] = {31, 1,  3,  3,  7,  7,  7,  7,  15, 15, 15,
                                      15, 15, 15, 15, 15, 31, 31, 31, 31, 31, 31,
                                      31, 31, 31, 31, 31, 31, 31, 31, 31, 31};
    for (unsigned b = 1; b < 32; b++) {
        k.branches = (uint8_t)b;
        k.branch_map = (uint32_t)((1ull << lens[b]) - 1) & 0x2aaaaaaa;
        s.n = 0;
        BS_FIELDS(&s, 1, 2, b, 5, k.branch_map, lens[b], 0x10, 31, 1, 1, 1, 1, 1, 1, 0xf, 4);
        expect_bits(&p, &k, &s);
    }

    /* F1 without address: branches=0, 31-bit map, nothing else */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branches = 0;
    k.branch_map = 0x5a5a5a5a & 0x7fffffff;
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 0, 5, k.branch_map, 31);
    expect_bits(&p, &k, &s);
    /* 31 branches without address are accepted and sent as 0 */
    k.branches = 31;
    uint8_t a[TK_TE_MAX_PAYLOAD], b2[TK_TE_MAX_PAYLOAD];
    size_t la, lb;
    assert_int_equal(tk_te_packet_encode(&p, &k, a, sizeof(a), &la), TK_OK);
    k.branches = 0;
    assert_int_equal(tk_te_packet_encode(&p, &k, b2, sizeof(b2), &lb), TK_OK);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b2, la);
}

static void test_f0(void **state)
{
    (void)state;
    tk_te_params p;
    base_params(&p);
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    /* SF0 branch count without address */
    k.format = 0;
    k.subformat = 0;
    k.branch_count = 0x12345;
    k.branch_fmt = 0;
    bitstr s = {.n = 0};
    bs_add(&s, 0, 2);
    bs_add(&s, 0, 1); /* f0s_width 1 */
    BS_FIELDS(&s, 0x12345, 32, 0, 2);
    expect_bits(&p, &k, &s);
    /* SF0 with address (branch_fmt 11 = address of a branch that failed prediction) */
    k.branch_fmt = 3;
    k.has_address = true;
    k.address = 0x1;
    k.updiscon = true;
    k.irdepth = 0;
    bs_add(&s, 0x1, 31);
    s.b[2 + 1 + 32] = '1';
    s.b[2 + 1 + 32 + 1] = '1';
    bs_add(&s, 0, 1); /* notify: MSB 0, not requested */
    bs_add(&s, 1, 1); /* updiscon differs */
    bs_add(&s, 1, 1); /* irreport equal to updiscon */
    bs_add(&s, 0, 4);
    expect_bits(&p, &k, &s);

    /* SF1 jump target cache, with a map: irreport relative to branch_map[MSB] */
    memset(&k, 0, sizeof(k));
    k.format = 0;
    k.subformat = 1;
    k.jtc_index = 5;
    k.branches = 2;
    k.branch_map = 0x4; /* 3-bit map, MSB 1 */
    k.irreport = false;
    k.irdepth = 0xf;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 1, 1, 5, 3, 2, 5, 4, 3, 1, 1, 0xf, 4);
    expect_bits(&p, &k, &s);
    /* SF1 without a map: irreport relative to branches[MSB] (0) */
    k.branches = 0;
    k.branch_map = 0;
    k.irreport = true;
    k.irdepth = 3;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 1, 1, 5, 3, 0, 5, 1, 1, 3, 4);
    expect_bits(&p, &k, &s);

    /* f0s_width_p = 0: the subformat is absent and inferred from the options */
    p.s.f0s_width = 0;
    p.o.jump_target_cache = true;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 5, 3, 0, 5, 1, 1, 3, 4);
    expect_bits(&p, &k, &s);
    /* ... and a subformat the options do not imply cannot be sent */
    memset(&k, 0, sizeof(k));
    k.format = 0;
    k.subformat = 0;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_ERR_CONFIG);
    p.o.jump_target_cache = false;
    p.o.branch_prediction = true;
    k.branch_count = 7;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 7, 32, 0, 2);
    expect_bits(&p, &k, &s);
}

/* Byte vectors worked out by hand. */
static void test_literal_bytes(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 8;
    p.s.notime = 1;
    p.s.nocontext = 1;
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    /* F2, address 0x85: bits 2 | 0x85<<2 | notify(1)<<10 | updiscon(0)<<11 | irreport(0)<<12
     * = 0x616; the MSB run above bit 10 compresses to one 0: 12 bits -> 16 06 */
    k.format = 2;
    k.has_address = true;
    k.address = 0x85;
    k.updiscon = true;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, 2);
    assert_int_equal(buf[0], 0x16);
    assert_int_equal(buf[1], 0x06);
    /* A delta of -1 byte-compresses to a single ff-padded byte: bits 10 | 1..1 */
    k.address = 0xff;
    k.updiscon = false;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 0xfe);
    /* The reference worked example (VERSIONS.md C.6): itype4, lsb=1, 64-bit, 32-bit context:
     * support 1f, start 73 00 00 00 00 00 04 (address 0x800 at bit 50), F2 diff -4 -> f2, end
     * support 4f. */
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 1;
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 3;
    k.ienable = 1;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 0x1f);
    k.ienable = 0;
    k.qual_status = TK_QUAL_ENDED_REP;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 0x4f);
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 0;
    k.branch = 1;
    k.privilege = 3;
    k.address = 0x800;
    k.has_address = true;
    static const uint8_t start[] = {0x73, 0, 0, 0, 0, 0, 0x04};
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, sizeof(start));
    assert_memory_equal(buf, start, len);
    memset(&k, 0, sizeof(k));
    k.format = 2;
    k.has_address = true;
    k.address = 0x7ffffffffffffffe; /* -4 >> 1 in 63 bits */
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 0xfa);
}

/* ---- random round trips ------------------------------------------------------------------ */

static void test_random_roundtrip(void **state)
{
    (void)state;
    uint64_t seed = 0x7e57c0dec0ffeeull;
    unsigned long n = 0;
    for (int ps = 0; ps < 3000; ps++) {
        tk_te_params p;
        gen_params(&seed, &p, TK_TE_SPEC_2_0);
        tk_diag d;
        tk_diag_clear(&d);
        if (tk_te_params_validate(&p, &d) != TK_OK)
            fail_msg("generated params invalid: %s", d.message);
        for (int i = 0; i < 40; i++) {
            tk_te_packet k, back;
            gen_packet_20(&seed, &p, &k);
            uint8_t buf[TK_TE_MAX_PAYLOAD];
            size_t len = 0;
            tk_status st = tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len);
            if (st != TK_OK)
                fail_msg("param set %d packet %d: encode: %s", ps, i,
                         tk_te_packet_encode_error(&p, &k));
            if (tk_te_packet_decode(&p, buf, len, &back, &d) != TK_OK)
                fail_msg("param set %d packet %d: %s", ps, i, d.message);
            /* the precomputed-layout entry point decodes identically */
            tk_te_layout lay;
            tk_te_layout_init(&lay, &p);
            tk_te_packet via_layout;
            assert_int_equal(tk_te_packet_decode_layout(&lay, buf, len, &via_layout, &d), TK_OK);
            assert_memory_equal(&via_layout, &back, sizeof(back));
            if (memcmp(&k, &back, sizeof(k))) {
                char a[512], b[512];
                tk_te_packet_format(&p, &k, a, sizeof(a));
                tk_te_packet_format(&p, &back, b, sizeof(b));
                fail_msg("param set %d packet %d:\n  sent %s\n  got  %s", ps, i, a, b);
            }
            n++;
        }
    }
    printf("random: %lu packets round-tripped over 3000 parameter sets\n", n);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void test_malformed(void **state)
{
    (void)state;
    tk_te_params p;
    base_params(&p);
    tk_te_packet k;
    tk_diag d;
    tk_diag_clear(&d);
    uint8_t buf[128];
    memset(buf, 0, sizeof(buf));
    assert_int_equal(tk_te_packet_decode(&p, buf, 0, &k, &d), TK_ERR_TRUNCATED);
    assert_int_equal(tk_te_packet_decode(&p, buf, 65, &k, &d), TK_ERR_BAD_PACKET);
    /* F2 needs 2+31+3+4 = 40 bits: 5 bytes fine, 6 bytes is a whole byte too many */
    buf[0] = 0x02;
    assert_int_equal(tk_te_packet_decode(&p, buf, 5, &k, &d), TK_OK);
    assert_int_equal(tk_te_packet_decode(&p, buf, 6, &k, &d), TK_ERR_BAD_PACKET);
    assert_non_null(strstr(d.message, "longer"));
    /* F0SF0 with branch_fmt 01 */
    tk_te_packet e;
    memset(&e, 0, sizeof(e));
    e.format = 0;
    e.branch_fmt = 1;
    assert_int_equal(tk_te_packet_encode(&p, &e, buf, sizeof(buf), NULL), TK_ERR_INVALID);
    /* wire: 00 | sf 0 | count 0 (32) | fmt 01 -> bits 35..36 = 1,0 */
    memset(buf, 0, 8);
    buf[4] = 0x08; /* bit 35 */
    assert_int_equal(tk_te_packet_decode(&p, buf, 5, &k, &d), TK_ERR_BAD_PACKET);
    /* reserved F0 subformat with a 2-bit field */
    p.s.f0s_width = 2;
    buf[0] = 0x08; /* format 00, subformat 2 */
    assert_int_equal(tk_te_packet_decode(&p, buf, 1, &k, &d), TK_ERR_BAD_PACKET);
    /* F0 with no subformat field and no extension enabled */
    p.s.f0s_width = 0;
    buf[0] = 0x00;
    assert_int_equal(tk_te_packet_decode(&p, buf, 1, &k, &d), TK_ERR_BAD_PACKET);
    assert_non_null(strstr(d.message, "f0s_width_p"));
    /* values that do not fit their field */
    base_params(&p);
    memset(&e, 0, sizeof(e));
    e.format = 2;
    e.address = 1ull << 31;
    assert_int_equal(tk_te_packet_encode(&p, &e, buf, sizeof(buf), NULL), TK_ERR_OVERFLOW);
    assert_string_equal(tk_te_packet_encode_error(&p, &e), "address");
    e.address = 0;
    e.irdepth = 16;
    assert_int_equal(tk_te_packet_encode(&p, &e, buf, sizeof(buf), NULL), TK_ERR_OVERFLOW);
    assert_string_equal(tk_te_packet_encode_error(&p, &e), "irdepth");
    e.irdepth = 0;
    assert_null(tk_te_packet_encode_error(&p, &e));
    /* output buffer too small */
    e.address = 0x12345678;
    assert_int_equal(tk_te_packet_encode(&p, &e, buf, 2, NULL), TK_ERR_OVERFLOW);
}

/* Any byte string decodes to a packet or a clean error (a cheap in-test fuzz). */
static void test_garbage(void **state)
{
    (void)state;
    uint64_t seed = 42;
    unsigned long ok = 0, bad = 0;
    for (int ps = 0; ps < 200; ps++) {
        tk_te_params p;
        gen_params(&seed, &p, TK_TE_SPEC_2_0);
        for (int i = 0; i < 200; i++) {
            uint8_t buf[TK_TE_MAX_PAYLOAD];
            size_t len = 1 + gen_below(&seed, TK_TE_MAX_PAYLOAD);
            for (size_t j = 0; j < len; j++)
                buf[j] = (uint8_t)gen_next(&seed);
            tk_te_packet k;
            tk_diag d;
            tk_diag_clear(&d);
            tk_status st = tk_te_packet_decode(&p, buf, len, &k, &d);
            if (st == TK_OK) {
                /* what decodes re-encodes to at most the bytes it came from */
                uint8_t re[TK_TE_MAX_PAYLOAD];
                size_t rl;
                assert_int_equal(tk_te_packet_encode(&p, &k, re, sizeof(re), &rl), TK_OK);
                assert_true(rl <= len);
                ok++;
            } else {
                assert_int_equal(st, TK_ERR_BAD_PACKET);
                assert_true(d.message[0] != '\0');
                bad++;
            }
        }
    }
    assert_true(ok > 0 && bad > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f3_sync_and_trap), cmocka_unit_test(test_f3_context_and_support),
        cmocka_unit_test(test_f2_and_f1),        cmocka_unit_test(test_f0),
        cmocka_unit_test(test_literal_bytes),    cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
