/* SPDX-License-Identifier: BSD-2-Clause */
/* Folded stacks, the input of FlameGraph's flamegraph.pl: one line per distinct call stack,
 * "root;caller;callee count", count = instructions executed with exactly that stack. */
#include <inttypes.h>
#include <stdlib.h>

#include "profile_internal.h"

/* Frame names must not contain the separators ';' and ' '. */
static void put_frame(FILE *out, const char *name)
{
    for (const char *c = name; *c; c++)
        fputc(*c == ';' || *c == ' ' || *c == '\n' ? '_' : *c, out);
}

tk_status tk_profile_write_folded(const tk_profile *p, FILE *out, const tk_write_options *o)
{
    (void)o;
    if (!p->finished)
        return TK_ERR_STATE;
    uint32_t *chain = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < p->nctxs; i++) {
        const tk_prof_ctx *c = &p->ctxs[i];
        if (!c->self)
            continue;
        size_t n = 0;
        for (uint32_t a = (uint32_t)i; a != TK_PAIR_NONE; a = p->ctxs[a].parent) {
            if (n == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                uint32_t *nc = realloc(chain, ncap * sizeof(*nc));
                if (!nc) {
                    free(chain);
                    return TK_ERR_NOMEM;
                }
                chain = nc;
                cap = ncap;
            }
            chain[n++] = a;
        }
        while (n--) {
            put_frame(out, tk_prof_func_name(p, p->ctxs[chain[n]].func));
            fputc(n ? ';' : ' ', out);
        }
        fprintf(out, "%" PRIu64 "\n", c->self);
    }
    free(chain);
    return tk_out_status(out);
}
