/* SPDX-License-Identifier: BSD-2-Clause */
#include "ingress_lines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Large reads keep zlib's per-call overhead off the per-row path. */
#define TK_LINES_CHUNK (1u << 16)

struct tk_lines {
    gzFile gz;
    char *buf;
    size_t cap;   /* allocated bytes */
    size_t start; /* first byte not yet returned */
    size_t end;   /* bytes of valid data in buf */
    int eof;
    uint64_t line;
    char *path;
};

tk_status tk_lines_open(const char *path, tk_lines **out, tk_diag *diag)
{
    *out = NULL;
    tk_lines *r = calloc(1, sizeof(*r));
    if (!r)
        return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
    r->path = strdup(path);
    r->cap = TK_LINES_CHUNK + 1;
    r->buf = malloc(r->cap);
    if (!r->path || !r->buf) {
        tk_lines_close(r);
        return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
    }
    /* gzopen reads files without a gzip header transparently. */
    r->gz = gzopen(path, "rb");
    if (!r->gz) {
        tk_status st = tk_diag_set(diag, TK_ERR_IO, "%s: cannot open: %s", path,
                                   errno ? strerror(errno) : "zlib error");
        tk_lines_close(r);
        return st;
    }
    gzbuffer(r->gz, TK_LINES_CHUNK);
    *out = r;
    return TK_OK;
}

/* Move the unread tail to the front and read more; grows the buffer for very long lines. */
static tk_status refill(tk_lines *r, tk_diag *diag)
{
    size_t keep = r->end - r->start;
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, keep);
        r->start = 0;
        r->end = keep;
    }
    if (r->cap - 1 - r->end < TK_LINES_CHUNK / 2) {
        size_t ncap = r->cap * 2;
        char *nb = realloc(r->buf, ncap);
        if (!nb)
            return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
        r->buf = nb;
        r->cap = ncap;
    }
    int n = gzread(r->gz, r->buf + r->end, (unsigned)(r->cap - 1 - r->end));
    if (n < 0) {
        int err = 0;
        const char *msg = gzerror(r->gz, &err);
        tk_diag_set(diag, TK_ERR_IO, "%s: line %llu: read error: %s", r->path,
                    (unsigned long long)r->line + 1, msg);
        if (diag)
            diag->line = r->line + 1;
        return TK_ERR_IO;
    }
    if (n == 0)
        r->eof = 1;
    r->end += (size_t)n;
    return TK_OK;
}

tk_status tk_lines_next(tk_lines *r, char **line, size_t *len, tk_diag *diag)
{
    for (;;) {
        char *s = r->buf + r->start;
        size_t avail = r->end - r->start;
        char *nl = avail ? memchr(s, '\n', avail) : NULL;
        if (nl || (r->eof && avail)) {
            size_t n = nl ? (size_t)(nl - s) : avail;
            r->start += nl ? n + 1 : n;
            if (n && s[n - 1] == '\r')
                n--;
            s[n] = '\0';
            r->line++;
            *line = s;
            *len = n;
            return TK_OK;
        }
        if (r->eof)
            return TK_END;
        tk_status st = refill(r, diag);
        if (st != TK_OK)
            return st;
    }
}

uint64_t tk_lines_number(const tk_lines *r)
{
    return r->line;
}

const char *tk_lines_path(const tk_lines *r)
{
    return r->path;
}

void tk_lines_close(tk_lines *r)
{
    if (!r)
        return;
    if (r->gz)
        gzclose(r->gz);
    free(r->buf);
    free(r->path);
    free(r);
}

size_t tk_csv_split(char *line, char **fields, size_t max)
{
    /* Fields are a few characters long: a plain loop beats strchr's per-call setup. */
    size_t n = 0;
    char *p = line;
    if (max)
        fields[0] = p;
    for (;; p++) {
        if (*p == ',') {
            *p = '\0';
            if (++n < max)
                fields[n] = p + 1;
        } else if (*p == '\0') {
            return n + 1;
        }
    }
}

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

static int finish_number(const char *s, int digits)
{
    s = skip_blank(s);
    return (digits && *s == '\0') ? 0 : -1;
}

int tk_parse_dec(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    s = skip_blank(s);
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -2;
        v = v * 10 + d;
    }
    if (finish_number(s, digits))
        return -1;
    *out = v;
    return 0;
}

int tk_parse_hex(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    s = skip_blank(s);
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    for (;; s++, digits++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (*s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (*s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            break;
        if (v >> 60)
            return -2;
        v = (v << 4) | d;
    }
    if (finish_number(s, digits))
        return -1;
    *out = v;
    return 0;
}

/* Value of each character as a hex digit, 16 for anything else. */
static const uint8_t hex_value[256] = {
    ['0'] = 0,  ['1'] = 1,  ['2'] = 2,  ['3'] = 3,  ['4'] = 4,  ['5'] = 5,  ['6'] = 6,  ['7'] = 7,
    ['8'] = 8,  ['9'] = 9,  ['a'] = 10, ['b'] = 11, ['c'] = 12, ['d'] = 13, ['e'] = 14, ['f'] = 15,
    ['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14, ['F'] = 15,
};

static bool is_hex_digit(unsigned char c)
{
    return hex_value[c] != 0 || c == '0';
}

static const unsigned char *skip_blanks(const unsigned char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

int tk_csv_parse_numbers(const char *line, size_t nf, uint64_t hex_mask, const uint8_t *slot,
                         uint64_t *out)
{
    const unsigned char *p = (const unsigned char *)line;
    for (size_t i = 0; i < nf; i++) {
        const unsigned char sep = i + 1 < nf ? ',' : '\0';
        const unsigned d1 = (unsigned)p[0] - '0';
        if (d1 < 10 && p[1] == sep) { /* one digit: most fields of an ingress row */
            out[slot[i]] = d1;
            p += 2;
            continue;
        }
        if (*p <= ' ') /* blanks are rare: one compare in the common case */
            p = skip_blanks(p);
        const unsigned char *d0 = p;
        uint64_t v = 0;
        if ((hex_mask >> i) & 1u) {
            if (p[0] == '0' && (p[1] | 0x20) == 'x')
                d0 = p += 2;
            for (; is_hex_digit(*p); p++)
                v = (v << 4) | hex_value[*p];
            /* more than 16 digits may not fit (or have leading zeros): the caller decides */
            if (p == d0 || p - d0 > 16)
                return -1;
        } else {
            for (unsigned d; (d = (unsigned)*p - '0') < 10; p++)
                v = v * 10 + d;
            /* any 19 digits fit 64 bits; longer numbers go the careful way */
            if (p == d0 || p - d0 > 19)
                return -1;
        }
        if (*p != sep) {
            p = skip_blanks(p);
            if (*p != sep)
                return -1;
        }
        p++;
        out[slot[i]] = v;
    }
    return 0;
}

tk_status tk_lines_error(const tk_lines *r, tk_diag *diag, tk_status status, const char *fmt, ...)
{
    if (!diag)
        return status;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tk_diag_set(diag, status, "%s:%llu: %s", r->path, (unsigned long long)r->line, msg);
    diag->line = r->line;
    return status;
}
