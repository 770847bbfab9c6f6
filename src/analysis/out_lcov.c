/* SPDX-License-Identifier: BSD-2-Clause */
/* Coverage as an lcov tracefile (geninfo(1), "TRACEFILE FORMAT"), per source file:
 *   FN:<line>,<name>  FNDA:<count>,<name>  FNF/FNH
 *   BRDA:<line>,<block>,<branch>,<taken|->  BRF/BRH   (branch 0 taken, 1 not taken)
 *   DA:<line>,<count>  LF/LH
 * Every line that has code in the DWARF line table is listed, so lines that never ran show
 * with count 0. A line's count is the largest count among its instructions; a function's is
 * how many times its first instruction ran; conditional branches come from a scan of each
 * DWARF function's code, so branches that never executed show as "-". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "pair_map.h"
#include "profile_internal.h"
#include "util/sort.h"

typedef struct cov_branch {
    const char *file;
    unsigned line;
    uint64_t addr;
    bool executed;
    uint64_t taken, not_taken;
} cov_branch;

static int cmp_cov_branch(const void *a, const void *b)
{
    const cov_branch *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_func_file(const void *a, const void *b)
{
    const tk_line_func *x = *(const tk_line_func *const *)a, *y = *(const tk_line_func *const *)b;
    int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
    if (c)
        return c;
    return x->decl_line < y->decl_line ? -1 : x->decl_line > y->decl_line;
}

static const tk_prof_branch *find_branch(const tk_profile *p, uint64_t addr)
{
    size_t lo = tk_count_keys_u64(p->branches, p->nbranches, sizeof(*p->branches),
                                  offsetof(tk_prof_branch, addr), addr, false);
    return lo < p->nbranches && p->branches[lo].addr == addr ? &p->branches[lo] : NULL;
}

/* Conditional branches of every DWARF function, with their outcomes. */
static tk_status scan_branches(const tk_profile *p, tk_line_table *lt, cov_branch **out, size_t *n)
{
    size_t cap = 0;
    size_t nf = tk_line_table_func_count(lt);
    for (size_t fi = 0; fi < nf; fi++) {
        const tk_line_func *lf = tk_line_table_func_at(lt, fi);
        for (uint64_t addr = lf->low; addr < lf->high;) {
            tk_code_insn in;
            if (p->code.insn(p->code.ctx, addr, &in) != TK_OK || !in.len)
                break; /* data in code or no code: stop at what is known */
            const char *file;
            unsigned line;
            if (in.cond_branch && tk_line_table_lookup(lt, addr, &file, &line) == TK_OK && line) {
                tk_status st = TK_GROW(*out, *n, cap, *n + 1);
                if (st != TK_OK)
                    return st;
                const tk_prof_branch *b = find_branch(p, addr);
                (*out)[(*n)++] = (cov_branch){
                    .file = file,
                    .line = line,
                    .addr = addr,
                    .executed = tk_profile_find_insn(p, addr) != SIZE_MAX,
                    .taken = b ? b->taken : 0,
                    .not_taken = b ? b->not_taken : 0,
                };
            }
            addr += in.len;
        }
    }
    if (*n)
        qsort(*out, *n, sizeof(**out), cmp_cov_branch);
    return TK_OK;
}

/* Largest instruction count per (file, line). */
static tk_status line_counts(const tk_profile *p, tk_line_table *lt, tk_pair_map *map,
                             uint64_t **counts, size_t *n)
{
    size_t cap = 0;
    for (size_t i = 0; i < p->ninsns; i++) {
        const char *file;
        unsigned line;
        if (tk_line_table_lookup(lt, p->insns[i].addr, &file, &line) != TK_OK)
            continue;
        uint32_t idx = (uint32_t)*n;
        int inserted = 0;
        tk_status st = tk_pair_map_put(map, (uint64_t)(uintptr_t)file, line, &idx, &inserted);
        if (st != TK_OK)
            return st;
        if (inserted) {
            if ((st = TK_GROW(*counts, *n, cap, *n + 1)) != TK_OK)
                return st;
            (*counts)[(*n)++] = 0;
        }
        if (p->insns[i].count > (*counts)[idx])
            (*counts)[idx] = p->insns[i].count;
    }
    return TK_OK;
}

static uint64_t func_count(const tk_profile *p, uint64_t addr)
{
    size_t i = tk_profile_find_insn(p, addr);
    return i == SIZE_MAX ? 0 : p->insns[i].count;
}

tk_status tk_coverage_write_lcov(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    if (!p->finished)
        return TK_ERR_STATE;
    if (!o || !o->lines)
        return TK_ERR_UNSUPPORTED;
    tk_line_table *lt = o->lines;
    cov_branch *br = NULL;
    size_t nbr = 0;
    uint64_t *counts = NULL;
    size_t ncounts = 0;
    tk_pair_map map;
    tk_pair_map_init(&map);
    size_t nf = tk_line_table_func_count(lt);
    const tk_line_func **funcs = malloc((nf ? nf : 1) * sizeof(*funcs));
    tk_status st = funcs ? TK_OK : TK_ERR_NOMEM;
    size_t nfuncs = 0;
    for (size_t i = 0; st == TK_OK && i < nf; i++) {
        const tk_line_func *lf = tk_line_table_func_at(lt, i);
        if (lf->file && lf->decl_line)
            funcs[nfuncs++] = lf;
    }
    if (nfuncs)
        qsort(funcs, nfuncs, sizeof(*funcs), cmp_func_file);
    if (st == TK_OK)
        st = scan_branches(p, lt, &br, &nbr);
    if (st == TK_OK)
        st = line_counts(p, lt, &map, &counts, &ncounts);

    size_t nl = st == TK_OK ? tk_line_table_line_count(lt) : 0;
    size_t fi = 0, bi = 0;
    for (size_t li = 0; li < nl;) {
        const char *file = tk_line_table_line(lt, li)->file;
        if (o->want_file && !o->want_file(o->want_file_ctx, file)) {
            while (li < nl && !strcmp(tk_line_table_line(lt, li)->file, file))
                li++;
            continue;
        }
        fprintf(out, "TN:%s\nSF:%s\n", o->test_name ? o->test_name : "", file);

        /* Functions declared in this file (both lists are sorted by file name). */
        while (fi < nfuncs && strcmp(funcs[fi]->file, file) < 0)
            fi++;
        size_t f0 = fi, fhit = 0;
        for (; fi < nfuncs && !strcmp(funcs[fi]->file, file); fi++)
            fprintf(out, "FN:%u,%s\n", funcs[fi]->decl_line, funcs[fi]->name);
        for (size_t k = f0; k < fi; k++) {
            uint64_t c = func_count(p, funcs[k]->low);
            fhit += c > 0;
            fprintf(out, "FNDA:%" PRIu64 ",%s\n", c, funcs[k]->name);
        }
        fprintf(out, "FNF:%zu\nFNH:%zu\n", fi - f0, fhit);

        while (bi < nbr && strcmp(br[bi].file, file) < 0)
            bi++;
        size_t b0 = bi, bhit = 0;
        unsigned block = 0, prev_line = 0;
        for (; bi < nbr && !strcmp(br[bi].file, file); bi++) {
            const cov_branch *b = &br[bi];
            /* Block numbers tell apart several branches on one line. */
            block = b->line == prev_line ? block + 1 : 0;
            prev_line = b->line;
            if (b->executed) {
                fprintf(out, "BRDA:%u,%u,0,%" PRIu64 "\nBRDA:%u,%u,1,%" PRIu64 "\n", b->line, block,
                        b->taken, b->line, block, b->not_taken);
                bhit += (b->taken > 0) + (b->not_taken > 0);
            } else {
                fprintf(out, "BRDA:%u,%u,0,-\nBRDA:%u,%u,1,-\n", b->line, block, b->line, block);
            }
        }
        fprintf(out, "BRF:%zu\nBRH:%zu\n", 2 * (bi - b0), bhit);

        size_t lf = 0, lh = 0;
        for (; li < nl && !strcmp(tk_line_table_line(lt, li)->file, file); li++) {
            const tk_source_line *sl = tk_line_table_line(lt, li);
            uint32_t idx = tk_pair_map_get(&map, (uint64_t)(uintptr_t)sl->file, sl->line);
            uint64_t c = idx == TK_PAIR_NONE ? 0 : counts[idx];
            fprintf(out, "DA:%u,%" PRIu64 "\n", sl->line, c);
            lf++;
            lh += c > 0;
        }
        fprintf(out, "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
    }
    free(funcs);
    free(br);
    free(counts);
    tk_pair_map_fini(&map);
    if (st != TK_OK)
        return st;
    return tk_out_status(out);
}
