/* SPDX-License-Identifier: BSD-2-Clause */
/* The chunk pipe (util/chunk_pipe.h) under the event pipe: chunks arrive in
 * order on another thread, a failing consumer stops the producer and drops the rest, a
 * cancelled pipe drops what is queued, and bad arguments are refused. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "testutil.h"
#include "util/chunk_pipe.h"

enum { ITEMS = 1000 };

typedef struct numbers {
    size_t n;
    uint64_t v[ITEMS];
} numbers;

typedef struct summer {
    uint64_t next;      /* the value expected next: order is checked */
    uint64_t delivered; /* chunks delivered */
    uint64_t dropped;   /* chunks dropped */
    uint64_t fail_at;   /* fail on this chunk (UINT64_MAX: never) */
    unsigned slow_us;   /* time taken per chunk */
    pthread_t thread;
} summer;

static tk_status consume(void *ctx, void *chunk, bool deliver)
{
    summer *s = ctx;
    numbers *c = chunk;
    s->thread = pthread_self();
    tk_status st = TK_OK;
    if (deliver) {
        for (size_t i = 0; i < c->n; i++)
            if (c->v[i] != s->next++)
                st = TK_ERR_STATE;
        if (s->delivered++ == s->fail_at)
            st = TK_ERR_IO;
    } else {
        s->dropped++;
    }
    if (s->slow_us)
        usleep(s->slow_us);
    c->n = 0;
    return st;
}

/* Fill and hand over `chunks` chunks of ITEMS increasing values; the first failure. */
static tk_status produce(tk_chunk_pipe *p, uint64_t chunks, uint64_t *value)
{
    for (uint64_t k = 0; k < chunks; k++) {
        numbers *c = tk_chunk_pipe_chunk(p);
        assert_int_equal(c->n, 0);
        for (size_t i = 0; i < ITEMS; i++)
            c->v[c->n++] = (*value)++;
        tk_status st = tk_chunk_pipe_hand_over(p);
        if (st != TK_OK)
            return st;
    }
    return TK_OK;
}

static void test_in_order(void **state)
{
    (void)state;
    summer s = {.fail_at = UINT64_MAX};
    tk_chunk_pipe *p = NULL;
    assert_int_equal(tk_chunk_pipe_new(sizeof(numbers), 3, consume, &s, &p), TK_OK);
    uint64_t v = 0;
    assert_int_equal(produce(p, 5000, &v), TK_OK);
    /* a last, partly filled chunk */
    numbers *c = tk_chunk_pipe_chunk(p);
    c->v[c->n++] = v++;
    assert_int_equal(tk_chunk_pipe_finish(p, true), TK_OK);
    assert_int_equal(tk_chunk_pipe_finish(p, true), TK_ERR_STATE);
    assert_int_equal(tk_chunk_pipe_hand_over(p), TK_ERR_STATE);
    tk_chunk_pipe_free(p);
    assert_int_equal(s.next, v);
    assert_int_equal(s.delivered, 5001);
    assert_int_equal(s.dropped, 0);
    assert_false(pthread_equal(s.thread, pthread_self()));
}

/* A consumer slower than the producer: the producer, with every chunk queued, sleeps until
 * half of them are free again. Every chunk still arrives in order and comes back empty
 * (produce checks), for every number of chunks. */
static void test_slow_consumer(void **state)
{
    (void)state;
    static const unsigned counts[] = {2, 3, 4, 8, 15, 16};
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        summer s = {.fail_at = UINT64_MAX, .slow_us = 200};
        tk_chunk_pipe *p = NULL;
        assert_int_equal(tk_chunk_pipe_new(sizeof(numbers), counts[k], consume, &s, &p), TK_OK);
        uint64_t v = 0;
        assert_int_equal(produce(p, 200, &v), TK_OK);
        assert_int_equal(tk_chunk_pipe_finish(p, false), TK_OK);
        tk_chunk_pipe_free(p);
        assert_int_equal(s.next, v);
        assert_int_equal(s.delivered, 200);
    }
}

static void test_consumer_failure(void **state)
{
    (void)state;
    summer s = {.fail_at = 10};
    tk_chunk_pipe *p = NULL;
    assert_int_equal(tk_chunk_pipe_new(sizeof(numbers), 4, consume, &s, &p), TK_OK);
    uint64_t v = 0;
    assert_int_equal(produce(p, 100000, &v), TK_ERR_IO);
    /* heard of within the chunks in flight */
    assert_true(v <= (10 + 1 + 4 + 1) * (uint64_t)ITEMS);
    assert_int_equal(tk_chunk_pipe_finish(p, false), TK_ERR_IO);
    tk_chunk_pipe_free(p);
    assert_int_equal(s.delivered, 11);
}

static void test_cancel(void **state)
{
    (void)state;
    summer s = {.fail_at = UINT64_MAX};
    tk_chunk_pipe *p = NULL;
    assert_int_equal(tk_chunk_pipe_new(sizeof(numbers), 16, consume, &s, &p), TK_OK);
    uint64_t v = 0;
    assert_int_equal(produce(p, 15, &v), TK_OK);
    tk_chunk_pipe_free(p); /* no finish: what is still queued is dropped, nothing leaks */
    assert_int_equal(s.delivered + s.dropped, 15);
    tk_chunk_pipe_free(NULL);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    summer s = {0};
    tk_chunk_pipe *p = (tk_chunk_pipe *)&s;
    assert_int_equal(tk_chunk_pipe_new(16, 4, NULL, &s, &p), TK_ERR_INVALID);
    assert_null(p);
    assert_int_equal(tk_chunk_pipe_new(0, 4, consume, &s, &p), TK_ERR_INVALID);
    assert_int_equal(tk_chunk_pipe_new(16, 1, consume, &s, &p), TK_ERR_INVALID);
    assert_int_equal(tk_chunk_pipe_new(16, 17, consume, &s, &p), TK_ERR_INVALID);
    assert_int_equal(tk_chunk_pipe_new(16, 4, consume, &s, NULL), TK_ERR_INVALID);
}

int main(void)
{
    /* a lost wake-up hangs the producer: fail instead of waiting for ctest's timeout */
    alarm(60);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),         cmocka_unit_test(test_slow_consumer),
        cmocka_unit_test(test_consumer_failure), cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
