/* SPDX-License-Identifier: BSD-2-Clause */
/* Sorting records by a 64-bit key without a comparison callback: qsort's call per comparison
 * made the profile's finish-time sorts (instructions and branches by address, the code view's
 * function entries) 9% of a CoreSight profile's instructions. */
#ifndef TK_UTIL_SORT_H
#define TK_UTIL_SORT_H

#include <stdbool.h>
#include <stddef.h>

/* Sort n records of size bytes in base by the uint64_t at byte offset key, ascending and
 * stable (an LSD radix sort, one pass per key byte that is not the same in every record:
 * addresses differ in three or four). Returns false, with base untouched, when its buffer
 * (n records) cannot be allocated: the caller sorts another way. */
bool tk_sort_by_u64(void *base, size_t n, size_t size, size_t key);

#endif
