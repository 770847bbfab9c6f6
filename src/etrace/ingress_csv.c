/* SPDX-License-Identifier: BSD-2-Clause */
/* Reader and writer of the reference flow's .encoder_input CSV (spec/VERSIONS.md C.5):
 * columns found by header name; itype, cause, priv, context, time, ctype, sijump, iretire and
 * ilastsize are decimal, tval and iaddr hex. The file's iretire counts instructions; the
 * block's counts half-words (2.0 multiple-retirement meaning), converted with ilastsize. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ingress_lines.h"
#include "util/hex.h"
#include "tracekit/te_ingress.h"

enum col {
    COL_ITYPE,
    COL_CAUSE,
    COL_TVAL,
    COL_PRIV,
    COL_IADDR,
    COL_CONTEXT,
    COL_TIME,
    COL_CTYPE,
    COL_SIJUMP,
    COL_IRETIRE,
    COL_ILASTSIZE,
    /* tracekit extensions (never written unless set; the reference model rejects them) */
    COL_TRIGGER,
    COL_HALTED,
    COL_RESET,
    COL_COUNT
};

static const struct {
    const char *name;
    bool required;
    bool hex;
} cols[COL_COUNT] = {
    [COL_ITYPE] = {"itype_0", true, false},
    [COL_CAUSE] = {"cause", true, false},
    [COL_TVAL] = {"tval", true, true},
    [COL_PRIV] = {"priv", true, false},
    [COL_IADDR] = {"iaddr_0", true, true},
    [COL_CONTEXT] = {"context", false, false},
    [COL_TIME] = {"time", false, false},
    [COL_CTYPE] = {"ctype", false, false},
    [COL_SIJUMP] = {"sijump_0", false, false},
    [COL_IRETIRE] = {"iretire_0", true, false},
    [COL_ILASTSIZE] = {"ilastsize_0", true, false},
    [COL_TRIGGER] = {"trigger", false, false},
    [COL_HALTED] = {"halted", false, false},
    [COL_RESET] = {"reset", false, false},
};

#define MAX_FIELDS 32

struct tk_te_ingress_reader {
    tk_lines *lines;
    int index[COL_COUNT]; /* field index of each column, -1 if absent */
    size_t nfields;
    uint8_t slot[MAX_FIELDS]; /* column of each field */
    uint64_t hex_mask;        /* fields in hex */
};

static tk_status read_header(tk_te_ingress_reader *r, tk_diag *diag)
{
    char *line, *f[MAX_FIELDS];
    size_t len;
    tk_status st = tk_lines_next(r->lines, &line, &len, diag);
    if (st == TK_END)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: empty file, expected a header line",
                           tk_lines_path(r->lines));
    if (st != TK_OK)
        return st;
    size_t n = tk_csv_split(line, f, MAX_FIELDS);
    if (n > MAX_FIELDS)
        return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "too many columns in header (%zu)", n);
    for (int c = 0; c < COL_COUNT; c++)
        r->index[c] = -1;
    for (size_t i = 0; i < n; i++) {
        int c;
        for (c = 0; c < COL_COUNT; c++)
            if (!strcmp(f[i], cols[c].name))
                break;
        if (c == COL_COUNT) {
            /* itype_1, iaddr_1...: retires_p > 1 columns, which the reference never fills. */
            return tk_lines_error(r->lines, diag,
                                  strchr(f[i], '_') && f[i][strlen(f[i]) - 1] != '0'
                                      ? TK_ERR_UNSUPPORTED
                                      : TK_ERR_FORMAT,
                                  "unknown column '%s' in header", f[i]);
        }
        if (r->index[c] >= 0)
            return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "column '%s' appears twice", f[i]);
        r->index[c] = (int)i;
        r->slot[i] = (uint8_t)c;
        if (cols[c].hex)
            r->hex_mask |= (uint64_t)1 << i;
    }
    for (int c = 0; c < COL_COUNT; c++)
        if (cols[c].required && r->index[c] < 0)
            return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "header lacks column '%s'",
                                  cols[c].name);
    r->nfields = n;
    return TK_OK;
}

tk_status tk_te_ingress_open(const char *path, tk_te_ingress_reader **out, tk_diag *diag)
{
    *out = NULL;
    tk_te_ingress_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
    tk_status st = tk_lines_open(path, &r->lines, diag);
    if (st == TK_OK)
        st = read_header(r, diag);
    if (st != TK_OK) {
        tk_te_ingress_close(r);
        return st;
    }
    *out = r;
    return TK_OK;
}

/* The slow path of a row the one-pass parser did not take: field by field, for the message
 * (or the values, should the two ever disagree). */
static tk_status parse_fields(tk_te_ingress_reader *r, char *line, uint64_t *v, tk_diag *diag)
{
    char *f[MAX_FIELDS];
    size_t n = tk_csv_split(line, f, MAX_FIELDS);
    if (n != r->nfields)
        return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "%zu fields, the header has %zu", n,
                              r->nfields);
    for (int c = 0; c < COL_COUNT; c++) {
        if (r->index[c] < 0)
            continue;
        const char *s = f[r->index[c]];
        int e = cols[c].hex ? tk_parse_hex(s, &v[c]) : tk_parse_dec(s, &v[c]);
        if (e)
            return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "column '%s': %s '%s'",
                                  cols[c].name,
                                  e == -2       ? "value too large:"
                                  : cols[c].hex ? "not a hex number:"
                                                : "not a decimal number:",
                                  s);
    }
    return TK_OK;
}

static tk_status out_of_range(tk_te_ingress_reader *r, const uint64_t *v, tk_diag *diag)
{
    static const struct {
        int col;
        uint64_t max;
    } limits[] = {{COL_ITYPE, 15}, {COL_CAUSE, UINT32_MAX}, {COL_PRIV, 7},    {COL_CTYPE, 3},
                  {COL_SIJUMP, 1}, {COL_ILASTSIZE, 3},      {COL_TRIGGER, 7}, {COL_HALTED, 1},
                  {COL_RESET, 1},  {COL_IRETIRE, 1u << 16}};
    for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++)
        if (v[limits[i].col] > limits[i].max)
            return tk_lines_error(r->lines, diag, TK_ERR_FORMAT,
                                  "column '%s': %" PRIu64 " is out of range (max %" PRIu64 ")",
                                  cols[limits[i].col].name, v[limits[i].col], limits[i].max);
    return TK_ERR_FORMAT;
}

tk_status tk_te_ingress_next(tk_te_ingress_reader *r, tk_te_block *out, tk_diag *diag)
{
    char *line;
    size_t len;
    tk_status st = tk_lines_next(r->lines, &line, &len, diag);
    if (st != TK_OK)
        return st;
    uint64_t v[COL_COUNT] = {0};
    if (tk_csv_parse_numbers(line, r->nfields, r->hex_mask, r->slot, v) != 0 &&
        (st = parse_fields(r, line, v, diag)) != TK_OK)
        return st;
    /* one test for the common row, the loop only for the message */
    if ((v[COL_ITYPE] > 15) | (v[COL_CAUSE] > UINT32_MAX) | (v[COL_PRIV] > 7) | (v[COL_CTYPE] > 3) |
        (v[COL_SIJUMP] > 1) | (v[COL_ILASTSIZE] > 3) | (v[COL_TRIGGER] > 7) | (v[COL_HALTED] > 1) |
        (v[COL_RESET] > 1) | (v[COL_IRETIRE] > 1u << 16))
        return out_of_range(r, v, diag);
    /* every field of the block is set (no memset per row): keep this list complete */
    _Static_assert(sizeof(tk_te_block) == 4 * 8 + 2 * 4 + 8, "tk_te_block grew: set the new field");
    out->itype = (uint8_t)v[COL_ITYPE];
    out->cause = (uint32_t)v[COL_CAUSE];
    out->tval = v[COL_TVAL];
    out->priv = (uint8_t)v[COL_PRIV];
    out->iaddr = v[COL_IADDR];
    out->context = v[COL_CONTEXT];
    out->time = v[COL_TIME];
    out->ctype = (uint8_t)v[COL_CTYPE];
    out->sijump = (uint8_t)v[COL_SIJUMP];
    out->ilastsize = (uint8_t)v[COL_ILASTSIZE];
    /* Instruction count to half-words: exact for single retirement (0 or 1 instruction). */
    out->iretire = (uint32_t)(v[COL_IRETIRE] << out->ilastsize);
    out->trigger = (uint8_t)v[COL_TRIGGER];
    out->halted = (uint8_t)v[COL_HALTED];
    out->reset = (uint8_t)v[COL_RESET];
    return TK_OK;
}

void tk_te_ingress_close(tk_te_ingress_reader *r)
{
    if (!r)
        return;
    tk_lines_close(r->lines);
    free(r);
}

uint64_t tk_te_ingress_line(const tk_te_ingress_reader *r)
{
    return tk_lines_number(r->lines);
}

/* Column order of post-iss (C.5): context and ctype iff !nocontext, time iff !notime, sijump
 * iff sijump_p. */
tk_status tk_te_ingress_write_header(FILE *out, const tk_te_params *p)
{
    int n = fprintf(out, "itype_0,cause,tval,priv,iaddr_0,%s%s%s%siretire_0,ilastsize_0\n",
                    p->s.nocontext ? "" : "context,", p->s.notime ? "" : "time,",
                    p->s.nocontext ? "" : "ctype,", p->s.sijump ? "sijump_0," : "");
    return n < 0 ? TK_ERR_IO : TK_OK;
}

tk_status tk_te_ingress_write_block(FILE *out, const tk_te_params *p, const tk_te_block *b)
{
    /* at most 14 fields of 20 characters */
    char buf[14 * 21 + 16], *q = buf; /* tk_put_hex stores up to 16 bytes at a time */
    q = tk_put_dec(q, b->itype);
    *q++ = ',';
    q = tk_put_dec(q, b->cause);
    *q++ = ',';
    q = tk_put_hex(q, b->tval);
    *q++ = ',';
    q = tk_put_dec(q, b->priv);
    *q++ = ',';
    q = tk_put_hex(q, b->iaddr);
    *q++ = ',';
    if (!p->s.nocontext) {
        q = tk_put_dec(q, b->context);
        *q++ = ',';
    }
    if (!p->s.notime) {
        q = tk_put_dec(q, b->time);
        *q++ = ',';
    }
    if (!p->s.nocontext) {
        q = tk_put_dec(q, b->ctype);
        *q++ = ',';
    }
    if (p->s.sijump) {
        *q++ = b->sijump ? '1' : '0';
        *q++ = ',';
    }
    /* Half-words back to an instruction count (exact for single retirement). */
    q = tk_put_dec(q, b->iretire >> b->ilastsize);
    *q++ = ',';
    q = tk_put_dec(q, b->ilastsize);
    *q++ = '\n';
    const size_t n = (size_t)(q - buf);
    return fwrite(buf, 1, n, out) == n ? TK_OK : TK_ERR_IO;
}
