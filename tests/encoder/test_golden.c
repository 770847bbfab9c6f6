/* SPDX-License-Identifier: BSD-2-Clause */
/* Golden vectors of the reference flow (testdata/etrace-ref): for every program and setting,
 * - encoding <p>.encoder_input.gz gives <p>.te_inst_raw byte for byte;
 * - converting <p>.spike_pc_trace.gz (reference mode) gives the rows of <p>.encoder_input.gz,
 *   and encoding those gives the same bytes;
 * - regrouping the blocks N-wide (multiple retirement, N = 2, 4, 8, two blocks per cycle)
 *   gives the same bytes.
 * The encoder's speed is measured (printed, not asserted). */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tracekit/te_encoder.h"
#include "tracekit/te_ingress.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

typedef struct bytes {
    uint8_t *d;
    size_t n, cap;
    const tk_te_params *p;
} bytes;

/* The reference raw framing: header (2 << 5) | length, then the payload. */
static tk_status frame(void *ctx, const tk_te_packet *pkt)
{
    bytes *b = ctx;
    if (b->n + 1 + TK_TE_MAX_PAYLOAD > b->cap) {
        b->cap = b->cap * 2 + 4096;
        b->d = realloc(b->d, b->cap);
        assert_non_null(b->d);
    }
    size_t len = 0;
    tk_status st = tk_te_packet_encode(b->p, pkt, b->d + b->n + 1, TK_TE_MAX_PAYLOAD, &len);
    if (st != TK_OK)
        return st;
    assert_true(len <= 30);
    b->d[b->n] = (uint8_t)((2u << 5) | len);
    b->n += len + 1;
    return TK_OK;
}

typedef struct blocks {
    tk_te_block *b;
    size_t n, cap;
} blocks;

static void add_block(blocks *v, const tk_te_block *b)
{
    if (v->n == v->cap) {
        v->cap = v->cap * 2 + 1024;
        v->b = realloc(v->b, v->cap * sizeof(*v->b));
        assert_non_null(v->b);
    }
    v->b[v->n++] = *b;
}

static void read_ingress(const char *path, blocks *v)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *r = NULL;
    assert_int_equal(tk_te_ingress_open(path, &r, &d), TK_OK);
    tk_te_block b;
    tk_status st;
    while ((st = tk_te_ingress_next(r, &b, &d)) == TK_OK)
        add_block(v, &b);
    if (st != TK_END)
        fail_msg("%s", d.message);
    tk_te_ingress_close(r);
}

static void convert_spike(const char *path, const tk_te_params *p, blocks *v)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_spike_conv_options o = {.reference_quirks = true, .rv32 = p->o.use_rv32_isa};
    tk_spike_conv *c = NULL;
    assert_int_equal(tk_spike_conv_new(p, &o, &c), TK_OK);
    tk_spike_reader *r = NULL;
    assert_int_equal(tk_spike_open(path, &r, &d), TK_OK);
    tk_spike_row row;
    tk_te_block b;
    bool ready;
    tk_status st;
    while ((st = tk_spike_next(r, &row, &d)) == TK_OK) {
        if (tk_spike_conv_push(c, &row, &b, &ready, &d) != TK_OK)
            fail_msg("%s:%llu: %s", path, (unsigned long long)tk_spike_line(r), d.message);
        if (ready)
            add_block(v, &b);
    }
    assert_int_equal(st, TK_END);
    assert_int_equal(tk_spike_conv_finish(c, &b, &ready, &d), TK_OK);
    if (ready)
        add_block(v, &b);
    tk_spike_close(r);
    tk_spike_conv_free(c);
}

/* Through tk_te_encoder_push_run in runs of varying length (1, 2, 3, ... 64, 1, ...), so
 * that run boundaries fall everywhere. */
static void push_runs(tk_te_encoder *e, const tk_te_block *b, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i += len, len = len % 64 + 1) {
        if (len > n - i)
            len = n - i;
        assert_int_equal(tk_te_encoder_push_run(e, b + i, len), TK_OK);
    }
}

/* Encode, N-wide if width > 1 (two blocks per cycle, one push per cycle; with run, the
 * cycles' blocks one after the other through tk_te_encoder_push_run, as tracekit sim does:
 * cycle boundaries must not change the packets); returns the number of cycles made. */
static size_t encode(const tk_te_params *p, const blocks *v, unsigned width, bool run, bytes *out)
{
    tk_te_encoder *e = NULL;
    out->n = 0;
    out->p = p;
    assert_int_equal(tk_te_encoder_new(p, frame, out, &e), TK_OK);
    size_t pushes = 0;
    if (width <= 1 && run) {
        push_runs(e, v->b, v->n);
        pushes = v->n;
    } else if (width <= 1) {
        for (size_t i = 0; i < v->n; i++)
            assert_int_equal(tk_te_encoder_push(e, &v->b[i], 1), TK_OK);
        pushes = v->n;
    } else {
        tk_te_grouper *g = NULL;
        tk_te_block cycle[2];
        const unsigned per_cycle = 2;
        blocks grouped = {0};
        size_t n;
        assert_int_equal(tk_te_grouper_new(width, per_cycle, &g), TK_OK);
        for (size_t i = 0; i <= v->n; i++) {
            if (i < v->n)
                assert_int_equal(tk_te_grouper_push(g, &v->b[i], cycle, &n), TK_OK);
            else
                assert_int_equal(tk_te_grouper_finish(g, cycle, &n), TK_OK);
            if (n && run) {
                for (size_t k = 0; k < n; k++)
                    add_block(&grouped, &cycle[k]);
                pushes++;
            } else if (n) {
                assert_int_equal(tk_te_encoder_push(e, cycle, n), TK_OK);
                pushes++;
            }
        }
        if (run)
            push_runs(e, grouped.b, grouped.n);
        free(grouped.b);
        tk_te_grouper_free(g);
    }
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    tk_te_encoder_free(e);
    return pushes;
}

static void expect_bytes(const bytes *got, const uint8_t *want, size_t want_n, const char *what,
                         const char *dir)
{
    size_t i = 0;
    while (i < got->n && i < want_n && got->d[i] == want[i])
        i++;
    if (i != got->n || i != want_n)
        fail_msg("%s: %s: output differs at byte %zu (got %zu bytes, want %zu)", dir, what, i,
                 got->n, want_n);
}

static char *join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    assert_non_null(s);
    snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

typedef struct totals {
    uint64_t vectors, insns;
    double seconds;
} totals;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: the machine may be shared */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void check_setting(const char *root, const char *prog, const char *setting, totals *t)
{
    char *dir = join(root, "/", prog);
    char *sdir = join(dir, "/", setting);
    char *base = join(sdir, "/", prog);
    char *scf = join(base, ".scf", ""), *ucf = join(base, ".encoder.ucf", "");
    char *input = join(base, ".encoder_input.gz", ""), *raw = join(base, ".te_inst_raw", "");
    char *spike_base = join(dir, "/", prog);
    char *spike = join(spike_base, ".spike_pc_trace.gz", "");
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params p;
    tk_te_params_init(&p);
    if (tk_te_params_read_scf(&p, scf, &d) != TK_OK || tk_te_params_read_ucf(&p, ucf, NULL, &d))
        fail_msg("%s", d.message);
    size_t want_n = 0;
    uint8_t *want = tk_test_read_file(raw, &want_n);
    assert_non_null(want);

    blocks ref = {0}, conv = {0};
    bytes got = {0};
    read_ingress(input, &ref);
    double t0 = now();
    encode(&p, &ref, 1, false, &got);
    t->seconds += now() - t0;
    t->insns += ref.n;
    t->vectors++;
    expect_bytes(&got, want, want_n, "encoder_input", sdir);
    encode(&p, &ref, 1, true, &got);
    expect_bytes(&got, want, want_n, "encoder_input in runs", sdir);

    convert_spike(spike, &p, &conv);
    assert_int_equal(conv.n, ref.n);
    for (size_t i = 0; i < ref.n; i++)
        if (memcmp(&conv.b[i], &ref.b[i], sizeof(ref.b[i])))
            fail_msg("%s: converted row %zu (line %zu) differs: itype %u/%u iaddr %llx/%llx", sdir,
                     i, i + 2, conv.b[i].itype, ref.b[i].itype, (unsigned long long)conv.b[i].iaddr,
                     (unsigned long long)ref.b[i].iaddr);
    encode(&p, &conv, 1, false, &got);
    expect_bytes(&got, want, want_n, "converted spike trace", sdir);

    static const unsigned widths[] = {2, 4, 8};
    for (size_t w = 0; w < 3; w++) {
        for (int run = 0; run < 2; run++) {
            size_t cycles = encode(&p, &ref, widths[w], run, &got);
            assert_true(cycles < ref.n); /* the grouping really merged instructions */
            char what[64];
            snprintf(what, sizeof(what), "%u-wide multiple retirement%s", widths[w],
                     run ? " in runs" : "");
            expect_bytes(&got, want, want_n, what, sdir);
        }
    }
    free(ref.b);
    free(conv.b);
    free(got.d);
    free(want);
    free(dir), free(sdir), free(base), free(scf), free(ucf), free(input), free(raw);
    free(spike_base), free(spike);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_golden_vectors(void **state)
{
    (void)state;
    char *root = tk_test_data_path("etrace-ref");
    DIR *top = opendir(root);
    assert_non_null(top);
    totals t = {0};
    struct dirent *pe;
    while ((pe = readdir(top))) {
        if (pe->d_name[0] == '.')
            continue;
        char *dir = join(root, "/", pe->d_name);
        if (is_dir(dir)) {
            DIR *sub = opendir(dir);
            struct dirent *se;
            while (sub && (se = readdir(sub))) {
                char *sdir = join(dir, "/", se->d_name);
                if (se->d_name[0] != '.' && is_dir(sdir))
                    check_setting(root, pe->d_name, se->d_name, &t);
                free(sdir);
            }
            if (sub)
                closedir(sub);
        }
        free(dir);
    }
    closedir(top);
    free(root);
    assert_true(t.vectors >= 20);
    printf("golden: %llu vectors identical; encoder speed %.1f M instructions/s "
           "(%llu instructions in %.3f s of CPU time, including packet encoding)\n",
           (unsigned long long)t.vectors, t.seconds > 0 ? (double)t.insns / t.seconds / 1e6 : 0.0,
           (unsigned long long)t.insns, t.seconds);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
