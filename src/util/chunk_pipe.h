/* SPDX-License-Identifier: BSD-2-Clause */
/* Chunks handed from a producer to a consumer thread, in order: the producer fills the chunk
 * it holds and hands it over, taking an empty one (waiting while every chunk is queued); the
 * pipe's thread passes each to the consume callback. One lock per chunk, so chunks should
 * hold many items. The threading under the event pipe (tracekit/event_pipe.h), kept apart
 * from how events are packed into chunks. */
#ifndef TK_UTIL_CHUNK_PIPE_H
#define TK_UTIL_CHUNK_PIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "tracekit/status.h"

typedef struct tk_chunk_pipe tk_chunk_pipe;

/* Consume chunk (deliver: hand its items on; else only drop them) and leave it empty for the
 * producer. A non-TK_OK status is the consumer's failure: later chunks are dropped. */
typedef tk_status (*tk_chunk_fn)(void *ctx, void *chunk, bool deliver);

/* nchunks (2 to 16) zeroed chunks of size bytes. If no thread can be started, hand_over
 * consumes on the producer's thread (same results, no overlap). Errors: TK_ERR_INVALID,
 * TK_ERR_NOMEM. */
tk_status tk_chunk_pipe_new(size_t size, unsigned nchunks, tk_chunk_fn consume, void *ctx,
                            tk_chunk_pipe **out);
/* The chunk the producer fills now. */
void *tk_chunk_pipe_chunk(const tk_chunk_pipe *p);
/* Queue the producer's chunk and make an empty one its chunk. Returns the consumer's first
 * failure (the producer should stop), or TK_OK. */
tk_status tk_chunk_pipe_hand_over(tk_chunk_pipe *p);
/* Queue the producer's chunk if queue_last, wait until every queued chunk is consumed and
 * stop the thread. Returns the consumer's first failure, or TK_OK. Only once. */
tk_status tk_chunk_pipe_finish(tk_chunk_pipe *p, bool queue_last);
/* Stop the thread, dropping what is still queued, and free the pipe. */
void tk_chunk_pipe_free(tk_chunk_pipe *p);

#endif
