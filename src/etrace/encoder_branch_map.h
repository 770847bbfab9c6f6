/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal: the encoder's branch map (E-Trace 2.0 "branch map": bit i = i-th oldest branch,
 * 0 taken, 1 not taken; at most 31 entries before a packet must report them). */
#ifndef TK_ETRACE_ENCODER_BRANCH_MAP_H
#define TK_ETRACE_ENCODER_BRANCH_MAP_H

#include <stdbool.h>
#include <stdint.h>

#define TK_TE_MAX_BRANCHES 31u

typedef struct tk_te_branch_map {
    uint32_t bits;
    uint8_t count;
} tk_te_branch_map;

static inline void tk_te_branch_map_clear(tk_te_branch_map *m)
{
    m->bits = 0;
    m->count = 0;
}

/* Returns false if the map was already full (the caller must have reported it). */
static inline bool tk_te_branch_map_add(tk_te_branch_map *m, bool taken)
{
    if (m->count >= TK_TE_MAX_BRANCHES)
        return false;
    if (!taken)
        m->bits |= 1u << m->count;
    m->count++;
    return true;
}

static inline bool tk_te_branch_map_full(const tk_te_branch_map *m)
{
    return m->count == TK_TE_MAX_BRANCHES;
}

#endif
