/* SPDX-License-Identifier: BSD-2-Clause */
/* Event sinks that print the decoded flow: a PC list (the reference decoder's
 * .decoder.trace) and an instruction listing like ptxed's. Each sink's *_event function is a
 * tk_event_fn; pass the sink as its ctx. */
#ifndef TRACEKIT_SINK_H
#define TRACEKIT_SINK_H

#include <stdio.h>

#include "event.h"
#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One lower-case hex PC per line, no 0x, no padding, for every instruction of every
 * TK_EV_RANGE and of every block of a TK_EV_BLOCKS batch (instruction lengths come from the
 * image), so a decoder may deliver whole blocks (TK_TE_DEC_BLOCK_EVENTS, which lets the
 * E-Trace decoder replay walks from its memo). Other events are ignored. Output
 * is buffered; tk_pc_list_flush() writes the rest. Errors: TK_ERR_IO (write failed),
 * TK_ERR_NO_CODE (a range is not in the image). */
typedef struct tk_pc_list tk_pc_list;
tk_status tk_pc_list_new(tk_image *img, FILE *out, tk_pc_list **sink);
tk_status tk_pc_list_event(void *sink, const tk_event *ev);
tk_status tk_pc_list_flush(tk_pc_list *sink);
uint64_t tk_pc_list_count(const tk_pc_list *sink); /* PCs written so far */
void tk_pc_list_free(tk_pc_list *sink);

/* One instruction per line: address, <symbol+offset>, disassembly; other events in
 * brackets on their own line ("[trap: exception 2, epc 0x..., handler 0x...]"), errors as
 * "[offset N, packet K, 0x<pc>: message]". Takes TK_EV_RANGE events and TK_EV_BLOCKS batches
 * (the same lines; a block's lines are formatted once and kept by block id). */
typedef struct tk_listing tk_listing;
enum {
    TK_LISTING_NO_SYMBOLS = 1u << 0,
    TK_LISTING_RAW = 1u << 1,       /* instruction bytes */
    TK_LISTING_NO_EVENTS = 1u << 2, /* instructions only */
};
tk_status tk_listing_new(tk_image *img, FILE *out, unsigned flags, tk_listing **sink);
tk_status tk_listing_event(void *sink, const tk_event *ev);
tk_status tk_listing_flush(tk_listing *sink);
void tk_listing_free(tk_listing *sink);

#ifdef __cplusplus
}
#endif
#endif
