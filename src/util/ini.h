/* SPDX-License-Identifier: BSD-2-Clause */
/* A small INI reader for the reference flow's .scf/.ucf files (Python configparser dialect
 * as used there): '[section]' lines, 'key=value' or 'key = value', whole-line comments
 * starting with '#' or ';', and trailing comments after a '#' or a whitespace-preceded ';'
 * (the old C config reader ignored everything after '#'). */
#ifndef TK_UTIL_INI_H
#define TK_UTIL_INI_H

#include <stddef.h>

#include "tracekit/status.h"

/* Called once per key. section is "" before the first header. line is 1-based. Returning
 * anything but TK_OK stops the walk and is returned by tk_ini_parse. */
typedef tk_status (*tk_ini_fn)(void *ctx, const char *section, const char *key, const char *value,
                               unsigned line, tk_diag *diag);

/* Called once per [section] header; may be NULL. */
typedef tk_status (*tk_ini_section_fn)(void *ctx, const char *section, unsigned line,
                                       tk_diag *diag);

/* Parse the whole file at path. Syntax errors are TK_ERR_FORMAT naming path and line; a
 * file that cannot be opened is TK_ERR_IO. */
tk_status tk_ini_parse(const char *path, tk_ini_section_fn on_section, tk_ini_fn on_key, void *ctx,
                       tk_diag *diag);

#endif
