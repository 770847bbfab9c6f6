/* SPDX-License-Identifier: BSD-2-Clause */
/* The writers on the fake program's run (fake_code.h). Expected numbers are worked out from
 * the program listing and its source lines; the files are also parsed back where the format
 * allows and their counts summed against the executed instruction count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "fake_code.h"

#define NPLAIN (sizeof(fake_run_plain) / sizeof(fake_run_plain[0]))

typedef struct fixture {
    tk_profile *p;
    tk_line_table *lt;
    tk_write_options o;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f || fake_profile(fake_run_plain, NPLAIN, &f->p) != TK_OK)
        return -1;
    f->lt = fake_lines("/src/prog.c");
    tk_write_options_init(&f->o);
    f->o.program = "prog.elf";
    f->o.lines = f->lt;
    *state = f;
    return f->lt ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    tk_profile_free(f->p);
    tk_line_table_free(f->lt);
    free(f);
    return 0;
}

typedef tk_status (*writer_fn)(const tk_profile *, FILE *, const tk_write_options *);

static char *render(fixture *f, writer_fn w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_non_null(m);
    assert_int_equal(w(f->p, m, &f->o), TK_OK);
    fclose(m);
    return buf;
}

static void has(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("missing \"%s\" in:\n%s", needle, text);
}

static void test_lcov(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_coverage_write_lcov);
    has(t, "SF:/src/prog.c\n");
    /* Functions at their declaration lines; count = runs of the first instruction. */
    has(t, "FN:3,foo\n");
    has(t, "FNDA:2,foo\n");
    has(t, "FNDA:1,main\n");
    has(t, "FNDA:0,handler\n");
    has(t, "FNDA:0,never\n");
    has(t, "FNF:4\nFNH:2\n");
    /* foo's beqz on line 4 went each way once; main's bnez on 13 taken once, not once;
     * never's bnez on 31 never ran. */
    has(t, "BRDA:4,0,0,1\nBRDA:4,0,1,1\n");
    has(t, "BRDA:13,0,0,1\nBRDA:13,0,1,1\n");
    has(t, "BRDA:31,0,0,-\nBRDA:31,0,1,-\n");
    has(t, "BRF:6\nBRH:4\n");
    /* Lines that never ran: 21, 22 (handler), 31, 32 (never). */
    has(t, "DA:4,2\nDA:5,1\nDA:6,2\nDA:11,1\nDA:12,2\nDA:13,2\nDA:14,1\nDA:21,0\nDA:22,0\n"
           "DA:31,0\nDA:32,0\n");
    has(t, "LF:11\nLH:7\nend_of_record\n");
    free(t);
}

static void test_callgrind(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_callgrind);
    has(t, "events: Ir\n");
    has(t, "summary: 15\n");
    /* Name compression: "(id) name" on first use, "(id)" after. */
    has(t, "ob=(1) prog.elf\n\nfl=(2) /src/prog.c\nfn=(3) main\n0x1000 11 1\n");
    has(t, "0x1010 14 1\ncfn=(4) foo\ncalls=2 0x2000 4\n0x1004 12 7\n");
    has(t, "fl=(2)\nfn=(4)\n0x2000 4 2\n");
    free(t);
}

static void test_callgrind_costs(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_callgrind);
    /* Sum of self cost lines = summary; the one call line carries foo's inclusive 7. */
    uint64_t self = 0, calls_seen = 0;
    bool after_calls = false;
    char *save = NULL;
    for (char *line = strtok_r(t, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "calls=", 6)) {
            assert_string_equal(line, "calls=2 0x2000 4");
            after_calls = true;
            calls_seen++;
            continue;
        }
        if (!strncmp(line, "0x", 2)) {
            unsigned long long addr, count;
            unsigned ln;
            assert_int_equal(sscanf(line, "%llx %u %llu", &addr, &ln, &count), 3);
            if (after_calls) {
                assert_int_equal(addr, 0x1004);
                assert_int_equal(ln, 12);
                assert_int_equal(count, 7);
                after_calls = false;
            } else {
                self += count;
            }
        }
    }
    assert_int_equal(calls_seen, 1);
    assert_int_equal(self, NPLAIN);
    free(t);
}

static void test_folded(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_folded);
    assert_string_equal(t, "main 8\nmain;foo 7\n");
    free(t);
}

static void test_llvm_sample(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_llvm_sample);
    /* main (decl 10): lines 11..14 -> offsets 1..4 with 1, 2, 2, 1; entered 0 times (root).
     * foo (decl 3): lines 4..6 -> offsets 1..3 with max 2, 1, 2; entered twice. */
    assert_string_equal(t, "main:6:0\n 1: 1\n 2: 2 foo:2\n 3: 2\n 4: 1\n"
                           "foo:5:2\n 1: 2\n 2: 1\n 3: 2\n");
    free(t);
    f->o.lines = NULL;
    FILE *m = fopen("/dev/null", "w");
    assert_int_equal(tk_profile_write_llvm_sample(f->p, m, &f->o), TK_ERR_UNSUPPORTED);
    fclose(m);
    f->o.lines = f->lt;
}

/* Parse the unsymbolized profile back: every instruction of every run counted once per run
 * equals the executed total; branch counts sum to the taken transfers. */
static void test_autofdo(void **state)
{
    fixture *f = *state;
    f->o.base = 0x1000;
    char *t = render(f, tk_profile_write_autofdo);
    f->o.base = 0;
    char *save = NULL;
    char *line = strtok_r(t, "\n", &save);
    unsigned long n = strtoul(line, NULL, 10);
    uint64_t insns = 0;
    for (unsigned long i = 0; i < n; i++) {
        line = strtok_r(NULL, "\n", &save);
        unsigned long long a, b, c;
        assert_int_equal(sscanf(line, "%llx-%llx:%llu", &a, &b, &c), 3);
        for (uint64_t x = a + 0x1000; x <= b + 0x1000; x += fake_find(x)->len)
            insns += c;
    }
    assert_int_equal(insns, NPLAIN);
    line = strtok_r(NULL, "\n", &save);
    n = strtoul(line, NULL, 10);
    uint64_t taken = 0;
    bool call = false;
    for (unsigned long i = 0; i < n; i++) {
        line = strtok_r(NULL, "\n", &save);
        unsigned long long a, b, c;
        assert_int_equal(sscanf(line, "%llx->%llx:%llu", &a, &b, &c), 3);
        call |= a == 0x4 && b == 0x1000 && c == 2; /* main's call to foo, as offsets */
        taken += c;
    }
    assert_true(call);
    assert_int_equal(taken, 6);
    assert_null(strtok_r(NULL, "\n", &save));
    free(t);
}

static void test_bolt(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_bolt);
    has(t, "B 1004 2000 2 0\n");
    has(t, "B 100c 1004 1 0\n");
    has(t, "B 2002 2008 1 0\n");
    /* Both runs from 0x1008 begin where foo returned: "f", entered from outside. */
    has(t, "f 1008 1010 1\n");
    has(t, "f 1008 100c 1\n");
    has(t, "F 1000 1004 1\n");
    assert_null(strstr(t, "F 1008"));
    free(t);
}

static void test_json_and_report(void **state)
{
    fixture *f = *state;
    char *t = render(f, tk_profile_write_json);
    has(t, "\"instructions\": 15");
    has(t, "{\"name\": \"foo\", \"addr\": \"0x2000\", \"size\": 12, \"entries\": 2, \"self\": 7, "
           "\"inclusive\": 7}");
    has(t, "{\"self\": 7, \"stack\": [\"main\", \"foo\"]}");
    free(t);
    t = render(f, tk_profile_write_report);
    has(t, "Executed 15 instructions");
    has(t, "main -> foo (main+0x4)");
    has(t, "foo+0x2 -> foo+0x8");
    free(t);
}

/* The writers format through a 16 KB buffer (out_buf.h): a name longer than it, and the
 * characters JSON must escape, come out whole. */
static void test_long_and_escaped_names(void **state)
{
    fixture *f = *state;
    const size_t nx = 40000;
    char *name = malloc(nx + 16), *want = malloc(nx + 64);
    assert_non_null(name);
    assert_non_null(want);
    strcpy(name, "a\"b\\c\x01"
                 "d\x1f");
    memset(name + 8, 'x', nx);
    name[8 + nx] = 0;
    f->o.program = name;

    char *t = render(f, tk_profile_write_json);
    const char *head = "\"program\": \"a\\\"b\\\\c\\u0001d\\u001f";
    const size_t nh = strlen(head);
    memcpy(want, head, nh);
    memset(want + nh, 'x', nx);
    strcpy(want + nh + nx, "\",\n");
    has(t, want);
    has(t, "{\"name\": \"foo\", \"addr\": \"0x2000\"");
    free(t);

    t = render(f, tk_profile_write_callgrind);
    snprintf(want, nx + 64, "cmd: %s\npositions: instr line\n", name);
    has(t, want);
    snprintf(want, nx + 64, "ob=(1) %s\n", name);
    has(t, want);
    free(t);
    free(want);
    free(name);
}

/* Two call sites to foo on one source line give one target entry with the calls summed. */
static void test_llvm_sample_merges_call_sites(void **state)
{
    (void)state;
    tk_code_view v = fake_view();
    tk_profile *p = NULL;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    const tk_event evs[] = {
        {.kind = TK_EV_RANGE, .first = 0x1000, .last = 0x1004, .end = TK_END_CALL},
        {.kind = TK_EV_RANGE, .first = 0x2000, .last = 0x2008, .end = TK_END_RETURN},
        {.kind = TK_EV_RANGE, .first = 0x1008, .last = 0x100c, .end = TK_END_CALL},
        {.kind = TK_EV_RANGE, .first = 0x2000, .last = 0x2008, .end = TK_END_RETURN},
        {.kind = TK_EV_RANGE, .first = 0x1010, .last = 0x1010, .end = TK_END_NONE},
    };
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        assert_int_equal(tk_profile_event(p, &evs[i]), TK_OK);
    assert_int_equal(tk_profile_finish(p), TK_OK);
    tk_line_table *lt = NULL;
    assert_int_equal(tk_line_table_new(&lt), TK_OK);
    assert_int_equal(tk_line_table_add(lt, 0x1000, "m.c", 2, false), TK_OK);
    assert_int_equal(tk_line_table_add(lt, 0x1010, "m.c", 3, false), TK_OK);
    assert_int_equal(tk_line_table_add(lt, 0x1014, NULL, 0, true), TK_OK);
    assert_int_equal(tk_line_table_add_func(lt, "main", 0x1000, 0x1014, "m.c", 1), TK_OK);
    tk_write_options o;
    tk_write_options_init(&o);
    o.lines = lt;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    assert_int_equal(tk_profile_write_llvm_sample(p, m, &o), TK_OK);
    fclose(m);
    assert_string_equal(buf, "main:2:0\n 1: 1 foo:2\n 2: 1\n");
    free(buf);
    tk_line_table_free(lt);
    tk_profile_free(p);
}

static void test_unfinished_profile_is_refused(void **state)
{
    (void)state;
    tk_code_view v = fake_view();
    tk_profile *p;
    assert_int_equal(tk_profile_new(&v, &p), TK_OK);
    FILE *m = fopen("/dev/null", "w");
    assert_int_equal(tk_profile_write_folded(p, m, NULL), TK_ERR_STATE);
    assert_int_equal(tk_profile_write_json(p, m, NULL), TK_ERR_STATE);
    fclose(m);
    tk_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lcov, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callgrind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_callgrind_costs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_folded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_llvm_sample, setup, teardown),
        cmocka_unit_test_setup_teardown(test_autofdo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bolt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_and_report, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_and_escaped_names, setup, teardown),
        cmocka_unit_test(test_llvm_sample_merges_call_sites),
        cmocka_unit_test(test_unfinished_profile_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
