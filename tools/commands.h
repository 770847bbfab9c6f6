/* SPDX-License-Identifier: BSD-2-Clause */
/* The tracekit subcommands. Each lives in its own cmd_<name>.c and only parses options and
 * wires library layers together. */
#ifndef TK_TOOLS_COMMANDS_H
#define TK_TOOLS_COMMANDS_H

#include <stdbool.h>

int tk_cmd_encode(int argc, char **argv);
int tk_cmd_decode(int argc, char **argv);
int tk_cmd_dump(int argc, char **argv);
int tk_cmd_convert(int argc, char **argv);
int tk_cmd_sim(int argc, char **argv);
int tk_cmd_profile(int argc, char **argv);
int tk_cmd_coverage(int argc, char **argv);
int tk_cmd_report(int argc, char **argv);
int tk_cmd_stats(int argc, char **argv);
int tk_cmd_formats(int argc, char **argv);

/* CoreSight variants of dump/decode (cmd_coresight.c), chosen when tk_cs_cli_wanted: the
 * command line has one of their inputs, --snapshot DIR or --trace FILE. dump and decode ask
 * before anything else looks at the options, since --trace-format means another thing there. */
bool tk_cs_cli_wanted(int argc, char **argv);
int tk_cmd_dump_snapshot(int argc, char **argv);
int tk_cmd_decode_snapshot(int argc, char **argv);

#endif
