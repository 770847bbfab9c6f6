/* SPDX-License-Identifier: BSD-2-Clause */
/* The one-line text of te_inst packets (tk_te_packet_format, `tracekit dump`): format 1 with a
 * branch map and format 2 are written by hand, without vsnprintf; their text is checked here
 * against one made with snprintf from the documented layout (full and differential
 * addresses, every flag), and with less room, cut as snprintf cuts. */
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static uint64_t next(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 11;
}

/* The text as the general formatter makes it. */
static int reference(const tk_te_params *p, const tk_te_packet *k, char *s, size_t cap)
{
    int n = k->format == TK_TE_F2 ? snprintf(s, cap, "F2 addr-only")
                                  : snprintf(s, cap, "F1 branches=%u map=", k->branches);
    if (k->format == TK_TE_F1)
        for (unsigned i = 0; i < k->branches; i++)
            s[n++] = (k->branch_map >> i) & 1u ? 'N' : 'T';
    const unsigned aw = p->s.iaddress_width - p->s.iaddress_lsb;
    if (p->o.full_address || aw == 0 || aw >= 64) {
        n += snprintf(s + n, cap - (size_t)n, " addr=0x%" PRIx64, k->address << p->s.iaddress_lsb);
    } else {
        int64_t v = (int64_t)(k->address << (64 - aw)) >> (64 - aw);
        v *= (int64_t)1 << p->s.iaddress_lsb;
        n += snprintf(s + n, cap - (size_t)n, " daddr=%s0x%" PRIx64, v < 0 ? "-" : "+",
                      v < 0 ? -(uint64_t)v : (uint64_t)v);
    }
    if (k->notify)
        n += snprintf(s + n, cap - (size_t)n, " notify");
    if (k->updiscon)
        n += snprintf(s + n, cap - (size_t)n, " updiscon");
    if (k->irreport)
        n += snprintf(s + n, cap - (size_t)n, " irreport irdepth=%" PRIu64, k->irdepth);
    return n;
}

static void test_f1_f2_text(void **state)
{
    (void)state;
    uint64_t x = 99;
    for (unsigned i = 0; i < 30000; i++) {
        tk_te_params p;
        tk_te_params_init(&p);
        p.s.iaddress_width = 16 + (unsigned)(next(&x) % 49); /* 16..64 */
        p.s.iaddress_lsb = (unsigned)(next(&x) % 3);
        p.o.full_address = next(&x) % 3 == 0;
        tk_te_packet k;
        memset(&k, 0, sizeof(k));
        k.format = next(&x) % 2 ? TK_TE_F1 : TK_TE_F2;
        k.branches = (uint8_t)(1 + next(&x) % 31);
        k.branch_map = (uint32_t)next(&x);
        k.has_address = true;
        const unsigned aw = p.s.iaddress_width - p.s.iaddress_lsb;
        k.address = next(&x) & (aw >= 64 ? ~0ull : (1ull << aw) - 1);
        if (i % 11 == 0)
            k.address = 0;
        k.notify = next(&x) % 2;
        k.updiscon = next(&x) % 2;
        k.irreport = next(&x) % 4 == 0;
        k.irdepth = next(&x) % 1000;
        char want[512], got[512];
        const int nw = reference(&p, &k, want, sizeof(want));
        assert_int_equal(tk_te_packet_format(&p, &k, got, sizeof(got)), nw);
        assert_string_equal(got, want);
        const size_t room = 1 + (size_t)(next(&x) % 120);
        memset(got, 'x', sizeof(got));
        assert_int_equal(tk_te_packet_format(&p, &k, got, room), nw);
        assert_int_equal(strlen(got), (size_t)nw < room ? (size_t)nw : room - 1);
        assert_memory_equal(got, want, strlen(got));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f1_f2_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
