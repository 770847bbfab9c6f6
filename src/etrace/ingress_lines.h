/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal: a line reader for the ingress CSV files (plain or gzip, through zlib) and the
 * field parsers they share. Not part of the public API. */
#ifndef TK_ETRACE_INGRESS_LINES_H
#define TK_ETRACE_INGRESS_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/status.h"

typedef struct tk_lines tk_lines;

tk_status tk_lines_open(const char *path, tk_lines **out, tk_diag *diag);
/* Next line without its end-of-line characters (NUL-terminated, writable until the next call).
 * TK_END at end of file. Empty lines are returned as such. */
tk_status tk_lines_next(tk_lines *r, char **line, size_t *len, tk_diag *diag);
/* 1-based number of the line last returned. */
uint64_t tk_lines_number(const tk_lines *r);
const char *tk_lines_path(const tk_lines *r);
void tk_lines_close(tk_lines *r);
/* Report an error at the line last returned: message "path:line: ...", diag->line set. */
tk_status tk_lines_error(const tk_lines *r, tk_diag *diag, tk_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Split line in place at commas; fills up to max field pointers, returns the field count
 * (which may exceed max: the caller reports that as an error). */
size_t tk_csv_split(char *line, char **fields, size_t max);

/* Strict number parsers for one CSV field (surrounding blanks allowed). Return 0 on success,
 * -1 if the text is not a number, -2 if it does not fit 64 bits. Hex accepts an optional 0x. */
int tk_parse_dec(const char *s, uint64_t *out);
int tk_parse_hex(const char *s, uint64_t *out);

/* One pass over a whole line of nf comma-separated numbers, the language of tk_csv_split and
 * the parsers above: field i is hex if bit i of hex_mask is set (i < 64), else decimal; its
 * value goes to out[slot[i]]. Returns 0, or -1 when the line is not exactly that (wrong
 * field count, not a number) or has a number of over 19 decimal or 16 hex digits (which may
 * still fit): the caller then splits and parses the line field by field, for the values or a
 * precise message. No locale, no allocation, no NUL written. */
int tk_csv_parse_numbers(const char *line, size_t nf, uint64_t hex_mask, const uint8_t *slot,
                         uint64_t *out);

#endif
