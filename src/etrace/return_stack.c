/* SPDX-License-Identifier: BSD-2-Clause */
/* Implicit return tracker shared by encoder and decoder (branchTrace.adoc "Implicit return
 * mode", payload.adoc "Format 2 irreport and irdepth"). */
#include <stdlib.h>
#include <string.h>

#include "etrace/modes.h"

tk_status tk_te_irstack_init(tk_te_irstack *s, const tk_te_params *p)
{
    memset(s, 0, sizeof(*s));
    uint32_t bits = p->s.return_stack_size ? p->s.return_stack_size : p->s.call_counter_size;
    if (bits > 16)
        return TK_ERR_CONFIG;
    if (bits == 0)
        return TK_OK;
    s->counter = p->s.return_stack_size == 0;
    /* A counter of n bits holds at most 2^n - 1 calls; a stack has 2^n entries (its depth
     * field has one bit more, payload.adoc irdepth width). */
    s->cap = s->counter ? (1u << bits) - 1 : 1u << bits;
    if (s->cap == 0)
        return TK_OK;
    s->addr = calloc(s->cap, sizeof(s->addr[0]));
    return s->addr ? TK_OK : TK_ERR_NOMEM;
}

void tk_te_irstack_free(tk_te_irstack *s)
{
    free(s->addr);
    s->addr = NULL;
    s->cap = 0;
}

void tk_te_irstack_reset(tk_te_irstack *s)
{
    s->depth = 0;
    s->head = 0;
    s->return_since_call = false;
    s->branch_since_return = false;
}

void tk_te_irstack_push(tk_te_irstack *s, uint64_t link)
{
    s->return_since_call = false;
    if (!s->cap)
        return;
    if (s->depth == s->cap) {
        /* The oldest prediction is lost; a counter stays at its maximum. Returns come back
         * newest first, so the decoder needs the newest addresses either way. */
        s->head = (s->head + 1) % s->cap;
        s->depth--;
    }
    s->addr[(s->head + s->depth) % s->cap] = link;
    s->depth++;
}

void tk_te_irstack_pop(tk_te_irstack *s)
{
    s->return_since_call = true;
    s->branch_since_return = false;
    if (s->depth)
        s->depth--;
}

bool tk_te_irstack_must_report(const tk_te_irstack *s, bool after_return)
{
    if (!s->cap)
        return false;
    if (after_return)
        return s->depth != 0;
    /* The decoder stops at the right visit without help if no return came since the last
     * call (innermost call) or a branch came since the last return (branch count). */
    return s->return_since_call && !s->branch_since_return;
}
