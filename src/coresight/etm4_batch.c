/* SPDX-License-Identifier: BSD-2-Clause */
/* The ETMv4 parser's batch modes (tk_etm4_parser_set_batch, tk_etm4_parser_set_batch_runs):
 * atoms and address packets straight from the data into compact records, with the state
 * changes the complete parser (etm4_packet.c) makes for them; any other packet goes back to it.
 * tests/coresight/test_etm4_batch.c checks every mode against the complete parser. */
#include <stddef.h>
#include <string.h>

#include "coresight/etm4_atom_run.h"
#include "coresight/etm4_parser_int.h"
#include "util/compiler.h"
#include "util/le.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The atom-run walk's build with BMI2's pext (runs_pext), next to the portable one. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define TK_RUNS_PEXT 1
#else
#define TK_RUNS_PEXT 0
#endif

/* BMI2, except on the AMD cores that run pext in microcode (dozens of cycles: families 15h,
 * 17h), where the multiplies are faster. */
bool tk_etm4_pext_is_fast(void)
{
#if TK_RUNS_PEXT
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("amdfam15h") &&
           !__builtin_cpu_is("amdfam17h");
#else
    return false;
#endif
}

/* The bytes of a compact packet from type to match_idx as a little-endian word (atom_num 0,
 * addr_is and addr_64 to be put in). */
#define LITE_WORD(type, header, size, bits, match_idx)                                             \
    ((uint64_t)(type) | (uint64_t)(header) << 8 | (uint64_t)(size) << 24 |                         \
     (uint64_t)(bits) << 32 | (uint64_t)(match_idx) << 56)

/* ... stored in one go (one move on little-endian hosts). */
static inline void put_lite_word(tk_etm4_pkt_lite *o, uint64_t w)
{
    _Static_assert(offsetof(tk_etm4_pkt_lite, match_idx) == offsetof(tk_etm4_pkt_lite, type) + 7,
                   "type..match_idx are 8 consecutive bytes");
    tk_store_le64((uint8_t *)o + offsetof(tk_etm4_pkt_lite, type), w);
}

/* The batch path keeps an address-history entry's valid bits as a thermometer code over the
 * values they take (0; 8, 9, 16, 17 from short addresses of IS1 and IS0; 32, 64 from long
 * ones): value k of that list sets bits 0..k-1, so the larger of two values is their OR, one
 * instruction where the comparison took several. */
#define VB_CODE(bits)                                                                              \
    ((1u << (((bits) >= 8) + ((bits) >= 9) + ((bits) >= 16) + ((bits) >= 17) + ((bits) >= 32) +    \
             ((bits) >= 64))) -                                                                    \
     1)

/* The valid bits of a code (the codes are thermometers: VB_CODE's, or an OR of them). */
static const uint8_t vb_value_of[64] = {
    [0x00] = 0, [0x01] = 8, [0x03] = 9, [0x07] = 16, [0x0f] = 17, [0x1f] = 32, [0x3f] = 64};

/* A history entry's meta data as both walks keep it: IS [0], 64-bit [8], valid bits as
 * VB_CODE [14:9]. */
static inline unsigned entry_meta(const addr_entry *e)
{
    return e->is | (unsigned)e->is64 << 8 | VB_CODE(e->valid_bits) << 9;
}

/* The history entry of value v and meta data m (bits above 14 ignored). */
static inline addr_entry entry_of(uint64_t v, uint64_t m)
{
    return (addr_entry){v, (uint8_t)(m & 1), vb_value_of[(m >> 9) & 0x3f], (uint8_t)((m >> 8) & 1)};
}

static TK_ALWAYS_INLINE tk_status batch_run_body(tk_etm4_parser *p, const uint8_t *d,
                                                 const uint16_t *at, size_t n, uint64_t index,
                                                 size_t *pi, const bool frames)
{
    tk_status st = TK_OK;
    /* The address history lives in locals here (registers): updating it in the parser through
     * memory costs store-forwarding stalls on every address packet. Written back at the end
     * (the batch callback cannot see the parser). The current address is always the newest
     * history entry (every packet that sets it pushes it), so only the three entries are kept:
     * their values, and their meta data (IS [0], 64-bit [8], valid bits as VB_CODE [14:9]) in
     * 16 bits each of one word (entry i at bit 16 i), so that all fit in registers. */
    uint64_t v0 = p->stack[0].val, v1 = p->stack[1].val, v2 = p->stack[2].val;
    uint64_t ms = entry_meta(&p->stack[0]) | (uint64_t)entry_meta(&p->stack[1]) << 16 |
                  (uint64_t)entry_meta(&p->stack[2]) << 32;
    const unsigned aarch64_ctx = p->ctx_valid && p->ctxs.sf, ctx64 = aarch64_ctx << 8;
    const tk_etm4_pkt_lite *const atom_lite = p->atom_lite;
#define PUSH(v, m) (v2 = v1, v1 = v0, v0 = (v), ms = ms << 16 | (m))
    /* An address's meta data after a packet that carries bits of it (IS is, 64-bit is64 or
     * kept: keep64 0x100 or 0): the valid bits grow to bits (constant). */
#define GROW(is, is64, keep64, bits)                                                               \
    (((unsigned)ms & (0x7e00 | (keep64))) | (is) | (is64) | VB_CODE(bits) << 9)
    /* §6.4.12 short address, as short_addr(), for IS is: 7 or 15 bits above the instruction
     * alignment (a second byte when bit 7 of the first is set); all else constant per case. */
#define SHORT_ADDR(is)                                                                             \
    do {                                                                                           \
        const uint64_t b1 = b[j + 1];                                                              \
        const unsigned lo = 7 + 2 - (is);                                                          \
        if (!(b1 & 0x80)) {                                                                        \
            a = (v0 & ~((1ull << lo) - 1)) | (b1 & 0x7f) << (2 - (is));                            \
            m = GROW((is), 0u, 0x100u, lo);                                                        \
            len = 2;                                                                               \
            w = LITE_WORD(TK_ETM4_ADDR_S_IS0 + (is), 0x95 + (is), 2u, lo, 0);                      \
        } else {                                                                                   \
            a = (v0 & ~((1ull << (lo + 8)) - 1)) | (b1 & 0x7f) << (2 - (is)) |                     \
                (uint64_t)b[j + 2] << lo;                                                          \
            m = GROW((is), 0u, 0x100u, lo + 8);                                                    \
            len = 3;                                                                               \
            w = LITE_WORD(TK_ETM4_ADDR_S_IS0 + (is), 0x95 + (is), 3u, lo + 8, 0);                  \
        }                                                                                          \
    } while (0)
    /* Joined frames: byte k of d is at index + at[k] (a load per record; with k + k / 15
     * computed, a multiply). Byte k of b below: at index + bat[k], or ib + k without frames. */
#define INDEX(k) (frames ? index + bat[k] : ib + (k))
    /* Every step reads the 16 bytes at b + j: first over d up to its last 16 bytes, then over
     * a zero-padded copy of the rest (zero is no packet this path takes). Byte j of b is byte
     * off + j of d; valid: bytes of b that are data. The records written past the data (the
     * four atom records) read as far as 16 entries of bat past it: the copy has them. */
    uint8_t tail[32];
    uint16_t tail_at[48];
    const uint8_t *b = d;
    const uint16_t *bat = at;
    uint64_t ib = index;
    size_t off = 0, j = *pi, valid = n, jend = n > 15 ? n - 15 : 0;
    bool last = false;
    /* A step writes at most 16 atoms and one address packet (and 4 atom records always). */
    tk_etm4_pkt_lite *o = p->lite + p->nlite;
    tk_etm4_pkt_lite *const o_lim = p->lite + LITE_MAX - 17;
    for (;;) {
        while (j < jend) {
            if (o > o_lim) {
                /* The batch is full: hand it over and go on. */
                p->nlite = (size_t)(o - p->lite);
                if ((st = tk_etm4_parser_flush(p)))
                    goto out;
                o = p->lite;
            }
            /* A run of atoms: the first four records are written whatever the run's length
             * (those past it are overwritten later), so short runs take no branch. A record
             * is its template from atoms on (addr is not used by atoms) and its index. */
            const unsigned run = tk_etm4_atom_run(b + j);
            for (unsigned k = 0; k < 4; k++) {
                memcpy(&o[k].atoms, &atom_lite[b[j + k] - 0xc0].atoms, LITE_TAIL);
                o[k].index = INDEX(j + k);
            }
            for (unsigned k = 4; k < run; k++) {
                memcpy(&o[k].atoms, &atom_lite[b[j + k] - 0xc0].atoms, LITE_TAIL);
                o[k].index = INDEX(j + k);
            }
            o += run;
            j += run;
            if (run == 16 || j >= jend)
                continue;
            /* An address packet (the most frequent first): its state change, and the
             * compact packet's bytes from type to match_idx as one word (w). */
            const unsigned h = b[j];
            uint64_t a, w;
            unsigned m, len;
            if (h == 0x95)
                SHORT_ADDR(0);
            else if (h == 0x96)
                SHORT_ADDR(1);
            else if ((uint8_t)(h - 0x90) < 3) {
                /* exact match, as exact_match(): history entry h & 3 */
                const unsigned idx = h & 3;
                a = idx == 0 ? v0 : (idx == 1 ? v1 : v2);
                m = (unsigned)(ms >> (16 * idx)) & 0xffff;
                len = 1;
                w = LITE_WORD(TK_ETM4_ADDR_MATCH, h, 1u, 0u, idx);
            } else if ((uint8_t)(h - 0x9a) < 2) {
                /* long 32-bit address, as set_addr32(): in AArch64 the high half is kept */
                const unsigned is = h & 1;
                a = (uint32_t)long_addr(b + j + 1, 4, is);
                if (aarch64_ctx)
                    a |= v0 & ~0xffffffffull;
                m = GROW(is, ctx64, 0u, 32u);
                len = 5;
                w = LITE_WORD(TK_ETM4_ADDR_L_32IS0 + is, h, 5u, 32u, 0);
            } else if ((uint8_t)(h - 0x9d) < 2) {
                /* long 64-bit address, as set_addr64() */
                const unsigned is = h == 0x9e;
                a = long_addr(b + j + 1, 8, is);
                m = is | 1u << 8 | VB_CODE(64u) << 9;
                len = 9;
                w = LITE_WORD(TK_ETM4_ADDR_L_64IS0 + is, h, 9u, 64u, 0);
            } else {
                goto stop;
            }
            if (j + len > valid)
                goto stop; /* not complete in d: nothing is changed */
            PUSH(a, m);
            o->index = INDEX(j);
            o->addr = a;
            o->atoms = 0;
            put_lite_word(o, w | (uint64_t)(m & 0x101) << 40); /* addr_is, addr_64 */
            o++;
            j += len;
        }
        if (last)
            break;
        /* The last bytes of d (fewer than 16 left), from a zero-padded copy: of the last 16
         * bytes when there are as many (a copy of fixed size, no call). */
        memset(tail, 0, sizeof(tail));
        if (n >= 16) {
            off = n - 16;
            memcpy(tail, d + off, 16);
        } else {
            off = 0;
            memcpy(tail, d, n);
        }
        j -= off;
        valid = jend = n - off;
        b = tail;
        if (frames) {
            memset(tail_at, 0, sizeof(tail_at));
            memcpy(tail_at, at + off, (n - off) * sizeof(*at));
            bat = tail_at;
        }
        ib = index + off;
        last = true;
    }
stop: /* a packet for the complete parser, or one not complete in d (or the data ends) */
    p->nlite = (size_t)(o - p->lite);
out:
#undef INDEX
#undef PUSH
#undef GROW
#undef SHORT_ADDR
    p->stack[0] = entry_of(v0, ms);
    p->stack[1] = entry_of(v1, ms >> 16);
    p->stack[2] = entry_of(v2, ms >> 32);
    p->cur = p->stack[0];
    *pi = off + j;
    return st;
}

/* ---- batch mode with atom runs ----------------------------------------------------------- */

/* The address rules (addr_rule) for both states of the context (AArch64 [1] or not [0]). */
void tk_etm4_build_rules(tk_etm4_parser *p)
{
    memset(p->rule, 0, sizeof(p->rule));
    for (unsigned a64 = 0; a64 < 2; a64++)
        for (unsigned h = 0x90; h <= 0x9f; h++)
            for (unsigned c = 0; c < 2; c++) {
                addr_rule *e = &p->rule[a64][(h & 15) * 2 + c];
                if (h <= 0x92) { /* exact match: history entry h & 3, as it is */
                    e->idx = h & 3;
                    e->keep = ~0ull;
                    e->mkeep = 0xffff;
                    e->word = LITE_WORD(TK_ETM4_ADDR_MATCH, h, 1u, 0u, h & 3);
                } else if (h == 0x95 || h == 0x96) { /* short: 7 or 15 bits above alignment */
                    const unsigned is = h == 0x96, lo = 9 - is, bits = lo + (c ? 8 : 0);
                    e->mul0 = 1u << (2 - is);
                    e->m1 = c ? 0xff : 0;
                    e->mul1 = 1u << lo;
                    e->keep = ~((1ull << bits) - 1);
                    e->mkeep = 0x7f00;
                    e->mset = (uint16_t)(is | VB_CODE(bits) << 9);
                    e->word = LITE_WORD(TK_ETM4_ADDR_S_IS0 + is, h, 2u + c, bits, 0);
                    e->pm = c ? 0xff7f : 0x7f;
                    e->sh = 2 - is;
                } else if (h == 0x9a || h == 0x9b || h == 0x9d || h == 0x9e) { /* long */
                    const unsigned l64 = h >= 0x9d, is = l64 ? h == 0x9e : h & 1;
                    e->mul0 = 1u << (2 - is);
                    e->m1 = is ? 0xff : 0x7f;
                    e->mul1 = is ? 1u << 8 : 1u << 9;
                    e->sh = 2 - is;
                    e->pm = (is ? 0xff7full : 0x7f7full) | (l64 ? ~0xffffull : 0xffff0000ull);
                    if (l64) {
                        e->mhi = ~0xffffull;
                        e->mset = (uint16_t)(is | 0x100 | VB_CODE(64u) << 9);
                        e->word = LITE_WORD(TK_ETM4_ADDR_L_64IS0 + is, h, 9u, 64u, 0);
                    } else {
                        /* in AArch64 state the high half is kept (as set_addr32) */
                        e->mhi = 0xffff0000ull;
                        e->keep = a64 ? ~0xffffffffull : 0;
                        e->mkeep = 0x7e00;
                        e->mset = (uint16_t)(is | (a64 ? 0x100 : 0) | VB_CODE(32u) << 9);
                        e->word = LITE_WORD(TK_ETM4_ADDR_L_32IS0 + is, h, 5u, 32u, 0);
                    }
                }
            }
}

/* The offsets of the 8 positions from at[0] on from at[0], one per byte (byte k of the
 * value = at[k] - at[0], 255 at most): where the packets of an atom run are. */
static inline uint64_t run_offsets(const uint16_t *at)
{
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)at);
    const __m128i off = _mm_sub_epi16(v, _mm_set1_epi16((short)at[0]));
    uint8_t w[8];
    _mm_storel_epi64((__m128i *)(void *)w, _mm_packus_epi16(off, off));
    return tk_load_le64(w);
#else
    uint64_t w = 0;
    for (unsigned k = 0; k < 8; k++) {
        const unsigned o = (uint16_t)(at[k] - at[0]);
        w |= (uint64_t)(o < 255 ? o : 255) << (8 * k);
    }
    return w;
#endif
}

#if TK_RUNS_PEXT
/* BMI2's pext, in assembly: the walk is built once with it (runs_pext, a BMI2 function) and
 * once without, from one body, and an intrinsic may not appear in the build without. */
static inline uint64_t pext64(uint64_t v, uint64_t mask)
{
    uint64_t r;
    __asm__("pextq %2, %1, %0" : "=r"(r) : "r"(v), "rm"(mask));
    return r;
}
#else
static inline uint64_t pext64(uint64_t v, uint64_t mask)
{
    (void)v;
    (void)mask;
    return 0; /* (never called: pext is false) */
}
#endif

/* Batch mode with atom runs: as batch_run_body, with the atoms in TK_ETM4_LITE_ATOMS records
 * and the walk over precomputed windows (etm4_window.h). The address history is a ring of four
 * entries in memory (slot top is the newest): a packet reads entry idx from slot top - idx
 * with no branch on idx. */
static TK_ALWAYS_INLINE tk_status runs_body(tk_etm4_parser *p, const uint8_t *d, const uint16_t *at,
                                            size_t n, uint64_t index, size_t *pi, const bool frames,
                                            const bool pext)
{
    tk_status st = TK_OK;
    /* the last bytes, a padded copy (their window goes into the parser's arrays) */
    uint8_t pad[RUN_PAD];
    uint16_t pad_at[RUN_PAD];
    uint64_t hv[4] = {p->stack[0].val, 0, p->stack[2].val, p->stack[1].val};
    uint16_t hm[4] = {(uint16_t)entry_meta(&p->stack[0]), 0, (uint16_t)entry_meta(&p->stack[2]),
                      (uint16_t)entry_meta(&p->stack[1])};
    unsigned top = 0;
    const addr_rule *const rules = p->rule[p->ctx_valid && p->ctxs.sf];
    tk_etm4_pkt_lite *o = p->lite + p->nlite;
    tk_etm4_pkt_lite *const o_lim = p->lite + LITE_MAX - 2; /* a step writes two records */
    size_t c0 = *pi & ~(size_t)15, r = *pi - c0;            /* at c0 + r */
#define FLUSH_IF_FULL()                                                                            \
    do {                                                                                           \
        if (TK_UNLIKELY(o > o_lim)) {                                                              \
            p->nlite = (size_t)(o - p->lite);                                                      \
            if ((st = tk_etm4_parser_flush(p)))                                                    \
                goto out;                                                                          \
            o = p->lite;                                                                           \
        }                                                                                          \
    } while (0)
    while (c0 + r < n) {
        const size_t start = c0 + r;
        const uint8_t *bw;
        const uint16_t *aw;
        size_t lim, brk; /* walk while r < lim; an address packet at or past brk: next window */
        if (n - (start & ~(size_t)15) > RUN_PAD - 48) {
            /* The data itself, in blocks whose every read is inside d; the arrays stay
             * valid for the rest of this call (a packet for the complete parser comes back
             * here with the same d). */
            if (!(p->win_d == d && p->win_n == n && start >= p->win_c0 &&
                  start < p->win_c0 + p->win_w - 32)) {
                c0 = start & ~(size_t)15;
                size_t w = (n - c0 - 17) & ~(size_t)15;
                w = w < RUN_WIN ? w : RUN_WIN;
                p->window(d + c0, (unsigned)(w / 16), p->win, p->win + WIN_STRIDE,
                          p->win + 2 * WIN_STRIDE);
                p->win_d = d;
                p->win_n = n;
                p->win_c0 = c0;
                p->win_w = w;
            }
            c0 = p->win_c0;
            bw = d + c0;
            aw = frames ? at + c0 : NULL;
            lim = p->win_w - 32;
            brk = p->win_w - 16;
        } else {
            /* The last bytes, from a zero-padded copy (zero is a header the fast path does
             * not take: the walk stops at the data's end). */
            c0 = start & ~(size_t)15;
            const size_t nwin = n - c0;
            const unsigned nblk = (unsigned)(nwin / 16 + 1);
            /* reads go up to 16 nblk + 17 <= nwin + 33 (bytes), nwin + 8 (positions) */
            memcpy(pad, d + c0, nwin);
            memset(pad + nwin, 0, 48);
            bw = pad;
            aw = NULL;
            if (frames) {
                memcpy(pad_at, at + c0, nwin * sizeof(*at));
                memset(pad_at + nwin, 0, 16 * sizeof(*at));
                aw = pad_at;
            }
            p->win_d = NULL; /* (the arrays hold the tail's now) */
            p->window(pad, nblk, p->win, p->win + WIN_STRIDE, p->win + 2 * WIN_STRIDE);
            /* a packet the data ends inside is for the complete parser (it keeps it) */
            for (size_t q = nwin > 9 ? nwin - 9 : 0; q < nwin; q++)
                if (q + p->win[WIN_STRIDE + q] > nwin)
                    p->win[WIN_STRIDE + q] = 0;
            lim = nwin;
            brk = (size_t)-1;
        }
        const uint64_t ib = index + c0;
        const uint8_t *const dist = p->win, *const len = p->win + WIN_STRIDE,
                             *const rid = p->win + 2 * WIN_STRIDE;
        r = start - c0;
        while (r < lim) {
            FLUSH_IF_FULL();
            const size_t a = r + dist[r];
            /* The atoms from r to a, in records of up to 8 (one record, written whether or
             * not there are any, is taken only if there are). */
            size_t run = a - r;
            for (;;) {
                size_t k = run < 8 ? run : 8;
                /* the packets' offsets from the first: k without frames */
                uint64_t offs = 0x0706050403020100ull;
                if (frames) {
                    offs = run_offsets(aw + r);
                    /* (an offset over 255: a gap of other data, not seen in formatter
                     * frames; the run stops before it; looked for only when an offset of
                     * the 8 is 128 or more) */
                    if (TK_UNLIKELY(offs & 0x8080808080808080ull))
                        while (k > 1 && (uint16_t)(aw[r + k - 1] - aw[r]) > 255)
                            k--;
                }
                o->index = frames ? index + aw[r] : ib + r;
                memcpy(o->atom_headers, bw + r, 8);
                o->atoms = (uint32_t)offs; /* offsets of packets 0-3, 4-7 in the word */
                put_lite_word(o, LITE_WORD(TK_ETM4_LITE_ATOMS, 0u, k, 0u, 0u) |
                                     (offs & 0xffffffff00000000ull));
                o = k ? o + 1 : o;
                r += k;
                run -= k;
                if (TK_LIKELY(!run))
                    break;
                FLUSH_IF_FULL();
            }
            if (a >= brk)
                break; /* past what this window has for the packet: the next window */
            const unsigned l = len[a];
            if (TK_UNLIKELY(!l))
                goto done; /* a packet for the complete parser, or not complete in d: r is at it */
            const addr_rule *const e = rules + rid[a];
            const uint64_t y = tk_load_le64(bw + a + 1);
            const uint64_t bits =
                pext ? pext64(y, e->pm) << e->sh
                     : (y & 0x7f) * e->mul0 + ((y >> 8) & e->m1) * e->mul1 + (y & e->mhi);
            const unsigned slot = (top - e->idx) & 3;
            const uint64_t v = (hv[slot] & e->keep) | bits;
            const unsigned m = (hm[slot] & e->mkeep) | e->mset;
            top++;
            hv[top & 3] = v;
            hm[top & 3] = (uint16_t)m;
            o->index = frames ? index + aw[a] : ib + a;
            o->addr = v;
            o->atoms = 0;
            put_lite_word(o, e->word | (uint64_t)(m & 0x101) << 40); /* addr_is, addr_64 */
            o++;
            r = a + l;
        }
    }
done:
    p->nlite = (size_t)(o - p->lite);
out:
    for (unsigned i = 0; i < 3; i++)
        p->stack[i] = entry_of(hv[(top - i) & 3], hm[(top - i) & 3]);
    p->cur = p->stack[0];
#undef FLUSH_IF_FULL
    *pi = c0 + r;
    return st;
}

/* The walk of atom runs with pext (a BMI2 build of runs_body). */
#if TK_RUNS_PEXT
__attribute__((target("bmi2"))) static tk_status runs_pext(tk_etm4_parser *p, const uint8_t *d,
                                                           const uint16_t *at, size_t n,
                                                           uint64_t index, size_t *pi)
{
    return at ? runs_body(p, d, at, n, index, pi, true, true)
              : runs_body(p, d, NULL, n, index, pi, false, true);
}
#endif

tk_status tk_etm4_batch_run(tk_etm4_parser *p, const uint8_t *d, const uint16_t *at, size_t n,
                            uint64_t index, size_t *pi)
{
    if (p->runs) {
#if TK_RUNS_PEXT
        if (p->pext)
            return runs_pext(p, d, at, n, index, pi);
#endif
        return at ? runs_body(p, d, at, n, index, pi, true, false)
                  : runs_body(p, d, NULL, n, index, pi, false, false);
    }
    return at ? batch_run_body(p, d, at, n, index, pi, true)
              : batch_run_body(p, d, NULL, n, index, pi, false);
}
