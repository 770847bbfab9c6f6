/* SPDX-License-Identifier: BSD-2-Clause */
/* The printed text of whole basic blocks, kept by block id (block_text.c): the printers (PC
 * list, listing) format a block's lines once and copy them every time the block runs again
 * in a TK_EV_BLOCKS batch. */
#ifndef TK_ANALYSIS_BLOCK_TEXT_H
#define TK_ANALYSIS_BLOCK_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/image.h"

typedef struct tk_block_text_ref {
    const tk_bblock *block; /* NULL: none yet (ids of another image's blocks collide) */
    uint32_t off, len;      /* text in the arena */
} tk_block_text_ref;

typedef struct tk_block_text {
    tk_block_text_ref *ref; /* by tk_bblock.id */
    size_t cap_ref;
    char *arena;
    size_t used, cap;
    size_t max;   /* the arena never grows past this: later blocks are not kept */
    size_t align; /* each text starts at a multiple of this (chunked copies) */
} tk_block_text;

/* An empty store whose arena stays under max bytes, texts aligned to align (a power of
 * two). Nothing is allocated until a text is kept. */
void tk_block_text_init(tk_block_text *t, size_t max, size_t align);
void tk_block_text_free(tk_block_text *t);

/* The text kept for block b, or NULL. */
static inline const tk_block_text_ref *tk_block_text_find(const tk_block_text *t,
                                                          const tk_bblock *b)
{
    if (b->id >= t->cap_ref || t->ref[b->id].block != b)
        return NULL;
    return &t->ref[b->id];
}

/* Room for up to need bytes of b's text at the end of the arena, or NULL (no memory, or
 * over max: the caller prints b without keeping it). tk_block_text_keep then records it. */
char *tk_block_text_room(tk_block_text *t, const tk_bblock *b, size_t need);
void tk_block_text_keep(tk_block_text *t, const tk_bblock *b, size_t len);

#endif
