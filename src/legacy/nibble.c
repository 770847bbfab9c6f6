/* SPDX-License-Identifier: BSD-2-Clause */
/* Nibble trace (seed 001): parameters, the buffer file, and splitting a buffer into
 * sequences. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nibble_int.h"

static const char MAGIC[8] = {'T', 'K', 'N', 'I', 'B', 'B', 'L', '1'};
#define HEADER_BYTES 32u

void tk_nibble_params_init(tk_nibble_params *p)
{
    memset(p, 0, sizeof(*p));
    p->size = sizeof(*p);
    p->xlen = 64;
    p->compressed = true;
    p->emit = TK_NIB_BRANCH;
    p->buffer_words = 4096;
    p->timestamp_period = 1000;
    p->hart = -1;
}

tk_status tk_nibble_params_validate(const tk_nibble_params *p, tk_diag *diag)
{
    if (p->xlen != 32 && p->xlen != 64)
        return tk_diag_set(diag, TK_ERR_CONFIG, "nibble trace: xlen %u (32 or 64)", p->xlen);
    if (!(p->emit & (TK_NIB_PC | TK_NIB_BRANCH)))
        return tk_diag_set(diag, TK_ERR_CONFIG,
                           "nibble trace: emit PC values or branches (or both)");
    if (p->emit & ~0xffu)
        return tk_diag_set(diag, TK_ERR_CONFIG, "nibble trace: unknown emit bits 0x%x", p->emit);
    if (p->buffer_words < TK_NIB_MIN_BUFFER_WORDS || p->buffer_words % 8)
        return tk_diag_set(diag, TK_ERR_CONFIG,
                           "nibble trace: buffer of %u words (a multiple of 8, at least %u)",
                           p->buffer_words, TK_NIB_MIN_BUFFER_WORDS);
    if (p->region_hi && p->region_hi <= p->region_lo)
        return tk_diag_set(diag, TK_ERR_CONFIG, "nibble trace: empty data region");
    return TK_OK;
}

void tk_nibble_trace_free(tk_nibble_trace *t)
{
    if (!t)
        return;
    free(t->words);
    t->words = NULL;
    t->nwords = 0;
}

uint32_t nib_flags_pack(const tk_nibble_params *p, bool wrapped)
{
    return (p->emit & 0xffu) | (p->compressed ? 1u << 8 : 0) | (wrapped ? 1u << 9 : 0) |
           (p->wrap ? 1u << 10 : 0) | ((uint32_t)p->xlen << 16);
}

void nib_flags_unpack(uint32_t flags, tk_nibble_params *p, bool *wrapped)
{
    p->emit = flags & 0xffu;
    p->compressed = (flags >> 8) & 1u;
    *wrapped = (flags >> 9) & 1u;
    p->wrap = (flags >> 10) & 1u;
    p->xlen = (flags >> 16) & 0xffu;
}

static void put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get64(const uint8_t *b)
{
    return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}

tk_status tk_nibble_write_file(const char *path, const tk_nibble_trace *t, tk_diag *diag)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t h[HEADER_BYTES] = {0};
    memcpy(h, MAGIC, 8);
    put32(h + 8, t->params.buffer_words);
    put32(h + 12, nib_flags_pack(&t->params, t->wrapped));
    put64(h + 16, t->total_nibbles);
    bool ok = fwrite(h, 1, sizeof(h), f) == sizeof(h);
    uint8_t buf[4096];
    size_t used = 0;
    for (size_t i = 0; ok && i < t->nwords; i++) {
        put32(buf + used, t->words[i]);
        used += 4;
        if (used == sizeof(buf) || i + 1 == t->nwords) {
            ok = fwrite(buf, 1, used, f) == used;
            used = 0;
        }
    }
    if (fclose(f) != 0)
        ok = false;
    return ok ? TK_OK : tk_diag_set(diag, TK_ERR_IO, "%s: write failed", path);
}

tk_status tk_nibble_read_file(const char *path, tk_nibble_trace *t, tk_diag *diag)
{
    memset(t, 0, sizeof(*t));
    FILE *f = fopen(path, "rb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "%s: %s", path, strerror(errno));
    uint8_t h[HEADER_BYTES];
    tk_status st = TK_OK;
    if (fread(h, 1, sizeof(h), f) != sizeof(h) || memcmp(h, MAGIC, 8) != 0) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: not a tracekit nibble trace (no TKNIBBL1)",
                           path);
    }
    tk_nibble_params_init(&t->params);
    t->params.buffer_words = get32(h + 8);
    nib_flags_unpack(get32(h + 12), &t->params, &t->wrapped);
    t->total_nibbles = get64(h + 16);
    tk_diag why;
    tk_diag_clear(&why);
    if (tk_nibble_params_validate(&t->params, &why) != TK_OK) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: header: %s", path, why.message);
    }
    const uint64_t want = t->wrapped ? t->params.buffer_words : (t->total_nibbles + 7) / 8;
    if (t->wrapped && t->total_nibbles < 8ull * t->params.buffer_words) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: wrapped but only %llu nibbles written", path,
                           (unsigned long long)t->total_nibbles);
    }
    /* a damaged header must not make us allocate what the file cannot hold */
    long here = ftell(f);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (here < 0 || size < 0 || fseek(f, here, SEEK_SET) != 0) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot seek", path);
    }
    uint64_t want_read = want;
    if ((uint64_t)(size - here) / 4 < want) {
        tk_status e =
            tk_diag_set(diag, TK_ERR_TRUNCATED, "%s: truncated at byte %ld (%llu words expected)",
                        path, size, (unsigned long long)want);
        if (diag)
            diag->byte_offset = (uint64_t)size;
        if (t->wrapped) {
            /* a ring buffer's order needs all of it: nothing can be decoded */
            fclose(f);
            return e;
        }
        /* an unwrapped buffer fills in order: its whole words are the trace's start */
        st = e;
        want_read = (uint64_t)(size - here) / 4;
    }
    if (want > (1ull << 32)) {
        fclose(f);
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s: %llu words is too large", path,
                           (unsigned long long)want);
    }
    t->words = malloc((size_t)(want_read ? want_read : 1) * 4);
    uint8_t *raw = malloc(4096);
    if (!t->words || !raw) {
        free(raw);
        fclose(f);
        tk_nibble_trace_free(t);
        return TK_ERR_NOMEM;
    }
    uint64_t i = 0;
    while (i < want_read) {
        size_t chunk = (size_t)((want_read - i) * 4 < 4096 ? (want_read - i) * 4 : 4096);
        size_t got = fread(raw, 1, chunk, f);
        for (size_t k = 0; k + 4 <= got; k += 4)
            t->words[i++] = get32(raw + k);
        if (got < chunk) {
            st = tk_diag_set(diag, TK_ERR_TRUNCATED,
                             "%s: truncated at byte %llu (%llu words expected)", path,
                             (unsigned long long)(HEADER_BYTES + i * 4), (unsigned long long)want);
            if (diag)
                diag->byte_offset = HEADER_BYTES + i * 4;
            break;
        }
    }
    free(raw);
    fclose(f);
    t->nwords = (size_t)i;
    if (st != TK_OK && t->wrapped) {
        tk_nibble_trace_free(t);
    } else if (i < want) {
        /* keep what was read: the nibbles written that the file still holds */
        if (t->total_nibbles > 8 * (uint64_t)i)
            t->total_nibbles = 8 * (uint64_t)i;
    }
    return st;
}

void nib_reader_init(nib_reader *r, const tk_nibble_trace *t)
{
    memset(r, 0, sizeof(*r));
    r->words = t->words;
    r->seg = t->params.buffer_words; /* 8 sync points per 8 * buffer_words nibbles */
    if (!t->wrapped) {
        r->length = t->total_nibbles;
        if (r->length > 8ull * t->nwords)
            r->length = 8ull * t->nwords;
        return;
    }
    /* Seed 001, "Synchronization": after a wrap only the sync points are known to hold a
     * header; the segment holding the write pointer was partly overwritten. */
    r->ring = 8ull * t->params.buffer_words;
    const uint64_t wp = t->total_nibbles % r->ring;
    uint64_t s = (wp + r->seg - 1) / r->seg * r->seg;
    if (s >= r->ring)
        s = 0;
    r->start = s;
    r->length = (wp + r->ring - s) % r->ring;
    if (r->length == 0)
        r->length = r->ring;
}

tk_status nib_read(nib_reader *r, tk_nibble_seq *s)
{
    if (r->q >= r->length)
        return TK_END;
    memset(s, 0, sizeof(*s));
    s->offset = r->q;
    s->sync_point = ((r->start + r->q) % (r->seg ? r->seg : 1)) == 0;
    s->header = (uint8_t)nib_at(r, r->q++);
    if (s->header == TK_NIB_H_RESERVED || s->header == TK_NIB_H_CUSTOM)
        return TK_ERR_BAD_PACKET;
    if (nib_has_arg(s->header)) {
        if (r->q >= r->length)
            return TK_ERR_TRUNCATED;
        s->arg = (uint8_t)nib_at(r, r->q++);
    } else if (nib_has_value(s->header)) {
        if (r->q >= r->length)
            return TK_ERR_TRUNCATED;
        const unsigned n = nib_at(r, r->q++) + 1;
        if (r->q + n > r->length)
            return TK_ERR_TRUNCATED;
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
            v |= (uint64_t)nib_at(r, r->q++) << (4 * i);
        s->nnibbles = (uint8_t)n;
        s->raw = v;
    }
    return TK_OK;
}

tk_status tk_nibble_scan(const tk_nibble_trace *t, tk_nibble_seq_fn fn, void *ctx, tk_diag *diag)
{
    nib_reader r;
    nib_reader_init(&r, t);
    for (;;) {
        tk_nibble_seq s;
        tk_status st = nib_read(&r, &s);
        if (st == TK_END)
            return TK_OK;
        if (st != TK_OK) {
            tk_status e =
                tk_diag_set(diag, st, "nibble %llu: %s",
                            (unsigned long long)(r.start + s.offset) % (r.ring ? r.ring : ~0ull),
                            st == TK_ERR_TRUNCATED ? "sequence cut by the end" : "reserved header");
            if (diag)
                diag->byte_offset = ((r.start + s.offset) % (r.ring ? r.ring : ~0ull)) / 2;
            return e;
        }
        if ((st = fn(ctx, &s)) != TK_OK)
            return st;
    }
}
