/* SPDX-License-Identifier: BSD-2-Clause */
/* Memory of the hart model: one RAM region with per-page flags and a cache of pre-decoded
 * instructions per code page, the slow data path (devices, PMP, faults) and PMP checks
 * (privileged spec, "Physical Memory Protection"). */
#include <stdlib.h>
#include <string.h>

#include "hart_internal.h"

tk_status tk__ram_init(ram *r, uint64_t base, uint64_t size)
{
    memset(r, 0, sizeof(*r));
    if (size == 0 || (base & (PAGE_SIZE - 1)) || (size & (PAGE_SIZE - 1)))
        return TK_ERR_INVALID;
    r->base = base;
    r->size = size;
    r->npages = size >> PAGE_SHIFT;
    /* calloc of a large block maps zero pages lazily: untouched RAM costs nothing. Eight spare
     * bytes let the fast path read a whole doubleword at the very end. */
    r->mem = calloc(1, size + 8);
    r->pflags = calloc(r->npages, 1);
    r->pages = calloc(r->npages, sizeof(hinsn *));
    if (!r->mem || !r->pflags || !r->pages) {
        tk__ram_free(r);
        return TK_ERR_NOMEM;
    }
    return TK_OK;
}

void tk__ram_free(ram *r)
{
    if (r->pages)
        for (uint64_t i = 0; i < r->npages; i++)
            free(r->pages[i]);
    free(r->pages);
    free(r->pflags);
    free(r->mem);
    memset(r, 0, sizeof(*r));
}

hinsn *tk__ram_code_page(ram *r, uint64_t pi)
{
    if (!r->pages[pi]) {
        hinsn *p = calloc(SLOTS_ALLOC, sizeof(hinsn));
        if (!p)
            return NULL;
        for (unsigned i = SLOTS_PER_PAGE; i < SLOTS_ALLOC; i++) {
            p[i].op = OP_PAGE_END;
            p[i].off = (uint16_t)(i * 2);
        }
        r->pages[pi] = p;
    }
    r->pflags[pi] |= PF_CODE;
    return r->pages[pi];
}

/* A store into a code page drops the decoded slots it may overlap, including a 32-bit
 * instruction that starts two bytes before it (also across a page boundary). */
void tk__ram_invalidate(ram *r, uint64_t addr, unsigned n)
{
    uint64_t off = addr - r->base;
    uint64_t first = off >= 2 ? off - 2 : 0;
    for (uint64_t o = first & ~1ull; o < off + n && o < r->size; o += 2) {
        hinsn *p = r->pages[o >> PAGE_SHIFT];
        if (p)
            p[(o & (PAGE_SIZE - 1)) >> 1].op = OP_UNDECODED;
    }
}

/* fence.i: every slot of every page becomes undecoded (the sentinels past SLOTS_PER_PAGE
 * stay). The pages stay allocated: the interpreter may be executing from one. */
void tk__ram_flush_code(ram *r)
{
    for (uint64_t i = 0; i < r->npages; i++)
        if (r->pages[i])
            memset(r->pages[i], 0, SLOTS_PER_PAGE * sizeof(hinsn));
}

/* ---- PMP ---- */

static unsigned pmp_cfg(const hart *h, unsigned i)
{
    return (unsigned)(h->pmpcfg[i / 8] >> (8 * (i % 8))) & 0xffu;
}

/* access: 1 read, 2 write, 4 execute (the R/W/X bits). With no entry matching, M mode is
 * allowed and S/U are not (privileged spec 3.7.1). */
bool tk__pmp_ok(const hart *h, uint64_t addr, unsigned n, unsigned access, unsigned priv)
{
    uint64_t prev_top = 0;
    for (unsigned i = 0; i < 16; i++) {
        unsigned cfg = pmp_cfg(h, i);
        unsigned a = (cfg >> 3) & 3u;
        uint64_t lo, hi; /* [lo, hi) in bytes */
        uint64_t pa = h->pmpaddr[i];
        if (a == 0) {
            prev_top = pa << 2;
            continue;
        }
        if (a == 1) { /* TOR */
            lo = prev_top;
            hi = pa << 2;
        } else if (a == 2) { /* NA4 */
            lo = pa << 2;
            hi = lo + 4;
        } else { /* NAPOT */
            uint64_t ones = (uint64_t)__builtin_ctzll(~pa);
            if (ones >= 62) {
                lo = 0;
                hi = UINT64_MAX;
            } else {
                uint64_t sz = 8ull << ones;
                lo = (pa << 2) & ~(sz - 1);
                hi = lo + sz;
            }
        }
        prev_top = pa << 2;
        if (addr + n <= lo || addr >= hi)
            continue;
        if (addr < lo || addr + n > hi)
            return false; /* partial match fails */
        if (priv == TK_PRIV_M && !(cfg & 0x80u))
            return true;
        return (cfg & access) == access;
    }
    return priv == TK_PRIV_M;
}

static unsigned data_priv(const hart *h);

static bool pmp_locked(const hart *h)
{
    for (unsigned i = 0; i < 16; i++)
        if (pmp_cfg(h, i) & 0x80u)
            return true;
    return false;
}

/* The fast paths skip PMP: allowed when the privilege is M and no entry is locked, or when
 * one check shows the whole RAM accessible. Called after every change that matters. */
void tk__hart_update_fast(hart *h)
{
    bool locked = pmp_locked(h);
    unsigned dp = data_priv(h);
    h->fast_data = (dp == TK_PRIV_M && !locked) || tk__pmp_ok(h, h->rbase, h->rsize, 3, dp);
    h->fast_fetch =
        (h->priv == TK_PRIV_M && !locked) || tk__pmp_ok(h, h->rbase, h->rsize, 4, h->priv);
    h->fast_base = h->rbase;
    h->fast_limit = h->fast_data ? h->rsize - 7 : 0; /* 0: every access takes the slow path */
}

/* ---- slow path ---- */

static unsigned data_priv(const hart *h)
{
    if (h->priv == TK_PRIV_M && (h->mstatus & (1ull << 17)))
        return (unsigned)((h->mstatus >> 11) & 3u);
    return h->priv;
}

int tk__mem_load(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t *v)
{
    ram *r = tk__sim_ram(s, addr, n);
    bool hit = false;
    int cause;
    if ((addr & (n - 1)) && s->cfg.misaligned_trap)
        return 4 + 1;
    if (!tk__pmp_ok(h, addr, n, 1, data_priv(h)))
        return 5 + 1;
    if (r) {
        uint64_t x = 0;
        memcpy(&x, r->mem + (addr - r->base), n);
        *v = x;
        return 0;
    }
    cause = tk__dev_load(s, h, addr, n, v, &hit);
    if (hit)
        return cause;
    return 5 + 1;
}

int tk__mem_store(tk_sim *s, hart *h, uint64_t addr, unsigned n, uint64_t v)
{
    ram *r = tk__sim_ram(s, addr, n);
    bool hit = false;
    int cause;
    if ((addr & (n - 1)) && s->cfg.misaligned_trap)
        return 6 + 1;
    if (!tk__pmp_ok(h, addr, n, 2, data_priv(h)))
        return 7 + 1;
    if (r) {
        uint64_t off = addr - r->base;
        memcpy(r->mem + off, &v, n);
        uint8_t pf = r->pflags[off >> PAGE_SHIFT];
        if (pf & PF_CODE)
            tk__ram_invalidate(r, addr, n);
        if ((pf & PF_WATCH) && s->tohost && addr < s->tohost + 8 && addr + n > s->tohost)
            tk__htif_poke(s);
        return 0;
    }
    cause = tk__dev_store(s, h, addr, n, v, &hit);
    if (hit)
        return cause;
    return 7 + 1;
}
