/* SPDX-License-Identifier: BSD-2-Clause */
/* tk_sort_by_u64 and tk_count_keys_u64 (util/sort.h); the sort against qsort with the original
 * position as tie-break (so stability is checked too): random keys of every width, duplicates, keys
 * equal in every record, and the sizes 0 and 1. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util/sort.h"

typedef struct rec {
    uint32_t pos; /* original position */
    uint64_t key;
    uint8_t pad[5]; /* an odd record size */
} rec;

static int by_key_then_pos(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void check(size_t n, uint64_t mask, uint64_t base, uint64_t seed)
{
    rec *a = calloc(n ? n : 1, sizeof(*a)), *b = calloc(n ? n : 1, sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++) {
        a[i].pos = (uint32_t)i;
        a[i].key = base + (next(&seed) & mask);
        memset(a[i].pad, (int)i, sizeof(a[i].pad));
    }
    memcpy(b, a, n * sizeof(*a));
    assert_true(tk_sort_by_u64(a, n, sizeof(*a), offsetof(rec, key)));
    if (n)
        qsort(b, n, sizeof(*b), by_key_then_pos);
    assert_memory_equal(a, b, n * sizeof(*a));
    free(a);
    free(b);
}

static void test_against_qsort(void **state)
{
    (void)state;
    const uint64_t masks[] = {0, 0xf, 0xff00, 0x3fffff, 0xffffffffull, ~0ull};
    for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++)
        for (size_t n = 0; n < 300; n += 1 + n / 3)
            check(n, masks[m], 0x400000, 0x9e3779b97f4a7c15ull + n * 31 + m);
    check(100000, 0x1fffff, 0x400000, 7); /* a profile's instructions: addresses in a text */
    check(5000, ~0ull, 0, 11);
}

/* tk_count_keys_u64 against counting by hand, on sorted keys with duplicates, for values
 * below, between, on and above them. */
static void test_count_keys(void **state)
{
    (void)state;
    rec r[64];
    for (size_t i = 0; i < 64; i++)
        r[i] = (rec){.pos = (uint32_t)i, .key = 10 * (i / 2)}; /* each key twice */
    for (size_t n = 0; n <= 64; n++)
        for (uint64_t v = 0; v < 330; v++)
            for (int eq = 0; eq < 2; eq++) {
                size_t want = 0;
                while (want < n && (r[want].key < v || (eq && r[want].key == v)))
                    want++;
                assert_int_equal(tk_count_keys_u64(r, n, sizeof(*r), offsetof(rec, key), v, eq),
                                 want);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_qsort),
        cmocka_unit_test(test_count_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
