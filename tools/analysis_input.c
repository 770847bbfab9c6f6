/* SPDX-License-Identifier: BSD-2-Clause */
#include "analysis_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char tk_an_input_help[] =
    "input (one of):\n"
    "  --elf PROG.elf --pc-trace PCS   executed PCs, one hex address per line (plain or\n"
    "                                  .gz), e.g. the reference decoder's .decoder.trace\n"
    "                                  or `tracekit decode` output\n"
    "other:\n"
    "  --quiet                         no progress line on stderr\n";

int tk_an_parse(tk_an_input *in, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char **val = NULL;
    if (!strcmp(a, "--elf"))
        val = &in->elf;
    else if (!strcmp(a, "--pc-trace"))
        val = &in->pc_trace;
    else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
        in->quiet = true;
        return 1;
    } else
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "tracekit %s: %s needs a value\n", in->cmd, a);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

/* Progress on a terminal: counts events on their way to the profile and redraws one line
 * at most twice a second. */
typedef struct progress {
    tk_profile *profile;
    bool on;
    bool drawn;
    const char *cmd;
    uint64_t events;
    struct timespec last;
} progress;

static tk_status progress_event(void *ctx, const tk_event *ev)
{
    progress *pg = ctx;
    if (pg->on && (++pg->events & 0xffff) == 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt =
            (double)(now.tv_sec - pg->last.tv_sec) + (double)(now.tv_nsec - pg->last.tv_nsec) / 1e9;
        if (dt >= 0.5) {
            tk_profile_totals t;
            tk_profile_get_totals(pg->profile, &t);
            fprintf(stderr, "\rtracekit %s: %" PRIu64 " events, %" PRIu64 " instructions ", pg->cmd,
                    pg->events, t.insns);
            pg->drawn = true;
            pg->last = now;
        }
    }
    return tk_profile_event(pg->profile, ev);
}

static int fail(const tk_an_input *in, tk_status st, const tk_diag *d, const char *what)
{
    if (d && d->message[0])
        fprintf(stderr, "tracekit %s: %s\n", in->cmd, d->message);
    else
        fprintf(stderr, "tracekit %s: %s: %s\n", in->cmd, what, tk_strerror(st));
    return 1;
}

static int run_pc_trace(const tk_an_input *in, tk_an_run *run, progress *pg)
{
    tk_pc_flow *flow = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st = tk_pc_flow_new(run->img, progress_event, pg, &flow);
    if (st == TK_OK)
        st = tk_pc_flow_read_file(flow, in->pc_trace, &d);
    if (st == TK_OK)
        st = tk_pc_flow_finish(flow);
    tk_pc_flow_free(flow);
    return st == TK_OK ? 0 : fail(in, st, &d, in->pc_trace);
}

int tk_an_collect(const tk_an_input *in, tk_an_run *run)
{
    memset(run, 0, sizeof(*run));
    if (!in->pc_trace) {
        fprintf(stderr, "tracekit %s: no input (try --help)\n", in->cmd);
        return 2;
    }
    if (!in->elf) {
        fprintf(stderr, "tracekit %s: --elf PROG.elf is required with --pc-trace\n", in->cmd);
        return 2;
    }
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st = tk_image_open_elf(in->elf, &run->img, &d);
    if (st != TK_OK)
        return fail(in, st, &d, in->elf);
    tk_diag_clear(&run->lines_diag);
    if (tk_line_table_open_elf(in->elf, &run->lines, &run->lines_diag) != TK_OK)
        run->lines = NULL;
    tk_code_view_from_image(run->img, &run->view);
    if ((st = tk_profile_new(&run->view, &run->profile)) != TK_OK)
        return fail(in, st, NULL, "profile");

    progress pg = {.profile = run->profile, .on = !in->quiet && isatty(2), .cmd = in->cmd};
    clock_gettime(CLOCK_MONOTONIC, &pg.last);
    int rc = run_pc_trace(in, run, &pg);
    if (pg.drawn)
        fputs("\r\033[K", stderr);
    if (rc)
        return rc;
    if ((st = tk_profile_finish(run->profile)) != TK_OK)
        return fail(in, st, NULL, "profile");
    tk_profile_totals t;
    tk_profile_get_totals(run->profile, &t);
    if (t.errors)
        fprintf(stderr,
                "tracekit %s: warning: %" PRIu64
                " trace errors (gaps, or PCs outside the ELF's code); counts cover the rest\n",
                in->cmd, t.errors);
    if (t.bad_ranges)
        fprintf(stderr,
                "tracekit %s: warning: %" PRIu64 " ranges do not match %s's code "
                "(wrong ELF?)\n",
                in->cmd, t.bad_ranges, in->elf);
    return 0;
}

void tk_an_run_free(tk_an_run *run)
{
    tk_profile_free(run->profile);
    tk_line_table_free(run->lines);
    tk_image_free(run->img);
    memset(run, 0, sizeof(*run));
}

FILE *tk_an_open_out(const char *cmd, const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        perror(path);
    (void)cmd;
    return f;
}

int tk_an_close_out(const char *cmd, const char *path, FILE *f)
{
    if (f == stdout)
        return fflush(f) == 0 ? 0 : 1;
    if (fclose(f) != 0) {
        fprintf(stderr, "tracekit %s: %s: write failed\n", cmd, path);
        return 1;
    }
    return 0;
}
