/* SPDX-License-Identifier: BSD-2-Clause */
/* The codec against the reference flow's golden vectors, independently of any encoder: for
 * every etrace-ref/<prog>/<setting>, each packet of <p>.te_inst_raw decodes to the matching
 * row of <p>.te_inst.gz, the row re-encodes to the identical payload bytes, and the CSV
 * writer reproduces the row's text. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

typedef struct totals {
    unsigned settings;
    unsigned long packets;
} totals;

static char *join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 3;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s/%s%s", a, b, c);
    return s;
}

/* Read the CSV rows' text (without header) to compare the writer's output. */
static char **read_lines(const char *path, size_t *count)
{
    gzFile f = gzopen(path, "rb");
    assert_non_null(f);
    char buf[4096];
    size_t n = 0, cap = 1024;
    char **lines = malloc(cap * sizeof(*lines));
    assert_non_null(gzgets(f, buf, sizeof(buf))); /* header */
    while (gzgets(f, buf, sizeof(buf))) {
        if (n == cap)
            lines = realloc(lines, (cap *= 2) * sizeof(*lines));
        lines[n++] = strdup(buf);
    }
    gzclose(f);
    *count = n;
    return lines;
}

static void check_setting(const char *dir, const char *prog, totals *t)
{
    char *stem = join(dir, prog, "");
    char *scf = join(dir, prog, ".scf");
    char *ucf = join(dir, prog, ".encoder.ucf");
    char *rawp = join(dir, prog, ".te_inst_raw");
    char *csvp = join(dir, prog, ".te_inst.gz");
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag d;
    tk_diag_clear(&d);
    if (tk_te_params_read_scf(&p, scf, &d) != TK_OK || tk_te_params_read_ucf(&p, ucf, NULL, &d))
        fail_msg("%s", d.message);
    assert_int_equal(tk_te_params_validate(&p, &d), TK_OK);
    size_t rawlen = 0;
    uint8_t *raw = tk_test_read_file(rawp, &rawlen);
    assert_non_null(raw);
    tk_te_csv_reader *rd = NULL;
    if (tk_te_csv_open(csvp, &rd, &d) != TK_OK)
        fail_msg("%s", d.message);
    size_t nlines = 0;
    char **lines = read_lines(csvp, &nlines);

    /* the raw-file iterator must agree with the plain split below */
    tk_te_raw *it = NULL;
    if (tk_te_raw_open(rawp, &it, &d) != TK_OK)
        fail_msg("%s", d.message);
    size_t off = 0;
    unsigned long idx = 0;
    while (off < rawlen) {
        uint8_t h = raw[off];
        size_t len = h & 0x1f;
        if ((h >> 5) != 2 || len == 0 || off + 1 + len > rawlen)
            fail_msg("%s: bad header 0x%02x at offset %zu", rawp, h, off);
        const uint8_t *payload = raw + off + 1;
        tk_te_raw_packet rp;
        if (tk_te_raw_next(it, &rp, &d) != TK_OK)
            fail_msg("%s", d.message);
        assert_int_equal(rp.offset, off);
        assert_int_equal(rp.index, idx);
        assert_int_equal(rp.msg_type, TK_ENCAP_FLOW_TE_INST);
        assert_int_equal(rp.len, len);
        assert_memory_equal(rp.payload, payload, len);
        tk_te_packet got, want;
        if (tk_te_packet_decode(&p, payload, len, &got, &d) != TK_OK)
            fail_msg("%s: packet %lu at %zu: %s", rawp, idx, off, d.message);
        tk_status st = tk_te_csv_next(rd, &p, &want, &d);
        if (st != TK_OK)
            fail_msg("%s: row for packet %lu: %s", csvp, idx, st == TK_END ? "missing" : d.message);
        if (memcmp(&got, &want, sizeof(got))) {
            char a[512], b[512];
            tk_te_packet_format(&p, &got, a, sizeof(a));
            tk_te_packet_format(&p, &want, b, sizeof(b));
            fail_msg("%s: packet %lu at %zu decodes to\n  %s\nCSV row says\n  %s", rawp, idx, off,
                     a, b);
        }
        uint8_t enc[TK_TE_MAX_PAYLOAD];
        size_t elen = 0;
        if (tk_te_packet_encode(&p, &want, enc, sizeof(enc), &elen) != TK_OK)
            fail_msg("%s: row %lu does not encode: %s", csvp, idx + 2,
                     tk_te_packet_encode_error(&p, &want));
        if (elen != len || memcmp(enc, payload, len))
            fail_msg("%s: row %lu re-encodes to %zu bytes, reference has %zu", csvp, idx + 2, elen,
                     len);
        /* The writer reproduces the reference row exactly. */
        char *text = NULL;
        size_t tlen = 0;
        FILE *m = open_memstream(&text, &tlen);
        assert_int_equal(tk_te_csv_write(m, &p, &got), TK_OK);
        fclose(m);
        assert_true(idx < nlines);
        if (strcmp(text, lines[idx]))
            fail_msg("%s: row %lu written as\n  %s reference\n  %s", csvp, idx + 2, text,
                     lines[idx]);
        free(text);
        off += 1 + len;
        idx++;
    }
    tk_te_raw_packet rp;
    assert_int_equal(tk_te_raw_next(it, &rp, &d), TK_END);
    tk_te_raw_close(it);
    tk_te_packet extra;
    assert_int_equal(tk_te_csv_next(rd, &p, &extra, &d), TK_END);
    assert_int_equal(idx, nlines);
    tk_te_csv_close(rd);
    for (size_t i = 0; i < nlines; i++)
        free(lines[i]);
    free(lines);
    t->settings++;
    t->packets += idx;
    free(raw);
    free(stem);
    free(scf);
    free(ucf);
    free(rawp);
    free(csvp);
}

static void test_golden_vectors(void **state)
{
    (void)state;
    char *root = tk_test_data_path("etrace-ref");
    DIR *progs = opendir(root);
    assert_non_null(progs);
    totals t = {0, 0};
    struct dirent *pe;
    while ((pe = readdir(progs))) {
        if (pe->d_name[0] == '.')
            continue;
        char *pdir = join(root, pe->d_name, "");
        DIR *sets = opendir(pdir);
        if (sets) {
            struct dirent *se;
            while ((se = readdir(sets))) {
                if (se->d_name[0] == '.')
                    continue;
                char *sdir = join(pdir, se->d_name, "");
                char *raw = join(sdir, pe->d_name, ".te_inst_raw");
                FILE *f = fopen(raw, "rb");
                if (f) {
                    fclose(f);
                    check_setting(sdir, pe->d_name, &t);
                }
                free(raw);
                free(sdir);
            }
            closedir(sets);
        }
        free(pdir);
    }
    closedir(progs);
    free(root);
    printf("golden: %u settings, %lu packets decoded, re-encoded and re-written identically\n",
           t.settings, t.packets);
    assert_true(t.settings >= 20);
    assert_true(t.packets > 10000);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden_vectors)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
