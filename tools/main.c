/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit: command-line front end. Dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"sim", tk_cmd_sim, "run a RISC-V ELF on the hart model (and encode its trace)"},
    {"encode", tk_cmd_encode, "encode ingress (encoder_input or spike CSV) to te_inst packets"},
    {"decode", tk_cmd_decode, "reconstruct the executed program flow from a trace and the ELF"},
    {"dump", tk_cmd_dump, "print one packet per line with its byte offset"},
    {"convert", tk_cmd_convert, "convert between ingress formats (spike CSV -> encoder_input)"},
    {"profile", tk_cmd_profile,
     "write a profile (callgrind, folded, llvm-sample, autofdo, bolt, json)"},
    {"coverage", tk_cmd_coverage, "write line and branch coverage as lcov .info"},
    {"stats", tk_cmd_stats, "bits per instruction of each E-Trace mode combination on programs"},
    {"formats", tk_cmd_formats, "bandwidth of E-Trace, nibble and RLE trace on the same runs"},
    {"report", tk_cmd_report, "print a human summary: hottest functions, call graph, branches"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tracekit <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'tracekit <command> --help' shows the options and examples of a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tracekit 0.1.0\n");
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tracekit: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
