/* SPDX-License-Identifier: BSD-2-Clause */
/* Orderings shared by the report and the JSON summary. Each returns a malloc'd array of
 * indexes, hottest first (NULL when empty or out of memory). */
#ifndef TK_ANALYSIS_RANK_H
#define TK_ANALYSIS_RANK_H

#include "profile_internal.h"

#define TK_RANK_MAX_PATH 64

uint32_t *tk_rank_funcs(const tk_profile *p);    /* by self, then inclusive */
uint32_t *tk_rank_calls(const tk_profile *p);    /* by inclusive */
uint32_t *tk_rank_ctxs(const tk_profile *p);     /* by self */
uint32_t *tk_rank_blocks(const tk_profile *p);   /* by count * ninsn */
uint32_t *tk_rank_branches(const tk_profile *p); /* by executions */
/* The context node's path, leaf first, at most cap nodes (the root end is cut). */
size_t tk_rank_path(const tk_profile *p, uint32_t ctx, uint32_t *chain, size_t cap);

#endif
