/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal: the resync timer. The reference flow counts packets (every packet, support packets
 * included) and restarts after each format 3 start or trap packet; the period is
 * 2^(resync_max + 4) packets (spec/VERSIONS.md C.8). The spec (exampleAlgorithm "Resync")
 * leaves the unit open; at max, pending branches are flushed (resync_br), past it a format 3
 * start packet is due. */
#ifndef TK_ETRACE_ENCODER_RESYNC_H
#define TK_ETRACE_ENCODER_RESYNC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tk_te_resync {
    uint64_t count;
    uint64_t max;
} tk_te_resync;

static inline void tk_te_resync_init(tk_te_resync *r, uint32_t resync_max)
{
    r->count = 0;
    r->max = resync_max + 4 < 63 ? (uint64_t)1 << (resync_max + 4) : UINT64_MAX - 1;
}

static inline void tk_te_resync_packet(tk_te_resync *r)
{
    if (r->count < UINT64_MAX)
        r->count++;
}

static inline void tk_te_resync_restart(tk_te_resync *r)
{
    r->count = 0;
}

/* Exactly at max: report pending branches now (and mark updiscon), sync comes next. */
static inline bool tk_te_resync_at_max(const tk_te_resync *r)
{
    return r->count == r->max;
}

static inline bool tk_te_resync_exceeded(const tk_te_resync *r)
{
    return r->count > r->max;
}

#endif
