/* SPDX-License-Identifier: BSD-2-Clause */
/* The counting sink: totals of a decoded flow, the baseline for sink-independent speed
 * (`tracekit decode --format count`). A plain struct, so pieces decoded in parallel add up. */
#ifndef TRACEKIT_COUNT_H
#define TRACEKIT_COUNT_H

#include <stdint.h>
#include <stdio.h>

#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_count {
    uint64_t instructions; /* sum of TK_EV_RANGE ninsn (a TK_EV_BLOCKS entry counts as the
                            * range it stands for, here and below) */
    uint64_t ranges;       /* TK_EV_RANGE events */
    uint64_t branches;     /* ranges ended by a conditional branch */
    uint64_t taken;        /* of which taken */
    uint64_t jumps;        /* ranges ended by any other control transfer (jump, call, return,
                            * xRET), traps not included */
    uint64_t traps;        /* TK_EV_TRAP */
    uint64_t errors;       /* TK_EV_ERROR */
    uint64_t lost;         /* TK_EV_LOST */
    uint64_t packets;      /* not counted from events: the caller fills it in */
} tk_count;

/* A tk_event_fn; ctx is a zeroed tk_count. Takes TK_EV_BLOCKS too. Never fails. */
tk_status tk_count_event(void *ctx, const tk_event *ev);
/* a += b */
void tk_count_add(tk_count *a, const tk_count *b);
/* "instructions N\nbranches N\n..." one "name value" per line. */
tk_status tk_count_write(const tk_count *c, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
