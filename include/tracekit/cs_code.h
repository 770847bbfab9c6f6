/* SPDX-License-Identifier: BSD-2-Clause */
/* The code of a CoreSight snapshot as the analysis sinks see it (tk_code_view, analysis.h), so
 * that profiles, coverage and reports work on ETMv4 trace as on E-Trace: instruction sizes,
 * conditional branches and direct targets come from the Arm classifier over the core's memory
 * images; functions come from an ELF's symbol table where it has one, and elsewhere from the
 * flow itself: every call target and exception handler the trace enters is a function (named
 * sub_<address>) that runs up to the next one. Memory dumps have no symbols, and a profile with
 * all code in one function has no call graph to show. */
#ifndef TRACEKIT_CS_CODE_H
#define TRACEKIT_CS_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"
#include "coresight.h"
#include "event.h"
#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_cs_code tk_cs_code;

/* A view with no memory yet (tk_cs_code_set_mem before it is asked about code). */
tk_status tk_cs_code_new(tk_cs_code **out);
void tk_cs_code_free(tk_cs_code *c);

/* The memory images (borrowed) and the instruction set of their code (tk_event.isa: 0 A64,
 * 1 A32, 2 T32), but where tk_cs_code_learn saw ranges of another one. Errors: TK_ERR_INVALID
 * (unknown instruction set). */
tk_status tk_cs_code_set_mem(tk_cs_code *c, const tk_cs_mem *mem, uint8_t isa);

/* Functions from the symbol table of img (borrowed; tk_image_open_elf_any): where img has a
 * function symbol it is the function, and no function is inferred inside one. NULL: none. */
void tk_cs_code_set_symbols(tk_cs_code *c, const tk_image *img);

/* A tk_event_fn for a first pass over the trace: notes the first address of every range that
 * follows a call (TK_END_CALL) or an exception (TK_EV_TRAP) as a function entry (events of
 * other kinds only break the chain: after lost trace the next range is not the callee), and
 * the code of ranges in another instruction set than the first range's (A32/T32
 * interworking), which is then walked in its own. Errors: TK_ERR_NOMEM. */
tk_status tk_cs_code_learn(void *code, const tk_event *ev);
/* Learn into c what later learned (with tk_cs_code_learn) from the events that follow those
 * c learned from, as if c had been given them itself: so that pieces of a trace can be learned
 * on several threads and joined in trace order. Errors: TK_ERR_UNSUPPORTED when later saw code
 * of another instruction set than c's first range's (learn that trace into c itself),
 * TK_ERR_INVALID (either was looked up in already), TK_ERR_NOMEM. */
tk_status tk_cs_code_learn_after(tk_cs_code *c, const tk_cs_code *later);
/* A function entry of its own (e.g. where the trace starts). Errors: TK_ERR_NOMEM. */
tk_status tk_cs_code_add_entry(tk_cs_code *c, uint64_t addr);
/* Functions inferred so far (distinct entries). */
size_t tk_cs_code_entry_count(const tk_cs_code *c);

/* The view over c (valid while c lives). The inferred functions are fixed at the view's first
 * symbol lookup: entries learned after that are ignored. */
void tk_cs_code_view(tk_cs_code *c, tk_code_view *out);

#ifdef __cplusplus
}
#endif
#endif
