/* SPDX-License-Identifier: BSD-2-Clause */
/* Minimal INI reader for DS-5 snapshot files: [section], key=value, ';' or '#' comments. */
#ifndef TK_CORESIGHT_INI_H
#define TK_CORESIGHT_INI_H

#include <stddef.h>

#include "tracekit/status.h"

typedef struct tk_ini_entry {
    const char *section; /* lower-case */
    const char *key;     /* as written (case kept), trimmed */
    const char *value;   /* trimmed */
    unsigned line;
} tk_ini_entry;

typedef struct tk_ini {
    tk_ini_entry *e;
    size_t n;
    char *text; /* owns all strings */
} tk_ini;

/* Read path. Errors: TK_ERR_IO, TK_ERR_FORMAT (line number in diag), TK_ERR_NOMEM. */
tk_status tk_ini_load(const char *path, tk_ini *ini, tk_diag *diag);
void tk_ini_free(tk_ini *ini);
/* Value of key (case-insensitive) in section (exact, lower-case), or NULL. */
const char *tk_ini_get(const tk_ini *ini, const char *section, const char *key);

#endif
