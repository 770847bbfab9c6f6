/* SPDX-License-Identifier: BSD-2-Clause */
#include "util/sort.h"
#include "util/compiler.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t key_at(const unsigned char *rec, size_t key)
{
    uint64_t k;
    memcpy(&k, rec + key, sizeof(k));
    return k;
}

/* One pass: every record to its digit's next place. Inlined at both calls, so a constant
 * size makes the copy a plain move. */
static TK_ALWAYS_INLINE void scatter(unsigned char *dst, const unsigned char *src, size_t n,
                                     size_t size, size_t key, unsigned shift, size_t *at)
{
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = src + i * size;
        memcpy(dst + at[(key_at(r, key) >> shift) & 0xff]++ * size, r, size);
    }
}

bool tk_sort_by_u64(void *base, size_t n, size_t size, size_t key)
{
    if (n < 2)
        return true;
    unsigned char *const a = base;
    /* the bytes in which some key differs from the first: only those need a pass */
    const uint64_t k0 = key_at(a, key);
    uint64_t diff = 0;
    for (size_t i = 1; i < n; i++)
        diff |= key_at(a + i * size, key) ^ k0;
    if (!diff)
        return true;
    unsigned char *tmp = malloc(n * size);
    if (!tmp)
        return false;
    unsigned char *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if (!((diff >> shift) & 0xff))
            continue;
        size_t at[256] = {0};
        for (size_t i = 0; i < n; i++)
            at[(key_at(src + i * size, key) >> shift) & 0xff]++;
        size_t sum = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t c = at[d];
            at[d] = sum;
            sum += c;
        }
        /* Plain 64-bit keys (the code view's function entries) move with an inlined copy
         * instead of a memcpy call each. */
        if (size == sizeof(uint64_t))
            scatter(dst, src, n, sizeof(uint64_t), key, shift, at);
        else
            scatter(dst, src, n, size, key, shift, at);
        unsigned char *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * size);
    free(tmp);
    return true;
}
