/* SPDX-License-Identifier: BSD-2-Clause */
/* The walk memo (src/etrace/walk_memo.h): a decoder that replays remembered walks and chunks
 * of walks sends exactly the events of one that walks every time: the same batches (same
 * entries, same boundaries, same headers), the same other events and messages, the same
 * statistics. For every etrace-ref vector, clean and damaged (bits flipped, bytes dropped or
 * repeated), so that replays also meet errors, resyncs and lost trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrace/walk_memo.h"
#include "te_ref.h"
#include "testutil.h"
#include "tracekit/te_decoder.h"

/* The events of one decode as a list of words (block pointers as the addresses they stand
 * for: the two decodes have images of their own). */
typedef struct log {
    uint64_t *w;
    size_t n, cap;
} log;

static void put(log *l, uint64_t v)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->w = realloc(l->w, l->cap * sizeof(*l->w));
        assert_non_null(l->w);
    }
    l->w[l->n++] = v;
}

static uint64_t text_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    log *l = ctx;
    put(l, ev->kind);
    put(l, ev->byte_offset);
    put(l, ev->packet_index);
    put(l, ev->priv);
    put(l, ev->context);
    if (ev->kind == TK_EV_BLOCKS) {
        put(l, ev->nblocks);
        for (uint32_t i = 0; i < ev->nblocks; i++) {
            const tk_block_exec *e = &ev->blocks[i];
            put(l, e->block->start);
            put(l, e->block->last);
            put(l, e->block->ninsn);
            put(l, e->next);
            put(l, (uint64_t)e->end << 16 | (uint64_t)e->taken << 8 | e->indirect);
        }
        return TK_OK;
    }
    put(l, ev->first);
    put(l, ev->last);
    put(l, ev->ninsn);
    put(l, ev->next);
    put(l, (uint64_t)ev->end << 16 | (uint64_t)ev->taken << 8 | ev->indirect);
    put(l, ev->kind == TK_EV_ERROR ? text_hash(ev->message) : 0);
    return TK_OK;
}

typedef struct totals {
    size_t decodes;
    uint64_t replayed, chunks;
    uint64_t errors;
} totals;

/* Decode buf with block events, the memo on or off, into l; the decoder's statistics out.
 * Returns what tk_te_decoder_run_raw did (a damaged copy's first bad packet). */
static tk_status decode(const char *dir, const char *prog, const uint8_t *buf, size_t len,
                        bool memo, log *l, tk_te_decoder_stats *st)
{
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    tk_image *img = tk_test_ref_image(prog, true);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&p, img, on_event, l, &d), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    assert_int_equal(tk_dec_set_walk_memo(d, memo), TK_OK);
    const tk_status st_run = tk_te_decoder_run_raw(d, raw);
    assert_true(st_run == TK_OK || st_run == TK_ERR_BAD_PACKET || st_run == TK_ERR_TRUNCATED);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(d, st);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    tk_image_free(img);
    return st_run;
}

static void compare(const char *what, const uint8_t *buf, size_t len, const char *dir,
                    const char *prog, totals *t)
{
    log off = {0}, on = {0};
    tk_te_decoder_stats s_off, s_on;
    assert_int_equal(decode(dir, prog, buf, len, false, &off, &s_off),
                     decode(dir, prog, buf, len, true, &on, &s_on));
    size_t i = 0;
    while (i < off.n && i < on.n && off.w[i] == on.w[i])
        i++;
    if (i < off.n || i < on.n)
        fail_msg("%s/%s %s: the events differ at word %zu of %zu/%zu (memo off/on)", dir, prog,
                 what, i, off.n, on.n);
    assert_int_equal(s_off.walks_replayed, 0);
    assert_int_equal(s_off.chunks_replayed, 0);
    assert_int_equal(s_off.packets, s_on.packets);
    assert_int_equal(s_off.instructions, s_on.instructions);
    assert_int_equal(s_off.errors, s_on.errors);
    assert_int_equal(s_off.traps, s_on.traps);
    t->decodes++;
    t->replayed += s_on.walks_replayed;
    t->chunks += s_on.chunks_replayed;
    t->errors += s_on.errors;
    free(off.w);
    free(on.w);
}

static uint32_t next_rand(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static void check_vector(const char *prog, const char *setting, void *ctx)
{
    totals *t = ctx;
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw(prog, setting, &dir, &len);
    compare("clean", raw, len, dir, prog, t);

    uint8_t *bad = malloc(len * 2 + 1);
    assert_non_null(bad);
    uint32_t seed = (uint32_t)len;
    for (int round = 0; round < 4; round++) {
        /* 0, 1: bits flipped (1 in 997, 1 in 211 bytes); 2: bytes dropped; 3: repeated */
        size_t n = 0;
        for (size_t i = 0; i < len; i++) {
            const bool hit = next_rand(&seed) % (round == 1 ? 211u : 997u) == 0;
            if (hit && round == 2)
                continue;
            bad[n++] = raw[i];
            if (hit && round < 2)
                bad[n - 1] ^= (uint8_t)(1u << (next_rand(&seed) & 7u));
            if (hit && round == 3)
                bad[n++] = raw[i];
        }
        char what[32];
        snprintf(what, sizeof(what), "damaged (%d)", round);
        compare(what, bad, n, dir, prog, t);
    }
    free(bad);
    free(raw);
    free(dir);
}

static void test_memo_changes_nothing(void **state)
{
    (void)state;
    totals t = {0};
    const size_t n = tk_test_ref_each(check_vector, &t);
    print_message("%zu vectors, %zu decodes: %llu walks and %llu chunks replayed, %llu error "
                  "events\n",
                  n, t.decodes, (unsigned long long)t.replayed, (unsigned long long)t.chunks,
                  (unsigned long long)t.errors);
    assert_true(n >= 20);
    /* the memo is used, and the damaged copies reach the error paths */
    assert_true(t.replayed > 10000);
    assert_true(t.chunks > 10000);
    assert_true(t.errors > 0);
}

/* One decode of buf on img with block events, its memo lent from loan and taken back into it
 * afterwards, as a parallel decode's worker decodes each of its pieces (parallel.c). */
static void decode_lent(const tk_te_params *p, tk_image *img, const uint8_t *buf, size_t len,
                        tk_walk_memo_loan *loan, log *l, tk_te_decoder_stats *st)
{
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(p, img, on_event, l, &d), TK_OK);
    assert_int_equal(tk_dec_set_walk_memo(d, false), TK_OK);
    tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
    tk_walk_memo_lend(d, loan);
    assert_null(loan->memo);
    assert_int_equal(tk_te_decoder_run_raw(d, raw), TK_OK);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    *st = (tk_te_decoder_stats){.size = sizeof(*st)};
    tk_te_decoder_get_stats(d, st);
    tk_walk_memo_take_back(d, loan);
    assert_non_null(loan->memo);
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
}

/* The same trace decoded three times on one image, each decoder lent the memo the previous
 * one left: the events are the same each time, and the second and third decodes, which start
 * with every walk of the trace remembered, replay at least as many walks as the first. */
static void check_lent(const char *prog, const char *setting, void *ctx)
{
    totals *t = ctx;
    char *dir;
    size_t len;
    uint8_t *buf = tk_test_ref_raw(prog, setting, &dir, &len);
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    tk_image *img = tk_test_ref_image(prog, true);
    tk_walk_memo_loan loan = {0};
    log first = {0};
    tk_te_decoder_stats s_first;
    decode_lent(&p, img, buf, len, &loan, &first, &s_first);
    for (int round = 0; round < 2; round++) {
        log again = {0};
        tk_te_decoder_stats s;
        decode_lent(&p, img, buf, len, &loan, &again, &s);
        if (again.n != first.n || memcmp(again.w, first.w, first.n * sizeof(*first.w)) != 0)
            fail_msg("%s/%s: a decoder lent a used memo sends other events", prog, setting);
        assert_int_equal(s.instructions, s_first.instructions);
        assert_true(s.walks_replayed >= s_first.walks_replayed);
        t->replayed += s.walks_replayed - s_first.walks_replayed;
        free(again.w);
    }
    t->decodes++;
    free(first.w);
    tk_walk_memo_loan_free(&loan);
    assert_null(loan.memo);
    tk_image_free(img);
    free(buf);
    free(dir);
}

static void test_lent_memo(void **state)
{
    (void)state;
    totals t = {0};
    const size_t n = tk_test_ref_each(check_lent, &t);
    print_message("%zu vectors: %llu more walks replayed with a lent memo\n", n,
                  (unsigned long long)t.replayed);
    assert_true(n >= 20);
    /* a warm memo is used: walks the first decode had to learn are replayed */
    assert_true(t.replayed > 0);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memo_changes_nothing),
        cmocka_unit_test(test_lent_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
