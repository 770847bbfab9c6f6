/* SPDX-License-Identifier: BSD-2-Clause */
/* Nibble trace and RLE trace on hand-made retirement records: value-sequence rules,
 * decoding without the program, data trace, a wrapped buffer, a damaged buffer, the RLE
 * file and queue. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "legacy/nibble_int.h"
#include "testutil.h"
#include "tracekit/legacy.h"
#include "tracekit/te_ingress.h"

#define NOP 0x00000013u /* addi x0, x0, 0 */
#define RET 0x00008067u /* jalr x0, 0(x1) */
#define ECALL 0x00000073u

static uint32_t jal(unsigned rd, int32_t off)
{
    uint32_t u = (uint32_t)off;
    return ((u >> 20) & 1u) << 31 | ((u >> 1) & 0x3ffu) << 21 | ((u >> 11) & 1u) << 20 |
           ((u >> 12) & 0xffu) << 12 | rd << 7 | 0x6fu;
}

static tk_hart_retire rec(uint64_t pc, uint32_t insn, uint8_t itype)
{
    tk_hart_retire r;
    memset(&r, 0, sizeof(r));
    r.pc = pc;
    r.insn = insn;
    r.len = 4;
    r.itype = itype;
    r.priv = TK_PRIV_M;
    r.flags = TK_HART_F_RETIRED;
    return r;
}

/* ---- value sequences ---- */

static void test_value_rules(void **state)
{
    (void)state;
    uint64_t x = 0x123456789abcdef1ull;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const uint64_t last = x;
        const uint64_t v = (x & ~0xffffull) | ((x * 31) & 0xfff); /* shares the upper bits */
        unsigned n = nib_count_last(v, last, true, 16);
        assert_true(n <= 4);
        assert_int_equal(nib_expand_last(v & nib_mask(n), n, last), v);
        const int64_t small = (int64_t)(x % 4096) - 2048;
        n = nib_count_sext((uint64_t)small);
        assert_true(n <= 3);
        assert_int_equal(nib_expand_sext((uint64_t)small & nib_mask(n), n), (uint64_t)small);
        n = nib_count_sext(x);
        assert_int_equal(nib_expand_sext(x & nib_mask(n), n), x);
        n = nib_count_zero(x >> (x & 63));
        assert_int_equal((x >> (x & 63)) & nib_mask(n), x >> (x & 63));
    }
    assert_int_equal(nib_count_sext(0xffull), 3); /* 0xff is not -1 */
    assert_int_equal(nib_count_sext(~0ull), 1);
    assert_int_equal(nib_count_last(5, 0, false, 16), 16); /* no last value: whole */
}

/* ---- an event recorder ---- */

typedef struct rec_events {
    tk_event ev[4096];
    size_t n;
    tk_access acc[64];
    size_t nacc;
    size_t errors;
} rec_events;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    rec_events *r = ctx;
    if (ev->kind == TK_EV_ERROR)
        r->errors++;
    if (ev->kind != TK_EV_RANGE && ev->kind != TK_EV_TRAP)
        return TK_OK;
    if (r->n < 4096)
        r->ev[r->n++] = *ev;
    return TK_OK;
}

static tk_status on_access(void *ctx, const tk_access *a)
{
    rec_events *r = ctx;
    if (r->nacc < 64)
        r->acc[r->nacc++] = *a;
    return TK_OK;
}

static tk_nibble_params pc_params(void)
{
    tk_nibble_params p;
    tk_nibble_params_init(&p);
    p.compressed = false;
    p.emit = TK_NIB_PC;
    p.buffer_words = 256;
    return p;
}

/* PC-only trace of 4-byte code decodes exactly without the program. */
static void test_pc_trace_without_program(void **state)
{
    (void)state;
    tk_nibble_params p = pc_params();
    tk_nibble_encoder *e;
    assert_int_equal(tk_nibble_encoder_new(&p, &e), TK_OK);
    tk_hart_retire r[12];
    size_t n = 0;
    for (uint64_t a = 0x1000; a < 0x1014; a += 4)
        r[n++] = rec(a, NOP, 0);
    r[n++] = rec(0x1014, jal(0, 0x2000 - 0x1014), TK_ITYPE_INF_JUMP); /* -> 0x2000 */
    r[n++] = rec(0x2000, NOP, 0);
    r[n++] = rec(0x2004, RET, TK_ITYPE_RETURN); /* -> 0x1018 */
    r[n] = rec(0x1018, ECALL, 0);               /* ecall traps to 0x3000 */
    r[n].flags |= TK_HART_F_EXCEPTION;
    r[n++].cause = 11;
    r[n++] = rec(0x3000, NOP, 0);
    r[n++] = rec(0x3004, NOP, 0);
    assert_int_equal(tk_nibble_encoder_push(e, r, n, NULL, 0), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(e, false, 0), TK_OK);

    rec_events got = {.n = 0};
    tk_nibble_decoder *d;
    assert_int_equal(tk_nibble_decoder_new(&p, NULL, on_event, &got, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, tk_nibble_encoder_trace(e)), TK_OK);
    static const struct {
        uint16_t kind;
        uint64_t first, last, ninsn, next;
    } want[] = {
        {TK_EV_RANGE, 0x1000, 0x1014, 6, 0x2000}, {TK_EV_RANGE, 0x2000, 0x2004, 2, 0x1018},
        {TK_EV_RANGE, 0x1018, 0x1018, 1, 0x1018}, {TK_EV_TRAP, 0x1018, 0x1018, 0, 0x3000},
        {TK_EV_RANGE, 0x3000, 0x3004, 2, 0},
    };
    assert_int_equal(got.n, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(got.ev[i].kind, want[i].kind);
        assert_int_equal(got.ev[i].first, want[i].first);
        assert_int_equal(got.ev[i].ninsn, want[i].ninsn);
        assert_int_equal(got.ev[i].next, want[i].next);
        if (want[i].kind == TK_EV_RANGE)
            assert_int_equal(got.ev[i].last, want[i].last);
    }
    assert_int_equal(got.ev[3].cause, 11);
    assert_int_equal(got.ev[2].end, TK_END_TRAP);
    tk_nibble_decoder_free(d);
    tk_nibble_encoder_free(e);
}

/* Data trace: only the region's accesses, with the fields the options select. */
static void test_data_trace(void **state)
{
    (void)state;
    tk_nibble_params p = pc_params();
    p.emit = TK_NIB_PC | TK_NIB_LOAD_ADDR | TK_NIB_LOAD_DATA | TK_NIB_STORE_DATA;
    p.region_lo = 0x8000;
    p.region_hi = 0x9000;
    tk_nibble_encoder *e;
    assert_int_equal(tk_nibble_encoder_new(&p, &e), TK_OK);
    tk_hart_retire r[4] = {rec(0x1000, NOP, 0), rec(0x1004, NOP, 0), rec(0x1008, NOP, 0),
                           rec(0x100c, NOP, 0)};
    const tk_access acc[] = {
        {.rec = 0, .kind = TK_ACC_LOAD, .addr = 0x8010, .data = 0xfffffffffffffff0ull},
        {.rec = 1, .kind = TK_ACC_STORE, .addr = 0x8014, .data = 0x1234},
        {.rec = 1, .kind = TK_ACC_LOAD, .addr = 0x7ff8, .data = 7}, /* outside */
        {.rec = 3, .kind = TK_ACC_LOAD, .addr = 0x8ff8, .data = 0xff},
    };
    assert_int_equal(tk_nibble_encoder_push(e, r, 4, acc, 4), TK_OK);
    assert_int_equal(tk_nibble_encoder_finish(e, false, 0), TK_OK);
    tk_nibble_stats st;
    tk_nibble_encoder_get_stats(e, &st);
    assert_int_equal(st.accesses, 3);

    rec_events got = {.n = 0};
    tk_nibble_decoder *d;
    assert_int_equal(tk_nibble_decoder_new(&p, NULL, on_event, &got, on_access, &got, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, tk_nibble_encoder_trace(e)), TK_OK);
    assert_int_equal(got.nacc, 3);
    assert_int_equal(got.acc[0].kind, TK_ACC_LOAD);
    assert_int_equal(got.acc[0].flags, TK_ACC_HAVE_ADDR | TK_ACC_HAVE_DATA);
    assert_int_equal(got.acc[0].addr, 0x8010);
    assert_int_equal(got.acc[0].data, 0xfffffffffffffff0ull);
    assert_int_equal(got.acc[1].kind, TK_ACC_STORE);
    assert_int_equal(got.acc[1].flags, TK_ACC_HAVE_DATA); /* store address not emitted */
    assert_int_equal(got.acc[1].data, 0x1234);
    assert_int_equal(got.acc[2].addr, 0x8ff8);
    assert_int_equal(got.acc[2].data, 0xff);
    assert_int_equal(got.n, 1);
    assert_int_equal(got.ev[0].ninsn, 4);
    tk_nibble_decoder_free(d);
    tk_nibble_encoder_free(e);
}

/* A loop of jumps long enough to wrap a 256-word buffer several times. */
static tk_nibble_encoder *looping_trace(const tk_nibble_params *p, size_t iterations, uint64_t *npc)
{
    tk_nibble_encoder *e;
    assert_int_equal(tk_nibble_encoder_new(p, &e), TK_OK);
    *npc = 0;
    for (size_t i = 0; i < iterations; i++) {
        /* 0x1000: nop x (i % 5), jal to 0x40000 + 0x100 * (i % 37); there: nop, ret */
        tk_hart_retire r[8];
        size_t n = 0;
        uint64_t a = 0x1000;
        for (size_t k = 0; k < i % 5; k++, a += 4)
            r[n++] = rec(a, NOP, 0);
        const uint64_t t = 0x40000 + 0x100 * (i % 37);
        r[n++] = rec(a, jal(1, (int32_t)(t - a)), TK_ITYPE_INF_CALL);
        r[n++] = rec(t, NOP, 0);
        r[n++] = rec(t + 4, RET, TK_ITYPE_RETURN);
        assert_int_equal(tk_nibble_encoder_push(e, r, n, NULL, 0), TK_OK);
        *npc += n;
    }
    assert_int_equal(tk_nibble_encoder_finish(e, true, 0x1000), TK_OK);
    return e;
}

static void test_wrapped_buffer(void **state)
{
    (void)state;
    tk_nibble_params p = pc_params();
    p.wrap = true;
    uint64_t total;
    tk_nibble_encoder *e = looping_trace(&p, 3000, &total);
    const tk_nibble_trace *t = tk_nibble_encoder_trace(e);
    assert_true(t->wrapped);
    assert_int_equal(t->nwords, 256);
    assert_true(t->total_nibbles > 3 * 8 * 256);

    /* through the file as well */
    char path[] = "/tmp/tk_legacy_wrapXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_nibble_write_file(path, t, &diag), TK_OK);
    tk_nibble_trace back;
    assert_int_equal(tk_nibble_read_file(path, &back, &diag), TK_OK);
    remove(path);
    assert_int_equal(back.total_nibbles, t->total_nibbles);
    assert_memory_equal(back.words, t->words, 256 * 4);

    rec_events got = {.n = 0};
    tk_nibble_decoder *d;
    assert_int_equal(tk_nibble_decoder_new(&back.params, NULL, on_event, &got, NULL, NULL, &d),
                     TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, &back), TK_OK);
    tk_nibble_decoder_stats ds;
    tk_nibble_decoder_get_stats(d, &ds);
    /* from the sync point after the write pointer */
    const uint64_t wp = t->total_nibbles % (8 * 256);
    assert_int_equal(ds.start_nibble % 256, 0);
    assert_int_equal(ds.start_nibble, ((wp + 255) / 256 * 256) % (8 * 256));
    assert_int_equal(got.errors, 0);
    /* the ranges are the end of the loop, iteration by iteration: the last range is the
     * final return's, each call range jumps to where the next range starts */
    assert_true(got.n > 100);
    assert_int_equal(got.ev[got.n - 1].next, 0x1000);
    for (size_t i = 0; i + 1 < got.n; i++)
        assert_int_equal(got.ev[i].next, got.ev[i + 1].first);
    uint64_t insns = 0;
    for (size_t i = 0; i < got.n; i++)
        insns += got.ev[i].ninsn;
    assert_true(insns < total);
    tk_nibble_decoder_free(d);
    tk_nibble_trace_free(&back);
    tk_nibble_encoder_free(e);
}

/* A damaged sequence costs the flow up to the next sync point, no more. */
static void test_damaged_buffer(void **state)
{
    (void)state;
    tk_nibble_params p = pc_params();
    uint64_t total;
    tk_nibble_encoder *e = looping_trace(&p, 400, &total);
    tk_nibble_trace t = *tk_nibble_encoder_trace(e);
    t.words = malloc(t.nwords * 4);
    memcpy(t.words, tk_nibble_encoder_trace(e)->words, t.nwords * 4);
    assert_true(t.nwords > 3 * 256);
    /* a reserved header in the middle of the second segment */
    nib_reader rd;
    nib_reader_init(&rd, &t);
    tk_nibble_seq s;
    while (nib_read(&rd, &s) == TK_OK && s.offset < 256 + 100)
        ;
    t.words[s.offset / 8] |= 0xdu << (4 * (s.offset % 8));
    t.words[s.offset / 8] &= ~(0x2u << (4 * (s.offset % 8)));

    rec_events got = {.n = 0};
    tk_nibble_decoder *d;
    assert_int_equal(tk_nibble_decoder_new(&p, NULL, on_event, &got, NULL, NULL, &d), TK_OK);
    assert_int_equal(tk_nibble_decoder_run(d, &t), TK_OK);
    assert_int_equal(got.errors, 1);
    uint64_t insns = 0;
    for (size_t i = 0; i < got.n; i++)
        insns += got.ev[i].ninsn;
    assert_true(insns < total);
    assert_true(insns > total * 3 / 4);
    assert_int_equal(got.ev[got.n - 1].next, 0x1000);
    tk_nibble_decoder_free(d);
    free(t.words);
    tk_nibble_encoder_free(e);
}

/* ---- RLE ---- */

static void test_rle_file(void **state)
{
    (void)state;
    tk_rle_params p;
    tk_rle_params_init(&p);
    const tk_rle_pair pairs[] = {
        {0x80000000, 0}, {0xfffffffffffffffeull, 255}, {0x2, 1}, {0x7ffffffffffffff0ull, 128}};
    char path[] = "/tmp/tk_legacy_rleXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (unsigned bits = 1; bits <= 32; bits += 31) {
        for (unsigned xlen = 32; xlen <= 64; xlen += 32) {
            p.run_bits = bits;
            p.xlen = xlen;
            assert_int_equal(tk_rle_write_file(path, &p, pairs, 4, NULL), TK_OK);
            tk_rle_params q;
            tk_rle_pair *back;
            size_t n;
            assert_int_equal(tk_rle_read_file(path, &q, &back, &n, NULL), TK_OK);
            assert_int_equal(n, 4);
            assert_int_equal(q.run_bits, bits);
            for (size_t i = 0; i < 4; i++) {
                const uint64_t amask = xlen == 32 ? 0xfffffffeull : ~1ull;
                assert_int_equal(back[i].addr, pairs[i].addr & amask);
                assert_int_equal(back[i].run, pairs[i].run & ((1ull << bits) - 1));
            }
            free(back);
        }
    }
    /* a cut file is an error with the offset */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 32 + 9 + 3), 0);
    fclose(f);
    tk_rle_params q;
    tk_rle_pair *back;
    size_t n;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_rle_read_file(path, &q, &back, &n, &diag), TK_ERR_TRUNCATED);
    free(back);
    remove(path);
}

/* Every instruction a taken jump: runs of one, more pairs per clock than the pins take. */
static uint64_t throttles(unsigned width, unsigned depth, unsigned div)
{
    tk_rle_params p;
    tk_rle_params_init(&p);
    p.retire_width = width;
    p.depth = depth;
    p.trace_div = div;
    tk_rle_encoder *e;
    assert_int_equal(tk_rle_encoder_new(&p, &e), TK_OK);
    for (int i = 0; i < 1000; i++) {
        tk_hart_retire r =
            rec(0x1000 + 0x10 * (uint64_t)(i % 2), jal(0, i % 2 ? -0x10 : 0x10), TK_ITYPE_INF_JUMP);
        assert_int_equal(tk_rle_encoder_push(e, &r, 1), TK_OK);
    }
    assert_int_equal(tk_rle_encoder_finish(e, true, 0x1000), TK_OK);
    tk_rle_stats st;
    tk_rle_encoder_get_stats(e, &st);
    assert_int_equal(st.retired, 1000);
    assert_int_equal(st.pairs, 1001);
    assert_true(st.max_fill <= depth);
    tk_rle_encoder_free(e);
    return st.throttle_events;
}

static void test_rle_queue(void **state)
{
    (void)state;
    /* one pair per clock in, one out: only the start pair and the first jump's share a clock */
    assert_int_equal(throttles(1, 1, 1), 1);
    assert_int_equal(throttles(1, 2, 1), 0);
    assert_true(throttles(2, 4, 1) > 400); /* two in, one out */
    assert_true(throttles(1, 4, 2) > 400); /* TRACECLK at half speed */
    assert_true(throttles(2, 64, 1) < throttles(2, 4, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_value_rules),    cmocka_unit_test(test_pc_trace_without_program),
        cmocka_unit_test(test_data_trace),     cmocka_unit_test(test_wrapped_buffer),
        cmocka_unit_test(test_damaged_buffer), cmocka_unit_test(test_rle_file),
        cmocka_unit_test(test_rle_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
