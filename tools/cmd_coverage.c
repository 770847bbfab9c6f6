/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit coverage: line, function and branch coverage of a traced run as an lcov
 * tracefile, from the program's DWARF line table. */
#include <fnmatch.h>
#include <string.h>
#include <unistd.h>

#include "analysis_input.h"
#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit coverage [-o FILE.info] [--test-name NAME] INPUT...\n"
            "\n"
            "Write which source lines, functions and branches a traced run executed, as an\n"
            "lcov tracefile. Every line with code in the DWARF line table is listed, so lines\n"
            "that never ran appear with count 0 (build the program with -g). A line's count is\n"
            "the largest execution count among its instructions, a function's the number of\n"
            "times its first instruction ran; each conditional branch gives two lcov branches,\n"
            "taken and not taken ('-' if the branch never ran).\n"
            "\n"
            "options:\n"
            "  --test-name N  lcov test name (TN:)\n"
            "  --include GLOB only source files whose path matches GLOB (repeatable)\n"
            "  --all-files    also files whose source cannot be read here (by default they are\n"
            "                 left out: a prebuilt C library's, for instance, which genhtml\n"
            "                 could not render)\n"
            "  --full-profile collect the whole profile (call graph, edges) as `tracekit profile`\n"
            "                 does; the file is the same, only slower (for checking)\n"
            "  -h, --help     this text\n"
            "\n"
            "%s"
            "\n"
            "examples:\n"
            "  tracekit coverage -o prog.info --scf prog.scf --ucf prog.ucf prog.te_inst_raw\n"
            "  tracekit coverage -o prog.info --sim prog.elf\n"
            "  genhtml --branch-coverage -o cov-html prog.info\n"
            "  grep -E '^(SF|DA:[0-9]+,0$)' prog.info     # the lines that never ran\n"
            "\n"
            "Exit status: 0 success, 1 input or output error (or no DWARF lines), 2 usage.\n",
            tk_an_input_help);
}

#define MAX_INCLUDE 64

typedef struct file_filter {
    const char *include[MAX_INCLUDE];
    int ninclude;
    bool all_files;
} file_filter;

static bool want_file(void *ctx, const char *file)
{
    const file_filter *f = ctx;
    if (f->ninclude) {
        int k = 0;
        while (k < f->ninclude && fnmatch(f->include[k], file, 0) != 0)
            k++;
        if (k == f->ninclude)
            return false;
    }
    return f->all_files || access(file, R_OK) == 0;
}

int tk_cmd_coverage(int argc, char **argv)
{
    /* lcov needs instruction and branch counts only: the flat level gives them exactly. */
    tk_an_input in = {.hart = -1, .cmd = "coverage", .profile_flags = TK_PROFILE_FLAT};
    const char *test_name = NULL;
    file_filter filter = {.ninclude = 0};
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
        if (!strcmp(a, "--full-profile")) {
            in.profile_flags = 0;
        } else if (!strcmp(a, "--all-files")) {
            filter.all_files = true;
        } else if (!strcmp(a, "--include") && i + 1 < argc && filter.ninclude < MAX_INCLUDE) {
            filter.include[filter.ninclude++] = argv[++i];
        } else if (!strcmp(a, "--include")) {
            fprintf(stderr, "tracekit coverage: --include needs a pattern (at most %d)\n",
                    MAX_INCLUDE);
            return 2;
        } else if (!strcmp(a, "--test-name") && i + 1 < argc) {
            test_name = argv[++i];
        } else {
            fprintf(stderr, "tracekit coverage: bad argument '%s' (try --help)\n", a);
            return 2;
        }
    }
    tk_an_run run;
    int rc = tk_an_collect(&in, &run);
    if (!rc && !run.lines) {
        fprintf(stderr, "tracekit coverage: %s\n", run.lines_diag.message);
        rc = 1;
    }
    if (!rc) {
        tk_write_options o;
        tk_an_write_options(&run, &o);
        o.test_name = test_name;
        o.want_file = want_file;
        o.want_file_ctx = &filter;
        rc = tk_an_write(&in, &run, tk_coverage_write_lcov, &o, "lcov");
    }
    tk_an_run_free(&run);
    return rc;
}
