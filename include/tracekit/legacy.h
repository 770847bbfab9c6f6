/* SPDX-License-Identifier: BSD-2-Clause */
/* The seeds' two other trace formats, each with an encoder fed by the hart model's
 * retirement records (hart.h) and a decoder that emits the same trace events as the E-Trace
 * decoder (event.h), so that every analysis sink works on them:
 *
 * - The nibble trace of the RISC-V debug specification's trace module appendix (seed 001,
 *   "Trace Module"): 4-bit packets packed into 32-bit words, sequences of a header and an
 *   optional value sequence, events per instruction class under emit options, eight
 *   synchronisation points per buffer. docs/formats.md says where this implementation fills
 *   the gaps of that unfinished text.
 * - The Am29460 run-length trace (seed 003): (TRACEADDR, TRACERUN) pairs relative to the
 *   retire PC, produced through a bounded queue that throttles retirement when full.
 *
 * Encoders take tk_hart_retire records in execution order (a tk_hart_retire_fn is provided)
 * plus, for the nibble trace's data trace, the memory and CSR accesses of those records. */
#ifndef TRACEKIT_LEGACY_H
#define TRACEKIT_LEGACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "hart.h"
#include "image.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Data accesses (nibble data trace) ------------------------------------------------- */

typedef enum tk_access_kind {
    TK_ACC_LOAD = 1,
    TK_ACC_STORE = 2,
    TK_ACC_CSR_READ = 3,  /* traced as Load Data (seed 001, "CSR instructions") */
    TK_ACC_CSR_WRITE = 4, /* traced as Store Data */
} tk_access_kind;

enum {
    TK_ACC_HAVE_ADDR = 1u << 0, /* decoded access: addr is known */
    TK_ACC_HAVE_DATA = 1u << 1, /* decoded access: data is known */
};

/* One load, store or CSR access. For the encoder, rec is the index, in the batch of records
 * passed with it, of the instruction that made the access; addr is the memory address or
 * the CSR number; data is the value loaded or stored (zero-extended to 64 bits), or the CSR
 * value read or written. The decoder fills kind (load or store: CSR accesses come back as
 * data-only loads and stores), the known fields and their flags. */
typedef struct tk_access {
    uint64_t addr;
    uint64_t data;
    uint32_t rec;
    uint16_t hart;
    uint8_t kind;  /* tk_access_kind */
    uint8_t size;  /* bytes (encoder input only) */
    uint8_t flags; /* TK_ACC_HAVE_* (decoder output) */
} tk_access;

typedef tk_status (*tk_access_fn)(void *ctx, const tk_access *a);

/* ---- Nibble trace (seed 001) ------------------------------------------------------------ */

/* Emit options (the seed's emitpc, emitbranch, emitloadaddr, ...). */
enum {
    TK_NIB_PC = 1u << 0,         /* PC values: reconstruction without the program */
    TK_NIB_BRANCH = 1u << 1,     /* Branch Taken / Not Taken: reconstruction with it */
    TK_NIB_LOAD_ADDR = 1u << 2,  /* Load Address of every load in the watched region */
    TK_NIB_LOAD_DATA = 1u << 3,  /* Load Data */
    TK_NIB_STORE_ADDR = 1u << 4, /* Store Address */
    TK_NIB_STORE_DATA = 1u << 5, /* Store Data */
    TK_NIB_CSR = 1u << 6,        /* CSR reads/writes as Load/Store Data (with the data bits) */
    TK_NIB_TIMESTAMP = 1u << 7,  /* a Timestamp every timestamp_period retired instructions */
    TK_NIB_DATA_MASK = 0x7cu,    /* any of the data options (the four and csr) */
};

/* Header packets (seed 001, "Trace Sequence Header Packets"). */
enum {
    TK_NIB_H_NOP = 0x0,
    TK_NIB_H_PC = 0x1,
    TK_NIB_H_TAKEN = 0x2,
    TK_NIB_H_NOT_TAKEN = 0x3,
    TK_NIB_H_TRACE_ON = 0x4,
    TK_NIB_H_TRACE_OFF = 0x5,
    TK_NIB_H_PRIV = 0x6,
    TK_NIB_H_HART = 0x7,
    TK_NIB_H_LOAD_ADDR = 0x8,
    TK_NIB_H_STORE_ADDR = 0x9,
    TK_NIB_H_LOAD_DATA = 0xa,
    TK_NIB_H_STORE_DATA = 0xb,
    TK_NIB_H_TIMESTAMP = 0xc,
    TK_NIB_H_RESERVED = 0xd,
    TK_NIB_H_CAUSE = 0xe, /* first custom header: trap cause (our use, docs/formats.md) */
    TK_NIB_H_CUSTOM = 0xf,
};

#define TK_NIB_MIN_BUFFER_WORDS 256u

typedef struct tk_nibble_params {
    size_t size;               /* sizeof(tk_nibble_params) */
    unsigned xlen;             /* 32 or 64 */
    bool compressed;           /* C extension: PC values hold bits XLEN-1:1, else XLEN-1:2 */
    uint32_t emit;             /* TK_NIB_*; at least one of TK_NIB_PC, TK_NIB_BRANCH */
    uint32_t buffer_words;     /* trace buffer size in 32-bit words: a multiple of 8, at least
                                * TK_NIB_MIN_BUFFER_WORDS; a sync point every buffer_words / 8 */
    bool wrap;                 /* circular buffer: only the last buffer_words words are kept */
    uint64_t region_lo;        /* data trace: only accesses with region_lo <= addr < region_hi */
    uint64_t region_hi;        /* (0: every address) */
    uint64_t timestamp_period; /* with TK_NIB_TIMESTAMP (0 is taken as 1000) */
    int hart;                  /* trace only this hart (-1: the first record's) */
} tk_nibble_params;

/* Defaults: RV64 with C, PC and branch off, emit TK_NIB_BRANCH, 4096 words, no wrap. */
void tk_nibble_params_init(tk_nibble_params *p);
/* TK_ERR_CONFIG with a message for an unusable combination. */
tk_status tk_nibble_params_validate(const tk_nibble_params *p, tk_diag *diag);

/* A trace buffer as stored: the words and how many nibbles were ever written. */
typedef struct tk_nibble_trace {
    uint32_t *words;
    size_t nwords;          /* wrapped: buffer_words; else ceil(total / 8) */
    uint64_t total_nibbles; /* write pointer = total % (8 * buffer_words) when wrapped */
    bool wrapped;           /* the buffer wrapped: decode from the sync point after the
                             * write pointer */
    tk_nibble_params params;
} tk_nibble_trace;
void tk_nibble_trace_free(tk_nibble_trace *t);

/* The file format (docs/formats.md): a 32-byte header, then the words little-endian.
 * Errors: TK_ERR_IO, TK_ERR_FORMAT, TK_ERR_TRUNCATED (diag says where). A truncated file of
 * a buffer that did not wrap still fills *t with its whole words (free it), so the start of
 * a cut capture decodes; a wrapped one gives nothing. */
tk_status tk_nibble_write_file(const char *path, const tk_nibble_trace *t, tk_diag *diag);
tk_status tk_nibble_read_file(const char *path, tk_nibble_trace *t, tk_diag *diag);

typedef struct tk_nibble_encoder tk_nibble_encoder;

typedef struct tk_nibble_stats {
    uint64_t records;      /* retirement records seen (of the traced hart) */
    uint64_t retired;      /* instructions retired */
    uint64_t accesses;     /* data accesses traced (in the region, with a traced field) */
    uint64_t nibbles;      /* nibbles written, padding included */
    uint64_t nop_nibbles;  /* Nop padding before sync points */
    uint64_t data_nibbles; /* nibbles of Load/Store Address/Data sequences */
    uint64_t syncs;        /* synchronisation points written */
} tk_nibble_stats;

tk_status tk_nibble_encoder_new(const tk_nibble_params *p, tk_nibble_encoder **out);
void tk_nibble_encoder_free(tk_nibble_encoder *e);
/* Records in execution order, with the accesses they made: those the hart model put in
 * the records (maddr, mflags...: tk_sim_set_mem_trace) and those in acc (may be NULL).
 * Records of other harts than the traced one are skipped. Errors: TK_ERR_NOMEM,
 * TK_ERR_STATE after finish, TK_ERR_INVALID (a PC that the PC format cannot hold, an
 * access index out of range), TK_ERR_OVERFLOW (too many accesses for one record). */
tk_status tk_nibble_encoder_push(tk_nibble_encoder *e, const tk_hart_retire *recs, size_t n,
                                 const tk_access *acc, size_t nacc);
/* tk_hart_retire_fn adapter (no accesses): pass the encoder as ctx. */
tk_status tk_nibble_encoder_retire(void *enc, const tk_hart_retire *recs, size_t n);
/* End the trace. have_next/next_pc: where the traced hart goes after the last record (the
 * hart model's pc), which the last record's jump or trap needs; without it a last record
 * whose successor the instruction does not tell is left out. */
tk_status tk_nibble_encoder_finish(tk_nibble_encoder *e, bool have_next, uint64_t next_pc);
/* The buffer (valid until the encoder is freed; after finish). */
const tk_nibble_trace *tk_nibble_encoder_trace(const tk_nibble_encoder *e);
void tk_nibble_encoder_get_stats(const tk_nibble_encoder *e, tk_nibble_stats *out);

/* One sequence of the stream, for dumps. */
typedef struct tk_nibble_seq {
    uint64_t offset;  /* nibble offset in the stream (from the first decoded nibble) */
    uint8_t header;   /* TK_NIB_H_* */
    uint8_t nnibbles; /* value nibbles (0: no value sequence) */
    uint8_t arg;      /* the single packet after Trace Enabled / Privilege Level */
    bool sync_point;  /* the sequence starts at a synchronisation point */
    uint64_t raw;     /* the value nibbles as sent */
} tk_nibble_seq;
typedef tk_status (*tk_nibble_seq_fn)(void *ctx, const tk_nibble_seq *s);
/* Split a trace into sequences (from the right sync point when wrapped); Nops are
 * reported too. Errors: TK_ERR_TRUNCATED at a cut sequence, TK_ERR_BAD_PACKET for the
 * reserved header. */
tk_status tk_nibble_scan(const tk_nibble_trace *t, tk_nibble_seq_fn fn, void *ctx, tk_diag *diag);

typedef struct tk_nibble_decoder tk_nibble_decoder;
typedef struct tk_nibble_decoder_stats {
    uint64_t sequences, instructions, traps, accesses, errors, resyncs;
    uint64_t start_nibble; /* where decoding started (a sync point when wrapped) */
} tk_nibble_decoder_stats;

/* img may be NULL with TK_NIB_PC and without TK_NIB_BRANCH: ranges then have exact first,
 * last and next addresses but ninsn is only known for 4-byte-only code (compressed false,
 * else 0) and every transfer is a TK_END_JUMP. afn (may be NULL) receives the accesses.
 * Errors: TK_ERR_CONFIG (branch trace without img), TK_ERR_NOMEM. */
tk_status tk_nibble_decoder_new(const tk_nibble_params *p, tk_image *img, tk_event_fn fn, void *ctx,
                                tk_access_fn afn, void *actx, tk_nibble_decoder **out);
void tk_nibble_decoder_free(tk_nibble_decoder *d);
/* Decode a whole buffer. Mismatches and bad sequences become TK_EV_ERROR events and the
 * decoder waits for the next sync point; the callback's error stops it and is returned. */
tk_status tk_nibble_decoder_run(tk_nibble_decoder *d, const tk_nibble_trace *t);
void tk_nibble_decoder_get_stats(const tk_nibble_decoder *d, tk_nibble_decoder_stats *out);

/* ---- Am29460 run-length trace (seed 003) ------------------------------------------------ */

typedef struct tk_rle_params {
    size_t size;           /* sizeof(tk_rle_params) */
    unsigned xlen;         /* 32 or 64: TRACEADDR holds address bits XLEN-1:1 */
    unsigned run_bits;     /* TRACERUN width, 1..32 (default 8) */
    unsigned depth;        /* queue entries between the reorder buffer and the pins (>= 1) */
    unsigned retire_width; /* instructions the core retires per clock (default 2) */
    unsigned trace_div;    /* core clocks per TRACECLK: one pair leaves per TRACECLK */
    int hart;              /* trace only this hart (-1: the first record's) */
} tk_rle_params;

void tk_rle_params_init(tk_rle_params *p);
tk_status tk_rle_params_validate(const tk_rle_params *p, tk_diag *diag);

typedef struct tk_rle_pair {
    uint64_t addr; /* TRACEADDR */
    uint32_t run;  /* TRACERUN */
} tk_rle_pair;

typedef struct tk_rle_stats {
    uint64_t retired;          /* instructions retired */
    uint64_t pairs;            /* pairs queued (redirect, run and split pairs) */
    uint64_t zero_runs;        /* pairs with TRACERUN 0 (redirects without retirement) */
    uint64_t clocks;           /* core clocks of the retirement model */
    uint64_t idle_pairs;       /* TRACECLKs with an empty queue (TRACERUN 0, TRACEADDR kept) */
    uint64_t throttled_clocks; /* clocks retirement waited for a queue entry */
    uint64_t throttle_events;  /* times retirement had to wait */
    uint32_t max_fill;         /* highest queue occupancy */
} tk_rle_stats;

/* Bits of one pair on the pins / in the file: (xlen - 1) + run_bits. */
unsigned tk_rle_pair_bits(const tk_rle_params *p);

typedef struct tk_rle_encoder tk_rle_encoder;
tk_status tk_rle_encoder_new(const tk_rle_params *p, tk_rle_encoder **out);
void tk_rle_encoder_free(tk_rle_encoder *e);
tk_status tk_rle_encoder_push(tk_rle_encoder *e, const tk_hart_retire *recs, size_t n);
tk_status tk_rle_encoder_retire(void *enc, const tk_hart_retire *recs, size_t n);
tk_status tk_rle_encoder_finish(tk_rle_encoder *e, bool have_next, uint64_t next_pc);
/* The pairs (after finish), in order; the first is the start address with run 0. */
const tk_rle_pair *tk_rle_encoder_pairs(const tk_rle_encoder *e, size_t *n);
void tk_rle_encoder_get_stats(const tk_rle_encoder *e, tk_rle_stats *out);

/* File: a 32-byte header, then each pair in ceil(pair_bits / 8) bytes, little-endian
 * TRACEADDR (address >> 1) in the low bits and TRACERUN above it. */
tk_status tk_rle_write_file(const char *path, const tk_rle_params *p, const tk_rle_pair *pairs,
                            size_t n, tk_diag *diag);
/* *pairs is malloc'd. Errors: TK_ERR_IO, TK_ERR_FORMAT, TK_ERR_TRUNCATED: then *pairs and *n
 * hold the whole pairs before the cut (free *pairs), diag says where it is. */
tk_status tk_rle_read_file(const char *path, tk_rle_params *p, tk_rle_pair **pairs, size_t *n,
                           tk_diag *diag);

/* Decode pairs with the program (run-length trace needs instruction lengths and classes).
 * Traps show as redirects after a non-jump: they are reported as the PC-only flow does
 * (interrupt, cause 0, epc the fall-through). */
tk_status tk_rle_decode(const tk_rle_params *p, tk_image *img, const tk_rle_pair *pairs, size_t n,
                        tk_event_fn fn, void *ctx, uint64_t *instructions);

/* ---- Spike CSV rows as retirement records (the encoders' file input) ------------------ */

/* The record of a spike CSV row (VERSIONS.md C.4), given where the next row starts (a
 * branch's outcome; have_next false at the end). A row flagged interrupt is taken as a
 * retired instruction with the interrupt after it (what tk_hart_retire_to_spike writes for
 * one); its epc is the instruction's fall-through or direct target. */
void tk_legacy_retire_from_spike(const tk_spike_row *row, bool have_next, uint64_t next_pc,
                                 unsigned xlen, tk_hart_retire *out);

#ifdef __cplusplus
}
#endif
#endif
