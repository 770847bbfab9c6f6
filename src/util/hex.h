/* SPDX-License-Identifier: BSD-2-Clause */
/* Fast number formatting for listings of millions of lines (printf's parsing of its format
 * string was most of their cost). */
#ifndef TK_UTIL_HEX_H
#define TK_UTIL_HEX_H

#include <stdint.h>
#include <string.h>

/* Eight hex digits of a 32-bit value as ASCII, most significant first in memory order:
 * the nibbles are spread into bytes and turned into characters all at once (SWAR). */
static inline uint64_t tk_hex8(uint32_t v)
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

/* v in lower-case hex without leading zeros at p; returns the end. Stores 8 bytes at a time:
 * p needs 16 bytes of room whatever v is. */
static inline char *tk_put_hex(char *p, uint64_t v)
{
    const unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n > 8) {
        const unsigned nh = n - 8;
        const uint64_t hi = tk_hex8((uint32_t)(v >> 32)) >> (8 * (8 - nh));
        memcpy(p, &hi, 8);
        const uint64_t lo = tk_hex8((uint32_t)v);
        memcpy(p + nh, &lo, 8);
    } else {
        const uint64_t c = tk_hex8((uint32_t)v) >> (8 * (8 - n));
        memcpy(p, &c, 8);
    }
#else
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = n; i-- > 0; v >>= 4)
        p[i] = digits[v & 15];
#endif
    return p + n;
}

/* v in decimal at p (at most 20 digits); returns the end. */
static inline char *tk_put_dec(char *p, uint64_t v)
{
    if (v < 10) { /* most fields of ingress rows and profile lines */
        *p = (char)('0' + v);
        return p + 1;
    }
    if (v < 100) { /* most of the rest (instructions per range) */
        p[0] = (char)('0' + v / 10);
        p[1] = (char)('0' + v % 10);
        return p + 2;
    }
    char tmp[20];
    unsigned n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = tmp[--n];
    return p;
}

#endif
