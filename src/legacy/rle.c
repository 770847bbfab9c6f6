/* SPDX-License-Identifier: BSD-2-Clause */
/* Am29460 run-length trace (seed 003): "Each RLE (TRACEADDR, TRACERUN) data pair specifies
 * that TRACERUN instructions, starting from the current R-PC, have been retired, and
 * subsequent retirement is to continue from an R-PC value of TRACEADDR." A pair is made at
 * every redirect of the retire PC (taken branch, jump, trap) and when a run fills TRACERUN;
 * a run of zero with a new address is a redirect without retirement (a trap before anything
 * retired). Pairs go through a bounded queue to the pins, one per TRACECLK; when the queue
 * is full the core holds retirement (seed 003, "throttling back"), which the encoder counts
 * on a simple clock model: the core retires up to retire_width instructions per clock, one
 * pair leaves every trace_div clocks, idle TRACECLKs send (TRACEADDR unchanged, 0). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "tracekit/legacy.h"
#include "tracekit/riscv.h"
#include "tracekit/te_ingress.h"

void tk_rle_params_init(tk_rle_params *p)
{
    memset(p, 0, sizeof(*p));
    p->size = sizeof(*p);
    p->xlen = 64;
    p->run_bits = 8;
    p->depth = 4;
    p->retire_width = 2;
    p->trace_div = 1;
    p->hart = -1;
}

tk_status tk_rle_params_validate(const tk_rle_params *p, tk_diag *diag)
{
    if (p->xlen != 32 && p->xlen != 64)
        return tk_diag_set(diag, TK_ERR_CONFIG, "RLE trace: xlen %u (32 or 64)", p->xlen);
    if (p->run_bits < 1 || p->run_bits > 32)
        return tk_diag_set(diag, TK_ERR_CONFIG, "RLE trace: TRACERUN of %u bits (1..32)",
                           p->run_bits);
    if (p->depth < 1 || p->retire_width < 1 || p->trace_div < 1)
        return tk_diag_set(diag, TK_ERR_CONFIG,
                           "RLE trace: queue depth, retire width and clock divider must be >= 1");
    return TK_OK;
}

unsigned tk_rle_pair_bits(const tk_rle_params *p)
{
    return p->xlen - 1 + p->run_bits;
}

struct tk_rle_encoder {
    tk_rle_params p;
    tk_rle_pair *pairs;
    size_t n, cap;
    int hart;
    bool have_pend, started, finished;
    tk_hart_retire pend;
    uint64_t run, maxrun, mask;
    /* queue model */
    uint32_t fill;
    unsigned slots; /* instructions retired in the current clock */
    uint64_t clock;
    tk_rle_stats st;
};

tk_status tk_rle_encoder_new(const tk_rle_params *p, tk_rle_encoder **out)
{
    if (!p || !out || tk_rle_params_validate(p, NULL) != TK_OK)
        return TK_ERR_INVALID;
    tk_rle_encoder *e = calloc(1, sizeof(*e));
    if (!e)
        return TK_ERR_NOMEM;
    e->p = *p;
    e->hart = p->hart;
    e->maxrun = (p->run_bits >= 32 ? 0xffffffffull : (1ull << p->run_bits) - 1);
    e->mask = p->xlen == 32 ? 0xffffffffull : ~0ull;
    *out = e;
    return TK_OK;
}

void tk_rle_encoder_free(tk_rle_encoder *e)
{
    if (!e)
        return;
    free(e->pairs);
    free(e);
}

/* One core clock passes; a pair leaves the queue at each TRACECLK. */
static void tick(tk_rle_encoder *e)
{
    e->clock++;
    e->slots = 0;
    if (e->clock % e->p.trace_div == 0) {
        if (e->fill)
            e->fill--;
        else
            e->st.idle_pairs++;
    }
}

static tk_status queue_pair(tk_rle_encoder *e, uint64_t addr, uint64_t run)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 1024;
        tk_rle_pair *a = realloc(e->pairs, cap * sizeof(*a));
        if (!a)
            return TK_ERR_NOMEM;
        e->pairs = a;
        e->cap = cap;
    }
    e->pairs[e->n].addr = addr & e->mask & ~1ull;
    e->pairs[e->n].run = (uint32_t)run;
    e->n++;
    e->st.pairs++;
    if (run == 0)
        e->st.zero_runs++;
    if (e->fill == e->p.depth) {
        /* the queue is full: retirement waits for an entry */
        e->st.throttle_events++;
        while (e->fill == e->p.depth) {
            e->st.throttled_clocks++;
            tick(e);
        }
        /* the held instruction retires in the clock the entry freed up */
        e->slots = 1;
    }
    e->fill++;
    if (e->fill > e->st.max_fill)
        e->st.max_fill = e->fill;
    return TK_OK;
}

static tk_status process(tk_rle_encoder *e, uint64_t next)
{
    const tk_hart_retire *r = &e->pend;
    const bool retired = (r->flags & TK_HART_F_RETIRED) != 0;
    next &= e->mask;
    if (retired) {
        if (e->slots == e->p.retire_width)
            tick(e);
        e->slots++;
        e->run++;
        e->st.retired++;
    }
    if (retired && (r->flags & TK_HART_F_INTERRUPT) && r->epc != ((r->pc + r->len) & e->mask)) {
        /* a transfer, then an interrupt before anything retired at its target: the pair of
         * the transfer, then a zero run to the handler */
        tk_status st = queue_pair(e, r->epc, e->run);
        e->run = 0;
        return st != TK_OK ? st : queue_pair(e, next, 0);
    }
    const bool redirect = !retired || (r->flags & (TK_HART_F_EXCEPTION | TK_HART_F_INTERRUPT)) ||
                          next != ((r->pc + r->len) & e->mask);
    if (redirect || e->run == e->maxrun) {
        tk_status st = queue_pair(e, next, e->run);
        e->run = 0;
        return st;
    }
    return TK_OK;
}

tk_status tk_rle_encoder_push(tk_rle_encoder *e, const tk_hart_retire *recs, size_t n)
{
    if (e->finished)
        return TK_ERR_STATE;
    for (size_t i = 0; i < n; i++) {
        const tk_hart_retire *r = &recs[i];
        tk_status st;
        if (e->hart < 0)
            e->hart = r->hart;
        if (r->hart != (unsigned)e->hart)
            continue;
        if (!e->started) {
            /* where retirement starts: a redirect without retirement */
            e->started = true;
            if ((st = queue_pair(e, r->pc, 0)) != TK_OK)
                return st;
        }
        if (e->have_pend && (st = process(e, r->pc)) != TK_OK)
            return st;
        e->pend = *r;
        e->have_pend = true;
    }
    return TK_OK;
}

tk_status tk_rle_encoder_retire(void *enc, const tk_hart_retire *recs, size_t n)
{
    return tk_rle_encoder_push(enc, recs, n);
}

tk_status tk_rle_encoder_finish(tk_rle_encoder *e, bool have_next, uint64_t next_pc)
{
    if (e->finished)
        return TK_ERR_STATE;
    e->finished = true;
    tk_status st = TK_OK;
    if (e->have_pend) {
        const tk_hart_retire *r = &e->pend;
        if (!have_next) {
            /* the last record's successor, as far as the instruction tells */
            next_pc = r->pc + r->len;
            if ((r->flags & TK_HART_F_RETIRED) && r->itype != TK_ITYPE_NONE) {
                tk_rv_insn in;
                tk_rv_decode(r->insn, e->p.xlen, &in);
                if ((in.cf == TK_RV_CF_BRANCH && r->itype == TK_ITYPE_TAKEN) ||
                    in.cf == TK_RV_CF_JAL)
                    next_pc = r->pc + (uint64_t)in.imm;
            }
        }
        if ((st = process(e, next_pc)) != TK_OK)
            return st;
        if (e->run && (st = queue_pair(e, next_pc, e->run)) != TK_OK)
            return st;
        e->run = 0;
    }
    while (e->fill)
        tick(e);
    e->st.clocks = e->clock + (e->slots ? 1 : 0);
    return TK_OK;
}

const tk_rle_pair *tk_rle_encoder_pairs(const tk_rle_encoder *e, size_t *n)
{
    *n = e->n;
    return e->pairs;
}

void tk_rle_encoder_get_stats(const tk_rle_encoder *e, tk_rle_stats *out)
{
    *out = e->st;
}

/* ---- file ---- */

static const char MAGIC[8] = {'T', 'K', 'R', 'L', 'E', '0', '0', '1'};
#define HEADER_BYTES 32u

static unsigned pair_bytes(const tk_rle_params *p)
{
    return (tk_rle_pair_bits(p) + 7) / 8;
}

static void pack(const tk_rle_params *p, const tk_rle_pair *pr, uint8_t *out)
{
    const unsigned xb = p->xlen - 1;
    const uint64_t a = (pr->addr >> 1) & ((1ull << xb) - 1);
    const uint64_t lo = a | (uint64_t)pr->run << xb;
    const uint64_t hi = (uint64_t)pr->run >> (64 - xb);
    const unsigned nb = pair_bytes(p);
    for (unsigned i = 0; i < nb; i++)
        out[i] = (uint8_t)(i < 8 ? lo >> (8 * i) : hi >> (8 * (i - 8)));
}

static void unpack(const tk_rle_params *p, const uint8_t *in, tk_rle_pair *pr)
{
    const unsigned xb = p->xlen - 1;
    const unsigned nb = pair_bytes(p);
    uint64_t lo = 0, hi = 0;
    for (unsigned i = 0; i < nb; i++) {
        if (i < 8)
            lo |= (uint64_t)in[i] << (8 * i);
        else
            hi |= (uint64_t)in[i] << (8 * (i - 8));
    }
    pr->addr = (lo & ((1ull << xb) - 1)) << 1;
    const uint64_t run = (lo >> xb) | (hi << (64 - xb));
    pr->run = (uint32_t)(p->run_bits >= 32 ? run : run & ((1ull << p->run_bits) - 1));
}

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

tk_status tk_rle_write_file(const char *path, const tk_rle_params *p, const tk_rle_pair *pairs,
                            size_t n, tk_diag *diag)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t h[HEADER_BYTES] = {0};
    memcpy(h, MAGIC, 8);
    put32(h + 8, p->xlen);
    put32(h + 12, p->run_bits);
    put32(h + 16, (uint32_t)n);
    put32(h + 20, (uint32_t)((uint64_t)n >> 32));
    bool ok = fwrite(h, 1, sizeof(h), f) == sizeof(h);
    uint8_t b[16];
    const unsigned nb = pair_bytes(p);
    for (size_t i = 0; ok && i < n; i++) {
        pack(p, &pairs[i], b);
        ok = fwrite(b, 1, nb, f) == nb;
    }
    if (fclose(f) != 0)
        ok = false;
    return ok ? TK_OK : tk_diag_set(diag, TK_ERR_IO, "%s: write failed", path);
}

tk_status tk_rle_read_file(const char *path, tk_rle_params *p, tk_rle_pair **pairs, size_t *n,
                           tk_diag *diag)
{
    *pairs = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t h[HEADER_BYTES];
    if (fread(h, 1, sizeof(h), f) != sizeof(h) || memcmp(h, MAGIC, 8) != 0) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: not a tracekit RLE trace (no TKRLE001)", path);
    }
    tk_rle_params_init(p);
    p->xlen = get32(h + 8);
    p->run_bits = get32(h + 12);
    const uint64_t count = get32(h + 16) | (uint64_t)get32(h + 20) << 32;
    if (tk_rle_params_validate(p, NULL) != TK_OK || count > (1ull << 40)) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: bad header (xlen %u, run bits %u)", path,
                           p->xlen, p->run_bits);
    }
    const unsigned nb = pair_bytes(p);
    long here = ftell(f);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (here < 0 || size < 0 || fseek(f, here, SEEK_SET) != 0) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot seek", path);
    }
    /* a cut capture keeps its whole pairs (and a damaged count must not make us allocate what
     * the file cannot hold) */
    const uint64_t whole = (uint64_t)(size - here) / nb;
    const uint64_t have = whole < count ? whole : count;
    tk_rle_pair *a = malloc((size_t)(have ? have : 1) * sizeof(*a));
    if (!a) {
        fclose(f);
        return TK_ERR_NOMEM;
    }
    uint8_t b[16];
    uint64_t i = 0;
    for (; i < have && fread(b, 1, nb, f) == nb; i++)
        unpack(p, b, &a[i]);
    fclose(f);
    *pairs = a;
    *n = (size_t)i;
    if (i == count)
        return TK_OK;
    tk_status st = tk_diag_set(diag, TK_ERR_TRUNCATED,
                               "%s: truncated in pair %llu (byte %llu); the %llu pairs before are "
                               "kept",
                               path, (unsigned long long)i,
                               (unsigned long long)(HEADER_BYTES + i * nb), (unsigned long long)i);
    if (diag)
        diag->byte_offset = HEADER_BYTES + i * nb;
    return st;
}

/* ---- decoder ---- */

static tk_status rle_error(lg_flow *f, tk_status why, size_t index, unsigned nb)
{
    tk_status st = lg_flow_lose(f);
    if (st != TK_OK)
        return st;
    tk_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = TK_EV_ERROR;
    ev.status = why;
    ev.message = f->msg;
    f->index = index;
    f->offset = HEADER_BYTES + (uint64_t)index * nb;
    return lg_flow_emit(f, &ev);
}

/* The last instruction of a run (at pc, decoded in *in) went to addr. */
static tk_status run_end(lg_flow *f, const tk_rv_insn *in, uint64_t addr)
{
    const uint64_t l = f->pc;
    const uint64_t fall = (l + in->len) & f->mask;
    lg_flow_add(f, l, l, 1);
    switch (in->cf) {
    case TK_RV_CF_NONE:
        if (addr == fall) {
            f->pc = fall; /* a full run, or a run cut at TRACERUN's limit: the range goes on */
            return TK_OK;
        }
        /* a redirect after an ordinary instruction: a trap before the next one */
        {
            tk_status st = lg_flow_close(f, addr);
            return st != TK_OK ? st : lg_flow_trap(f, fall, addr, 0, true);
        }
    case TK_RV_CF_BRANCH: {
        const uint64_t target = lg_target(f, in, l);
        if (addr == target || addr == fall)
            return lg_flow_end(f, TK_END_BRANCH, addr != fall, addr);
        tk_status st = lg_flow_close(f, addr);
        return st != TK_OK ? st : lg_flow_trap(f, l, addr, 0, true);
    }
    case TK_RV_CF_ECALL:
    case TK_RV_CF_EBREAK: {
        tk_status st = lg_flow_end(f, TK_END_TRAP, false, addr);
        return st != TK_OK ? st : lg_flow_trap(f, l, addr, 0, false);
    }
    default:
        return lg_flow_end(f, tk_rv_range_end(in), false, addr);
    }
}

tk_status tk_rle_decode(const tk_rle_params *p, tk_image *img, const tk_rle_pair *pairs, size_t n,
                        tk_event_fn fn, void *ctx, uint64_t *instructions)
{
    if (!p || !img || !fn || (n && !pairs))
        return TK_ERR_INVALID;
    lg_flow f;
    lg_flow_init(&f, img, p->xlen, fn, ctx);
    const unsigned nb = pair_bytes(p);
    tk_status st = TK_OK;
    for (size_t i = 0; i < n && st == TK_OK; i++) {
        const tk_rle_pair *pr = &pairs[i];
        f.index = i;
        f.offset = HEADER_BYTES + (uint64_t)i * nb;
        if (!f.have_pc) {
            if (pr->run) {
                snprintf(f.msg, sizeof(f.msg), "the trace starts with a run, not an address");
                st = rle_error(&f, TK_ERR_NO_SYNC, i, nb);
                continue;
            }
            f.pc = pr->addr;
            f.have_pc = true;
            tk_event on;
            memset(&on, 0, sizeof(on));
            on.kind = TK_EV_TRACE_ON;
            on.first = on.last = pr->addr;
            st = lg_flow_emit(&f, &on);
            continue;
        }
        if (pr->run == 0) {
            if (pr->addr == f.pc)
                continue; /* idle */
            /* a redirect without retirement: a trap before the instruction at R-PC */
            if ((st = lg_flow_close(&f, f.pc)) == TK_OK)
                st = lg_flow_trap(&f, f.pc, pr->addr, 0, true);
            continue;
        }
        tk_rv_insn last;
        if ((st = lg_flow_count(&f, pr->run, &last)) != TK_OK) {
            if (st == TK_ERR_MISMATCH || st == TK_ERR_NO_CODE) {
                /* TRACEADDR is absolute: go on from it */
                st = rle_error(&f, st, i, nb);
                f.pc = pr->addr;
                f.have_pc = true;
            }
            continue;
        }
        st = run_end(&f, &last, pr->addr);
    }
    if (st == TK_OK)
        st = lg_flow_close(&f, 0);
    if (instructions)
        *instructions = f.instructions;
    return st;
}
