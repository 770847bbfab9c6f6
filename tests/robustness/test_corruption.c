/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted traces: every golden .te_inst_raw of etrace-ref, damaged in thousands of seeded
 * ways (truncated final packet, flipped bits, dropped, duplicated, zeroed and random bytes),
 * goes through the raw reader, the codec and the decoder with its ELF.
 *
 * Checked for every mutation:
 *  - no crash, no hang (each reader call consumes input; ASan/UBSan in the sanitizer build);
 *  - every error is located inside the stream (rb_on_event);
 *  - the decoder comes back: once the framing is aligned again after the damage, the flow
 *    from the next format 3 sync on equals the clean decode's flow from that point. A damage
 *    the decoder cannot see (a flipped branch-map bit is still a valid path) is found by the
 *    sync packet itself, and the decoder then needs the following sync: resynchronisation at
 *    the first or second sync after the damage is accepted, never later. This holds for every
 *    mutation, including those that turn bytes into a support packet with other options: the
 *    decoder refuses such a packet after the first sync (decoder.c, support_refusal). The one
 *    exception, explained in rb_decode_mutant (robust_fixture.h), is a damaged first support packet
 * announcing options the encoder could have: that decode is checked again with
 * TK_TE_DEC_FIXED_OPTIONS. Reported: per kind of damage, the instructions lost (clean flow minus
 * the common start and end of the damaged flow) and at which sync the decoder came back. */
#include "robust_fixture.h"

/* Mutations per vector, split evenly over the kinds. 25 vectors -> 4050 mutations; half as
 * many in the sanitizer build (-DTK_SANITIZE=ON), which is there to catch memory errors and
 * runs about five times slower. */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATIONS_PER_VECTOR 84
#else
#define MUTATIONS_PER_VECTOR 162
#endif

typedef struct run_ctx {
    rb_kind_stats k[RB_NKINDS];
    unsigned vectors;
} run_ctx;

static void run_vector(const char *prog, const char *setting, void *vctx)
{
    run_ctx *rc = vctx;
    rb_vector v;
    if (!rb_vector_load(&v, prog, setting, NULL))
        return;
    rc->vectors++;
    rb_flow clean;
    rb_decode(&v, v.raw, v.raw_len, &clean);
    rb_mutate_vector(&v, &clean, MUTATIONS_PER_VECTOR, rc->k);
    rb_flow_free(&clean);
    rb_vector_free(&v);
}

static void test_corruption_golden(void **state)
{
    (void)state;
    run_ctx rc;
    memset(&rc, 0, sizeof(rc));
    rb_for_each_vector(run_vector, &rc);
    assert_true(rc.vectors >= 20);
    unsigned long total = 0;
    printf("corruption: %u golden vectors, %d mutations each\n", rc.vectors, MUTATIONS_PER_VECTOR);
    rb_print_stats_header(false);
    for (int k = 0; k < RB_NKINDS; k++) {
        const rb_kind_stats *ks = &rc.k[k];
        total += ks->mutations;
        rb_print_stats_row(NULL, rb_kind_names[k], ks);
        /* a truncated final packet is always noticed by the reader */
        if (k == RB_TRUNC)
            assert_int_equal(ks->with_error, ks->mutations);
    }
    assert_true(total >= 2000);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_corruption_golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
