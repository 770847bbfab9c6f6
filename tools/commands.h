/* SPDX-License-Identifier: BSD-2-Clause */
/* The tracekit subcommands. Each lives in its own cmd_<name>.c and only parses options and
 * wires library layers together. */
#ifndef TK_TOOLS_COMMANDS_H
#define TK_TOOLS_COMMANDS_H

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

/* CoreSight variants of dump/decode, chosen when --snapshot is given (cmd_coresight.c). */
int tk_cmd_dump_snapshot(int argc, char **argv);
int tk_cmd_decode_snapshot(int argc, char **argv);

#endif
