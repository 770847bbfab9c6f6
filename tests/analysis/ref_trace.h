/* SPDX-License-Identifier: BSD-2-Clause */
/* Test helpers over the shared reference data: read an executed-PC list (one hex PC per line,
 * the reference decoder's .decoder.trace), classify instructions from a program image the way
 * an exact decoder ends its ranges, and count the profile's numbers straight from the PCs. */
#ifndef TK_TEST_REF_TRACE_H
#define TK_TEST_REF_TRACE_H

#include <stdio.h>
#include <stdlib.h>

#include "pc_events.h"
#include "testutil.h"
#include "tracekit/image.h"
#include "tracekit/riscv.h"

/* PCs of a (gzipped) PC list; NULL if unreadable or malformed. */
static inline uint64_t *ref_read_pcs(const char *path, size_t *n)
{
    size_t len = 0;
    uint8_t *text = tk_test_read_file(path, &len);
    if (!text)
        return NULL;
    size_t cap = 1024, k = 0;
    uint64_t *pcs = malloc(cap * sizeof(*pcs));
    const char *c = (const char *)text, *end = c + len;
    while (pcs && c < end) {
        uint64_t v = 0;
        int digits = 0;
        for (; c < end && *c != '\n'; c++, digits++) {
            int d = *c >= '0' && *c <= '9'   ? *c - '0'
                    : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
                    : *c >= 'A' && *c <= 'F' ? *c - 'A' + 10
                                             : -1;
            if (d < 0 || digits >= 16) {
                free(pcs);
                pcs = NULL;
                break;
            }
            v = v << 4 | (uint64_t)d;
        }
        if (!pcs)
            break;
        c++;
        if (!digits)
            continue;
        if (k == cap) {
            cap *= 2;
            uint64_t *np = realloc(pcs, cap * sizeof(*pcs));
            if (!np) {
                free(pcs);
                pcs = NULL;
                break;
            }
            pcs = np;
        }
        pcs[k++] = v;
    }
    free(text);
    *n = k;
    return pcs;
}

#endif
