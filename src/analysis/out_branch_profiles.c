/* SPDX-License-Identifier: BSD-2-Clause */
/* Branch profiles for post-link and sample-based optimisers, written from the exact trace as
 * if it were an LBR record of every taken branch:
 *  - llvm-profgen's unsymbolized profile (llvm-profgen --unsymbolized-profile; the format its
 *    --skip-symbolization writes): a count of ranges, "start-end:count" lines (hex, inclusive
 *    instruction addresses, offsets from the binary's base as with --use-offset), then a
 *    count of branches, "source->target:count" lines;
 *  - BOLT's pre-aggregated profile (perf2bolt --pa): "B from to count mispredicts" per taken
 *    branch, "F start end count" per fall-through run and "f start end count" for a run
 *    entered by a return, hex addresses (offsets from the load address, which is 0 for a
 *    non-PIE executable). */
#include <inttypes.h>

#include "profile_internal.h"

static uint64_t rel(uint64_t addr, uint64_t base)
{
    return addr >= base ? addr - base : addr;
}

/* Traps are not branch instructions at their source: neither format has a place for them. */
static bool is_branch_edge(const tk_prof_edge *e)
{
    return e->end != TK_END_TRAP;
}

tk_status tk_profile_write_autofdo(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    uint64_t base = o ? o->base : 0;
    fprintf(out, "%zu\n", p->nruns);
    for (size_t i = 0; i < p->nruns; i++)
        fprintf(out, "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n", rel(p->runs[i].start, base),
                rel(p->runs[i].last, base), p->runs[i].count);
    size_t nb = 0;
    for (size_t i = 0; i < p->nedges; i++)
        nb += is_branch_edge(&p->edges[i]);
    fprintf(out, "%zu\n", nb);
    for (size_t i = 0; i < p->nedges; i++) {
        const tk_prof_edge *e = &p->edges[i];
        if (is_branch_edge(e))
            fprintf(out, "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n", rel(e->from, base),
                    rel(e->to, base), e->count);
    }
    return tk_out_status(out);
}

tk_status tk_profile_write_bolt(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    uint64_t base = o ? o->base : 0;
    /* A trace has no mispredict information: 0. */
    for (size_t i = 0; i < p->nedges; i++) {
        const tk_prof_edge *e = &p->edges[i];
        if (is_branch_edge(e))
            fprintf(out, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " 0\n", rel(e->from, base),
                    rel(e->to, base), e->count);
    }
    /* "f": a fall-through entered from outside the function (a return landing after its
     * call), which BOLT must not take for a jump to a block start. */
    for (size_t i = 0; i < p->nruns; i++) {
        const tk_prof_run *r = &p->runs[i];
        if (r->count > r->after_return)
            fprintf(out, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", rel(r->start, base),
                    rel(r->last, base), r->count - r->after_return);
        if (r->after_return)
            fprintf(out, "f %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", rel(r->start, base),
                    rel(r->last, base), r->after_return);
    }
    return tk_out_status(out);
}
