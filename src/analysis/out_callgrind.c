/* SPDX-License-Identifier: BSD-2-Clause */
/* Callgrind profile format (valgrind docs, "Callgrind Format Specification"): one event, Ir
 * (instructions executed), at positions "instr line"; per function its instructions' self
 * counts, then its call sites with the callee's inclusive count. Read by callgrind_annotate
 * and KCachegrind. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "out_buf.h"
#include "pair_map.h"
#include "profile_internal.h"

/* Name compression: "(id) name" the first time, "(id)" after. */
typedef struct name_ids {
    tk_pair_map map; /* (kind, pointer) -> id */
    uint32_t next;
} name_ids;

static tk_status put_name(tk_obuf *out, name_ids *ids, const char *key, int kind, const char *name)
{
    uint32_t id = ids->next;
    int inserted = 0;
    tk_status st =
        tk_pair_map_put(&ids->map, (uint64_t)kind, (uint64_t)(uintptr_t)name, &id, &inserted);
    if (st != TK_OK)
        return st;
    if (inserted)
        ids->next++;
    tk_obuf_str(out, key);
    tk_obuf_dec(out, "=(", id);
    tk_obuf_str(out, inserted ? ") " : ")");
    if (inserted)
        tk_obuf_str(out, name);
    tk_obuf_str(out, "\n");
    return TK_OK;
}

static const char *line_of(tk_line_table *lt, uint64_t addr, unsigned *line)
{
    const char *file = NULL;
    *line = 0;
    if (lt && tk_line_table_lookup(lt, addr, &file, line) == TK_OK && file)
        return file;
    *line = 0;
    return "???";
}

/* "0xADDR LINE COUNT": a cost line (an instruction's, or a call's inclusive one). */
static inline void put_cost(tk_obuf *ob, uint64_t addr, unsigned line, uint64_t count)
{
    char *q = tk_obuf_line(ob);
    memcpy(q, "0x", 2);
    q = tk_put_hex(q + 2, addr);
    *q++ = ' ';
    q = tk_put_dec(q, line);
    *q++ = ' ';
    q = tk_put_dec(q, count);
    *q++ = '\n';
    tk_obuf_done(ob, q);
}

static int cmp_call_by_caller(const void *a, const void *b, void *ctx)
{
    const tk_profile *p = ctx;
    const tk_prof_call *x = &p->calls[*(const uint32_t *)a], *y = &p->calls[*(const uint32_t *)b];
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->site < y->site ? -1 : x->site > y->site;
}

tk_status tk_profile_write_callgrind(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    tk_line_table *lt = o ? o->lines : NULL;
    const char *prog = o && o->program ? o->program : "program";
    uint64_t total = 0;
    for (size_t i = 0; i < p->ninsns; i++)
        total += p->insns[i].count;

    /* Calls grouped by caller, in site order; first[func]: the first of func's calls in
     * order (UINT32_MAX: none). */
    uint32_t *order = malloc((p->ncalls ? p->ncalls : 1) * sizeof(*order));
    uint32_t *first = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*first));
    bool *printed = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*printed));
    tk_obuf *ob = malloc(sizeof(*ob));
    if (!order || !first || !printed || !ob) {
        free(order);
        free(first);
        free(printed);
        free(ob);
        return TK_ERR_NOMEM;
    }
    for (size_t i = 0; i < p->ncalls; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, p->ncalls, sizeof(*order), cmp_call_by_caller, (void *)p);
    for (size_t f = 0; f < p->nfuncs; f++)
        first[f] = UINT32_MAX;
    for (size_t ci = p->ncalls; ci-- > 0;)
        first[p->calls[order[ci]].caller] = (uint32_t)ci;

    tk_obuf_init(ob, out);
    tk_obuf_str(ob, "# callgrind format\nversion: 1\ncreator: tracekit\ncmd: ");
    tk_obuf_str(ob, prog);
    tk_obuf_dec(ob, "\npositions: instr line\nevents: Ir\nsummary: ", total);
    tk_obuf_str(ob, "\n\n");

    name_ids ids;
    tk_pair_map_init(&ids.map);
    ids.next = 1;
    tk_status st = put_name(ob, &ids, "ob", 0, prog);
    /* Instructions are sorted by address; a function's instructions are contiguous unless
     * symbols overlap, which only costs a repeated fn= line. */
    for (size_t i = 0; i < p->ninsns && st == TK_OK;) {
        uint32_t func = p->insns[i].func;
        unsigned line;
        const char *fl = line_of(lt, p->insns[i].addr, &line);
        tk_obuf_str(ob, "\n");
        if ((st = put_name(ob, &ids, "fl", 1, fl)) != TK_OK)
            break;
        if ((st = put_name(ob, &ids, "fn", 2, tk_prof_func_name(p, func))) != TK_OK)
            break;
        const char *cur = fl;
        for (; i < p->ninsns && p->insns[i].func == func && st == TK_OK; i++) {
            const tk_prof_insn *in = &p->insns[i];
            const char *f = line_of(lt, in->addr, &line);
            if (f != cur) {
                st = put_name(ob, &ids, f == fl ? "fe" : "fi", 1, f);
                cur = f;
            }
            put_cost(ob, in->addr, line, in->count);
        }
        /* This function's call sites, once. */
        if (printed[func])
            continue;
        printed[func] = true;
        for (size_t ci = first[func];
             ci < p->ncalls && p->calls[order[ci]].caller == func && st == TK_OK; ci++) {
            const tk_prof_call *c = &p->calls[order[ci]];
            const tk_prof_func *callee = &p->funcs[c->callee];
            unsigned tline, sline;
            const char *tf = line_of(lt, callee->addr, &tline);
            line_of(lt, c->site, &sline);
            /* cfi= only for another file: callgrind_annotate names a callee by its file as
             * written there, but strips the working directory from fl= names only. */
            if (tf != fl && (st = put_name(ob, &ids, "cfi", 1, tf)) != TK_OK)
                break;
            if ((st = put_name(ob, &ids, "cfn", 2, callee->name)) != TK_OK)
                break;
            char *q = tk_obuf_line(ob);
            memcpy(q, "calls=", 6);
            q = tk_put_dec(q + 6, c->calls);
            memcpy(q, " 0x", 3);
            q = tk_put_hex(q + 3, callee->addr);
            *q++ = ' ';
            q = tk_put_dec(q, tline);
            *q++ = '\n';
            tk_obuf_done(ob, q);
            put_cost(ob, c->site, sline, c->inclusive);
        }
    }
    tk_obuf_dec(ob, "\ntotals: ", total);
    tk_obuf_str(ob, "\n");
    tk_obuf_flush(ob);
    tk_pair_map_fini(&ids.map);
    free(ob);
    free(printed);
    free(first);
    free(order);
    if (st != TK_OK)
        return st;
    return tk_out_status(out);
}
