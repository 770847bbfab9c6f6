/* SPDX-License-Identifier: BSD-2-Clause */
/* The draft layouts (--spec 0.29 and 0.26): hand-built packets checked bit for bit against
 * the field orders of VERSIONS.md A.3-A.8, and random round trips. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "bit_model.h"
#include "codec_gen.h"
#include "tracekit/te_packet.h"

static void expect_bits(const tk_te_params *p, const tk_te_packet *k, const bitstr *want)
{
    uint8_t got[TK_TE_MAX_PAYLOAD];
    size_t len = 0;
    bs_expect_encoding(p, k, want, got, &len);
}

static void params(tk_te_params *p, tk_te_spec spec)
{
    tk_te_params_init(p);
    p->spec = spec;
    p->s.iaddress_width = 16;
    p->s.iaddress_lsb = 1;
    p->s.context_width = 4;
    p->s.privilege_width = 2;
    p->s.ecause_width = 4;
    p->s.notime = 0; /* 0.029/0.026 have no time field: must be ignored */
    p->s.time_width = 8;
    p->s.return_stack_size = 2; /* 0.029 irdepth: 2 + 1 = 3 bits */
    p->s.call_counter_size = 1;
    p->s.cache_size = 2;
}

static void test_029(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p, TK_TE_SPEC_0_29);
    assert_int_equal(tk_te_irdepth_bits(&p), 3);
    tk_te_packet k;
    bitstr s;
    /* F3 SF0: context, privilege, branch, address */
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.context = 0x9;
    k.privilege = 1;
    k.branch = 1;
    k.has_address = true;
    k.address = 0x4321;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 0, 2, 0x9, 4, 1, 2, 1, 1, 0x4321, 15);
    expect_bits(&p, &k, &s);
    /* F3 SF1: ..., address, ecause, interrupt, tvalepc[16] even for interrupts */
    k.subformat = 1;
    k.ecause = 0xb;
    k.interrupt = 1;
    k.tval = 0xbeef;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 1, 2, 0x9, 4, 1, 2, 1, 1, 0x4321, 15, 0xb, 4, 1, 1, 0xbeef, 16);
    expect_bits(&p, &k, &s);
    /* F3 SF2: context then privilege */
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 2;
    k.context = 0x5;
    k.privilege = 3;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 2, 2, 0x5, 4, 3, 2);
    expect_bits(&p, &k, &s);
    /* F3 SF3: enable, encoder_mode, qual_status, options: no data trace fields */
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 3;
    k.ienable = 1;
    k.qual_status = 3;
    k.ioptions = 0x11;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 3, 2, 1, 1, 0, 1, 3, 2, 0x11, 5);
    expect_bits(&p, &k, &s);
    /* F1 branches=0 map: branch_fmt = two copies of map[30] */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branch_map = 0x40000001;
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 0, 5, 0x40000001, 31, 3, 2);
    expect_bits(&p, &k, &s);
    /* F1 count with address: count[31], fmt 10, bpsuccess, address, flags, irdepth[3] */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branch_fmt = 2;
    k.branch_count = 100;
    k.bpsuccess = 1;
    k.has_address = true;
    k.address = 0x10;
    k.irreport = true; /* irfail */
    k.irdepth = 2;
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 0, 5, 100, 31, 2, 2, 1, 1, 0x10, 15, 0, 1, 0, 1, 1, 1, 2, 3);
    expect_bits(&p, &k, &s);
    /* F1 count without address: fmt 01 */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branch_fmt = 1;
    k.branch_count = 5;
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 0, 5, 5, 31, 1, 2);
    expect_bits(&p, &k, &s);
    /* F0: jump target cache, subformat field 0 bits wide by default */
    memset(&k, 0, sizeof(k));
    k.format = 0;
    k.subformat = TK_TE_F0_JTC;
    k.jtc_index = 2;
    k.branches = 3;
    k.branch_map = 0x1; /* 3-bit map, MSB 0 */
    k.irreport = false;
    k.irdepth = 0;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 2, 2, 3, 5, 1, 3, 0, 1, 0, 3);
    expect_bits(&p, &k, &s);
    p.s.f0s_width = 1; /* explicit 0-valued subformat */
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 0, 1, 2, 2, 3, 5, 1, 3, 0, 1, 0, 3);
    expect_bits(&p, &k, &s);
}

static void test_026(void **state)
{
    (void)state;
    tk_te_params p;
    params(&p, TK_TE_SPEC_0_26);
    tk_te_packet k;
    bitstr s;
    /* full-delta with 5 branches: 9-bit map, address */
    memset(&k, 0, sizeof(k));
    k.format = 0;
    k.branches = 5;
    k.branch_map = 0x1f0 & 0x1ff;
    k.has_address = true;
    k.address = 0x1234;
    s.n = 0;
    BS_FIELDS(&s, 0, 2, 5, 5, k.branch_map, 9, 0x1234, 15);
    expect_bits(&p, &k, &s);
    /* diff-delta, every map length: 1, 9, 17, 25, 31 */
    static const unsigned lens[] = {31, 1,  9,  9,  9,  9,  9,  9,  9,  9,  17, 17, 17, 17, 17, 17,
                                    17, 17, 25, 25, 25, 25, 25, 25, 25, 25, 31, 31, 31, 31, 31, 31};
    k.format = 1;
    for (unsigned b = 1; b < 32; b++) {
        k.branches = (uint8_t)b;
        k.branch_map = (uint32_t)(((1ull << lens[b]) - 1) & 0x55555555u);
        s.n = 0;
        BS_FIELDS(&s, 1, 2, b, 5, k.branch_map, lens[b], 0x1234, 15);
        expect_bits(&p, &k, &s);
    }
    /* branches 0: 31-bit map, no address */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branch_map = 0x2aaaaaaa;
    s.n = 0;
    BS_FIELDS(&s, 1, 2, 0, 5, 0x2aaaaaaa, 31);
    expect_bits(&p, &k, &s);
    /* address only */
    memset(&k, 0, sizeof(k));
    k.format = 2;
    k.has_address = true;
    k.address = 0x7ff0;
    s.n = 0;
    BS_FIELDS(&s, 2, 2, 0x7ff0, 15);
    expect_bits(&p, &k, &s);
    /* sync exception: context, privilege, branch, address, ecause, interrupt, tval */
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 1;
    k.context = 1;
    k.privilege = 2;
    k.branch = 0;
    k.has_address = true;
    k.address = 0x100;
    k.ecause = 2;
    k.tval = 0xffff;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 1, 2, 1, 4, 2, 2, 0, 1, 0x100, 15, 2, 4, 0, 1, 0xffff, 16);
    expect_bits(&p, &k, &s);
    /* sync context: no branch, no address */
    memset(&k, 0, sizeof(k));
    k.format = 3;
    k.subformat = 2;
    k.context = 7;
    k.privilege = 1;
    s.n = 0;
    BS_FIELDS(&s, 3, 2, 2, 2, 7, 4, 1, 2);
    expect_bits(&p, &k, &s);
    /* subformat 3 is reserved; no support te_inst */
    k.subformat = 3;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    assert_int_equal(tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len), TK_ERR_UNSUPPORTED);
    buf[0] = 0x0f; /* format 11, subformat 11 */
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_packet_decode(&p, buf, 1, &k, &d), TK_ERR_BAD_PACKET);
}

static void roundtrip(tk_te_spec spec,
                      void (*gen)(uint64_t *, const tk_te_params *, tk_te_packet *))
{
    uint64_t seed = 1234 + spec;
    for (int ps = 0; ps < 1000; ps++) {
        tk_te_params p;
        gen_params(&seed, &p, spec);
        for (int i = 0; i < 40; i++) {
            tk_te_packet k, back;
            gen(&seed, &p, &k);
            uint8_t buf[TK_TE_MAX_PAYLOAD];
            size_t len;
            if (tk_te_packet_encode(&p, &k, buf, sizeof(buf), &len) != TK_OK)
                fail_msg("spec %d set %d packet %d: %s", spec, ps, i,
                         tk_te_packet_encode_error(&p, &k));
            tk_diag d;
            tk_diag_clear(&d);
            if (tk_te_packet_decode(&p, buf, len, &back, &d) != TK_OK)
                fail_msg("spec %d set %d packet %d: %s", spec, ps, i, d.message);
            if (memcmp(&k, &back, sizeof(k))) {
                char a[512], b[512];
                tk_te_packet_format(&p, &k, a, sizeof(a));
                tk_te_packet_format(&p, &back, b, sizeof(b));
                fail_msg("spec %d set %d packet %d:\n  sent %s\n  got  %s", spec, ps, i, a, b);
            }
        }
    }
}

static void test_random(void **state)
{
    (void)state;
    roundtrip(TK_TE_SPEC_0_29, gen_packet_029);
    roundtrip(TK_TE_SPEC_0_26, gen_packet_026);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_029),
        cmocka_unit_test(test_026),
        cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
