/* SPDX-License-Identifier: BSD-2-Clause */
#include "limit_option.h"

#include <stdio.h>
#include <stdlib.h>

bool tk_cli_max_predicted(const char *cmd, const char *text, uint64_t *out)
{
    char *end = NULL;
    const unsigned long long v = text ? strtoull(text, &end, 10) : 0;
    if (!text || !text[0] || text[0] == '-' || !end || *end) {
        fprintf(stderr, "tracekit %s: --max-predicted needs a branch count\n", cmd);
        return false;
    }
    *out = v ? (uint64_t)v : UINT64_MAX;
    return true;
}
