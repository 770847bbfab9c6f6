/* SPDX-License-Identifier: BSD-2-Clause */
/* Branch predictor shared by encoder and decoder (branchTrace.adoc "Branch prediction
 * mode"). */
#include <stdlib.h>
#include <string.h>

#include "etrace/modes.h"

tk_status tk_te_bpred_init(tk_te_bpred *b, uint32_t size_bits, bool compressed)
{
    memset(b, 0, sizeof(*b));
    if (size_bits > 24)
        return TK_ERR_CONFIG;
    b->size_bits = size_bits;
    b->shift = compressed ? 1u : 2u;
    b->state = malloc((size_t)1 << size_bits);
    if (!b->state)
        return TK_ERR_NOMEM;
    tk_te_bpred_reset(b);
    return TK_OK;
}

void tk_te_bpred_free(tk_te_bpred *b)
{
    free(b->state);
    b->state = NULL;
}

void tk_te_bpred_reset(tk_te_bpred *b)
{
    memset(b->state, 1, (size_t)1 << b->size_bits); /* 01: weakly not taken */
}

bool tk_te_bpred_update(tk_te_bpred *b, uint64_t addr, bool taken)
{
    const uint64_t i = (addr >> b->shift) & ((1ull << b->size_bits) - 1);
    const unsigned s = b->state[i];
    const bool predicted = (s >> 1) & 1u;
    /* 00 -> 01 on failure; 01 -> 00 on success, else 11; 11 -> 10 on failure; 10 -> 11 on
     * success, else 00. The LSB is the last outcome; the MSB flips after two failures. */
    unsigned next;
    if (predicted == taken)
        next = predicted ? 3u : 0u;
    else if ((s & 1u) != (unsigned)predicted)
        next = taken ? 3u : 0u; /* second failure in a row: the prediction flips */
    else
        next = predicted ? 2u : 1u;
    b->state[i] = (uint8_t)next;
    return predicted == taken;
}
