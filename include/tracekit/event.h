/* SPDX-License-Identifier: BSD-2-Clause */
/* Trace events: the one currency every flow decoder (E-Trace, ETMv4, legacy formats) emits
 * and every analysis sink consumes. */
#ifndef TRACEKIT_EVENT_H
#define TRACEKIT_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_event_kind {
    /* A run of sequentially executed instructions first..last (inclusive), ninsn of them.
     * end says how the last instruction left the run, next is the address executed after it
     * (when known). */
    TK_EV_RANGE = 1,
    TK_EV_TRAP,      /* exception or interrupt: cause, interrupt, addr = epc, next = handler */
    TK_EV_PRIVILEGE, /* privilege changed to priv */
    TK_EV_CONTEXT,   /* context changed to context */
    TK_EV_TRACE_ON,  /* trace (re)started at addr */
    TK_EV_TRACE_OFF, /* trace stopped (qualification ended) after addr */
    TK_EV_LOST,      /* trace was lost (overflow); flow resumes at the next sync */
    TK_EV_SYNC,      /* a synchronisation point at addr */
    TK_EV_NOTIFY,    /* trigger notify at addr */
    TK_EV_ERROR,     /* decode error: status, byte_offset, packet_index, message */
    TK_EV_TIMESTAMP, /* time */
    /* A batch of whole basic blocks executed in order (blocks, nblocks; see tk_block_exec).
     * Producers emit it only to a consumer that asked for it (TK_TE_DEC_BLOCK_EVENTS for the
     * E-Trace decoder, or the tk_block_batcher adapter of blocks.h); every other consumer
     * sees the same flow as TK_EV_RANGE events. */
    TK_EV_BLOCKS,
} tk_event_kind;

/* How a TK_EV_RANGE ended. */
typedef enum tk_range_end {
    TK_END_NONE = 0, /* stopped without a control transfer (trace off, end of data) */
    TK_END_BRANCH,   /* conditional branch; taken says which way */
    TK_END_JUMP,     /* direct or indirect jump without linkage */
    TK_END_CALL,
    TK_END_RETURN,
    TK_END_SWAP,        /* co-routine swap */
    TK_END_OTHER_JUMP,  /* jump with linkage that is neither call nor swap */
    TK_END_TRAP_RETURN, /* xRET */
    TK_END_TRAP,        /* exception/ecall/ebreak/interrupt: a TK_EV_TRAP follows */
} tk_range_end;

struct tk_bblock;

/* One entry of a TK_EV_BLOCKS batch: exactly the TK_EV_RANGE event {first = block->start,
 * last = block->last, ninsn = block->ninsn, end, taken, indirect, next} with the block
 * already looked up, so a sink can keep per-block data in an array indexed by block->id
 * (image.h) and derive per-instruction and per-function figures once at the end instead of
 * for every range. block is never NULL, and stays valid (with the same addresses) for as
 * long as the consumer lives: sinks keep block pointers as keys, unchecked. */
typedef struct tk_block_exec {
    const struct tk_bblock *block;
    uint64_t next;    /* address executed after block->last */
    uint8_t end;      /* tk_range_end */
    uint8_t taken;    /* branch outcome for TK_END_BRANCH */
    uint8_t indirect; /* next came from the trace, not from the code */
} tk_block_exec;

typedef struct tk_event {
    uint16_t kind;    /* tk_event_kind */
    uint8_t end;      /* tk_range_end, for TK_EV_RANGE */
    uint8_t taken;    /* branch outcome for TK_END_BRANCH */
    uint8_t indirect; /* the jump's target came from the trace, not from the code */
    uint8_t interrupt;
    uint8_t priv;
    uint8_t isa; /* TK_EV_RANGE: instruction set of its code: 0 RISC-V or A64, 1 A32, 2 T32 */
    uint32_t cause;
    uint32_t trace_id; /* source (CoreSight trace ID, hart) */
    uint64_t first;
    uint64_t last;
    uint64_t ninsn;
    uint64_t next;
    uint64_t context;
    uint64_t time;
    uint64_t byte_offset; /* in the trace, of the packet that produced the event */
    uint64_t packet_index;
    const char *message; /* TK_EV_ERROR: valid during the callback only */
    tk_status status;    /* TK_EV_ERROR */
    /* TK_EV_BLOCKS: valid during the callback only. trace_id, priv and context hold for the
     * whole batch; byte_offset and packet_index are those of the batch's first block. */
    const tk_block_exec *blocks;
    uint32_t nblocks;
} tk_event;

/* Event callback: return TK_OK to go on; any other status stops the decoder, which returns it. */
typedef tk_status (*tk_event_fn)(void *ctx, const tk_event *ev);

#ifdef __cplusplus
}
#endif
#endif
