/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference flow's spike CSV (spec/VERSIONS.md C.4): VALID,ADDRESS,INSN,PRIVILEGE,
 * EXCEPTION,ECAUSE,TVAL,INTERRUPT, hex without 0x except the 0/1 flags. Values are kept at
 * full width here; the converter applies post-iss's 8-bit truncations in reference mode. */
#include <inttypes.h>
#include <stdlib.h>
#include <strings.h>

#include "ingress_lines.h"
#include "util/hex.h"
#include "tracekit/te_ingress.h"

static const char *const spike_cols[8] = {"VALID",     "ADDRESS", "INSN", "PRIVILEGE",
                                          "EXCEPTION", "ECAUSE",  "TVAL", "INTERRUPT"};

struct tk_spike_reader {
    tk_lines *lines;
};

tk_status tk_spike_open(const char *path, tk_spike_reader **out, tk_diag *diag)
{
    *out = NULL;
    tk_spike_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
    tk_status st = tk_lines_open(path, &r->lines, diag);
    if (st != TK_OK) {
        free(r);
        return st;
    }
    *out = r;
    return TK_OK;
}

static bool is_header(char **f, size_t n)
{
    if (n != 8)
        return false;
    for (size_t i = 0; i < 8; i++)
        if (strcasecmp(f[i], spike_cols[i]))
            return false;
    return true;
}

/* The checks and conversions of one row's eight values. */
static tk_status finish_row(tk_spike_reader *r, const uint64_t *v, tk_spike_row *out, tk_diag *diag)
{
    if (v[0] != 1)
        return tk_lines_error(r->lines, diag, TK_ERR_FORMAT,
                              "VALID is %" PRIu64 ", only valid rows (1) are supported", v[0]);
    if (v[3] > 0xff)
        return tk_lines_error(r->lines, diag, TK_ERR_FORMAT,
                              "PRIVILEGE: value %" PRIx64 " out of range", v[3]);
    out->address = v[1];
    out->insn = v[2];
    out->privilege = (uint8_t)v[3];
    /* post-iss reads the flags with %d and tests them as booleans */
    out->exception = v[4] != 0;
    out->ecause = v[5];
    out->tval = v[6];
    out->interrupt = v[7] != 0;
    return TK_OK;
}

tk_status tk_spike_next(tk_spike_reader *r, tk_spike_row *out, tk_diag *diag)
{
    for (;;) {
        char *line, *f[9];
        size_t len;
        tk_status st = tk_lines_next(r->lines, &line, &len, diag);
        if (st != TK_OK)
            return st;
        /* VALID, EXCEPTION and INTERRUPT decimal, the rest hex */
        static const uint8_t identity[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        uint64_t v[8];
        if (tk_lines_number(r->lines) > 1 && tk_csv_parse_numbers(line, 8, 0x6e, identity, v) == 0)
            return finish_row(r, v, out, diag);
        size_t n = tk_csv_split(line, f, 9);
        /* The header line is optional (post-iss skips a first line that is not a row). */
        if (tk_lines_number(r->lines) == 1 && is_header(f, n))
            continue;
        if (n != 8)
            return tk_lines_error(r->lines, diag, TK_ERR_FORMAT,
                                  "%zu fields, a spike row has 8 (%s,...)", n, spike_cols[0]);
        for (int i = 0; i < 8; i++) {
            bool dec = i == 0 || i == 4 || i == 7;
            int e = dec ? tk_parse_dec(f[i], &v[i]) : tk_parse_hex(f[i], &v[i]);
            if (e)
                return tk_lines_error(r->lines, diag, TK_ERR_FORMAT, "%s: %s '%s'", spike_cols[i],
                                      e == -2 ? "value too large:"
                                      : dec   ? "not a decimal number:"
                                              : "not a hex number:",
                                      f[i]);
        }
        return finish_row(r, v, out, diag);
    }
}

uint64_t tk_spike_line(const tk_spike_reader *r)
{
    return tk_lines_number(r->lines);
}

void tk_spike_close(tk_spike_reader *r)
{
    if (!r)
        return;
    tk_lines_close(r->lines);
    free(r);
}

tk_status tk_spike_write_header(FILE *out)
{
    return fputs("VALID,ADDRESS,INSN,PRIVILEGE,EXCEPTION,ECAUSE,TVAL,INTERRUPT\n", out) < 0
               ? TK_ERR_IO
               : TK_OK;
}

tk_status tk_spike_write_row(FILE *out, const tk_spike_row *row)
{
    char buf[8 * 21 + 16], *q = buf; /* tk_put_hex stores up to 16 bytes at a time */
    *q++ = '1';
    *q++ = ',';
    q = tk_put_hex(q, row->address);
    *q++ = ',';
    q = tk_put_hex(q, row->insn);
    *q++ = ',';
    q = tk_put_hex(q, row->privilege);
    *q++ = ',';
    *q++ = row->exception ? '1' : '0';
    *q++ = ',';
    q = tk_put_hex(q, row->ecause);
    *q++ = ',';
    q = tk_put_hex(q, row->tval);
    *q++ = ',';
    *q++ = row->interrupt ? '1' : '0';
    *q++ = '\n';
    const size_t n = (size_t)(q - buf);
    return fwrite(buf, 1, n, out) == n ? TK_OK : TK_ERR_IO;
}
