/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal: the implicit-return state of the encoder (branchTrace.adoc "Implicit return
 * mode"). Either a count of nested traced calls (call_counter_size_p; returns assumed to go
 * where the call would return) or a stack of predicted return addresses (return_stack_size_p;
 * a return is implicit only if its target matches). Neither over- nor underflows; both are
 * emptied when a synchronisation packet is sent. */
#ifndef TK_ETRACE_ENCODER_RETURN_STACK_H
#define TK_ETRACE_ENCODER_RETURN_STACK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tracekit/status.h"

/* Deepest stack this implementation allocates (2^20 entries, 8 MiB). */
#define TK_TE_IRSTACK_MAX_LOG2 20u

typedef struct tk_te_irstack {
    uint64_t *addr; /* ring of predicted return addresses; NULL in counter mode */
    uint64_t max;   /* capacity (stack) or largest count (counter) */
    uint64_t depth; /* entries on the stack, or the count */
    uint64_t top;   /* ring index of the newest entry */
} tk_te_irstack;

/* stack_log2 > 0: a stack of 2^stack_log2 addresses; else a counter of counter_bits bits. */
static inline tk_status tk_te_irstack_init(tk_te_irstack *s, uint32_t stack_log2,
                                           uint32_t counter_bits)
{
    s->addr = NULL;
    s->depth = 0;
    s->top = 0;
    if (stack_log2 > 0) {
        if (stack_log2 > TK_TE_IRSTACK_MAX_LOG2)
            return TK_ERR_UNSUPPORTED;
        s->max = (uint64_t)1 << stack_log2;
        s->addr = calloc(s->max, sizeof(*s->addr));
        return s->addr ? TK_OK : TK_ERR_NOMEM;
    }
    s->max = counter_bits >= 64 ? UINT64_MAX : ((uint64_t)1 << counter_bits) - 1;
    return TK_OK;
}

static inline void tk_te_irstack_free(tk_te_irstack *s)
{
    free(s->addr);
    s->addr = NULL;
}

static inline void tk_te_irstack_reset(tk_te_irstack *s)
{
    s->depth = 0;
}

/* A call: its return address is ret. A full stack drops its oldest entry (that return will
 * then be reported explicitly); a full counter stays full. */
static inline void tk_te_irstack_push(tk_te_irstack *s, uint64_t ret)
{
    if (s->addr) {
        s->top = (s->top + 1) & (s->max - 1);
        s->addr[s->top] = ret;
        if (s->depth < s->max)
            s->depth++;
    } else if (s->depth < s->max) {
        s->depth++;
    }
}

/* A return to target: true if it is implicit (predicted). The entry is consumed either way. */
static inline bool tk_te_irstack_pop(tk_te_irstack *s, uint64_t target)
{
    if (s->depth == 0)
        return false;
    s->depth--;
    if (!s->addr)
        return true;
    bool hit = s->addr[s->top] == target;
    s->top = (s->top - 1) & (s->max - 1);
    return hit;
}

#endif
