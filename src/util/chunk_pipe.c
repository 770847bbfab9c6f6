/* SPDX-License-Identifier: BSD-2-Clause */
/* The chunk pipe (chunk_pipe.h): a ring of queued chunks and a stack of free ones under one
 * mutex; the producer blocks only when every chunk is queued (until half are free again),
 * the consumer only when none is. */
#include "util/chunk_pipe.h"

#include <pthread.h>
#include <stdlib.h>

enum { MAX_CHUNKS = 16 };

struct tk_chunk_pipe {
    tk_chunk_fn consume;
    void *ctx;
    unsigned nchunks;
    bool threaded; /* false: no thread could be started, hand_over consumes in line */
    bool finished;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t filled_cv; /* a chunk was queued, or closing */
    pthread_cond_t free_cv;   /* a chunk came back */
    /* Under mu: */
    void *queue[MAX_CHUNKS]; /* a ring */
    size_t qhead, qlen;
    void *spare[MAX_CHUNKS];
    size_t nspare;
    size_t want_spare; /* the producer sleeps until this many are free (0: it does not) */
    bool closing;      /* no more chunks will come */
    bool cancel;       /* drop what is queued */
    tk_status fault;   /* the consumer's first failure */
    /* The producer's own: */
    void *cur;
    void *all[MAX_CHUNKS];
};

static void *consumer(void *arg)
{
    tk_chunk_pipe *p = arg;
    tk_status st = TK_OK;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->qlen && !p->closing)
            pthread_cond_wait(&p->filled_cv, &p->mu);
        if (!p->qlen)
            break;
        void *c = p->queue[p->qhead];
        p->qhead = (p->qhead + 1) % MAX_CHUNKS;
        p->qlen--;
        const bool deliver = !p->cancel && st == TK_OK;
        pthread_mutex_unlock(&p->mu);
        tk_status r = p->consume(p->ctx, c, deliver);
        if (deliver)
            st = r;
        pthread_mutex_lock(&p->mu);
        if (st != TK_OK && p->fault == TK_OK)
            p->fault = st;
        p->spare[p->nspare++] = c;
        if (p->want_spare && p->nspare >= p->want_spare)
            pthread_cond_signal(&p->free_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tk_status tk_chunk_pipe_new(size_t size, unsigned nchunks, tk_chunk_fn consume, void *ctx,
                            tk_chunk_pipe **out)
{
    if (!out)
        return TK_ERR_INVALID;
    *out = NULL;
    if (!consume || !size || nchunks < 2 || nchunks > MAX_CHUNKS)
        return TK_ERR_INVALID;
    tk_chunk_pipe *p = calloc(1, sizeof(*p));
    if (!p)
        return TK_ERR_NOMEM;
    p->consume = consume;
    p->ctx = ctx;
    for (unsigned i = 0; i < nchunks; i++) {
        if (!(p->all[i] = calloc(1, size))) {
            for (unsigned k = 0; k < i; k++)
                free(p->all[k]);
            free(p);
            return TK_ERR_NOMEM;
        }
        p->spare[p->nspare++] = p->all[i];
    }
    p->nchunks = nchunks;
    p->cur = p->spare[--p->nspare];
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->filled_cv, NULL);
    pthread_cond_init(&p->free_cv, NULL);
    p->threaded = pthread_create(&p->thread, NULL, consumer, p) == 0;
    *out = p;
    return TK_OK;
}

void *tk_chunk_pipe_chunk(const tk_chunk_pipe *p)
{
    return p->cur;
}

tk_status tk_chunk_pipe_hand_over(tk_chunk_pipe *p)
{
    if (p->finished)
        return TK_ERR_STATE;
    if (!p->threaded) {
        /* in line: the same chunk is filled again once consumed */
        tk_status st = p->consume(p->ctx, p->cur, p->fault == TK_OK);
        if (p->fault == TK_OK)
            p->fault = st;
        return p->fault;
    }
    pthread_mutex_lock(&p->mu);
    p->queue[(p->qhead + p->qlen) % MAX_CHUNKS] = p->cur;
    p->qlen++;
    pthread_cond_signal(&p->filled_cv);
    if (!p->nspare) {
        /* Every chunk is queued: the consumer is the slower side, and would wake the
         * producer for each chunk it frees (a CoreSight profile through the event pipe: 1,700
         * times per MiB of trace, each a futex call and two context switches). Sleep until
         * half are free. */
        p->want_spare = p->nchunks / 2;
        while (p->nspare < p->want_spare)
            pthread_cond_wait(&p->free_cv, &p->mu);
        p->want_spare = 0;
    }
    p->cur = p->spare[--p->nspare];
    tk_status st = p->fault;
    pthread_mutex_unlock(&p->mu);
    return st;
}

/* Queue the last chunk (if asked), let the consumer drain the queue (or drop it: cancel) and
 * join it. */
static void close_pipe(tk_chunk_pipe *p, bool queue_last, bool cancel)
{
    if (p->finished)
        return;
    if (!p->threaded) {
        if (queue_last)
            tk_chunk_pipe_hand_over(p);
        p->finished = true;
        return;
    }
    p->finished = true;
    pthread_mutex_lock(&p->mu);
    if (queue_last) {
        p->queue[(p->qhead + p->qlen) % MAX_CHUNKS] = p->cur;
        p->qlen++;
        p->cur = NULL;
    }
    p->closing = true;
    p->cancel = cancel;
    pthread_cond_signal(&p->filled_cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
}

tk_status tk_chunk_pipe_finish(tk_chunk_pipe *p, bool queue_last)
{
    if (p->finished)
        return TK_ERR_STATE;
    close_pipe(p, queue_last, false);
    return p->fault;
}

void tk_chunk_pipe_free(tk_chunk_pipe *p)
{
    if (!p)
        return;
    close_pipe(p, false, true);
    pthread_cond_destroy(&p->free_cv);
    pthread_cond_destroy(&p->filled_cv);
    pthread_mutex_destroy(&p->mu);
    for (unsigned i = 0; i < p->nchunks; i++)
        free(p->all[i]);
    free(p);
}
