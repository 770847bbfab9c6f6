/* SPDX-License-Identifier: BSD-2-Clause */
/* LLVM sample profile, text form (clang -fprofile-sample-use; llvm-profdata show --sample):
 *   function:total_samples:head_samples
 *    line_offset: samples [callee:calls ...]
 * line_offset is the source line minus the function's first line (DW_AT_decl_line). As
 * llvm-profgen does, a line's count is the largest count among its instructions; the head
 * count is how many times the function was entered. Lines of other files (inlined code) and
 * lines before the function's first line are left out: inline call-site nesting is not
 * written. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

typedef struct body_line {
    uint32_t offset;
    uint64_t count;
    int64_t call; /* call edge index, or -1 */
} body_line;

static int cmp_body(const void *a, const void *b)
{
    const body_line *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

/* Offset of addr's line from decl, when it belongs to the same file. */
static bool offset_of(tk_line_table *lt, const tk_line_func *lf, uint64_t addr, uint32_t *off)
{
    const char *file;
    unsigned line;
    if (tk_line_table_lookup(lt, addr, &file, &line) != TK_OK || !line)
        return false;
    if (lf->file && strcmp(lf->file, file))
        return false;
    if (line < lf->decl_line)
        return false;
    *off = line - lf->decl_line;
    return true;
}

static tk_status write_func(const tk_profile *p, FILE *out, tk_line_table *lt, uint32_t fi,
                            size_t first, size_t end, body_line **buf, size_t *cap)
{
    const tk_prof_func *f = &p->funcs[fi];
    const tk_line_func *lf = tk_line_table_func(lt, f->addr);
    if (!lf || !lf->decl_line)
        return TK_OK; /* no debug info for it: nothing a compiler could use */
    size_t need = (end - first) + p->ncalls;
    if (need > *cap) {
        body_line *nb = realloc(*buf, need * sizeof(*nb));
        if (!nb)
            return TK_ERR_NOMEM;
        *buf = nb;
        *cap = need;
    }
    size_t n = 0;
    for (size_t i = first; i < end; i++) {
        uint32_t off;
        if (offset_of(lt, lf, p->insns[i].addr, &off))
            (*buf)[n++] = (body_line){.offset = off, .count = p->insns[i].count, .call = -1};
    }
    for (size_t c = 0; c < p->ncalls; c++) {
        uint32_t off;
        if (p->calls[c].caller == fi && !p->calls[c].trap &&
            offset_of(lt, lf, p->calls[c].site, &off))
            (*buf)[n++] = (body_line){.offset = off, .count = 0, .call = (int64_t)c};
    }
    if (!n)
        return TK_OK;
    qsort(*buf, n, sizeof(**buf), cmp_body);
    uint64_t total = 0;
    for (size_t i = 0; i < n;) {
        uint64_t count = 0;
        size_t j = i;
        for (; j < n && (*buf)[j].offset == (*buf)[i].offset; j++)
            if ((*buf)[j].call < 0 && (*buf)[j].count > count)
                count = (*buf)[j].count;
        total += count;
        i = j;
    }
    if (!total)
        return TK_OK;
    fprintf(out, "%s:%" PRIu64 ":%" PRIu64 "\n", f->name, total, f->entries);
    /* One line per offset: the largest count, then the calls made from that line (call
     * entries sort after the instruction entries of their offset). */
    for (size_t i = 0; i < n;) {
        uint64_t count = 0;
        size_t j = i;
        for (; j < n && (*buf)[j].offset == (*buf)[i].offset; j++)
            if ((*buf)[j].call < 0 && (*buf)[j].count > count)
                count = (*buf)[j].count;
        fprintf(out, " %" PRIu32 ": %" PRIu64, (*buf)[i].offset, count);
        /* One target entry per callee: several call sites on one line add up. */
        for (size_t k = i; k < j; k++) {
            if ((*buf)[k].call < 0)
                continue;
            uint32_t callee = p->calls[(*buf)[k].call].callee;
            bool seen = false;
            for (size_t m = i; m < k && !seen; m++)
                seen = (*buf)[m].call >= 0 && p->calls[(*buf)[m].call].callee == callee;
            if (seen)
                continue;
            uint64_t calls = 0;
            for (size_t m = k; m < j; m++)
                if ((*buf)[m].call >= 0 && p->calls[(*buf)[m].call].callee == callee)
                    calls += p->calls[(*buf)[m].call].calls;
            fprintf(out, " %s:%" PRIu64, p->funcs[callee].name, calls);
        }
        fputc('\n', out);
        i = j;
    }
    return TK_OK;
}

tk_status tk_profile_write_llvm_sample(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    if (!o || !o->lines)
        return TK_ERR_UNSUPPORTED;
    body_line *buf = NULL;
    size_t cap = 0;
    tk_status st = TK_OK;
    bool *done = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*done));
    if (!done)
        return TK_ERR_NOMEM;
    for (size_t i = 0; i < p->ninsns && st == TK_OK;) {
        uint32_t fi = p->insns[i].func;
        size_t j = i;
        while (j < p->ninsns && p->insns[j].func == fi)
            j++;
        if (!done[fi] && p->funcs[fi].size)
            st = write_func(p, out, o->lines, fi, i, j, &buf, &cap);
        done[fi] = true;
        i = j;
    }
    free(done);
    free(buf);
    if (st != TK_OK)
        return st;
    return tk_out_status(out);
}
