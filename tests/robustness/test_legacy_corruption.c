/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted legacy traces: the nibble trace (seed 001) and the Am29460 run-length trace (seed
 * 003) of real programs (etrace-ref's executed-PC traces of riscv-ref programs, through the
 * tracekit encoders), damaged in seeded ways, decoded with the program.
 *
 * Checked for every mutation, as for the E-Trace suite (test_corruption.c):
 *  - no crash or hang; every error event carries a message, a byte offset inside the trace
 *    and a packet (sequence / pair) index consistent with it;
 *  - damage in place (flipped bits, a zeroed or random stretch): once the decoder reported it
 *    and restarted, the flow from the restart to the end equals the clean decode's end. The
 *    nibble decoder restarts at a synchronisation point (every buffer_words / 8 words); the
 *    run-length decoder at the next pair, whose TRACEADDR is absolute. A reported damage
 *    followed by two sync points (nibble) or by any pair (RLE) must lead to a restart.
 *  - damage that shifts the stream (dropped or duplicated words / pairs): located errors, no
 *    crash; the nibble trace's sync points are positions in the buffer, so after a shift they
 *    no longer fall on sequence boundaries and the decoder may stay lost (counted, as the raw
 *    E-Trace framing's no-sync column);
 *  - a truncated file: the readers say so with the byte offset and pair / word count.
 * Printed: per format and kind of damage, the counts and the instructions lost. */
#include "robust_fixture.h"

#include <inttypes.h>
#include <unistd.h>

#include "tracekit/legacy.h"
#include "tracekit/te_ingress.h"

enum { K_FLIP, K_ZERO, K_RANDOM, K_DROP, K_DUP, NK };
static const char *const knames[NK] = {"flipped bits", "zero run", "random", "dropped",
                                       "duplicated"};
/* per format and program, spread over the kinds; fewer in the sanitizer build (about five
 * times slower) */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATIONS 50
#else
#define MUTATIONS 150
#endif

typedef struct program {
    const char *name;
    tk_image *img;
    tk_hart_retire *recs;
    size_t n, cap;
} program;

static bool load_program(program *g, const char *name)
{
    memset(g, 0, sizeof(*g));
    g->name = name;
    char rel[256];
    snprintf(rel, sizeof(rel), "riscv-ref/%s.riscv", name);
    char *elf = tk_test_data_path(rel);
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s.spike_pc_trace.gz", name, name);
    char *trace = tk_test_data_path(rel);
    tk_diag diag;
    tk_diag_clear(&diag);
    bool ok = elf && trace && access(elf, R_OK) == 0 && access(trace, R_OK) == 0 &&
              tk_image_open_elf(elf, &g->img, &diag) == TK_OK;
    tk_spike_reader *sr = NULL;
    if (ok) {
        assert_int_equal(tk_te_add_spike_reset_code(g->img, false), TK_OK);
        assert_int_equal(tk_spike_open(trace, &sr, &diag), TK_OK);
        tk_spike_row prev, row;
        bool have_prev = false;
        tk_status st;
        while ((st = tk_spike_next(sr, &row, &diag)) == TK_OK || st == TK_END) {
            const bool end = st == TK_END;
            if (have_prev) {
                if (g->n == g->cap) {
                    g->cap = g->cap ? 2 * g->cap : 16384;
                    g->recs = realloc(g->recs, g->cap * sizeof(*g->recs));
                    assert_non_null(g->recs);
                }
                tk_legacy_retire_from_spike(&prev, !end, end ? 0 : row.address, 64,
                                            &g->recs[g->n++]);
            }
            if (end)
                break;
            prev = row;
            have_prev = true;
        }
        assert_int_equal(st, TK_END);
        tk_spike_close(sr);
        assert_true(g->n > 1000);
    }
    free(elf);
    free(trace);
    return ok;
}

static void program_free(program *g)
{
    tk_image_free(g->img);
    free(g->recs);
}

typedef struct kstats {
    unsigned long mutations, reported, recovered, no_sync, silent, harmless;
    uint64_t lost, lost_max, clean;
} kstats;

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? tk_test_xorshift64star(s) % n : 0;
}

/* Tally one damaged decode against the clean one. in_place: the damage kept every later
 * byte where it was. must_restart: reported damage has a restart point after it. */
static void tally(kstats *k, const rb_flow *clean, const rb_flow *bad, uint64_t dstart,
                  bool in_place, bool must_restart, const char *what)
{
    const uint64_t n = clean->ninsn;
    const uint64_t pre = rb_common_prefix(clean, bad), suf = rb_common_suffix(clean, bad);
    const uint64_t lost = pre + suf >= n ? 0 : n - pre - suf;
    k->mutations++;
    k->clean += n;
    k->lost += lost;
    if (lost > k->lost_max)
        k->lost_max = lost;
    const bool reported = bad->errors || bad->lost;
    if (reported)
        k->reported++;
    const bool restarted = bad->resynced && bad->restart_off >= dstart;
    if (restarted) {
        const uint64_t tail = bad->ninsn - bad->restart_insn;
        if (in_place && suf < tail)
            fail_msg("%s: after the restart at byte %" PRIu64 ", %" PRIu64
                     " instructions decoded, only %" PRIu64 " match the clean flow's end",
                     what, bad->restart_off, tail, suf);
        if (suf >= tail)
            k->recovered++;
        else
            k->no_sync++;
        return;
    }
    if (reported) {
        if (in_place && must_restart)
            fail_msg("%s: damage reported, but the decoder did not restart after it", what);
        k->no_sync++;
    } else if (lost) {
        k->silent++;
    } else {
        k->harmless++;
    }
}

static void print_stats(const char *format, const kstats *k)
{
    for (int i = 0; i < NK; i++)
        print_message(
            "%-7s %-13s %5lu %8lu %9lu %7lu %6lu %8lu %9.2f%% %8" PRIu64 "\n", format, knames[i],
            k[i].mutations, k[i].reported, k[i].recovered, k[i].no_sync, k[i].silent, k[i].harmless,
            k[i].clean ? 100.0 * (double)k[i].lost / (double)k[i].clean : 0.0, k[i].lost_max);
}

static void flow_init(rb_flow *f, tk_image *img, size_t stream_len, unsigned index_per_byte)
{
    memset(f, 0, sizeof(*f));
    f->img = img;
    f->stream_len = stream_len;
    f->index_per_byte = index_per_byte;
}

/* ---- nibble trace ---- */

#define NIB_BUFFER_WORDS 256u /* a sync point every 32 words */

static void decode_nibble(const tk_nibble_params *p, tk_image *img, const tk_nibble_trace *t,
                          rb_flow *f)
{
    /* offsets are nibble / 2 from the start; one sequence is one nibble or more */
    flow_init(f, img, t->nwords * 4, 2);
    tk_nibble_decoder *d = NULL;
    assert_int_equal(tk_nibble_decoder_new(p, img, rb_on_event, f, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, t), TK_OK);
    tk_nibble_decoder_free(d);
}

static void nibble_program(const program *g, kstats *ks, uint64_t *rng)
{
    tk_nibble_params p;
    tk_nibble_params_init(&p);
    p.xlen = 64;
    p.buffer_words = NIB_BUFFER_WORDS;
    tk_nibble_encoder *e = NULL;
    assert_int_equal(tk_nibble_encoder_new(&p, &e), TK_OK);
    assert_int_equal(tk_nibble_encoder_push(e, g->recs, g->n, NULL, 0), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(e, false, 0), TK_OK);
    const tk_nibble_trace *t = tk_nibble_encoder_trace(e);
    assert_false(t->wrapped);
    rb_flow clean;
    decode_nibble(&p, g->img, t, &clean);
    assert_int_equal(clean.errors, 0);
    assert_int_equal(clean.ninsn, g->n);
    const size_t nw = t->nwords, period = NIB_BUFFER_WORDS / 8;
    uint32_t *w = malloc((nw + 16) * 4);
    assert_non_null(w);
    for (unsigned m = 0; m < MUTATIONS; m++) {
        const int kind = (int)(m % NK);
        memcpy(w, t->words, nw * 4);
        tk_nibble_trace bad = *t;
        bad.words = w;
        size_t pos = (size_t)rng_below(rng, nw), k = 1 + (size_t)rng_below(rng, 8), end = pos + 1;
        if (pos + k > nw)
            k = nw - pos;
        switch (kind) {
        case K_FLIP:
            for (unsigned b = 1 + (unsigned)rng_below(rng, 3); b; b--)
                w[pos] ^= 1u << rng_below(rng, 32);
            break;
        case K_ZERO:
        case K_RANDOM:
            for (size_t i = 0; i < k; i++)
                w[pos + i] = kind == K_ZERO ? 0 : (uint32_t)tk_test_xorshift64star(rng);
            end = pos + k;
            break;
        case K_DROP:
            memmove(w + pos, t->words + pos + k, (nw - pos - k) * 4);
            bad.nwords = nw - k;
            bad.total_nibbles -= 8 * k;
            break;
        case K_DUP:
            memcpy(w + pos + k, t->words + pos, (nw - pos) * 4);
            bad.nwords = nw + k;
            bad.total_nibbles += 8 * k;
            end = pos + 2 * k;
            break;
        }
        rb_flow f;
        decode_nibble(&p, g->img, &bad, &f);
        char what[160];
        snprintf(what, sizeof(what), "nibble %s mutation %u (%s, words %zu..%zu of %zu)", g->name,
                 m, knames[kind], pos, end, nw);
        /* two sync points after the damage: the first may still be read as part of a
         * damaged sequence's value */
        const bool must = (end / period + 2) * period < bad.nwords;
        tally(&ks[kind], &clean, &f, 4 * pos, kind <= K_RANDOM, must, what);
        rb_flow_free(&f);
    }
    free(w);
    rb_flow_free(&clean);
    tk_nibble_encoder_free(e);
}

/* ---- run-length trace ---- */

static void decode_rle(const tk_rle_params *p, tk_image *img, const tk_rle_pair *pairs, size_t n,
                       rb_flow *f)
{
    flow_init(f, img, 32 + n * ((tk_rle_pair_bits(p) + 7) / 8), 1);
    uint64_t insns = 0;
    assert_int_equal(tk_rle_decode(p, img, pairs, n, rb_on_event, f, &insns), TK_OK);
}

static void rle_program(const program *g, kstats *ks, uint64_t *rng)
{
    tk_rle_params p;
    tk_rle_params_init(&p);
    p.xlen = 64;
    tk_rle_encoder *e = NULL;
    assert_int_equal(tk_rle_encoder_new(&p, &e), TK_OK);
    assert_int_equal(tk_rle_encoder_push(e, g->recs, g->n), TK_OK);
    assert_int_equal(tk_rle_encoder_finish(e, false, 0), TK_OK);
    size_t n;
    const tk_rle_pair *pairs = tk_rle_encoder_pairs(e, &n);
    rb_flow clean;
    decode_rle(&p, g->img, pairs, n, &clean);
    assert_int_equal(clean.errors, 0);
    assert_int_equal(clean.ninsn, g->n);
    const unsigned abits = p.xlen - 1, bits = tk_rle_pair_bits(&p);
    const unsigned nb = (bits + 7) / 8;
    tk_rle_pair *q = malloc((n + 16) * sizeof(*q));
    assert_non_null(q);
    for (unsigned m = 0; m < MUTATIONS; m++) {
        const int kind = (int)(m % NK);
        memcpy(q, pairs, n * sizeof(*q));
        size_t len = n, pos = (size_t)rng_below(rng, n), k = 1 + (size_t)rng_below(rng, 4);
        size_t end = pos + 1;
        if (pos + k > n)
            k = n - pos;
        switch (kind) {
        case K_FLIP: /* a bit of the pair as stored: TRACEADDR (address >> 1), then TRACERUN */
            for (unsigned b = 1 + (unsigned)rng_below(rng, 3); b; b--) {
                const unsigned bit = (unsigned)rng_below(rng, bits);
                if (bit < abits)
                    q[pos].addr ^= 2ull << bit;
                else
                    q[pos].run ^= 1u << (bit - abits);
            }
            break;
        case K_ZERO:
        case K_RANDOM:
            for (size_t i = 0; i < k; i++) {
                const uint64_t r = kind == K_ZERO ? 0 : tk_test_xorshift64star(rng);
                q[pos + i].addr = (r << 1) & (p.xlen == 64 ? ~0ull : 0xffffffffull);
                q[pos + i].run =
                    kind == K_ZERO ? 0 : (uint32_t)(r >> 40) & ((1u << p.run_bits) - 1);
            }
            end = pos + k;
            break;
        case K_DROP:
            memmove(q + pos, pairs + pos + k, (n - pos - k) * sizeof(*q));
            len = n - k;
            break;
        case K_DUP:
            memcpy(q + pos + k, pairs + pos, (n - pos) * sizeof(*q));
            len = n + k;
            end = pos + 2 * k;
            break;
        }
        rb_flow f;
        decode_rle(&p, g->img, q, len, &f);
        char what[160];
        snprintf(what, sizeof(what), "rle %s mutation %u (%s, pairs %zu..%zu of %zu)", g->name, m,
                 knames[kind], pos, end, n);
        /* every pair is a restart point: TRACEADDR is absolute */
        tally(&ks[kind], &clean, &f, 32 + (uint64_t)pos * nb, kind <= K_RANDOM, end + 1 < len,
              what);
        rb_flow_free(&f);
    }
    free(q);
    rb_flow_free(&clean);
    tk_rle_encoder_free(e);
}

static const char *const programs[] = {"median", "towers", "vvadd"};

static void test_legacy_corruption(void **state)
{
    (void)state;
    kstats nib[NK], rle[NK];
    memset(nib, 0, sizeof(nib));
    memset(rle, 0, sizeof(rle));
    unsigned loaded = 0;
    for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
        program g;
        if (!load_program(&g, programs[i]))
            continue;
        loaded++;
        uint64_t rng = 0x9e3779b97f4a7c15ull + i;
        nibble_program(&g, nib, &rng);
        rle_program(&g, rle, &rng);
        program_free(&g);
    }
    if (!loaded) {
        skip();
        return;
    }
    print_message("format  damage        count reported recovered no-sync silent harmless  "
                  "insns lost    worst\n");
    print_stats("nibble", nib);
    print_stats("rle", rle);
    for (int k = 0; k < NK; k++) {
        assert_int_equal(nib[k].mutations, loaded * (MUTATIONS / NK));
        assert_int_equal(rle[k].mutations, loaded * (MUTATIONS / NK));
    }
}

/* A file cut short: both readers report it with the byte where the data ends and the word
 * or pair that is missing. (They then return no data at all: see docs/robustness.md.) */
static void test_legacy_truncated_files(void **state)
{
    (void)state;
    program g;
    if (!load_program(&g, "median")) {
        skip();
        return;
    }
    char path[] = "/tmp/tk-robust-legacy-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tk_diag diag;

    tk_nibble_params np;
    tk_nibble_params_init(&np);
    np.xlen = 64;
    tk_nibble_encoder *ne = NULL;
    assert_int_equal(tk_nibble_encoder_new(&np, &ne), TK_OK);
    assert_int_equal(tk_nibble_encoder_push(ne, g.recs, g.n, NULL, 0), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(ne, false, 0), TK_OK);
    const tk_nibble_trace *t = tk_nibble_encoder_trace(ne);
    tk_diag_clear(&diag);
    assert_int_equal(tk_nibble_write_file(path, t, &diag), TK_OK);
    const long nib_size = 32 + (long)t->nwords * 4;
    assert_int_equal(truncate(path, nib_size - 3), 0);
    tk_nibble_trace back;
    tk_diag_clear(&diag);
    assert_int_equal(tk_nibble_read_file(path, &back, &diag), TK_ERR_TRUNCATED);
    assert_true(diag.message[0] != '\0');
    assert_int_equal(diag.byte_offset, (uint64_t)(nib_size - 3));
    /* the buffer did not wrap: every whole word before the cut is kept, unchanged */
    assert_int_equal(back.nwords, t->nwords - 1);
    assert_memory_equal(back.words, t->words, back.nwords * 4);
    assert_true(back.total_nibbles <= 8 * (uint64_t)back.nwords);
    tk_nibble_trace_free(&back);
    tk_nibble_encoder_free(ne);

    tk_rle_params rp;
    tk_rle_params_init(&rp);
    rp.xlen = 64;
    tk_rle_encoder *re = NULL;
    assert_int_equal(tk_rle_encoder_new(&rp, &re), TK_OK);
    assert_int_equal(tk_rle_encoder_push(re, g.recs, g.n), TK_OK);
    assert_int_equal(tk_rle_encoder_finish(re, false, 0), TK_OK);
    size_t n;
    const tk_rle_pair *pairs = tk_rle_encoder_pairs(re, &n);
    tk_diag_clear(&diag);
    assert_int_equal(tk_rle_write_file(path, &rp, pairs, n, &diag), TK_OK);
    const unsigned nb = (tk_rle_pair_bits(&rp) + 7) / 8;
    assert_int_equal(truncate(path, 32 + (long)(n * nb) - 1), 0);
    tk_rle_params rp2;
    tk_rle_pair *got = NULL;
    size_t ngot = 0;
    tk_diag_clear(&diag);
    assert_int_equal(tk_rle_read_file(path, &rp2, &got, &ngot, &diag), TK_ERR_TRUNCATED);
    assert_true(diag.message[0] != '\0');
    /* the last, incomplete pair is the one reported; the pairs before it are kept */
    assert_int_equal(diag.byte_offset, 32 + (uint64_t)(n - 1) * nb);
    assert_int_equal(ngot, n - 1);
    for (size_t i = 0; i < ngot; i++) {
        assert_int_equal(got[i].addr, pairs[i].addr);
        assert_int_equal(got[i].run, pairs[i].run);
    }
    free(got);
    tk_rle_encoder_free(re);
    unlink(path);
    program_free(&g);
}

/* Each program's nibble and run-length traces decoded with another program's ELF: a mismatch
 * must be reported (as test_wrong_binary.c asks of the E-Trace decoder); with its own ELF,
 * none. */
static void test_legacy_wrong_binary(void **state)
{
    (void)state;
    enum { NP = sizeof(programs) / sizeof(programs[0]) };
    program g[NP];
    for (size_t i = 0; i < NP; i++)
        if (!load_program(&g[i], programs[i])) {
            for (size_t j = 0; j < i; j++)
                program_free(&g[j]);
            skip();
            return;
        }
    unsigned checked = 0;
    for (size_t i = 0; i < NP; i++) {
        tk_nibble_params np;
        tk_nibble_params_init(&np);
        np.xlen = 64;
        np.buffer_words = NIB_BUFFER_WORDS;
        tk_nibble_encoder *ne = NULL;
        assert_int_equal(tk_nibble_encoder_new(&np, &ne), TK_OK);
        assert_int_equal(tk_nibble_encoder_push(ne, g[i].recs, g[i].n, NULL, 0), TK_OK);
        assert_int_equal(tk_nibble_encoder_finish(ne, false, 0), TK_OK);
        tk_rle_params rp;
        tk_rle_params_init(&rp);
        rp.xlen = 64;
        tk_rle_encoder *re = NULL;
        assert_int_equal(tk_rle_encoder_new(&rp, &re), TK_OK);
        assert_int_equal(tk_rle_encoder_push(re, g[i].recs, g[i].n), TK_OK);
        assert_int_equal(tk_rle_encoder_finish(re, false, 0), TK_OK);
        size_t n;
        const tk_rle_pair *pairs = tk_rle_encoder_pairs(re, &n);
        for (size_t j = 0; j < NP; j++) {
            rb_flow a, b;
            decode_nibble(&np, g[j].img, tk_nibble_encoder_trace(ne), &a);
            decode_rle(&rp, g[j].img, pairs, n, &b);
            if (i == j) {
                assert_int_equal(a.errors, 0);
                assert_int_equal(b.errors, 0);
            } else {
                if (!a.mismatches || !b.mismatches)
                    fail_msg("%s traced, %s's ELF: nibble %" PRIu64 ", rle %" PRIu64
                             " mismatch errors",
                             programs[i], programs[j], a.mismatches, b.mismatches);
                checked++;
            }
            rb_flow_free(&a);
            rb_flow_free(&b);
        }
        tk_nibble_encoder_free(ne);
        tk_rle_encoder_free(re);
    }
    assert_int_equal(checked, NP * (NP - 1));
    for (size_t i = 0; i < NP; i++)
        program_free(&g[i]);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_legacy_corruption),
        cmocka_unit_test(test_legacy_truncated_files),
        cmocka_unit_test(test_legacy_wrong_binary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
