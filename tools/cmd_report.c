/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit report: a human summary of a traced run. */
#include <stdlib.h>
#include <string.h>

#include "analysis_input.h"
#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit report [--top N] [-o FILE] INPUT...\n"
            "\n"
            "Print what a traced run did: instructions, traps and trace gaps; the hottest\n"
            "functions with self and inclusive instruction counts; the call graph; the hottest\n"
            "call paths and basic blocks; the most executed branches and how often each was\n"
            "taken.\n"
            "\n"
            "options:\n"
            "  --top N        rows per table (default 20)\n"
            "  -o FILE        output file (default: standard output)\n"
            "  -h, --help     this text\n"
            "\n"
            "%s"
            "\n"
            "examples:\n"
            "  d=shared/testdata/etrace-ref/median/itype3_basic\n"
            "  tracekit report --top 5 --scf $d/median.scf --ucf $d/median.decoder.ucf \\\n"
            "      $d/median.te_inst_raw\n"
            "  tracekit report --elf median.riscv --pc-trace median.decoder.trace.gz\n"
            "\n"
            "Exit status: 0 success, 1 input or output error, 2 usage.\n",
            tk_an_input_help);
}

int tk_cmd_report(int argc, char **argv)
{
    tk_an_input in = {.hart = -1, .cmd = "report"};
    const char *outpath = NULL;
    unsigned top = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = tk_an_parse(&in, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
            outpath = argv[++i];
        } else if (!strcmp(a, "--top") && i + 1 < argc) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (!v || *end || v > 100000) {
                fprintf(stderr, "tracekit report: --top needs a positive number\n");
                return 2;
            }
            top = (unsigned)v;
        } else {
            fprintf(stderr, "tracekit report: bad argument '%s' (try --help)\n", a);
            return 2;
        }
    }
    tk_an_run run;
    int rc = tk_an_collect(&in, &run);
    if (rc) {
        tk_an_run_free(&run);
        return rc;
    }
    tk_write_options o;
    tk_write_options_init(&o);
    o.program = run.elf;
    o.lines = run.lines;
    o.top = top;
    FILE *out = tk_an_open_out("report", outpath);
    if (!out) {
        tk_an_run_free(&run);
        return 1;
    }
    tk_status st = tk_profile_write_report(run.profile, out, &o);
    rc = tk_an_close_out("report", outpath ? outpath : "-", out);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit report: %s\n", tk_strerror(st));
        rc = 1;
    }
    tk_an_run_free(&run);
    return rc;
}
