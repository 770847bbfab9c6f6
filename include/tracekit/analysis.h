/* SPDX-License-Identifier: BSD-2-Clause */
/* Analysis sinks: turn the trace event stream (event.h) into execution counts, a call graph,
 * line/branch coverage and the profile files that existing tools read (callgrind, FlameGraph
 * folded stacks, LLVM sample profile text, llvm-profgen unsymbolized text, BOLT
 * pre-aggregated data, JSON), and a human report.
 *
 * Work happens at block or range granularity while events stream in: an entry of a
 * TK_EV_BLOCKS batch finds its record by block id, a TK_EV_RANGE by a memo of the previous
 * range's successor or one hash lookup; taken transfers, calls and returns find their edges
 * and call-graph nodes through memos of the last ones. Per-instruction, per-block, branch and
 * function self counts are derived once, at tk_profile_finish(). */
#ifndef TRACEKIT_ANALYSIS_H
#define TRACEKIT_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "image.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- What the sinks need to know about the code, for any instruction set ---------------- */

/* What a sink needs to know about one instruction. */
typedef struct tk_code_insn {
    uint8_t len;      /* bytes */
    bool cond_branch; /* conditional branch */
    uint64_t target;  /* target of a direct branch or jump, 0 if none or not known */
} tk_code_insn;

typedef struct tk_code_view {
    void *ctx;
    /* Describe the instruction at addr. Errors: TK_ERR_NO_CODE, TK_ERR_BAD_INSN. */
    tk_status (*insn)(void *ctx, uint64_t addr, tk_code_insn *out);
    /* The function symbol covering addr, or NULL; *offset = addr - symbol start. The symbol
     * must stay valid while the view is in use. */
    const tk_symbol *(*symbolize)(void *ctx, uint64_t addr, uint64_t *offset);
} tk_code_view;

/* A view of a RISC-V program image (tk_image_fetch, tk_image_symbolize). */
void tk_code_view_from_image(tk_image *img, tk_code_view *out);

/* ---- Source lines and functions from DWARF ----------------------------------------------- */

typedef struct tk_line_table tk_line_table;

/* A function as DWARF describes it (DW_TAG_subprogram with code). */
typedef struct tk_line_func {
    const char *name;
    uint64_t low, high; /* [low, high) */
    const char *file;   /* declaring file, may be NULL */
    unsigned decl_line; /* 0 if unknown */
} tk_line_func;

/* An empty table, filled with tk_line_table_add*() (tests, non-DWARF sources). */
tk_status tk_line_table_new(tk_line_table **out);
/* Read every line-table row and subprogram of an ELF's DWARF (libdw).
 * Errors: TK_ERR_IO, TK_ERR_FORMAT (not an ELF), TK_ERR_UNSUPPORTED (no DWARF line info). */
tk_status tk_line_table_open_elf(const char *path, tk_line_table **out, tk_diag *diag);
void tk_line_table_free(tk_line_table *lt);
/* A row: addresses from addr up to the next row's address belong to file:line. A row with
 * end_sequence set ends the previous row's span (DWARF §6.2.2). */
tk_status tk_line_table_add(tk_line_table *lt, uint64_t addr, const char *file, unsigned line,
                            bool end_sequence);
tk_status tk_line_table_add_func(tk_line_table *lt, const char *name, uint64_t low, uint64_t high,
                                 const char *file, unsigned decl_line);
/* file:line of addr; TK_END if no row covers it. *file is owned by the table. */
tk_status tk_line_table_lookup(tk_line_table *lt, uint64_t addr, const char **file, unsigned *line);
/* The function whose [low, high) holds addr, or NULL. */
const tk_line_func *tk_line_table_func(tk_line_table *lt, uint64_t addr);

/* The functions, sorted by address. */
size_t tk_line_table_func_count(tk_line_table *lt);
const tk_line_func *tk_line_table_func_at(tk_line_table *lt, size_t i);

/* Every distinct (file, line) that has code, sorted by file then line. */
typedef struct tk_source_line {
    const char *file;
    unsigned line;
} tk_source_line;
size_t tk_line_table_line_count(tk_line_table *lt);
const tk_source_line *tk_line_table_line(tk_line_table *lt, size_t i);

/* ---- Events from an executed-PC list --------------------------------------------------- */

/* Turns a sequence of executed PCs (a simulator log, the reference decoder's .decoder.trace)
 * into the events an exact decoder emits: a range ends at every control-flow instruction and
 * where the next PC is not the fall-through; a jump elsewhere after a non-control-flow
 * instruction, or a branch followed by neither its target nor its fall-through, is a trap
 * (epc = the PC that would have run next). ecall/ebreak end a range with a trap. */
typedef struct tk_pc_flow tk_pc_flow;

tk_status tk_pc_flow_new(tk_image *img, tk_event_fn fn, void *ctx, tk_pc_flow **out);
/* The next executed PC. Errors: TK_ERR_NO_CODE/TK_ERR_BAD_INSN for a PC outside the image's
 * code (reported after a TK_EV_ERROR event; the flow restarts at the next PC with code),
 * or whatever the callback returned. */
tk_status tk_pc_flow_pc(tk_pc_flow *f, uint64_t pc);
/* A trap taken after the PCs so far, when the source knows it (a simulator): epc and cause
 * as the hart saw them. The next PC is the handler's first. Without this call a trap is
 * inferred from the PCs alone (cause 0, interrupt set). */
tk_status tk_pc_flow_trap(tk_pc_flow *f, uint64_t epc, uint32_t cause, bool interrupt);
/* Flush the last range. */
tk_status tk_pc_flow_finish(tk_pc_flow *f);
void tk_pc_flow_free(tk_pc_flow *f);
/* Feed a whole PC list file (one hex PC per line, optional 0x; gzip-compressed or plain).
 * Errors: TK_ERR_IO, TK_ERR_FORMAT (diag names the line), callback errors. */
tk_status tk_pc_flow_read_file(tk_pc_flow *f, const char *path, tk_diag *diag);

/* ---- The profile collector --------------------------------------------------------------- */

typedef struct tk_profile tk_profile;

/* Create a collector over code (copied). The view must outlive the profile. */
tk_status tk_profile_new(const tk_code_view *code, tk_profile **out);

/* Collection levels for tk_profile_new_flags. */
enum {
    /* Flat profile, for users that need no call graph (line, function and branch coverage,
     * self counts; `tracekit coverage` collects it). Per range or TK_EV_BLOCKS entry only
     * counters of its block are bumped, in an array indexed by block id: no shadow call
     * stack, taken edges, runs or calling contexts. Totals, instructions, blocks, branches
     * and function self counts are exactly those of the full profile, so is the lcov file.
     * The accessors of calls, edges, runs and contexts report 0 entries, inclusive counts
     * are 0, and so are the stack totals (unmatched_returns, stack_resets, max_depth).
     * A function's entries are counted with the stack's depth only: a call or trap enters
     * the callee (at any address) one level deeper, a return or xRET goes up one level (not
     * above the outermost), and flow (sequential, branch, jump, or a range running on into
     * the next symbol) into a function's first instruction from another function enters it
     * unless at the outermost level (the full profile replaces a root frame without counting
     * it). This equals the full profile's count while returns go back to the frame that
     * called (so on every reference trace); it differs where the full profile's stack
     * unwinds several frames at once or restarts (longjmp, unmatched returns), or counts a
     * jump into the middle of a function that is not on its stack as an entry. */
    TK_PROFILE_FLAT = 1u << 0,
};

/* tk_profile_new with a collection level (0: the full profile, as tk_profile_new).
 * Errors: TK_ERR_INVALID (unknown flags), TK_ERR_NOMEM. */
tk_status tk_profile_new_flags(const tk_code_view *code, unsigned flags, tk_profile **out);
/* Consume one event. A tk_event_fn: pass it with the profile as ctx to any decoder. A
 * TK_EV_BLOCKS batch gives exactly the profile its entries would give as TK_EV_RANGE events
 * (tk_block_exec_range), only faster: its blocks' ids index the profile's per-block table
 * (blocks of several images are still counted right, by address, but slower).
 * Errors: TK_ERR_NOMEM; TK_ERR_STATE after tk_profile_finish(). */
tk_status tk_profile_event(void *profile, const tk_event *ev);
/* Close open call frames and compute the derived tables (instruction, block, branch counts).
 * The tables below are complete only after it (edge, run and context counts, and function
 * entries, are partly kept elsewhere until then). Further events are refused.
 * Errors: TK_ERR_NOMEM. */
tk_status tk_profile_finish(tk_profile *p);
void tk_profile_free(tk_profile *p);

/* Totals. */
typedef struct tk_profile_totals {
    uint64_t events;     /* events consumed (a TK_EV_BLOCKS entry counts as the range event
                          * it stands for) */
    uint64_t ranges;     /* TK_EV_RANGE events and TK_EV_BLOCKS entries */
    uint64_t insns;      /* instructions executed (sum over ranges) */
    uint64_t traps;      /* TK_EV_TRAP events */
    uint64_t interrupts; /* of which interrupts */
    uint64_t lost;       /* TK_EV_LOST events */
    uint64_t errors;     /* TK_EV_ERROR events */
    uint64_t trace_on, trace_off;
    uint64_t bad_ranges; /* ranges that did not walk in the code (counted with their ninsn) */
    uint64_t unmatched_returns; /* returns the shadow stack could not match */
    uint64_t stack_resets;      /* call stack discarded (lost trace, trace off/on, context) */
    uint64_t max_depth;         /* deepest shadow call stack seen */
} tk_profile_totals;
void tk_profile_get_totals(const tk_profile *p, tk_profile_totals *out);

/* A function (a symbol; code outside any symbol is one function named "[unknown]"). */
typedef struct tk_prof_func {
    const char *name;
    uint64_t addr, size;
    uint64_t entries;   /* times entered by call, trap or tail jump from another function */
    uint64_t self;      /* instructions executed in it */
    uint64_t inclusive; /* instructions executed in it and everything it called (recursion
                         * counted once) */
} tk_prof_func;
size_t tk_profile_func_count(const tk_profile *p);
const tk_prof_func *tk_profile_func(const tk_profile *p, size_t i);

/* Call graph edge, one per call site and callee. Traps appear as calls from the trapping
 * instruction to the handler (trap set). */
typedef struct tk_prof_call {
    uint32_t caller, callee; /* function indexes */
    uint64_t site;           /* address of the calling instruction */
    uint64_t calls;
    uint64_t inclusive; /* instructions executed inside these calls (a call made while
                         * another call of this edge is active counts once) */
    bool trap;
} tk_prof_call;
size_t tk_profile_call_count(const tk_profile *p);
const tk_prof_call *tk_profile_call(const tk_profile *p, size_t i);

/* Executed instruction and its count (after finish; sorted by address). */
typedef struct tk_prof_insn {
    uint64_t addr;
    uint64_t count;
    uint32_t func;
    uint8_t len;
    bool cond_branch;
} tk_prof_insn;
size_t tk_profile_insn_count(const tk_profile *p);
const tk_prof_insn *tk_profile_insn(const tk_profile *p, size_t i);
/* Index of the executed instruction at addr, or SIZE_MAX. */
size_t tk_profile_find_insn(const tk_profile *p, uint64_t addr);

/* Basic block: instructions start..last executed as a unit. Leaders are the first
 * instructions of ranges and the instructions after conditional branches, so a block's count
 * is the execution count of its first instruction (after finish; sorted by address). */
typedef struct tk_prof_block {
    uint64_t start, last;
    uint32_t ninsn;
    uint32_t func;
    uint64_t count;
} tk_prof_block;
size_t tk_profile_block_count(const tk_profile *p);
const tk_prof_block *tk_profile_block(const tk_profile *p, size_t i);

/* Conditional branch outcomes (after finish; sorted by address). A branch whose outcome the
 * trace does not show (the trace stops after it) counts in neither. */
typedef struct tk_prof_branch {
    uint64_t addr;
    uint64_t taken, not_taken;
    uint64_t target; /* most frequent taken target, 0 if never taken */
    uint32_t func;
} tk_prof_branch;
size_t tk_profile_branch_count(const tk_profile *p);
const tk_prof_branch *tk_profile_branch(const tk_profile *p, size_t i);

/* Taken control transfers (any kind: branch, jump, call, return, trap) with counts. */
typedef struct tk_prof_edge {
    uint64_t from, to;
    uint64_t count;
    uint8_t end; /* tk_range_end of the transfer (TK_END_TRAP for traps) */
} tk_prof_edge;
size_t tk_profile_edge_count(const tk_profile *p);
const tk_prof_edge *tk_profile_edge(const tk_profile *p, size_t i);

/* Maximal sequential runs (between taken transfers) with counts, as LBR-based tools count
 * fall-through ranges. */
typedef struct tk_prof_run {
    uint64_t start, last;
    uint64_t count;
    uint64_t after_return; /* of count, the runs entered by a return (or xRET): they start
                            * after a call, inside a block as post-link tools see it */
} tk_prof_run;
size_t tk_profile_run_count(const tk_profile *p);
const tk_prof_run *tk_profile_run(const tk_profile *p, size_t i);

/* Calling-context tree: one node per distinct call path. self = instructions executed with
 * this exact stack. Parent UINT32_MAX for roots. */
typedef struct tk_prof_ctx {
    uint32_t parent;
    uint32_t func;
    uint64_t self;
} tk_prof_ctx;
size_t tk_profile_ctx_count(const tk_profile *p);
const tk_prof_ctx *tk_profile_ctx(const tk_profile *p, size_t i);

/* ---- Writers (each needs tk_profile_finish() first) -------------------------------------- */

typedef struct tk_write_options {
    size_t size;           /* sizeof(tk_write_options) */
    const char *program;   /* program path, named in the outputs */
    tk_line_table *lines;  /* source lines; required for llvm-sample and lcov */
    unsigned top;          /* report/json: rows per table (0 = 20) */
    uint64_t base;         /* autofdo: address offsets are relative to this (llvm-profgen
                            * --use-offset: the first executable segment's address) */
    const char *test_name; /* lcov TN */
    /* lcov: which source files to write (NULL: all). The tool uses it to leave out files
     * whose source is not at hand, such as a prebuilt C library's. */
    bool (*want_file)(void *ctx, const char *file);
    void *want_file_ctx;
} tk_write_options;

void tk_write_options_init(tk_write_options *o);

/* Errors of every writer: TK_ERR_STATE (not finished), TK_ERR_IO (write failed),
 * TK_ERR_NOMEM, TK_ERR_UNSUPPORTED (a source-line format without a line table). */
tk_status tk_profile_write_callgrind(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_folded(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_llvm_sample(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_autofdo(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_bolt(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_json(const tk_profile *p, FILE *out, const tk_write_options *o);
tk_status tk_profile_write_report(const tk_profile *p, FILE *out, const tk_write_options *o);
/* Line, function and branch coverage as lcov tracefile (geninfo(1) "TRACEFILE FORMAT"). */
tk_status tk_coverage_write_lcov(const tk_profile *p, FILE *out, const tk_write_options *o);

#ifdef __cplusplus
}
#endif
#endif
