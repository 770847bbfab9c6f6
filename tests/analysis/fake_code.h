/* SPDX-License-Identifier: BSD-2-Clause */
/* A small hand-made program for the analysis unit tests: instructions with their lengths,
 * control-flow kinds and targets, and function symbols, behind a tk_code_view.
 *
 *   main    0x1000: addi; call foo; addi; bnez 0x1004; ret
 *   foo     0x2000: c.addi; beqz 0x2008; c.addi; ret
 *   handler 0x3000: addi; mret
 *   never   0x4000: addi; bnez 0x4000; ret       (no run reaches it)
 * and its source lines, as if compiled from a file "prog.c" (fake_lines).
 */
#ifndef TK_TEST_FAKE_CODE_H
#define TK_TEST_FAKE_CODE_H

#include "pc_events.h"
#include "tracekit/analysis.h"

typedef struct fake_insn {
    uint64_t addr;
    uint8_t len;
    uint8_t end; /* tk_range_end when it is control flow */
    bool cond;
    uint64_t target;
} fake_insn;

static const fake_insn fake_insns[] = {
    {0x1000, 4, TK_END_NONE, false, 0},        {0x1004, 4, TK_END_CALL, false, 0x2000},
    {0x1008, 4, TK_END_NONE, false, 0},        {0x100c, 4, TK_END_BRANCH, true, 0x1004},
    {0x1010, 4, TK_END_RETURN, false, 0},      {0x2000, 2, TK_END_NONE, false, 0},
    {0x2002, 4, TK_END_BRANCH, true, 0x2008},  {0x2006, 2, TK_END_NONE, false, 0},
    {0x2008, 4, TK_END_RETURN, false, 0},      {0x3000, 4, TK_END_NONE, false, 0},
    {0x3004, 4, TK_END_TRAP_RETURN, false, 0}, {0x4000, 4, TK_END_NONE, false, 0},
    {0x4004, 4, TK_END_BRANCH, true, 0x4000},  {0x4008, 4, TK_END_RETURN, false, 0},
};

static const tk_symbol fake_syms[] = {
    {"main", 0x1000, 0x14, true},
    {"foo", 0x2000, 0xc, true},
    {"handler", 0x3000, 0x8, true},
    {"never", 0x4000, 0xc, true},
};

static inline const fake_insn *fake_find(uint64_t addr)
{
    for (size_t i = 0; i < sizeof(fake_insns) / sizeof(fake_insns[0]); i++)
        if (fake_insns[i].addr == addr)
            return &fake_insns[i];
    return NULL;
}

static inline tk_status fake_insn_fn(void *ctx, uint64_t addr, tk_code_insn *out)
{
    (void)ctx;
    const fake_insn *f = fake_find(addr);
    if (!f)
        return TK_ERR_NO_CODE;
    out->len = f->len;
    out->cond_branch = f->cond;
    out->target = f->target;
    return TK_OK;
}

static inline const tk_symbol *fake_symbolize(void *ctx, uint64_t addr, uint64_t *offset)
{
    (void)ctx;
    for (size_t i = 0; i < sizeof(fake_syms) / sizeof(fake_syms[0]); i++) {
        if (addr >= fake_syms[i].addr && addr < fake_syms[i].addr + fake_syms[i].size) {
            *offset = addr - fake_syms[i].addr;
            return &fake_syms[i];
        }
    }
    return NULL;
}

static inline tk_status fake_classify(void *ctx, uint64_t pc, unsigned *len, uint8_t *end,
                                      uint64_t *target)
{
    (void)ctx;
    const fake_insn *f = fake_find(pc);
    if (!f)
        return TK_ERR_NO_CODE;
    *len = f->len;
    *end = f->end;
    *target = f->target;
    return TK_OK;
}

static inline tk_code_view fake_view(void)
{
    tk_code_view v = {.ctx = NULL, .insn = fake_insn_fn, .symbolize = fake_symbolize};
    return v;
}

/* Source lines of the fake program, in file `file`:
 *   3 foo() {    4: c.addi, beqz    5: c.addi    6: ret
 *  10 main() {  11: addi  12: call  13: addi, bnez  14: ret
 *  20 handler { 21: addi  22: mret
 *  30 never {   31: addi, bnez  32: ret */
static inline tk_line_table *fake_lines(const char *file)
{
    static const struct {
        uint64_t addr;
        unsigned line;
    } rows[] = {{0x1000, 11}, {0x1004, 12}, {0x1008, 13}, {0x1010, 14}, {0x1014, 0},
                {0x2000, 4},  {0x2006, 5},  {0x2008, 6},  {0x200c, 0},  {0x3000, 21},
                {0x3004, 22}, {0x3008, 0},  {0x4000, 31}, {0x4008, 32}, {0x400c, 0}};
    tk_line_table *lt = NULL;
    if (tk_line_table_new(&lt) != TK_OK)
        return NULL;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        if (tk_line_table_add(lt, rows[i].addr, file, rows[i].line, rows[i].line == 0) != TK_OK)
            return NULL;
    if (tk_line_table_add_func(lt, "main", 0x1000, 0x1014, file, 10) != TK_OK ||
        tk_line_table_add_func(lt, "foo", 0x2000, 0x200c, file, 3) != TK_OK ||
        tk_line_table_add_func(lt, "handler", 0x3000, 0x3008, file, 20) != TK_OK ||
        tk_line_table_add_func(lt, "never", 0x4000, 0x400c, file, 30) != TK_OK)
        return NULL;
    return lt;
}

/* The profile of a PC sequence over the fake program. */
static inline tk_status fake_profile(const uint64_t *pcs, size_t n, tk_profile **out)
{
    tk_code_view v = fake_view();
    tk_status st = tk_profile_new(&v, out);
    if (st == TK_OK)
        st = pcev_emit(pcs, n, fake_classify, NULL, tk_profile_event, *out);
    if (st == TK_OK)
        st = tk_profile_finish(*out);
    return st;
}

/* main loops twice over "call foo": foo's beqz is taken the first time, not the second. */
static const uint64_t fake_run_plain[] = {0x1000, 0x1004, 0x2000, 0x2002, 0x2008,
                                          0x1008, 0x100c, 0x1004, 0x2000, 0x2002,
                                          0x2006, 0x2008, 0x1008, 0x100c, 0x1010};
/* The same with an interrupt after 0x2006 taken to handler, which returns with mret. */
static const uint64_t fake_run_irq[] = {0x1000, 0x1004, 0x2000, 0x2002, 0x2008, 0x1008,
                                        0x100c, 0x1004, 0x2000, 0x2002, 0x2006, 0x3000,
                                        0x3004, 0x2008, 0x1008, 0x100c, 0x1010};

/* Index of the named function in a finished profile, or SIZE_MAX. */
static inline size_t fake_func(const tk_profile *p, const char *name)
{
    for (size_t i = 0; i < tk_profile_func_count(p); i++)
        if (!strcmp(tk_profile_func(p, i)->name, name))
            return i;
    return SIZE_MAX;
}

/* The call edge caller -> callee (summed over sites), calls and inclusive. */
static inline void fake_call(const tk_profile *p, const char *caller, const char *callee,
                             uint64_t *calls, uint64_t *incl)
{
    *calls = *incl = 0;
    for (size_t i = 0; i < tk_profile_call_count(p); i++) {
        const tk_prof_call *c = tk_profile_call(p, i);
        if (!strcmp(tk_profile_func(p, c->caller)->name, caller) &&
            !strcmp(tk_profile_func(p, c->callee)->name, callee)) {
            *calls += c->calls;
            *incl += c->inclusive;
        }
    }
}

#endif
