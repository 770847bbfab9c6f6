/* SPDX-License-Identifier: BSD-2-Clause */
/* A hash map from a pair of 64-bit keys to a 32-bit index (open addressing, linear probing).
 * The analysis sinks keep their records in arrays and use this to find them: ranges by
 * (first, last), transfers by (from, to), call-tree nodes by (parent, function). */
#ifndef TK_ANALYSIS_PAIR_MAP_H
#define TK_ANALYSIS_PAIR_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/status.h"

typedef struct tk_pair_slot {
    uint64_t a, b;
    uint32_t value; /* UINT32_MAX: empty */
} tk_pair_slot;

typedef struct tk_pair_map {
    tk_pair_slot *slots;
    size_t cap; /* power of two, or 0 */
    size_t used;
} tk_pair_map;

#define TK_PAIR_NONE UINT32_MAX

void tk_pair_map_init(tk_pair_map *m);
void tk_pair_map_fini(tk_pair_map *m);
/* The value stored for (a, b), or TK_PAIR_NONE. */
uint32_t tk_pair_map_get(const tk_pair_map *m, uint64_t a, uint64_t b);
/* Find (a, b); if absent, insert it with value *value. On return *value holds the stored
 * value. Returns TK_OK, or TK_ERR_NOMEM. *inserted tells whether it was new. */
tk_status tk_pair_map_put(tk_pair_map *m, uint64_t a, uint64_t b, uint32_t *value, int *inserted);

#endif
