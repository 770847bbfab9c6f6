/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference .te_inst CSV: lossless write/read of every 2.0 packet kind, the reference
 * conventions (transmitted flag bits, '_', hex/decimal, CRLF) and clear errors. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_gen.h"
#include "tracekit/te_packet.h"

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    uint64_t seed = 99;
    for (int ps = 0; ps < 200; ps++) {
        tk_te_params p;
        gen_params(&seed, &p, TK_TE_SPEC_2_0);
        tk_te_packet pk[50];
        FILE *f = fopen("rt.te_inst", "w");
        assert_non_null(f);
        assert_int_equal(tk_te_csv_write_header(f), TK_OK);
        for (int i = 0; i < 50; i++) {
            gen_packet_20(&seed, &p, &pk[i]);
            assert_int_equal(tk_te_csv_write(f, &p, &pk[i]), TK_OK);
        }
        fclose(f);
        tk_te_csv_reader *r;
        tk_diag d;
        tk_diag_clear(&d);
        assert_int_equal(tk_te_csv_open("rt.te_inst", &r, &d), TK_OK);
        for (int i = 0; i < 50; i++) {
            tk_te_packet got;
            if (tk_te_csv_next(r, &p, &got, &d) != TK_OK)
                fail_msg("set %d row %d: %s", ps, i, d.message);
            assert_int_equal(d.line, (uint64_t)i + 2);
            if (memcmp(&got, &pk[i], sizeof(got))) {
                char a[512], b[512];
                tk_te_packet_format(&p, &pk[i], a, sizeof(a));
                tk_te_packet_format(&p, &got, b, sizeof(b));
                fail_msg("set %d row %d:\n  wrote %s\n  read  %s", ps, i, a, b);
            }
        }
        tk_te_packet extra;
        assert_int_equal(tk_te_csv_next(r, &p, &extra, &d), TK_END);
        tk_te_csv_close(r);
    }
}

static void test_conventions(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 1;
    tk_te_packet k;
    memset(&k, 0, sizeof(k));
    /* Row 7 of the reference test_discon_branch_exception vector: F2 with a -4 delta and no
     * flags; every flag bit equals the address MSB on the wire. */
    k.format = 2;
    k.has_address = true;
    k.address = 0x7ffffffffffffffeull;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(tk_te_csv_write(m, &p, &k), TK_OK);
    /* F1 with 31 branches and no address is written with branches 0 */
    memset(&k, 0, sizeof(k));
    k.format = 1;
    k.branches = 31;
    k.branch_map = 3;
    assert_int_equal(tk_te_csv_write(m, &p, &k), TK_OK);
    fclose(m);
    assert_string_equal(text,
                        "2,_,7ffffffffffffffe,_,_,_,_,_,_,_,_,_,_,1,_,1,_,_,_,_,_,_,1,_,_,_\r\n"
                        "1,_,_,_,0,3,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_\r\n");
    free(text);
}

static void expect_error(const char *body, tk_status want, const char *needle)
{
    write_text("bad.te_inst", body);
    tk_te_params p;
    tk_te_params_init(&p);
    tk_te_csv_reader *r = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st = tk_te_csv_open("bad.te_inst", &r, &d);
    if (st == TK_OK) {
        tk_te_packet k;
        st = tk_te_csv_next(r, &p, &k, &d);
        tk_te_csv_close(r);
    } else {
        assert_null(r);
    }
    assert_int_equal(st, want);
    if (!strstr(d.message, needle))
        fail_msg("message '%s' lacks '%s'", d.message, needle);
}

#define HDR                                                                                        \
    "format,subformat,address,branch,branches,branch_map,branch_count,branch_fmt,context,ecause,"  \
    "ienable,encoder_mode,interrupt,irreport,irdepth,notify,ioptions,privilege,qual_status,time,"  \
    "thaddr,tval,updiscon,denable,dloss,doptions\n"

static void test_errors(void **state)
{
    (void)state;
    expect_error("", TK_ERR_FORMAT, "empty");
    expect_error("format,subformat\n", TK_ERR_FORMAT, "bad.te_inst:1");
    expect_error("format,bogus\n", TK_ERR_FORMAT, "unexpected column 'bogus'");
    expect_error(HDR "2,_,10\n", TK_ERR_FORMAT, "bad.te_inst:2: 3 columns");
    expect_error(HDR "2,_,_,_,_,_,_,_,_,_,_,_,_,0,_,0,_,_,_,_,_,_,0,_,_,_\n", TK_ERR_FORMAT,
                 "bad.te_inst:2: address is required");
    expect_error(HDR "2,_,xyz,_,_,_,_,_,_,_,_,_,_,0,_,0,_,_,_,_,_,_,0,_,_,_\n", TK_ERR_FORMAT,
                 "address: bad hex number 'xyz'");
    expect_error(HDR "7,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_,_\n", TK_ERR_FORMAT,
                 "format 7");
    expect_error(HDR, TK_END, "");
    tk_te_csv_reader *r = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_csv_open("no-such-file.te_inst", &r, &d), TK_ERR_IO);
    assert_non_null(strstr(d.message, "no-such-file.te_inst"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_conventions),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
