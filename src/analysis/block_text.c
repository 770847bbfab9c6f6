/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-block text store (block_text.h). */
#include "block_text.h"

#include <stdlib.h>
#include <string.h>

void tk_block_text_init(tk_block_text *t, size_t max, size_t align)
{
    *t = (tk_block_text){.max = max, .align = align ? align : 1};
}

void tk_block_text_free(tk_block_text *t)
{
    free(t->ref);
    free(t->arena);
    *t = (tk_block_text){.max = t->max, .align = t->align};
}

char *tk_block_text_room(tk_block_text *t, const tk_bblock *b, size_t need)
{
    if (b->id >= t->cap_ref) {
        size_t cap = t->cap_ref ? t->cap_ref : 256;
        while (cap <= b->id)
            cap *= 2;
        tk_block_text_ref *nr = realloc(t->ref, cap * sizeof(*nr));
        if (!nr)
            return NULL;
        memset(nr + t->cap_ref, 0, (cap - t->cap_ref) * sizeof(*nr));
        t->ref = nr;
        t->cap_ref = cap;
    }
    /* the text is aligned, and so is its end: copies of whole chunks stay in the arena */
    need = (need + t->align - 1) & ~(t->align - 1);
    if (t->cap - t->used < need) {
        size_t cap = t->cap ? t->cap : 1u << 14;
        while (cap - t->used < need)
            cap *= 2;
        if (cap > t->max)
            return NULL;
        char *na = realloc(t->arena, cap);
        if (!na)
            return NULL;
        t->arena = na;
        t->cap = cap;
    }
    return t->arena + t->used;
}

void tk_block_text_keep(tk_block_text *t, const tk_bblock *b, size_t len)
{
    t->ref[b->id] = (tk_block_text_ref){.block = b, .off = (uint32_t)t->used, .len = (uint32_t)len};
    t->used += (len + t->align - 1) & ~(t->align - 1);
}
