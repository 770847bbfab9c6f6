/* SPDX-License-Identifier: BSD-2-Clause */
/* The analysis code view over a snapshot's memory images (cs_code.h). */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/arm/arm_branch.h"
#include "util/grow.h"
#include "util/sort.h"
#include "tracekit/cs_code.h"
#include "util/compiler.h"

/* "sub_" and 16 hex digits */
#define NAME_LEN 24

/* Code the flow ran in another instruction set than the first range's (A32 and T32
 * interworking, AArch32 under AArch64). */
typedef struct isa_span {
    uint64_t first, last;
    uint8_t isa;
} isa_span;

struct tk_cs_code {
    const tk_cs_mem *mem;
    tk_arm_isa isa; /* of the first range, and of all code outside the spans */
    bool have_isa;
    isa_span *spans; /* sorted and merged when sealed */
    size_t nspans, cap_spans;
    const tk_image *img; /* symbols from an ELF, or NULL; they come before inferred ones */
    /* Inferred functions: entries as learned (unsorted, repeats), then at the first lookup
     * sorted, made distinct and given names and extents. */
    uint64_t *entries;
    size_t nentries, cap;
    bool sealed;
    tk_symbol *syms;
    char (*names)[NAME_LEN];
    size_t nsyms;
    size_t last;     /* the symbol found last: flow stays in a function for a while */
    bool after_call; /* the next range starts a function */
    /* What broke the chain before the first range (tk_cs_code_learn_after): LEAD_NONE, or the
     * last event of another kind, which decides after_call for that range instead of the
     * trace learned before. */
    uint8_t lead;
    uint64_t first_range; /* the first range's first address */
};

enum { LEAD_NONE, LEAD_BREAK, LEAD_TRAP };

tk_status tk_cs_code_new(tk_cs_code **out)
{
    if (!out)
        return TK_ERR_INVALID;
    *out = calloc(1, sizeof(**out));
    return *out ? TK_OK : TK_ERR_NOMEM;
}

void tk_cs_code_free(tk_cs_code *c)
{
    if (!c)
        return;
    free(c->entries);
    free(c->spans);
    free(c->syms);
    free(c->names);
    free(c);
}

tk_status tk_cs_code_set_mem(tk_cs_code *c, const tk_cs_mem *mem, uint8_t isa)
{
    if (!c || isa > TK_ARM_T32)
        return TK_ERR_INVALID;
    c->mem = mem;
    c->isa = (tk_arm_isa)isa;
    c->have_isa = true;
    return TK_OK;
}

void tk_cs_code_set_symbols(tk_cs_code *c, const tk_image *img)
{
    c->img = img;
}

tk_status tk_cs_code_add_entry(tk_cs_code *c, uint64_t addr)
{
    tk_status st = TK_GROW(c->entries, c->nentries, c->cap, c->nentries + 1);
    if (st)
        return st;
    /* the same callee again and again: most repeats are dropped here */
    if (!c->nentries || c->entries[c->nentries - 1] != addr)
        c->entries[c->nentries++] = addr;
    return TK_OK;
}

/* A range in another instruction set than the first one's. */
static tk_status add_span(tk_cs_code *c, const tk_event *ev)
{
    isa_span *last = c->nspans ? &c->spans[c->nspans - 1] : NULL;
    if (last && last->isa == ev->isa && ev->first >= last->first && ev->first <= last->last + 4) {
        if (ev->last > last->last)
            last->last = ev->last; /* flow going on (or a loop) in the same code */
        return TK_OK;
    }
    tk_status st = TK_GROW(c->spans, c->nspans, c->cap_spans, c->nspans + 1);
    if (st)
        return st;
    c->spans[c->nspans++] = (isa_span){ev->first, ev->last, ev->isa};
    return TK_OK;
}

/* tk_cs_code_learn for everything but its common case. */
TK_NOINLINE static tk_status learn_general(tk_cs_code *c, const tk_event *ev)
{
    if (ev->kind == TK_EV_RANGE) {
        tk_status st = TK_OK;
        if (!c->have_isa) {
            c->isa = ev->isa <= TK_ARM_T32 ? (tk_arm_isa)ev->isa : TK_ARM_A64;
            c->have_isa = true;
            c->first_range = ev->first;
        } else if (ev->isa != c->isa && ev->isa <= TK_ARM_T32) {
            st = add_span(c, ev);
        }
        if (!st && c->after_call)
            st = tk_cs_code_add_entry(c, ev->first);
        c->after_call = ev->end == TK_END_CALL;
        return st;
    }
    if (ev->kind != TK_EV_TIMESTAMP && ev->kind != TK_EV_CONTEXT) {
        c->after_call = ev->kind == TK_EV_TRAP;
        if (!c->have_isa)
            c->lead = c->after_call ? LEAD_TRAP : LEAD_BREAK;
    }
    return TK_OK;
}

tk_status tk_cs_code_learn(void *code, const tk_event *ev)
{
    tk_cs_code *c = code;
    /* A range that follows no call, in the first range's instruction set (or an unknown
     * one, which makes no span either): most of them. Without a stack frame, in a pass
     * that sees every range. */
    if (ev->kind == TK_EV_RANGE && c->have_isa && !c->after_call &&
        (ev->isa == c->isa || ev->isa > TK_ARM_T32)) {
        c->after_call = ev->end == TK_END_CALL;
        return TK_OK;
    }
    return learn_general(c, ev);
}

tk_status tk_cs_code_learn_after(tk_cs_code *c, const tk_cs_code *later)
{
    if (!c || !later || c->sealed || later->sealed)
        return TK_ERR_INVALID;
    /* later's own first range takes an instruction set: the same as c's, or c would have
     * learned its code as a span of another one (and later's spans against another base) */
    if (later->nspans || (c->have_isa && later->have_isa && later->isa != c->isa))
        return TK_ERR_UNSUPPORTED;
    /* Where later took after_call from its own events, it is right; before them it started
     * false where c's may be true: the first range is an entry then (later did not add it). */
    const bool first_is_entry = later->have_isa && later->lead == LEAD_NONE && c->after_call;
    size_t need = c->nentries + later->nentries + first_is_entry;
    tk_status st = TK_GROW(c->entries, c->nentries, c->cap, need);
    if (st)
        return st;
    if (first_is_entry && (!c->nentries || c->entries[c->nentries - 1] != later->first_range))
        c->entries[c->nentries++] = later->first_range;
    for (size_t i = 0; i < later->nentries; i++)
        if (!c->nentries || c->entries[c->nentries - 1] != later->entries[i])
            c->entries[c->nentries++] = later->entries[i];
    if (!c->have_isa) {
        if (later->lead != LEAD_NONE) /* the last event before the first range */
            c->lead = later->lead;
        if (later->have_isa) {
            c->isa = later->isa;
            c->have_isa = true;
            c->first_range = later->first_range;
        }
    }
    if (later->have_isa || later->lead != LEAD_NONE)
        c->after_call = later->after_call;
    return TK_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t tk_cs_code_entry_count(const tk_cs_code *c)
{
    if (c->sealed)
        return c->nsyms;
    /* counted on a sorted copy, so learning can go on */
    uint64_t *e = malloc((c->nentries ? c->nentries : 1) * sizeof(*e));
    if (!e)
        return 0;
    if (c->nentries) {
        memcpy(e, c->entries, c->nentries * sizeof(*e));
        qsort(e, c->nentries, sizeof(*e), cmp_u64);
    }
    size_t n = 0;
    for (size_t i = 0; i < c->nentries; i++)
        n += !i || e[i] != e[i - 1];
    free(e);
    return n;
}

/* Sort the entries, drop repeats and those inside an ELF symbol, and make each a function that
 * runs up to the next entry or to the end of its memory region (an ELF symbol inside that
 * extent still wins there). On a failed allocation the view has no functions (all code
 * is the profile's unknown function), which is still a correct flat profile. */
static int cmp_span(const void *a, const void *b)
{
    const isa_span *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorted by first address, overlapping spans of one instruction set merged (the same bytes
 * do not run as two instruction sets). */
static void seal_spans(tk_cs_code *c)
{
    if (c->nspans) /* (qsort wants a buffer even for none) */
        qsort(c->spans, c->nspans, sizeof(*c->spans), cmp_span);
    size_t n = 0;
    for (size_t i = 0; i < c->nspans; i++) {
        isa_span *last = n ? &c->spans[n - 1] : NULL;
        if (last && last->isa == c->spans[i].isa && c->spans[i].first <= last->last + 4) {
            if (c->spans[i].last > last->last)
                last->last = c->spans[i].last;
        } else {
            c->spans[n++] = c->spans[i];
        }
    }
    c->nspans = n;
}

static void seal(tk_cs_code *c)
{
    c->sealed = true;
    seal_spans(c);
    if (c->nentries && !tk_sort_by_u64(c->entries, c->nentries, sizeof(*c->entries), 0))
        qsort(c->entries, c->nentries, sizeof(*c->entries), cmp_u64);
    size_t n = 0;
    uint64_t off;
    for (size_t i = 0; i < c->nentries; i++)
        if ((!n || c->entries[i] != c->entries[n - 1]) &&
            !(c->img && tk_image_symbolize(c->img, c->entries[i], &off)))
            c->entries[n++] = c->entries[i];
    c->nentries = n;
    if (!n || !(c->syms = calloc(n, sizeof(*c->syms))) ||
        !(c->names = calloc(n, sizeof(*c->names)))) {
        free(c->syms);
        c->syms = NULL;
        return;
    }
    const size_t nelf = c->img ? tk_image_symbol_count(c->img) : 0;
    size_t j = 0; /* the first ELF symbol after entry i (both sorted by address) */
    for (size_t i = 0; i < n; i++) {
        const uint64_t a = c->entries[i];
        size_t avail = 0;
        if (c->mem)
            tk_cs_mem_ptr(c->mem, a, &avail);
        uint64_t size = avail ? (uint64_t)avail : 1;
        if (i + 1 < n && c->entries[i + 1] - a < size)
            size = c->entries[i + 1] - a;
        /* An ELF function starts a new function too: the profile asks for the function of
         * an address again only when flow leaves the extent of the one it is in. */
        while (j < nelf &&
               (tk_image_symbol(c->img, j)->addr <= a || !tk_image_symbol(c->img, j)->is_func))
            j++;
        if (j < nelf && tk_image_symbol(c->img, j)->addr - a < size)
            size = tk_image_symbol(c->img, j)->addr - a;
        snprintf(c->names[i], NAME_LEN, "sub_%" PRIx64, a);
        c->syms[i] = (tk_symbol){.name = c->names[i], .addr = a, .size = size, .is_func = true};
    }
    c->nsyms = n;
}

static const tk_symbol *symbolize(void *ctx, uint64_t addr, uint64_t *offset)
{
    tk_cs_code *c = ctx;
    const tk_symbol *elf = c->img ? tk_image_symbolize(c->img, addr, offset) : NULL;
    if (elf)
        return elf;
    if (!c->sealed)
        seal(c);
    const tk_symbol *s = c->nsyms ? &c->syms[c->last] : NULL;
    if (!s || addr < s->addr || addr - s->addr >= s->size) {
        /* the last function that starts at or before addr */
        size_t lo = tk_count_keys_u64(c->syms, c->nsyms, sizeof(*c->syms),
                                      offsetof(tk_symbol, addr), addr, true);
        if (!lo || addr - c->syms[lo - 1].addr >= c->syms[lo - 1].size)
            return NULL;
        c->last = lo - 1;
        s = &c->syms[lo - 1];
    }
    *offset = addr - s->addr;
    return s;
}

/* The instruction set of the code at addr. */
static tk_arm_isa isa_at(const tk_cs_code *c, uint64_t addr)
{
    size_t lo = tk_count_keys_u64(c->spans, c->nspans, sizeof(*c->spans), offsetof(isa_span, first),
                                  addr, true);
    return lo && addr <= c->spans[lo - 1].last ? (tk_arm_isa)c->spans[lo - 1].isa : c->isa;
}

static tk_status insn(void *ctx, uint64_t addr, tk_code_insn *out)
{
    tk_cs_code *c = ctx;
    if (!c->sealed)
        seal(c);
    size_t avail = 0;
    const uint8_t *b = c->mem ? tk_cs_mem_ptr(c->mem, addr, &avail) : NULL;
    if (!b)
        return TK_ERR_NO_CODE;
    tk_arm_insn in;
    if (tk_arm_classify(isa_at(c, addr), addr, b, avail, &in) < 0)
        return TK_ERR_NO_CODE; /* the instruction runs past the end of the image */
    out->len = in.size;
    out->cond_branch = in.kind == TK_ARM_BRANCH && in.cond;
    out->target = in.kind == TK_ARM_BRANCH && !in.indirect ? in.target : 0;
    return TK_OK;
}

void tk_cs_code_view(tk_cs_code *c, tk_code_view *out)
{
    out->ctx = c;
    out->insn = insn;
    out->symbolize = symbolize;
}
