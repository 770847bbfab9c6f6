/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel ETMv4 decoding: the calling thread's record of what the source's parser would be
 * given, cut into pieces before A-Sync byte patterns, and the framing errors kept meanwhile
 * (etm4_parallel_int.h). */
#include <stdlib.h>
#include <string.h>

#include "coresight/etm4_parallel_int.h"

static piece *new_piece(par *pa, uint64_t index)
{
    piece *p = calloc(1, sizeof(*p));
    if (p) {
        p->cut_index = index;
        p->first = !pa->started;
        pa->started = true;
    }
    return p;
}

static tk_status add_op(const par *pa, piece *p, uint8_t kind, const uint8_t *d, size_t n,
                        uint64_t index)
{
    if (TK_GROW(p->ops, p->nops, p->cap_ops, p->nops + 1))
        return TK_ERR_NOMEM;
    /* (as integers: pointers into different objects do not compare in C) */
    const uintptr_t at = (uintptr_t)d - (uintptr_t)pa->buf;
    if (n && pa->buf && at < pa->len && n <= pa->len - at) {
        p->ops[p->nops++] = (op){kind, d, 0, n, index};
        return TK_OK;
    }
    if (TK_GROW(p->bytes, p->nbytes, p->cap_bytes, p->nbytes + n))
        return TK_ERR_NOMEM;
    if (n)
        memcpy(p->bytes + p->nbytes, d, n);
    p->ops[p->nops++] = (op){kind, NULL, p->nbytes, n, index};
    p->nbytes += n;
    return TK_OK;
}

/* Byte offset in op o of the byte at index (which o holds). */
static size_t op_offset(const op *o, uint64_t index)
{
    const uint64_t d = index - o->index;
    return o->kind == TK_ETM4_STREAM_DATA ? (size_t)d : (size_t)(15 * (d / 16) + d % 16);
}

/* Index of byte k of op o. */
static uint64_t op_index(const op *o, size_t k)
{
    return o->index + k + (o->kind == TK_ETM4_STREAM_DATA ? 0 : k / 15);
}

/* Index after op o's last byte. */
static uint64_t op_end(const op *o)
{
    return o->n ? op_index(o, o->n - 1) + 1 : o->index;
}

/* Cut before the A-Sync at index: the record from there on starts a new piece. */
static tk_status cut(par *pa, uint64_t index)
{
    piece *old = pa->cur;
    size_t k = old->nops;
    while (k > 0 &&
           (old->ops[k - 1].kind == TK_ETM4_STREAM_RESYNC || old->ops[k - 1].index > index))
        k--;
    if (!k || index >= op_end(&old->ops[k - 1]))
        return TK_OK; /* not in the record (cannot happen): no cut */
    const op o = old->ops[k - 1];
    const size_t at = op_offset(&o, index);
    if (k == 1 && at == 0)
        return TK_OK; /* the piece starts there already */
    tk_status st = TK_OK;
    piece *p = new_piece(pa, index);
    if (!p)
        return TK_ERR_NOMEM;
    const uint8_t *b = tk_par_op_bytes(old, &o);
    if (o.kind == TK_ETM4_STREAM_DATA) {
        st = add_op(pa, p, TK_ETM4_STREAM_DATA, b + at, o.n - at, index);
    } else {
        /* the rest of the frame the A-Sync starts in, then whole frames */
        size_t frame_end = (at / 15 + 1) * 15;
        if (frame_end > o.n)
            frame_end = o.n;
        st = add_op(pa, p, TK_ETM4_STREAM_DATA, b + at, frame_end - at, index);
        if (!st && frame_end < o.n)
            st = add_op(pa, p, TK_ETM4_STREAM_FRAMES, b + frame_end, o.n - frame_end,
                        op_index(&o, frame_end));
    }
    for (size_t j = k; j < old->nops && !st; j++) {
        const op *q = &old->ops[j];
        st = add_op(pa, p, q->kind, tk_par_op_bytes(old, q), q->n, q->index);
    }
    if (st) {
        tk_par_piece_free(pa, p, false);
        return st;
    }
    old->ops[k - 1].n = at;
    old->nops = at ? k : k - 1;
    st = tk_par_submit(pa); /* takes pa->cur, old */
    pa->cur = p;
    return st;
}

/* The byte j of the stream as a sequence: op o's byte k, or before it the tail kept from
 * earlier calls (k < 0). */
static bool zero_before(const par *pa, const uint8_t *d, size_t k, size_t back)
{
    if (back <= k)
        return d[k - back] == 0;
    back -= k; /* 1-based into the tail, newest last */
    return back <= pa->ntail && pa->tail[pa->ntail - back] == 0;
}

static uint64_t index_before(const par *pa, const op *o, size_t k, size_t back)
{
    if (back <= k)
        return op_index(o, k - back);
    return pa->tail_index[pa->ntail - (back - k)];
}

/* Cut before each A-Sync pattern (11 zero bytes, then 0x80) of op o (the last one recorded)
 * that starts a piece's worth after the current piece. */
static tk_status find_cuts(par *pa, const op *o, const uint8_t *d)
{
    tk_status st = TK_OK;
    for (const uint8_t *q = d; !st && (q = memchr(q, 0x80, o->n - (size_t)(q - d))) != NULL; q++) {
        const size_t k = (size_t)(q - d);
        size_t z = 1;
        while (z <= 11 && zero_before(pa, d, k, z))
            z++;
        if (z <= 11)
            continue;
        const uint64_t start = index_before(pa, o, k, 11);
        if (start - pa->cur->cut_index >= pa->piece_bytes)
            st = cut(pa, start);
    }
    /* keep the last 11 bytes for a pattern across calls */
    for (size_t k = o->n > 11 ? o->n - 11 : 0; k < o->n; k++) {
        if (pa->ntail == 11) {
            memmove(pa->tail, pa->tail + 1, 10);
            memmove(pa->tail_index, pa->tail_index + 1, 10 * sizeof(*pa->tail_index));
            pa->ntail = 10;
        }
        pa->tail[pa->ntail] = d[k];
        pa->tail_index[pa->ntail++] = op_index(o, k);
    }
    return st;
}

tk_status tk_par_on_stream(void *ctx, tk_etm4_stream_op kind, uint8_t id, const uint8_t *d,
                           size_t n, uint64_t index)
{
    par *pa = ctx;
    if (id != pa->id || kind == TK_ETM4_STREAM_CUT)
        return TK_OK; /* (no CUT: nothing is parsed here) */
    if (kind != TK_ETM4_STREAM_RESYNC && !n)
        return TK_OK; /* an empty run: nothing for a parser */
    if (!pa->cur && !(pa->cur = new_piece(pa, index)))
        return pa->err = TK_ERR_NOMEM;
    if (kind == TK_ETM4_STREAM_RESYNC) {
        pa->ntail = 0; /* bytes were lost: no pattern across them */
        return pa->err = add_op(pa, pa->cur, (uint8_t)kind, NULL, 0, index);
    }
    if ((pa->err = add_op(pa, pa->cur, (uint8_t)kind, d, n, index)))
        return pa->err;
    const op o = pa->cur->ops[pa->cur->nops - 1];
    return pa->err = find_cuts(pa, &o, d);
}

/* Framing errors wait for their turn (the decode may yet fall back to the serial one). */
tk_status tk_par_on_frame_error(void *ctx, tk_status status, uint64_t offset, const char *msg)
{
    par *pa = ctx;
    if (!pa->user->on_frame_error)
        return TK_OK;
    if (TK_GROW(pa->errs, pa->nerrs, pa->cap_errs, pa->nerrs + 1))
        return pa->err = TK_ERR_NOMEM;
    char *m = strdup(msg ? msg : "");
    if (!m)
        return pa->err = TK_ERR_NOMEM;
    pa->errs[pa->nerrs++] = (frame_err){status, offset, m};
    return TK_OK;
}

tk_status tk_par_release_errors(par *pa, uint64_t to)
{
    tk_status st = TK_OK;
    for (size_t i = 0; i < pa->nerrs; i++) {
        frame_err *e = &pa->errs[i];
        if (!st && e->msg && e->offset < to)
            st = pa->user->on_frame_error(pa->user->ctx, e->status, e->offset, e->msg);
        free(e->msg);
        e->msg = NULL;
    }
    pa->nerrs = 0;
    return st;
}
