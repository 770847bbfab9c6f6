/* SPDX-License-Identifier: BSD-2-Clause */
/* Jump target cache shared by encoder and decoder (branchTrace.adoc "Jump target cache
 * mode"). */
#include <stdlib.h>
#include <string.h>

#include "etrace/modes.h"

tk_status tk_te_jtc_init(tk_te_jtc *c, uint32_t size_bits, bool compressed)
{
    memset(c, 0, sizeof(*c));
    if (size_bits > 24)
        return TK_ERR_CONFIG;
    c->size_bits = size_bits;
    c->shift = compressed ? 1u : 2u;
    const size_t n = (size_t)1 << size_bits;
    c->addr = calloc(n, sizeof(c->addr[0]));
    c->valid = calloc(n, 1);
    if (!c->addr || !c->valid) {
        tk_te_jtc_free(c);
        return TK_ERR_NOMEM;
    }
    return TK_OK;
}

void tk_te_jtc_free(tk_te_jtc *c)
{
    free(c->addr);
    free(c->valid);
    c->addr = NULL;
    c->valid = NULL;
}

void tk_te_jtc_reset(tk_te_jtc *c)
{
    memset(c->valid, 0, (size_t)1 << c->size_bits);
}

bool tk_te_jtc_lookup(const tk_te_jtc *c, uint64_t target, uint32_t *index)
{
    const uint32_t i = tk_te_jtc_index(c, target);
    if (!c->valid[i] || c->addr[i] != target)
        return false;
    *index = i;
    return true;
}

void tk_te_jtc_insert(tk_te_jtc *c, uint64_t target)
{
    const uint32_t i = tk_te_jtc_index(c, target);
    c->addr[i] = target;
    c->valid[i] = 1;
}

bool tk_te_jtc_get(const tk_te_jtc *c, uint32_t index, uint64_t *target)
{
    if (index >> c->size_bits || !c->valid[index])
        return false;
    *target = c->addr[index];
    return true;
}
