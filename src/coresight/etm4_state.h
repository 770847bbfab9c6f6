/* SPDX-License-Identifier: BSD-2-Clause */
/* The part of an ETMv4 flow decoder's state that decides what it makes of the packets still to
 * come, for parallel decoding (etm4_parallel.c): a decoder that started at a cut agrees with
 * the one that decoded everything before it once both are in the same state, and from there on
 * they emit the same events. The block cache is not state: it only remembers the code. */
#ifndef TK_CORESIGHT_ETM4_STATE_H
#define TK_CORESIGHT_ETM4_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/etm4.h"

typedef struct tk_etm4_dec_state {
    uint64_t pc, q_pc;
    bool pc_valid, ctx_valid, q_pc_valid, exc_pending, sync_check, pop_pending;
    uint8_t isa, last_is;
    uint16_t exc_type;
    tk_etm4_context c;
    unsigned rs_depth;
    uint64_t rs_addr[16];
    uint8_t rs_isa[16];
} tk_etm4_dec_state;

/* A packet parser's state between packets: synchronisation and the addresses, context,
 * timestamp and threshold later packets are relative to. */
typedef struct tk_etm4_parser_state {
    bool synced, notsync_sent, ctx_valid, ts_valid, seen_trace_info;
    uint32_t zeros, cc_threshold;
    size_t npart;
    uint64_t addr[4];
    uint8_t addr_is[4], addr_bits[4], addr_64[4];
    tk_etm4_context ctx;
    uint64_t ts;
} tk_etm4_parser_state;

void tk_etm4_parser_get_state(const tk_etm4_parser *p, tk_etm4_parser_state *out);
/* Whether the walk of atom runs uses pext: on (the default) only where the CPU has a fast one;
 * off, the portable walk (for tests and the fuzz target, which check both). tk_etm4_parser_reset
 * keeps the choice, as it keeps the batch mode. */
void tk_etm4_parser_use_pext(tk_etm4_parser *p, bool on);
bool tk_etm4_parser_state_equal(const tk_etm4_parser_state *a, const tk_etm4_parser_state *b);

/* Nothing pending: the address and context are known, no exception waits for its address,
 * and (with speculation) no element is queued or owed from before a Trace Info. Only then is a
 * state comparison worth making: the queue itself is not compared. */
bool tk_etm4_decoder_settled(const tk_etm4_decoder *d);
void tk_etm4_decoder_get_state(const tk_etm4_decoder *d, tk_etm4_dec_state *out);
bool tk_etm4_dec_state_equal(const tk_etm4_dec_state *a, const tk_etm4_dec_state *b);
/* Back to the state of a new decoder, with events going to fn: the block cache is kept, so a
 * decoder that takes piece after piece walks each block of code once. */
void tk_etm4_decoder_reset(tk_etm4_decoder *d, tk_event_fn fn, void *ctx);
/* Where events go from now on. */
void tk_etm4_decoder_set_events(tk_etm4_decoder *d, tk_event_fn fn, void *ctx);
/* Packets fed so far (events carry it as packet_index). */
uint64_t tk_etm4_decoder_packet_count(const tk_etm4_decoder *d);

#endif
