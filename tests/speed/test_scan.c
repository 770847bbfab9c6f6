/* SPDX-License-Identifier: BSD-2-Clause */
/* The fast packet paths against the generic ones: the specialised decoders (packet_fast.h)
 * give the same packet or the same verdict as the bit-reader codec for random payloads
 * under random parameters, and the zero-copy scanner (tk_te_scan_batch/next) yields exactly
 * the packets, offsets, indexes and errors of the raw reader plus generic codec, on every
 * golden vector and on damaged copies of one. */
#include "testutil.h"

#include "scan_ref.h"
#include "te_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random but valid 2.0 parameters. */
static void random_params(tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = 32 + (unsigned)(rnd() % 33);
    p->s.iaddress_lsb = (unsigned)(rnd() % 3);
    p->s.privilege_width = (unsigned)(rnd() % 3);
    p->s.notime = rnd() & 1;
    p->s.time_width = 1 + (unsigned)(rnd() % 64);
    p->s.nocontext = rnd() & 1;
    p->s.context_width = 1 + (unsigned)(rnd() % 64);
    p->s.ecause_width = 1 + (unsigned)(rnd() % 8);
    p->s.return_stack_size = (unsigned)(rnd() % 4);
    p->s.call_counter_size = (unsigned)(rnd() % 10);
    p->o.implicit_except = rnd() & 1;
    p->o.branch_prediction = rnd() & 1;
}

static void test_fast_equals_generic(void **state)
{
    (void)state;
    unsigned long compared = 0, fast_ok = 0;
    for (int round = 0; round < 200; round++) {
        tk_te_params p;
        random_params(&p);
        tk_te_layout fast, slow;
        tk_te_layout_init(&fast, &p);
        tk_te_layout_init(&slow, &p);
        assert_true(fast.fast);
        slow.fast = false;
        for (int i = 0; i < 2000; i++) {
            uint8_t buf[16];
            const size_t len = 1 + rnd() % 16;
            for (size_t k = 0; k < len; k++)
                buf[k] = (uint8_t)rnd();
            tk_te_packet a, b;
            tk_diag d;
            tk_status sa = tk_te_packet_decode_layout(&fast, buf, len, &a, &d);
            tk_status sb = tk_te_packet_decode_layout(&slow, buf, len, &b, &d);
            assert_int_equal(sa, sb);
            if (sa == TK_OK) {
                assert_memory_equal(&a, &b, sizeof(a));
                fast_ok++;
            }
            compared++;
        }
    }
    /* random bytes mostly make valid short packets: the comparison is not vacuous */
    assert_true(fast_ok > compared / 4);
}

/* How the scanner is driven: whole structs, or records with either implementation. */
enum { VIA_STRUCT, VIA_RECORDS_PORTABLE, VIA_RECORDS_BMI2, VIA_COUNT };

/* The packets of a record batch as structs (format 3 from full[]). */
static size_t records_batch(tk_te_scan *s, tk_te_packet *pk, uint64_t *off, size_t max,
                            bool with_offsets)
{
    tk_te_rec rec[64];
    tk_te_packet full[64];
    size_t got = tk_te_scan_records(s, rec, full, with_offsets ? off : NULL, max);
    assert_true(got <= max);
    for (size_t i = 0; i < got; i++)
        scan_rec_packet(&rec[i], &full[i], &pk[i]);
    return got;
}

/* The scanner, batches first as a fast reader would use it. Returns the packets that came
 * from batches. */
static size_t check_scan_via(const tk_te_params *p, const uint8_t *buf, size_t len, size_t batch,
                             int via)
{
    size_t n = 0, batched = 0;
    scan_ref *want = scan_reference(p, buf, len, &n);
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, len);
    if (via == VIA_RECORDS_PORTABLE)
        s.use_bmi2 = 0;
    size_t k = 0;
    tk_te_packet pk[64];
    uint64_t off[64];
    for (;;) {
        /* offsets asked for in every other batch: both copies of the loop run */
        const bool with_offsets = via == VIA_STRUCT || (k & 1) == 0;
        size_t got = via == VIA_STRUCT ? tk_te_scan_batch(&s, pk, off, batch)
                                       : records_batch(&s, pk, off, batch, with_offsets);
        batched += got;
        for (size_t i = 0; i < got; i++, k++) {
            assert_true(k < n);
            assert_int_equal(want[k].st, TK_OK);
            if (with_offsets)
                assert_int_equal(off[i], want[k].offset);
            assert_memory_equal(&pk[i], &want[k].pkt, sizeof(pk[i]));
            /* a batch ends after a support packet */
            if (pk[i].format == TK_TE_F3 && pk[i].subformat == TK_TE_SF_SUPPORT)
                assert_int_equal(i, got - 1);
        }
        if (got) {
            assert_int_equal(s.index, want[k - 1].index);
            assert_int_equal(s.offset, want[k - 1].offset);
            assert_int_equal(s.next_index, want[k - 1].index + 1);
        }
        /* mostly as documented (batches until one returns 0, then one packet the careful
         * way), sometimes one packet between batches */
        if (got && rnd() % 4 != 0)
            continue;
        tk_diag d;
        tk_status st = tk_te_scan_next(&s, &pk[0], &d);
        if (st == TK_END)
            break;
        assert_true(k < n);
        assert_int_equal(st, want[k].st);
        assert_int_equal(s.offset, want[k].offset);
        assert_int_equal(s.index, want[k].index);
        if (st == TK_OK) {
            assert_memory_equal(&pk[0], &want[k].pkt, sizeof(pk[0]));
        } else {
            assert_int_equal(d.byte_offset, want[k].offset);
            assert_true(strstr(d.message, "offset") != NULL);
        }
        k++;
        if (st == TK_ERR_TRUNCATED)
            break;
    }
    assert_int_equal(k, n);
    free(want);
    return batched;
}

static bool have_bmi2(const tk_te_params *p)
{
    tk_te_scan s;
    tk_te_scan_init(&s, p, NULL, 0);
    return s.use_bmi2 != 0;
}

/* Every way of driving the scanner; the BMI2 copy where the CPU has it. Returns the
 * smallest share of the packets (in percent) that one of them took from batches. */
static unsigned check_scan(const tk_te_params *p, const uint8_t *buf, size_t len, size_t batch)
{
    size_t n = 0, least = SIZE_MAX;
    free(scan_reference(p, buf, len, &n));
    for (int via = 0; via < VIA_COUNT; via++) {
        if (via == VIA_RECORDS_BMI2 && !have_bmi2(p))
            continue;
        const size_t b = check_scan_via(p, buf, len, batch, via);
        least = b < least ? b : least;
    }
    return n ? (unsigned)(100 * least / n) : 100;
}

static void check_golden(const tk_te_params *p, const uint8_t *raw, size_t len, void *ctx)
{
    (void)ctx;
    check_scan(p, raw, len, 64);
    check_scan(p, raw, len, 1);
}

static void test_scan_golden(void **state)
{
    (void)state;
    assert_true(tk_test_ref_each_raw(check_golden, NULL) >= 25);
}

/* Damaged copies: flipped bytes (headers and payloads), every truncation near the end. */
static void test_scan_damaged(void **state)
{
    (void)state;
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw("qsort", "itype3_basic", &dir, &len);
    tk_te_params p;
    tk_test_ref_params(dir, "qsort", &p, NULL);
    uint8_t *copy = malloc(len);
    for (int round = 0; round < 300; round++) {
        memcpy(copy, raw, len);
        const int flips = 1 + (int)(rnd() % 8);
        for (int f = 0; f < flips; f++)
            copy[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        check_scan(&p, copy, len, 64);
    }
    for (size_t cut = len > 40 ? len - 40 : 0; cut < len; cut++)
        check_scan(&p, raw, cut, 64);
    free(copy);
    free(raw);
    free(dir);
}

/* A random packet the codec can encode under p: formats 1 and 2 mostly (the record path),
 * with fields of every size, and some format 3 start, trap and support packets. */
static void random_packet(const tk_te_params *p, tk_te_packet *k)
{
    memset(k, 0, sizeof(*k));
    const unsigned aw = tk_te_addr_bits(p), d = tk_te_irdepth_bits(p);
    /* addresses with few or many significant bits, positive and negative */
    const unsigned sig = (unsigned)(rnd() % (aw + 1));
    uint64_t a = sig >= 64 ? rnd() : rnd() & ((1ull << sig) - 1);
    if (rnd() & 1)
        a = ~a;
    a &= aw >= 64 ? ~0ull : (1ull << aw) - 1;
    const unsigned kind = (unsigned)(rnd() % 16);
    if (kind < 7) {
        k->format = TK_TE_F1;
        k->branches = (uint8_t)(rnd() % 32);
        const unsigned mb = k->branches == 0    ? 31
                            : k->branches == 1  ? 1
                            : k->branches <= 3  ? 3
                            : k->branches <= 7  ? 7
                            : k->branches <= 15 ? 15
                                                : 31;
        k->branch_map = (uint32_t)(rnd() & ((1ull << mb) - 1));
        k->has_address = k->branches != 0;
    } else if (kind < 13) {
        k->format = TK_TE_F2;
        k->has_address = true;
    } else {
        k->format = TK_TE_F3;
        k->subformat = (uint8_t)(kind - 13 == 2 ? TK_TE_SF_SUPPORT : kind - 13);
        if (k->subformat == TK_TE_SF_SUPPORT) {
            k->ienable = 1;
            k->qual_status = (uint8_t)(rnd() % 4);
            return;
        }
        k->privilege = (uint8_t)(rnd() & ((1u << p->s.privilege_width) - 1));
        k->branch = (uint8_t)(rnd() & 1);
        if (k->subformat == TK_TE_SF_TRAP) {
            k->ecause = (uint32_t)(rnd() & ((1u << p->s.ecause_width) - 1));
            k->interrupt = (uint8_t)(rnd() & 1);
            k->thaddr = (uint8_t)(rnd() & 1);
        }
        k->has_address = !(k->subformat == TK_TE_SF_TRAP && p->o.implicit_except && k->thaddr);
        k->address = k->has_address ? a : 0;
        return;
    }
    if (k->has_address) {
        k->address = a;
        k->notify = rnd() % 4 == 0;
        k->updiscon = rnd() % 4 == 0;
        k->irreport = rnd() % 4 == 0;
        k->irdepth = d ? rnd() & (d >= 64 ? ~0ull : (1ull << d) - 1) : 0;
    }
}

/* Random streams under random parameters: packets from the encoder (valid, every length),
 * random payloads (mostly damaged: a byte too many, reserved values), random headers. All
 * ways of driving the scanner agree with the generic path, and the batches do the bulk. */
static void test_scan_random_streams(void **state)
{
    (void)state;
    unsigned share_sum = 0, rounds = 0;
    uint8_t *buf = malloc(1u << 16);
    for (int round = 0; round < 150; round++) {
        tk_te_params p;
        random_params(&p);
        p.s.iaddress_width = rnd() % 3 ? 64 : 32 + (unsigned)(rnd() % 33);
        p.o.implicit_except = false; /* support packets may switch it on (ioptions 0 here) */
        size_t len = 0;
        const int damaged = round % 5 == 4;
        while (len < (1u << 16) - 80) {
            tk_te_packet k;
            random_packet(&p, &k);
            size_t n = 0;
            if (tk_te_packet_encode(&p, &k, buf + len + 1, 64, &n) != TK_OK || n > 31)
                continue;
            if (damaged && rnd() % 8 == 0) {
                n = 1 + rnd() % 16; /* random payload */
                for (size_t i = 0; i < n; i++)
                    buf[len + 1 + i] = (uint8_t)rnd();
            }
            buf[len] = (uint8_t)(TK_ENCAP_FLOW_TE_INST << 5 | n);
            if (damaged && rnd() % 64 == 0)
                buf[len] = (uint8_t)rnd(); /* random header */
            len += 1 + n;
        }
        const unsigned share = check_scan(&p, buf, len, 1 + rnd() % 64);
        if (!damaged) {
            share_sum += share;
            rounds++;
        }
    }
    free(buf);
    /* on undamaged streams the batches carried nearly all packets (not format 3 packets
     * longer than 16 bytes): the in-line paths, not only tk_te_scan_next, were compared */
    assert_true(rounds > 0 && share_sum / rounds >= 90);
}

int main(void)
{
    const struct CMUnitTest unit[] = {cmocka_unit_test(test_fast_equals_generic),
                                      cmocka_unit_test(test_scan_random_streams)};
    int rc = cmocka_run_group_tests(unit, NULL, NULL);
    if (!tk_test_data_present())
        return rc ? rc : TK_TEST_SKIP;
    const struct CMUnitTest data[] = {
        cmocka_unit_test(test_scan_golden),
        cmocka_unit_test(test_scan_damaged),
    };
    return rc | cmocka_run_group_tests(data, NULL, NULL);
}
