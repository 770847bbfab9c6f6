/* SPDX-License-Identifier: BSD-2-Clause */
/* JSON summary for scripts: totals, every function, call edge, branch and block, and the
 * hottest call paths. Addresses are hex strings (JSON numbers lose precision past 2^53).
 * Written through a buffer (out_buf.h): a large program's trace has hundreds of thousands of
 * branches and blocks. */
#include <stdlib.h>

#include "out_buf.h"
#include "profile_internal.h"
#include "rank.h"

static void json_str(tk_obuf *ob, const char *s)
{
    tk_obuf_mem(ob, "\"", 1);
    const char *plain = s; /* start of the stretch that needs no escape */
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        tk_obuf_mem(ob, plain, (size_t)(s - plain));
        char esc[6] = {'\\', (char)c};
        size_t n = 2;
        if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        tk_obuf_mem(ob, esc, n);
        plain = s + 1;
    }
    tk_obuf_mem(ob, plain, (size_t)(s - plain));
    tk_obuf_mem(ob, "\"", 1);
}

static void json_func(tk_obuf *ob, const tk_profile *p, uint32_t f)
{
    json_str(ob, tk_prof_func_name(p, f));
}

/* The record separator: none before the first. */
static void json_next(tk_obuf *ob, size_t i)
{
    tk_obuf_str(ob, i ? ",\n    {" : "\n    {");
}

static void write_totals(tk_obuf *ob, const tk_profile_totals *t)
{
    const struct {
        const char *key;
        uint64_t value;
    } f[] = {{"events", t->events},
             {"ranges", t->ranges},
             {"instructions", t->insns},
             {"traps", t->traps},
             {"interrupts", t->interrupts},
             {"lost", t->lost},
             {"errors", t->errors},
             {"trace_on", t->trace_on},
             {"trace_off", t->trace_off},
             {"bad_ranges", t->bad_ranges},
             {"unmatched_returns", t->unmatched_returns},
             {"stack_resets", t->stack_resets},
             {"max_depth", t->max_depth}};
    tk_obuf_str(ob, ",\n  \"totals\": {");
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        tk_obuf_str(ob, i ? ", \"" : "\"");
        tk_obuf_str(ob, f[i].key);
        tk_obuf_dec(ob, "\": ", f[i].value);
    }
    tk_obuf_str(ob, "},\n");
}

static void write_tables(tk_obuf *ob, const tk_profile *p, const uint32_t *ord)
{
    tk_obuf_str(ob, "  \"functions\": [");
    for (size_t i = 0; i < p->nfuncs; i++) {
        const tk_prof_func *f = &p->funcs[ord[i]];
        json_next(ob, i);
        tk_obuf_str(ob, "\"name\": ");
        json_str(ob, f->name);
        tk_obuf_qhex(ob, ", \"addr\": ", f->addr);
        tk_obuf_dec(ob, ", \"size\": ", f->size);
        tk_obuf_dec(ob, ", \"entries\": ", f->entries);
        tk_obuf_dec(ob, ", \"self\": ", f->self);
        tk_obuf_dec(ob, ", \"inclusive\": ", f->inclusive);
        tk_obuf_str(ob, "}");
    }

    tk_obuf_str(ob, "\n  ],\n  \"calls\": [");
    for (size_t i = 0; i < p->ncalls; i++) {
        const tk_prof_call *c = &p->calls[i];
        json_next(ob, i);
        tk_obuf_str(ob, "\"caller\": ");
        json_func(ob, p, c->caller);
        tk_obuf_str(ob, ", \"callee\": ");
        json_func(ob, p, c->callee);
        tk_obuf_qhex(ob, ", \"site\": ", c->site);
        tk_obuf_dec(ob, ", \"calls\": ", c->calls);
        tk_obuf_dec(ob, ", \"inclusive\": ", c->inclusive);
        tk_obuf_str(ob, c->trap ? ", \"trap\": true}" : ", \"trap\": false}");
    }

    tk_obuf_str(ob, "\n  ],\n  \"branches\": [");
    for (size_t i = 0; i < p->nbranches; i++) {
        const tk_prof_branch *b = &p->branches[i];
        json_next(ob, i);
        tk_obuf_qhex(ob, "\"addr\": ", b->addr);
        tk_obuf_str(ob, ", \"function\": ");
        json_func(ob, p, b->func);
        tk_obuf_dec(ob, ", \"taken\": ", b->taken);
        tk_obuf_dec(ob, ", \"not_taken\": ", b->not_taken);
        tk_obuf_qhex(ob, ", \"target\": ", b->target);
        tk_obuf_str(ob, "}");
    }

    tk_obuf_str(ob, "\n  ],\n  \"blocks\": [");
    for (size_t i = 0; i < p->nblocks; i++) {
        const tk_prof_block *b = &p->blocks[i];
        json_next(ob, i);
        tk_obuf_qhex(ob, "\"start\": ", b->start);
        tk_obuf_qhex(ob, ", \"last\": ", b->last);
        tk_obuf_dec(ob, ", \"ninsn\": ", b->ninsn);
        tk_obuf_dec(ob, ", \"count\": ", b->count);
        tk_obuf_str(ob, ", \"function\": ");
        json_func(ob, p, b->func);
        tk_obuf_str(ob, "}");
    }
}

static void write_hot_paths(tk_obuf *ob, const tk_profile *p, const uint32_t *ctx, size_t top)
{
    tk_obuf_str(ob, "\n  ],\n  \"hot_paths\": [");
    size_t shown = 0;
    for (size_t i = 0; i < p->nctxs && shown < top; i++) {
        if (!p->ctxs[ctx[i]].self)
            break;
        json_next(ob, shown);
        tk_obuf_dec(ob, "\"self\": ", p->ctxs[ctx[i]].self);
        tk_obuf_str(ob, ", \"stack\": [");
        uint32_t chain[TK_RANK_MAX_PATH];
        size_t n = tk_rank_path(p, ctx[i], chain, TK_RANK_MAX_PATH);
        for (size_t k = n; k-- > 0;) {
            json_func(ob, p, p->ctxs[chain[k]].func);
            if (k)
                tk_obuf_str(ob, ", ");
        }
        tk_obuf_str(ob, "]}");
        shown++;
    }
    tk_obuf_str(ob, "\n  ]\n}\n");
}

tk_status tk_profile_write_json(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    uint32_t *ord = tk_rank_funcs(p);
    uint32_t *ctx = tk_rank_ctxs(p);
    tk_obuf *ob = malloc(sizeof(*ob));
    if ((!ord && p->nfuncs) || (!ctx && p->nctxs) || !ob) {
        free(ord);
        free(ctx);
        free(ob);
        return TK_ERR_NOMEM;
    }
    tk_obuf_init(ob, out);
    tk_obuf_str(ob, "{\n  \"program\": ");
    json_str(ob, o && o->program ? o->program : "");
    write_totals(ob, &p->totals);
    write_tables(ob, p, ord);
    write_hot_paths(ob, p, ctx, o && o->top ? o->top : 20);
    tk_obuf_flush(ob);
    free(ob);
    free(ctx);
    free(ord);
    return tk_out_status(out);
}
