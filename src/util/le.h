/* SPDX-License-Identifier: BSD-2-Clause */
/* Little-endian 64-bit words of a byte buffer: the packet formats (E-Trace payloads, formatter
 * frames, ETMv4 address payloads) are little-endian, and on little-endian hosts each is one
 * unaligned move. */
#ifndef TK_UTIL_LE_H
#define TK_UTIL_LE_H

#include <stdint.h>
#include <string.h>

/* The 8 bytes at p as a little-endian value. */
static inline uint64_t tk_load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8); /* one unaligned load */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* v stored at p, least significant byte first. */
static inline void tk_store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

#endif
