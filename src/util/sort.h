/* SPDX-License-Identifier: BSD-2-Clause */
/* Records sorted by a 64-bit key (an address): sorting them without a comparison callback
 * (qsort's call per comparison made the profile's finish-time sorts 9% of a CoreSight
 * profile's instructions), and the binary searches the tables over them need. */
#ifndef TK_UTIL_SORT_H
#define TK_UTIL_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Sort n records of size bytes in base by the uint64_t at byte offset key, ascending and
 * stable (an LSD radix sort, one pass per key byte that is not the same in every record:
 * addresses differ in three or four). Returns false, with base untouched, when its buffer
 * (n records) cannot be allocated: the caller sorts another way. */
bool tk_sort_by_u64(void *base, size_t n, size_t size, size_t key);

/* In n records of size bytes sorted by the uint64_t at byte offset key: how many have a key
 * below v (or_equal false) or at most v (or_equal true). The record before that count is the
 * last one starting at or before v (the table entry covering an address); the record at it
 * is the first one at or after v. */
static inline size_t tk_count_keys_u64(const void *base, size_t n, size_t size, size_t key,
                                       uint64_t v, bool or_equal)
{
    const unsigned char *a = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k;
        memcpy(&k, a + mid * size + key, sizeof(k));
        if (k < v || (or_equal && k == v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
