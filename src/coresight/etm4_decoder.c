/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 flow decoder: turns packets into executed instruction ranges by walking the program
 * image (IHI0064 chapter 4 "The trace element model": every branch is a P0 instruction and
 * gets one atom; E = taken, N = not taken; indirect branch targets and exception targets come
 * from the following address packet). Emits tk_events like every tracekit flow decoder. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coresight/etm4_state.h"
#include "isa/arm/arm_branch.h"
#include "tracekit/etm4.h"
#include "util/compiler.h"

struct tk_etm4_decoder {
    tk_etm4_config cfg;
    const tk_cs_mem *mem;
    tk_event_fn fn;
    void *ctx;

    uint64_t pc;
    bool pc_valid;
    tk_arm_isa isa;
    tk_etm4_context c;
    bool ctx_valid;
    uint8_t last_is;  /* IS bit of the last address: A32/T32 in AArch32 */
    bool exc_pending; /* an Exception packet waits for its return address */
    /* pc as a Q element's address left it: a Q element does not say which of its
     * instructions an exception interrupts (q_elem: an exception 4 bytes behind it) */
    uint64_t q_pc;
    bool q_pc_valid;
    /* A Trace Info came while pc was known and no P0 element since: the next address packet
     * states where execution is, which must be pc (else the memory images do not match). */
    bool sync_check;
    uint16_t exc_type;
    uint64_t packet_index, byte_offset;

    /* Return stack (TRCCONFIGR.RS, IHI0064 §4.4.6): with it enabled the trace unit omits the
     * target of an indirect branch that matches the address pushed by the last branch with
     * link; the decoder keeps the same stack. */
    bool rs_enabled, pop_pending;
    unsigned rs_depth;
    struct {
        uint64_t addr;
        uint8_t isa;
    } rs[16];

    tk_event range; /* range event template: only the range fields are ever written */
    /* Block cache: code does not change while decoding, so the walk from an address to its
     * next branch is remembered, with links between blocks (see struct block). */
    struct block_cache *blocks;
    struct spec_queue *spec; /* only when TRCIDR8.MAXSPEC > 0 */
};

/* A basic block ending in a branch, with everything an atom needs precomputed, and links to
 * the blocks that follow it. The decoder is a serial chain (block -> atom -> next block): with
 * the links an atom costs one load of the next block instead of a hash of the next pc and a
 * lookup; the range event is copied out of the block rather than assembled. 64 bytes. */
struct block {
    uint64_t start, last;
    uint64_t target;       /* taken: the direct branch target (0: indirect) */
    struct block *link[2]; /* the blocks that follow: [0] not taken, [1] taken, once known */
    uint64_t head[2];      /* bytes 0-7 of its range event (kind, end, taken, indirect) */
    uint32_t n;            /* instructions, the branch included */
    uint8_t isa;           /* tk_arm_isa */
    uint8_t next_isa[2];   /* instruction set after it: [0] not taken, [1] taken */
    uint8_t flags;         /* BF_* */
};
/* The range event's first and last are copied from start and last as one 16-byte block. */
_Static_assert(offsetof(struct block, last) == offsetof(struct block, start) + 8 &&
                   offsetof(tk_event, last) == offsetof(tk_event, first) + 8,
               "block start/last and event first/last are adjacent");
/* Taken, it needs the general loop (indirect, return stack): bit 0, tested as flags & E; such
 * a block's link[1] stays NULL (see fast_run). */
#define BF_TAKEN_SLOW 0x01
#define BF_SIZE 0x0e     /* size of the branch << 1: not taken, execution goes on after it */
#define BF_INDIRECT 0x10 /* indirect branch */
#define BF_LINK 0x20     /* branch with link */

/* The pc after block b when its atom is e (1 = taken). */
static inline uint64_t block_next(const struct block *b, unsigned e)
{
    return e ? b->target : b->last + ((b->flags & BF_SIZE) >> 1);
}

/* Blocks live in a pool of fixed chunks (their addresses never change, so links stay valid)
 * and are found by pc through a direct-mapped index; a block whose index entry was taken by
 * another one stays reachable through its links. A full pool is emptied as a whole (links
 * included) and refilled. */
/* (Overridable so that a test can build a tiny cache that is emptied all the time.) */
#ifndef BLOCK_CHUNK
#define BLOCK_CHUNK 4096
#endif
#ifndef BLOCK_CHUNKS
#define BLOCK_CHUNKS 64 /* at most 256 Ki blocks, 16 MiB */
#endif
#ifndef NINDEX
#define NINDEX 32768
#endif

typedef struct block_cache {
    struct block *index[NINDEX];
    struct block *chunk[BLOCK_CHUNKS];
    size_t nblocks; /* used, in chunk order */
    uint32_t gen;   /* incremented when the pool is emptied */
    uint64_t taken; /* bytes 0-7 of an event with only taken = 1 */
} block_cache;

static struct spec_queue *spec_new(void);
static void cache_free(block_cache *c);

tk_status tk_etm4_decoder_new(const tk_etm4_config *cfg, const tk_cs_mem *mem, tk_event_fn fn,
                              void *ctx, tk_etm4_decoder **out)
{
    if (!cfg || !fn || !out)
        return TK_ERR_INVALID;
    tk_etm4_decoder *d = calloc(1, sizeof(*d));
    if (!d)
        return TK_ERR_NOMEM;
    d->cfg = *cfg;
    d->mem = mem;
    /* The block cache is allocated at the first atom: a snapshot often names sources that
     * are not in the trace, and the cache is the bulk of a decoder's memory. */
    tk_etm4_decoder_reset(d, fn, ctx);
    if (cfg->max_spec && !(d->spec = spec_new())) {
        free(d);
        return TK_ERR_NOMEM;
    }
    *out = d;
    return TK_OK;
}

void tk_etm4_decoder_free(tk_etm4_decoder *d)
{
    if (!d)
        return;
    cache_free(d->blocks);
    free(d->spec);
    free(d);
}

static tk_status emit(tk_etm4_decoder *d, tk_event *ev)
{
    ev->trace_id = d->cfg.trace_id;
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    return d->fn(d->ctx, ev);
}

static tk_status emit_simple(tk_etm4_decoder *d, tk_event_kind kind, uint64_t addr)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.first = addr;
    return emit(d, &ev);
}

static tk_status emit_error(tk_etm4_decoder *d, tk_status status, uint64_t addr, const char *msg)
{
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_ERROR;
    ev.status = status;
    ev.first = addr;
    ev.message = msg;
    return emit(d, &ev);
}

/* Address packets carry the instruction set: AArch64, or A32 (IS0) / T32 (IS1) in AArch32. */
static void set_pc(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    d->pc = p->addr;
    d->pc_valid = true;
    d->q_pc_valid = false;
    d->last_is = p->addr_is;
    if (d->ctx_valid && d->c.sf)
        d->isa = TK_ARM_A64;
    else if (d->ctx_valid)
        d->isa = p->addr_is ? TK_ARM_T32 : TK_ARM_A32;
    else
        d->isa = p->addr_64 ? TK_ARM_A64 : (p->addr_is ? TK_ARM_T32 : TK_ARM_A32);
}

/* Walk from pc to the next branch (stop_at == 0) or up to, not including, stop_at. Fills the
 * range; *br receives the branch. Returns TK_OK, or TK_ERR_NO_CODE when code is missing
 * (pc then stays at the first inaccessible instruction). */
static tk_status walk(tk_etm4_decoder *d, uint64_t stop_at, bool to_addr, tk_event *ev,
                      tk_arm_insn *br)
{
    uint64_t pc = d->pc;
    uint64_t n = 0, last = pc;
    memset(br, 0, sizeof(*br));
    for (;;) {
        if (to_addr && pc == stop_at)
            break;
        size_t avail;
        const uint8_t *b = d->mem ? tk_cs_mem_ptr(d->mem, pc, &avail) : NULL;
        if (!b) {
            ev->ninsn = n;
            ev->last = last;
            d->pc = pc;
            return TK_ERR_NO_CODE;
        }
        /* Classify a whole mapped stretch without re-looking-up the region. */
        if (d->isa == TK_ARM_A64) {
            for (; avail >= 4; avail -= 4, b += 4) {
                if (to_addr && pc == stop_at)
                    goto done;
                uint32_t i =
                    b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                /* Fast reject: all A64 branches live in op0 = x101 (bits [28:26]). */
                if ((i & 0x1c000000) == 0x14000000) {
                    tk_arm_classify(TK_ARM_A64, pc, b, 4, br);
                    if (br->wfx && d->cfg.wfx_branch)
                        br->kind = TK_ARM_BRANCH;
                    if (br->kind == TK_ARM_BRANCH && !to_addr) {
                        ev->first = d->pc;
                        ev->last = pc;
                        ev->ninsn = n + 1;
                        return TK_OK;
                    }
                }
                last = pc;
                pc += 4;
                n++;
            }
            if (avail) {
                ev->ninsn = n;
                ev->last = last;
                d->pc = pc;
                return TK_ERR_NO_CODE;
            }
            continue;
        }
        if (tk_arm_classify(d->isa, pc, b, avail, br) < 0) {
            ev->ninsn = n;
            ev->last = last;
            d->pc = pc;
            return TK_ERR_NO_CODE;
        }
        if (br->wfx && d->cfg.wfx_branch)
            br->kind = TK_ARM_BRANCH;
        if (br->kind == TK_ARM_BRANCH && !to_addr) {
            ev->first = d->pc;
            ev->last = pc;
            ev->ninsn = n + 1;
            return TK_OK;
        }
        last = pc;
        pc += br->size;
        n++;
    }
done:
    ev->first = d->pc;
    ev->last = last;
    ev->ninsn = n;
    memset(br, 0, sizeof(*br));
    return TK_OK;
}

static tk_status no_code(tk_etm4_decoder *d)
{
    uint64_t at = d->pc;
    d->pc_valid = false;
    return emit_error(d, TK_ERR_NO_CODE, at, "no code in the memory images at this address");
}

/* The first address packet after a Trace Info, with no P0 element between (sync_check):
 * the trace unit states the address of the next instruction, which a decoder that followed
 * the flow from the memory images has in pc. A different address means the code walked is
 * not the code traced (wrong or shifted memory image, or damaged trace before the sync): a
 * mismatch, located at the packet; the trace's address is taken. */
static tk_status sync_address(tk_etm4_decoder *d, uint64_t addr)
{
    d->sync_check = false;
    if (!d->pc_valid || d->pop_pending || addr == d->pc)
        return TK_OK;
    return emit_error(d, TK_ERR_MISMATCH, addr,
                      "address after Trace Info differs from the flow decoded from the memory "
                      "images (wrong memory image, or trace damaged before the sync)");
}

/* One atom: execute up to and including the next branch. */
static void rs_push(tk_etm4_decoder *d, uint64_t addr)
{
    if (d->rs_depth == 16) { /* full: the oldest entry is lost */
        memmove(&d->rs[0], &d->rs[1], sizeof(d->rs[0]) * 15);
        d->rs_depth--;
    }
    d->rs[d->rs_depth].addr = addr;
    d->rs[d->rs_depth].isa = (uint8_t)d->isa;
    d->rs_depth++;
}

/* The previous element was a taken indirect branch without an address: its target is the top
 * of the return stack. */
static tk_status rs_pop(tk_etm4_decoder *d)
{
    if (!d->pop_pending)
        return TK_OK;
    d->pop_pending = false;
    if (!d->rs_depth) {
        d->pc_valid = false;
        return emit_error(d, TK_ERR_MISMATCH, 0, "return stack empty: indirect target unknown");
    }
    d->rs_depth--;
    d->pc = d->rs[d->rs_depth].addr;
    d->isa = (tk_arm_isa)d->rs[d->rs_depth].isa;
    d->pc_valid = true;
    return TK_OK;
}

static void rs_flush(tk_etm4_decoder *d)
{
    d->rs_depth = 0;
    d->pop_pending = false;
}

static size_t block_slot(uint64_t pc)
{
    return ((pc >> 2) ^ (pc >> 15)) & (NINDEX - 1);
}

static void cache_free(block_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < BLOCK_CHUNKS; i++)
        free(c->chunk[i]);
    free(c);
}

/* The indexed block at pc in instruction set isa, or NULL. */
static inline struct block *block_find(const block_cache *c, uint64_t pc, uint8_t isa)
{
    struct block *b = c->index[block_slot(pc)];
    return b && b->start == pc && b->isa == isa ? b : NULL;
}

static struct block *block_alloc(block_cache *c, bool *nomem)
{
    if (c->nblocks == (size_t)BLOCK_CHUNK * BLOCK_CHUNKS) {
        c->nblocks = 0;
        memset(c->index, 0, sizeof(c->index));
        c->gen++;
    }
    size_t k = c->nblocks / BLOCK_CHUNK;
    if (!c->chunk[k] && !(c->chunk[k] = malloc(BLOCK_CHUNK * sizeof(struct block)))) {
        *nomem = true;
        return NULL;
    }
    return &c->chunk[k][c->nblocks++ % BLOCK_CHUNK];
}

/* Bytes 0-7 of a tk_event (kind, end, taken, indirect, interrupt, priv, isa) as one word, so a
 * range event's are one store. */
_Static_assert(offsetof(tk_event, cause) == 8, "tk_event starts with 8 bytes of small fields");

/* Bytes 0-7 of a range event, built in 8 bytes rather than in a cleared 120-byte tk_event
 * (two of those per block were a third of block_fill's instructions). */
static uint64_t range_head(uint8_t end, uint8_t taken, uint8_t indirect, uint8_t isa)
{
    _Static_assert(offsetof(tk_event, indirect) < 8 && offsetof(tk_event, isa) < 8,
                   "the head holds kind, end, taken, indirect, isa");
    uint8_t h[8] = {0};
    const uint16_t kind = TK_EV_RANGE;
    memcpy(h + offsetof(tk_event, kind), &kind, sizeof(kind));
    h[offsetof(tk_event, end)] = end;
    h[offsetof(tk_event, taken)] = taken;
    h[offsetof(tk_event, indirect)] = indirect;
    h[offsetof(tk_event, isa)] = isa;
    uint64_t w;
    memcpy(&w, h, sizeof(w));
    return w;
}

static void put_head(tk_event *ev, uint64_t h)
{
    memcpy(ev, &h, sizeof(h));
}

/* Walk the block starting at the current pc into the cache. Returns NULL when code is
 * missing there (or memory cannot be allocated: *nomem is then set). */
static TK_NOINLINE struct block *block_fill(tk_etm4_decoder *d, bool *nomem)
{
    if (!d->blocks && !(d->blocks = calloc(1, sizeof(*d->blocks)))) {
        *nomem = true;
        return NULL;
    }
    /* walk writes only the range fields; only those are read (no need to clear the rest) */
    tk_event ev;
    tk_arm_insn br;
    ev.first = ev.last = ev.ninsn = 0;
    /* more than 4 Gi instructions without a branch: reported as missing code */
    if (walk(d, 0, false, &ev, &br) == TK_ERR_NO_CODE || ev.ninsn > UINT32_MAX)
        return NULL;
    struct block *b = block_alloc(d->blocks, nomem);
    if (!b)
        return NULL;
    b->start = ev.first;
    b->last = ev.last;
    b->n = (uint32_t)ev.ninsn;
    b->isa = (uint8_t)d->isa;
    b->target = br.indirect ? 0 : br.target;
    b->next_isa[0] = (uint8_t)d->isa;
    b->next_isa[1] = br.indirect ? (uint8_t)d->isa : br.target_isa;
    b->link[0] = b->link[1] = NULL;
    b->flags = (uint8_t)(((br.size << 1) & BF_SIZE) | (br.indirect ? BF_INDIRECT : 0) |
                         (br.link ? BF_LINK : 0) |
                         (br.indirect || (br.link && d->rs_enabled) ? BF_TAKEN_SLOW : 0));
    uint8_t end;
    if (br.eret)
        end = TK_END_TRAP_RETURN;
    else if (br.ret)
        end = TK_END_RETURN;
    else if (br.link)
        end = TK_END_CALL;
    else if (br.cond)
        end = TK_END_BRANCH;
    else
        end = TK_END_JUMP;
    b->head[0] = range_head(end, 0, br.indirect, b->isa);
    b->head[1] = range_head(end, 1, br.indirect, b->isa);
    d->blocks->index[block_slot(b->start)] = b;
    return b;
}

/* The block an atom's outcome e leads to from b, looked up or walked, and linked to b.
 * NULL: missing code there (reported when an atom needs it). */
static TK_NOINLINE struct block *link_next(tk_etm4_decoder *d, struct block *b, unsigned e)
{
    block_cache *c = d->blocks;
    struct block *nb = block_find(c, block_next(b, e), b->next_isa[e]);
    if (!nb) {
        const uint32_t gen = c->gen;
        bool nomem = false;
        d->pc = block_next(b, e);
        d->isa = (tk_arm_isa)b->next_isa[e];
        nb = block_fill(d, &nomem);
        if (!nb || c->gen != gen)
            return nb; /* the pool was emptied: b is gone */
    }
    b->link[e] = nb;
    return nb;
}

/* num atoms (bit i of bits = atom i, 1 = E): each executes up to and including the next
 * branch, taken or not. The general loop: handles every case (return stack, indirect
 * branches, cache misses, missing code). */
static TK_NOINLINE tk_status atoms_slow(tk_etm4_decoder *d, uint32_t bits, unsigned num)
{
    tk_status st;
    tk_event *ev = &d->range;
    const tk_event_fn fn = d->fn;
    void *const ctx = d->ctx;
    ev->byte_offset = d->byte_offset;
    ev->packet_index = d->packet_index;
    d->sync_check = false;
    for (; num; num--, bits >>= 1) {
        if (TK_UNLIKELY(d->pop_pending) && (st = rs_pop(d)))
            return st;
        if (TK_UNLIKELY(!d->pc_valid))
            continue; /* waiting for an address after a discontinuity */
        const struct block *b = d->blocks ? block_find(d->blocks, d->pc, (uint8_t)d->isa) : NULL;
        if (TK_UNLIKELY(!b)) {
            bool nomem = false;
            if (!(b = block_fill(d, &nomem))) {
                if (nomem)
                    return TK_ERR_NOMEM;
                if ((st = no_code(d)))
                    return st;
                continue;
            }
        }
        ev->first = b->start;
        ev->last = b->last;
        ev->ninsn = b->n;
        if (!(bits & 1)) {
            put_head(ev, b->head[0]);
            d->pc = ev->next = block_next(b, 0);
        } else {
            put_head(ev, b->head[1]);
            if (TK_UNLIKELY((b->flags & BF_LINK) && d->rs_enabled))
                rs_push(d, block_next(b, 0));
            if (!(b->flags & BF_INDIRECT)) {
                d->pc = ev->next = b->target;
                d->isa = (tk_arm_isa)b->next_isa[1];
            } else {
                ev->next = 0;
                d->pc_valid = false; /* the next address packet (or the return stack) gives it */
                d->pop_pending = d->rs_enabled;
            }
        }
        if ((st = fn(ctx, ev)))
            return st;
    }
    return TK_OK;
}

static tk_status atoms(tk_etm4_decoder *d, uint32_t bits, unsigned num)
{
    return atoms_slow(d, bits, num);
}

static tk_status atom(tk_etm4_decoder *d, bool taken)
{
    return atoms(d, taken, 1);
}

/* Exception (§6.4.7): the instructions up to the preferred return address were executed. */
static tk_status exception(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    tk_status st;
    d->exc_pending = false;
    if (d->pc_valid && d->pc != p->addr) {
        tk_event ev;
        tk_arm_insn br;
        memset(&ev, 0, sizeof(ev));
        /* nothing is known of where a Q element's instructions ended */
        const bool after_q = d->q_pc_valid && d->q_pc == d->pc;
        /* Guard against walking forever when the return address is not ahead of pc. */
        st = p->addr > d->pc && p->addr - d->pc < (1u << 20) ? walk(d, p->addr, true, &ev, &br)
                                                             : TK_ERR_MISMATCH;
        if (st == TK_ERR_NO_CODE)
            return no_code(d);
        /* The instructions up to the return address ran without a branch: if the walk from
         * pc cannot get there, the memory image or the trace is wrong; said, not passed over
         * (the flow goes on from the exception's address either way). */
        if (st != TK_OK && !after_q) {
            st = emit_error(d, TK_ERR_MISMATCH, p->addr,
                            "exception return address not reached from the current address");
            if (st != TK_OK)
                return st;
        } else if (st == TK_OK && ev.ninsn) {
            ev.kind = TK_EV_RANGE;
            ev.isa = (uint8_t)d->isa;
            ev.end = TK_END_TRAP;
            ev.next = p->addr;
            if ((st = emit(d, &ev)))
                return st;
        }
    }
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_TRAP;
    ev.cause = d->exc_type;
    ev.first = p->addr;
    /* The handler's address normally follows in its own address packet. Until then the flow
     * continues from the preferred return address (as OpenCSD does: ete_spec_2 ends with
     * atoms executed there after a Call exception and no further address). */
    d->pc = p->addr;
    d->pc_valid = true;
    set_pc(d, p);
    return emit(d, &ev);
}

static tk_status context(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    if (!p->ctx_updated)
        return TK_OK;
    d->c = p->ctx;
    d->ctx_valid = true;
    /* A context packet may follow the address it applies to (e.g. on an exception return
     * to AArch32): the instruction set follows the new state. */
    d->isa = d->c.sf ? TK_ARM_A64 : (d->last_is ? TK_ARM_T32 : TK_ARM_A32);
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_CONTEXT;
    ev.context = p->ctx.has_cid ? p->ctx.cid : 0;
    ev.priv = p->ctx.el;
    return emit(d, &ev);
}

static bool is_src_addr(uint8_t t)
{
    return t >= TK_ETM4_SRC_ADDR_MATCH && t <= TK_ETM4_SRC_ADDR_L_64IS1;
}

/* ETE source address element: the instructions from pc up to and including the one at the
 * source address were executed and the last one was a taken branch; its target comes from the
 * next address (ETE §"Source address" trace mode). */
static tk_status source_address(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    if (!d->pc_valid)
        return TK_OK;
    tk_event ev;
    tk_arm_insn br;
    memset(&ev, 0, sizeof(ev));
    tk_status st = p->addr >= d->pc && p->addr - d->pc < (1u << 24)
                       ? walk(d, p->addr, true, &ev, &br)
                       : TK_ERR_MISMATCH;
    if (st == TK_ERR_NO_CODE)
        return no_code(d);
    if (st) {
        d->pc_valid = false;
        return emit_error(d, TK_ERR_MISMATCH, p->addr, "source address behind the current address");
    }
    ev.kind = TK_EV_RANGE;
    ev.isa = (uint8_t)d->isa;
    ev.first = ev.ninsn ? ev.first : p->addr;
    ev.last = p->addr;
    ev.ninsn++;
    ev.taken = 1;
    /* The branch at the source address: a direct one continues at its target. */
    size_t avail;
    const uint8_t *b = d->mem ? tk_cs_mem_ptr(d->mem, p->addr, &avail) : NULL;
    if (b && !tk_arm_classify(d->isa, p->addr, b, avail, &br) && br.kind == TK_ARM_BRANCH &&
        !br.indirect) {
        ev.end = br.link ? TK_END_CALL : TK_END_JUMP;
        if (br.link && d->rs_enabled)
            rs_push(d, p->addr + br.size);
        d->pc = ev.next = br.target;
        d->isa = (tk_arm_isa)br.target_isa;
    } else {
        ev.end = TK_END_JUMP;
        ev.indirect = 1;
        d->pc_valid = false;
        d->pop_pending = d->rs_enabled;
    }
    return emit(d, &ev);
}

/* Q element (§6.4.14): q_count instructions executed from pc, their branches not traced;
 * execution then continues at the packet's address if it has one. The instructions are walked
 * in line; a branch among them ends what can be known of the path. */
static tk_status q_element(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    tk_status st = TK_OK;
    if (d->pc_valid && p->q_has_count && p->q_count) {
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = TK_EV_RANGE;
        ev.isa = (uint8_t)d->isa;
        ev.first = d->pc;
        uint64_t pc = d->pc;
        tk_arm_insn br;
        for (uint32_t k = 0; k < p->q_count; k++) {
            size_t avail;
            const uint8_t *b = d->mem ? tk_cs_mem_ptr(d->mem, pc, &avail) : NULL;
            if (!b || tk_arm_classify(d->isa, pc, b, avail, &br) < 0) {
                d->pc = pc;
                if (ev.ninsn && (st = emit(d, &ev)))
                    return st;
                return no_code(d);
            }
            ev.last = pc;
            ev.ninsn++;
            pc += br.size;
            if (br.kind == TK_ARM_BRANCH && k + 1 < p->q_count)
                break;
        }
        /* The instructions form one known range only if the in-line walk reaches the count
         * without crossing a branch and ends where the Q element says execution went on:
         * otherwise an untraced branch was taken somewhere and the path is unknown (only the
         * count is). */
        uint8_t qt = p->q_type;
        bool has_addr = qt <= 2 || qt == 5 || qt == 6 || qt == 0xa || qt == 0xb;
        bool in_line =
            ev.ninsn == p->q_count && (br.kind == TK_ARM_BRANCH || !has_addr || p->addr == pc);
        if (in_line) {
            ev.end = br.kind == TK_ARM_BRANCH ? TK_END_JUMP : TK_END_NONE;
            ev.taken = br.kind == TK_ARM_BRANCH;
            if ((st = emit(d, &ev)))
                return st;
        }
    }
    uint8_t t = p->q_type;
    if (t <= 2 || t == 5 || t == 6 || t == 0xa || t == 0xb) {
        set_pc(d, p);
        d->q_pc = d->pc;
        d->q_pc_valid = true;
    } else
        d->pc_valid = false;
    return TK_OK;
}

/* Apply one packet in trace order, as a committed element. */
static tk_status apply(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    tk_status st;
    d->byte_offset = p->index;
    switch (p->type) {
    case TK_ETM4_ATOM_F1:
    case TK_ETM4_ATOM_F2:
    case TK_ETM4_ATOM_F3:
    case TK_ETM4_ATOM_F4:
    case TK_ETM4_ATOM_F5:
    case TK_ETM4_ATOM_F6:
        return atoms(d, p->atoms, p->atom_num);
    case TK_ETM4_ADDR_CTXT_L_32IS0:
    case TK_ETM4_ADDR_CTXT_L_32IS1:
    case TK_ETM4_ADDR_CTXT_L_64IS0:
    case TK_ETM4_ADDR_CTXT_L_64IS1:
        if ((st = context(d, p)))
            return st;
        /* fall through */
    case TK_ETM4_ADDR_MATCH:
    case TK_ETM4_ADDR_S_IS0:
    case TK_ETM4_ADDR_S_IS1:
    case TK_ETM4_ADDR_L_32IS0:
    case TK_ETM4_ADDR_L_32IS1:
    case TK_ETM4_ADDR_L_64IS0:
    case TK_ETM4_ADDR_L_64IS1:
        if (TK_UNLIKELY(d->sync_check) && (st = sync_address(d, p->addr)))
            return st;
        d->pop_pending = false; /* the address replaces the return stack entry */
        if (d->exc_pending)
            return exception(d, p);
        set_pc(d, p);
        return TK_OK;
    case TK_ETM4_CTXT:
        return context(d, p);
    case TK_ETM4_SRC_ADDR_MATCH:
    case TK_ETM4_SRC_ADDR_S_IS0:
    case TK_ETM4_SRC_ADDR_S_IS1:
    case TK_ETM4_SRC_ADDR_L_32IS0:
    case TK_ETM4_SRC_ADDR_L_32IS1:
    case TK_ETM4_SRC_ADDR_L_64IS0:
    case TK_ETM4_SRC_ADDR_L_64IS1:
        d->sync_check = false;
        return source_address(d, p);
    case TK_ETM4_EXCEPT:
        /* A taken return just before the exception got its target from the return stack. */
        if (d->pop_pending && (st = rs_pop(d)))
            return st;
        d->exc_pending = true;
        d->exc_type = p->exc_type;
        d->sync_check = false;
        return TK_OK;
    case TK_ETM4_TRACE_INFO:
        /* A periodic A-Sync + Trace Info may sit between an address and the atoms that use
         * it (the case the bugfix-exact-match snapshot records): the address stays valid. Only
         * the packet-level compression state is reset (in the parser). */
        d->exc_pending = false;
        d->sync_check = d->pc_valid && !d->pop_pending;
        rs_flush(d);
        return TK_OK;
    case TK_ETM4_TRACE_ON:
        rs_flush(d);
        d->pc_valid = false;
        return emit_simple(d, TK_EV_TRACE_ON, 0);
    case TK_ETM4_DISCARD:
        d->pc_valid = false;
        return emit_simple(d, TK_EV_TRACE_OFF, d->pc);
    case TK_ETM4_OVERFLOW:
        d->pc_valid = false;
        return emit_simple(d, TK_EV_LOST, 0);
    case TK_ETM4_TIMESTAMP: {
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = TK_EV_TIMESTAMP;
        ev.time = p->timestamp;
        return emit(d, &ev);
    }
    case TK_ETM4_Q:
        d->sync_check = false;
        return q_element(d, p);
    case TK_ETM4_MISPREDICT:
    case TK_ETM4_CANCEL_F1:
    case TK_ETM4_CANCEL_F1_MISPRED:
    case TK_ETM4_CANCEL_F2:
    case TK_ETM4_CANCEL_F3:
        /* Without a speculation model (TRCIDR8.MAXSPEC = 0 on every core traced so far) a
         * cancel means the stream is inconsistent with the decoded flow. */
        d->pc_valid = false;
        return emit_error(d, TK_ERR_UNSUPPORTED, d->pc,
                          "speculative trace (cancel/mispredict) not modelled");
    case TK_ETM4_NOT_SYNC:
        d->pc_valid = false;
        return TK_OK;
    case TK_ETM4_BAD_SEQUENCE:
    case TK_ETM4_RESERVED:
    case TK_ETM4_RESERVED_CFG:
    case TK_ETM4_INCOMPLETE_EOT:
        d->pc_valid = false;
        d->exc_pending = false;
        return emit_error(d, TK_ERR_BAD_PACKET, 0, tk_etm4_pkt_name((tk_etm4_pkt_type)p->type));
    default:
        return TK_OK; /* timing, events, commits, conditional and DS packets: no flow */
    }
}

/* ---- speculation (IHI0064 §4.5 "Speculative execution") ----------------------------------
 * With TRCIDR8.MAXSPEC > 0 the trace unit may emit P0 elements (atoms, exceptions) before the
 * instructions are known to be architecturally executed, then resolve them with Commit,
 * Cancel and Mispredict packets. Elements are queued in trace order until committed; at most
 * MAXSPEC P0 elements may stay uncommitted, so older ones are committed implicitly. */

enum { EL_PKT, EL_ATOM, EL_EXCEPT };

struct spec_elem {
    uint8_t kind;        /* EL_* */
    uint8_t taken;       /* EL_ATOM */
    uint8_t p0;          /* counts as a P0 element (EL_EXCEPT once its address arrived) */
    tk_etm4_packet pkt;  /* EL_PKT: the packet; EL_ATOM/EL_EXCEPT: the packet carrying it */
    tk_etm4_packet addr; /* EL_EXCEPT: its return address packet */
};

#define SPEC_MAX 4096

struct spec_queue {
    struct spec_elem e[SPEC_MAX];
    size_t head, n;  /* ring: oldest at head */
    uint32_t depth;  /* uncommitted P0 elements queued */
    uint32_t unseen; /* speculative P0 elements from before the last Trace Info */
    bool exc_open;   /* newest element is an exception waiting for its address */
};

static struct spec_queue *spec_new(void)
{
    return calloc(1, sizeof(struct spec_queue));
}

static struct spec_elem *spec_at(struct spec_queue *q, size_t i)
{
    return &q->e[(q->head + i) % SPEC_MAX];
}

static tk_status spec_push(tk_etm4_decoder *d, struct spec_queue *q, uint8_t kind, bool taken,
                           const tk_etm4_packet *p)
{
    if (q->n == SPEC_MAX)
        return emit_error(d, TK_ERR_OVERFLOW, 0, "too many uncommitted trace elements");
    struct spec_elem *e = spec_at(q, q->n++);
    e->kind = kind;
    e->taken = taken;
    e->p0 = kind == EL_ATOM;
    e->pkt = *p;
    if (e->p0)
        q->depth++;
    return TK_OK;
}

/* Count n elements off the speculative ones from before the last Trace Info; returns what is
 * left of n. Both come from the trace (Trace Info's spec depth, a commit or cancel count: up
 * to 2^32 each), so one by one a 390-byte fuzzed input took 8 s under ASan. */
static uint32_t take_unseen(struct spec_queue *q, uint32_t n)
{
    const uint32_t k = n < q->unseen ? n : q->unseen;
    q->unseen -= k;
    return n - k;
}

/* Commit the n oldest P0 elements, applying everything queued before them. */
static tk_status spec_commit(tk_etm4_decoder *d, struct spec_queue *q, uint32_t n)
{
    tk_status st;
    n = take_unseen(q, n); /* elements the decoder never saw (before its Trace Info) */
    while (n && q->n) {
        struct spec_elem *e = spec_at(q, 0);
        if (e->kind == EL_EXCEPT && !e->p0)
            break; /* its address has not arrived yet */
        q->head = (q->head + 1) % SPEC_MAX;
        q->n--;
        if (e->kind == EL_ATOM) {
            d->byte_offset = e->pkt.index;
            st = atom(d, e->taken);
        } else if (e->kind == EL_EXCEPT) {
            if (!(st = apply(d, &e->pkt)))
                st = apply(d, &e->addr);
        } else {
            st = apply(d, &e->pkt);
        }
        if (e->p0) {
            q->depth--;
            n--;
        }
        if (st)
            return st;
    }
    if (n)
        return emit_error(d, TK_ERR_MISMATCH, 0, "commit of more elements than traced");
    return TK_OK;
}

/* Cancel the n newest P0 elements; timing elements after them are kept. Elements queued
 * before the oldest cancelled one stay: once no P0 element (or exception waiting for its
 * address) is left, the rest of n falls on the elements from before the last Trace Info, and
 * that Trace Info, still queued, must not be dropped with them. */
static tk_status spec_cancel(tk_etm4_decoder *d, struct spec_queue *q, uint32_t n)
{
    while (n && q->n && (q->depth || q->exc_open)) {
        struct spec_elem *e = spec_at(q, q->n - 1);
        if (e->p0 || e->kind == EL_EXCEPT) {
            if (e->p0) {
                q->depth--;
                n--;
            }
            q->exc_open = false;
            q->n--;
        } else if (e->pkt.type == TK_ETM4_TIMESTAMP || e->pkt.type == TK_ETM4_EVENT) {
            /* keep: move it below the next element to be cancelled */
            size_t i = q->n - 1;
            while (i > 0 && !spec_at(q, i - 1)->p0 && spec_at(q, i - 1)->kind != EL_EXCEPT)
                i--;
            if (i == 0)
                break;
            struct spec_elem keep = *e, gone = *spec_at(q, i - 1);
            for (size_t k = q->n - 1; k > i - 1; k--)
                *spec_at(q, k) = *spec_at(q, k - 1);
            *spec_at(q, i - 1) = keep;
            (void)gone;
        } else {
            q->n--; /* addresses and contexts of cancelled elements */
        }
    }
    n = take_unseen(q, n);
    if (n)
        return emit_error(d, TK_ERR_MISMATCH, 0, "cancel of more elements than traced");
    return TK_OK;
}

/* The newest atom went the other way; addresses queued after it belonged to the wrong path. */
static tk_status spec_mispredict(tk_etm4_decoder *d, struct spec_queue *q)
{
    for (size_t i = q->n; i > 0; i--) {
        struct spec_elem *e = spec_at(q, i - 1);
        if (e->kind == EL_ATOM) {
            e->taken = !e->taken;
            /* drop address elements between the atom and the newest end */
            size_t w = i;
            for (size_t r = i; r < q->n; r++) {
                struct spec_elem *x = spec_at(q, r);
                bool is_addr = x->kind == EL_PKT && x->pkt.addr_bits &&
                               x->pkt.type != TK_ETM4_CTXT && x->pkt.type != TK_ETM4_TIMESTAMP;
                if (!is_addr)
                    *spec_at(q, w++) = *x;
            }
            q->n = w;
            return TK_OK;
        }
    }
    if (q->unseen)
        return TK_OK; /* the atom was before the decoder's start */
    return emit_error(d, TK_ERR_MISMATCH, 0, "mispredict without an atom");
}

static bool is_address(uint8_t t)
{
    return (t >= TK_ETM4_ADDR_CTXT_L_32IS0 && t <= TK_ETM4_ADDR_L_64IS1);
}

/* Out of line: keeps the per-packet entry of the common (non-speculative) case short. */
static TK_NOINLINE tk_status spec_packet(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    struct spec_queue *q = d->spec;
    tk_status st = TK_OK;
    switch (p->type) {
    case TK_ETM4_ATOM_F1:
    case TK_ETM4_ATOM_F2:
    case TK_ETM4_ATOM_F3:
    case TK_ETM4_ATOM_F4:
    case TK_ETM4_ATOM_F5:
    case TK_ETM4_ATOM_F6:
        for (unsigned i = 0; i < p->atom_num && !st; i++)
            st = spec_push(d, q, EL_ATOM, (p->atoms >> i) & 1, p);
        break;
    case TK_ETM4_EXCEPT:
        if (!(st = spec_push(d, q, EL_EXCEPT, false, p)))
            q->exc_open = true;
        break;
    case TK_ETM4_COMMIT:
        return spec_commit(d, q, p->commit);
    case TK_ETM4_CANCEL_F1:
        return spec_cancel(d, q, p->cancel);
    case TK_ETM4_CANCEL_F1_MISPRED:
        if (!(st = spec_cancel(d, q, p->cancel)))
            st = spec_mispredict(d, q);
        return st;
    case TK_ETM4_MISPREDICT:
    case TK_ETM4_CANCEL_F2:
    case TK_ETM4_CANCEL_F3:
        /* cancel, mispredict the newest remaining atom, then the packet's own atoms */
        if (p->type != TK_ETM4_MISPREDICT)
            st = spec_cancel(d, q, p->cancel);
        if (!st && p->type != TK_ETM4_CANCEL_F3)
            st = spec_mispredict(d, q);
        for (unsigned i = 0; i < p->atom_num && !st; i++)
            st = spec_push(d, q, EL_ATOM, (p->atoms >> i) & 1, p);
        break;
    case TK_ETM4_CCNT_F1:
    case TK_ETM4_CCNT_F2:
    case TK_ETM4_CCNT_F3:
        if (p->has_commit)
            return spec_commit(d, q, p->commit);
        return TK_OK;
    case TK_ETM4_TRACE_INFO:
        /* Its spec depth counts the uncommitted P0 elements: all of them unseen when the
         * decoder has none queued (a start, or everything seen was committed or cancelled). */
        if (!(st = spec_push(d, q, EL_PKT, false, p)) && q->depth == 0)
            q->unseen = p->spec_depth;
        break;
    case TK_ETM4_OVERFLOW:
    case TK_ETM4_DISCARD:
    case TK_ETM4_BAD_SEQUENCE:
    case TK_ETM4_RESERVED:
    case TK_ETM4_RESERVED_CFG:
    case TK_ETM4_INCOMPLETE_EOT:
    case TK_ETM4_NOT_SYNC:
        /* everything speculative is void */
        q->n = q->depth = q->unseen = 0;
        q->exc_open = false;
        return apply(d, p);
    default:
        if (is_address(p->type) && q->exc_open) {
            struct spec_elem *e = spec_at(q, q->n - 1);
            if (p->type >= TK_ETM4_ADDR_CTXT_L_32IS0 && p->type <= TK_ETM4_ADDR_CTXT_L_64IS1 &&
                (st = context(d, p)))
                return st;
            e->addr = *p;
            e->p0 = 1;
            q->depth++;
            q->exc_open = false;
            break;
        }
        st = spec_push(d, q, EL_PKT, false, p);
        if (!st && (is_src_addr(p->type) || p->type == TK_ETM4_Q)) { /* a P0 element */
            spec_at(q, q->n - 1)->p0 = 1;
            q->depth++;
        }
        break;
    }
    if (!st && q->depth > d->cfg.max_spec)
        st = spec_commit(d, q, q->depth - d->cfg.max_spec);
    return st;
}

tk_status tk_etm4_decoder_packet(tk_etm4_decoder *d, const tk_etm4_packet *p)
{
    d->packet_index++;
    if (!d->spec) {
        /* Atoms are most packets: straight to the atom loop. */
        if (p->type >= TK_ETM4_ATOM_F1 && p->type <= TK_ETM4_ATOM_F6) {
            d->byte_offset = p->index;
            return atoms(d, p->atoms, p->atom_num);
        }
        return apply(d, p);
    }
    return spec_packet(d, p);
}

/* The fused loop over compact packets for the common case: atoms that are not taken, or taken
 * branches without a return stack to model, address packets that just set pc. Atoms follow
 * the blocks' links; the state stays in registers (the event callback cannot see the
 * decoder). A taken indirect branch leaves pc unknown until the next address packet, as in
 * atoms_slow (atoms until then are dropped). An atom that needs more (return stack, missing
 * code) sends the rest of its packet through atoms_slow and ends the run. *pk: in, the first
 * packet; out, the first packet not applied. */
static tk_status fast_run(tk_etm4_decoder *d, const tk_etm4_pkt_lite *v, size_t n, size_t *pk)
{
    block_cache *const c = d->blocks;
    tk_event *const ev = &d->range;
    const tk_event_fn fn = d->fn;
    void *const ctx = d->ctx;
    uint64_t pc = d->pc, pidx = d->packet_index;
    uint8_t isa = (uint8_t)d->isa, last_is = d->last_is;
    bool valid = d->pc_valid;
    struct block *b = NULL; /* the block at pc, once looked up */
    /* the instruction set an address packet selects (as set_pc; the context is constant
     * here: context packets take the complete path) */
    const int ctx_mode = !d->ctx_valid ? 0 : (d->c.sf ? 1 : 2);
    /* With the return stack enabled a taken branch with link or an indirect one needs the
     * general loop; without it only a taken indirect branch is special (BF_TAKEN_SLOW). */
    const bool rs = d->rs_enabled;
    tk_status st = TK_OK;
    /* A pointer walk rather than an index (the index loop kept both the index and the
     * pointer live, and the atom loop is short of registers). */
    const tk_etm4_pkt_lite *l = v + *pk, *const end = v + n;
    size_t bits = 0; /* register width: the atom's bit is an index as it is */
    unsigned num = 0;
    for (; l < end; l++) {
        pidx++;
        if (!l->atom_num) { /* address */
            pc = l->addr;
            valid = true;
            b = NULL;
            last_is = l->addr_is;
            if (ctx_mode == 1)
                isa = TK_ARM_A64;
            else if (ctx_mode == 2)
                isa = l->addr_is ? TK_ARM_T32 : TK_ARM_A32;
            else
                isa = l->addr_64 ? TK_ARM_A64 : (l->addr_is ? TK_ARM_T32 : TK_ARM_A32);
            continue;
        }
        bits = l->atoms;
        num = l->atom_num;
        ev->byte_offset = l->index;
        ev->packet_index = pidx;
        /* pc is not valid only when b is NULL, so the common case tests b alone */
        if (TK_UNLIKELY(!b)) {
            if (!valid)
                continue; /* waiting for an address after a discontinuity: the atoms are lost */
            if (!(b = block_find(c, pc, isa))) {
                bool nomem = false;
                d->pc = pc;
                d->isa = (tk_arm_isa)isa;
                if (!(b = block_fill(d, &nomem)))
                    goto slow; /* missing code (or memory): reported there */
            }
        }
        for (;;) {
            const size_t e = bits & 1;
            /* first and last in one 16-byte copy */
            memcpy(&ev->first, &b->start, 2 * sizeof(uint64_t));
            ev->ninsn = b->n;
            put_head(ev, b->head[e]);
            /* A taken branch that needs more than its link is never linked (link_next is
             * only called below, after the test), so the common case tests the link alone. */
            struct block *nb = b->link[e];
            if (TK_UNLIKELY(!nb)) {
                if (b->flags & e) {
                    /* taken indirect: the target comes from the next address packet; with
                     * the return stack, the general loop */
                    pc = b->start;
                    isa = b->isa;
                    if (rs)
                        goto slow;
                    ev->next = 0;
                    b = NULL;
                    valid = false;
                    if (TK_UNLIKELY(st = fn(ctx, ev)))
                        goto out;
                    break; /* the packet's remaining atoms are lost, as in atoms_slow */
                }
                if (!(nb = link_next(d, b, (unsigned)e))) {
                    /* missing code at the next pc: the next atom reports it */
                    ev->next = pc = block_next(b, (unsigned)e);
                    isa = b->next_isa[e];
                    b = NULL;
                    if (TK_UNLIKELY(st = fn(ctx, ev)))
                        goto out;
                    bits >>= 1;
                    if (--num)
                        goto slow;
                    break;
                }
            }
            ev->next = nb->start;
            b = nb;
            if (TK_UNLIKELY(st = fn(ctx, ev)))
                goto out;
            bits >>= 1;
            if (!--num)
                break;
        }
        continue;
    slow:
        /* The rest of this packet's atoms through the general loop. */
        d->pc = pc;
        d->isa = (tk_arm_isa)isa;
        d->pc_valid = valid;
        d->last_is = last_is;
        d->packet_index = pidx;
        d->byte_offset = l->index;
        *pk = (size_t)(l - v) + 1;
        return atoms_slow(d, (uint32_t)bits, num);
    }
out:;
    const size_t k = (size_t)(l - v);
    if (b) {
        pc = b->start;
        isa = b->isa;
    }
    d->pc = pc;
    d->isa = (tk_arm_isa)isa;
    d->pc_valid = valid;
    d->last_is = last_is;
    d->packet_index = pidx;
    if (k > *pk) /* as apply(): the offset of the last packet applied */
        d->byte_offset = v[k < n ? k : n - 1].index;
    *pk = k < n ? k + 1 : n; /* on a callback error, the packet is consumed */
    return st;
}

tk_status tk_etm4_decoder_packets(tk_etm4_decoder *d, const tk_etm4_pkt_lite *v, size_t n)
{
    tk_status st;
    if (d->spec) {
        /* Speculation queues whole packets: the complete path. */
        tk_etm4_packet pkt;
        for (size_t k = 0; k < n; k++) {
            tk_etm4_pkt_from_lite(&v[k], d->cfg.trace_id, &pkt);
            if ((st = tk_etm4_decoder_packet(d, &pkt)))
                return st;
        }
        return TK_OK;
    }
    for (size_t k = 0; k < n;) {
        if (!d->pop_pending && d->blocks && !d->exc_pending && !d->sync_check) {
            if ((st = fast_run(d, v, n, &k))) /* applies at least packet k */
                return st;
            continue;
        }
        const tk_etm4_pkt_lite *l = &v[k++];
        d->packet_index++;
        d->byte_offset = l->index;
        if (l->atom_num) { /* atoms: the only compact packets with atoms */
            if ((st = atoms_slow(d, l->atoms, l->atom_num)))
                return st;
            continue;
        }
        /* An address packet: as apply() */
        if (TK_UNLIKELY(d->sync_check) && (st = sync_address(d, l->addr)))
            return st;
        d->pop_pending = false;
        if (TK_UNLIKELY(d->exc_pending)) {
            tk_etm4_packet pkt;
            tk_etm4_pkt_from_lite(l, d->cfg.trace_id, &pkt);
            if ((st = exception(d, &pkt)))
                return st;
            continue;
        }
        d->pc = l->addr;
        d->pc_valid = true;
        d->last_is = l->addr_is;
        if (d->ctx_valid && d->c.sf)
            d->isa = TK_ARM_A64;
        else if (d->ctx_valid)
            d->isa = l->addr_is ? TK_ARM_T32 : TK_ARM_A32;
        else
            d->isa = l->addr_64 ? TK_ARM_A64 : (l->addr_is ? TK_ARM_T32 : TK_ARM_A32);
    }
    return TK_OK;
}

tk_status tk_etm4_decoder_end(tk_etm4_decoder *d)
{
    /* Uncommitted elements at the end of trace were never confirmed as executed. */
    if (d->spec)
        d->spec->n = d->spec->depth = 0;
    return TK_OK;
}

/* ---- state for parallel decoding (etm4_state.h) ----------------------------------------- */

bool tk_etm4_decoder_settled(const tk_etm4_decoder *d)
{
    const struct spec_queue *q = d->spec;
    return d->pc_valid && d->ctx_valid && !d->exc_pending && !d->sync_check && !d->pop_pending &&
           (!q || (!q->n && !q->unseen && !q->exc_open));
}

void tk_etm4_decoder_get_state(const tk_etm4_decoder *d, tk_etm4_dec_state *s)
{
    memset(s, 0, sizeof(*s));
    s->pc = d->pc;
    s->q_pc = d->q_pc;
    s->pc_valid = d->pc_valid;
    s->ctx_valid = d->ctx_valid;
    s->q_pc_valid = d->q_pc_valid;
    s->exc_pending = d->exc_pending;
    s->sync_check = d->sync_check;
    s->pop_pending = d->pop_pending;
    s->isa = (uint8_t)d->isa;
    s->last_is = d->last_is;
    s->exc_type = d->exc_type;
    s->c = d->c;
    s->rs_depth = d->rs_depth;
    for (unsigned i = 0; i < d->rs_depth && i < 16; i++) {
        s->rs_addr[i] = d->rs[i].addr;
        s->rs_isa[i] = d->rs[i].isa;
    }
}

bool tk_etm4_dec_state_equal(const tk_etm4_dec_state *a, const tk_etm4_dec_state *b)
{
    const tk_etm4_context *x = &a->c, *y = &b->c;
    if (a->pc_valid != b->pc_valid || (a->pc_valid && a->pc != b->pc) ||
        a->q_pc_valid != b->q_pc_valid || (a->q_pc_valid && a->q_pc != b->q_pc) ||
        a->ctx_valid != b->ctx_valid || a->exc_pending != b->exc_pending ||
        a->sync_check != b->sync_check || a->pop_pending != b->pop_pending || a->isa != b->isa ||
        a->last_is != b->last_is || (a->exc_pending && a->exc_type != b->exc_type) ||
        a->rs_depth != b->rs_depth)
        return false;
    if (a->ctx_valid &&
        (x->el != y->el || x->ns != y->ns || x->sf != y->sf || x->has_vmid != y->has_vmid ||
         x->has_cid != y->has_cid || x->vmid != y->vmid || x->cid != y->cid))
        return false;
    for (unsigned i = 0; i < a->rs_depth && i < 16; i++)
        if (a->rs_addr[i] != b->rs_addr[i] || a->rs_isa[i] != b->rs_isa[i])
            return false;
    return true;
}

void tk_etm4_decoder_reset(tk_etm4_decoder *d, tk_event_fn fn, void *ctx)
{
    const tk_etm4_config cfg = d->cfg;
    const tk_cs_mem *mem = d->mem;
    block_cache *blocks = d->blocks;
    struct spec_queue *spec = d->spec;
    memset(d, 0, sizeof(*d));
    d->cfg = cfg;
    d->mem = mem;
    d->blocks = blocks;
    d->spec = spec;
    d->fn = fn;
    d->ctx = ctx;
    d->range.kind = TK_EV_RANGE;
    d->range.trace_id = cfg.trace_id;
    d->rs_enabled = (cfg.configr >> 12) & 1;
    if (spec) {
        spec->head = spec->n = 0;
        spec->depth = spec->unseen = 0;
        spec->exc_open = false;
    }
}

void tk_etm4_decoder_set_events(tk_etm4_decoder *d, tk_event_fn fn, void *ctx)
{
    d->fn = fn;
    d->ctx = ctx;
}

uint64_t tk_etm4_decoder_packet_count(const tk_etm4_decoder *d)
{
    return d->packet_index;
}
