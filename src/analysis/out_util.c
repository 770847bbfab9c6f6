/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the profile writers. */
#include <string.h>

#include "profile_internal.h"

void tk_write_options_init(tk_write_options *o)
{
    memset(o, 0, sizeof(*o));
    o->size = sizeof(*o);
}

const char *tk_prof_func_name(const tk_profile *p, uint32_t func)
{
    return func < p->nfuncs ? p->funcs[func].name : "[unknown]";
}

tk_status tk_out_status(FILE *out)
{
    return ferror(out) ? TK_ERR_IO : TK_OK;
}

bool tk_prof_func_known(const tk_profile *p, uint32_t func)
{
    return func < p->nfuncs && p->funcs[func].name != tk_prof_unknown_name;
}
