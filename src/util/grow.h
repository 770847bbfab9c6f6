/* SPDX-License-Identifier: BSD-2-Clause */
/* Growable arrays: amortised doubling, one owner. */
#ifndef TK_UTIL_GROW_H
#define TK_UTIL_GROW_H

#include <stdint.h>
#include <stdlib.h>

#include "tracekit/status.h"

/* Make room for at least need elements of size elem in *p (capacity *cap). */
static inline tk_status tk_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return TK_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            return TK_ERR_NOMEM;
        ncap *= 2;
    }
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return TK_ERR_NOMEM;
    *p = np;
    *cap = ncap;
    return TK_OK;
}

#define TK_GROW(arr, n, cap, need) tk_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
