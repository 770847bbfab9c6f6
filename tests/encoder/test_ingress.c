/* SPDX-License-Identifier: BSD-2-Clause */
/* Ingress readers and writers: the reference .encoder_input CSV (C.5), the spike CSV (C.4),
 * their error reports (file and line), and the multiple-retirement grouper. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "etrace/ingress_lines.h"
#include "util/hex.h"
#include "tracekit/te_ingress.h"

/* Write text to a fresh temporary file (gzip-compressed if gz); returns its malloc'd path. */
static char *temp_file(const char *text, int gz)
{
    char *path = strdup("/tmp/tk_ingress_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    if (gz) {
        close(fd);
        gzFile g = gzopen(path, "wb");
        assert_non_null(g);
        assert_int_equal(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
        gzclose(g);
    } else {
        FILE *f = fdopen(fd, "w");
        fputs(text, f);
        fclose(f);
    }
    return path;
}

static void drop(char *path)
{
    unlink(path);
    free(path);
}

static const char *good_input =
    "itype_0,cause,tval,priv,iaddr_0,context,ctype,iretire_0,ilastsize_0\r\n"
    "0,0,0,3,80000000,0,0,1,0\r\n"
    "1,2,0x3f,3,8000005c,7,0,0,1\r\n"
    "5,0,0,1,FFFFFFFFFFFFFFFE,0,2,1,1\r\n";

static void check_good(const char *path)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    assert_int_equal(tk_te_ingress_open(path, &r, &d), TK_OK);
    tk_te_block b;
    assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_OK);
    assert_int_equal(b.itype, 0);
    assert_int_equal(b.iaddr, 0x80000000u);
    assert_int_equal(b.priv, 3);
    assert_int_equal(b.iretire, 1); /* one 16-bit instruction = 1 half-word */
    assert_int_equal(b.ilastsize, 0);
    assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_OK);
    assert_int_equal(b.itype, TK_ITYPE_EXCEPTION);
    assert_int_equal(b.cause, 2);
    assert_int_equal(b.tval, 0x3f);
    assert_int_equal(b.context, 7);
    assert_int_equal(b.iretire, 0); /* exception only */
    assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_OK);
    assert_int_equal(b.itype, TK_ITYPE_TAKEN);
    assert_int_equal(b.iaddr, 0xfffffffffffffffeull);
    assert_int_equal(b.ctype, 2);
    assert_int_equal(b.iretire, 2); /* one 32-bit instruction = 2 half-words */
    assert_int_equal(tk_te_ingress_line(r), 4);
    assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_END);
    tk_te_ingress_close(r);
}

static void test_encoder_input_plain_and_gz(void **state)
{
    (void)state;
    char *p = temp_file(good_input, 0);
    check_good(p);
    drop(p);
    p = temp_file(good_input, 1);
    check_good(p);
    drop(p);
}

/* Columns are found by name, in any order, optional ones may be absent. */
static void test_encoder_input_column_order(void **state)
{
    (void)state;
    char *p = temp_file("ilastsize_0,iretire_0,iaddr_0,priv,tval,cause,itype_0,time,sijump_0\n"
                        "1,1,1000,3,0,0,8,12345,1\n",
                        0);
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    assert_int_equal(tk_te_ingress_open(p, &r, &d), TK_OK);
    tk_te_block b;
    assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_OK);
    assert_int_equal(b.itype, 8);
    assert_int_equal(b.iaddr, 0x1000);
    assert_int_equal(b.time, 12345);
    assert_int_equal(b.sijump, 1);
    assert_int_equal(b.iretire, 2);
    tk_te_ingress_close(r);
    drop(p);
}

/* A bad row is an error naming the file and the line. */
static void expect_row_error(const char *text, uint64_t line, const char *needle)
{
    char *p = temp_file(text, 0);
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    tk_status st = tk_te_ingress_open(p, &r, &d);
    tk_te_block b;
    while (st == TK_OK)
        st = tk_te_ingress_next(r, &b, &d);
    assert_int_equal(st, TK_ERR_FORMAT);
    assert_int_equal(d.line, line);
    char where[64];
    snprintf(where, sizeof(where), ":%llu:", (unsigned long long)line);
    assert_non_null(strstr(d.message, where));
    assert_non_null(strstr(d.message, p));
    assert_non_null(strstr(d.message, needle));
    tk_te_ingress_close(r);
    drop(p);
}

static void test_encoder_input_errors(void **state)
{
    (void)state;
    const char *hdr = "itype_0,cause,tval,priv,iaddr_0,iretire_0,ilastsize_0\n";
    char buf[512];
    snprintf(buf, sizeof(buf), "%s0,0,0,3,100,1,1\n0,0,0,3,1x4,1,1\n", hdr);
    expect_row_error(buf, 3, "iaddr_0");
    snprintf(buf, sizeof(buf), "%s0,0,0,3,100,1\n", hdr);
    expect_row_error(buf, 2, "fields");
    snprintf(buf, sizeof(buf), "%s16,0,0,3,100,1,1\n", hdr);
    expect_row_error(buf, 2, "itype_0");
    snprintf(buf, sizeof(buf), "%s0,-1,0,3,100,1,1\n", hdr);
    expect_row_error(buf, 2, "cause");
    snprintf(buf, sizeof(buf), "%s0,0,0,3,10000000000000000,1,1\n", hdr);
    expect_row_error(buf, 2, "too large");
    expect_row_error("itype_0,cause,tval,priv,iretire_0,ilastsize_0\n", 1, "iaddr_0");
    expect_row_error("itype_0,cause,tval,priv,iaddr_0,iretire_0,ilastsize_0,bogus\n", 1, "bogus");
}

static void test_encoder_input_missing_file(void **state)
{
    (void)state;
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    assert_int_equal(tk_te_ingress_open("/nonexistent/x.encoder_input", &r, &d), TK_ERR_IO);
    assert_null(r);
    assert_non_null(strstr(d.message, "/nonexistent/x.encoder_input"));
}

/* The writer produces post-iss's columns and the reader gets the same blocks back. */
static void test_encoder_input_round_trip(void **state)
{
    (void)state;
    tk_te_params p;
    memset(&p, 0, sizeof(p));
    p.s.nocontext = 0;
    p.s.notime = 0;
    p.s.sijump = 1;
    char *path = temp_file("", 0);
    FILE *f = fopen(path, "w");
    assert_int_equal(tk_te_ingress_write_header(f, &p), TK_OK);
    tk_te_block in[3];
    memset(in, 0, sizeof(in));
    for (int i = 0; i < 3; i++) {
        in[i].iaddr = 0x80000000u + 4u * (unsigned)i;
        in[i].itype = (uint8_t)(i * 5);
        in[i].priv = 3;
        in[i].ilastsize = 1;
        in[i].iretire = 2;
        in[i].time = 1000u + (unsigned)i;
        in[i].context = (unsigned)i;
        in[i].sijump = i == 2;
    }
    in[1].cause = 13;
    in[1].tval = 0xabc;
    in[1].itype = TK_ITYPE_EXCEPTION;
    in[1].iretire = 0;
    for (int i = 0; i < 3; i++)
        assert_int_equal(tk_te_ingress_write_block(f, &p, &in[i]), TK_OK);
    fclose(f);
    size_t len;
    char *text = (char *)tk_test_read_file(path, &len);
    assert_non_null(text);
    const char *expect = "itype_0,cause,tval,priv,iaddr_0,context,time,ctype,sijump_0,iretire_0,"
                         "ilastsize_0\n"
                         "0,0,0,3,80000000,0,1000,0,0,1,1\n"
                         "1,13,abc,3,80000004,1,1001,0,0,0,1\n"
                         "10,0,0,3,80000008,2,1002,0,1,1,1\n";
    assert_int_equal(len, strlen(expect));
    assert_memory_equal(text, expect, len);
    free(text);
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    assert_int_equal(tk_te_ingress_open(path, &r, &d), TK_OK);
    for (int i = 0; i < 3; i++) {
        tk_te_block b;
        assert_int_equal(tk_te_ingress_next(r, &b, &d), TK_OK);
        assert_memory_equal(&b, &in[i], sizeof(b));
    }
    tk_te_ingress_close(r);
    drop(path);
}

static void test_spike_reader(void **state)
{
    (void)state;
    char *p = temp_file("VALID,ADDRESS,INSN,PRIVILEGE,EXCEPTION,ECAUSE,TVAL,INTERRUPT\n"
                        "1,8000005c,3a079073,3,1,2,0,0\n"
                        "1,1000,297,3,0,0,0,0\n"
                        "1,80000004,4101,3,0,1234,ffffffffff,1\n",
                        1);
    tk_diag d;
    tk_diag_clear(&d);
    tk_spike_reader *r = NULL;
    assert_int_equal(tk_spike_open(p, &r, &d), TK_OK);
    tk_spike_row row;
    assert_int_equal(tk_spike_next(r, &row, &d), TK_OK);
    assert_int_equal(row.address, 0x8000005c);
    assert_int_equal(row.insn, 0x3a079073);
    assert_int_equal(row.privilege, 3);
    assert_int_equal(row.exception, 1);
    assert_int_equal(row.ecause, 2);
    assert_int_equal(tk_spike_next(r, &row, &d), TK_OK);
    assert_int_equal(row.address, 0x1000);
    assert_int_equal(tk_spike_next(r, &row, &d), TK_OK);
    assert_int_equal(row.ecause, 0x1234); /* full width: the converter truncates */
    assert_int_equal(row.tval, 0xffffffffffull);
    assert_int_equal(row.interrupt, 1);
    assert_int_equal(tk_spike_next(r, &row, &d), TK_END);
    tk_spike_close(r);
    drop(p);
}

static void expect_spike_error(const char *text, uint64_t line, const char *needle)
{
    char *p = temp_file(text, 0);
    tk_diag d;
    tk_diag_clear(&d);
    tk_spike_reader *r = NULL;
    assert_int_equal(tk_spike_open(p, &r, &d), TK_OK);
    tk_spike_row row;
    tk_status st;
    while ((st = tk_spike_next(r, &row, &d)) == TK_OK)
        ;
    assert_int_equal(st, TK_ERR_FORMAT);
    assert_int_equal(d.line, line);
    assert_non_null(strstr(d.message, needle));
    tk_spike_close(r);
    drop(p);
}

static void test_spike_errors(void **state)
{
    (void)state;
    expect_spike_error("1,1000,297,3,0,0,0,0\n0,1004,297,3,0,0,0,0\n", 2, "VALID");
    expect_spike_error("1,1000,297,3,0,0,0\n", 1, "8");
    expect_spike_error("VALID,ADDRESS,INSN,PRIVILEGE,EXCEPTION,ECAUSE,TVAL,INTERRUPT\n"
                       "1,1000,29g,3,0,0,0,0\n",
                       2, "INSN");
    expect_spike_error("1,1000,297,103,0,0,0,0\n", 1, "PRIVILEGE");
    expect_spike_error("1,1000,297,3,-1,0,0,0\n", 1, "EXCEPTION");
}

static void test_spike_round_trip(void **state)
{
    (void)state;
    char *path = temp_file("", 0);
    FILE *f = fopen(path, "w");
    tk_spike_row in, out;
    memset(&in, 0, sizeof(in));
    memset(&out, 0xa5, sizeof(out));
    in.address = 0x80000abc;
    in.insn = 0x30200073;
    in.ecause = 0x8000000000000007ull;
    in.tval = 0x1234;
    in.privilege = 3;
    in.interrupt = 1;
    assert_int_equal(tk_spike_write_header(f), TK_OK);
    assert_int_equal(tk_spike_write_row(f, &in), TK_OK);
    fclose(f);
    tk_diag d;
    tk_diag_clear(&d);
    tk_spike_reader *r = NULL;
    assert_int_equal(tk_spike_open(path, &r, &d), TK_OK);
    assert_int_equal(tk_spike_next(r, &out, &d), TK_OK);
    /* Field by field: the reader may assign a whole struct, whose padding is unspecified. */
    assert_int_equal(out.address, in.address);
    assert_int_equal(out.insn, in.insn);
    assert_int_equal(out.ecause, in.ecause);
    assert_int_equal(out.tval, in.tval);
    assert_int_equal(out.privilege, in.privilege);
    assert_int_equal(out.exception, in.exception);
    assert_int_equal(out.interrupt, in.interrupt);
    tk_spike_close(r);
    drop(path);
}

static tk_te_block one(uint64_t addr, uint8_t itype, unsigned size)
{
    tk_te_block b;
    memset(&b, 0, sizeof(b));
    b.iaddr = addr;
    b.itype = itype;
    b.ilastsize = size == 2 ? 0 : 1;
    b.iretire = size / 2;
    b.priv = 3;
    return b;
}

/* Blocks end at special instructions and at the width; the block after an uninferable jump
 * holds two instructions at most; cycles hold up to max_blocks blocks. */
static void test_grouper(void **state)
{
    (void)state;
    tk_te_block in[] = {
        one(0x100, 0, 4),
        one(0x104, 0, 2),
        one(0x106, 0, 4),
        one(0x10a, 0, 4),
        one(0x10e, TK_ITYPE_TAKEN, 4),
        one(0x200, 0, 4),
        one(0x204, TK_ITYPE_UNINF_JUMP, 4),
        one(0x300, 0, 4),
        one(0x304, 0, 4),
        one(0x308, 0, 4),
        one(0x30c, 0, 4),
    };
    tk_te_grouper *g = NULL;
    assert_int_equal(tk_te_grouper_new(4, 2, &g), TK_OK);
    tk_te_block out[2], all[16];
    size_t n, total = 0;
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        assert_int_equal(tk_te_grouper_push(g, &in[i], out, &n), TK_OK);
        assert_true(n == 0 || n == 2);
        memcpy(all + total, out, n * sizeof(out[0]));
        total += n;
    }
    assert_int_equal(tk_te_grouper_finish(g, out, &n), TK_OK);
    memcpy(all + total, out, n * sizeof(out[0]));
    total += n;
    tk_te_grouper_free(g);
    assert_int_equal(total, 5);
    /* 0x100..0x10a: 4 instructions (2+1+2+2 half-words), last 4 bytes */
    assert_int_equal(all[0].iaddr, 0x100);
    assert_int_equal(all[0].iretire, 7);
    assert_int_equal(all[0].itype, 0);
    assert_int_equal(tk_te_block_last_addr(&all[0]), 0x10a);
    /* the branch alone (the block was full), then 0x200 with the jump */
    assert_int_equal(all[1].iaddr, 0x10e);
    assert_int_equal(all[1].itype, TK_ITYPE_TAKEN);
    assert_int_equal(all[2].iaddr, 0x200);
    assert_int_equal(all[2].iretire, 4);
    assert_int_equal(all[2].itype, TK_ITYPE_UNINF_JUMP);
    /* after the updiscon: two, then the rest */
    assert_int_equal(all[3].iaddr, 0x300);
    assert_int_equal(all[3].iretire, 4);
    assert_int_equal(all[4].iaddr, 0x308);
    assert_int_equal(all[4].iretire, 4);
    assert_int_equal(tk_te_block_last_addr(&all[4]), 0x30c);
}

/* The one-pass row parser accepts only what tk_csv_split with tk_parse_dec/hex accept, with
 * the same values, and all of it but very long numbers: lines of two fields (decimal, hex)
 * around every edge. */
static void test_one_pass_parser(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "0,0",
        "7,ff",
        " 12 ,\t0xAbC ",
        "18446744073709551615,ffffffffffffffff",
        "18446744073709551616,1",
        "1,10000000000000000",
        "0000000000000000000001,0000000000000000000001",
        "1844674407370955161,1",
        "1,0x",
        ",1",
        "1,",
        "1",
        "1,2,3",
        "1a,2",
        "1,g",
        "",
        "-1,2",
        "1 2,3",
        "3,3 ",
        "9,0X12",
    };
    const uint8_t slot[2] = {1, 0}; /* field 0 to out[1], field 1 to out[0] */
    for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
        char copy[64], *f[4];
        strcpy(copy, lines[k]);
        uint64_t ref[2] = {0}, got[2] = {0};
        size_t n = tk_csv_split(copy, f, 4);
        const bool ok =
            n == 2 && tk_parse_dec(f[0], &ref[1]) == 0 && tk_parse_hex(f[1], &ref[0]) == 0;
        const int r = tk_csv_parse_numbers(lines[k], 2, 2, slot, got);
        /* it may leave a valid line to the field-by-field path only for numbers longer
         * than any 64-bit value needs (over 19 decimal or 16 hex digits) */
        const bool long_number = strlen(lines[k]) > 19 + 1 + 1;
        if ((r == 0 && !ok) || (r != 0 && ok && !long_number))
            fail_msg("'%s': one-pass %s, field by field %s", lines[k], r ? "declines" : "accepts",
                     ok ? "accepts" : "rejects");
        if (r == 0) {
            assert_int_equal(got[0], ref[0]);
            assert_int_equal(got[1], ref[1]);
        }
    }
}

/* The writers' number formatting against printf. */
static void test_number_format(void **state)
{
    (void)state;
    static const uint64_t values[] = {0,
                                      1,
                                      9,
                                      10,
                                      15,
                                      16,
                                      99,
                                      255,
                                      256,
                                      4095,
                                      0x80000000u,
                                      123456789012345ull,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
        char want[32], got[32];
        snprintf(want, sizeof(want), "%llu", (unsigned long long)values[k]);
        *tk_put_dec(got, values[k]) = '\0';
        assert_string_equal(got, want);
        snprintf(want, sizeof(want), "%llx", (unsigned long long)values[k]);
        *tk_put_hex(got, values[k]) = '\0';
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoder_input_plain_and_gz),
        cmocka_unit_test(test_encoder_input_column_order),
        cmocka_unit_test(test_encoder_input_errors),
        cmocka_unit_test(test_encoder_input_missing_file),
        cmocka_unit_test(test_encoder_input_round_trip),
        cmocka_unit_test(test_spike_reader),
        cmocka_unit_test(test_spike_errors),
        cmocka_unit_test(test_spike_round_trip),
        cmocka_unit_test(test_grouper),
        cmocka_unit_test(test_one_pass_parser),
        cmocka_unit_test(test_number_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
