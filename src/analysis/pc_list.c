/* SPDX-License-Identifier: BSD-2-Clause */
/* PC list sink: every instruction of every range as one lower-case hex address per line
 * (the reference flow's .decoder.trace, VERSIONS.md C.7). Ranges are walked with the
 * instruction lengths read straight from the image's segment bytes; formatting is done by
 * hand into a large buffer. */
#include <stdlib.h>
#include <string.h>

#include "block_text.h"
#include "util/hex.h"
#include "tracekit/sink.h"
#include "util/compiler.h"

#define PC_LIST_BUF (1u << 16)

#define PC_LINE_MAX 24 /* 16 hex digits, a newline, and slack for 8-byte stores */

/* Ranges start at a few hundred distinct addresses (the blocks of the program) and the lines
 * of the first instructions from a given address never change: the text of up to
 * PC_TEXT_LINES lines from each start is kept in a direct-mapped cache, so a range that was
 * seen before costs one lookup and one copy instead of formatting every address again. */
#define PC_TEXT_LINES 16
#define PC_TEXT_BYTES (PC_TEXT_LINES * 17) /* 16 hex digits and a newline per line */
#define PC_COPY_CHUNK 32                   /* text is copied in chunks of this many bytes */
#define PC_TEXT_CAP ((PC_TEXT_BYTES + PC_COPY_CHUNK - 1) / PC_COPY_CHUNK * PC_COPY_CHUNK)
#define PC_CACHE_SLOTS 1024u

/* TK_EV_BLOCKS: the text of whole blocks of up to PC_BLOCK_LINES instructions is kept by
 * block id (block_text.h) in pieces aligned to the copy chunk, up to PC_ARENA_MAX bytes;
 * longer blocks, and later ones, go through the range path. */
#define PC_BLOCK_LINES 64
#define PC_ARENA_MAX (8u << 20)

typedef struct pc_text {
    uint64_t first; /* start address; the entry is empty when lines is 0 */
    uint64_t after; /* address after the last cached line */
    uint32_t lines;
    uint16_t end[PC_TEXT_LINES]; /* bytes of text up to and including line i */
    char text[PC_TEXT_CAP];
} pc_text;

struct tk_pc_list {
    tk_image *img;
    FILE *out;
    const tk_segment *seg; /* segment of the last range, tried first */
    uint64_t count;
    size_t used;
    bool io_error;
    pc_text *cache; /* PC_CACHE_SLOTS entries */
    tk_block_text blocks;
    char buf[PC_LIST_BUF];
};

/* Room kept free in buf before a range starts: a whole cached text plus copy slack. */
#define PC_RANGE_ROOM (PC_TEXT_LINES * PC_LINE_MAX + PC_COPY_CHUNK)

tk_status tk_pc_list_new(tk_image *img, FILE *out, tk_pc_list **sink)
{
    if (!img || !out || !sink)
        return TK_ERR_INVALID;
    tk_pc_list *s = malloc(sizeof(*s));
    if (!s)
        return TK_ERR_NOMEM;
    s->cache = calloc(PC_CACHE_SLOTS, sizeof(*s->cache));
    if (!s->cache) {
        free(s);
        return TK_ERR_NOMEM;
    }
    tk_block_text_init(&s->blocks, PC_ARENA_MAX, PC_COPY_CHUNK);
    s->img = img;
    s->out = out;
    s->seg = NULL;
    s->count = 0;
    s->used = 0;
    s->io_error = false;
    *sink = s;
    return TK_OK;
}

void tk_pc_list_free(tk_pc_list *s)
{
    if (s) {
        free(s->cache);
        tk_block_text_free(&s->blocks);
    }
    free(s);
}

uint64_t tk_pc_list_count(const tk_pc_list *s)
{
    return s->count;
}

tk_status tk_pc_list_flush(tk_pc_list *s)
{
    if (s->used && fwrite(s->buf, 1, s->used, s->out) != s->used)
        s->io_error = true;
    s->used = 0;
    return s->io_error ? TK_ERR_IO : TK_OK;
}

/* One line at p: v in lower-case hex without leading zeros, then a newline; returns the
 * end. Stores 8 bytes at a time, so the buffer keeps PC_LINE_MAX bytes of room. */
static inline char *put_hex(char *p, uint64_t v)
{
    p = tk_put_hex(p, v);
    *p = '\n';
    return p + 1;
}

static const tk_segment *segment_of(tk_pc_list *s, uint64_t a)
{
    if (s->seg && a >= s->seg->vaddr && a - s->seg->vaddr < s->seg->filesz)
        return s->seg;
    const size_t n = tk_image_segment_count(s->img);
    for (size_t i = 0; i < n; i++) {
        const tk_segment *g = tk_image_segment(s->img, i);
        if (a >= g->vaddr && a - g->vaddr < g->filesz)
            return s->seg = g;
    }
    return NULL;
}

/* Length of the instruction at a from its first halfword. */
static unsigned length_at(tk_pc_list *s, uint64_t a)
{
    const tk_segment *g = segment_of(s, a);
    uint8_t lo;
    if (g)
        lo = g->data[a - g->vaddr];
    else if (tk_image_read(s->img, a, &lo, 1) != TK_OK)
        return 0;
    return (lo & 3) == 3 ? 4 : 2;
}

static inline pc_text *text_slot(tk_pc_list *s, uint64_t a)
{
    return &s->cache[(uint32_t)(((a >> 1) * 0x9e3779b97f4a7c15ull) >> 40) & (PC_CACHE_SLOTS - 1)];
}

/* Format the first lines from a into buf (which has PC_RANGE_ROOM bytes free) and keep
 * them in e (the caller sets e->first). Returns the lines of the range written: up to left,
 * 0 if a is not in a segment's bytes. */
static uint64_t format_and_keep(tk_pc_list *s, pc_text *e, uint64_t a, uint64_t left)
{
    const tk_segment *g = segment_of(s, a);
    if (!g)
        return 0;
    const uint8_t *data = g->data;
    const uint64_t v0 = g->vaddr, end = g->vaddr + g->filesz;
    char *const p0 = s->buf + s->used;
    char *p = p0;
    uint32_t n = 0;
    while (n < PC_TEXT_LINES && a >= v0 && a < end) {
        p = put_hex(p, a);
        e->end[n++] = (uint16_t)(p - p0);
        a += (data[a - v0] & 3) == 3 ? 4 : 2;
    }
    memcpy(e->text, p0, (size_t)(p - p0));
    e->lines = n;
    e->after = a;
    const uint64_t used = n < left ? n : left;
    if (n)
        s->used += e->end[used - 1];
    return used;
}

/* The lines of ninsn instructions from first. */
static inline tk_status put_range(tk_pc_list *s, uint64_t first, uint64_t ninsn)
{
    uint64_t a = first;
    uint64_t left = ninsn;
    if (s->used > PC_LIST_BUF - PC_RANGE_ROOM && tk_pc_list_flush(s) != TK_OK)
        return TK_ERR_IO;
    pc_text *e = text_slot(s, a);
    if (e->first != a || !e->lines) {
        e->lines = 0;
        const uint64_t start = a;
        const uint64_t n = format_and_keep(s, e, a, left);
        e->first = start;
        if (n) {
            left -= n;
            a = n == e->lines ? e->after : 0;
            if (!left) {
                s->count += ninsn;
                return TK_OK;
            }
        }
    } else {
        /* Cached: copy whole chunks (both buffers have the slack). */
        const uint32_t n = left < e->lines ? (uint32_t)left : e->lines;
        const size_t len = e->end[n - 1];
        char *dst = s->buf + s->used;
        for (size_t i = 0; i < len; i += PC_COPY_CHUNK)
            memcpy(dst + i, e->text + i, PC_COPY_CHUNK);
        s->used += len;
        left -= n;
        if (!left) {
            s->count += ninsn;
            return TK_OK;
        }
        a = e->after;
    }
    while (left) {
        if (s->used > PC_LIST_BUF - PC_LINE_MAX && tk_pc_list_flush(s) != TK_OK)
            return TK_ERR_IO;
        /* Fast path: the rest of the range (or a buffer's worth) inside one segment. */
        const tk_segment *g = segment_of(s, a);
        if (g) {
            const uint8_t *data = g->data;
            const uint64_t v0 = g->vaddr, end = g->vaddr + g->filesz;
            size_t room = (PC_LIST_BUF - s->used) / PC_LINE_MAX;
            char *p = s->buf + s->used;
            while (left && room && a < end) {
                p = put_hex(p, a);
                a += (data[a - v0] & 3) == 3 ? 4 : 2;
                left--;
                room--;
            }
            s->used = (size_t)(p - s->buf);
            continue;
        }
        unsigned len = length_at(s, a);
        if (!len)
            return TK_ERR_NO_CODE;
        s->used = (size_t)(put_hex(s->buf + s->used, a) - s->buf);
        a += len;
        left--;
    }
    s->count += ninsn;
    return TK_OK;
}

/* Block b's lines through the range path, and a copy of them kept under its id when there
 * is room: the next execution of b is one copy. */
static TK_NOINLINE tk_status put_block_slow(tk_pc_list *s, const tk_bblock *b)
{
    if (s->used > PC_LIST_BUF - PC_BLOCK_LINES * PC_LINE_MAX - PC_COPY_CHUNK &&
        tk_pc_list_flush(s) != TK_OK)
        return TK_ERR_IO;
    const size_t before = s->used;
    tk_status st = put_range(s, b->start, b->ninsn);
    if (st != TK_OK || b->ninsn > PC_BLOCK_LINES || s->used < before)
        return st; /* (flushed on the way: not kept) */
    const size_t len = s->used - before;
    char *room = tk_block_text_room(&s->blocks, b, len);
    if (room) {
        memcpy(room, s->buf + before, len);
        tk_block_text_keep(&s->blocks, b, len);
    }
    return TK_OK;
}

tk_status tk_pc_list_event(void *sink, const tk_event *ev)
{
    tk_pc_list *s = sink;
    if (ev->kind == TK_EV_RANGE)
        return ev->ninsn ? put_range(s, ev->first, ev->ninsn) : TK_OK;
    if (ev->kind != TK_EV_BLOCKS)
        return TK_OK;
    /* Whole blocks: the same lines as their range events would give, copied from the text
     * kept for the block (its length is a multiple of the chunk in the arena; the buffer
     * keeps a chunk of slack). */
    const tk_block_exec *e = ev->blocks;
    const uint32_t n = ev->nblocks;
    /* in locals: the byte stores of the copies could alias any field of s */
    size_t used = s->used;
    tk_block_text kept = s->blocks;
    uint64_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        const tk_bblock *b = e[i].block;
        const tk_block_text_ref *t = tk_block_text_find(&kept, b);
        if (TK_LIKELY(t != NULL)) {
            const size_t len = t->len;
            if (used + len > PC_LIST_BUF - PC_COPY_CHUNK) {
                s->used = used;
                if (tk_pc_list_flush(s) != TK_OK)
                    return TK_ERR_IO;
                used = 0;
            }
            char *dst = s->buf + used;
            const char *src = kept.arena + t->off;
            for (size_t k = 0; k < len; k += PC_COPY_CHUNK)
                memcpy(dst + k, src + k, PC_COPY_CHUNK);
            used += len;
            count += b->ninsn;
            continue;
        }
        s->used = used;
        s->count += count;
        count = 0;
        tk_status st = put_block_slow(s, b);
        if (st != TK_OK)
            return st;
        used = s->used;
        kept = s->blocks; /* it may have grown */
    }
    s->used = used;
    s->count += count;
    return TK_OK;
}
