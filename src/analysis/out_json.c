/* SPDX-License-Identifier: BSD-2-Clause */
/* JSON summary for scripts: totals, every function, call edge, branch and block, and the
 * hottest call paths. Addresses are hex strings (JSON numbers lose precision past 2^53). */
#include <inttypes.h>
#include <stdlib.h>

#include "profile_internal.h"
#include "rank.h"

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

static void json_func(FILE *out, const tk_profile *p, uint32_t f)
{
    json_str(out, tk_prof_func_name(p, f));
}

tk_status tk_profile_write_json(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    const tk_profile_totals *t = &p->totals;
    fprintf(out, "{\n  \"program\": ");
    json_str(out, o && o->program ? o->program : "");
    fprintf(
        out,
        ",\n  \"totals\": {\"events\": %" PRIu64 ", \"ranges\": %" PRIu64
        ", \"instructions\": %" PRIu64 ", \"traps\": %" PRIu64 ", \"interrupts\": %" PRIu64
        ", \"lost\": %" PRIu64 ", \"errors\": %" PRIu64 ", \"trace_on\": %" PRIu64
        ", \"trace_off\": %" PRIu64 ", \"bad_ranges\": %" PRIu64 ", \"unmatched_returns\": %" PRIu64
        ", \"stack_resets\": %" PRIu64 ", \"max_depth\": %" PRIu64 "},\n",
        t->events, t->ranges, t->insns, t->traps, t->interrupts, t->lost, t->errors, t->trace_on,
        t->trace_off, t->bad_ranges, t->unmatched_returns, t->stack_resets, t->max_depth);

    uint32_t *ord = tk_rank_funcs(p);
    if (!ord && p->nfuncs)
        return TK_ERR_NOMEM;
    fprintf(out, "  \"functions\": [");
    for (size_t i = 0; i < p->nfuncs; i++) {
        const tk_prof_func *f = &p->funcs[ord[i]];
        fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
        json_str(out, f->name);
        fprintf(out,
                ", \"addr\": \"0x%" PRIx64 "\", \"size\": %" PRIu64 ", \"entries\": %" PRIu64
                ", \"self\": %" PRIu64 ", \"inclusive\": %" PRIu64 "}",
                f->addr, f->size, f->entries, f->self, f->inclusive);
    }
    free(ord);

    fprintf(out, "\n  ],\n  \"calls\": [");
    for (size_t i = 0; i < p->ncalls; i++) {
        const tk_prof_call *c = &p->calls[i];
        fprintf(out, "%s\n    {\"caller\": ", i ? "," : "");
        json_func(out, p, c->caller);
        fprintf(out, ", \"callee\": ");
        json_func(out, p, c->callee);
        fprintf(out,
                ", \"site\": \"0x%" PRIx64 "\", \"calls\": %" PRIu64 ", \"inclusive\": %" PRIu64
                ", \"trap\": %s}",
                c->site, c->calls, c->inclusive, c->trap ? "true" : "false");
    }

    fprintf(out, "\n  ],\n  \"branches\": [");
    for (size_t i = 0; i < p->nbranches; i++) {
        const tk_prof_branch *b = &p->branches[i];
        fprintf(out, "%s\n    {\"addr\": \"0x%" PRIx64 "\", \"function\": ", i ? "," : "", b->addr);
        json_func(out, p, b->func);
        fprintf(out,
                ", \"taken\": %" PRIu64 ", \"not_taken\": %" PRIu64 ", \"target\": \"0x%" PRIx64
                "\"}",
                b->taken, b->not_taken, b->target);
    }

    fprintf(out, "\n  ],\n  \"blocks\": [");
    for (size_t i = 0; i < p->nblocks; i++) {
        const tk_prof_block *b = &p->blocks[i];
        fprintf(out,
                "%s\n    {\"start\": \"0x%" PRIx64 "\", \"last\": \"0x%" PRIx64
                "\", \"ninsn\": %" PRIu32 ", \"count\": %" PRIu64 ", \"function\": ",
                i ? "," : "", b->start, b->last, b->ninsn, b->count);
        json_func(out, p, b->func);
        fputc('}', out);
    }

    size_t top = o && o->top ? o->top : 20;
    uint32_t *ctx = tk_rank_ctxs(p);
    if (!ctx && p->nctxs)
        return TK_ERR_NOMEM;
    fprintf(out, "\n  ],\n  \"hot_paths\": [");
    size_t shown = 0;
    for (size_t i = 0; i < p->nctxs && shown < top; i++) {
        if (!p->ctxs[ctx[i]].self)
            break;
        fprintf(out, "%s\n    {\"self\": %" PRIu64 ", \"stack\": [", shown ? "," : "",
                p->ctxs[ctx[i]].self);
        uint32_t chain[TK_RANK_MAX_PATH];
        size_t n = tk_rank_path(p, ctx[i], chain, TK_RANK_MAX_PATH);
        for (size_t k = n; k-- > 0;) {
            json_func(out, p, p->ctxs[chain[k]].func);
            if (k)
                fputs(", ", out);
        }
        fputs("]}", out);
        shown++;
    }
    free(ctx);
    fprintf(out, "\n  ]\n}\n");
    return tk_out_status(out);
}
