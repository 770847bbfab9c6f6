/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace ingress port (spec ingressPort.adoc): one instruction block per record, and the
 * readers/writers of the reference flow's ingress files (spec/VERSIONS.md C.4, C.5, C.9). */
#ifndef TRACEKIT_TE_INGRESS_H
#define TRACEKIT_TE_INGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* itype codes, 2.0 numbering (spec/VERSIONS.md B.1). */
enum {
    TK_ITYPE_NONE = 0,
    TK_ITYPE_EXCEPTION = 1,
    TK_ITYPE_INTERRUPT = 2,
    TK_ITYPE_TRAP_RETURN = 3,
    TK_ITYPE_NOT_TAKEN = 4,
    TK_ITYPE_TAKEN = 5,
    TK_ITYPE_UNINF_JUMP3 = 6, /* uninferable jump, itype_width 3 only */
    TK_ITYPE_UNINF_CALL = 8,
    TK_ITYPE_INF_CALL = 9,
    TK_ITYPE_UNINF_JUMP = 10,
    TK_ITYPE_INF_JUMP = 11,
    TK_ITYPE_SWAP = 12,
    TK_ITYPE_RETURN = 13,
    TK_ITYPE_UNINF_OTHER = 14,
    TK_ITYPE_INF_OTHER = 15,
};

/* trigger bits */
enum {
    TK_TRIGGER_ON = 1u << 0,
    TK_TRIGGER_OFF = 1u << 1,
    TK_TRIGGER_NOTIFY = 1u << 2,
};

/* One ingress block. iretire counts half-words (the 2.0 multiple-retirement meaning); for
 * single retirement a block of one instruction has iretire = 1 << ilastsize. The reference
 * .encoder_input stores instruction counts instead; its reader and writer convert. */
typedef struct tk_te_block {
    uint64_t iaddr;   /* address of the first instruction of the block */
    uint64_t tval;    /* valid when itype == 1 */
    uint64_t context; /* context/hart id (valid when !nocontext) */
    uint64_t time;
    uint32_t cause; /* valid when itype is 1 or 2 */
    uint32_t iretire;
    uint8_t itype;
    uint8_t ilastsize; /* last instruction is 2^ilastsize half-words */
    uint8_t priv;
    uint8_t ctype;
    uint8_t sijump;
    uint8_t trigger; /* TK_TRIGGER_* */
    uint8_t halted;
    uint8_t reset;
} tk_te_block;

/* Address of the last instruction in a block with iretire > 0. */
static inline uint64_t tk_te_block_last_addr(const tk_te_block *b)
{
    return b->iaddr + 2u * (uint64_t)b->iretire - (2u << b->ilastsize);
}

/* ---- .encoder_input CSV (reference post-iss output) ---- */
typedef struct tk_te_ingress_reader tk_te_ingress_reader;
/* Open a reference .encoder_input file (plain or .gz). Columns are found by header name. */
tk_status tk_te_ingress_open(const char *path, tk_te_ingress_reader **out, tk_diag *diag);
/* Next block: TK_OK, TK_END at end of file, or an error with the line number in diag. */
tk_status tk_te_ingress_next(tk_te_ingress_reader *r, tk_te_block *out, tk_diag *diag);
void tk_te_ingress_close(tk_te_ingress_reader *r);
/* 1-based number of the line last read (for messages). */
uint64_t tk_te_ingress_line(const tk_te_ingress_reader *r);

/* Writer of the .encoder_input CSV with the columns the parameters imply (C.5). */
tk_status tk_te_ingress_write_header(FILE *out, const tk_te_params *p);
tk_status tk_te_ingress_write_block(FILE *out, const tk_te_params *p, const tk_te_block *b);

/* ---- spike CSV (VALID,ADDRESS,INSN,PRIVILEGE,EXCEPTION,ECAUSE,TVAL,INTERRUPT) ---- */
typedef struct tk_spike_row {
    uint64_t address;
    uint64_t insn;
    uint64_t ecause;
    uint64_t tval;
    uint8_t privilege;
    uint8_t exception;
    uint8_t interrupt;
} tk_spike_row;

typedef struct tk_spike_reader tk_spike_reader;
tk_status tk_spike_open(const char *path, tk_spike_reader **out, tk_diag *diag);
tk_status tk_spike_next(tk_spike_reader *r, tk_spike_row *out, tk_diag *diag);
void tk_spike_close(tk_spike_reader *r);
/* 1-based number of the line last read (for messages). */
uint64_t tk_spike_line(const tk_spike_reader *r);
tk_status tk_spike_write_header(FILE *out);
tk_status tk_spike_write_row(FILE *out, const tk_spike_row *row);

/* Converter from spike rows to ingress blocks, as the reference post-iss does (C.9). It holds
 * one row back because a branch's outcome is known only from the next row. */
typedef struct tk_spike_conv tk_spike_conv;
typedef struct tk_spike_conv_options {
    bool reference_quirks; /* reproduce post-iss byte-for-byte (8-bit cause/tval, xRET as 14...) */
    bool rv32;             /* decode instructions as RV32 (c.jal exists) */
} tk_spike_conv_options;
tk_status tk_spike_conv_new(const tk_te_params *p, const tk_spike_conv_options *o,
                            tk_spike_conv **out);
/* Feed one row; *ready is set when *out holds the block of the previous row. */
tk_status tk_spike_conv_push(tk_spike_conv *c, const tk_spike_row *row, tk_te_block *out,
                             bool *ready, tk_diag *diag);
/* At end of input: flush the held row (*ready tells whether *out was filled). */
tk_status tk_spike_conv_finish(tk_spike_conv *c, tk_te_block *out, bool *ready, tk_diag *diag);
/* Further blocks after a push or finish: call until *ready is false. Only the spec-faithful
 * mode ever has them: a branch after which an interrupt is taken keeps its outcome, and the
 * interrupt becomes a block of its own retiring nothing at the resume address (as the hart
 * model gives it), which are known only once the handler has returned; the rows until then
 * are held back and come out together. */
tk_status tk_spike_conv_next(tk_spike_conv *c, tk_te_block *out, bool *ready);
void tk_spike_conv_free(tk_spike_conv *c);

/* ---- multiple retirement ---- */
/* Groups single-instruction blocks (one per record, as the readers and the converter give)
 * into multi-instruction blocks of up to max_insns instructions, and those into cycles of up
 * to max_blocks blocks (2.0 blocks_p). A block ends at an instruction with a non-zero itype;
 * exception-only records, records with trigger/halted/reset, and privilege, context, ctype or
 * time changes start blocks of their own. The block after a trap or uninferable
 * discontinuity holds at most two instructions: its first instruction may emit a packet that
 * makes a resync due at the next instruction, whose address is known only if it is the last
 * (see te_encoder.h). With that, the encoder emits the same packets as for the single-retired
 * input. */
typedef struct tk_te_grouper tk_te_grouper;
tk_status tk_te_grouper_new(unsigned max_insns, unsigned max_blocks, tk_te_grouper **out);
/* Feed one single-instruction block. When a cycle is complete, *n (>0) blocks are in out
 * (room for max_blocks). */
tk_status tk_te_grouper_push(tk_te_grouper *g, const tk_te_block *in, tk_te_block *out, size_t *n);
/* At end of input: the last, possibly partial, cycle (*n may be 0). */
tk_status tk_te_grouper_finish(tk_te_grouper *g, tk_te_block *out, size_t *n);
void tk_te_grouper_free(tk_te_grouper *g);

#ifdef __cplusplus
}
#endif
#endif
