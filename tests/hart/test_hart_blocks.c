/* SPDX-License-Identifier: BSD-2-Clause */
/* Retirement records and the ingress blocks made from them: itype per the 2.0 tables
 * (spec/VERSIONS.md B.1), exceptions with and without retirement (ingressPort.adoc),
 * interrupts after a branch, 3-bit itypes, sijump, and multiple retirement. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "hart_asm.h"
#include "tracekit/hart.h"

#define MAXB 256

struct rec {
    tk_hart_retire r[MAXB];
    size_t nr;
    tk_te_block b[MAXB];
    size_t nb, ncycles;
};

static tk_status on_blocks(void *ctx, const tk_te_block *b, size_t n)
{
    struct rec *c = ctx;
    for (size_t i = 0; i < n && c->nb < MAXB; i++)
        c->b[c->nb++] = b[i];
    c->ncycles++;
    return TK_OK;
}

struct both {
    struct rec *rec;
    tk_hart_blocks *blocks;
};

static tk_status on_retire(void *ctx, const tk_hart_retire *r, size_t n)
{
    struct both *b = ctx;
    for (size_t i = 0; i < n && b->rec->nr < MAXB; i++)
        b->rec->r[b->rec->nr++] = r[i];
    return tk_hart_blocks_push(b->blocks, r, n);
}

/* Run code for n instructions and collect records and blocks. */
static void run_code(const uint32_t *code, size_t ncode, uint64_t n,
                     const tk_hart_blocks_options *o, struct rec *out)
{
    tk_sim_config c;
    tk_sim *s = NULL;
    tk_sim_result res;
    tk_diag d;
    struct both both = {out, NULL};
    memset(out, 0, sizeof(*out));
    tk_sim_config_init(&c);
    c.ram_size = 1u << 20;
    assert_int_equal(tk_sim_new(&c, &s), TK_OK);
    tk_sim_write_mem(s, BASE, code, ncode * 4);
    tk_sim_set_pc(s, 0, BASE);
    assert_int_equal(tk_hart_blocks_new(o, on_blocks, out, &both.blocks), TK_OK);
    tk_sim_set_retire(s, on_retire, &both);
    tk_diag_clear(&d);
    assert_int_equal(tk_sim_run(s, n, &res, &d), TK_END);
    assert_int_equal(tk_hart_blocks_finish(both.blocks), TK_OK);
    tk_hart_blocks_free(both.blocks);
    tk_sim_free(s);
}

static void test_itypes(void **state)
{
    const uint32_t flow[] = {
        ADDI(1, 0, 1), /* 0 */
        BEQ(1, 0, 8),  /* 4: not taken */
        BNE(1, 0, 8),  /* 8: taken -> 16 */
        0,             /* 12 */
        JAL(1, 8),     /* 16: call -> 24 */
        ECALL,         /* 20: (after return) exception, retires */
        JALR(0, 1, 0), /* 24: return -> 20 */
    };
    tk_hart_blocks_options o;
    struct rec r;
    (void)state;
    tk_hart_blocks_options_init(&o);
    run_code(flow, 7, 7, &o, &r);
    /* executed: 0 4 8 16 24 20, then the trap handler at mtvec = 0 faults on fetch */
    assert_int_equal(r.nr, 7);
    assert_int_equal(r.r[1].itype, TK_ITYPE_NOT_TAKEN);
    assert_int_equal(r.r[2].itype, TK_ITYPE_TAKEN);
    assert_int_equal(r.r[3].itype, TK_ITYPE_INF_CALL);
    assert_int_equal(r.r[4].itype, TK_ITYPE_RETURN);
    assert_int_equal(r.r[5].pc, BASE + 20);
    assert_int_equal(r.r[5].flags, TK_HART_F_EXCEPTION | TK_HART_F_RETIRED);
    assert_int_equal(r.r[5].cause, 11);
    /* blocks: one per instruction; iretire counts half-words */
    assert_int_equal(r.nb, 7);
    assert_int_equal(r.b[0].iretire, 2);
    assert_int_equal(r.b[0].ilastsize, 1);
    assert_int_equal(r.b[2].itype, TK_ITYPE_TAKEN);
    assert_int_equal(r.b[5].itype, TK_ITYPE_EXCEPTION);
    assert_int_equal(r.b[5].iretire, 2);
    assert_int_equal(r.b[5].cause, 11);
    /* the fetch fault at address 0 retires nothing; iaddr is the faulting address */
    assert_int_equal(r.b[6].itype, TK_ITYPE_EXCEPTION);
    assert_int_equal(r.b[6].iretire, 0);
    assert_int_equal(r.b[6].iaddr, 0);
    assert_int_equal(r.b[6].cause, 1);
}

/* 3-bit itypes: inferable call -> 0, return -> 6 (uninferable jump). */
static void test_itype3(void **state)
{
    const uint32_t flow[] = {
        ADDI(1, 0, 1), /* 0 */
        BEQ(1, 0, 8),  /* 4: not taken */
        BNE(1, 0, 8),  /* 8: taken -> 16 */
        0,             /* 12 */
        JAL(1, 8),     /* 16: call -> 24 */
        ECALL,         /* 20: (after return) exception, retires */
        JALR(0, 1, 0), /* 24: return -> 20 */
    };
    tk_hart_blocks_options o;
    struct rec r;
    (void)state;
    tk_hart_blocks_options_init(&o);
    o.itype_width = 3;
    run_code(flow, 7, 5, &o, &r);
    assert_int_equal(r.b[3].itype, TK_ITYPE_NONE);
    assert_int_equal(r.b[4].itype, TK_ITYPE_UNINF_JUMP3);
}

/* auipc t1 + jalr t1: sequentially inferable (sijump) when enabled. */
static void test_sijump(void **state)
{
    const uint32_t code[] = {AUIPC(6, 0), JALR(0, 6, 8), 0, ADDI(1, 0, 1)};
    tk_hart_blocks_options o;
    struct rec r;
    (void)state;
    tk_hart_blocks_options_init(&o);
    run_code(code, 4, 3, &o, &r);
    assert_int_equal(r.b[1].itype, TK_ITYPE_UNINF_JUMP);
    assert_int_equal(r.b[1].sijump, 0);
    o.sijump = true;
    run_code(code, 4, 3, &o, &r);
    assert_int_equal(r.b[1].itype, TK_ITYPE_UNINF_JUMP);
    assert_int_equal(r.b[1].sijump, 1);
}

/* A timer interrupt right after a taken branch: the branch keeps itype 5 and the interrupt
 * is a block of its own with iretire 0 at the address where the flow resumes. */
static void test_interrupt_after_branch(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),
        ADDI(1, 1, 64),
        CSRRW(0, 0x305, 1), /* mtvec = BASE + 64 */
        ADDI(4, 0, 128),
        CSRRS(0, 0x304, 4),  /* mie.MTIE */
        CSRRWI(0, 0x300, 8), /* mstatus.MIE */
        LUI(2, 0x2004),
        SD(0, 2, 0),  /* 24, 28: mtimecmp = 0: due */
        BEQ(0, 0, 8), /* 32: taken -> 40 */
        0,
        ADDI(3, 0, 3), /* 40 */
        0,
        0,
        0,
        0,
        0,
        ADDI(6, 0, 6), /* 64: handler */
    };
    tk_hart_blocks_options o;
    struct rec r;
    (void)state;
    tk_hart_blocks_options_init(&o);
    run_code(code, 17, 10, &o, &r);
    /* the store to mtimecmp ends the slice: the interrupt is taken after it (pc 32) */
    assert_int_equal(r.r[7].pc, BASE + 28);
    assert_true(r.r[7].flags & TK_HART_F_INTERRUPT);
    assert_int_equal(r.r[7].cause, 7);
    assert_int_equal(r.b[7].itype, TK_ITYPE_INTERRUPT);
    assert_int_equal(r.b[7].iretire, 2);
    assert_int_equal(r.r[8].pc, BASE + 64);
}

/* mtimecmp = mtime + 1 tick (100 instructions): the interrupt lands inside a loop of taken
 * branches (at 36), so it follows a branch; the handler is at 64. */
#define TIMER_SPIN_CODE                                                                            \
    AUIPC(1, 0), ADDI(1, 1, 64), CSRRW(0, 0x305, 1), ADDI(4, 0, 128), CSRRS(0, 0x304, 4),          \
        CSRRWI(0, 0x300, 8), LUI(2, 0x2004), ADDI(3, 0, 1), SD(3, 2, 0), BEQ(0, 0, 0), 0, 0, 0, 0, \
        0, 0, ADDI(6, 0, 6)

static void test_interrupt_split(void **state)
{
    const uint32_t code[] = {TIMER_SPIN_CODE};
    tk_hart_blocks_options o;
    struct rec r;
    size_t i;
    (void)state;
    tk_hart_blocks_options_init(&o);
    run_code(code, 17, 150, &o, &r);
    for (i = 0; i < r.nb; i++)
        if (r.b[i].itype == TK_ITYPE_INTERRUPT)
            break;
    assert_true(i > 0 && i < r.nb);
    assert_int_equal(r.b[i - 1].itype, TK_ITYPE_TAKEN);
    assert_int_equal(r.b[i - 1].iaddr, BASE + 36);
    assert_int_equal(r.b[i].iretire, 0);
    assert_int_equal(r.b[i].iaddr, BASE + 36); /* the branch target, not executed */
    assert_int_equal(r.b[i].cause, 7);
    assert_int_equal(r.b[i + 1].iaddr, BASE + 64);
}

/* Multiple retirement: straight-line code groups into blocks of up to N instructions. */
static void test_multi_retire(void **state)
{
    const uint32_t code[] = {
        ADDI(1, 0, 1), ADDI(2, 0, 2), ADDI(3, 0, 3), ADDI(4, 0, 4),
        ADDI(5, 0, 5), ADDI(6, 0, 6), ADDI(7, 0, 7), ADDI(8, 0, 8),
    };
    tk_hart_blocks_options o;
    struct rec r;
    uint32_t half = 0;
    (void)state;
    tk_hart_blocks_options_init(&o);
    o.retires = 4;
    o.taken = 2;
    run_code(code, 8, 8, &o, &r);
    assert_true(r.nb < 8);
    for (size_t i = 0; i < r.nb; i++) {
        assert_true(r.b[i].iretire <= 8);
        half += r.b[i].iretire;
    }
    assert_int_equal(half, 16);
    assert_int_equal(r.b[0].iaddr, BASE);
}

/* Batch mode hands over the same blocks in the same order, in fewer calls, with single and
 * multiple retirement, an interrupt split included. */
static void test_batch(void **state)
{
    const uint32_t code[] = {TIMER_SPIN_CODE};
    static const unsigned widths[][2] = {{1, 1}, {4, 2}, {8, 3}};
    static struct rec each, batch;
    (void)state;
    for (size_t w = 0; w < 3; w++) {
        tk_hart_blocks_options o;
        tk_hart_blocks_options_init(&o);
        o.retires = widths[w][0];
        o.taken = widths[w][1];
        run_code(code, sizeof(code) / sizeof(code[0]), 150, &o, &each);
        o.batch = true;
        run_code(code, sizeof(code) / sizeof(code[0]), 150, &o, &batch);
        assert_true(each.nb > 50 && each.nb < MAXB);
        assert_int_equal(batch.nb, each.nb);
        assert_memory_equal(batch.b, each.b, each.nb * sizeof(each.b[0]));
        assert_true(batch.ncycles < each.ncycles);
        bool interrupt = false;
        for (size_t i = 0; i < each.nb; i++)
            interrupt |= each.b[i].itype == TK_ITYPE_INTERRUPT;
        assert_true(interrupt);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_itypes),          cmocka_unit_test(test_itype3),
        cmocka_unit_test(test_sijump),          cmocka_unit_test(test_interrupt_after_branch),
        cmocka_unit_test(test_interrupt_split), cmocka_unit_test(test_multi_retire),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
