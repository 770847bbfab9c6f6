/* SPDX-License-Identifier: BSD-2-Clause */
/* The encoder's small state machines: branch map and resync timer. */
#include "testutil.h"

#include "etrace/encoder_branch_map.h"
#include "etrace/encoder_resync.h"

static void test_branch_map(void **state)
{
    (void)state;
    tk_te_branch_map m;
    tk_te_branch_map_clear(&m);
    assert_true(tk_te_branch_map_add(&m, true));  /* bit 0: taken = 0 */
    assert_true(tk_te_branch_map_add(&m, false)); /* bit 1: not taken = 1 */
    assert_true(tk_te_branch_map_add(&m, true));
    assert_int_equal(m.count, 3);
    assert_int_equal(m.bits, 0x2);
    for (int i = 3; i < 31; i++)
        assert_true(tk_te_branch_map_add(&m, false));
    assert_true(tk_te_branch_map_full(&m));
    assert_false(tk_te_branch_map_add(&m, false));
    assert_int_equal(m.bits, 0x7ffffffa);
    tk_te_branch_map_clear(&m);
    assert_int_equal(m.count, 0);
    assert_int_equal(m.bits, 0);
}

static void test_resync(void **state)
{
    (void)state;
    tk_te_resync r;
    tk_te_resync_init(&r, 0);
    assert_int_equal(r.max, 16);
    for (int i = 0; i < 15; i++)
        tk_te_resync_packet(&r);
    assert_false(tk_te_resync_at_max(&r));
    tk_te_resync_packet(&r);
    assert_true(tk_te_resync_at_max(&r));
    assert_false(tk_te_resync_exceeded(&r));
    tk_te_resync_packet(&r);
    assert_true(tk_te_resync_exceeded(&r));
    tk_te_resync_restart(&r);
    assert_false(tk_te_resync_exceeded(&r));
    tk_te_resync_init(&r, 16);
    assert_int_equal(r.max, 1u << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_map),
        cmocka_unit_test(test_resync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
