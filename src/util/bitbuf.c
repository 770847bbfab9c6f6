/* SPDX-License-Identifier: BSD-2-Clause */
#include "util/bitbuf.h"

/* Index of the most significant bit in [0, n) that differs from bit n-1, or -1. Scans whole
 * words from the top. */
static int highest_differing(const uint64_t *w, unsigned n)
{
    unsigned top = n - 1;
    uint64_t sign = ((w[top >> 6] >> (top & 63)) & 1) ? ~0ull : 0;
    for (int i = (int)(top >> 6); i >= 0; i--) {
        uint64_t diff = w[i] ^ sign;
        unsigned valid = (unsigned)i == (top >> 6) ? (top & 63) : 64; /* bits below top */
        diff &= valid >= 64 ? ~0ull : ((1ull << valid) - 1);
        if (diff)
            return i * 64 + 63 - __builtin_clzll(diff);
    }
    return -1;
}

size_t tk_bitw_compress(const tk_bitw *b, uint8_t *out, size_t cap)
{
    if (b->pos == 0 || b->overflow)
        return 0;
    int hd = highest_differing(b->w, b->pos);
    unsigned keep = (unsigned)(hd + 2); /* the differing bit, plus one sign copy above it */
    size_t nbytes = (keep + 7) / 8;
    if (nbytes > cap)
        return 0;
    unsigned top = b->pos - 1;
    unsigned sign = (unsigned)(b->w[top >> 6] >> (top & 63)) & 1;
    for (size_t i = 0; i < nbytes; i++) {
        uint8_t byte = (uint8_t)(b->w[i >> 3] >> (8 * (i & 7)));
        /* bits at and above keep, and bits at or above pos, are sign copies */
        unsigned lo = (unsigned)i * 8;
        unsigned from = keep < b->pos ? keep : b->pos;
        if (lo + 8 > from) {
            unsigned k = from > lo ? from - lo : 0;
            uint8_t m = (uint8_t)(0xffu << k);
            byte = sign ? (uint8_t)(byte | m) : (uint8_t)(byte & ~m);
        }
        out[i] = byte;
    }
    return nbytes;
}

size_t tk_bitw_bytes(const tk_bitw *b, uint8_t *out, size_t cap)
{
    if (b->overflow)
        return 0;
    size_t nbytes = (b->pos + 7) / 8;
    if (nbytes > cap)
        return 0;
    for (size_t i = 0; i < nbytes; i++)
        out[i] = (uint8_t)(b->w[i >> 3] >> (8 * (i & 7)));
    return nbytes;
}

bool tk_bitr_init(tk_bitr *r, const uint8_t *payload, size_t len)
{
    if (len == 0 || len > 8 * (TK_BITBUF_WORDS - 1))
        return false;
    /* Fill with copies of the last received bit, then lay the payload over it. */
    uint64_t fill = (payload[len - 1] & 0x80) ? ~0ull : 0;
    /* unrolled: -O2 keeps a loop here, and this runs once per packet */
    _Static_assert(TK_BITBUF_WORDS == 9, "unrolled fill below");
    r->w[0] = r->w[1] = r->w[2] = r->w[3] = r->w[4] = fill;
    r->w[5] = r->w[6] = r->w[7] = r->w[8] = fill;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(r->w, payload, len);
#else
    for (size_t k = 0; k < len; k++) {
        uint64_t *w = &r->w[k / 8];
        *w = (*w & ~(0xffull << (8 * (k % 8)))) | (uint64_t)payload[k] << (8 * (k % 8));
    }
#endif
    r->pos = 0;
    r->nbits = (unsigned)(8 * len);
    return true;
}
