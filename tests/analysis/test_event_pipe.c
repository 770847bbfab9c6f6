/* SPDX-License-Identifier: BSD-2-Clause */
/* The event pipe (event_pipe.h): what reaches the sink through the pipe is what a direct
 * call gives it (flattened: a batch may arrive split), on another thread, with messages and
 * notes in stream order; a failing sink stops the producer; finishing and freeing at any
 * point neither hangs nor leaks. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "te_ref.h"
#include "testutil.h"
#include "tracekit/blocks.h"
#include "tracekit/event_pipe.h"
#include "tracekit/te_decoder.h"

/* What a sink saw, one line per event, note or block entry: comparable as text. */
typedef struct seen {
    char *text;
    size_t len, cap;
    size_t events, batches;
    pthread_t thread;
    size_t fail_at; /* return TK_ERR_NOMEM at this event (SIZE_MAX: never) */
    bool by_start;  /* name blocks by their addresses, not pointers (two images) */
} seen;

static void put(seen *s, const char *line)
{
    size_t n = strlen(line);
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = realloc(s->text, s->cap);
        assert_non_null(s->text);
    }
    memcpy(s->text + s->len, line, n + 1);
    s->len += n;
}

static tk_status see(void *ctx, const tk_event *ev)
{
    seen *s = ctx;
    s->thread = pthread_self();
    if (s->events++ == s->fail_at)
        return TK_ERR_NOMEM;
    char line[4096];
    if (ev->kind == TK_EV_BLOCKS) {
        s->batches++;
        for (uint32_t i = 0; i < ev->nblocks; i++) {
            const tk_block_exec *b = &ev->blocks[i];
            char name[64];
            if (s->by_start)
                snprintf(name, sizeof(name), "%llx-%llx/%u", (unsigned long long)b->block->start,
                         (unsigned long long)b->block->last, b->block->ninsn);
            else
                snprintf(name, sizeof(name), "%p", (const void *)b->block);
            snprintf(line, sizeof(line), "B %s %llx %u %u %u ctx %llx off %llu\n", name,
                     (unsigned long long)b->next, b->end, b->taken, b->indirect,
                     (unsigned long long)ev->context, (unsigned long long)ev->byte_offset);
            put(s, line);
        }
        return TK_OK;
    }
    snprintf(line, sizeof(line), "E %u %llx %llx %llu %u %u %llu %s\n", ev->kind,
             (unsigned long long)ev->first, (unsigned long long)ev->last,
             (unsigned long long)ev->ninsn, ev->end, ev->status,
             (unsigned long long)ev->byte_offset, ev->message ? ev->message : "-");
    put(s, line);
    return TK_OK;
}

static void note(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    seen *s = ctx;
    char line[4096];
    snprintf(line, sizeof(line), "N %u %llu %s\n", st, (unsigned long long)offset, msg);
    put(s, line);
}

/* A fake block to point at: the pipe copies the pointers, never reads them. */
static const tk_bblock fake_blocks[7];

/* A synthetic stream: ranges, batches of every size up to 20000 entries (more than a chunk
 * holds), errors with messages (one longer than the 1 KiB kept), and notes. */
static tk_status produce(tk_event_fn fn, void *ctx, tk_event_pipe *pipe, seen *direct_notes)
{
    static tk_block_exec bx[20000];
    for (size_t i = 0; i < 20000; i++)
        bx[i] = (tk_block_exec){.block = &fake_blocks[i % 7],
                                .next = 0x1000 + 4 * i,
                                .end = (uint8_t)(i % 9),
                                .taken = (uint8_t)(i & 1),
                                .indirect = (uint8_t)((i >> 1) & 1)};
    char longmsg[3000];
    memset(longmsg, 'x', sizeof(longmsg) - 1);
    longmsg[sizeof(longmsg) - 1] = '\0';
    const uint32_t sizes[] = {1, 0, 256, 8191, 8192, 8193, 20000, 3, 5000};
    tk_status st = TK_OK;
    for (unsigned round = 0; round < 40 && st == TK_OK; round++) {
        for (unsigned k = 0; k < 300 && st == TK_OK; k++) {
            tk_event r = {.kind = TK_EV_RANGE,
                          .first = 0x100 * k,
                          .last = 0x100 * k + 8,
                          .ninsn = 3,
                          .end = TK_END_BRANCH,
                          .byte_offset = round * 1000 + k};
            st = fn(ctx, &r);
        }
        tk_event b = {.kind = TK_EV_BLOCKS,
                      .context = round,
                      .byte_offset = round,
                      .blocks = bx,
                      .nblocks = sizes[round % 9]};
        if (st == TK_OK)
            st = fn(ctx, &b);
        char msg[64];
        snprintf(msg, sizeof(msg), "damage %u", round);
        tk_event e = {.kind = TK_EV_ERROR,
                      .status = TK_ERR_BAD_PACKET,
                      .byte_offset = round,
                      .message = round % 5 == 4 ? longmsg : msg};
        if (st == TK_OK)
            st = fn(ctx, &e);
        if (st == TK_OK && round % 3 == 0) {
            if (pipe)
                st = tk_event_pipe_note(pipe, TK_ERR_FORMAT, round, msg);
            else
                note(direct_notes, TK_ERR_FORMAT, round, msg);
        }
        /* a note without text arrives with an empty one */
        if (st == TK_OK && round == 7) {
            if (pipe)
                st = tk_event_pipe_note(pipe, TK_OK, round, NULL);
            else
                note(direct_notes, TK_OK, round, "");
        }
    }
    return st;
}

static void test_same_stream(void **state)
{
    (void)state;
    seen direct = {.fail_at = SIZE_MAX}, piped = {.fail_at = SIZE_MAX};
    assert_int_equal(produce(see, &direct, NULL, &direct), TK_OK);
    tk_event_pipe *p = NULL;
    assert_int_equal(tk_event_pipe_new(see, note, &piped, &p), TK_OK);
    assert_int_equal(produce(tk_event_pipe_event, p, p, NULL), TK_OK);
    assert_int_equal(tk_event_pipe_finish(p), TK_OK);
    /* done: more is refused */
    tk_event e = {.kind = TK_EV_RANGE};
    assert_int_equal(tk_event_pipe_event(p, &e), TK_ERR_STATE);
    assert_int_equal(tk_event_pipe_note(p, TK_OK, 0, "x"), TK_ERR_STATE);
    assert_int_equal(tk_event_pipe_finish(p), TK_ERR_STATE);
    tk_event_pipe_free(p);
    /* long messages are cut at 1023 characters on the way */
    char *cut = strstr(piped.text, "xxx");
    assert_non_null(cut);
    assert_int_equal(strspn(cut, "x"), 1023);
    /* the same lines once the cut is accounted for */
    char *want = direct.text;
    size_t cuts = 0;
    for (char *x = strstr(want, "xxx"); x; x = strstr(x + 1023, "xxx"), cuts++) {
        assert_int_equal(strspn(x, "x"), 2999);
        memmove(x + 1023, x + 2999, strlen(x + 2999) + 1);
    }
    assert_int_equal(cuts, 8);
    assert_string_equal(piped.text, want);
    assert_true(piped.batches > direct.batches); /* the big batches were split */
    assert_false(pthread_equal(piped.thread, pthread_self()));
    free(direct.text);
    free(piped.text);
}

/* The sink fails at its 5000th event: the producer hears of it (within a few chunks), no
 * later event reaches the sink, and finish returns the status. */
static void test_sink_failure(void **state)
{
    (void)state;
    seen s = {.fail_at = 5000};
    tk_event_pipe *p = NULL;
    assert_int_equal(tk_event_pipe_new(see, note, &s, &p), TK_OK);
    tk_status st = TK_OK;
    size_t pushed = 0;
    for (; pushed < 1000000 && st == TK_OK; pushed++) {
        tk_event r = {.kind = TK_EV_RANGE, .first = pushed, .last = pushed, .ninsn = 1};
        st = tk_event_pipe_event(p, &r);
    }
    assert_int_equal(st, TK_ERR_NOMEM);
    assert_true(pushed < 5000 + 8 * 1024);
    assert_int_equal(tk_event_pipe_finish(p), TK_ERR_NOMEM);
    assert_int_equal(s.events, 5001);
    tk_event_pipe_free(p);
    free(s.text);
}

/* Freed while events are queued (a producer that gave up): no hang, nothing leaked (ASan),
 * and freeing a pipe that saw nothing. */
static void test_free_early(void **state)
{
    (void)state;
    seen s = {.fail_at = SIZE_MAX};
    tk_event_pipe *p = NULL;
    assert_int_equal(tk_event_pipe_new(see, NULL, &s, &p), TK_OK);
    for (size_t i = 0; i < 100000; i++) {
        tk_event r = {.kind = TK_EV_RANGE, .first = i, .last = i, .ninsn = 1};
        assert_int_equal(tk_event_pipe_event(p, &r), TK_OK);
    }
    assert_int_equal(tk_event_pipe_note(p, TK_ERR_FORMAT, 1, "dropped: no note callback"), TK_OK);
    tk_event_pipe_free(p);
    assert_true(s.events <= 100000);
    free(s.text);
    assert_int_equal(tk_event_pipe_new(see, NULL, &s, &p), TK_OK);
    tk_event_pipe_free(p);
    tk_event_pipe_free(NULL);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    tk_event_pipe *p = (tk_event_pipe *)&p;
    assert_int_equal(tk_event_pipe_new(NULL, NULL, NULL, &p), TK_ERR_INVALID);
    assert_null(p);
    assert_int_equal(tk_event_pipe_new(see, NULL, NULL, NULL), TK_ERR_INVALID);
    tk_event e = {.kind = TK_EV_RANGE};
    assert_int_equal(tk_event_pipe_event(NULL, &e), TK_ERR_INVALID);
    assert_int_equal(tk_event_pipe_note(NULL, TK_OK, 0, "x"), TK_ERR_INVALID);
    assert_int_equal(tk_event_pipe_finish(NULL), TK_ERR_INVALID);
}

/* A real decode with block events (the decoder building blocks on this thread while the
 * sink reads them on the pipe's): the same flow as decoded straight into the sink. */
static void test_real_decode(void **state)
{
    (void)state;
    if (!tk_test_data_present())
        skip();
    char *dir = tk_test_data_path("etrace-ref/dhrystone/itype3_basic");
    tk_image *img = tk_test_ref_image("dhrystone", true);
    seen direct = {.fail_at = SIZE_MAX, .by_start = true},
         piped = {.fail_at = SIZE_MAX, .by_start = true};
    tk_test_ref_decode(dir, "dhrystone", img, TK_TE_DEC_BLOCK_EVENTS, see, &direct);
    tk_image_free(img);
    /* a fresh image, so that the blocks are built while the sink runs */
    img = tk_test_ref_image("dhrystone", true);
    tk_event_pipe *p = NULL;
    assert_int_equal(tk_event_pipe_new(see, note, &piped, &p), TK_OK);
    tk_test_ref_decode(dir, "dhrystone", img, TK_TE_DEC_BLOCK_EVENTS, tk_event_pipe_event, p);
    assert_int_equal(tk_event_pipe_finish(p), TK_OK);
    tk_event_pipe_free(p);
    assert_true(direct.batches > 100);
    assert_int_equal(direct.len, piped.len);
    assert_true(memcmp(direct.text, piped.text, direct.len) == 0);
    tk_image_free(img);
    free(dir);
    free(direct.text);
    free(piped.text);
}

/* Every field of every event arrives as pushed, whichever way the pipe took it (the fast
 * path for events without text or blocks, the general one at a full chunk, with a message
 * or a batch): the sink compares each event with the one the producer made from the same
 * seed, field by field. Stretches of plain events of every length from 0 to 1100 put the
 * chunk's end (1024 entries) everywhere among them. */
typedef struct exact {
    uint64_t n;   /* events seen */
    uint64_t bad; /* events that differ */
    char msg[32]; /* the message the producer gave event n */
    tk_block_exec bx[3];
} exact;

static tk_event exact_event(uint64_t n, exact *x)
{
    uint64_t h = n * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    h ^= h >> 29;
    tk_event ev = {.kind = (uint16_t)(1 + h % 11), /* every kind but TK_EV_BLOCKS */
                   .end = (uint8_t)(h >> 8),
                   .taken = (uint8_t)(h >> 16),
                   .indirect = (uint8_t)(h >> 24),
                   .interrupt = (uint8_t)(h >> 32),
                   .priv = (uint8_t)(h >> 40),
                   .isa = (uint8_t)(h >> 48),
                   .cause = (uint32_t)(h >> 7),
                   .trace_id = (uint32_t)(h >> 13),
                   .first = h,
                   .last = h + 1,
                   .ninsn = h >> 3,
                   .next = ~h,
                   .context = h << 5,
                   .time = h * 3,
                   .byte_offset = n,
                   .packet_index = h >> 1,
                   .status = (tk_status)(h % 7)};
    /* a stale pointer of the producer's: events of other kinds arrive without blocks */
    if (n % 3 == 0)
        ev.blocks = x->bx;
    if (n % 97 == 13) {
        snprintf(x->msg, sizeof(x->msg), "message %llu", (unsigned long long)n);
        ev.message = x->msg;
    } else if (n % 89 == 5) {
        for (int i = 0; i < 3; i++)
            x->bx[i] = (tk_block_exec){.block = &fake_blocks[i], .next = h + (uint64_t)i};
        ev.kind = TK_EV_BLOCKS;
        ev.blocks = x->bx;
        ev.nblocks = 3;
    }
    return ev;
}

static tk_status exact_see(void *ctx, const tk_event *ev)
{
    exact *x = ctx;
    char msg[32];
    exact tmp;
    tk_event want = exact_event(x->n++, &tmp);
    memcpy(msg, tmp.msg, sizeof(msg));
    bool same =
        ev->kind == want.kind && ev->end == want.end && ev->taken == want.taken &&
        ev->indirect == want.indirect && ev->interrupt == want.interrupt && ev->priv == want.priv &&
        ev->isa == want.isa && ev->cause == want.cause && ev->trace_id == want.trace_id &&
        ev->first == want.first && ev->last == want.last && ev->ninsn == want.ninsn &&
        ev->next == want.next && ev->context == want.context && ev->time == want.time &&
        ev->byte_offset == want.byte_offset && ev->packet_index == want.packet_index &&
        ev->status == want.status && ev->nblocks == want.nblocks && !ev->message == !want.message &&
        (!ev->message || !strcmp(ev->message, msg)) && !ev->blocks == (want.kind != TK_EV_BLOCKS);
    for (uint32_t i = 0; same && i < ev->nblocks; i++)
        same = ev->blocks[i].block == tmp.bx[i].block && ev->blocks[i].next == tmp.bx[i].next;
    x->bad += !same;
    return TK_OK;
}

static void test_every_field(void **state)
{
    (void)state;
    exact got = {0}, made = {0};
    tk_event_pipe *p = NULL;
    assert_int_equal(tk_event_pipe_new(exact_see, NULL, &got, &p), TK_OK);
    uint64_t n = 0;
    for (uint64_t stretch = 0; stretch <= 1100; stretch += 37) {
        for (uint64_t i = 0; i < stretch; i++) {
            tk_event ev = exact_event(n++, &made);
            assert_int_equal(tk_event_pipe_event(p, &ev), TK_OK);
        }
    }
    assert_int_equal(tk_event_pipe_finish(p), TK_OK);
    tk_event_pipe_free(p);
    assert_true(n > 16000);
    assert_int_equal(got.n, n);
    assert_int_equal(got.bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_stream), cmocka_unit_test(test_sink_failure),
        cmocka_unit_test(test_free_early),  cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_real_decode), cmocka_unit_test(test_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
