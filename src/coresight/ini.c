/* SPDX-License-Identifier: BSD-2-Clause */
#include "ini.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

tk_status tk_ini_load(const char *path, tk_ini *ini, tk_diag *diag)
{
    memset(ini, 0, sizeof(*ini));
    FILE *f = fopen(path, "rb");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "cannot open %s", path);
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                text = NULL;
                break;
            }
            text = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (!text)
        return TK_ERR_NOMEM;
    text[len] = 0;
    ini->text = text;

    size_t ecap = 0;
    const char *section = "";
    unsigned line = 0;
    for (char *p = text; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        line++;
        char *s = trim(p);
        p = nl ? nl + 1 : NULL;
        if (!*s || *s == ';' || *s == '#')
            continue;
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (!close) {
                tk_ini_free(ini);
                return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: unterminated section", path, line);
            }
            *close = 0;
            s = trim(s + 1);
            for (char *c = s; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            section = s;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            tk_ini_free(ini);
            return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: expected key=value", path, line);
        }
        *eq = 0;
        if (ini->n == ecap) {
            ecap = ecap ? ecap * 2 : 64;
            tk_ini_entry *e = realloc(ini->e, ecap * sizeof(*e));
            if (!e) {
                tk_ini_free(ini);
                return TK_ERR_NOMEM;
            }
            ini->e = e;
        }
        ini->e[ini->n++] = (tk_ini_entry){section, trim(s), trim(eq + 1), line};
    }
    return TK_OK;
}

void tk_ini_free(tk_ini *ini)
{
    free(ini->e);
    free(ini->text);
    memset(ini, 0, sizeof(*ini));
}

const char *tk_ini_get(const tk_ini *ini, const char *section, const char *key)
{
    for (size_t i = 0; i < ini->n; i++)
        if (!strcmp(ini->e[i].section, section) && !strcasecmp(ini->e[i].key, key))
            return ini->e[i].value;
    return NULL;
}
