/* SPDX-License-Identifier: BSD-2-Clause */
/* A write buffer for the profile writers whose output is one short line per instruction or
 * branch (hundreds of thousands of them): the lines are formatted in place with the number
 * helpers of util/hex.h and handed to stdio in large blocks, because fprintf's parsing and
 * locking per line was most of a writer's cost. */
#ifndef TK_ANALYSIS_OUT_BUF_H
#define TK_ANALYSIS_OUT_BUF_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/compiler.h"
#include "util/hex.h"

#define TK_OBUF_SIZE 16384u
/* The most one reservation may ask for: a line of a few numbers (tk_put_hex may store up to
 * 16 bytes past a number's end). */
#define TK_OBUF_LINE 128u

typedef struct tk_obuf {
    FILE *f;       /* where full buffers go (tk_obuf_init); NULL: memory (tk_obuf_init_mem) */
    char *p;       /* the buffer: b, or in memory mode a heap block that grows */
    size_t n, cap; /* bytes in p, room in p */
    bool failed;   /* memory mode: a block could not grow; what came after was dropped */
    char b[TK_OBUF_SIZE];
} tk_obuf;

static inline void tk_obuf_init(tk_obuf *o, FILE *f)
{
    o->f = f;
    o->p = o->b;
    o->n = 0;
    o->cap = TK_OBUF_SIZE;
    o->failed = false;
}

/* Memory mode: the text stays in o->p[0..o->n), for a caller that writes it out later (a
 * piece of a parallel listing): formatted in place there, with no copy through a FILE. Free
 * with tk_obuf_free_mem; tk_obuf_clear_mem empties it and keeps the block. */
static inline void tk_obuf_init_mem(tk_obuf *o)
{
    o->f = NULL;
    o->p = NULL;
    o->n = o->cap = 0;
    o->failed = false;
}

static inline void tk_obuf_clear_mem(tk_obuf *o)
{
    o->n = 0;
    o->failed = false;
}

static inline void tk_obuf_free_mem(tk_obuf *o)
{
    if (o->p != o->b)
        free(o->p);
    tk_obuf_init_mem(o);
}

static inline void tk_obuf_flush(tk_obuf *o)
{
    if (!o->f)
        return; /* memory mode: the text stays */
    if (o->n)
        fwrite(o->p, 1, o->n, o->f);
    o->n = 0;
}

/* Room for need more bytes: the buffer goes to the FILE, or the memory block grows. If it
 * cannot, the text so far is dropped (failed), and the writing goes on into b. */
static TK_NOINLINE __attribute__((unused)) void tk_obuf_room(tk_obuf *o, size_t need)
{
    if (o->f) {
        tk_obuf_flush(o);
        return;
    }
    if (o->failed) {
        o->n = 0;
        return;
    }
    size_t cap = o->cap ? o->cap : 1u << 16;
    while (cap < o->n + need)
        cap *= 2;
    char *const old = o->p == o->b ? NULL : o->p; /* (b: after a failure, a new start) */
    char *q = realloc(old, cap);
    if (!q) {
        free(old);
        o->p = o->b;
        o->n = 0;
        o->cap = TK_OBUF_SIZE;
        o->failed = true;
        return;
    }
    if (!old && o->n)
        memcpy(q, o->b, o->n);
    o->p = q;
    o->cap = cap;
}

/* Room for a line of at most TK_OBUF_LINE bytes: write it at the pointer returned, then
 * tk_obuf_done with its end. */
static inline char *tk_obuf_line(tk_obuf *o)
{
    if (o->n + TK_OBUF_LINE > o->cap)
        tk_obuf_room(o, TK_OBUF_LINE);
    return o->p + o->n;
}

static inline void tk_obuf_done(tk_obuf *o, const char *end)
{
    o->n = (size_t)(end - o->p);
}

/* Bytes of any number (names, paths). */
static inline void tk_obuf_mem(tk_obuf *o, const char *s, size_t len)
{
    if (o->n + len > o->cap) {
        if (o->f && len > TK_OBUF_SIZE) {
            tk_obuf_flush(o);
            fwrite(s, 1, len, o->f);
            return;
        }
        tk_obuf_room(o, len);
        if (o->n + len > o->cap)
            return; /* memory mode, failed: dropped */
    }
    memcpy(o->p + o->n, s, len);
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
