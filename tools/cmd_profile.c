/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit profile: write the profile of a traced run in a format other tools read. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_input.h"
#include "commands.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit profile [--format FMT] [-o FILE] INPUT...\n"
            "\n"
            "Count what a traced run executed, per instruction range, and write it as:\n"
            "  callgrind    callgrind profile (callgrind_annotate, KCachegrind): instructions\n"
            "               per instruction and source line, calls with inclusive counts\n"
            "  folded       folded stacks for FlameGraph: 'main;f;g COUNT' per call stack\n"
            "  llvm-sample  LLVM sample profile text (clang -fprofile-sample-use, needs -g)\n"
            "  autofdo      llvm-profgen unsymbolized profile: ranges and taken branches\n"
            "  bolt         BOLT pre-aggregated profile (perf2bolt --pa): B and F records\n"
            "  json         everything as JSON: functions, call edges, branches, blocks\n"
            "\n"
            "options:\n"
            "  --format FMT   one of the above (default callgrind)\n"
            "  --base ADDR    autofdo/bolt: write addresses relative to ADDR (default: autofdo\n"
            "                 relative to the first executable segment's page, as llvm-profgen\n"
            "                 --use-offset expects; bolt absolute, as for a non-PIE binary)\n"
            "  --top N        json: number of hottest call paths (default 20)\n"
            "  -h, --help     this text\n"
            "\n"
            "%s"
            "\n"
            "examples:\n"
            "  d=shared/testdata/etrace-ref/median/itype3_basic\n"
            "  tracekit profile --format callgrind -o median.callgrind \\\n"
            "      --scf $d/median.scf --ucf $d/median.decoder.ucf $d/median.te_inst_raw\n"
            "  callgrind_annotate --inclusive=yes median.callgrind\n"
            "  tracekit profile --format folded --sim prog.elf | flamegraph.pl > prog.svg\n"
            "  tracekit profile --format llvm-sample -o prog.prof --elf prog.elf --pc-trace "
            "prog.pcs\n"
            "  llvm-profdata show --sample prog.prof\n"
            "\n"
            "Exit status: 0 success, 1 input or output error, 2 usage.\n",
            tk_an_input_help);
}

typedef tk_status (*writer_fn)(const tk_profile *, FILE *, const tk_write_options *);

static const struct {
    const char *name;
    writer_fn write;
    bool needs_lines;
} formats[] = {
    {"callgrind", tk_profile_write_callgrind, false},
    {"folded", tk_profile_write_folded, false},
    {"llvm-sample", tk_profile_write_llvm_sample, true},
    {"autofdo", tk_profile_write_autofdo, false},
    {"bolt", tk_profile_write_bolt, false},
    {"json", tk_profile_write_json, false},
};

/* llvm-profgen --use-offset: offsets from the first executable segment, page aligned. */
static uint64_t default_base(const tk_image *img)
{
    uint64_t base = UINT64_MAX;
    /* CoreSight without --elf: memory dumps have no segments, addresses stay absolute */
    for (size_t i = 0; img && i < tk_image_segment_count(img); i++) {
        const tk_segment *s = tk_image_segment(img, i);
        if (s->exec && s->vaddr < base)
            base = s->vaddr;
    }
    return base == UINT64_MAX ? 0 : base & ~(uint64_t)0xfff;
}

int tk_cmd_profile(int argc, char **argv)
{
    unsigned top = 0;
    tk_an_input in = {.hart = -1, .cmd = "profile", .top = &top};
    const char *format = "callgrind", *base = NULL;
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
        if ((!strcmp(a, "--format") || !strcmp(a, "-f")) && i + 1 < argc) {
            format = argv[++i];
        } else if (!strcmp(a, "--base") && i + 1 < argc) {
            base = argv[++i];
        } else {
            fprintf(stderr, "tracekit profile: bad argument '%s' (try --help)\n", a);
            return 2;
        }
    }
    size_t fi = 0;
    while (fi < sizeof(formats) / sizeof(formats[0]) && strcmp(formats[fi].name, format))
        fi++;
    if (fi == sizeof(formats) / sizeof(formats[0])) {
        fprintf(stderr,
                "tracekit profile: unknown format '%s' (callgrind, folded, llvm-sample, "
                "autofdo, bolt, json)\n",
                format);
        return 2;
    }
    uint64_t base_addr = 0;
    if (base) {
        char *end;
        base_addr = strtoull(base, &end, 0);
        if (!*base || *end) {
            fprintf(stderr, "tracekit profile: --base '%s' is not an address\n", base);
            return 2;
        }
    }

    tk_an_run run;
    int rc = tk_an_collect(&in, &run);
    if (!rc && formats[fi].needs_lines && !run.lines) {
        fprintf(stderr, "tracekit profile: %s needs source lines: %s\n", format,
                run.lines_diag.message);
        rc = 1;
    }
    if (!rc) {
        tk_write_options o;
        tk_an_write_options(&run, &o);
        o.top = top;
        if (!strcmp(format, "autofdo"))
            o.base = base ? base_addr : default_base(run.img);
        else
            o.base = base_addr;
        rc = tk_an_write(&in, &run, formats[fi].write, &o, format);
    }
    tk_an_run_free(&run);
    return rc;
}
