/* SPDX-License-Identifier: BSD-2-Clause */
/* Input wiring shared by `tracekit profile`, `coverage` and `report`: where the events come
 * from (an E-Trace packet file through the decoder, the hart model running the program, or
 * an executed-PC list), the program image, its DWARF lines, and the progress line. */
#ifndef TK_TOOLS_ANALYSIS_INPUT_H
#define TK_TOOLS_ANALYSIS_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cs_input.h"
#include "encap_option.h"
#include "tracekit/analysis.h"
#include "tracekit/cs_code.h"

typedef struct tk_an_input {
    const char *cmd;              /* "profile", for messages */
    const char *elf;              /* --elf */
    const char *pc_trace;         /* --pc-trace */
    const char *scf, *ucf, *spec; /* E-Trace parameters */
    const char *trace;            /* the te_inst packet file (positional) */
    const char *sim;              /* --sim PROG.elf: run it on the hart model */
    uint64_t max_insns;           /* --max-insns for --sim (0: the default limit) */
    int hart;                     /* --hart for --sim (-1: all) */
    bool no_bootrom;              /* --no-bootrom */
    bool ecall_sequential;
    uint64_t max_predicted; /* --max-predicted (0: not given, UINT64_MAX: no limit) */
    bool quiet;             /* --quiet: no progress line */
    bool by_range;          /* --by-range: feed the profile range events, not block batches */
    unsigned jobs;          /* --jobs: 2 or more collect the profile on a thread of its own */
    size_t piece_bytes;     /* --piece-size: CoreSight trace bytes per piece of the first pass */
    unsigned profile_flags; /* tk_profile_new_flags: the level the command's output needs */
    const char *outpath;    /* -o/--output (NULL: stdout) */
    unsigned *top;          /* where --top N goes; NULL: the command has no --top */
    tk_cli_encap encap;     /* --encap, --srcid: the trace in the general encapsulation */
    bool cs_on;             /* a CoreSight input: */
    tk_cli_cs cs;           /* --snapshot or --trace and their options */
} tk_an_input;

/* The input options' help text, for each command's usage. */
extern const char tk_an_input_help[];

/* If argv[*i] is an input option or the trace file, consume it (and its value) and return
 * 1; 0 if it is not one; -1 after printing a usage error. */
int tk_an_parse(tk_an_input *in, int argc, char **argv, int *i);

/* A program and the profile of one run of it. */
typedef struct tk_an_run {
    tk_image *img;      /* CoreSight: the --elf for symbols, or NULL */
    tk_cs_snapshot *ss; /* CoreSight: the snapshot, whose memory images are the code */
    tk_cs_code *code;   /* CoreSight: the code view's state */
    tk_code_view view;
    tk_profile *profile;
    tk_line_table *lines; /* NULL when the ELF has no DWARF line table */
    tk_diag lines_diag;   /* why lines is NULL */
    char *elf;            /* the program's path (from --elf or the .ucf; CoreSight without
                           * --elf: the snapshot or trace file) */
} tk_an_run;

/* Check the options, open the image, feed the whole input to a new profile and finish it.
 * Prints errors (prefixed with the command) and returns 0, 1 (input/run error) or 2 (usage). */
int tk_an_collect(const tk_an_input *in, tk_an_run *run);
void tk_an_run_free(tk_an_run *run);

/* Open -o FILE ("-" or NULL: stdout); prints the error. */
FILE *tk_an_open_out(const char *cmd, const char *path);
/* Close it, reporting a write error; returns 0 or 1. */
int tk_an_close_out(const char *cmd, const char *path, FILE *f);

/* Options for a writer: the program and its lines, everything else at its default. */
void tk_an_write_options(const tk_an_run *run, tk_write_options *o);

/* Write the run's profile with write() to the command's -o file (or stdout), printing any
 * error as "tracekit CMD: writing WHAT: ..."; returns 0 or 1. */
typedef tk_status (*tk_an_writer)(const tk_profile *p, FILE *out, const tk_write_options *o);
int tk_an_write(const tk_an_input *in, tk_an_run *run, tk_an_writer write,
                const tk_write_options *o, const char *what);

#endif
