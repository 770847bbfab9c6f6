/* SPDX-License-Identifier: BSD-2-Clause */
/* PC-list and listing sinks: ranges over compressed and full-size instructions, addresses
 * of every width, and the bracketed events of the listing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/sink.h"

/* c.li a0,1 (2) ; addi a0,a0,1 (4) ; c.nop (2) ; c.jr ra (2) */
static const uint8_t mixed[] = {0x05, 0x45, 0x13, 0x05, 0x15, 0x00, 0x01, 0x00, 0x82, 0x80};

static tk_image *image_at(uint64_t base)
{
    tk_image *img;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, base, mixed, sizeof(mixed)), TK_OK);
    return img;
}

static char *pcs_for(uint64_t base, uint64_t first, uint64_t ninsn)
{
    tk_image *img = image_at(base);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    tk_pc_list *s;
    assert_int_equal(tk_pc_list_new(img, out, &s), TK_OK);
    tk_event ev = {.kind = TK_EV_RANGE, .first = first, .ninsn = ninsn};
    assert_int_equal(tk_pc_list_event(s, &ev), TK_OK);
    tk_event other = {.kind = TK_EV_TRAP, .first = 1, .next = 2};
    assert_int_equal(tk_pc_list_event(s, &other), TK_OK); /* ignored */
    assert_int_equal(tk_pc_list_flush(s), TK_OK);
    assert_int_equal(tk_pc_list_count(s), ninsn);
    tk_pc_list_free(s);
    fclose(out);
    tk_image_free(img);
    return text;
}

static void test_pc_list_lengths(void **state)
{
    (void)state;
    char *t = pcs_for(0x80000000, 0x80000000, 4);
    assert_string_equal(t, "80000000\n80000002\n80000006\n80000008\n");
    free(t);
    t = pcs_for(0x80000000, 0x80000002, 2);
    assert_string_equal(t, "80000002\n80000006\n");
    free(t);
}

/* Every digit count, from 1 (address 0x0) to 16, with the same check as printf. */
static void test_pc_list_widths(void **state)
{
    (void)state;
    const uint64_t bases[] = {0x0,
                              0x10,
                              0x1000,
                              0xabcde0,
                              0x12345670,
                              0xfedcba980,
                              0x100000000000,
                              0x7fffffffffff0,
                              0xffffffffffffff00ull,
                              0x8000000000000000ull};
    for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
        char *t = pcs_for(bases[i], bases[i], 4);
        char want[128];
        snprintf(want, sizeof(want), "%llx\n%llx\n%llx\n%llx\n", (unsigned long long)bases[i],
                 (unsigned long long)bases[i] + 2, (unsigned long long)bases[i] + 6,
                 (unsigned long long)bases[i] + 8);
        assert_string_equal(t, want);
        free(t);
    }
}

/* Many ranges: output crosses the internal buffer several times. */
static void test_pc_list_buffering(void **state)
{
    (void)state;
    tk_image *img = image_at(0x80000000);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tk_pc_list *s;
    assert_int_equal(tk_pc_list_new(img, out, &s), TK_OK);
    const unsigned n = 20000;
    for (unsigned i = 0; i < n; i++) {
        tk_event ev = {.kind = TK_EV_RANGE, .first = 0x80000000, .ninsn = 4};
        assert_int_equal(tk_pc_list_event(s, &ev), TK_OK);
    }
    assert_int_equal(tk_pc_list_flush(s), TK_OK);
    fclose(out);
    assert_int_equal(len, (size_t)n * 4 * 9);
    for (unsigned i = 0; i < n; i++)
        assert_memory_equal(text + i * 36, "80000000\n80000002\n80000006\n80000008\n", 36);
    free(text);
    tk_pc_list_free(s);
    tk_image_free(img);
}

static void test_pc_list_no_code(void **state)
{
    (void)state;
    tk_image *img = image_at(0x80000000);
    FILE *out = fopen("/dev/null", "w");
    tk_pc_list *s;
    assert_int_equal(tk_pc_list_new(img, out, &s), TK_OK);
    /* runs off the end of the code */
    tk_event ev = {.kind = TK_EV_RANGE, .first = 0x80000008, .ninsn = 3};
    assert_int_equal(tk_pc_list_event(s, &ev), TK_ERR_NO_CODE);
    tk_pc_list_free(s);
    fclose(out);
    tk_image_free(img);
}

static void test_listing(void **state)
{
    (void)state;
    tk_image *img = image_at(0x80000000);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    tk_listing *s;
    assert_int_equal(tk_listing_new(img, out, TK_LISTING_NO_SYMBOLS, &s), TK_OK);
    tk_event on = {.kind = TK_EV_TRACE_ON, .first = 0x80000000};
    tk_event rg = {.kind = TK_EV_RANGE, .first = 0x80000000, .last = 0x80000008, .ninsn = 4};
    tk_event tr = {.kind = TK_EV_TRAP, .cause = 2, .first = 0x80000006, .next = 0x80000100};
    tk_event er = {.kind = TK_EV_ERROR,
                   .byte_offset = 12,
                   .packet_index = 3,
                   .first = 0x80000008,
                   .message = "no code"};
    assert_int_equal(tk_listing_event(s, &on), TK_OK);
    assert_int_equal(tk_listing_event(s, &rg), TK_OK);
    assert_int_equal(tk_listing_event(s, &tr), TK_OK);
    assert_int_equal(tk_listing_event(s, &er), TK_OK);
    assert_int_equal(tk_listing_flush(s), TK_OK);
    fclose(out);
    /* one line per instruction with its address, events in brackets in order */
    const char *lines[] = {"[enabled at 0x80000000]",
                           "0000000080000000  ",
                           "0000000080000002  ",
                           "0000000080000006  ",
                           "0000000080000008  ",
                           "[exception 2, epc 0x80000006, handler 0x80000100]",
                           "[offset 12, packet 3, 0x80000008: no code]"};
    char *p = text;
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        assert_non_null(p);
        assert_memory_equal(p, lines[i], strlen(lines[i]));
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    assert_non_null(strstr(text, "addi"));
    assert_non_null(strstr(text, "jr")); /* c.jr ra, as objdump spells it */
    free(text);
    tk_listing_free(s);
    tk_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pc_list_lengths),   cmocka_unit_test(test_pc_list_widths),
        cmocka_unit_test(test_pc_list_buffering), cmocka_unit_test(test_pc_list_no_code),
        cmocka_unit_test(test_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
