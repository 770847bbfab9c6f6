/* SPDX-License-Identifier: BSD-2-Clause */
/* tk_te_packet_encode_layout against the generic codec (tk_te_packet_encode): random packets
 * of every format, with values in and out of their fields' widths, under parameter sets with
 * different address, irdepth, privilege, time and context widths, must give the same status
 * and the same bytes. */
#include "testutil.h"

#include <string.h>

#include "tracekit/te_encoder.h"

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A value of about `bits` significant bits, sometimes all ones or negative (sign copies),
 * sometimes one bit too wide. */
static uint64_t value(uint64_t *x, unsigned bits)
{
    const unsigned r = (unsigned)(rnd(x) % 8);
    const uint64_t mask = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    if (r == 0)
        return mask;
    if (r == 1)
        return 0;
    if (r == 2) /* high bits set: a negative difference */
        return mask & ~(rnd(x) & (mask >> 1) >> (rnd(x) % 64));
    if (r == 3 && bits < 64 && rnd(x) % 4 == 0)
        return mask + 1; /* does not fit */
    return rnd(x) >> (rnd(x) % 64) & mask;
}

static void random_packet(uint64_t *x, const tk_te_params *p, tk_te_packet *pkt)
{
    memset(pkt, 0, sizeof(*pkt));
    const unsigned aw = tk_te_addr_bits(p);
    pkt->format = (uint8_t)(rnd(x) % 4);
    pkt->subformat = (uint8_t)(rnd(x) % 4);
    pkt->branches = (uint8_t)(rnd(x) % 32);
    if (rnd(x) % 50 == 0)
        pkt->branches = 32; /* out of range */
    pkt->branch_map = (uint32_t)value(x, pkt->branches ? pkt->branches : 31);
    pkt->has_address = rnd(x) % 4 != 0;
    pkt->address = value(x, aw);
    pkt->notify = rnd(x) & 1;
    pkt->updiscon = rnd(x) & 1;
    pkt->irreport = rnd(x) % 4 == 0;
    pkt->irdepth = value(x, tk_te_irdepth_bits(p));
    pkt->branch = (uint8_t)(rnd(x) % 2);
    pkt->privilege = (uint8_t)value(x, p->s.privilege_width);
    pkt->time = value(x, tk_te_time_bits(p));
    pkt->context = value(x, tk_te_context_bits(p));
    pkt->ecause = (uint32_t)value(x, p->s.ecause_width);
    pkt->interrupt = (uint8_t)(rnd(x) % 2);
    pkt->thaddr = (uint8_t)(rnd(x) % 2);
    pkt->tval = value(x, p->s.iaddress_width);
    pkt->ienable = 1;
    pkt->qual_status = (uint8_t)(rnd(x) % 4);
    pkt->ioptions = tk_te_params_ioptions(p);
}

static void check_params(const tk_te_params *p, uint64_t seed)
{
    tk_te_layout l;
    tk_te_layout_init(&l, p);
    uint64_t x = seed;
    unsigned fast_ok = 0;
    for (int i = 0; i < 20000; i++) {
        tk_te_packet pkt;
        random_packet(&x, p, &pkt);
        uint8_t a[TK_TE_MAX_PAYLOAD], b[TK_TE_MAX_PAYLOAD];
        size_t la = 0, lb = 0;
        const size_t cap = rnd(&x) % 16 == 0 ? 1 + rnd(&x) % 8 : sizeof(a); /* short buffers too */
        tk_status sa = tk_te_packet_encode(p, &pkt, a, cap, &la);
        tk_status sb = tk_te_packet_encode_layout(&l, &pkt, b, cap, &lb);
        if (sa != sb || (sa == TK_OK && (la != lb || memcmp(a, b, la))))
            fail_msg("seed %llu packet %d (format %u subformat %u branches %u): codec %d len %zu, "
                     "layout %d len %zu",
                     (unsigned long long)seed, i, pkt.format, pkt.subformat, pkt.branches, sa, la,
                     sb, lb);
        fast_ok += sa == TK_OK && (pkt.format == 1 || pkt.format == 2);
    }
    assert_true(fast_ok > 2000); /* the specialised formats were exercised */
}

static void test_matches_codec(void **state)
{
    (void)state;
    static const struct {
        unsigned iaw, lsb, rs, cc, nt, tw, nc, cw, pw;
    } cases[] = {
        {64, 1, 0, 0, 1, 1, 0, 32, 2}, /* the reference flow's dhrystone parameters */
        {64, 0, 0, 0, 0, 16, 0, 32, 2}, {32, 1, 3, 0, 1, 1, 1, 0, 1},
        {64, 1, 8, 4, 0, 40, 0, 64, 3}, /* too wide for the 128-bit paths: codec */
        {48, 2, 0, 2, 1, 1, 0, 8, 2},   {16, 1, 0, 0, 0, 64, 0, 64, 2},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        tk_te_params p;
        tk_te_params_init(&p);
        p.s.iaddress_width = cases[c].iaw;
        p.s.iaddress_lsb = cases[c].lsb;
        p.s.return_stack_size = cases[c].rs;
        p.s.call_counter_size = cases[c].cc;
        p.s.notime = cases[c].nt;
        p.s.time_width = cases[c].tw;
        p.s.nocontext = cases[c].nc;
        p.s.context_width = cases[c].cw;
        p.s.privilege_width = cases[c].pw;
        check_params(&p, 0x9e3779b97f4a7c15ull * (c + 1));
    }
}

/* The drafts' layouts are the codec's own. */
static void test_drafts_use_codec(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.spec = TK_TE_SPEC_0_29;
    check_params(&p, 12345);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_codec),
        cmocka_unit_test(test_drafts_use_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
