/* SPDX-License-Identifier: BSD-2-Clause */
/* The batch walk's arrays (coresight/etm4_window.h): the SSE2 and AVX2 variants give the
 * scalar definition's bytes, on random data where every kind of header and continuation bit
 * is frequent, with runs of atoms up to and past 255 (dist saturates there), for every window
 * size from 1 to 40 blocks (odd ones: the AVX2 variant's 16-byte first block) and a long one,
 * and on windows where every byte is one value. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "coresight/etm4_window.h"

enum { MAXBLK = 140, BYTES = 16 * MAXBLK + 17 };

typedef struct arrays {
    uint8_t dist[16 * MAXBLK], len[16 * MAXBLK], rid[16 * MAXBLK];
} arrays;

/* fn's arrays for b against the scalar ones, in the first 16 nblk positions; the bytes after
 * them are not written */
static void same_as_scalar(tk_etm4_window_fn fn, const uint8_t *b, unsigned nblk)
{
    static arrays want, got;
    memset(&want, 0xa5, sizeof(want));
    memset(&got, 0xa5, sizeof(got));
    tk_etm4_window_scalar(b, nblk, want.dist, want.len, want.rid);
    fn(b, nblk, got.dist, got.len, got.rid);
    for (size_t q = 0; q < sizeof(want.dist); q++) {
        if (want.dist[q] != got.dist[q] || want.len[q] != got.len[q] || want.rid[q] != got.rid[q])
            fail_msg("nblk %u, position %zu (byte %#x): dist %u/%u len %u/%u rid %u/%u", nblk, q,
                     b[q], want.dist[q], got.dist[q], want.len[q], got.len[q], want.rid[q],
                     got.rid[q]);
    }
}

/* a byte as the walk meets them: atoms, the address headers, others, any byte */
static uint8_t random_byte(uint64_t *s, unsigned atoms_in_16)
{
    static const uint8_t headers[] = {0x90, 0x91, 0x92, 0x93, 0x95, 0x96, 0x9a, 0x9b,
                                      0x9d, 0x9e, 0x9f, 0x80, 0x00, 0x01, 0x04, 0x8f};
    const uint64_t r = tk_test_xorshift64(s);
    if (r % 16 < atoms_in_16)
        return (uint8_t)(0xc0 + (r >> 8) % 64);
    if (r % 16 < atoms_in_16 + 2)
        return (uint8_t)(r >> 8);
    return headers[(r >> 8) % sizeof(headers)];
}

static void check_all(const uint8_t *b)
{
    const tk_etm4_window_fn fns[2] = {tk_etm4_window_sse2, tk_etm4_window_avx2()};
    for (int f = 0; f < 2; f++) {
        if (!fns[f])
            continue;
        for (unsigned nblk = 1; nblk <= 40; nblk++)
            same_as_scalar(fns[f], b, nblk);
        same_as_scalar(fns[f], b, MAXBLK);
        same_as_scalar(fns[f], b, MAXBLK - 1);
    }
}

static void test_random(void **state)
{
    (void)state;
    static uint8_t b[BYTES];
    uint64_t s = 0x5eedull;
    for (unsigned density = 0; density <= 16; density++)
        for (int round = 0; round < 4; round++) {
            for (size_t q = 0; q < BYTES; q++)
                b[q] = random_byte(&s, density);
            /* a long run of atoms somewhere: dist up to and past 255 */
            if (round & 1) {
                const size_t at = tk_test_xorshift64(&s) % (BYTES / 2),
                             n = 200 + tk_test_xorshift64(&s) % 200;
                for (size_t q = at; q < at + n && q < BYTES; q++)
                    b[q] = (uint8_t)(0xc0 | b[q]);
            }
            check_all(b);
        }
}

static void test_uniform(void **state)
{
    (void)state;
    static uint8_t b[BYTES];
    for (unsigned v = 0; v < 256; v++) {
        memset(b, (int)v, sizeof(b));
        check_all(b);
    }
}

int main(void)
{
    printf("AVX2 variant: %s\n", tk_etm4_window_avx2() ? "tested" : "not on this machine");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
