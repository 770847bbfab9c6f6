/* SPDX-License-Identifier: BSD-2-Clause */
/* .scf/.ucf reading and writing, validation and the ioptions mapping. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracekit/te_params.h"

/* Write text to a fresh file in the test's working directory (the build tree). */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_defaults(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    assert_int_equal(p.size, sizeof(p));
    assert_int_equal(p.spec, TK_TE_SPEC_2_0);
    assert_int_equal(p.s.iaddress_width, 40);
    assert_int_equal(p.s.context_width, 32);
    assert_int_equal(p.s.ecause_width, 5);
    assert_int_equal(p.s.privilege_width, 2);
    assert_int_equal(p.s.notime, 1);
    assert_int_equal(p.s.nocontext, 0);
    assert_int_equal(p.s.itype_width, 3);
    assert_int_equal(p.s.ctype_width, 2);
    assert_int_equal(p.o.resync_max, 1);
    assert_false(p.o.full_address);
    assert_int_equal(p.encoder_mode_width, 1);
    assert_int_equal(p.ioptions_width, 5);
    assert_int_equal(p.doptions_width, 4);
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK);
}

/* The golden vectors' own files: itype4_debug has call_counter_size_p=9, 64-bit addresses,
 * full address mode; its encoder .ucf lacks the [codec] header. */
static void test_reference_files(void **state)
{
    (void)state;
    if (!tk_test_data_present())
        skip();
    char *scf = tk_test_data_path("etrace-ref/dhrystone/itype4_debug/dhrystone.scf");
    char *eucf = tk_test_data_path("etrace-ref/dhrystone/itype4_debug/dhrystone.encoder.ucf");
    char *ducf = tk_test_data_path("etrace-ref/dhrystone/itype4_debug/dhrystone.decoder.ucf");
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_params_read_scf(&p, scf, &d), TK_OK);
    assert_int_equal(p.s.call_counter_size, 9);
    assert_int_equal(p.s.iaddress_width, 64);
    assert_int_equal(p.s.iaddress_lsb, 0);
    assert_int_equal(p.s.itype_width, 4);
    char *elf = NULL;
    assert_int_equal(tk_te_params_read_ucf(&p, eucf, &elf, &d), TK_OK);
    assert_true(p.o.full_address);
    assert_int_equal(p.o.resync_max, 1);
    assert_false(p.o.implicit_return);
    assert_non_null(elf);
    /* relative to the .ucf's folder */
    const char *tail = "itype4_debug/../../../riscv-ref/dhrystone.riscv";
    assert_true(strlen(elf) > strlen(tail));
    assert_string_equal(elf + strlen(elf) - strlen(tail), tail);
    free(elf);
    tk_te_params q;
    tk_te_params_init(&q);
    assert_int_equal(tk_te_params_read_scf(&q, scf, &d), TK_OK);
    assert_int_equal(tk_te_params_read_ucf(&q, ducf, NULL, &d), TK_OK);
    assert_memory_equal(&p, &q, sizeof(p));
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK);
    free(scf);
    free(eucf);
    free(ducf);
}

static void test_write_read_roundtrip(void **state)
{
    (void)state;
    tk_te_params p, q;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 1;
    p.s.return_stack_size = 7;
    p.s.notime = 0;
    p.s.time_width = 40;
    p.s.filter_tval = 0;
    p.s.impdef_width = 3;
    p.o.resync_max = 16;
    p.o.implicit_return = true;
    p.o.use_rv32_isa = true;
    p.o.jump_target_cache = true;
    FILE *f = fopen("rt.scf", "w");
    assert_int_equal(tk_te_params_write_scf(&p, f), TK_OK);
    fclose(f);
    f = fopen("rt.ucf", "w");
    assert_int_equal(tk_te_params_write_ucf_ex(&p, f, "x.encoder", "prog.elf"), TK_OK);
    fclose(f);
    memset(&q, 0x55, sizeof(q));
    tk_te_params_init(&q);
    tk_diag d;
    tk_diag_clear(&d);
    char *elf = NULL;
    assert_int_equal(tk_te_params_read_scf(&q, "rt.scf", &d), TK_OK);
    assert_int_equal(tk_te_params_read_ucf(&q, "rt.ucf", &elf, &d), TK_OK);
    assert_memory_equal(&p.s, &q.s, sizeof(p.s));
    assert_memory_equal(&p.o, &q.o, sizeof(p.o));
    assert_string_equal(elf, "prog.elf"); /* no folder in "rt.ucf" */
    free(elf);
}

static void test_syntax(void **state)
{
    (void)state;
    write_text("syn.ucf", "; leading\n[required]\nobject-files = pk sub/prog # trailing\n"
                          "  [codec]  \n  resync-max =  0x10 \nfull-address=TRUE\n"
                          "# whole-line\n[flags]\nuse-rv32-isa= false ; x\n");
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag d;
    tk_diag_clear(&d);
    char *elf = NULL;
    assert_int_equal(tk_te_params_read_ucf(&p, "syn.ucf", &elf, &d), TK_OK);
    assert_int_equal(p.o.resync_max, 16);
    assert_true(p.o.full_address);
    assert_string_equal(elf, "sub/prog");
    free(elf);
}

static void expect_error(const char *name, const char *text, int is_ucf, tk_status want,
                         const char *needle)
{
    write_text(name, text);
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag d;
    tk_diag_clear(&d);
    char *elf = (char *)1;
    tk_status st =
        is_ucf ? tk_te_params_read_ucf(&p, name, &elf, &d) : tk_te_params_read_scf(&p, name, &d);
    assert_int_equal(st, want);
    assert_int_equal(d.status, want);
    if (!strstr(d.message, needle))
        fail_msg("message '%s' lacks '%s'", d.message, needle);
    assert_true(d.line != UINT64_MAX && d.line >= 1);
    if (is_ucf)
        assert_null(elf);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("e1.scf", "[Required Attributes]\narch_p=0\nbogus_p=3\n", 0, TK_ERR_CONFIG,
                 "e1.scf:3: unknown key 'bogus_p'");
    expect_error("e2.scf", "[Required Attributes]\niaddress_width_p=-1\n", 0, TK_ERR_CONFIG,
                 "e2.scf:2");
    expect_error("e3.scf", "[Required Attributes\n", 0, TK_ERR_FORMAT, "e3.scf:1");
    expect_error("e4.scf", "arch_p\n", 0, TK_ERR_FORMAT, "e4.scf:1");
    expect_error("e5.ucf", "[codec]\nfull-address = yes\n", 1, TK_ERR_CONFIG,
                 "e5.ucf:2: full-address");
    expect_error("e6.ucf", "[required]\nobject-files=a\n[codec]\nresync-max=1\nresync-max=2\n", 1,
                 TK_ERR_CONFIG, "e6.ucf:5: duplicate");
    expect_error("e7.ucf", "[codec]\nfull_address = true\n", 1, TK_ERR_CONFIG, "unknown key");
    unlink("does-not-exist.scf");
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_params_read_scf(&p, "does-not-exist.scf", &d), TK_ERR_IO);
    assert_non_null(strstr(d.message, "does-not-exist.scf"));
}

static void test_validate(void **state)
{
    (void)state;
    tk_te_params p;
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params_init(&p);
    p.s.iaddress_width = 65;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_ERR_CONFIG);
    tk_te_params_init(&p);
    p.s.iaddress_lsb = 40;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_ERR_CONFIG);
    tk_te_params_init(&p);
    p.o.branch_prediction = p.o.jump_target_cache = true;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_ERR_CONFIG);
    p.s.f0s_width = 1;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK);
    tk_te_params_init(&p);
    p.s.return_stack_size = 31;
    p.s.call_counter_size = 31;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK); /* 63 bits */
    p.s.context_width = 65;
    assert_int_equal(tk_te_params_validate(&p, &d), TK_ERR_CONFIG);
    p.s.nocontext = 1; /* context absent: width irrelevant */
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK);
}

static void test_ioptions(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    assert_int_equal(tk_te_params_ioptions(&p), 0);
    p.o.full_address = true; /* the itype*_debug vectors' support packets carry 0x4 */
    assert_int_equal(tk_te_params_ioptions(&p), 0x4);
    p.o.implicit_return = true;
    p.o.branch_prediction = true;
    p.o.sijump = true;
    assert_int_equal(tk_te_params_ioptions(&p), 0x15); /* no sijump bit with 5-bit ioptions */
    p.ioptions_width = 6;
    assert_int_equal(tk_te_params_ioptions(&p), 0x35);
    for (uint32_t v = 0; v < 64; v++) {
        tk_te_params q;
        tk_te_params_init(&q);
        q.ioptions_width = 6;
        tk_te_params_apply_ioptions(&q, v);
        assert_int_equal(tk_te_params_ioptions(&q), v);
    }
    tk_te_spec sp;
    assert_int_equal(tk_te_spec_parse("0.029", &sp), TK_OK);
    assert_int_equal(sp, TK_TE_SPEC_0_29);
    assert_string_equal(tk_te_spec_name(sp), "0.29");
    assert_int_equal(tk_te_spec_parse("3.0", &sp), TK_ERR_CONFIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_reference_files),
        cmocka_unit_test(test_write_read_roundtrip),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_ioptions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
