/* SPDX-License-Identifier: BSD-2-Clause */
/* A write buffer for the profile writers whose output is one short line per instruction or
 * branch (hundreds of thousands of them): the lines are formatted in place with the number
 * helpers of util/hex.h and handed to stdio in large blocks, because fprintf's parsing and
 * locking per line was most of a writer's cost. */
#ifndef TK_ANALYSIS_OUT_BUF_H
#define TK_ANALYSIS_OUT_BUF_H

#include <stdio.h>
#include <string.h>

#include "util/hex.h"

#define TK_OBUF_SIZE 16384u
/* The most one reservation may ask for: a line of a few numbers (tk_put_hex may store up to
 * 16 bytes past a number's end). */
#define TK_OBUF_LINE 128u

typedef struct tk_obuf {
    FILE *f;
    size_t n;
    char b[TK_OBUF_SIZE];
} tk_obuf;

static inline void tk_obuf_init(tk_obuf *o, FILE *f)
{
    o->f = f;
    o->n = 0;
}

static inline void tk_obuf_flush(tk_obuf *o)
{
    if (o->n)
        fwrite(o->b, 1, o->n, o->f);
    o->n = 0;
}

/* Room for a line of at most TK_OBUF_LINE bytes: write it at the pointer returned, then
 * tk_obuf_done with its end. */
static inline char *tk_obuf_line(tk_obuf *o)
{
    if (o->n + TK_OBUF_LINE > TK_OBUF_SIZE)
        tk_obuf_flush(o);
    return o->b + o->n;
}

static inline void tk_obuf_done(tk_obuf *o, const char *end)
{
    o->n = (size_t)(end - o->b);
}

/* Bytes of any number (names, paths). */
static inline void tk_obuf_mem(tk_obuf *o, const char *s, size_t len)
{
    if (o->n + len > TK_OBUF_SIZE) {
        tk_obuf_flush(o);
        if (len > TK_OBUF_SIZE) {
            fwrite(s, 1, len, o->f);
            return;
        }
    }
    memcpy(o->b + o->n, s, len);
    o->n += len;
}

static inline void tk_obuf_str(tk_obuf *o, const char *s)
{
    tk_obuf_mem(o, s, strlen(s));
}

/* text, then v in decimal. */
static inline void tk_obuf_dec(tk_obuf *o, const char *text, uint64_t v)
{
    tk_obuf_str(o, text);
    tk_obuf_done(o, tk_put_dec(tk_obuf_line(o), v));
}

/* text, then v as a JSON-style string "0x..." (quoted). */
static inline void tk_obuf_qhex(tk_obuf *o, const char *text, uint64_t v)
{
    tk_obuf_str(o, text);
    char *q = tk_obuf_line(o);
    memcpy(q, "\"0x", 3);
    q = tk_put_hex(q + 3, v);
    *q++ = '"';
    tk_obuf_done(o, q);
}

#endif
