/* SPDX-License-Identifier: BSD-2-Clause */
/* A sink on a thread of its own: the producer (a decoder, the hart model) calls
 * tk_event_pipe_event as its tk_event_fn; the events are copied into chunks, and a thread
 * started by the pipe hands them to the real sink in the same order. The producer and the
 * sink then run on two cores, and the sink sees exactly the event stream a direct call
 * would give it (TK_EV_BLOCKS entries and error messages are copied with their events).
 *
 * Memory is bounded: a few chunks of a few hundred KB; a producer that gets ahead waits
 * for a free chunk. What the two sides may share: the sink reads the tk_bblock records that
 * TK_EV_BLOCKS entries point to (a block never changes or moves once built, image.h), so a
 * decoder may keep building blocks in the image the sink reads code from, as long as the
 * sink itself builds none there (tk_block_batcher does: give it another image, or put it
 * behind the pipe). */
#ifndef TRACEKIT_EVENT_PIPE_H
#define TRACEKIT_EVENT_PIPE_H

#include <stdint.h>

#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_event_pipe tk_event_pipe;

/* A diagnostic that is not an event (a framing error of the transport, say), delivered on
 * the sink's thread in stream order with the events. */
typedef void (*tk_event_note_fn)(void *ctx, tk_status st, uint64_t offset, const char *msg);

/* A pipe into fn(ctx, event) (and note(ctx, ...), may be NULL: notes are dropped). The
 * thread starts at once. If no thread can be started, each chunk is delivered on the
 * producer's thread when full: same results, no overlap. Errors: TK_ERR_INVALID,
 * TK_ERR_NOMEM. */
tk_status tk_event_pipe_new(tk_event_fn fn, tk_event_note_fn note, void *ctx, tk_event_pipe **out);

/* The producer's tk_event_fn (ctx = the pipe). Returns the sink's first non-TK_OK status
 * once the sink has returned one (the events after it are not delivered), TK_ERR_NOMEM, or
 * TK_OK. */
tk_status tk_event_pipe_event(void *pipe, const tk_event *ev);

/* Queue a diagnostic for the note callback (msg is copied; long ones are cut at 1 KiB; NULL
 * arrives as ""). */
tk_status tk_event_pipe_note(tk_event_pipe *p, tk_status st, uint64_t offset, const char *msg);

/* Deliver everything queued and stop the thread. Returns the sink's first non-TK_OK
 * status, or TK_OK. The pipe takes no events afterwards (TK_ERR_STATE). */
tk_status tk_event_pipe_finish(tk_event_pipe *p);

/* Stop the thread (without waiting for the rest to be delivered) and free the pipe. */
void tk_event_pipe_free(tk_event_pipe *p);

#ifdef __cplusplus
}
#endif
#endif
