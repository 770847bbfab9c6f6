/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder: hand-built packet sequences over tiny hand-encoded programs. Each
 * test states the program, the packets an encoder following the spec's algorithm sends for
 * one execution of it, and the instructions that execution retired. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/te_decoder.h"

/* ---- RV32I/RV64I encodings ---- */
#define ENC_I(op, rd, rs1, imm)                                                                    \
    ((((uint32_t)(imm)) & 0xfffu) << 20 | (rs1) << 15 | (rd) << 7 | (op))
#define NOP ENC_I(0x13u, 0u, 0u, 0)
#define JALR(rd, rs1, imm) ENC_I(0x67u, rd, rs1, imm)
#define JAL(rd, imm)                                                                               \
    ((((uint32_t)(imm) >> 20) & 1u) << 31 | (((uint32_t)(imm) >> 1) & 0x3ffu) << 21 |              \
     (((uint32_t)(imm) >> 11) & 1u) << 20 | (((uint32_t)(imm) >> 12) & 0xffu) << 12 | (rd) << 7 |  \
     0x6fu)
#define BRANCH(f3, rs1, rs2, imm)                                                                  \
    ((((uint32_t)(imm) >> 12) & 1u) << 31 | (((uint32_t)(imm) >> 5) & 0x3fu) << 25 | (rs2) << 20 | \
     (rs1) << 15 | (f3) << 12 | (((uint32_t)(imm) >> 1) & 0xfu) << 8 |                             \
     (((uint32_t)(imm) >> 11) & 1u) << 7 | 0x63u)
#define BEQ(rs1, rs2, off) BRANCH(0u, rs1, rs2, off)
#define BNE(rs1, rs2, off) BRANCH(1u, rs1, rs2, off)
#define ECALL 0x00000073u

#define BASE 0x80000000ull
#define MAX_PCS 512
#define MAX_EVS 64

/* ---- test harness: an image from a word list, a recording event sink ---- */
typedef struct rec {
    tk_image *img;
    uint64_t pcs[MAX_PCS];
    size_t npcs;
    tk_event evs[MAX_EVS];
    size_t nevs;
    size_t nerrors;
    tk_te_params p;
    tk_te_decoder *d;
    uint64_t last_addr; /* for differential addresses */
    uint64_t index;
} rec;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    rec *r = ctx;
    if (ev->kind == TK_EV_RANGE) {
        /* all test programs use 4-byte instructions */
        assert_int_equal(ev->last, ev->first + 4 * (ev->ninsn - 1));
        for (uint64_t i = 0; i < ev->ninsn; i++) {
            assert_true(r->npcs < MAX_PCS);
            r->pcs[r->npcs++] = ev->first + 4 * i;
        }
    }
    if (ev->kind == TK_EV_ERROR)
        r->nerrors++;
    assert_true(r->nevs < MAX_EVS);
    r->evs[r->nevs] = *ev;
    r->evs[r->nevs].message = NULL;
    r->nevs++;
    return TK_OK;
}

static void setup(rec *r, const uint32_t *code, size_t n, unsigned lsb)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &r->img), TK_OK);
    uint8_t bytes[4 * 64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    assert_int_equal(tk_image_add_region(r->img, BASE, bytes, 4 * n), TK_OK);
    tk_te_params_init(&r->p);
    r->p.s.iaddress_width = 64;
    r->p.s.iaddress_lsb = lsb;
    r->p.s.return_stack_size = 0;
    r->p.s.call_counter_size = 0;
    assert_int_equal(tk_te_decoder_new(&r->p, r->img, on_event, r, &r->d), TK_OK);
}

static void teardown_rec(rec *r)
{
    tk_te_decoder_free(r->d);
    tk_image_free(r->img);
}

static void feed(rec *r, const tk_te_packet *pkt)
{
    assert_int_equal(tk_te_decoder_packet(r->d, pkt, r->index * 4, r->index), TK_OK);
    r->index++;
}

static void support(rec *r, unsigned qual, uint32_t ioptions)
{
    tk_te_packet s = {.format = 3,
                      .subformat = 3,
                      .ienable = qual == 0,
                      .qual_status = qual,
                      .ioptions = ioptions};
    feed(r, &s);
}

static void sync_start(rec *r, uint64_t addr, unsigned branch)
{
    tk_te_packet s = {.format = 3,
                      .subformat = 0,
                      .branch = branch,
                      .privilege = 3,
                      .address = addr >> r->p.s.iaddress_lsb};
    r->last_addr = addr;
    feed(r, &s);
}

static void trap(rec *r, uint64_t addr, unsigned thaddr, unsigned cause, unsigned interrupt)
{
    tk_te_packet s = {.format = 3,
                      .subformat = 1,
                      .branch = 1,
                      .privilege = 3,
                      .ecause = cause,
                      .interrupt = interrupt,
                      .thaddr = thaddr,
                      .address = addr >> r->p.s.iaddress_lsb};
    r->last_addr = addr;
    feed(r, &s);
}

static uint64_t addr_field(rec *r, uint64_t addr, bool full)
{
    const unsigned aw = r->p.s.iaddress_width - r->p.s.iaddress_lsb;
    const uint64_t mask = aw >= 64 ? ~0ull : (1ull << aw) - 1;
    const uint64_t v = full ? addr : addr - r->last_addr;
    r->last_addr = addr;
    return (v >> r->p.s.iaddress_lsb) & mask;
}

/* F1 with address (branches != 0) or F2 (branches == 0 and no map). */
static void addr_pkt(rec *r, unsigned branches, uint32_t map, uint64_t addr, bool updiscon,
                     bool full)
{
    tk_te_packet s = {.format = branches ? 1 : 2,
                      .branches = branches,
                      .branch_map = map,
                      .has_address = true,
                      .address = addr_field(r, addr, full),
                      .updiscon = updiscon};
    feed(r, &s);
}

static void expect_pcs(rec *r, const uint64_t *want, size_t n)
{
    for (size_t i = 0; i < n && i < r->npcs; i++)
        if (r->pcs[i] != want[i])
            fail_msg("pc %zu: got 0x%llx, want 0x%llx", i, (unsigned long long)r->pcs[i],
                     (unsigned long long)want[i]);
    assert_int_equal(r->npcs, n);
}

static const tk_event *find_event(rec *r, uint16_t kind, size_t nth)
{
    for (size_t i = 0; i < r->nevs; i++)
        if (r->evs[i].kind == kind && nth-- == 0)
            return &r->evs[i];
    return NULL;
}

#define A(i) (BASE + 4 * (i))

/* ---- branches taken and not taken ---- */
static void test_branches(void **state)
{
    (void)state;
    const uint32_t code[] = {
        NOP,             /* 0 */
        BEQ(0u, 0u, 8),  /* 1: taken -> 3 */
        NOP,             /* 2 */
        BNE(1u, 0u, 8),  /* 3: not taken */
        NOP,             /* 4 */
        JALR(0u, 6u, 0), /* 5: -> 16 (x6 holds A(16)) */
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP, /* 16 */
        NOP,
    };
    rec r;
    setup(&r, code, sizeof(code) / 4, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    /* the jalr's target is reported with the two branches: taken (0), not taken (1) */
    addr_pkt(&r, 2, 0x2, A(16), false, false);
    support(&r, 1, 0); /* qualification ended: the last reported instruction was the last */
    assert_int_equal(tk_te_decoder_finish(r.d), TK_OK);

    const uint64_t want[] = {A(0), A(1), A(3), A(4), A(5), A(16)};
    expect_pcs(&r, want, 6);
    const tk_event *e = find_event(&r, TK_EV_RANGE, 0);
    assert_non_null(e);
    assert_int_equal(e->end, TK_END_BRANCH);
    assert_true(e->taken);
    assert_int_equal(e->next, A(3));
    e = find_event(&r, TK_EV_RANGE, 1);
    assert_int_equal(e->end, TK_END_BRANCH);
    assert_false(e->taken);
    assert_int_equal(e->next, A(4));
    e = find_event(&r, TK_EV_RANGE, 2);
    assert_int_equal(e->first, A(4));
    assert_int_equal(e->ninsn, 2);
    assert_int_equal(e->end, TK_END_JUMP);
    assert_true(e->indirect);
    assert_int_equal(e->next, A(16));
    assert_non_null(find_event(&r, TK_EV_TRACE_ON, 0));
    assert_non_null(find_event(&r, TK_EV_TRACE_OFF, 0));
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* A loop whose back edge is uninferable: looplabel (1) is reached first by falling through
 * from 0, then again through the jalr at 3 (payload.adoc, format 2 notify/updiscon). */
static const uint32_t loop_code[] = {
    NOP,             /* 0: looplabel - 4 */
    NOP,             /* 1: looplabel */
    NOP,             /* 2 */
    JALR(0u, 6u, 0), /* 3: jump to looplabel (2nd time: to 8) */
    NOP,
    NOP,
    NOP,
    NOP,
    NOP, /* 8: exit */
    NOP,
};

/* Scenario 1: looplabel reported after the 1st iteration, then execution goes on: the
 * decoder stops at the first visit (inferred), and the next packet sends it round again. */
static void test_looplabel_inferred(void **state)
{
    (void)state;
    rec r;
    setup(&r, loop_code, sizeof(loop_code) / 4, 0);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), false, false); /* after jalr -> looplabel */
    addr_pkt(&r, 0, 0, A(8), false, false); /* after jalr -> exit */
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(2), A(3), A(1), A(2), A(3), A(8)};
    expect_pcs(&r, want, 8);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Scenario 2: the packet reporting looplabel has updiscon set (an exception at looplabel+4
 * of the 2nd iteration follows): the decoder must not stop at the 1st visit. The trap
 * packet's EPC is then looplabel+4 and the handler (at 8) is the next instruction. */
static void test_looplabel_updiscon_trap(void **state)
{
    (void)state;
    rec r;
    setup(&r, loop_code, sizeof(loop_code) / 4, 0);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), true, false);
    trap(&r, A(8), 1, 5, 0);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(2), A(3), A(1), A(8)};
    expect_pcs(&r, want, 6);
    const tk_event *t = find_event(&r, TK_EV_TRAP, 0);
    assert_non_null(t);
    assert_int_equal(t->first, A(2)); /* EPC: looplabel + 4, which did not retire */
    assert_int_equal(t->next, A(8));
    assert_int_equal(t->cause, 5);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Without updiscon, the same first packet followed by the trap means the exception came
 * right after the 1st visit (scenario 3). */
static void test_looplabel_trap_first_visit(void **state)
{
    (void)state;
    rec r;
    setup(&r, loop_code, sizeof(loop_code) / 4, 0);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), false, false);
    trap(&r, A(8), 1, 5, 0);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(8)};
    expect_pcs(&r, want, 3);
    assert_int_equal(find_event(&r, TK_EV_TRAP, 0)->first, A(2));
    teardown_rec(&r);
}

/* ecall retires and traps itself: EPC is the ecall. */
static void test_ecall_thaddr1(void **state)
{
    (void)state;
    const uint32_t code[] = {NOP, NOP, ECALL, NOP, NOP, NOP};
    rec r;
    setup(&r, code, 6, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(2), false, false); /* retire and exception together: report it */
    trap(&r, A(4), 1, 11, 0);
    addr_pkt(&r, 0, 0, A(5), false, false);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(2), A(4), A(5)};
    expect_pcs(&r, want, 5);
    const tk_event *rg = find_event(&r, TK_EV_RANGE, 0);
    assert_int_equal(rg->last, A(2));
    assert_int_equal(rg->end, TK_END_TRAP);
    const tk_event *t = find_event(&r, TK_EV_TRAP, 0);
    assert_int_equal(t->first, A(2));
    assert_int_equal(t->next, A(4));
    assert_int_equal(t->cause, 11);
    teardown_rec(&r);
}

/* An exception at the target of an uninferable jump: the trap packet carries the EPC with
 * thaddr=0, and the handler comes with the next format 3 subformat 0. */
static void test_trap_thaddr0(void **state)
{
    (void)state;
    const uint32_t code[] = {
        NOP,             /* 0 */
        JALR(0u, 5u, 0), /* 1: -> 4, which faults */
        NOP,
        NOP,
        NOP, /* 4: faulting target */
        NOP,
        NOP,
        NOP,
        NOP, /* 8: handler */
        NOP,
    };
    rec r;
    setup(&r, code, 10, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), false, false); /* next is an exception: report the jalr */
    trap(&r, A(4), 0, 1, 0);                /* instruction access fault at A(4) */
    sync_start(&r, A(8), 1);                /* the handler's first instruction */
    addr_pkt(&r, 0, 0, A(9), false, false);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(8), A(9)};
    expect_pcs(&r, want, 4);
    const tk_event *t = find_event(&r, TK_EV_TRAP, 0);
    assert_int_equal(t->first, A(4));
    assert_int_equal(t->next, 0);
    const tk_event *rg = find_event(&r, TK_EV_RANGE, 0);
    assert_int_equal(rg->last, A(1));
    assert_int_equal(rg->next, A(4));
    assert_true(rg->indirect);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Full address mode (ioptions bit 2): F1/F2 carry absolute addresses. */
static void test_full_address(void **state)
{
    (void)state;
    const uint32_t code[] = {
        BEQ(0u, 0u, 12), /* 0: taken -> 3 */
        NOP,
        NOP,
        JALR(0u, 5u, 0), /* 3: -> 6 */
        NOP,
        NOP,
        JAL(0u, -24), /* 6: -> 0 */
        NOP,
    };
    rec r;
    setup(&r, code, 8, 0);
    support(&r, 0, TK_TE_IOPT_FULL_ADDRESS);
    sync_start(&r, A(0), 0); /* the sync's own instruction is a taken branch */
    addr_pkt(&r, 0, 0, A(6), false, true);
    /* round again: beq not taken this time, falls to 1, 2, jalr -> 7 */
    addr_pkt(&r, 1, 1, A(7), false, true);
    support(&r, 1, TK_TE_IOPT_FULL_ADDRESS);
    const uint64_t want[] = {A(0), A(3), A(6), A(0), A(1), A(2), A(3), A(7)};
    expect_pcs(&r, want, 8);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* A branch map without address (31 branches): the decoder stops at the 31st branch, whose
 * outcome comes with the next packet. */
static void test_map_without_address(void **state)
{
    (void)state;
    const uint32_t code[] = {
        NOP,             /* 0 */
        BNE(1u, 0u, -4), /* 1: loop to 0 while taken */
        JALR(0u, 5u, 0), /* 2: -> 4 */
        NOP,
        NOP, /* 4 */
        NOP,
    };
    rec r;
    setup(&r, code, 6, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    /* 31 taken branches (bits 0), no address: the decoder stops at the 31st branch */
    tk_te_packet f1 = {.format = 1, .branches = 0, .branch_map = 0};
    feed(&r, &f1);
    assert_int_equal(r.npcs, 2 * 30); /* 0..31st branch reached, the last pair not emitted yet */
    /* then one more taken, one not taken, and the jalr's target */
    addr_pkt(&r, 2, 0x2, A(4), false, false);
    support(&r, 1, 0);
    uint64_t want[1 + 64 + 3];
    size_t n = 0;
    want[n++] = A(0);
    for (int i = 0; i < 32; i++) {
        want[n++] = A(1);
        want[n++] = A(0);
    }
    want[n++] = A(1);
    want[n++] = A(2);
    want[n++] = A(4);
    expect_pcs(&r, want, n);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Restart after qualification ends: a new sync starts a new flow. */
static void test_restart(void **state)
{
    (void)state;
    const uint32_t code[] = {NOP, NOP, JALR(0u, 5u, 0), NOP, NOP, NOP};
    rec r;
    setup(&r, code, 6, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), false, false);
    support(&r, 1, 0);
    support(&r, 0, 0);
    sync_start(&r, A(4), 1);
    addr_pkt(&r, 0, 0, A(5), false, false);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(4), A(5)};
    expect_pcs(&r, want, 4);
    assert_non_null(find_event(&r, TK_EV_TRACE_ON, 1));
    assert_non_null(find_event(&r, TK_EV_TRACE_OFF, 1));
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Errors: a packet before any sync, and a branch the trace has no bit for; the decoder
 * reports each once and picks the flow up again at the next sync. */
static void test_errors_and_resync(void **state)
{
    (void)state;
    const uint32_t code[] = {NOP, BEQ(0u, 0u, 8), NOP, NOP, NOP, NOP};
    rec r;
    setup(&r, code, 6, 1);
    support(&r, 0, 0);
    addr_pkt(&r, 0, 0, A(3), false, false); /* before the first sync */
    addr_pkt(&r, 0, 0, A(3), false, false); /* reported once only */
    assert_int_equal(r.nerrors, 1);
    assert_int_equal(find_event(&r, TK_EV_ERROR, 0)->status, TK_ERR_NO_SYNC);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(3), false, false); /* F2 but the path crosses a branch */
    assert_int_equal(r.nerrors, 2);
    assert_int_equal(find_event(&r, TK_EV_ERROR, 1)->status, TK_ERR_MISMATCH);
    addr_pkt(&r, 0, 0, A(4), false, false); /* skipped: waiting for a sync */
    assert_int_equal(r.nerrors, 2);
    sync_start(&r, A(3), 1);
    addr_pkt(&r, 0, 0, A(4), false, false);
    support(&r, 1, 0);
    /* A(0), A(1) (the branch reached before the error), then the new flow */
    const uint64_t want[] = {A(0), A(1), A(3), A(4)};
    expect_pcs(&r, want, 4);
    teardown_rec(&r);
}

/* Recreate the decoder after changing r->p. */
static void reopen(rec *r)
{
    tk_te_decoder_free(r->d);
    assert_int_equal(tk_te_decoder_new(&r->p, r->img, on_event, r, &r->d), TK_OK);
}

/* An interrupt after A(1) retired: the EPC is the next instruction, from the code alone. */
static void test_interrupt(void **state)
{
    (void)state;
    const uint32_t code[] = {NOP, NOP, NOP, NOP, NOP, NOP, NOP, NOP, NOP, NOP};
    rec r;
    setup(&r, code, 10, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(1), false, false); /* next is a trap: report the last retired */
    trap(&r, A(8), 1, 7, 1);                /* machine timer interrupt, handler at 8 */
    addr_pkt(&r, 0, 0, A(9), false, false);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(8), A(9)};
    expect_pcs(&r, want, 4);
    const tk_event *rg = find_event(&r, TK_EV_RANGE, 0);
    assert_int_equal(rg->last, A(1));
    assert_int_equal(rg->end, TK_END_TRAP);
    assert_int_equal(rg->next, A(8));
    const tk_event *t = find_event(&r, TK_EV_TRAP, 0);
    assert_true(t->interrupt);
    assert_int_equal(t->cause, 7);
    assert_int_equal(t->first, A(2));
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Implicit return (ioptions bit 0): the return address comes from the decoder's own stack,
 * so only the later uninferable jump is reported. */
static void test_implicit_return(void **state)
{
    (void)state;
    const uint32_t code[] = {
        JAL(1u, 16),     /* 0: call 4 */
        NOP,             /* 1: return lands here */
        JALR(0u, 6u, 0), /* 2: -> 8 (reported) */
        NOP,
        NOP,             /* 3, 4: callee */
        JALR(0u, 1u, 0), /* 5: ret (implicit) */
        NOP,
        NOP,
        NOP,
        NOP,
    };
    rec r;
    setup(&r, code, 10, 1);
    r.p.s.return_stack_size = 2;
    reopen(&r);
    support(&r, 0, TK_TE_IOPT_IMPLICIT_RETURN);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(8), false, false);
    support(&r, 1, TK_TE_IOPT_IMPLICIT_RETURN);
    const uint64_t want[] = {A(0), A(4), A(5), A(1), A(2), A(8)};
    expect_pcs(&r, want, 6);
    const tk_event *call = find_event(&r, TK_EV_RANGE, 0);
    assert_int_equal(call->end, TK_END_CALL);
    const tk_event *ret = find_event(&r, TK_EV_RANGE, 1);
    assert_int_equal(ret->end, TK_END_RETURN);
    assert_false(ret->indirect);
    assert_int_equal(ret->next, A(1));
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* Sequentially inferable jump (sijump): auipc then jalr through the same register. */
static void test_sijump(void **state)
{
    (void)state;
    const uint32_t code[] = {
        (6u << 7) | 0x17u, /* 0: auipc x6, 0 */
        JALR(0u, 6u, 32),  /* 1: -> A(0) + 32 = A(8), inferable */
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,             /* 8 */
        JALR(0u, 7u, 0), /* 9: -> 12 (reported) */
        NOP,
        NOP,
        NOP, /* 12 */
        NOP,
    };
    rec r;
    setup(&r, code, 14, 1);
    r.p.o.sijump = true;
    reopen(&r);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(12), false, false);
    support(&r, 1, 0);
    const uint64_t want[] = {A(0), A(1), A(8), A(9), A(12)};
    expect_pcs(&r, want, 5);
    assert_int_equal(r.nerrors, 0);
    teardown_rec(&r);
}

/* The wrong program: the reported address cannot be reached without branch information. */
static void test_unreachable_address(void **state)
{
    (void)state;
    const uint32_t code[] = {NOP, JAL(0u, -4), NOP, NOP};
    rec r;
    setup(&r, code, 4, 1);
    support(&r, 0, 0);
    sync_start(&r, A(0), 1);
    addr_pkt(&r, 0, 0, A(3), false, false); /* 0 -> 1 -> 0 ... never reaches 3 */
    assert_int_equal(r.nerrors, 1);
    assert_int_equal(find_event(&r, TK_EV_ERROR, 0)->status, TK_ERR_MISMATCH);
    teardown_rec(&r);
}

/* A walk without trace information is bounded by the size of the program, not by a fixed
 * 2^24 blocks: call a function that returns through the implicit-return stack, jump back,
 * call again (the pops keep restarting the cycle search), with the reported address outside
 * the loop. The program is the loop followed by pad bytes of code (nops). The error names the
 * packet that asked for the walk (byte offset and index). Returns the blocks walked. */
typedef struct idle_rec {
    uint64_t ranges, insns, errors;
    tk_event err;
    char msg[192];
} idle_rec;

static tk_status idle_event(void *ctx, const tk_event *ev)
{
    idle_rec *r = ctx;
    if (ev->kind == TK_EV_RANGE) {
        r->ranges++;
        r->insns += ev->ninsn;
    } else if (ev->kind == TK_EV_ERROR && r->errors++ == 0) {
        r->err = *ev;
        snprintf(r->msg, sizeof(r->msg), "%s", ev->message ? ev->message : "");
    }
    return TK_OK;
}

static uint64_t idle_walk(size_t pad_words)
{
    const size_t n = 3 + pad_words;
    uint8_t *bytes = calloc(n, 4);
    assert_non_null(bytes);
    const uint32_t loop[] = {
        JAL(1u, 8),      /* 0: call 2 */
        JAL(0u, -4),     /* 1: j 0 */
        JALR(0u, 1u, 0), /* 2: ret (implicit) */
    };
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)((i < 3 ? loop[i] : NOP) >> (8 * b));
    tk_image *img = NULL;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, BASE, bytes, 4 * n), TK_OK);
    free(bytes);
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.return_stack_size = 4;
    p.o.implicit_return = true;
    p.o.full_address = true;
    idle_rec r;
    memset(&r, 0, sizeof(r));
    tk_te_decoder *d = NULL;
    assert_int_equal(tk_te_decoder_new(&p, img, idle_event, &r, &d), TK_OK);
    tk_te_packet s = {.format = 3,
                      .subformat = 0,
                      .branch = 1,
                      .privilege = 3,
                      .address = BASE >> p.s.iaddress_lsb};
    assert_int_equal(tk_te_decoder_packet(d, &s, 0, 0), TK_OK);
    /* the address after the padding: never reached from the loop */
    tk_te_packet f2 = {
        .format = 2, .has_address = true, .address = (BASE + 4 * n) >> p.s.iaddress_lsb};
    assert_int_equal(tk_te_decoder_packet(d, &f2, 1234, 7), TK_OK);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    assert_int_equal(r.errors, 1);
    assert_int_equal(r.err.status, TK_ERR_MISMATCH);
    assert_int_equal(r.err.byte_offset, 1234);
    assert_int_equal(r.err.packet_index, 7);
    assert_non_null(strstr(r.msg, "without using trace information"));
    /* one instruction per block in this loop */
    assert_int_equal(r.insns, r.ranges);
    tk_te_decoder_free(d);
    tk_image_free(img);
    return r.ranges;
}

static void test_idle_walk_bounded_by_program(void **state)
{
    (void)state;
    /* A 12-byte program: the smallest bound, 4096 blocks (not 2^24). */
    const uint64_t small = idle_walk(0);
    assert_true(small >= 4096 && small <= 4096 + 4);
    /* 256 KiB of code: the bound is the code size in bytes, so a bigger program may walk
     * longer before the walk counts as lost. */
    const size_t words = 1u << 16;
    const uint64_t big = idle_walk(words);
    assert_true(big >= 4 * (words + 3) && big <= 4 * (words + 3) + 4);
}

/* Robustness: random packets over random code never crash, hang or emit inconsistent
 * ranges; the decoder reports errors and keeps going. */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static tk_status check_event(void *ctx, const tk_event *ev)
{
    uint64_t *n = ctx;
    if (ev->kind == TK_EV_RANGE) {
        assert_true(ev->ninsn >= 1);
        assert_true(ev->last >= ev->first);
        assert_true(ev->last - ev->first <= 4 * (ev->ninsn - 1));
        n[0] += ev->ninsn;
    } else if (ev->kind == TK_EV_ERROR) {
        assert_non_null(ev->message);
        n[1]++;
    }
    return TK_OK;
}

static void test_random_packets(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    enum { WORDS = 512 };
    uint8_t code[4 * WORDS];
    for (size_t i = 0; i < sizeof(code); i += 4) {
        /* mostly plain instructions, some branches, jumps and compressed ones */
        static const uint32_t pool[] = {
            NOP,          BEQ(1u, 2u, 8),  BNE(3u, 0u, -12), JAL(0u, 16),
            JAL(1u, -32), JALR(0u, 5u, 0), JALR(0u, 1u, 0),  0x00010001u /* c.nop; c.nop */,
            0x00000073u};
        uint32_t w = pool[lcg(&seed) % (sizeof(pool) / sizeof(pool[0]))];
        memcpy(code + i, &w, 4);
    }
    tk_image *img;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_image_add_region(img, BASE, code, sizeof(code)), TK_OK);
    tk_te_params p;
    tk_te_params_init(&p);
    p.s.iaddress_width = 64;
    p.s.iaddress_lsb = 1;
    p.s.return_stack_size = 3;
    uint64_t counts[2] = {0, 0};
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&p, img, check_event, counts, &d), TK_OK);
    for (uint64_t i = 0; i < 20000; i++) {
        tk_te_packet pkt = {0};
        pkt.format = (uint8_t)(lcg(&seed) % 4);
        pkt.subformat = (uint8_t)(lcg(&seed) % 4);
        pkt.branches = (uint8_t)(lcg(&seed) % 32);
        pkt.branch_map = (uint32_t)lcg(&seed);
        const uint64_t where = (lcg(&seed) % WORDS) * 4;
        /* F3: an address in the code; F1/F2: a small delta either way, or full */
        pkt.address = pkt.format == 3 ? (BASE + where) >> 1
                                      : (uint64_t)((int64_t)(lcg(&seed) % 512) - 256) >> 1;
        pkt.has_address = true;
        pkt.branch = lcg(&seed) & 1;
        pkt.notify = (lcg(&seed) % 8) == 0;
        pkt.updiscon = (lcg(&seed) % 4) == 0;
        pkt.irreport = (lcg(&seed) % 8) == 0;
        pkt.irdepth = lcg(&seed) % 8;
        pkt.privilege = (uint8_t)(lcg(&seed) % 4);
        pkt.ecause = (uint32_t)(lcg(&seed) % 16);
        pkt.interrupt = lcg(&seed) & 1;
        pkt.thaddr = lcg(&seed) & 1;
        pkt.qual_status = (uint8_t)(lcg(&seed) % 4);
        pkt.ioptions = (uint32_t)(lcg(&seed) % 32) & ~(uint32_t)TK_TE_IOPT_FULL_ADDRESS;
        assert_int_equal(tk_te_decoder_packet(d, &pkt, i * 3, i), TK_OK);
    }
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);
    print_message("random: %llu instructions, %llu errors\n", (unsigned long long)counts[0],
                  (unsigned long long)counts[1]);
    assert_true(counts[0] > 1000); /* the random flow did get somewhere */
    assert_true(counts[1] > 0);
    tk_te_decoder_free(d);
    tk_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branches),
        cmocka_unit_test(test_looplabel_inferred),
        cmocka_unit_test(test_looplabel_updiscon_trap),
        cmocka_unit_test(test_looplabel_trap_first_visit),
        cmocka_unit_test(test_ecall_thaddr1),
        cmocka_unit_test(test_trap_thaddr0),
        cmocka_unit_test(test_full_address),
        cmocka_unit_test(test_map_without_address),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_errors_and_resync),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_implicit_return),
        cmocka_unit_test(test_sijump),
        cmocka_unit_test(test_unreachable_address),
        cmocka_unit_test(test_idle_walk_bounded_by_program),
        cmocka_unit_test(test_random_packets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
