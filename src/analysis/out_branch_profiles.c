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
#include <stdlib.h>
#include <string.h>

#include "out_buf.h"
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

/* "FROM<sep>TO<sep2>COUNT<tail>" with hex addresses: the line of both formats. */
static inline void put_pair(tk_obuf *ob, const char *lead, uint64_t from, const char *sep,
                            uint64_t to, char sep2, uint64_t count, const char *tail)
{
    char *q = tk_obuf_line(ob);
    const size_t nl = strlen(lead), ns = strlen(sep), nt = strlen(tail);
    memcpy(q, lead, nl);
    q = tk_put_hex(q + nl, from);
    memcpy(q, sep, ns);
    q = tk_put_hex(q + ns, to);
    *q++ = sep2;
    q = tk_put_dec(q, count);
    memcpy(q, tail, nt);
    tk_obuf_done(ob, q + nt);
}

static void write_autofdo(const tk_profile *p, tk_obuf *ob, uint64_t base)
{
    tk_obuf_dec(ob, "", p->nruns);
    tk_obuf_str(ob, "\n");
    for (size_t i = 0; i < p->nruns; i++)
        put_pair(ob, "", rel(p->runs[i].start, base), "-", rel(p->runs[i].last, base), ':',
                 p->runs[i].count, "\n");
    size_t nb = 0;
    for (size_t i = 0; i < p->nedges; i++)
        nb += is_branch_edge(&p->edges[i]);
    tk_obuf_dec(ob, "", nb);
    tk_obuf_str(ob, "\n");
    for (size_t i = 0; i < p->nedges; i++) {
        const tk_prof_edge *e = &p->edges[i];
        if (is_branch_edge(e))
            put_pair(ob, "", rel(e->from, base), "->", rel(e->to, base), ':', e->count, "\n");
    }
}

static void write_bolt(const tk_profile *p, tk_obuf *ob, uint64_t base)
{
    /* A trace has no mispredict information: 0. */
    for (size_t i = 0; i < p->nedges; i++) {
        const tk_prof_edge *e = &p->edges[i];
        if (is_branch_edge(e))
            put_pair(ob, "B ", rel(e->from, base), " ", rel(e->to, base), ' ', e->count, " 0\n");
    }
    /* "f": a fall-through entered from outside the function (a return landing after its
     * call), which BOLT must not take for a jump to a block start. */
    for (size_t i = 0; i < p->nruns; i++) {
        const tk_prof_run *r = &p->runs[i];
        if (r->count > r->after_return)
            put_pair(ob, "F ", rel(r->start, base), " ", rel(r->last, base), ' ',
                     r->count - r->after_return, "\n");
        if (r->after_return)
            put_pair(ob, "f ", rel(r->start, base), " ", rel(r->last, base), ' ', r->after_return,
                     "\n");
    }
}

/* Both formats through a write buffer (out_buf.h): one line per branch and run. */
static tk_status write_buffered(const tk_profile *p, FILE *out, const tk_write_options *o,
                                void (*fn)(const tk_profile *, tk_obuf *, uint64_t))
{
    if (!p->finished)
        return TK_ERR_STATE;
    tk_obuf *ob = malloc(sizeof(*ob));
    if (!ob)
        return TK_ERR_NOMEM;
    tk_obuf_init(ob, out);
    fn(p, ob, o ? o->base : 0);
    tk_obuf_flush(ob);
    free(ob);
    return tk_out_status(out);
}

tk_status tk_profile_write_autofdo(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    return write_buffered(p, out, o, write_autofdo);
}

tk_status tk_profile_write_bolt(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    return write_buffered(p, out, o, write_bolt);
}
