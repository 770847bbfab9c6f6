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

enum how { GENERAL, PUSH_EACH, PUSH_CYCLES, PUSH_RUN, HOW_COUNT };

static void encode(const tk_te_params *p, const tk_te_encoder_options *o, enum how how,
                   const tk_te_block *b, size_t n, uint64_t seed, stream *out)
{
    tk_te_encoder_options eo = *o;
    eo.general_path_only = how == GENERAL;
    tk_te_encoder *e = NULL;
    out->n = 0;
    out->p = p;
    assert_int_equal(tk_te_encoder_new_opts(p, &eo, collect, out, &e), TK_OK);
    uint64_t x = seed * 7 + 1;
    for (size_t i = 0, len; i < n; i += len) {
        len = how == PUSH_CYCLES ? 1 + rnd(&x) % 3 : how == PUSH_RUN ? 1 + rnd(&x) % 100 : 1;
        if (len > n - i)
            len = n - i;
        if (how == PUSH_RUN)
            assert_int_equal(tk_te_encoder_push_run(e, b + i, len), TK_OK);
        else
            assert_int_equal(tk_te_encoder_push(e, b + i, len), TK_OK);
    }
    assert_int_equal(tk_te_encoder_finish(e), TK_OK);
    tk_te_encoder_free(e);
}

static void run_case(unsigned itype_width, bool quirks, unsigned resync_max, bool sijump,
                     uint64_t seed)
{
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.itype_width = itype_width;
    p.s.iaddress_lsb = 1;
    p.s.sijump = sijump;
    p.o.sijump = sijump;
    p.o.resync_max = resync_max;
    tk_te_encoder_options o;
    tk_te_encoder_options_init(&o);
    o.reference_quirks = quirks;
    o.irdepth_ones = quirks;
    const size_t n = 6000;
    tk_te_block *b = make_blocks(seed, n, itype_width);
    stream s[HOW_COUNT] = {{0}};
    for (int h = 0; h < HOW_COUNT; h++)
        encode(&p, &o, (enum how)h, b, n, seed, &s[h]);
    assert_true(s[GENERAL].n > 1000); /* the stream makes many packets */
    for (int h = 1; h < HOW_COUNT; h++) {
        size_t i = 0;
        while (i < s[h].n && i < s[GENERAL].n && s[h].d[i] == s[GENERAL].d[i])
            i++;
        if (i != s[h].n || i != s[GENERAL].n)
            fail_msg("seed %llu, itype width %u, %s, resync_max %u, sijump %d: way %d differs "
                     "from the general path at byte %zu of %zu",
                     (unsigned long long)seed, itype_width, quirks ? "quirks" : "spec", resync_max,
                     sijump, h, i, s[GENERAL].n);
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
                     seed * 0x9e3779b97f4a7c15ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path_equals_general),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
