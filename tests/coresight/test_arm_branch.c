/* SPDX-License-Identifier: BSD-2-Clause */
/* Branch classification: encodings produced by llvm-mc (`llvm-mc -show-encoding` for aarch64,
 * armv7a, thumbv7a); targets follow the architecture rules (A64: insn + offset, A32: insn + 8 +
 * offset, T32: insn + 4 + offset; BLX (immediate) from T32 aligns the PC down to 4). */
#include "testutil.h"

#include <string.h>

#include "isa/arm/arm_branch.h"

typedef struct vec {
    const char *text;
    tk_arm_isa isa;
    uint8_t b[4];
    uint8_t size, branch, indirect, cond, link, ret, eret;
    uint64_t target; /* for an instruction at 0x1000; 0 = no direct target */
    tk_arm_isa target_isa;
} vec;

#define A64 TK_ARM_A64
#define A32 TK_ARM_A32
#define T32 TK_ARM_T32

static const vec vecs[] = {
    {"b #256", A64, {0x40, 0x00, 0x00, 0x14}, 4, 1, 0, 0, 0, 0, 0, 0x1100, A64},
    {"bl #-4", A64, {0xff, 0xff, 0xff, 0x97}, 4, 1, 0, 0, 1, 0, 0, 0xffc, A64},
    {"b.ne #8", A64, {0x41, 0x00, 0x00, 0x54}, 4, 1, 0, 1, 0, 0, 0, 0x1008, A64},
    {"cbz x0, #16", A64, {0x80, 0x00, 0x00, 0xb4}, 4, 1, 0, 1, 0, 0, 0, 0x1010, A64},
    {"tbz w1, #3, #-8", A64, {0xc1, 0xff, 0x1f, 0x36}, 4, 1, 0, 1, 0, 0, 0, 0xff8, A64},
    {"ret", A64, {0xc0, 0x03, 0x5f, 0xd6}, 4, 1, 1, 0, 0, 1, 0, 0, A64},
    {"br x16", A64, {0x00, 0x02, 0x1f, 0xd6}, 4, 1, 1, 0, 0, 0, 0, 0, A64},
    {"blr x8", A64, {0x00, 0x01, 0x3f, 0xd6}, 4, 1, 1, 0, 1, 0, 0, 0, A64},
    {"eret", A64, {0xe0, 0x03, 0x9f, 0xd6}, 4, 1, 1, 0, 0, 0, 1, 0, A64},
    {"retaa", A64, {0xff, 0x0b, 0x5f, 0xd6}, 4, 1, 1, 0, 0, 1, 0, 0, A64},
    {"braaz x1", A64, {0x3f, 0x08, 0x1f, 0xd6}, 4, 1, 1, 0, 0, 0, 0, 0, A64},
    {"isb", A64, {0xdf, 0x3f, 0x03, 0xd5}, 4, 1, 0, 0, 0, 0, 0, 0x1004, A64},
    {"nop", A64, {0x1f, 0x20, 0x03, 0xd5}, 4, 0, 0, 0, 0, 0, 0, 0, A64},
    {"svc #0", A64, {0x01, 0x00, 0x00, 0xd4}, 4, 0, 0, 0, 0, 0, 0, 0, A64},

    {"b #256", A32, {0x40, 0x00, 0x00, 0xea}, 4, 1, 0, 0, 0, 0, 0, 0x1108, A32},
    {"bl #-4", A32, {0xff, 0xff, 0xff, 0xeb}, 4, 1, 0, 0, 1, 0, 0, 0x1004, A32},
    {"beq #8", A32, {0x02, 0x00, 0x00, 0x0a}, 4, 1, 0, 1, 0, 0, 0, 0x1010, A32},
    {"blx #16", A32, {0x04, 0x00, 0x00, 0xfa}, 4, 1, 0, 0, 1, 0, 0, 0x1018, T32},
    {"bx lr", A32, {0x1e, 0xff, 0x2f, 0xe1}, 4, 1, 1, 0, 0, 1, 0, 0, A32},
    {"blx r3", A32, {0x33, 0xff, 0x2f, 0xe1}, 4, 1, 1, 0, 1, 0, 0, 0, A32},
    {"pop {r4, pc}", A32, {0x10, 0x80, 0xbd, 0xe8}, 4, 1, 1, 0, 0, 1, 0, 0, A32},
    {"pop {pc}", A32, {0x04, 0xf0, 0x9d, 0xe4}, 4, 1, 1, 0, 0, 1, 0, 0, A32},
    {"mov pc, lr", A32, {0x0e, 0xf0, 0xa0, 0xe1}, 4, 1, 1, 0, 0, 1, 0, 0, A32},
    {"subs pc, lr, #4", A32, {0x04, 0xf0, 0x5e, 0xe2}, 4, 1, 1, 0, 0, 0, 1, 0, A32},
    {"isb sy", A32, {0x6f, 0xf0, 0x7f, 0xf5}, 4, 1, 0, 0, 0, 0, 0, 0x1004, A32},
    {"add r0, r0, #1", A32, {0x01, 0x00, 0x80, 0xe2}, 4, 0, 0, 0, 0, 0, 0, 0, A32},
    {"ldm r0, {r1, pc}", A32, {0x02, 0x80, 0x90, 0xe8}, 4, 1, 1, 0, 0, 0, 0, 0, A32},

    {"b #256", T32, {0x80, 0xe0}, 2, 1, 0, 0, 0, 0, 0, 0x1104, T32},
    {"beq #8", T32, {0x04, 0xd0}, 2, 1, 0, 1, 0, 0, 0, 0x100c, T32},
    {"bl #-4", T32, {0xff, 0xf7, 0xfe, 0xff}, 4, 1, 0, 0, 1, 0, 0, 0x1000, T32},
    {"blx #16", T32, {0x00, 0xf0, 0x08, 0xe8}, 4, 1, 0, 0, 1, 0, 0, 0x1014, A32},
    {"bx lr", T32, {0x70, 0x47}, 2, 1, 1, 0, 0, 1, 0, 0, T32},
    {"blx r3", T32, {0x98, 0x47}, 2, 1, 1, 0, 1, 0, 0, 0, T32},
    {"pop {r4, pc}", T32, {0x10, 0xbd}, 2, 1, 1, 0, 0, 1, 0, 0, T32},
    {"cbz r0, #16", T32, {0x40, 0xb1}, 2, 1, 0, 1, 0, 0, 0, 0x1014, T32},
    {"b.w #4096", T32, {0x01, 0xf0, 0x00, 0xb8}, 4, 1, 0, 0, 0, 0, 0, 0x2004, T32},
    {"beq.w #512", T32, {0x00, 0xf0, 0x00, 0x81}, 4, 1, 0, 1, 0, 0, 0, 0x1204, T32},
    {"tbb [r0, r1]", T32, {0xd0, 0xe8, 0x01, 0xf0}, 4, 1, 1, 0, 0, 0, 0, 0, T32},
    {"isb sy", T32, {0xbf, 0xf3, 0x6f, 0x8f}, 4, 1, 0, 0, 0, 0, 0, 0x1004, T32},
    {"adds r0, #1", T32, {0x01, 0x30}, 2, 0, 0, 0, 0, 0, 0, 0, T32},
    {"pop.w {r4-r11, pc}", T32, {0xbd, 0xe8, 0xf0, 0x8f}, 4, 1, 1, 0, 0, 1, 0, 0, T32},
    {"ldr pc, [sp], #4", T32, {0x5d, 0xf8, 0x04, 0xfb}, 4, 1, 1, 0, 0, 1, 0, 0, T32},
    {"mov pc, r2", T32, {0x97, 0x46}, 2, 1, 1, 0, 0, 0, 0, 0, T32},
    /* Armv8.1-M low-overhead loops (llvm-mc -triple=thumbv8.1m.main -mattr=+lob) */
    {"wls lr, r0, #16", T32, {0x40, 0xf0, 0x09, 0xc0}, 4, 1, 0, 1, 0, 0, 0, 0x1014, T32},
    {"le lr, #-16", T32, {0x0f, 0xf0, 0x09, 0xc0}, 4, 1, 0, 1, 0, 0, 0, 0xff4, T32},
    {"le #-16", T32, {0x2f, 0xf0, 0x09, 0xc0}, 4, 1, 0, 1, 0, 0, 0, 0xff4, T32},
    {"dls lr, r0", T32, {0x40, 0xf0, 0x01, 0xe0}, 4, 0, 0, 0, 0, 0, 0, 0, T32},
};

static void test_vectors(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof(vecs) / sizeof(vecs[0]); k++) {
        const vec *v = &vecs[k];
        tk_arm_insn in;
        int rc = tk_arm_classify(v->isa, 0x1000, v->b, v->size, &in);
        print_message("%d %s\n", v->isa, v->text);
        assert_int_equal(rc, 0);
        assert_int_equal(in.size, v->size);
        assert_int_equal(in.kind == TK_ARM_BRANCH, v->branch);
        assert_int_equal(in.indirect, v->indirect);
        assert_int_equal(in.cond, v->cond);
        assert_int_equal(in.link, v->link);
        assert_int_equal(in.ret, v->ret);
        assert_int_equal(in.eret, v->eret);
        if (v->target) {
            assert_int_equal(in.target, v->target);
            assert_int_equal(in.target_isa, v->target_isa);
        }
    }
}

static void test_short_input(void **state)
{
    (void)state;
    const uint8_t b[4] = {0x00, 0xf0, 0x08, 0xe8};
    tk_arm_insn in;
    assert_int_equal(tk_arm_classify(TK_ARM_A64, 0, b, 3, &in), -1);
    assert_int_equal(tk_arm_classify(TK_ARM_T32, 0, b, 2, &in), -1); /* 32-bit T32 */
    assert_int_equal(in.size, 4);
    assert_int_equal(tk_arm_classify(TK_ARM_T32, 0, b, 1, &in), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_short_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
