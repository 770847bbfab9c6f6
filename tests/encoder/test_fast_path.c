/* SPDX-License-Identifier: BSD-2-Clause */
/* The encoder's fast path for quiet cycles (tk_te_encoder_push and tk_te_encoder_push_run)
 * against its general path (general_path_only): random block streams with everything that
 * ends a quiet run (traps, xRETs, uninferable jumps, privilege and context changes, triggers,
 * halts, full branch maps, resync) must give the same packets, byte for byte, whichever way
 * the blocks go in. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/te_encoder.h"

typedef struct stream {
    uint8_t *d;
    size_t n, cap;
    const tk_te_params *p;
} stream;

/* Each packet as its encoded bytes after a length byte (or the codec's error). */
static tk_status collect(void *ctx, const tk_te_packet *pkt)
{
    stream *s = ctx;
    if (s->cap - s->n < 2 + TK_TE_MAX_PAYLOAD) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->d = realloc(s->d, s->cap);
        assert_non_null(s->d);
    }
    size_t len = 0;
    tk_status st = tk_te_packet_encode(s->p, pkt, s->d + s->n + 1, TK_TE_MAX_PAYLOAD, &len);
    s->d[s->n] = st == TK_OK ? (uint8_t)len : (uint8_t)(0x80u | (unsigned)-st);
    s->n += 1 + (st == TK_OK ? len : 0);
    return TK_OK;
}

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* A stream of blocks: mostly plain instructions and branches, now and then everything else. */
static tk_te_block *make_blocks(uint64_t seed, size_t n, unsigned itype_width)
{
    tk_te_block *b = calloc(n, sizeof(*b));
    assert_non_null(b);
    uint64_t x = seed, addr = 0x80000000u, context = 0;
    uint8_t priv = 3;
    for (size_t i = 0; i < n; i++) {
        const unsigned r = (unsigned)(rnd(&x) % 1000);
        tk_te_block *k = &b[i];
        k->ilastsize = (uint8_t)(rnd(&x) & 1);
        const unsigned insns = r < 120 ? 1 + (unsigned)(rnd(&x) % 6) : 1;
        k->iretire = insns << k->ilastsize;
        k->iaddr = addr;
        k->priv = priv;
        k->context = context;
        k->ctype = (uint8_t)(rnd(&x) & 3);
        if (r < 550)
            k->itype = TK_ITYPE_NONE;
        else if (r < 800)
            k->itype = (uint8_t)(TK_ITYPE_NOT_TAKEN + (rnd(&x) & 1));
        else if (r < 900)
            k->itype = itype_width == 3 ? TK_ITYPE_UNINF_JUMP3 : (uint8_t)(8 + rnd(&x) % 8);
        else if (r < 915) {
            k->itype = TK_ITYPE_EXCEPTION;
            k->iretire = rnd(&x) & 1 ? 0 : k->iretire;
            k->cause = (uint32_t)(rnd(&x) % 16);
            k->tval = rnd(&x);
        } else if (r < 925) {
            k->itype = TK_ITYPE_INTERRUPT;
            k->cause = 7;
        } else if (r < 935)
            k->itype = TK_ITYPE_TRAP_RETURN;
        else if (r < 945)
            priv = k->priv = (uint8_t)(rnd(&x) % 4);
        else if (r < 955)
            context = k->context = rnd(&x) % 3;
        else if (r < 962)
            k->trigger = TK_TRIGGER_NOTIFY;
        else if (r < 966)
            k->trigger = TK_TRIGGER_OFF;
        else if (r < 972)
            k->trigger = TK_TRIGGER_ON;
        else if (r < 975)
            k->halted = 1;
        k->sijump = (uint8_t)(rnd(&x) % 8 == 0);
        /* long stretches without packets fill the branch map */
        if ((i / 512) % 3 == 1 && r < 945 && k->itype != TK_ITYPE_NONE)
            k->itype = (uint8_t)(TK_ITYPE_NOT_TAKEN + (rnd(&x) & 1));
        addr += 2u * k->iretire + (rnd(&x) % 4 == 0 ? 64 : 0);
    }
    return b;
}

/* A stream like a program's: long stretches of plain instructions and branches, an
 * uninferable jump now and then (every one makes a packet on the fast path), blocks of several
 * instructions, and nothing else; with a small resync period the timer reaches its maximum
 * at every kind of cycle. */
static tk_te_block *make_program(uint64_t seed, size_t n, unsigned itype_width)
{
    tk_te_block *b = calloc(n, sizeof(*b));
    assert_non_null(b);
    uint64_t x = seed, addr = 0x80000000u;
    for (size_t i = 0; i < n; i++) {
        const unsigned r = (unsigned)(rnd(&x) % 1000);
        tk_te_block *k = &b[i];
        k->ilastsize = (uint8_t)(rnd(&x) % 3 == 0);
        const unsigned insns = r < 30 ? 2 + (unsigned)(rnd(&x) % 6) : 1;
        k->iretire = insns << k->ilastsize;
        k->iaddr = addr;
        k->priv = 3;
        k->context = 7;
        k->time = i / 3; /* sync packets carry it */
        k->ctype = (uint8_t)(rnd(&x) & 3);
        if (r >= 850 && r < 980)
            k->itype = (uint8_t)(TK_ITYPE_NOT_TAKEN + (rnd(&x) & 1));
        else if (r >= 980 || (r >= 30 && r < 40))
            k->itype = itype_width == 3 ? TK_ITYPE_UNINF_JUMP3 : (uint8_t)(8 + rnd(&x) % 8);
        k->sijump = (uint8_t)(rnd(&x) % 8 == 0);
        /* now and then two updiscons in a row, or a stretch of branches only */
        if (i > 0 && r < 15)
            k->itype = b[i - 1].itype =
                itype_width == 3 ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_UNINF_JUMP;
        if ((i / 700) % 4 == 2 && r < 800)
            k->itype = (uint8_t)(TK_ITYPE_NOT_TAKEN + (rnd(&x) & 1));
        /* stretches without branches: the resync timer reaches its maximum with an empty map */
        if ((i / 1500) % 5 == 4 && (k->itype == TK_ITYPE_NOT_TAKEN || k->itype == TK_ITYPE_TAKEN))
            k->itype = TK_ITYPE_NONE;
        addr += 2u * k->iretire + (k->itype ? 64 : 0);
    }
    return b;
}

/* Plain instructions and uninferable jumps, alone and in pairs, in a period of 9 blocks and
 * with no branch: the resync timer reaches its maximum at every phase, among them the packet
 * of a jump whose target is the second jump (then a start packet is due at that one's
 * target). */
static tk_te_block *make_pattern(size_t n, unsigned itype_width)
{
    tk_te_block *b = calloc(n, sizeof(*b));
    assert_non_null(b);
    uint64_t addr = 0x1000;
    for (size_t i = 0; i < n; i++) {
        const size_t phase = i % 9;
        b[i].iaddr = addr;
        b[i].iretire = 1;
        b[i].priv = 3;
        if (phase == 3 || phase == 6 || phase == 7)
            b[i].itype = itype_width == 3 ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_UNINF_JUMP;
        addr += b[i].itype ? 100 : 2;
    }
    return b;
}

/* Uninferable jumps each followed by two one-instruction blocks of every kind (plain, a
 * branch either way, another jump) in a rolling order, with stretches of branches between
 * that fill the map to one short of full: run_plain() takes the common three at once
 * (updiscon_triple()), and the rest one at a time; the packets must not tell which. */
static tk_te_block *make_triples(size_t n, unsigned itype_width)
{
    tk_te_block *b = calloc(n, sizeof(*b));
    assert_non_null(b);
    const uint8_t jump = itype_width == 3 ? TK_ITYPE_UNINF_JUMP3 : TK_ITYPE_UNINF_JUMP;
    const uint8_t kinds[4] = {TK_ITYPE_NONE, TK_ITYPE_NOT_TAKEN, TK_ITYPE_TAKEN, jump};
    uint64_t addr = 0x4000;
    for (size_t i = 0, k = 0; i < n; k++) {
        for (size_t r = 0; r < k % 33 && i < n; r++, i++) { /* up to 32 branches */
            b[i].itype = (uint8_t)(r % 3 ? TK_ITYPE_NOT_TAKEN : TK_ITYPE_TAKEN);
            b[i].iaddr = addr;
            addr += 4;
        }
        const uint8_t three[3] = {jump, kinds[k % 4], kinds[k / 4 % 4]};
        for (size_t j = 0; j < 3 && i < n; j++, i++) {
            b[i].itype = three[j];
            b[i].iaddr = addr;
            addr += three[j] ? 200 : 4;
        }
    }
    for (size_t i = 0; i < n; i++) {
        b[i].ilastsize = 1;
        b[i].iretire = 2;
        b[i].priv = 3;
    }
    return b;
}

/* PUSH_MIXED: stretches of each of the other ways one after the other, so that the state one
 * way leaves (the one-block pushes defer the pipe) is where the next starts. */
enum how { GENERAL, PUSH_EACH, PUSH_CYCLES, PUSH_RUN, PUSH_MIXED, HOW_COUNT };

/* Every way reports a trace loss before the same blocks. */
#define LOST_EVERY 2503u

static void encode(const tk_te_params *p, const tk_te_encoder_options *o, enum how how,
                   const tk_te_block *b, size_t n, uint64_t seed, bool losses, stream *out)
{
    tk_te_encoder_options eo = *o;
    eo.general_path_only = how == GENERAL;
    tk_te_encoder *e = NULL;
    out->n = 0;
    out->p = p;
    assert_int_equal(tk_te_encoder_new_opts(p, &eo, collect, out, &e), TK_OK);
    uint64_t x = seed * 7 + 1;
    for (size_t i = 0, len; i < n; i += len) {
        enum how way = how == PUSH_MIXED ? (enum how)(PUSH_EACH + rnd(&x) % 3) : how;
        len = way == PUSH_CYCLES ? 1 + rnd(&x) % 3 : way == PUSH_RUN ? 1 + rnd(&x) % 500 : 1;
        if (how == PUSH_MIXED && way == PUSH_EACH)
            len = 1 + rnd(&x) % 300; /* one block per push */
        if (len > n - i)
            len = n - i;
        if (i / LOST_EVERY != (i + len - 1) / LOST_EVERY) /* stop at the loss */
            len = LOST_EVERY - i % LOST_EVERY;
        if (i && i % LOST_EVERY == 0 && losses)
            assert_int_equal(tk_te_encoder_trace_lost(e), TK_OK);
        if (way == PUSH_RUN)
            assert_int_equal(tk_te_encoder_push_run(e, b + i, len), TK_OK);
        else if (how == PUSH_MIXED && way == PUSH_EACH)
            for (size_t k = 0; k < len; k++)
                assert_int_equal(tk_te_encoder_push(e, b + i + k, 1), TK_OK);
        else
            assert_int_equal(tk_te_encoder_push(e, b + i, len), TK_OK);
    }
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    tk_te_encoder_free(e);
}

enum kind { RANDOM, PROGRAM, PATTERN, TRIPLES };

static void run_case(unsigned itype_width, bool quirks, unsigned resync_max, bool sijump,
                     uint64_t seed, enum kind kind)
{
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.itype_width = itype_width;
    p.s.iaddress_lsb = 1;
    p.s.sijump = sijump;
    p.o.sijump = sijump;
    p.o.resync_max = resync_max;
    if (kind != RANDOM) {
        p.s.notime = false;
        p.s.time_width = 16;
    }
    tk_te_encoder_options o;
    tk_te_encoder_options_init(&o);
    o.reference_quirks = quirks;
    o.irdepth_ones = quirks;
    const size_t n = kind == RANDOM ? 6000 : 20000;
    tk_te_block *b = kind == PROGRAM   ? make_program(seed, n, itype_width)
                     : kind == PATTERN ? make_pattern(n, itype_width)
                     : kind == TRIPLES ? make_triples(n, itype_width)
                                       : make_blocks(seed, n, itype_width);
    stream s[HOW_COUNT] = {{0}};
    for (int h = 0; h < HOW_COUNT; h++)
        encode(&p, &o, (enum how)h, b, n, seed, (seed & 1) != 0, &s[h]);
    if (s[GENERAL].n <= 1000) /* the stream makes many packets */
        fail_msg("seed %llu: only %zu bytes", (unsigned long long)seed, s[GENERAL].n);
    for (int h = 1; h < HOW_COUNT; h++) {
        size_t i = 0;
        while (i < s[h].n && i < s[GENERAL].n && s[h].d[i] == s[GENERAL].d[i])
            i++;
        if (i != s[h].n || i != s[GENERAL].n)
            fail_msg("seed %llu%s, itype width %u, %s, resync_max %u, sijump %d: way %d differs "
                     "from the general path at byte %zu of %zu",
                     (unsigned long long)seed,
                     kind == PROGRAM   ? " (program)"
                     : kind == PATTERN ? " (pattern)"
                     : kind == TRIPLES ? " (triples)"
                                       : "",
                     itype_width, quirks ? "quirks" : "spec", resync_max, sijump, h, i,
                     s[GENERAL].n);
    }
    for (int h = 0; h < HOW_COUNT; h++)
        free(s[h].d);
    free(b);
}

static void test_fast_path_equals_general(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++)
        for (int q = 0; q < 2; q++)
            run_case(seed % 2 ? 4 : 3, q, (unsigned)(seed % 3) * 2, seed % 3 == 0,
                     seed * 0x9e3779b97f4a7c15ull, RANDOM);
}

/* Runs of plain cycles with updiscon packets, full maps and the resync timer at its maximum
 * on the fast path (run_fast), against the general path. */
static void test_program_streams(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 8; seed++)
        for (int q = 0; q < 2; q++)
            run_case(seed % 2 ? 4 : 3, q, (unsigned)(seed % 3), seed % 4 == 0,
                     seed * 0x2545f4914f6cdd1dull, PROGRAM);
    for (unsigned resync_max = 0; resync_max < 2; resync_max++)
        for (int q = 0; q < 2; q++)
            run_case(3 + resync_max, q, resync_max, false, 1, PATTERN);
    for (unsigned resync_max = 0; resync_max < 3; resync_max++)
        for (int q = 0; q < 2; q++)
            run_case(3 + resync_max % 2, q, resync_max, false, 1, TRIPLES);
}

/* A failing packet callback: every way stops with its error after the same packets. */
typedef struct failing {
    stream s;
    size_t left; /* packets accepted before the failure */
} failing;

static tk_status collect_then_fail(void *ctx, const tk_te_packet *pkt)
{
    failing *f = ctx;
    if (f->left == 0)
        return TK_ERR_IO;
    f->left--;
    return collect(&f->s, pkt);
}

static void test_callback_error(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_lsb = 1;
    const size_t n = 20000;
    tk_te_block *b = make_program(99, n, 3);
    for (size_t after = 0; after < 200; after += 7) {
        failing f[HOW_COUNT];
        for (int h = 0; h < HOW_COUNT; h++) {
            tk_te_encoder_options o;
            tk_te_encoder_options_init(&o);
            o.general_path_only = h == GENERAL;
            memset(&f[h], 0, sizeof(f[h]));
            f[h].s.p = &p;
            f[h].left = after;
            tk_te_encoder *e = NULL;
            assert_int_equal(tk_te_encoder_new_opts(&p, &o, collect_then_fail, &f[h], &e), TK_OK);
            tk_status st = TK_OK;
            const size_t step = h == PUSH_EACH ? 1 : 50;
            for (size_t i = 0; st == TK_OK && i < n; i += step)
                st = h == PUSH_RUN ? tk_te_encoder_push_run(e, b + i, step)
                                   : tk_te_encoder_push(e, b + i, step);
            assert_int_equal(st, TK_ERR_IO);
            tk_te_encoder_free(e);
        }
        for (int h = 1; h < HOW_COUNT; h++) {
            if (f[h].s.n != f[GENERAL].s.n)
                fail_msg("failure after %zu packets: way %d gave %zu bytes, the general path %zu",
                         after, h, f[h].s.n, f[GENERAL].s.n);
            assert_memory_equal(f[h].s.d, f[GENERAL].s.d, f[h].s.n);
        }
        for (int h = 0; h < HOW_COUNT; h++)
            free(f[h].s.d);
    }
    free(b);
}

/* An invalid block inside a run (itype 16, ilastsize 4, iretire below one instruction)
 * stops every way with TK_ERR_INVALID after the same packets. */
static void test_invalid_block_in_run(void **state)
{
    (void)state;
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_lsb = 1;
    const size_t n = 3000;
    for (int bad = 0; bad < 3; bad++) {
        tk_te_block *b = make_program(7 + (uint64_t)bad, n, 3);
        tk_te_block *k = &b[1234 + 300 * (size_t)bad];
        if (bad == 0)
            k->itype = 16;
        else if (bad == 1)
            k->ilastsize = 4;
        else
            k->iretire = k->ilastsize = 1; /* one half-word for a 4-byte instruction */
        stream s[HOW_COUNT] = {{0}};
        for (int h = 0; h < HOW_COUNT; h++) {
            tk_te_encoder_options o;
            tk_te_encoder_options_init(&o);
            o.general_path_only = h == GENERAL;
            s[h].p = &p;
            tk_te_encoder *e = NULL;
            assert_int_equal(tk_te_encoder_new_opts(&p, &o, collect, &s[h], &e), TK_OK);
            tk_status st = TK_OK;
            const size_t step = h == PUSH_RUN ? 700 : h == PUSH_CYCLES ? 2 : 1;
            for (size_t i = 0; st == TK_OK && i < n; i += step) {
                const size_t len = n - i < step ? n - i : step;
                st = h == PUSH_RUN ? tk_te_encoder_push_run(e, b + i, len)
                                   : tk_te_encoder_push(e, b + i, len);
            }
            assert_int_equal(st, TK_ERR_INVALID);
            tk_te_encoder_free(e);
        }
        assert_true(s[GENERAL].n > 0);
        for (int h = 1; h < HOW_COUNT; h++) {
            assert_int_equal(s[h].n, s[GENERAL].n);
            assert_memory_equal(s[h].d, s[GENERAL].d, s[h].n);
        }
        for (int h = 0; h < HOW_COUNT; h++)
            free(s[h].d);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path_equals_general),
        cmocka_unit_test(test_program_streams),
        cmocka_unit_test(test_callback_error),
        cmocka_unit_test(test_invalid_block_in_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
