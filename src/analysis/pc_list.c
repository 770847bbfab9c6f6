/* SPDX-License-Identifier: BSD-2-Clause */
/* PC list sink: every instruction of every range as one lower-case hex address per line
 * (the reference flow's .decoder.trace, VERSIONS.md C.7). Ranges are walked with the
 * instruction lengths read straight from the image's segment bytes; formatting is done by
 * hand into a large buffer. */
#include <stdlib.h>
#include <string.h>

#include "tracekit/sink.h"

#define PC_LIST_BUF (1u << 16)
#define PC_LINE_MAX 24 /* 16 hex digits, a newline, and slack for 8-byte stores */

struct tk_pc_list {
    tk_image *img;
    FILE *out;
    const tk_segment *seg; /* segment of the last range, tried first */
    uint64_t count;
    size_t used;
    bool io_error;
    char buf[PC_LIST_BUF];
};

tk_status tk_pc_list_new(tk_image *img, FILE *out, tk_pc_list **sink)
{
    if (!img || !out || !sink)
        return TK_ERR_INVALID;
    tk_pc_list *s = malloc(sizeof(*s));
    if (!s)
        return TK_ERR_NOMEM;
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

/* Eight hex digits of a 32-bit value as ASCII, most significant first in memory order:
 * the nibbles are spread into bytes and turned into characters all at once (SWAR). */
static inline uint64_t hex8(uint32_t v)
{
    uint64_t x = v;
    x = ((x & 0xffff0000ull) << 16) | (x & 0xffffull);
    x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
    x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
    /* now byte i holds nibble i; 0x27 more for a..f */
    const uint64_t letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    x += 0x3030303030303030ull + letters * 0x27;
    return __builtin_bswap64(x);
}

/* One line at p: v in lower-case hex without leading zeros, then a newline; returns the
 * end. Stores 8 bytes at a time, so the buffer keeps PC_LINE_MAX bytes of room. */
static inline char *put_hex(char *p, uint64_t v)
{
    const unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n > 8) {
        const unsigned nh = n - 8;
        const uint64_t hi = hex8((uint32_t)(v >> 32)) >> (8 * (8 - nh));
        memcpy(p, &hi, 8);
        const uint64_t lo = hex8((uint32_t)v);
        memcpy(p + nh, &lo, 8);
    } else {
        const uint64_t c = hex8((uint32_t)v) >> (8 * (8 - n));
        memcpy(p, &c, 8);
    }
#else
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = n; i-- > 0; v >>= 4)
        p[i] = digits[v & 15];
#endif
    p[n] = '\n';
    return p + n + 1;
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

tk_status tk_pc_list_event(void *sink, const tk_event *ev)
{
    tk_pc_list *s = sink;
    if (ev->kind != TK_EV_RANGE || ev->ninsn == 0)
        return TK_OK;
    uint64_t a = ev->first;
    uint64_t left = ev->ninsn;
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
    s->count += ev->ninsn;
    return TK_OK;
}
