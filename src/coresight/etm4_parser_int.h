/* SPDX-License-Identifier: BSD-2-Clause */
/* The ETMv4 packet parser's state, for its two halves: etm4_packet.c (the complete parser, the
 * calls in, packets split between runs) and etm4_batch.c (the batch modes' fast paths, which
 * write compact records straight from the data). */
#ifndef TK_CORESIGHT_ETM4_PARSER_INT_H
#define TK_CORESIGHT_ETM4_PARSER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coresight/etm4_window.h"
#include "tracekit/etm4.h"

#define MAX_PKT 64   /* longer than any well-formed packet */
#define LITE_MAX 256 /* compact packets held back in batch mode */
/* Positions of the data the batch mode with atom runs precomputes at a time (etm4_window.h). */
#define RUN_WIN 2048
/* The last bytes of the data, from where the walk is to the end (at most RUN_PAD - 48), are
 * walked from a zero-padded copy in one window. */
#define RUN_PAD 512
/* The window arrays' stride in the parser (etm4_window.h: 16 nblk positions, nblk up to
 * RUN_WIN / 16, or RUN_PAD / 16 for a padded tail) */
#define WIN_STRIDE (RUN_WIN + 32)
/* The bytes of a compact packet from atoms on. */
#define LITE_TAIL (sizeof(tk_etm4_pkt_lite) - offsetof(tk_etm4_pkt_lite, atoms))

typedef struct addr_entry {
    uint64_t val;
    uint8_t is, valid_bits, is64;
} addr_entry;

/* An address packet in the batch mode with atom runs, by header [3:0] and bit 7 of the next
 * byte (the continuation of a short address), with no branch on its kind: its value is
 * (history entry idx & keep) | payload bits, where payload byte 0 [6:0] is multiplied into
 * place by mul0, byte 1 (masked by m1) by mul1, and bytes 2 on stand in place (mhi). Its meta
 * data (as the walk keeps it: IS [0], 64-bit [8], valid bits code [14:9]) is the entry's
 * masked by mkeep, or-ed with mset. word: the record's bytes from type to match_idx. Where
 * pext is fast, the payload bits are pext(bytes, pm) << sh instead (one instruction where
 * the multiplies take ten). */
typedef struct addr_rule {
    uint64_t keep, mhi, word;
    uint64_t pm; /* the payload bits of the 8 bytes after the header, for pext */
    uint32_t mul0, mul1, m1, idx;
    uint32_t sh; /* where pext's result goes */
    uint16_t mkeep, mset;
    uint8_t pad_[8];
} addr_rule;
_Static_assert(sizeof(addr_rule) == 64, "a rule's address is a shift of its number");

struct tk_etm4_parser {
    tk_etm4_config cfg;
    tk_etm4_packet_fn fn;
    void *ctx;

    bool synced;
    bool notsync_sent;     /* a NOT_SYNC packet reported the current unsynchronised stretch */
    uint32_t zeros;        /* consecutive 0x00 bytes seen while looking for A-Sync */
    uint64_t zero_start;   /* index of the first of them */
    uint64_t zero_idx[12]; /* ring of the indices of the last zero bytes */

    uint8_t part[MAX_PKT]; /* packet split between runs */
    size_t npart;
    uint64_t part_index;

    /* state the packets are relative to */
    addr_entry cur, stack[3];
    bool ctx_valid;
    tk_etm4_context ctxs;
    uint64_t ts;
    bool ts_valid, seen_trace_info;
    uint32_t cc_threshold;

    tk_etm4_packet pkt; /* the packet being built; zeroed once, then see clear_pkt() */

    /* Atom headers (0xc0-0xff, most of any instruction trace) decoded ahead of time. */
    struct {
        uint8_t type, num;
        uint32_t bits;
    } atom[64];

    /* Batch mode (tk_etm4_parser_set_batch): the compact packets held back, and the atoms
     * as compact packets (by header - 0xc0). */
    tk_etm4_batch_fn batch_fn;
    void *batch_ctx;
    size_t nlite;
    tk_etm4_pkt_lite lite[LITE_MAX];
    tk_etm4_pkt_lite atom_lite[64];
    /* Batch mode with atom runs (tk_etm4_parser_set_batch_runs), and its address packets
     * by rule number (outside AArch64 state [0], in it [1]). */
    bool runs;
    addr_rule rule[2][32];
    /* the window the run-mode walk is on (etm4_window.h, computed by window, the CPU's
     * fastest variant): valid within one call for data d of n bytes (win_d NULL: none),
     * positions c0 + [0, win_w) */
    tk_etm4_window_fn window;
    bool pext; /* the walk with pext (runs_pext): BMI2, where pext is fast */
    const uint8_t *win_d;
    size_t win_n, win_c0, win_w;
    /* its arrays, dist, len, rid, at fixed offsets from win (the walk addresses all three
     * from one register); the padded tail's window too (win_d NULL then) */
    uint8_t win[3 * WIN_STRIDE];
};

/* The long address payload of nbytes bytes at b (§6.4.13), for IS is. */
static inline uint64_t long_addr(const uint8_t *b, int nbytes, int is)
{
    uint64_t v;
    if (!is)
        v = ((uint64_t)(b[0] & 0x7f) << 2) | ((uint64_t)(b[1] & 0x7f) << 9);
    else
        v = ((uint64_t)(b[0] & 0x7f) << 1) | ((uint64_t)b[1] << 8);
    for (int i = 2; i < nbytes; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* ---- etm4_batch.c ---- */

/* Batch mode fast path: atoms, exact-match, short and long address packets straight into
 * compact records, with exactly the state changes the complete parser makes for them. Stops
 * at the first other packet (or one not complete in d), which the caller hands to the complete
 * parser. Consumes from d[*pi..n); *pi is advanced past the packets taken. at: NULL, or d holds
 * joined formatter frames with byte k at index + at[k]. */
tk_status tk_etm4_batch_run(tk_etm4_parser *p, const uint8_t *d, const uint16_t *at, size_t n,
                            uint64_t index, size_t *pi);
/* The address rules of the batch mode with atom runs (p->rule). */
void tk_etm4_build_rules(tk_etm4_parser *p);
/* Whether this CPU runs pext fast enough for the walk's build with it. */
bool tk_etm4_pext_is_fast(void);

#endif
