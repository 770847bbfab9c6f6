/* SPDX-License-Identifier: BSD-2-Clause */
/* Writes every output format for the fake program's interrupted run (fake_code.h) under a
 * prefix, with a matching prog.c, for check_consumers.py to feed to the real tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_code.h"

typedef tk_status (*writer_fn)(const tk_profile *, FILE *, const tk_write_options *);

static int write_one(const char *dir, const char *name, writer_fn w, const tk_profile *p,
                     const tk_write_options *o)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/fake.%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    tk_status st = w(p, f, o);
    if (fclose(f) != 0 || st != TK_OK) {
        fprintf(stderr, "%s: %s\n", path, tk_strerror(st));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    mkdir(dir, 0777);
    char src[4096];
    snprintf(src, sizeof(src), "%s/prog.c", dir);
    /* A source with the fake program's line numbers (genhtml reads it). */
    FILE *s = fopen(src, "w");
    if (!s)
        return 1;
    for (int i = 1; i <= 33; i++)
        fprintf(s, "/* line %d */\n", i);
    fclose(s);

    tk_profile *p = NULL;
    size_t n = sizeof(fake_run_irq) / sizeof(fake_run_irq[0]);
    if (fake_profile(fake_run_irq, n, &p) != TK_OK)
        return 1;
    tk_line_table *lt = fake_lines(src);
    if (!lt)
        return 1;
    tk_write_options o;
    tk_write_options_init(&o);
    o.program = "prog.elf";
    o.lines = lt;
    o.test_name = "fake";
    int rc = write_one(dir, "info", tk_coverage_write_lcov, p, &o);
    rc |= write_one(dir, "callgrind", tk_profile_write_callgrind, p, &o);
    rc |= write_one(dir, "folded", tk_profile_write_folded, p, &o);
    rc |= write_one(dir, "llvm-sample", tk_profile_write_llvm_sample, p, &o);
    rc |= write_one(dir, "autofdo", tk_profile_write_autofdo, p, &o);
    rc |= write_one(dir, "bolt", tk_profile_write_bolt, p, &o);
    rc |= write_one(dir, "json", tk_profile_write_json, p, &o);
    rc |= write_one(dir, "report", tk_profile_write_report, p, &o);
    tk_line_table_free(lt);
    tk_profile_free(p);
    return rc;
}
