/* SPDX-License-Identifier: BSD-2-Clause */
/* Source lines and functions of a program, read once from DWARF (libdw) into flat sorted
 * arrays, so that coverage and sample profiles can map every executed instruction to a line
 * and list the lines that never ran. */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"
#include "tracekit/analysis.h"
#include "util/sort.h"

typedef struct lt_row {
    uint64_t addr;
    uint32_t file;
    uint32_t line;
    uint32_t order; /* insertion order, to keep DWARF's "last row at an address wins" */
    bool end;
} lt_row;

struct tk_line_table {
    char **files;
    size_t nfiles, cap_files;
    size_t last_file; /* interning cache */
    lt_row *rows;
    size_t nrows, cap_rows;
    bool rows_sorted;
    tk_line_func *funcs;
    size_t nfuncs, cap_funcs;
    bool funcs_sorted;
    tk_source_line *lines;
    size_t nlines;
    bool lines_built;
};

tk_status tk_line_table_new(tk_line_table **out)
{
    if (!out)
        return TK_ERR_INVALID;
    *out = calloc(1, sizeof(**out));
    return *out ? TK_OK : TK_ERR_NOMEM;
}

void tk_line_table_free(tk_line_table *lt)
{
    if (!lt)
        return;
    for (size_t i = 0; i < lt->nfiles; i++)
        free(lt->files[i]);
    free(lt->files);
    for (size_t i = 0; i < lt->nfuncs; i++)
        free((char *)lt->funcs[i].name);
    free(lt->funcs);
    free(lt->rows);
    free(lt->lines);
    free(lt);
}

static tk_status intern(tk_line_table *lt, const char *file, uint32_t *out)
{
    if (lt->last_file < lt->nfiles && !strcmp(lt->files[lt->last_file], file)) {
        *out = (uint32_t)lt->last_file;
        return TK_OK;
    }
    for (size_t i = 0; i < lt->nfiles; i++) {
        if (!strcmp(lt->files[i], file)) {
            lt->last_file = i;
            *out = (uint32_t)i;
            return TK_OK;
        }
    }
    tk_status st = TK_GROW(lt->files, lt->nfiles, lt->cap_files, lt->nfiles + 1);
    if (st != TK_OK)
        return st;
    char *dup = strdup(file);
    if (!dup)
        return TK_ERR_NOMEM;
    lt->files[lt->nfiles] = dup;
    lt->last_file = lt->nfiles;
    *out = (uint32_t)lt->nfiles++;
    return TK_OK;
}

tk_status tk_line_table_add(tk_line_table *lt, uint64_t addr, const char *file, unsigned line,
                            bool end_sequence)
{
    if (!lt || (!file && !end_sequence))
        return TK_ERR_INVALID;
    uint32_t fi = 0;
    tk_status st = end_sequence && !file ? TK_OK : intern(lt, file, &fi);
    if (st != TK_OK)
        return st;
    if ((st = TK_GROW(lt->rows, lt->nrows, lt->cap_rows, lt->nrows + 1)) != TK_OK)
        return st;
    lt->rows[lt->nrows] = (lt_row){
        .addr = addr, .file = fi, .line = line, .order = (uint32_t)lt->nrows, .end = end_sequence};
    lt->nrows++;
    lt->rows_sorted = false;
    lt->lines_built = false;
    return TK_OK;
}

tk_status tk_line_table_add_func(tk_line_table *lt, const char *name, uint64_t low, uint64_t high,
                                 const char *file, unsigned decl_line)
{
    if (!lt || !name || high < low)
        return TK_ERR_INVALID;
    const char *f = NULL;
    tk_status st;
    if (file) {
        uint32_t fi;
        if ((st = intern(lt, file, &fi)) != TK_OK)
            return st;
        f = lt->files[fi];
    }
    if ((st = TK_GROW(lt->funcs, lt->nfuncs, lt->cap_funcs, lt->nfuncs + 1)) != TK_OK)
        return st;
    char *dup = strdup(name);
    if (!dup)
        return TK_ERR_NOMEM;
    lt->funcs[lt->nfuncs++] =
        (tk_line_func){.name = dup, .low = low, .high = high, .file = f, .decl_line = decl_line};
    lt->funcs_sorted = false;
    return TK_OK;
}

static int cmp_row(const void *a, const void *b)
{
    const lt_row *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* At one address a sequence's start wins over the previous sequence's end. */
    if (x->end != y->end)
        return x->end ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_func(const void *a, const void *b)
{
    const tk_line_func *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

tk_status tk_line_table_lookup(tk_line_table *lt, uint64_t addr, const char **file, unsigned *line)
{
    if (!lt->rows_sorted) {
        if (lt->nrows)
            qsort(lt->rows, lt->nrows, sizeof(*lt->rows), cmp_row);
        lt->rows_sorted = true;
    }
    /* Last row with row.addr <= addr. */
    size_t lo = tk_count_keys_u64(lt->rows, lt->nrows, sizeof(*lt->rows), offsetof(lt_row, addr),
                                  addr, true);
    if (!lo || lt->rows[lo - 1].end)
        return TK_END;
    const lt_row *r = &lt->rows[lo - 1];
    if (file)
        *file = lt->files[r->file];
    if (line)
        *line = r->line;
    return TK_OK;
}

const tk_line_func *tk_line_table_func(tk_line_table *lt, uint64_t addr)
{
    if (!lt->funcs_sorted) {
        if (lt->nfuncs)
            qsort(lt->funcs, lt->nfuncs, sizeof(*lt->funcs), cmp_func);
        lt->funcs_sorted = true;
    }
    size_t lo = tk_count_keys_u64(lt->funcs, lt->nfuncs, sizeof(*lt->funcs),
                                  offsetof(tk_line_func, low), addr, true);
    if (!lo)
        return NULL;
    const tk_line_func *f = &lt->funcs[lo - 1];
    return addr < f->high ? f : NULL;
}

size_t tk_line_table_func_count(tk_line_table *lt)
{
    return lt->nfuncs;
}

const tk_line_func *tk_line_table_func_at(tk_line_table *lt, size_t i)
{
    if (!lt->funcs_sorted) {
        if (lt->nfuncs)
            qsort(lt->funcs, lt->nfuncs, sizeof(*lt->funcs), cmp_func);
        lt->funcs_sorted = true;
    }
    return i < lt->nfuncs ? &lt->funcs[i] : NULL;
}

static int cmp_line(const void *a, const void *b)
{
    const tk_source_line *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    return x->line < y->line ? -1 : x->line > y->line;
}

/* A row has code if the next row (by address) starts later: rows that share an address
 * with the row after them cover no instruction. */
static bool row_has_code(const tk_line_table *lt, size_t i)
{
    const lt_row *r = &lt->rows[i];
    return !r->end && r->line && i + 1 < lt->nrows && lt->rows[i + 1].addr > r->addr;
}

static tk_status build_lines(tk_line_table *lt)
{
    if (!lt->rows_sorted) {
        if (lt->nrows)
            qsort(lt->rows, lt->nrows, sizeof(*lt->rows), cmp_row);
        lt->rows_sorted = true;
    }
    free(lt->lines);
    lt->lines = NULL;
    lt->nlines = 0;
    size_t n = 0;
    for (size_t i = 0; i < lt->nrows; i++)
        n += row_has_code(lt, i);
    if (n) {
        lt->lines = malloc(n * sizeof(*lt->lines));
        if (!lt->lines)
            return TK_ERR_NOMEM;
    }
    for (size_t i = 0; i < lt->nrows; i++)
        if (row_has_code(lt, i))
            lt->lines[lt->nlines++] =
                (tk_source_line){.file = lt->files[lt->rows[i].file], .line = lt->rows[i].line};
    if (lt->nlines)
        qsort(lt->lines, lt->nlines, sizeof(*lt->lines), cmp_line);
    size_t w = 0;
    for (size_t i = 0; i < lt->nlines; i++)
        if (!w || cmp_line(&lt->lines[w - 1], &lt->lines[i]))
            lt->lines[w++] = lt->lines[i];
    lt->nlines = w;
    lt->lines_built = true;
    return TK_OK;
}

size_t tk_line_table_line_count(tk_line_table *lt)
{
    if (!lt->lines_built && build_lines(lt) != TK_OK)
        return 0;
    return lt->nlines;
}

const tk_source_line *tk_line_table_line(tk_line_table *lt, size_t i)
{
    if (!lt->lines_built && build_lines(lt) != TK_OK)
        return NULL;
    return i < lt->nlines ? &lt->lines[i] : NULL;
}

/* ---- DWARF ------------------------------------------------------------------------------ */

static tk_status read_cu_lines(tk_line_table *lt, Dwarf_Die *cu)
{
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_getsrclines(cu, &lines, &n) != 0)
        return TK_OK; /* a unit without a line program (assembly without -g) */
    for (size_t i = 0; i < n; i++) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Addr addr;
        int line = 0;
        bool end = false;
        if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineno(l, &line) ||
            dwarf_lineendsequence(l, &end))
            continue;
        const char *file = dwarf_linesrc(l, NULL, NULL);
        if (!file)
            file = "??";
        tk_status st = tk_line_table_add(lt, addr, file, line > 0 ? (unsigned)line : 0, end);
        if (st != TK_OK)
            return st;
    }
    return TK_OK;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    /* The linkage name is what symbol tables and sample profiles use. */
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    return name;
}

static tk_status read_cu_funcs(tk_line_table *lt, Dwarf_Die *cu)
{
    Dwarf_Die child;
    if (dwarf_child(cu, &child) != 0)
        return TK_OK;
    do {
        if (dwarf_tag(&child) != DW_TAG_subprogram)
            continue;
        Dwarf_Addr lo, hi;
        if (dwarf_lowpc(&child, &lo) != 0 || dwarf_highpc(&child, &hi) != 0)
            continue; /* declaration or inlined-only */
        const char *name = die_name(&child);
        if (!name)
            continue;
        int decl = 0;
        if (dwarf_decl_line(&child, &decl) != 0)
            decl = 0;
        const char *file = dwarf_decl_file(&child);
        tk_status st =
            tk_line_table_add_func(lt, name, lo, hi, file, decl > 0 ? (unsigned)decl : 0);
        if (st != TK_OK)
            return st;
    } while (dwarf_siblingof(&child, &child) == 0);
    return TK_OK;
}

tk_status tk_line_table_open_elf(const char *path, tk_line_table **out, tk_diag *diag)
{
    if (!path || !out)
        return TK_ERR_INVALID;
    *out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, strerror(errno));
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    if (!dw) {
        close(fd);
        return tk_diag_set(diag, TK_ERR_UNSUPPORTED, "%s: no DWARF debug information (%s)", path,
                           dwarf_errmsg(-1));
    }
    tk_line_table *lt = NULL;
    tk_status st = tk_line_table_new(&lt);
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    uint8_t unit_type;
    Dwarf_Half version;
    while (st == TK_OK && dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
        if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
            continue;
        st = read_cu_lines(lt, &cudie);
        if (st == TK_OK)
            st = read_cu_funcs(lt, &cudie);
    }
    dwarf_end(dw);
    close(fd);
    if (st == TK_OK && !lt->nrows)
        st = tk_diag_set(diag, TK_ERR_UNSUPPORTED, "%s: no DWARF line table (build with -g)", path);
    if (st != TK_OK) {
        tk_line_table_free(lt);
        return st;
    }
    *out = lt;
    return TK_OK;
}
