/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector against itself. The input drives a flow of events over the program
 * of tests/analysis/fake_code.h: ranges from where the flow is to a control transfer or a
 * byte-chosen stop, with byte-chosen branch outcomes, unstated outcomes, jumps anywhere,
 * ranges that do not match the code, traps, lost trace, trace off/on and context changes.
 * The events go as they are to a profile with its fast paths and to one with the general
 * path only (tk_prof_set_general_only), and with the ranges as TK_EV_BLOCKS batches (length
 * from the input; some blocks "of another image", reusing an id) to a third. The three must
 * write the same JSON (totals, functions, calls, branches, blocks, contexts) and have the
 * same taken edges and runs, which the JSON leaves out. */
#include "fuzz_common.h"

#include "analysis/fake_blocks.h"
#include "analysis/fake_code.h"
#include "analysis/profile_internal.h"

static const uint64_t starts[] = {0x1000, 0x1004, 0x1008, 0x100c, 0x1010, 0x2000, 0x2002,
                                  0x2006, 0x2008, 0x3000, 0x3004, 0x4000, 0x4004, 0x4008};
#define NSTARTS (sizeof(starts) / sizeof(starts[0]))

typedef struct sinks {
    tk_profile *fast, *general, *blocks;
    fake_blockset set;
    tk_block_exec batch[FAKE_MAX_BLOCKS];
    size_t n, max;
} sinks;

static void flush(sinks *s)
{
    if (!s->n)
        return;
    const tk_event bt = {.kind = TK_EV_BLOCKS, .blocks = s->batch, .nblocks = s->n};
    TK_FUZZ_CHECK(tk_profile_event(s->blocks, &bt) == TK_OK);
    s->n = 0;
}

/* A non-range event to all three (the batch so far first). */
static void other(sinks *s, const tk_event *ev)
{
    flush(s);
    TK_FUZZ_CHECK(tk_profile_event(s->fast, ev) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_event(s->general, ev) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_event(s->blocks, ev) == TK_OK);
}

static void range(sinks *s, uint64_t first, uint64_t last, uint32_t ninsn, uint8_t end, bool taken,
                  bool other_image)
{
    const tk_event ev = {.kind = TK_EV_RANGE,
                         .first = first,
                         .last = last,
                         .ninsn = ninsn,
                         .end = end,
                         .taken = taken};
    TK_FUZZ_CHECK(tk_profile_event(s->fast, &ev) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_event(s->general, &ev) == TK_OK);
    const tk_bblock *b = fake_block_of(&s->set, first, last, ninsn, other_image);
    TK_FUZZ_CHECK(b != NULL); /* the program has fewer distinct ranges than the set holds */
    s->batch[s->n++] =
        (tk_block_exec){.block = b, .next = 0, .end = end, .taken = taken, .indirect = 0};
    if (s->n == s->max)
        flush(s);
}

static char *json(const tk_profile *p, size_t *len)
{
    char *t = NULL;
    FILE *f = open_memstream(&t, len);
    TK_FUZZ_CHECK(f != NULL);
    tk_write_options o;
    tk_write_options_init(&o);
    o.program = "prog.elf";
    TK_FUZZ_CHECK(tk_profile_write_json(p, f, &o) == TK_OK);
    fclose(f);
    return t;
}

/* The taken edges and runs of a and b, field by field, in the same order. */
static void same_edges_runs(const tk_profile *a, const tk_profile *b)
{
    TK_FUZZ_CHECK(tk_profile_edge_count(a) == tk_profile_edge_count(b));
    for (size_t i = 0; i < tk_profile_edge_count(a); i++) {
        const tk_prof_edge *x = tk_profile_edge(a, i), *y = tk_profile_edge(b, i);
        TK_FUZZ_CHECK(x->from == y->from && x->to == y->to && x->count == y->count &&
                      x->end == y->end);
    }
    TK_FUZZ_CHECK(tk_profile_run_count(a) == tk_profile_run_count(b));
    for (size_t i = 0; i < tk_profile_run_count(a); i++) {
        const tk_prof_run *x = tk_profile_run(a, i), *y = tk_profile_run(b, i);
        TK_FUZZ_CHECK(x->start == y->start && x->last == y->last && x->count == y->count &&
                      x->after_return == y->after_return);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_code_view v = fake_view();
    sinks s = {.n = 0};
    s.max = 1 + tk_fuzz_u8(&in) % FAKE_MAX_BLOCKS;
    TK_FUZZ_CHECK(tk_profile_new(&v, &s.fast) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_new(&v, &s.general) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_new(&v, &s.blocks) == TK_OK);
    tk_prof_set_general_only(s.general, true);
    uint64_t pc = 0x1000;
    /* Long inputs add nothing the first 4096 steps do not. */
    for (unsigned step = 0; in.n && step < 4096; step++) {
        const uint8_t op = tk_fuzz_u8(&in);
        tk_event ev = {.kind = TK_EV_LOST};
        switch (op & 15) {
        case 0:
            other(&s, &ev);
            pc = starts[tk_fuzz_u8(&in) % NSTARTS];
            continue;
        case 1:
            ev.kind = (op & 16) ? TK_EV_TRACE_ON : TK_EV_TRACE_OFF;
            other(&s, &ev);
            continue;
        case 2:
            ev.kind = TK_EV_CONTEXT;
            ev.context = tk_fuzz_u8(&in) % 3;
            other(&s, &ev);
            continue;
        case 3: /* a trap (epc where the flow is) into the handler */
            ev.kind = TK_EV_TRAP;
            ev.first = pc;
            ev.cause = 2;
            ev.interrupt = (op >> 4) & 1;
            other(&s, &ev);
            pc = 0x3000;
            continue;
        case 4: /* ranges that do not match the code */
            if (op & 16)
                range(&s, 0x5000, 0x5010, 5, TK_END_JUMP, false, op & 32);
            else
                range(&s, 0x1006, 0x100c, 3, TK_END_BRANCH, true, op & 32);
            pc = starts[tk_fuzz_u8(&in) % NSTARTS];
            continue;
        case 5: /* the flow goes on somewhere else, without an event */
            pc = starts[tk_fuzz_u8(&in) % NSTARTS];
            continue;
        default:
            break;
        }
        /* A range from pc: up to its control transfer, or stopped after stop instructions
         * (1-3; 0: no stop) with the end the input gives. */
        const fake_insn *f = fake_find(pc);
        TK_FUZZ_CHECK(f != NULL);
        const uint64_t first = pc;
        unsigned stop = (op >> 4) & 3;
        uint32_t n = 1;
        while (f->end == TK_END_NONE && n != stop) {
            f = fake_find(f->addr + f->len);
            n++;
        }
        const uint8_t arg = tk_fuzz_u8(&in);
        uint8_t end = f->end;
        bool taken = false;
        uint64_t next = f->addr + f->len;
        if (end == TK_END_NONE) {
            static const uint8_t ends[] = {TK_END_NONE, TK_END_TRAP, TK_END_JUMP};
            end = ends[arg % 3];
        } else if (end == TK_END_BRANCH) {
            taken = arg & 1;
            next = taken ? f->target : next;
            if (arg & 2) {
                end = TK_END_JUMP; /* the outcome left to what follows */
                taken = false;
            }
        } else if (end == TK_END_CALL) {
            next = f->target;
        } else {
            next = starts[(arg >> 2) % NSTARTS]; /* a return or xRET: anywhere */
        }
        range(&s, first, f->addr, n, end, taken, (op >> 6) & 1);
        pc = next;
    }
    flush(&s);
    TK_FUZZ_CHECK(tk_profile_finish(s.fast) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_finish(s.general) == TK_OK);
    TK_FUZZ_CHECK(tk_profile_finish(s.blocks) == TK_OK);
    size_t nf, ng, nb;
    char *jf = json(s.fast, &nf), *jg = json(s.general, &ng), *jb = json(s.blocks, &nb);
    TK_FUZZ_CHECK(nf == ng && !memcmp(jf, jg, nf));
    TK_FUZZ_CHECK(nf == nb && !memcmp(jf, jb, nf));
    same_edges_runs(s.fast, s.general);
    same_edges_runs(s.fast, s.blocks);
    free(jf);
    free(jg);
    free(jb);
    tk_profile_free(s.fast);
    tk_profile_free(s.general);
    tk_profile_free(s.blocks);
    return 0;
}
