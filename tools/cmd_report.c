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
    unsigned top = 0;
    tk_an_input in = {.hart = -1, .cmd = "report", .top = &top};
    for (int i = 1; i < argc; i++) {
        int r = tk_an_parse(&in, argc, argv, &i);
        if (r < 0)
            return 2;
        if (r)
            continue;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "tracekit report: unknown argument '%s' (try --help)\n", argv[i]);
        return 2;
    }
    tk_an_run run;
    int rc = tk_an_collect(&in, &run);
    if (!rc) {
        tk_write_options o;
        tk_an_write_options(&run, &o);
        o.top = top;
        rc = tk_an_write(&in, &run, tk_profile_write_report, &o, "the report");
    }
    tk_an_run_free(&run);
    return rc;
}
