/* SPDX-License-Identifier: BSD-2-Clause */
/* The CoreSight input options every command that reads ETMv4 trace takes (`dump`, `decode`,
 * `profile`, `coverage`, `report`): a snapshot directory or a bare trace file with its
 * registers and memory images, the buffer, its framing and the trace ID; and opening them. */
#ifndef TK_TOOLS_CS_INPUT_H
#define TK_TOOLS_CS_INPUT_H

#include <stdbool.h>

#include "tracekit/coresight.h"

#define TK_CLI_CS_MAX_MEM 64

typedef struct tk_cli_cs {
    const char *dir;          /* --snapshot */
    const char *trace;        /* --trace */
    const char *buffer;       /* --buffer */
    const char *trace_format; /* --trace-format */
    const char *mems[TK_CLI_CS_MAX_MEM];
    int nmem;
    tk_cs_etm_regs regs; /* --reg, over the bare trace defaults */
    long id;             /* --id, -1: every source */
} tk_cli_cs;

/* The options' help text (two-space indented lines). */
extern const char tk_cli_cs_help[];

/* Defaults: no input, a Cortex-A53 ETMv4.0's registers for a bare trace, every trace ID. */
void tk_cli_cs_init(tk_cli_cs *c);
/* If argv[*i] is one of the options, consume it and its value and return 1; 0 if it is not
 * one; -1 after printing a usage error. */
int tk_cli_cs_parse(tk_cli_cs *c, const char *cmd, int argc, char **argv, int *i);
/* Check the options, load the snapshot (or make one for the bare trace, with its --mem
 * images) and pick the buffer (*buffer: its index, or -1 for the default). Prints errors
 * prefixed with the command and returns 0, 1 (cannot read) or 2 (usage). */
int tk_cli_cs_open(const tk_cli_cs *c, const char *cmd, tk_cs_snapshot **ss, int *buffer);

#endif
