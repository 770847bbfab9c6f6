/* SPDX-License-Identifier: BSD-2-Clause */
/* Wrong-binary detection: every golden trace decoded with every other program's ELF must be
 * reported as a mismatch (an error event saying the trace does not fit the code: no code at
 * an address, bytes that are not an instruction, or a branch/jump the trace contradicts),
 * never decoded quietly into a plausible flow. Its own ELF decodes without any error. */
#include "robust_fixture.h"

#include <inttypes.h>

#define MAX_PROGS 32

typedef struct progs {
    char name[MAX_PROGS][64];
    char setting[MAX_PROGS][64];
    size_t n;
} progs;

/* One trace per program: the first setting found (scandir order: itype3_basic first). */
static void collect(const char *prog, const char *setting, void *ctx)
{
    progs *p = ctx;
    if (p->n && !strcmp(p->name[p->n - 1], prog))
        return;
    assert_true(p->n < MAX_PROGS);
    /* a name that does not fit is not one of the test data's programs */
    if (snprintf(p->name[p->n], sizeof(p->name[0]), "%s", prog) < (int)sizeof(p->name[0]) &&
        snprintf(p->setting[p->n], sizeof(p->setting[0]), "%s", setting) <
            (int)sizeof(p->setting[0]))
        p->n++;
}

static void test_wrong_elf_is_reported(void **state)
{
    (void)state;
    progs p;
    memset(&p, 0, sizeof(p));
    rb_for_each_vector(collect, &p);
    assert_true(p.n >= 8);
    unsigned pairs = 0, detected = 0;
    for (size_t t = 0; t < p.n; t++) {
        for (size_t e = 0; e < p.n; e++) {
            rb_vector v;
            assert_true(rb_vector_load(&v, p.name[t], p.setting[t], p.name[e]));
            rb_flow f;
            rb_decode(&v, v.raw, v.raw_len, &f);
            if (t == e) {
                if (f.errors)
                    fail_msg("%s decoded with its own ELF reports %" PRIu64 " errors", p.name[t],
                             f.errors);
            } else {
                pairs++;
                if (f.mismatches)
                    detected++;
                else
                    print_error("%s/%s decoded with %s.riscv: %" PRIu64 " instructions, %" PRIu64
                                " errors, none a mismatch\n",
                                p.name[t], p.setting[t], p.name[e], f.ninsn, f.errors);
            }
            rb_flow_free(&f);
            rb_vector_free(&v);
        }
    }
    printf("wrong binary: %u of %u (trace, other program's ELF) pairs reported as a mismatch\n",
           detected, pairs);
    assert_int_equal(detected, pairs);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_wrong_elf_is_reported)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
