/* SPDX-License-Identifier: BSD-2-Clause */
/* Source lines from the DWARF line tables (libdw). All compile units' rows are collected
 * once, on first use, into one address-sorted table; a query is a binary search. */
#include <stddef.h>

#include "image_internal.h"
#include "util/sort.h"

#include <elfutils/libdw.h>
#include <stdlib.h>

typedef struct row_ix {
    tk_line_row row;
    size_t order; /* position in the line program: ties keep program order */
} row_ix;

static int cmp_row(const void *a, const void *b)
{
    const row_ix *x = a, *y = b;
    if (x->row.addr != y->row.addr)
        return x->row.addr < y->row.addr ? -1 : 1;
    /* An end_sequence row closes the previous range at the address where the next one may
     * start: put it first so the lookup lands on the opening row. */
    if (x->row.end_seq != y->row.end_seq)
        return x->row.end_seq ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void build_lines(tk_image *img)
{
    Dwarf_Off off = 0, next;
    size_t hsize, n = 0, cap = 0;
    row_ix *rows = NULL;

    img->lines_built = true;
    if (!img->elf)
        return;
    img->dwarf = dwarf_begin_elf(img->elf, DWARF_C_READ, NULL);
    if (!img->dwarf)
        return;
    while (dwarf_nextcu(img->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Lines *lines;
        size_t nl;

        if (dwarf_offdie(img->dwarf, off + hsize, &cu) &&
            dwarf_getsrclines(&cu, &lines, &nl) == 0) {
            for (size_t i = 0; i < nl; i++) {
                Dwarf_Line *l = dwarf_onesrcline(lines, i);
                Dwarf_Addr a;
                int ln = 0;
                bool end = false;
                if (!l || dwarf_lineaddr(l, &a) != 0)
                    continue;
                dwarf_lineno(l, &ln);
                dwarf_lineendsequence(l, &end);
                if (n == cap) {
                    size_t ncap = cap ? cap * 2 : 1024;
                    row_ix *r = realloc(rows, ncap * sizeof(*rows));
                    if (!r) {
                        free(rows);
                        return; /* no lines rather than partial ones */
                    }
                    rows = r;
                    cap = ncap;
                }
                rows[n].row.addr = a;
                rows[n].row.file = dwarf_linesrc(l, NULL, NULL);
                rows[n].row.line = ln;
                rows[n].row.end_seq = end;
                rows[n].order = n;
                n++;
            }
        }
        off = next;
    }
    if (!n) {
        free(rows);
        return;
    }
    qsort(rows, n, sizeof(*rows), cmp_row);
    img->lines = malloc(n * sizeof(*img->lines));
    if (img->lines) {
        for (size_t i = 0; i < n; i++)
            img->lines[i] = rows[i].row;
        img->nlines = n;
    }
    free(rows);
}

tk_status tk_image_source_line(tk_image *img, uint64_t addr, const char **file, int *line)
{
    const tk_line_row *r;

    if (!img)
        return TK_ERR_INVALID;
    if (!img->lines_built)
        build_lines(img);
    /* rows are sorted by address: the last one at or before addr */
    const size_t lo = tk_count_keys_u64(img->lines, img->nlines, sizeof(*img->lines),
                                        offsetof(tk_line_row, addr), addr, true);
    if (lo == 0)
        return TK_END;
    r = &img->lines[lo - 1];
    if (r->end_seq || !r->file)
        return TK_END;
    if (file)
        *file = r->file;
    if (line)
        *line = r->line;
    return TK_OK;
}

void tk_image_free_lines(tk_image *img)
{
    free(img->lines);
    img->lines = NULL;
    img->nlines = 0;
    if (img->dwarf)
        dwarf_end(img->dwarf);
    img->dwarf = NULL;
}
