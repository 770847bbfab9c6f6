/* SPDX-License-Identifier: BSD-2-Clause */
/* Basic-block cache. A block runs from its start up to and including the first
 * instruction that can change the flow (branch, jal, jalr, xRET, ecall, ebreak): exactly
 * the unit the E-Trace decoder advances by between decisions. Built once per start
 * address; afterwards a lookup is one hash probe and no allocation. */
#include "image_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t slot_of(uint64_t key, uint32_t mask)
{
    /* Fibonacci hashing of the halfword address. */
    return (uint32_t)(((key >> 1) * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static tk_status grow_table(tk_block_cache *c)
{
    uint32_t ncap = c->mask ? (c->mask + 1) * 2 : 1024;
    tk_block_slot *slots = ncap ? calloc(ncap, sizeof(*slots)) : NULL;

    if (!slots)
        return TK_ERR_NOMEM;
    for (uint32_t i = 0; c->mask && i <= c->mask; i++) {
        uint32_t s;
        if (!c->slots[i].block)
            continue;
        s = slot_of(c->slots[i].start, ncap - 1);
        while (slots[s].block)
            s = (s + 1) & (ncap - 1);
        slots[s] = c->slots[i];
    }
    free(c->slots);
    c->slots = slots;
    c->mask = ncap - 1;
    return TK_OK;
}

static tk_bblock *new_block(tk_block_cache *c)
{
    uint32_t idx = c->nblocks;
    size_t chunk = idx / TK_BLOCK_CHUNK;

    if (idx == UINT32_MAX - 1)
        return NULL;
    if (chunk == c->nchunks) {
        tk_bblock **chunks = realloc(c->chunks, (c->nchunks + 1) * sizeof(*chunks));
        if (!chunks)
            return NULL;
        c->chunks = chunks;
        chunks[chunk] = malloc(TK_BLOCK_CHUNK * sizeof(tk_bblock));
        if (!chunks[chunk])
            return NULL;
        c->nchunks++;
    }
    c->nblocks++;
    return &c->chunks[chunk][idx % TK_BLOCK_CHUNK];
}

/* Longest straight line we follow before giving up (a corrupt image could otherwise make
 * one block span a whole segment of zeros-free data). */
#define TK_BLOCK_MAX_BYTES (1u << 24)

/* Decode from pc to the first control-flow instruction. Returns the status of the first
 * instruction if even that fails (no block). */
static tk_status build(const tk_image *img, uint64_t pc, tk_bblock *b)
{
    tk_rv_insn cur, next, before;
    tk_status st = tk_image_fetch(img, pc, &cur);
    uint64_t at = pc;

    if (st != TK_OK)
        return st;
    memset(b, 0, sizeof(*b));
    memset(&before, 0, sizeof(before));
    b->start = pc;
    b->status = TK_OK;
    for (;;) {
        uint64_t next_at;

        b->ninsn++;
        b->bytes += cur.len;
        b->last = at;
        if (cur.cf != TK_RV_CF_NONE)
            break;
        if (b->bytes >= TK_BLOCK_MAX_BYTES) {
            b->status = TK_ERR_OVERFLOW;
            break;
        }
        next_at = at + cur.len;
        if (img->xlen == 32)
            next_at &= 0xffffffffu;
        st = tk_image_fetch(img, next_at, &next);
        if (st != TK_OK) {
            /* Ran out of code: the block ends at the last good instruction. */
            b->status = st;
            break;
        }
        before = cur;
        cur = next;
        at = next_at;
    }
    b->term = cur;
    b->prev = before;
    /* What a flow decoder needs to leave the block without decoding again. */
    const uint64_t wrap = img->xlen == 32 ? 0xffffffffull : ~0ull;
    b->fall = (b->last + cur.len) & wrap;
    b->end = tk_rv_range_end(&cur);
    if (b->status == TK_OK) {
        if (cur.cf == TK_RV_CF_BRANCH || cur.cf == TK_RV_CF_JAL)
            b->target = (b->last + (uint64_t)cur.imm) & wrap;
        else if (cur.cf == TK_RV_CF_JALR && cur.rs1 == 0)
            b->target = (uint64_t)cur.imm & wrap;
    }
    return TK_OK;
}

tk_status tk_image_block(tk_image *img, uint64_t pc, const tk_bblock **out)
{
    tk_block_cache *c = &img->blocks;
    uint32_t s;
    tk_bblock *b;
    tk_status st;

    if (c->mask) {
        const tk_block_slot *slot;
        s = slot_of(pc, c->mask);
        while ((slot = &c->slots[s])->block) {
            if (slot->start == pc) {
                *out = slot->block;
                return TK_OK;
            }
            s = (s + 1) & c->mask;
        }
    }
    if (img->arch != TK_ARCH_RISCV)
        return TK_ERR_UNSUPPORTED;
    /* Miss: keep the load factor under 1/2. */
    if (!c->mask || (c->used + 1) * 2 > c->mask + 1) {
        st = grow_table(c);
        if (st != TK_OK)
            return st;
    }
    b = new_block(c);
    if (!b)
        return TK_ERR_NOMEM;
    st = build(img, pc, b);
    if (st != TK_OK) {
        c->nblocks--; /* the slot is reused by the next block */
        return st;
    }
    s = slot_of(pc, c->mask);
    while (c->slots[s].block)
        s = (s + 1) & c->mask;
    c->slots[s].start = pc;
    c->slots[s].block = b;
    c->used++;
    b->id = c->nblocks - 1;
    *out = b;
    return TK_OK;
}

tk_status tk_image_block_next(tk_image *img, const tk_bblock *b, unsigned which,
                              const tk_bblock **out)
{
    if (which > 1 || (which == 1 && !b->target))
        return TK_ERR_INVALID;
    tk_status st = tk_image_block(img, which ? b->target : b->fall, out);
    if (st == TK_OK) {
        /* Blocks live in the cache's chunks, which are not const: only the interface hands
         * them out read-only. A block's successors never change (regions cannot be added
         * once blocks exist). */
        tk_bblock *w = (tk_bblock *)(uintptr_t)b;
        w->link[which] = *out;
    }
    return st;
}

uint32_t tk_image_block_count(const tk_image *img)
{
    return img->blocks.nblocks;
}

uint64_t tk_image_code_bytes(const tk_image *img)
{
    uint64_t n = 0;
    for (size_t i = 0; i < img->nseg; i++)
        if (img->segs[i].exec)
            n += img->segs[i].filesz;
    return n;
}

void tk_image_free_blocks(tk_image *img)
{
    tk_block_cache *c = &img->blocks;

    for (size_t i = 0; i < c->nchunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
    free(c->slots);
    memset(c, 0, sizeof(*c));
}
