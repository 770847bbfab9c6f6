/* SPDX-License-Identifier: BSD-2-Clause */
/* The human report: totals, hottest functions, call graph, hottest call paths and blocks,
 * and the most executed branches with how often each went which way. */
#include <inttypes.h>
#include <stdlib.h>

#include "profile_internal.h"
#include "rank.h"

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "name+0xoff" for an address inside a known function. */
static void put_loc(FILE *out, const tk_profile *p, uint32_t func, uint64_t addr)
{
    if (func < p->nfuncs && tk_prof_func_known(p, func) && addr >= p->funcs[func].addr)
        fprintf(out, "%s+0x%" PRIx64, p->funcs[func].name, addr - p->funcs[func].addr);
    else
        fprintf(out, "0x%" PRIx64, addr);
}

tk_status tk_profile_write_report(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    size_t top = o && o->top ? o->top : 20;
    const tk_profile_totals *t = &p->totals;
    uint64_t total = t->insns;
    fprintf(out, "Program: %s\n", o && o->program ? o->program : "-");
    fprintf(out,
            "Executed %" PRIu64 " instructions in %" PRIu64 " ranges; %" PRIu64 " traps (%" PRIu64
            " interrupts)\n",
            total, t->ranges, t->traps, t->interrupts);
    fprintf(out,
            "Trace: %" PRIu64 " lost, %" PRIu64 " errors, %" PRIu64 " on, %" PRIu64
            " off; call stack: max depth %" PRIu64 ", %" PRIu64 " unmatched returns\n",
            t->lost, t->errors, t->trace_on, t->trace_off, t->max_depth, t->unmatched_returns);
    if (t->bad_ranges)
        fprintf(out, "Warning: %" PRIu64 " ranges did not match the program's code\n",
                t->bad_ranges);

    uint32_t *ord = tk_rank_funcs(p);
    fprintf(out, "\nHottest functions\n  %6s %12s %6s %12s %10s  %s\n", "self%", "self", "incl%",
            "inclusive", "entries", "function");
    for (size_t i = 0; ord && i < p->nfuncs && i < top; i++) {
        const tk_prof_func *f = &p->funcs[ord[i]];
        if (!f->self)
            break;
        fprintf(out, "  %6.2f %12" PRIu64 " %6.2f %12" PRIu64 " %10" PRIu64 "  %s\n",
                pct(f->self, total), f->self, pct(f->inclusive, total), f->inclusive, f->entries,
                f->name);
    }
    free(ord);

    ord = tk_rank_calls(p);
    fprintf(out, "\nCall graph (by inclusive instructions)\n  %12s %10s  %s\n", "inclusive",
            "calls", "caller -> callee (call site)");
    for (size_t i = 0; ord && i < p->ncalls && i < top; i++) {
        const tk_prof_call *c = &p->calls[ord[i]];
        fprintf(out, "  %12" PRIu64 " %10" PRIu64 "  %s -> %s%s (", c->inclusive, c->calls,
                tk_prof_func_name(p, c->caller), tk_prof_func_name(p, c->callee),
                c->trap ? " [trap]" : "");
        put_loc(out, p, c->caller, c->site);
        fputs(")\n", out);
    }
    free(ord);

    ord = tk_rank_ctxs(p);
    fprintf(out, "\nHottest call paths (instructions with exactly this stack)\n");
    for (size_t i = 0; ord && i < p->nctxs && i < top; i++) {
        if (!p->ctxs[ord[i]].self)
            break;
        uint32_t chain[TK_RANK_MAX_PATH];
        size_t n = tk_rank_path(p, ord[i], chain, TK_RANK_MAX_PATH);
        fprintf(out, "  %12" PRIu64 "  %s", p->ctxs[ord[i]].self,
                p->ctxs[chain[n - 1]].parent != TK_PAIR_NONE ? "...;" : "");
        for (size_t k = n; k-- > 0;)
            fprintf(out, "%s%s", tk_prof_func_name(p, p->ctxs[chain[k]].func), k ? ";" : "\n");
    }
    free(ord);

    ord = tk_rank_blocks(p);
    fprintf(out, "\nHottest basic blocks\n  %12s %8s %6s  %s\n", "count", "insns", "insn%",
            "block");
    for (size_t i = 0; ord && i < p->nblocks && i < top; i++) {
        const tk_prof_block *b = &p->blocks[ord[i]];
        fprintf(out, "  %12" PRIu64 " %8" PRIu32 " %6.2f  ", b->count, b->ninsn,
                pct(b->count * b->ninsn, total));
        put_loc(out, p, b->func, b->start);
        fputs(" .. ", out);
        put_loc(out, p, b->func, b->last);
        fputc('\n', out);
    }
    free(ord);

    ord = tk_rank_branches(p);
    fprintf(out, "\nMost executed branches\n  %12s %12s %7s  %s\n", "taken", "not taken", "taken%",
            "branch");
    for (size_t i = 0; ord && i < p->nbranches && i < top; i++) {
        const tk_prof_branch *b = &p->branches[ord[i]];
        fprintf(out, "  %12" PRIu64 " %12" PRIu64 " %7.2f  ", b->taken, b->not_taken,
                pct(b->taken, b->taken + b->not_taken));
        put_loc(out, p, b->func, b->addr);
        if (b->target) {
            fputs(" -> ", out);
            put_loc(out, p, b->func, b->target);
        }
        fputc('\n', out);
    }
    free(ord);
    return tk_out_status(out);
}
