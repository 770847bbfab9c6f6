/* SPDX-License-Identifier: BSD-2-Clause */
/* --max-predicted N, shared by decode and the analysis commands (profile, coverage, report):
 * the limit on correctly predicted branches one branch-count packet may claim
 * (tk_te_decoder_set_max_predicted). */
#ifndef TK_TOOLS_LIMIT_OPTION_H
#define TK_TOOLS_LIMIT_OPTION_H

#include <stdbool.h>
#include <stdint.h>

/* Parse the option's text (a decimal count) into *out, 0 ("no limit") as UINT64_MAX, so that
 * a caller's 0 keeps meaning "not given: the decoder's default". On bad text says so for
 * command cmd on stderr and returns false. */
bool tk_cli_max_predicted(const char *cmd, const char *text, uint64_t *out);

#endif
