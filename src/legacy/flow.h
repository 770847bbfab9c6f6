/* SPDX-License-Identifier: BSD-2-Clause */
/* The program walker the legacy decoders share: it follows the program image (basic blocks
 * from tk_image_block) from the current PC as far as a trace item allows and turns what was
 * executed into the trace events of event.h, cut the way tk_pc_flow (analysis.h) cuts an
 * executed-PC list: a range ends at every control-flow instruction, and at a trap. */
#ifndef TK_LEGACY_FLOW_H
#define TK_LEGACY_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/event.h"
#include "tracekit/image.h"

/* How a walk may pass control-flow instructions it meets before its stop. */
enum {
    LG_PASS_NOT_TAKEN = 1u << 0, /* a branch falls through (PC-only trace: untaken branches
                                  * leave no trace) */
    LG_FOLLOW_JAL = 1u << 1,     /* jal goes to its target (branch trace: jal leaves none) */
};

typedef struct lg_flow {
    tk_image *img;
    unsigned xlen;
    uint64_t mask; /* address mask of xlen */
    tk_event_fn fn;
    void *ctx;
    uint32_t trace_id;
    uint64_t pc; /* next instruction to account for */
    bool have_pc;
    bool open; /* ev is a range being built (its last instruction is not a transfer) */
    tk_event ev;
    uint64_t instructions; /* reported in ranges */
    uint64_t traps;
    uint64_t offset, index; /* stamped on events: byte offset and item index of the source */
    char msg[192];          /* why the last walk failed (TK_ERR_MISMATCH / NO_CODE) */
} lg_flow;

void lg_flow_init(lg_flow *f, tk_image *img, unsigned xlen, tk_event_fn fn, void *ctx);
tk_status lg_flow_emit(lg_flow *f, tk_event *ev);
/* Forget the position (after an error): an open range is reported first. */
tk_status lg_flow_lose(lg_flow *f);
/* Report the open range, ending with no transfer; next is what follows (0: unknown). */
tk_status lg_flow_close(lg_flow *f, uint64_t next);
/* Append instructions first..last (k of them) to the open range, opening one at first. */
void lg_flow_add(lg_flow *f, uint64_t first, uint64_t last, uint64_t k);
/* End the open range with a transfer and report it; pc becomes next. */
tk_status lg_flow_end(lg_flow *f, uint8_t end, bool taken, uint64_t next);
/* Report a trap at epc going to handler (0: unknown) and continue there. */
tk_status lg_flow_trap(lg_flow *f, uint64_t epc, uint64_t handler, uint32_t cause, bool interrupt);
/* Direct target of a branch or jal at pc. */
uint64_t lg_target(const lg_flow *f, const tk_rv_insn *in, uint64_t pc);

/* Walk from pc until pc == stop, passing control flow as flags allow. MISMATCH (f->msg)
 * when a transfer that needs a trace item comes first, or stop is not on the path. */
tk_status lg_flow_advance(lg_flow *f, uint64_t stop, unsigned flags);
/* Walk from pc to the next control-flow instruction that flags do not let the walk pass (or
 * that is at stop, if have_stop) and return its block: pc = (*b)->start, (*b)->last is the
 * instruction, nothing of the block is reported yet. */
tk_status lg_flow_to_cf(lg_flow *f, unsigned flags, bool have_stop, uint64_t stop,
                        const tk_bblock **b);
/* Execute the block b (from pc) whose last instruction transfers to next. */
tk_status lg_flow_take(lg_flow *f, const tk_bblock *b, uint64_t next);
/* Execute n >= 1 instructions in sequence; every control-flow instruction before the last
 * falls through. Leaves pc on the last one, not reported, its decoding in *last. */
tk_status lg_flow_count(lg_flow *f, uint64_t n, tk_rv_insn *last);

#endif
