/* SPDX-License-Identifier: BSD-2-Clause */
/* The legacy trace formats on the command line (legacy_cmds.c): sim --encode, encode, decode
 * and dump hand over here when --trace-format nibble or rle is given. */
#ifndef TK_TOOLS_LEGACY_CMDS_H
#define TK_TOOLS_LEGACY_CMDS_H

#include <stdbool.h>

/* Does argv ask for --trace-format nibble|rle (also --trace-format=...)? */
bool tk_legacy_wanted(int argc, char **argv);

/* Remove "--trace-format etrace" (the default) so that the E-Trace parsers never see it;
 * returns the new argc. */
int tk_legacy_strip_etrace(int argc, char **argv);

int tk_legacy_cmd_sim(int argc, char **argv);
int tk_legacy_cmd_encode(int argc, char **argv);
int tk_legacy_cmd_decode(int argc, char **argv);
int tk_legacy_cmd_dump(int argc, char **argv);

#endif
