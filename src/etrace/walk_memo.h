/* SPDX-License-Identifier: BSD-2-Clause */
/* The walk memo: the block executions of a packet's walk, remembered under what decided them.
 *
 * With block events and none of the optional modes that make the path depend on more than
 * the packet (implicit return, sequentially inferable jumps, branch prediction), the walk
 * that tk_dec_follow() does for a branch-map packet is a function of four things: the block
 * it starts at, the unresolved branch map, its length and the reported address (and where
 * in the block it starts, when an earlier walk stopped inside it, and the packet's flags but
 * irreport). So is the walk of a format 3 sync that leaves the privilege as it is. Programs
 * spend their time in loops, so the same four come back again and again, and the walk that
 * followed them (each block, its successor, its branch outcome) can be handed to the sink
 * again as the same batch entries, without walking: the sink sees exactly the events the
 * walk would have sent, and the decoder is left as the walk left it. Walks that sent
 * anything but whole blocks (a range event), or longer than TK_WALK_MEMO_MAX blocks, run every
 * time. */
#ifndef TK_ETRACE_WALK_MEMO_H
#define TK_ETRACE_WALK_MEMO_H

#include <string.h>

#include "decoder_int.h"

/* Direct-mapped: a new walk replaces the one in its slot. 2^TK_WALK_MEMO_BITS slots. */
#define TK_WALK_MEMO_BITS 9
/* Block executions one remembered walk may hold (a full map of 31 branches plus the jumps
 * between them fits: loops with calls in them repeat such walks whole). */
#define TK_WALK_MEMO_MAX 48u

/* Marks of a walk in its key's branches word, above the count of branches (at most 63). The
 * flags of the packet that change where arrive() stops: notify, updiscon, and a format 3 sync
 * at which the privilege stays (it stops on reaching the address with the branches the sync
 * leaves, whatever the other conditions). */
#define TK_WALK_MEMO_UPDISCON (1u << 28)
#define TK_WALK_MEMO_NOTIFY (1u << 29)
#define TK_WALK_MEMO_FMT3 (1u << 30)
/* A walk that starts inside its start block, after an earlier one stopped there (at the
 * instruction before a sync's address, at a full map's last branch, at a sync's address):
 * from says where. */
#define TK_WALK_MEMO_INSIDE (1u << 31)
#define TK_WALK_MEMO_MARKS                                                                         \
    (TK_WALK_MEMO_UPDISCON | TK_WALK_MEMO_NOTIFY | TK_WALK_MEMO_FMT3 | TK_WALK_MEMO_INSIDE)
/* Not a mark: a walk the memo does not keep. */
#define TK_WALK_MEMO_NONE UINT32_MAX

/* The inputs of a walk: the block it starts at, the branch map, its length with the marks
 * above, whether it is a map without address, the reported address, and for a walk starting
 * inside its block, pc's offset in it (high half) and the instructions reached there
 * (range_ninsn, low half): 0 for the others. */
typedef struct tk_walk_memo_key {
    const tk_bblock *start;
    uint64_t map;
    uint64_t address;
    uint32_t branches;
    bool stop_at_last_branch;
    uint64_t from;
} tk_walk_memo_key;

typedef struct tk_walk_memo_slot {
    tk_walk_memo_key k; /* NULL start for an empty slot */
    /* What the walk left: the batch entries, the branch map (bits used, and whether the last
     * bit of a map without address is still to come), the flags arrive() sets, the block at
     * pc, and the instructions. */
    bool stop_at_last_branch_after;
    bool walk_uninf;
    bool inferred_address;
    uint32_t n;
    uint32_t used;
    uint32_t seen; /* tk_walk_memo_second_sight's tag (in what was padding) */
    uint64_t insns;
    const tk_bblock *stop;
    /* Where it stopped: pc, the reached instructions not yet emitted (range_first..pc,
     * range_ninsn) and the one executed before pc. Kept, not derived from the last entry:
     * a walk may stop inside a block (the instruction before a format 3 sync's address is
     * often the last of one), with its range still open. */
    uint64_t pc, range_first, range_ninsn, last_pc;
    tk_rv_insn last_insn;
    tk_block_exec e[TK_WALK_MEMO_MAX];
} tk_walk_memo_slot;

/* The slot a walk from start to address with the decoder's branch map and the marks is
 * remembered in, or would be; NULL when the memo could not be allocated (the walk then runs
 * every time). */
static inline tk_walk_memo_slot *tk_walk_memo_slot_for(tk_te_decoder *d, const tk_bblock *start,
                                                       uint64_t address, uint32_t marks)
{
    if (!d->memo)
        return NULL;
    uint64_t k = ((uint64_t)start->id << 32) ^ d->branch_map * 0x9e3779b97f4a7c15ull ^
                 address * 0xc2b2ae3d27d4eb4full ^ (d->branches | marks);
    k *= 0xd6e8feb86659fd93ull;
    return &d->memo[k >> (64 - TK_WALK_MEMO_BITS)];
}

/* Whether slot s holds the walk from start to address with the decoder's branch map (and
 * whether it is a map without address) and the marks. A walk that starts inside its block
 * (TK_WALK_MEMO_INSIDE) has its from compared as well (tk_walk_memo_hit_inside). */
static inline bool tk_walk_memo_hit(const tk_te_decoder *d, const tk_walk_memo_slot *s,
                                    const tk_bblock *start, uint64_t address, uint32_t marks)
{
    return s->k.start == start && s->k.address == address && s->k.map == d->branch_map &&
           s->k.branches == (d->branches | marks) &&
           s->k.stop_at_last_branch == d->stop_at_last_branch;
}

static inline bool tk_walk_memo_hit_inside(const tk_te_decoder *d, const tk_walk_memo_slot *s,
                                           const tk_walk_memo_key *k)
{
    return tk_walk_memo_hit(d, s, k->start, k->address, k->branches & TK_WALK_MEMO_MARKS) &&
           s->k.from == k->from;
}

/* Whether a walk that starts inside its block, and that slot s does not hold, is to be kept
 * there: the second time its key comes to the slot in a row. Many such walks never come again
 * (after a full map without address, in loops whose branches depend on data), and writing
 * one out costs more in cache misses than walking it; the first time, only a tag of its key
 * is left in the slot. (What is kept changes how fast, never what the decoder sends.) */
static inline bool tk_walk_memo_second_sight(tk_walk_memo_slot *s, const tk_walk_memo_key *k)
{
    uint64_t h = (k->map ^ k->from) * 0x9e3779b97f4a7c15ull ^ k->address ^ k->branches ^
                 (uint64_t)(uintptr_t)k->start;
    h *= 0xc2b2ae3d27d4eb4full;
    const uint32_t tag = (uint32_t)(h >> 32) | 1u;
    if (s->seen == tag)
        return true;
    s->seen = tag;
    return false;
}

/* What the remembered walk left in the decoder (its entries are in the batch). */
static inline void tk_walk_memo_restore(tk_te_decoder *d, const tk_walk_memo_slot *s)
{
    d->branch_map >>= s->used;
    d->branches -= s->used;
    d->stop_at_last_branch = s->stop_at_last_branch_after;
    d->walk_uninf = s->walk_uninf;
    d->inferred_address = s->inferred_address;
    d->last_insn = s->last_insn;
    d->last_pc = s->last_pc;
    d->last_valid = true;
    d->pc = s->pc;
    d->range_first = s->range_first;
    d->range_ninsn = s->range_ninsn;
    d->stop_block = s->stop;
    d->stats.walks_replayed++;
}

/* tk_walk_memo_replay when the entries fill the batch (it is handed over where the walk
 * handed it over). */
int tk_walk_memo_replay_filling(tk_te_decoder *d, const tk_walk_memo_slot *s);

/* The remembered walk again: its batch entries into the block batch (flushed when full, as
 * the walk does), and the decoder state it left. TK_OK or DEC_STOPPED. */
static inline int tk_walk_memo_replay(tk_te_decoder *d, const tk_walk_memo_slot *s)
{
    const uint32_t n = s->n;
    if (TK_BLOCK_BATCH - d->nblk <= n || d->nblk == 0)
        return tk_walk_memo_replay_filling(d, s);
    memcpy(d->blk + d->nblk, s->e, n * sizeof(*s->e));
    d->nblk += n;
    d->stats.instructions += s->insns;
    tk_walk_memo_restore(d, s);
    return TK_OK;
}

/* Remember the walk that just ended in slot s: its inputs were k, its batch entries are
 * d->blk[first..d->nblk) (the batch was not flushed during it), insns instructions. Walks
 * that retired more than TK_WALK_MEMO_MAX blocks are not kept. */
void tk_walk_memo_store(tk_te_decoder *d, tk_walk_memo_slot *s, const tk_walk_memo_key *k,
                        uint32_t first, uint64_t insns);

/* Chunks: within a walk, the blocks that 8 branch-map bits lead through. A walk that the
 * whole-walk memo does not have (a loop whose branches depend on data, a map that differs in a
 * few bits) still goes through the same short stretches again and again: from a block, the
 * next 8 bits of the map decide every block up to the 8th branch (with the direct jumps in
 * between), unless the walk stops on the way, which only the reported address can make it do.
 * The tight loop (decoder_walk.c) looks a chunk up where no jump has been followed since the
 * last branch and at least 8 bits are there to resolve, and takes it whole if the address is
 * in none of its blocks but the first; else it walks, and remembers the chunk it walked. */
#define TK_WALK_CHUNK_BITS 8u
#define TK_WALK_CHUNK_SLOT_BITS 10
/* Batch entries a chunk may hold: its 8 branches and up to 8 jumps between them. */
#define TK_WALK_CHUNK_MAX 16u

typedef struct tk_walk_chunk {
    const tk_bblock *start; /* NULL: empty */
    const tk_bblock *final; /* the block the 8th branch led to (not in the chunk) */
    uint64_t lo, hi;        /* bounds of the chunk's blocks after the first */
    uint64_t insns;
    uint8_t bits; /* the 8 map bits */
    uint8_t n;
    tk_block_exec e[TK_WALK_CHUNK_MAX];
} tk_walk_chunk;

/* The slot of the chunk from start with the next 8 map bits (NULL: no chunk memo). */
static inline tk_walk_chunk *tk_walk_chunk_slot(tk_te_decoder *d, const tk_bblock *start,
                                                uint64_t map)
{
    if (!d->chunks)
        return NULL;
    const uint64_t k = ((uint64_t)start->id << 8 | (map & 0xffu)) * 0x9e3779b97f4a7c15ull;
    return &d->chunks[k >> (64 - TK_WALK_CHUNK_SLOT_BITS)];
}

/* Whether chunk c is the one from start with the next 8 map bits, and a walk to address may
 * take it whole. The walk looks at arriving only where the address is: at the start of a
 * block, arriving stops it only when at most one branch is left (arrive()), which the caller
 * rules out (more branches than the chunk's are left); inside a block, the tight loop leaves
 * for the general path, so a chunk holding such a block is not taken. */
static inline bool tk_walk_chunk_fits(const tk_walk_chunk *c, const tk_bblock *start, uint64_t map,
                                      uint64_t address)
{
    if (c->start != start || c->bits != (uint8_t)map)
        return false;
    if (address <= c->lo || address > c->hi)
        return true;
    for (unsigned i = 1; i < c->n; i++) {
        const tk_bblock *b = c->e[i].block;
        if (address - b->start - 1 < b->last - b->start)
            return false;
    }
    return true;
}

/* Remember in slot c the chunk walked from start with map bits bits: its entries e[0..n), the
 * block final its last branch led to. */
void tk_walk_chunk_store(tk_te_decoder *d, tk_walk_chunk *c, const tk_bblock *start, uint64_t bits,
                         const tk_block_exec *e, size_t n, const tk_bblock *final);

/* Forget every walk (the blocks they name belong to an image the decoder no longer uses, or
 * the decoder's flags changed). */
void tk_walk_memo_clear(tk_te_decoder *d);

/* With on false, every walk runs (the memo and the chunks are freed, and not made again);
 * with on true (the default), they are made empty when the decoder has block events (only
 * those walks use them). TK_OK, or TK_ERR_NOMEM (then every walk runs). For tests. */
tk_status tk_dec_set_walk_memo(tk_te_decoder *d, bool on);

/* A walk memo and its chunks held apart from any decoder. A parallel decode makes a new
 * decoder per piece; its worker lends each of them the memo the previous ones filled, so no
 * piece starts cold, and no piece pays for allocating and faulting in a memo of its own. The
 * walks stay right: they name blocks of the worker's image, which all its pieces use, and all
 * pieces' decoders have the same flags. */
typedef struct tk_walk_memo_loan {
    tk_walk_memo_slot *memo; /* NULL: nothing to lend yet */
    tk_walk_chunk *chunks;
    bool used;
} tk_walk_memo_loan;

/* Turn d's memo on with the one in l (l is left empty), or with a new one if l is empty. For
 * a decoder whose memo was turned off (tk_dec_set_walk_memo(d, false)) before its flags were
 * set, so that it has not made one of its own. */
void tk_walk_memo_lend(tk_te_decoder *d, tk_walk_memo_loan *l);

/* Move d's memo (the lent one, or its own) into the empty l; d is left without one, so its
 * walks run from now on. */
void tk_walk_memo_take_back(tk_te_decoder *d, tk_walk_memo_loan *l);

void tk_walk_memo_loan_free(tk_walk_memo_loan *l);

#endif
