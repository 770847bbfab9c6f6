/* SPDX-License-Identifier: BSD-2-Clause */
/* Events from executed-PC lists (tk_pc_flow) over a hand-encoded RISC-V image:
 *   0x1000 addi a0,a0,1      0x1004 beq a0,a1,0x100c   0x1008 jal ra,0x1010
 *   0x100c ecall             0x1010 ret */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/analysis.h"

static const uint32_t code[] = {0x00150513, 0x00b50463, 0x008000ef, 0x00000073, 0x00008067};

typedef struct rec {
    tk_event ev[32];
    size_t n;
} rec;

static tk_status record(void *ctx, const tk_event *ev)
{
    rec *r = ctx;
    assert_true(r->n < 32);
    r->ev[r->n++] = *ev;
    return TK_OK;
}

static tk_image *image(void)
{
    tk_image *img = NULL;
    uint8_t bytes[sizeof(code)];
    for (size_t i = 0; i < sizeof(code) / 4; i++)
        for (int b = 0; b < 4; b++)
            bytes[i * 4 + b] = (uint8_t)(code[i] >> (8 * b));
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, 0x1000, bytes, sizeof(bytes)), TK_OK);
    return img;
}

static void run(const uint64_t *pcs, size_t n, rec *r)
{
    tk_image *img = image();
    tk_pc_flow *f = NULL;
    memset(r, 0, sizeof(*r));
    assert_int_equal(tk_pc_flow_new(img, record, r, &f), TK_OK);
    for (size_t i = 0; i < n; i++) {
        if (pcs[i] >> 32 == 0xfeed) /* marker: an explicit trap, cause in the low bits */
            assert_int_equal(tk_pc_flow_trap(f, 0x1008, (uint32_t)pcs[i] & 0xff, false), TK_OK);
        else
            assert_int_equal(tk_pc_flow_pc(f, pcs[i]), TK_OK);
    }
    assert_int_equal(tk_pc_flow_finish(f), TK_OK);
    tk_pc_flow_free(f);
    tk_image_free(img);
}

static void is_range(const tk_event *ev, uint64_t first, uint64_t last, uint64_t ninsn, uint8_t end,
                     bool taken)
{
    assert_int_equal(ev->kind, TK_EV_RANGE);
    assert_int_equal(ev->first, first);
    assert_int_equal(ev->last, last);
    assert_int_equal(ev->ninsn, ninsn);
    assert_int_equal(ev->end, end);
    if (end == TK_END_BRANCH)
        assert_int_equal(ev->taken, taken);
}

static void test_calls_returns_branches(void **state)
{
    (void)state;
    static const uint64_t pcs[] = {0x1000, 0x1004, 0x1008, 0x1010, 0x100c};
    rec r;
    run(pcs, 5, &r);
    assert_int_equal(r.n, 4);
    is_range(&r.ev[0], 0x1000, 0x1004, 2, TK_END_BRANCH, false);
    is_range(&r.ev[1], 0x1008, 0x1008, 1, TK_END_CALL, false);
    assert_int_equal(r.ev[1].next, 0x1010);
    is_range(&r.ev[2], 0x1010, 0x1010, 1, TK_END_RETURN, false);
    /* The trace ends on the ecall: its trap is not shown. */
    is_range(&r.ev[3], 0x100c, 0x100c, 1, TK_END_TRAP, false);
}

static void test_ecall_and_taken_branch(void **state)
{
    (void)state;
    static const uint64_t pcs[] = {0x1000, 0x1004, 0x100c, 0x1000, 0x1004};
    rec r;
    run(pcs, 5, &r);
    assert_int_equal(r.n, 4);
    is_range(&r.ev[0], 0x1000, 0x1004, 2, TK_END_BRANCH, true);
    is_range(&r.ev[1], 0x100c, 0x100c, 1, TK_END_TRAP, false);
    assert_int_equal(r.ev[2].kind, TK_EV_TRAP);
    assert_int_equal(r.ev[2].first, 0x100c);
    assert_int_equal(r.ev[2].interrupt, 0);
    assert_int_equal(r.ev[2].next, 0x1000);
    /* The last branch's outcome is not shown: no end kind claims one. */
    is_range(&r.ev[3], 0x1000, 0x1004, 2, TK_END_NONE, false);
}

static void test_inferred_interrupt(void **state)
{
    (void)state;
    /* After addi the flow goes to 0x1010, not 0x1004: an interrupt before 0x1004. */
    static const uint64_t pcs[] = {0x1000, 0x1010};
    rec r;
    run(pcs, 2, &r);
    assert_int_equal(r.n, 3);
    is_range(&r.ev[0], 0x1000, 0x1000, 1, TK_END_NONE, false);
    assert_int_equal(r.ev[1].kind, TK_EV_TRAP);
    assert_int_equal(r.ev[1].interrupt, 1);
    assert_int_equal(r.ev[1].first, 0x1004);
    is_range(&r.ev[2], 0x1010, 0x1010, 1, TK_END_RETURN, false);
}

static void test_explicit_trap_shows_branch_outcome(void **state)
{
    (void)state;
    /* beq falls through to 0x1008, which faults (cause 2) before retiring. */
    static const uint64_t pcs[] = {0x1000, 0x1004, 0xfeed00000002ull, 0x1010};
    rec r;
    run(pcs, 4, &r);
    assert_int_equal(r.n, 3);
    is_range(&r.ev[0], 0x1000, 0x1004, 2, TK_END_BRANCH, false);
    assert_int_equal(r.ev[1].kind, TK_EV_TRAP);
    assert_int_equal(r.ev[1].first, 0x1008);
    assert_int_equal(r.ev[1].cause, 2);
    assert_int_equal(r.ev[1].interrupt, 0);
    is_range(&r.ev[2], 0x1010, 0x1010, 1, TK_END_RETURN, false);
}

static void test_pcs_outside_the_image(void **state)
{
    (void)state;
    static const uint64_t pcs[] = {0x1000, 0x9000, 0x9004, 0x1004};
    rec r;
    run(pcs, 4, &r);
    assert_int_equal(r.n, 3);
    is_range(&r.ev[0], 0x1000, 0x1000, 1, TK_END_NONE, false);
    assert_int_equal(r.ev[1].kind, TK_EV_ERROR); /* once for the run of unknown PCs */
    assert_int_equal(r.ev[1].first, 0x9000);
    is_range(&r.ev[2], 0x1004, 0x1004, 1, TK_END_NONE, false);
}

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/tk_pc_flow_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# a comment\n0x1000\n\n1004\n  1008  \n", f);
    fclose(f);
    tk_image *img = image();
    rec r = {0};
    tk_pc_flow *flow = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_pc_flow_new(img, record, &r, &flow), TK_OK);
    assert_int_equal(tk_pc_flow_read_file(flow, path, &d), TK_OK);
    assert_int_equal(tk_pc_flow_finish(flow), TK_OK);
    assert_int_equal(r.n, 2);
    is_range(&r.ev[0], 0x1000, 0x1004, 2, TK_END_BRANCH, false); /* fell through to 0x1008 */
    is_range(&r.ev[1], 0x1008, 0x1008, 1, TK_END_CALL, false);
    tk_pc_flow_free(flow);

    f = fopen(path, "w");
    fputs("1000\n1004\nnot-a-pc\n", f);
    fclose(f);
    assert_int_equal(tk_pc_flow_new(img, record, &r, &flow), TK_OK);
    assert_int_equal(tk_pc_flow_read_file(flow, path, &d), TK_ERR_FORMAT);
    assert_int_equal(d.line, 3);
    assert_non_null(strstr(d.message, ":3:"));
    tk_pc_flow_free(flow);
    assert_int_equal(tk_pc_flow_read_file(NULL, "/nonexistent", &d), TK_ERR_IO);
    remove(path);
    tk_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calls_returns_branches),
        cmocka_unit_test(test_ecall_and_taken_branch),
        cmocka_unit_test(test_inferred_interrupt),
        cmocka_unit_test(test_explicit_trap_shows_branch_outcome),
        cmocka_unit_test(test_pcs_outside_the_image),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
