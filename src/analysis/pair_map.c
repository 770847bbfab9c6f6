/* SPDX-License-Identifier: BSD-2-Clause */
#include "pair_map.h"

#include <stdlib.h>

static inline size_t pair_hash(uint64_t a, uint64_t b)
{
    /* A multiply-xorshift mix: addresses differ mostly in their low bits. */
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h;
}

void tk_pair_map_init(tk_pair_map *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->used = 0;
}

void tk_pair_map_fini(tk_pair_map *m)
{
    free(m->slots);
    tk_pair_map_init(m);
}

uint32_t tk_pair_map_get(const tk_pair_map *m, uint64_t a, uint64_t b)
{
    if (!m->cap)
        return TK_PAIR_NONE;
    size_t mask = m->cap - 1;
    for (size_t i = pair_hash(a, b) & mask;; i = (i + 1) & mask) {
        const tk_pair_slot *s = &m->slots[i];
        if (s->value == TK_PAIR_NONE)
            return TK_PAIR_NONE;
        if (s->a == a && s->b == b)
            return s->value;
    }
}

static tk_status grow(tk_pair_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 256;
    tk_pair_slot *ns = malloc(ncap * sizeof(*ns));
    if (!ns)
        return TK_ERR_NOMEM;
    for (size_t i = 0; i < ncap; i++)
        ns[i].value = TK_PAIR_NONE;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < m->cap; i++) {
        const tk_pair_slot *s = &m->slots[i];
        if (s->value == TK_PAIR_NONE)
            continue;
        size_t j = pair_hash(s->a, s->b) & mask;
        while (ns[j].value != TK_PAIR_NONE)
            j = (j + 1) & mask;
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return TK_OK;
}

tk_status tk_pair_map_put(tk_pair_map *m, uint64_t a, uint64_t b, uint32_t *value, int *inserted)
{
    /* Keep the load factor under 1/2 so probes stay short. */
    if ((m->used + 1) * 2 > m->cap) {
        tk_status st = grow(m);
        if (st != TK_OK)
            return st;
    }
    size_t mask = m->cap - 1;
    for (size_t i = pair_hash(a, b) & mask;; i = (i + 1) & mask) {
        tk_pair_slot *s = &m->slots[i];
        if (s->value == TK_PAIR_NONE) {
            s->a = a;
            s->b = b;
            s->value = *value;
            m->used++;
            if (inserted)
                *inserted = 1;
            return TK_OK;
        }
        if (s->a == a && s->b == b) {
            *value = s->value;
            if (inserted)
                *inserted = 0;
            return TK_OK;
        }
    }
}
