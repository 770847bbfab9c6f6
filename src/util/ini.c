/* SPDX-License-Identifier: BSD-2-Clause */
#include "util/ini.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { TK_INI_LINE_MAX = 1024 };

static char *trim(char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Cut a trailing comment: '#' anywhere, ';' only after whitespace (so values may hold ';'). */
static void strip_comment(char *s)
{
    for (char *c = s; *c; c++) {
        if (*c == '#' || (*c == ';' && c > s && isspace((unsigned char)c[-1]))) {
            *c = '\0';
            return;
        }
    }
}

tk_status tk_ini_parse(const char *path, tk_ini_section_fn on_section, tk_ini_fn on_key, void *ctx,
                       tk_diag *diag)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char buf[TK_INI_LINE_MAX];
    char section[TK_INI_LINE_MAX] = "";
    unsigned line = 0;
    tk_status st = TK_OK;
    while (fgets(buf, sizeof(buf), f)) {
        line++;
        size_t n = strlen(buf);
        if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(f)) {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: line longer than %d characters", path,
                             line, TK_INI_LINE_MAX - 2);
            break;
        }
        char *s = trim(buf);
        if (*s == '#' || *s == ';' || *s == '\0')
            continue;
        strip_comment(s);
        s = trim(s);
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || end[1] != '\0') {
                st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: malformed section header '%s'", path,
                                 line, s);
                break;
            }
            *end = '\0';
            snprintf(section, sizeof(section), "%s", trim(s + 1));
            if (on_section && (st = on_section(ctx, section, line, diag)) != TK_OK)
                break;
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: expected 'key = value', got '%s'", path,
                             line, s);
            break;
        }
        *eq = '\0';
        char *key = trim(s);
        char *value = trim(eq + 1);
        if (*key == '\0') {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:%u: empty key", path, line);
            break;
        }
        if ((st = on_key(ctx, section, key, value, line, diag)) != TK_OK)
            break;
    }
    if (st != TK_OK && diag && line)
        diag->line = line;
    if (st == TK_OK && ferror(f))
        st = tk_diag_set(diag, TK_ERR_IO, "%s: read error", path);
    fclose(f);
    return st;
}
