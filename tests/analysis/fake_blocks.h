/* SPDX-License-Identifier: BSD-2-Clause */
/* Block objects for the ranges of fake_code.h's program, made by hand as a producer of
 * TK_EV_BLOCKS would make them: one per distinct range, with ids far apart (so the
 * profile's per-block table grows), and "other" blocks of the same ranges that all take the
 * id of the first block plus one, as another image's would. Shared by test_profile_blocks
 * and fuzz_profile. */
#ifndef TK_TEST_FAKE_BLOCKS_H
#define TK_TEST_FAKE_BLOCKS_H

#include <stdbool.h>
#include <string.h>

#include "fake_code.h"
#include "tracekit/image.h"

#define FAKE_MAX_BLOCKS 64

typedef struct fake_blockset {
    tk_bblock b[FAKE_MAX_BLOCKS];
    size_t n;
} fake_blockset;

/* The block of range first..last (ninsn instructions), made on first sight; NULL when the
 * set is full. */
static inline const tk_bblock *fake_block_of(fake_blockset *s, uint64_t first, uint64_t last,
                                             uint32_t ninsn, bool other)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->b[i].start == first && s->b[i].last == last && (s->b[i].id & 1) == other)
            return &s->b[i];
    if (s->n == FAKE_MAX_BLOCKS)
        return NULL;
    tk_bblock *b = &s->b[s->n];
    memset(b, 0, sizeof(*b));
    b->start = first;
    b->last = last;
    b->ninsn = ninsn;
    /* Ids 1000 apart from 70000 up; "other" blocks take the id of block 0 plus one. */
    b->id = other ? 70001 : 70000 + 1000 * (uint32_t)s->n;
    s->n++;
    return b;
}

/* Instructions of first..last in the fake program (0 if it does not match the code). */
static inline uint32_t fake_count_insns(uint64_t first, uint64_t last)
{
    uint32_t n = 0;
    for (uint64_t a = first; a <= last;) {
        const fake_insn *f = fake_find(a);
        if (!f)
            return 0;
        n++;
        a += f->len;
    }
    return n;
}

#endif
