/* SPDX-License-Identifier: BSD-2-Clause */
/* The block batcher (blocks.h): a real decoded flow, passed through the batcher and expanded
 * back into ranges, must be exactly the flow the decoder emitted, with most ranges carried
 * in TK_EV_BLOCKS batches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te_ref.h"
#include "testutil.h"
#include "tracekit/blocks.h"
#include "tracekit/te_decoder.h"

typedef struct recorder {
    tk_event *ev;
    size_t n, cap;
    size_t batches, batched; /* TK_EV_BLOCKS seen by the batch counter, entries in them */
} recorder;

static tk_status record(void *ctx, const tk_event *ev)
{
    recorder *r = ctx;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4096;
        r->ev = realloc(r->ev, r->cap * sizeof(*r->ev));
        assert_non_null(r->ev);
    }
    tk_event e = *ev;
    e.message = NULL; /* valid during the callback only */
    r->ev[r->n++] = e;
    return TK_OK;
}

/* Counts the batches, then expands them for the recorder. */
static tk_status expand(void *ctx, const tk_event *ev)
{
    recorder *r = ctx;
    if (ev->kind == TK_EV_BLOCKS) {
        assert_true(ev->nblocks > 0 && ev->nblocks <= TK_BLOCK_BATCH);
        r->batches++;
        r->batched += ev->nblocks;
    }
    return tk_blocks_as_ranges(record, r, ev);
}

static void decode(const char *prog, tk_event_fn fn, void *ctx, tk_block_batcher *flush_me,
                   tk_image **img_out)
{
    tk_image *img = *img_out ? *img_out : tk_test_ref_image(prog, true);
    char rel[512];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/itype3_basic", prog);
    char *dir = tk_test_data_path(rel);
    tk_test_ref_decode(dir, prog, img, 0, fn, ctx);
    if (flush_me)
        assert_int_equal(tk_block_batcher_flush(flush_me), TK_OK);
    free(dir);
    *img_out = img;
}

static void check_program(const char *prog)
{
    recorder direct = {0}, via = {0};
    tk_image *img = NULL;
    decode(prog, record, &direct, NULL, &img);
    tk_block_batcher *b = NULL;
    assert_int_equal(tk_block_batcher_new(img, expand, &via, &b), TK_OK);
    decode(prog, tk_block_batcher_event, b, b, &img);
    tk_block_batcher_free(b);

    assert_int_equal(via.n, direct.n);
    size_t ranges = 0;
    for (size_t i = 0; i < direct.n; i++) {
        const tk_event *x = &direct.ev[i], *y = &via.ev[i];
        assert_int_equal(x->kind, y->kind);
        if (x->kind != TK_EV_RANGE)
            continue;
        ranges++;
        assert_int_equal(x->first, y->first);
        assert_int_equal(x->last, y->last);
        assert_int_equal(x->ninsn, y->ninsn);
        assert_int_equal(x->next, y->next);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->taken, y->taken);
        assert_int_equal(x->indirect, y->indirect);
        assert_int_equal(x->priv, y->priv);
        assert_int_equal(x->context, y->context);
    }
    /* The decoder's ranges are whole blocks but where a walk starts inside one: nearly all
     * of them must travel in batches. */
    printf("%s: %zu ranges, %zu in %zu batches\n", prog, ranges, via.batched, via.batches);
    assert_true(ranges > 1000);
    assert_true(via.batched * 10 >= ranges * 9);
    free(direct.ev);
    free(via.ev);
    tk_image_free(img);
}

static void test_dhrystone(void **state)
{
    (void)state;
    check_program("dhrystone");
}

static void test_median(void **state)
{
    (void)state;
    check_program("median");
}

/* A range that is not a whole block, and any other event, flush the batch first and then go
 * through unchanged; a sink's stop status comes back. */
static tk_status stop_on_trap(void *ctx, const tk_event *ev)
{
    tk_status st = expand(ctx, ev);
    return ev->kind == TK_EV_TRAP ? TK_ERR_STATE : st;
}

static void test_partial_and_stop(void **state)
{
    (void)state;
    char *elf = tk_test_data_path("riscv-ref/dhrystone.riscv");
    tk_image *img = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_image_open_elf(elf, &img, &d), TK_OK);
    const tk_bblock *blk = NULL;
    assert_int_equal(tk_image_block(img, tk_image_entry(img), &blk), TK_OK);
    assert_true(blk->ninsn >= 2);
    recorder r = {0};
    tk_block_batcher *b = NULL;
    assert_int_equal(tk_block_batcher_new(img, stop_on_trap, &r, &b), TK_OK);
    tk_event whole = {.kind = TK_EV_RANGE,
                      .first = blk->start,
                      .last = blk->last,
                      .ninsn = blk->ninsn,
                      .end = blk->end,
                      .next = blk->fall};
    tk_event part = whole;
    part.first = blk->start + blk->term.len; /* not a block start: a range of its own */
    part.ninsn = blk->ninsn - 1;
    assert_int_equal(tk_block_batcher_event(b, &whole), TK_OK);
    assert_int_equal(r.n, 0); /* held in the batch */
    assert_int_equal(tk_block_batcher_event(b, &part), TK_OK);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.batches, 1);
    assert_int_equal(r.ev[0].first, whole.first);
    assert_int_equal(r.ev[1].first, part.first);
    assert_int_equal(tk_block_batcher_event(b, &whole), TK_OK);
    tk_event trap = {.kind = TK_EV_TRAP, .cause = 2};
    assert_int_equal(tk_block_batcher_event(b, &trap), TK_ERR_STATE);
    assert_int_equal(r.n, 4);
    assert_int_equal(r.ev[3].kind, TK_EV_TRAP);
    assert_int_equal(tk_block_batcher_flush(b), TK_OK); /* nothing left */
    assert_int_equal(r.n, 4);
    tk_block_batcher_free(b);
    free(r.ev);
    tk_image_free(img);
    free(elf);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dhrystone),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_partial_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
