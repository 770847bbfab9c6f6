/* SPDX-License-Identifier: BSD-2-Clause */
/* Source lines (DWARF via libdw) for a small program compiled at test time with the
 * Debian RISC-V cross compiler; checked against known lines and against addr2line. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/image.h"

#define CC "riscv64-unknown-elf-gcc"

/* Line numbers below are those of this text (1-based). */
static const char prog[] = "int triple(int x)\n"               /* 1 */
                           "{\n"                               /* 2 */
                           "    return x * 3;\n"               /* 3 */
                           "}\n"                               /* 4 */
                           "\n"                                /* 5 */
                           "int sum(int n)\n"                  /* 6 */
                           "{\n"                               /* 7 */
                           "    int s = 0;\n"                  /* 8 */
                           "    for (int i = 0; i < n; i++)\n" /* 9 */
                           "        s += triple(i);\n"         /* 10 */
                           "    return s;\n"                   /* 11 */
                           "}\n"                               /* 12 */
                           "\n"                                /* 13 */
                           "int main(void)\n"                  /* 14 */
                           "{\n"                               /* 15 */
                           "    return sum(4) != 18;\n"        /* 16 */
                           "}\n";                              /* 17 */

static void test_lines(void **state)
{
    tk_image *img = NULL;
    tk_diag d;
    uint64_t a, sz;
    const char *file;
    int line;
    FILE *f;
    char cmd[1024], buf[512];
    unsigned long checked = 0;
    (void)state;

    f = fopen("image_lines_prog.c", "w");
    assert_non_null(f);
    fputs(prog, f);
    fclose(f);
    assert_int_equal(system(CC " -g -O0 --specs=picolibc.specs -o image_lines_prog.elf "
                               "image_lines_prog.c"),
                     0);
    assert_int_equal(tk_image_open_elf("image_lines_prog.elf", &img, &d), TK_OK);

    /* the first instruction of each function belongs to its opening line */
    assert_int_equal(tk_image_lookup(img, "triple", &a, &sz), TK_OK);
    assert_int_equal(tk_image_source_line(img, a, &file, &line), TK_OK);
    assert_non_null(strstr(file, "image_lines_prog.c"));
    assert_int_equal(line, 2);
    assert_int_equal(tk_image_lookup(img, "sum", &a, &sz), TK_OK);
    assert_int_equal(tk_image_source_line(img, a, &file, &line), TK_OK);
    assert_int_equal(line, 7);
    assert_int_equal(tk_image_lookup(img, "main", &a, &sz), TK_OK);
    assert_int_equal(tk_image_source_line(img, a, &file, &line), TK_OK);
    assert_int_equal(line, 15);
    /* no line for an address outside any line program */
    assert_int_equal(tk_image_source_line(img, 0x8, &file, &line), TK_END);

    /* every halfword of sum() against addr2line */
    assert_int_equal(tk_image_lookup(img, "sum", &a, &sz), TK_OK);
    snprintf(cmd, sizeof(cmd), "riscv64-unknown-elf-addr2line -e image_lines_prog.elf");
    for (uint64_t pc = a; pc < a + sz; pc += 2) {
        size_t n = strlen(cmd);
        snprintf(cmd + n, sizeof(cmd) - n, " 0x%llx", (unsigned long long)pc);
    }
    f = popen(cmd, "r");
    assert_non_null(f);
    for (uint64_t pc = a; pc < a + sz && fgets(buf, sizeof(buf), f); pc += 2) {
        char *colon = strrchr(buf, ':');
        int want;
        assert_non_null(colon);
        want = atoi(colon + 1);
        assert_int_equal(tk_image_source_line(img, pc, &file, &line), TK_OK);
        if (line != want)
            fprintf(stderr, "0x%llx: line %d, addr2line %d\n", (unsigned long long)pc, line, want);
        assert_int_equal(line, want);
        checked++;
    }
    pclose(f);
    fprintf(stderr, "%lu addresses match addr2line\n", checked);
    assert_true(checked >= 10);
    tk_image_free(img);
}

/* ELFs without DWARF answer TK_END. */
static void test_no_dwarf(void **state)
{
    char *p = tk_test_data_path("riscv-ref/coremark.riscv");
    tk_image *img = NULL;
    tk_diag d;
    const char *file;
    int line;
    (void)state;

    if (!tk_test_data_present()) {
        free(p);
        return;
    }
    assert_int_equal(tk_image_open_elf(p, &img, &d), TK_OK);
    assert_int_equal(tk_image_source_line(img, 0x80005e70, &file, &line), TK_END);
    tk_image_free(img);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_no_dwarf),
    };
    if (system(CC " --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "SKIP: %s not found\n", CC);
        return TK_TEST_SKIP;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
