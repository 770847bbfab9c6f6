/* SPDX-License-Identifier: BSD-2-Clause */
/* CoreSight formatter frame deformatter (CoreSight Architecture Specification v3.0, §D4.2).
 *
 * A frame is 16 bytes. Even bytes 0..14 are either an ID change (bit 0 = 1, new ID in bits
 * [7:1]) or a data byte whose bit 0 is held in the auxiliary byte 15 (bit k for byte 2k). Odd
 * bytes 1..13 are always data. For an ID byte, its auxiliary bit says whether the following
 * data byte still belongs to the previous ID (1) or already to the new one (0).
 * ID 0 is the null source and IDs 0x70..0x7f are reserved: their data is dropped.
 * DSTREAM/TPIU captures put FSYNC (ff ff ff 7f) between frames; TPIU may insert HSYNC
 * (ff 7f) halfwords inside frames.
 *
 * DSTREAM stores its capture in 512-byte blocks, 504 bytes of trace and an 8-byte footer
 * (OpenCSD's trc_pkt_lister -dstream_format reads 504 bytes and skips 8). With
 * TK_CS_DEFMT_DSTREAM_BLOCKS the footers are dropped on input and everything behind works on
 * the trace bytes alone ("stream offsets"); every index and offset handed out is turned back
 * into the offset in the file, and a run is cut where the file has a footer, so that
 * index + k still locates byte k. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* join_run's frames with AVX2 (join_frames_avx2), chosen at run time. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define TK_JOIN_AVX2 1
#else
#define TK_JOIN_AVX2 0
#endif

#include "coresight/deformat_int.h"
#include "tracekit/coresight.h"
#include "util/le.h"

#define FRAME 16
/* Frames joined into one run at most (their bytes at most 15 each). Each run costs the
 * parser a window restart and a padded tail; 1024 took 1.6% fewer instructions than 256 on
 * bugfix-exact-match (docs/performance.md, session 17). Positions stay below 65536. */
#define JOIN_FRAMES 1024
#define JOIN_FULL (JOIN_FRAMES * 15 - 15) /* bytes in a joined run that takes no more frames */
#define DS_BLOCK 512                      /* DSTREAM block: DS_DATA trace bytes, then the footer */
#define DS_DATA 504

struct tk_cs_deformatter {
    unsigned flags;
    tk_cs_data_fn data;
    tk_cs_error_fn error;
    void *ctx;
    uint8_t cur_id;  /* current source ID, 0xff = unknown */
    bool synced;     /* FSYNC mode: an FSYNC has been seen */
    uint64_t offset; /* stream offset of the next unprocessed byte (the raw offset unless
                        DSTREAM footers are dropped) */
    uint64_t raw;    /* DSTREAM blocks: file offset of the next byte fed to tk_cs_deformat */
    uint8_t carry[64];
    size_t ncarry;
    /* Joined frames (tk_cs_deformatter_set_frames_fn or _at_fn): data of whole frames of one
     * source, and with frames_at where each byte is (join_at, from join_index). */
    tk_cs_frames_fn frames;
    tk_cs_frames_at_fn frames_at;
    uint8_t join_id;
    uint64_t join_index; /* index of the first frame */
    size_t njoin;        /* bytes held, 15 per frame (14 for a frame with an ID byte) */
    uint64_t join_next;  /* where the frame that would continue the joined run starts (kept,
                          * not derived from join_index and njoin: no division per frame) */
    uint8_t join[JOIN_FRAMES * 15 + 1];
    uint16_t join_at[JOIN_FRAMES * 15 + 16]; /* 16 written per frame */
    bool avx2;                               /* join_run with join_frames_avx2 */
};

static bool ds_blocks(const tk_cs_deformatter *d)
{
    return d->flags & TK_CS_DEFMT_DSTREAM_BLOCKS;
}

/* File offset of stream offset s: each block before it adds its footer. */
static uint64_t file_offset(const tk_cs_deformatter *d, uint64_t s)
{
    return ds_blocks(d) ? s + s / DS_DATA * (DS_BLOCK - DS_DATA) : s;
}

/* Stream offsets a and b lie in one DSTREAM block (always true without blocks): a run there
 * has consecutive file offsets. */
static bool one_block(const tk_cs_deformatter *d, uint64_t a, uint64_t b)
{
    return !ds_blocks(d) || a / DS_DATA == b / DS_DATA;
}

void tk_cs_deformatter_set_frames_fn(tk_cs_deformatter *d, tk_cs_frames_fn fn)
{
    d->frames = fn;
    d->frames_at = NULL;
}

void tk_cs_deformatter_set_frames_at_fn(tk_cs_deformatter *d, tk_cs_frames_at_fn fn)
{
    d->frames_at = fn;
    d->frames = NULL;
}

static bool joins(const tk_cs_deformatter *d)
{
    return d->frames || d->frames_at;
}

static tk_status flush_join(tk_cs_deformatter *d)
{
    size_t n = d->njoin;
    if (!n)
        return TK_OK;
    d->njoin = 0;
    const uint64_t index = file_offset(d, d->join_index);
    return d->frames_at ? d->frames_at(d->ctx, d->join_id, d->join, d->join_at, n, index)
                        : d->frames(d->ctx, d->join_id, d->join, n, index);
}

/* Where the 16 bytes from at[0] on are, from the joined run's start: base, base + 1, ... */
static void put_at(uint16_t *at, uint16_t base)
{
#if defined(__SSE2__)
    const __m128i b = _mm_set1_epi16((short)base);
    _mm_storeu_si128((__m128i *)(void *)at,
                     _mm_add_epi16(b, _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7)));
    _mm_storeu_si128((__m128i *)(void *)(at + 8),
                     _mm_add_epi16(b, _mm_setr_epi16(8, 9, 10, 11, 12, 13, 14, 15)));
#else
    for (int k = 0; k < 16; k++)
        at[k] = (uint16_t)(base + k);
#endif
}

unsigned tk_cs_buffer_deformat_flags(tk_cs_buffer_format format)
{
    switch (format) {
    case TK_CS_FMT_DSTREAM:
        return TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_DSTREAM_BLOCKS;
    case TK_CS_FMT_TPIU:
        return TK_CS_DEFMT_FSYNC;
    case TK_CS_FMT_TPIU_HSYNC:
        return TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_HSYNC;
    default:
        return 0;
    }
}

tk_status tk_cs_deformatter_new(unsigned flags, tk_cs_data_fn data, tk_cs_error_fn error, void *ctx,
                                tk_cs_deformatter **out)
{
    tk_cs_deformatter *d = calloc(1, sizeof(*d));
    if (!d)
        return TK_ERR_NOMEM;
    d->flags = flags;
    d->data = data;
    d->error = error;
    d->ctx = ctx;
    d->cur_id = 0xff;
    d->synced = !(flags & TK_CS_DEFMT_FSYNC);
#if TK_JOIN_AVX2
    d->avx2 = __builtin_cpu_supports("avx2");
#endif
    *out = d;
    return TK_OK;
}

void tk_cs_deformatter_use_avx2(tk_cs_deformatter *d, bool on)
{
#if TK_JOIN_AVX2
    d->avx2 = on && __builtin_cpu_supports("avx2");
#else
    (void)d;
    (void)on;
#endif
}

void tk_cs_deformatter_free(tk_cs_deformatter *d)
{
    free(d);
}

static tk_status report(tk_cs_deformatter *d, tk_status st, uint64_t off, const char *msg)
{
    tk_status fst = flush_join(d); /* data before the error first */
    if (fst)
        return fst;
    return d->error ? d->error(d->ctx, st, file_offset(d, off), msg) : TK_OK;
}

static bool valid_id(uint8_t id)
{
    return id != 0 && id < 0x70;
}

/* A run of one source at stream offset index, cut where the file has a footer. */
static tk_status emit(tk_cs_deformatter *d, uint8_t id, const uint8_t *data, size_t n,
                      uint64_t index)
{
    while (n) {
        size_t take = n;
        if (ds_blocks(d) && take > DS_DATA - index % DS_DATA)
            take = (size_t)(DS_DATA - index % DS_DATA);
        tk_status st = d->data(d->ctx, id, data, take, file_offset(d, index));
        if (st)
            return st;
        data += take;
        n -= take;
        index += take;
    }
    return TK_OK;
}

/* Auxiliary bits k..k+3 spread to bit 0 of bytes 0, 2, 4 and 6 of a little-endian word. */
static const uint64_t spread_aux[16] = {
    0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000010000ull, 0x0000000000010001ull,
    0x0000000100000000ull, 0x0000000100000001ull, 0x0000000100010000ull, 0x0000000100010001ull,
    0x0001000000000000ull, 0x0001000000000001ull, 0x0001000000010000ull, 0x0001000000010001ull,
    0x0001000100000000ull, 0x0001000100000001ull, 0x0001000100010000ull, 0x0001000100010001ull,
};

/* The frame at sof, whose n data bytes were just stored at the joined run's end, joins it. */
static inline void join_frame(tk_cs_deformatter *d, uint64_t sof, size_t n)
{
    if (d->frames_at)
        put_at(d->join_at + d->njoin, (uint16_t)(sof - d->join_index));
    d->njoin += n;
    d->join_next = sof + FRAME;
}

/* Append a frame's 15 data bytes (lo, hi: the frame with its auxiliary bits put back) to the
 * joined run; 16 bytes are stored, the 16th is overwritten by the next frame. */
static inline void join_append(tk_cs_deformatter *d, uint64_t lo, uint64_t hi, uint64_t sof)
{
    tk_store_le64(d->join + d->njoin, lo);
    tk_store_le64(d->join + d->njoin + 8, hi);
    join_frame(d, sof, 15);
}

/* Unpack one frame (f[16], frame start at index sof) into per-ID runs. */
static tk_status unpack(tk_cs_deformatter *d, const uint8_t *f, uint64_t sof)
{
    /* Fast path, the common case: no ID byte in the frame (bit 0 clear in every even byte), so
     * its 15 data bytes all belong to the current source and are the frame bytes with the
     * auxiliary bits put back into the even bytes. */
    uint64_t lo = tk_load_le64(f), hi = tk_load_le64(f + 8);
    if (!((lo | hi) & 0x0001000100010001ull)) {
        if (d->cur_id == 0xff || !valid_id(d->cur_id))
            return TK_OK;
        uint8_t aux = f[15];
        lo |= spread_aux[aux & 0xf];
        hi |= spread_aux[aux >> 4];
        /* A joined run lies in one DSTREAM block; a frame across a footer goes alone. */
        if (joins(d) && one_block(d, sof, sof + 14)) {
            /* Append to the joined run when this frame continues it (same source, next frame
             * in the buffer). */
            if (d->njoin && (d->join_id != d->cur_id || d->njoin > JOIN_FULL ||
                             d->join_next != sof || !one_block(d, d->join_index, sof))) {
                tk_status st = flush_join(d);
                if (st)
                    return st;
            }
            if (!d->njoin) {
                d->join_id = d->cur_id;
                d->join_index = sof;
            }
            join_append(d, lo, hi, sof);
            return TK_OK;
        }
        if (d->njoin) {
            tk_status st = flush_join(d);
            if (st)
                return st;
        }
        uint8_t out[16];
        tk_store_le64(out, lo);
        tk_store_le64(out + 8, hi);
        return emit(d, d->cur_id, out, 15, sof);
    }
    /* Second most common case: one ID byte that restates the current source (formatters
     * repeat the ID every few frames). It changes nothing, its auxiliary bit included: the
     * data is the 14 other bytes, even ones with their auxiliary bit, in one run at the frame
     * start, exactly what the general loop below would give. In joined mode it can end the
     * joined run (its bytes are still at index + k + k / 15 there), or with frames_at join it
     * (or start one). */
    const uint64_t idm = (lo & 0x0001000100010001ull) | (hi & 0x0001000100010001ull) << 8;
    if (!(idm & (idm - 1)) && d->cur_id != 0xff && valid_id(d->cur_id)) {
        int j = 0;
        while (!(f[j] & 1))
            j += 2;
        if (f[j] >> 1 == d->cur_id) {
            uint8_t out[FRAME];
            uint8_t aux = f[15];
            tk_store_le64(out, lo | spread_aux[aux & 0xf]);
            tk_store_le64(out + 8, hi | spread_aux[aux >> 4]);
            memmove(out + j, out + j + 1, (size_t)(14 - j));
            if (d->njoin && d->join_id == d->cur_id && d->njoin <= JOIN_FULL &&
                d->join_next == sof && one_block(d, d->join_index, sof + 13)) {
                memcpy(d->join + d->njoin, out, 14);
                join_frame(d, sof, 14);
                return d->frames_at ? TK_OK : flush_join(d);
            }
            if (d->njoin) {
                tk_status st = flush_join(d);
                if (st)
                    return st;
            }
            if (d->frames_at && one_block(d, sof, sof + 13)) {
                d->join_id = d->cur_id;
                d->join_index = sof;
                memcpy(d->join, out, 14);
                join_frame(d, sof, 14);
                return TK_OK;
            }
            return emit(d, d->cur_id, out, 14, sof);
        }
    }
    if (d->njoin) {
        tk_status st = flush_join(d);
        if (st)
            return st;
    }

    uint8_t run[FRAME];
    size_t n = 0;
    uint64_t run_index = sof;
    uint8_t aux = f[15];
    tk_status st;

#define FLUSH()                                                                                    \
    do {                                                                                           \
        if (n && d->cur_id != 0xff && valid_id(d->cur_id) &&                                       \
            (st = emit(d, d->cur_id, run, n, run_index)))                                          \
            return st;                                                                             \
        n = 0;                                                                                     \
    } while (0)

    for (int i = 0; i < 16; i += 2) {
        uint8_t b = f[i];
        bool aux_bit = (aux >> (i / 2)) & 1;
        bool odd_to_prev = false;
        if (b & 1) {
            uint8_t id = b >> 1;
            if (id != d->cur_id) {
                /* Auxiliary bit set: the next byte belongs to the old ID. Bytes 14 has no
                 * following data byte. */
                if (aux_bit && i < 14) {
                    odd_to_prev = true;
                    run[n++] = f[i + 1];
                }
                FLUSH();
                d->cur_id = id;
                run_index = sof + (uint64_t)i;
            }
        } else {
            run[n++] = (uint8_t)(b | aux_bit);
        }
        if (i < 14 && !odd_to_prev)
            run[n++] = f[i + 1];
    }
    FLUSH();
#undef FLUSH
    return TK_OK;
}

/* A frame (lo, hi: its bytes 0-7 and 8-15) whose one ID byte restates source id: its data bytes
 * (auxiliary bits put back from aux) without the ID byte, in *lo and *hi (14 bytes). */
static bool restated(uint64_t *lo, uint64_t *hi, uint8_t aux, uint8_t id)
{
    const uint64_t il = *lo & 0x0001000100010001ull, ih = *hi & 0x0001000100010001ull;
    const uint64_t ids = il | ih << 8;
    if (ids & (ids - 1))
        return false; /* more than one */
    /* the ID byte: 0, 2, ..., 14 */
    const unsigned j =
        il ? (unsigned)__builtin_ctzll(il) / 8 : 8 + (unsigned)__builtin_ctzll(ih) / 8;
    const uint64_t w = j < 8 ? *lo : *hi;
    if ((uint8_t)(w >> (8 * (j % 8))) >> 1 != id)
        return false;
    uint64_t l = *lo | spread_aux[aux & 0xf], h = *hi | spread_aux[aux >> 4];
    /* the bytes after j move down by one */
    const uint64_t below = (1ull << (8 * (j % 8))) - 1; /* bytes before j in its word */
    if (j < 8) {
        l = (l & below) | ((l >> 8 | h << 56) & ~below);
        h >>= 8;
    } else {
        h = (h & below) | ((h >> 8) & ~below);
    }
    *lo = l;
    *hi = h;
    return true;
}

#if TK_JOIN_AVX2
/* The vectors join_frames_avx2 works with, in memory (as operands, not rebuilt in the loop). */
static const uint8_t join_vec[5][16] = {
    {15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15}, /* the auxiliary byte */
    {1, 0, 2, 0, 4, 0, 8, 0, 16, 0, 32, 0, 64, 0, 128, 0},            /* its bit for byte k */
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0},       /* positions 0-7 (16-bit) */
    {8, 0, 9, 0, 10, 0, 11, 0, 12, 0, 13, 0, 14, 0, 15, 0}, /* positions 8-15 */
};
/* The data bytes of a frame whose ID byte is byte 2i, without it, for i = 0..7. */
#define SQUEEZE(j)                                                                                 \
    {                                                                                              \
        0 + (0 >= (j)), 1 + (1 >= (j)), 2 + (2 >= (j)), 3 + (3 >= (j)), 4 + (4 >= (j)),            \
            5 + (5 >= (j)), 6 + (6 >= (j)), 7 + (7 >= (j)), 8 + (8 >= (j)), 9 + (9 >= (j)),        \
            10 + (10 >= (j)), 11 + (11 >= (j)), 12 + (12 >= (j)), 13 + (13 >= (j)), 15, 15         \
    }
static const uint8_t join_squeeze[8][16] = {SQUEEZE(0), SQUEEZE(2),  SQUEEZE(4),  SQUEEZE(6),
                                            SQUEEZE(8), SQUEEZE(10), SQUEEZE(12), SQUEEZE(14)};
#undef SQUEEZE

#define JOIN_VEC(k) _mm_loadu_si128((const __m128i *)(const void *)join_vec[k])

/* join_run's loop in 16-byte vectors: frames f[16k..16k+16) with no ID byte, or (restate >= 0)
 * one that restates source restate, appended at join + *nj and their positions at at + *nj (if
 * at), from *at0 on (16 bytes and 16 positions stored per frame, the rest overwritten next).
 * Stops at any other frame, with less than a frame left, or where *nj passes limit; returns the
 * bytes taken. A frame in 64-bit words took twice the instructions, and this loop was a tenth
 * of `dump --stats` (docs/performance.md, session 17). */
__attribute__((target("avx2"))) static size_t join_frames_avx2(const uint8_t *f, size_t len,
                                                               uint8_t *join, uint16_t *at,
                                                               size_t *nj, uint16_t at0,
                                                               size_t limit, int restate)
{
    const __m256i step = _mm256_loadu_si256((const __m256i *)(const void *)join_vec[3]);
    __m256i pos = _mm256_set1_epi16((short)at0);
    size_t k = 0, n = *nj;
    for (; len - k >= FRAME && n <= limit; k += FRAME) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(f + k));
        /* ID flags (bit 0 of bytes 0, 2, ..., 14) to the bytes' top bits */
        const unsigned ids = (unsigned)_mm_movemask_epi8(_mm_slli_epi16(v, 7)) & 0x5555u;
        /* auxiliary bit i to bit 0 of byte 2i */
        __m128i w = _mm_or_si128(
            v, _mm_min_epu8(_mm_and_si128(_mm_shuffle_epi8(v, JOIN_VEC(0)), JOIN_VEC(1)),
                            JOIN_VEC(2)));
        size_t m = 15;
        if (ids) {
            if (restate < 0 || (ids & (ids - 1)))
                break;
            const unsigned j = (unsigned)__builtin_ctz(ids);
            if (f[k + j] >> 1 != restate)
                break;
            w = _mm_shuffle_epi8(
                w, _mm_loadu_si128((const __m128i *)(const void *)join_squeeze[j / 2]));
            m = 14;
        }
        _mm_storeu_si128((__m128i *)(void *)(join + n), w);
        if (at)
            _mm256_storeu_si256((__m256i *)(void *)(at + n), _mm256_add_epi16(pos, step));
        pos = _mm256_add_epi16(pos, _mm256_set1_epi16(FRAME));
        n += m;
    }
    *nj = n;
    return k;
}
#undef JOIN_VEC
#endif

/* Most frames in place (no FSYNC) hold no ID byte and continue a joined run: from buf + pos on,
 * such frames are appended as unpack() would, without its call and tests (a joined run is one
 * source's, the current one, and never crosses a DSTREAM footer: none without FSYNC), the run's
 * state in locals (stores into join[] might alias the deformatter's fields). With frames_at,
 * so are the frames whose one ID byte restates the source (14 data bytes). Returns where the
 * first frame not taken starts. */
static size_t join_run(tk_cs_deformatter *d, const uint8_t *buf, size_t len, size_t pos)
{
    if (!d->njoin || d->join_next != d->offset + pos || ds_blocks(d))
        return pos;
    uint8_t *const join = d->join;
    uint16_t *const at = d->frames_at ? d->join_at : NULL;
    uint16_t at0 = (uint16_t)(d->join_next - d->join_index);
    size_t nj = d->njoin;
#if TK_JOIN_AVX2
    if (d->avx2) {
        const size_t k = join_frames_avx2(buf + pos, len - pos, join, at, &nj, at0, JOIN_FULL,
                                          at && d->cur_id == d->join_id ? d->join_id : -1);
        pos += k;
        at0 = (uint16_t)(at0 + k); /* FRAME positions a frame */
    }
#endif
    for (; len - pos >= FRAME && nj <= JOIN_FULL; pos += FRAME) {
        const uint8_t *f = buf + pos;
        uint64_t lo = tk_load_le64(f), hi = tk_load_le64(f + 8);
        size_t n = 15;
        if (!((lo | hi) & 0x0001000100010001ull)) {
            lo |= spread_aux[f[15] & 0xf];
            hi |= spread_aux[f[15] >> 4];
        } else if (at && d->cur_id == d->join_id && restated(&lo, &hi, f[15], d->join_id)) {
            n = 14;
        } else {
            break;
        }
        tk_store_le64(join + nj, lo);
        tk_store_le64(join + nj + 8, hi);
        if (at)
            put_at(at + nj, at0);
        nj += n;
        at0 += FRAME;
    }
    d->njoin = nj;
    d->join_next = d->offset + pos;
    return pos;
}

static bool is_fsync(const uint8_t *p)
{
    return p[0] == 0xff && p[1] == 0xff && p[2] == 0xff && p[3] == 0x7f;
}

/* Process as much of buf as possible; returns bytes consumed in *used. final: no more data. */
static tk_status process(tk_cs_deformatter *d, const uint8_t *buf, size_t len, bool final,
                         size_t *used)
{
    size_t pos = 0;
    tk_status st = TK_OK;
    const bool fsync = d->flags & TK_CS_DEFMT_FSYNC;
    const bool hsync = d->flags & TK_CS_DEFMT_HSYNC;

    if (!fsync) {
        /* Memory-aligned frames: unpack them in place, most of them in join_run(). */
        for (; len - pos >= FRAME; pos += FRAME) {
            pos = join_run(d, buf, len, pos);
            if (len - pos < FRAME)
                break;
            if ((st = unpack(d, buf + pos, d->offset + pos))) {
                *used = pos;
                return st;
            }
        }
    }
    while (pos < len) {
        if (fsync) {
            if (!d->synced) {
                /* Look for the first FSYNC; everything before it cannot be framed. */
                size_t start = pos;
                while (pos + 4 <= len && !is_fsync(buf + pos))
                    pos++;
                if (pos + 4 > len) {
                    if (!final) {
                        *used = start + (pos > start ? pos - start : 0);
                        return TK_OK;
                    }
                    pos = len;
                    break;
                }
                d->synced = true;
            }
            while (pos + 4 <= len && is_fsync(buf + pos))
                pos += 4;
            if (pos + 4 > len && !final && len - pos < FRAME) {
                break; /* might be the start of another FSYNC */
            }
        }
        /* Gather one frame: 8 halfwords, skipping HSYNCs. */
        uint8_t f[FRAME];
        size_t nf = 0, p = pos;
        uint64_t sof = d->offset + pos;
        bool bad = false;
        while (nf < FRAME && p + 2 <= len) {
            uint8_t lo = buf[p], hi = buf[p + 1];
            if (fsync && lo == 0xff && hi == 0x7f) {
                if (!hsync) {
                    bad = true;
                    st = report(d, TK_ERR_FORMAT, d->offset + p, "HSYNC inside a frame");
                    break;
                }
                p += 2;
                continue;
            }
            if (fsync && lo == 0xff && hi == 0xff) {
                bad = true;
                st = report(d, TK_ERR_FORMAT, d->offset + p,
                            "FSYNC inside a frame or reserved ID 0x7f");
                break;
            }
            f[nf++] = lo;
            f[nf++] = hi;
            p += 2;
        }
        if (bad) {
            if (st)
                return st;
            /* Resynchronise at the next FSYNC; source IDs are unknown until an ID byte. */
            d->synced = false;
            d->cur_id = 0xff;
            pos = p + 2;
            continue;
        }
        if (nf < FRAME) {
            if (!final)
                break;
            st = report(d, TK_ERR_TRUNCATED, sof, "trace ends inside a frame");
            pos = len;
            if (st)
                return st;
            break;
        }
        if ((st = unpack(d, f, sof)))
            return st;
        pos = p;
    }
    *used = pos;
    return TK_OK;
}

/* Feed trace bytes (no DSTREAM footers among them) at stream offset d->offset. */
static tk_status deformat_stream(tk_cs_deformatter *d, const uint8_t *buf, size_t len)
{
    size_t used;
    tk_status st;
    while (len) {
        if (d->ncarry) {
            /* A partial frame is pending: complete it in the carry buffer first. */
            size_t take = sizeof(d->carry) - d->ncarry;
            if (take > len)
                take = len;
            memcpy(d->carry + d->ncarry, buf, take);
            d->ncarry += take;
            buf += take;
            len -= take;
            if ((st = process(d, d->carry, d->ncarry, false, &used))) {
                d->njoin = 0;
                return st;
            }
            if (!used && d->ncarry == sizeof(d->carry))
                return TK_ERR_STATE; /* cannot happen: 64 bytes always hold a frame */
            memmove(d->carry, d->carry + used, d->ncarry - used);
            d->ncarry -= used;
            d->offset += used;
            continue;
        }
        if ((st = process(d, buf, len, false, &used))) {
            d->njoin = 0;
            return st;
        }
        d->offset += used;
        size_t rest = len - used;
        if (rest > sizeof(d->carry))
            return TK_ERR_STATE; /* cannot happen: process leaves less than a frame */
        memcpy(d->carry, buf + used, rest);
        d->ncarry = rest;
        break;
    }
    return flush_join(d);
}

tk_status tk_cs_deformat(tk_cs_deformatter *d, const uint8_t *buf, size_t len)
{
    if (!ds_blocks(d))
        return deformat_stream(d, buf, len);
    /* Where the file is in its block decides what the bytes are, so any split of the input
     * gives the same result; a last partial block is trace up to its 504th byte. */
    while (len) {
        size_t in_block = (size_t)(d->raw % DS_BLOCK), take;
        tk_status st = TK_OK;
        if (in_block < DS_DATA) {
            take = len < DS_DATA - in_block ? len : DS_DATA - in_block;
            st = deformat_stream(d, buf, take);
        } else {
            take = len < DS_BLOCK - in_block ? len : DS_BLOCK - in_block; /* the footer */
        }
        if (st)
            return st;
        d->raw += take;
        buf += take;
        len -= take;
    }
    return TK_OK;
}

void tk_cs_deformatter_restart(tk_cs_deformatter *d, uint64_t offset)
{
    d->raw = offset;
    if (ds_blocks(d)) /* the stream offset of the first trace byte at or after offset */
        offset = offset / DS_BLOCK * DS_DATA +
                 (offset % DS_BLOCK < DS_DATA ? offset % DS_BLOCK : DS_DATA);
    d->offset = offset;
    d->ncarry = 0;
    d->njoin = 0;
    d->cur_id = 0xff;
    d->synced = !(d->flags & TK_CS_DEFMT_FSYNC);
}

tk_status tk_cs_deformat_end(tk_cs_deformatter *d)
{
    size_t used;
    tk_status st = TK_OK;
    if (d->ncarry) {
        st = process(d, d->carry, d->ncarry, true, &used);
        d->offset += d->ncarry;
        d->ncarry = 0;
    }
    if (!st)
        st = flush_join(d);
    d->njoin = 0;
    return st;
}
