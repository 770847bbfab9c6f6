/* SPDX-License-Identifier: BSD-2-Clause */
/* Hart model: instruction semantics, traps, devices and decode-cache invalidation, on code
 * placed directly in RAM. Expected values come from the ISA manual's definitions. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "hart_asm.h"
#include "tracekit/hart.h"

static tk_sim *new_sim(unsigned xlen, const uint32_t *code, size_t n)
{
    tk_sim_config c;
    tk_sim *s = NULL;
    tk_sim_config_init(&c);
    c.xlen = xlen;
    c.ram_size = 1u << 20;
    assert_int_equal(tk_sim_new(&c, &s), TK_OK);
    if (n)
        assert_int_equal(tk_sim_write_mem(s, BASE, code, n * 4), TK_OK);
    tk_sim_set_pc(s, 0, BASE);
    return s;
}

static tk_status run(tk_sim *s, uint64_t n)
{
    tk_sim_result r;
    tk_diag d;
    tk_diag_clear(&d);
    return tk_sim_run(s, n, &r, &d);
}

#define X(s, r) tk_sim_get_xreg(s, 0, r)

static void test_alu_rv64(void **state)
{
    const uint32_t code[] = {
        ADDI(1, 0, -5),  /* x1 = -5 */
        ADDI(2, 0, 3),   /* x2 = 3 */
        SLT(3, 1, 2),    /* -5 < 3 signed: 1 */
        SLTU(4, 1, 2),   /* huge < 3 unsigned: 0 */
        SRAI(5, 1, 1),   /* -5 >> 1 = -3 */
        LUI(6, 0x80000), /* sign-extended: 0xffffffff80000000 */
        ADDIW(7, 6, -1), /* 0x7fffffff (32-bit wrap) */
        ADDW(8, 6, 6),   /* 0 */
        SLLI(9, 2, 62),  /* 3 << 62 */
        ADD(10, 0, 0),
    };
    tk_sim *s = new_sim(64, code, 10);
    (void)state;
    assert_int_equal(run(s, 10), TK_END);
    assert_int_equal(X(s, 3), 1);
    assert_int_equal(X(s, 4), 0);
    assert_int_equal((int64_t)X(s, 5), -3);
    assert_int_equal(X(s, 6), 0xffffffff80000000ull);
    assert_int_equal(X(s, 7), 0x7fffffffull);
    assert_int_equal(X(s, 8), 0);
    assert_int_equal(X(s, 9), 0xc000000000000000ull);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 40);
    tk_sim_free(s);
}

static void test_muldiv(void **state)
{
    const uint32_t code[] = {
        ADDI(1, 0, -1),  /* x1 = -1 (all ones) */
        MULHU(2, 1, 1),  /* (2^64-1)^2 >> 64 = 2^64 - 2 */
        MULH(3, 1, 1),   /* (-1)(-1) = 1: high part 0 */
        MULHSU(4, 1, 1), /* -1 * (2^64-1): high part -1 */
        DIV(5, 1, 0),    /* divide by zero: -1 */
        DIVU(6, 2, 0),   /* unsigned by zero: all ones */
        REM(7, 2, 0),    /* remainder by zero: dividend */
        LUI(8, 0x80000), /* x8 = INT32_MIN */
        DIVW(9, 8, 1),   /* INT32_MIN / -1 overflows to INT32_MIN */
        SLLI(10, 8, 32), /* INT64_MIN */
        DIV(11, 10, 1),  /* INT64_MIN / -1 = INT64_MIN */
        ADDI(12, 0, 7),  ADDI(13, 0, -2), REM(14, 12, 13), /* 7 % -2 = 1 (sign of the dividend) */
        DIV(15, 12, 13),                                   /* 7 / -2 = -3 (toward zero) */
    };
    tk_sim *s = new_sim(64, code, 15);
    (void)state;
    assert_int_equal(run(s, 15), TK_END);
    assert_int_equal(X(s, 2), 0xfffffffffffffffeull);
    assert_int_equal(X(s, 3), 0);
    assert_int_equal(X(s, 4), UINT64_MAX);
    assert_int_equal(X(s, 5), UINT64_MAX);
    assert_int_equal(X(s, 6), UINT64_MAX);
    assert_int_equal(X(s, 7), 0xfffffffffffffffeull);
    assert_int_equal(X(s, 9), 0xffffffff80000000ull);
    assert_int_equal(X(s, 11), 0x8000000000000000ull);
    assert_int_equal(X(s, 14), 1);
    assert_int_equal((int64_t)X(s, 15), -3);
    tk_sim_free(s);
}

/* RV32 keeps registers as 32-bit values: additions wrap at 32 bits, MULH is the 32-bit high
 * half, AUIPC and JAL links are 32-bit addresses. */
static void test_rv32(void **state)
{
    const uint32_t code[] = {
        LUI(1, 0x80000), /* 0x80000000 */
        ADDI(2, 1, -1),  /* 0x7fffffff */
        ADD(3, 2, 2),    /* 0xfffffffe */
        SLTU(4, 2, 1),   /* 0x7fffffff < 0x80000000 unsigned: 1 */
        SLT(5, 2, 1),    /* signed: 0x7fffffff < INT32_MIN: 0 */
        MULH(6, 1, 1),   /* INT32_MIN^2 >> 32 = 0x40000000 */
        MULHU(7, 3, 3),  /* 0xfffffffe^2 >> 32 = 0xfffffffc */
        SLLI(8, 2, 1),   /* 0xfffffffe */
        JAL(9, 8),       /* link = pc + 4 */
        ADDI(0, 0, 0),   ADDI(10, 0, 1),
    };
    tk_sim_config c;
    tk_sim *s = NULL;
    tk_sim_config_init(&c);
    (void)state;
    c.xlen = 32;
    c.ram_size = 1u << 20;
    c.ram2_size = 0;
    assert_int_equal(tk_sim_new(&c, &s), TK_OK);
    tk_sim_write_mem(s, BASE, code, sizeof(code));
    tk_sim_set_pc(s, 0, BASE);
    assert_int_equal(run(s, 10), TK_END);
    assert_int_equal((uint32_t)X(s, 3), 0xfffffffeu);
    assert_int_equal(X(s, 4), 1);
    assert_int_equal(X(s, 5), 0);
    assert_int_equal((uint32_t)X(s, 6), 0x40000000u);
    assert_int_equal((uint32_t)X(s, 7), 0xfffffffcu);
    assert_int_equal((uint32_t)X(s, 8), 0xfffffffeu);
    assert_int_equal((uint32_t)X(s, 9), BASE + 36);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 44);
    assert_int_equal(X(s, 10), 1);
    tk_sim_free(s);
}

static void test_loads_stores(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 1),                    /* x1 = data area BASE + 0x1000 */
        ADDI(2, 0, -128),               /* 0x...80 */
        SB(2, 1, 0),       LB(3, 1, 0), /* sign-extended -128 */
        LBU(4, 1, 0),                   /* 0x80 */
        ADDI(5, 0, 0x123), SW(5, 1, 5), /* misaligned store: performed (QEMU behaviour) */
        LW(6, 1, 5),       SD(2, 1, 16), LD(7, 1, 16),
    };
    tk_sim *s = new_sim(64, code, 10);
    (void)state;
    assert_int_equal(run(s, 10), TK_END);
    assert_int_equal((int64_t)X(s, 3), -128);
    assert_int_equal(X(s, 4), 0x80);
    assert_int_equal(X(s, 6), 0x123);
    assert_int_equal((int64_t)X(s, 7), -128);
    tk_sim_free(s);
}

static void test_compressed(void **state)
{
    /* c.li a0,5 ; c.addi a0,1 ; c.j +4 ; c.li a0,0 (skipped) ; c.beqz a1,+4 ; c.nop ; c.mv a2,a0 */
    const uint16_t code[] = {0x4515, 0x0505, 0xa011, 0x4501, 0xc191, 0x0001, 0x862a};
    tk_sim *s = new_sim(64, NULL, 0);
    (void)state;
    tk_sim_write_mem(s, BASE, code, sizeof(code));
    assert_int_equal(run(s, 5), TK_END);
    assert_int_equal(X(s, 10), 6);
    assert_int_equal(X(s, 12), 6);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 14);
    tk_sim_free(s);
}

/* ecall traps to mtvec with mcause 11 and mepc; the handler returns past it with mret. */
static void test_ecall_mret(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),        /* 0: x1 = BASE */
        ADDI(1, 1, 32),     /* 4: handler at BASE + 32 */
        CSRRW(0, 0x305, 1), /* 8: mtvec */
        ECALL,              /* 12 */
        ADDI(5, 0, 7),      /* 16: after return */
        JAL(0, 0),          /* 20: loop */
        0,
        0,
        CSRRS(6, 0x342, 0), /* 32: mcause */
        CSRRS(7, 0x341, 0), /* 36: mepc */
        ADDI(7, 7, 4),
        CSRRW(0, 0x341, 7),
        MRET,
    };
    tk_sim *s = new_sim(64, code, 13);
    uint64_t v = 0;
    (void)state;
    assert_int_equal(run(s, 10), TK_END);
    assert_int_equal(X(s, 6), 11);
    assert_int_equal(X(s, 7), BASE + 16);
    assert_int_equal(X(s, 5), 7);
    assert_int_equal(tk_sim_get_csr(s, 0, 0x342, &v), TK_OK);
    assert_int_equal(v, 11);
    tk_sim_free(s);
}

/* M drops to U (mret with MPP = U, PMP opened); a U ecall delegated to S lands at stvec in
 * S mode with scause 8; an illegal instruction in U mode (mret) goes to M. */
static void test_umode_delegation(void **state)
{
    const uint32_t code[] = {
        ADDI(1, 0, -1),     /* 0 */
        CSRRW(0, 0x3b0, 1), /* 4: pmpaddr0 = all */
        ADDI(1, 0, 0x1f),   /* 8 */
        CSRRW(0, 0x3a0, 1), /* 12: pmpcfg0 = NAPOT RWX */
        ADDI(1, 0, 0x100),  /* 16 */
        CSRRW(0, 0x302, 1), /* 20: medeleg = ecall from U */
        AUIPC(1, 0),        /* 24 */
        ADDI(1, 1, 40),     /* 28: U code at 64 */
        CSRRW(0, 0x341, 1), /* 32: mepc */
        AUIPC(1, 0),        /* 36 */
        ADDI(1, 1, 36),     /* 40: stvec = 72 */
        CSRRW(0, 0x105, 1), /* 44 */
        MRET,               /* 48: MPP is U after reset's mstatus = 0 */
        0,
        0,
        0,
        ECALL,              /* 64: user */
        JAL(0, 0),          /* 68 */
        CSRRS(8, 0x142, 0), /* 72: scause in S */
        MRET,               /* 76: illegal in S -> M */
    };
    tk_sim *s = new_sim(64, code, 20);
    uint64_t v = 0;
    (void)state;
    assert_int_equal(run(s, 13), TK_END);
    assert_int_equal(tk_sim_get_priv(s, 0), TK_PRIV_U);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 64);
    assert_int_equal(run(s, 1), TK_END); /* ecall */
    assert_int_equal(tk_sim_get_priv(s, 0), TK_PRIV_S);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 72);
    assert_int_equal(run(s, 2), TK_END);
    assert_int_equal(X(s, 8), 8);
    assert_int_equal(tk_sim_get_priv(s, 0), TK_PRIV_M); /* mret from S trapped */
    assert_int_equal(tk_sim_get_csr(s, 0, 0x342, &v), TK_OK);
    assert_int_equal(v, 2);
    assert_int_equal(tk_sim_get_csr(s, 0, 0x343, &v), TK_OK);
    assert_int_equal(v, MRET); /* mtval holds the instruction */
    tk_sim_free(s);
}

/* U mode without any PMP entry cannot fetch: instruction access fault (cause 1). */
static void test_pmp_fetch_fault(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0), ADDI(1, 1, 16), CSRRW(0, 0x341, 1), MRET, ADDI(2, 0, 1),
    };
    tk_sim *s = new_sim(64, code, 5);
    uint64_t v = 0;
    (void)state;
    assert_int_equal(run(s, 5), TK_END);
    assert_int_equal(tk_sim_get_csr(s, 0, 0x342, &v), TK_OK);
    assert_int_equal(v, 1);
    assert_int_equal(tk_sim_get_priv(s, 0), TK_PRIV_M);
    assert_int_equal(X(s, 2), 0);
    tk_sim_free(s);
}

static void test_illegal(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),        ADDI(1, 1, 16),
        CSRRW(0, 0x305, 1), 0x00000000u, /* 12: illegal (c.unimp + zeros) */
        JAL(0, 0),                       /* 16: handler spins */
    };
    tk_sim *s = new_sim(64, code, 5);
    uint64_t v = 0;
    (void)state;
    assert_int_equal(run(s, 5), TK_END);
    tk_sim_get_csr(s, 0, 0x342, &v);
    assert_int_equal(v, 2);
    tk_sim_get_csr(s, 0, 0x341, &v);
    assert_int_equal(v, BASE + 12);
    tk_sim_free(s);
}

/* Something the model does not implement (a vector add) stops the run with a message naming
 * the instruction and its address, and executes nothing. */
static void test_unsupported_stops(void **state)
{
    const uint32_t code[] = {ADDI(1, 0, 1), 0x02208057u /* vadd.vv */, ADDI(2, 0, 2)};
    tk_sim *s = new_sim(64, code, 3);
    tk_sim_result r;
    tk_diag d;
    (void)state;
    tk_diag_clear(&d);
    assert_int_equal(tk_sim_run(s, 10, &r, &d), TK_ERR_UNSUPPORTED);
    assert_non_null(strstr(d.message, "0x02208057"));
    assert_non_null(strstr(d.message, "0x80000004"));
    assert_int_equal(d.address, BASE + 4);
    assert_int_equal(X(s, 1), 1);
    assert_int_equal(X(s, 2), 0);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 4);
    tk_sim_free(s);
}

/* A store over already executed code: the new instruction runs (decode cache dropped on
 * the store itself, as QEMU does, without waiting for fence.i). */
static void test_self_modifying(void **state)
{
    const uint32_t code[] = {
        ADDI(5, 0, 0),   /* 0 */
        ADDI(5, 5, 1),   /* 4: patched on the first pass */
        BNE(6, 0, 24),   /* 8: second pass: to 32 */
        ADDI(6, 0, 1),   /* 12 */
        AUIPC(1, 0),     /* 16: x1 = BASE + 16 */
        LW(2, 1, 20),    /* 20: the word at 36 */
        SW(2, 1, -12),   /* 24: over the instruction at 4 */
        JAL(0, -24),     /* 28: back to 4 */
        JAL(0, 0),       /* 32 */
        ADDI(5, 5, 100), /* 36: replacement */
    };
    tk_sim *s = new_sim(64, code, 10);
    (void)state;
    assert_int_equal(run(s, 11), TK_END);
    assert_int_equal(X(s, 5), 101);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 32);
    tk_sim_free(s);
}

/* A store over the very next instruction, already decoded by an earlier pass: the
 * interpreter steps straight into that slot, which must run the new instruction. */
static void test_self_modifying_next(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),     /* 0: x1 = BASE */
        BEQ(6, 0, 12),   /* 4: first pass: to 16 */
        LW(2, 1, 32),    /* 8: second pass: the replacement */
        SW(2, 1, 16),    /* 12: over the next instruction */
        ADDI(5, 5, 1),   /* 16: patched on the second pass */
        ADDI(6, 0, 1),   /* 20 */
        BEQ(0, 0, -20),  /* 24: back to 4 */
        JAL(0, 0),       /* 28 */
        ADDI(5, 5, 100), /* 32: replacement */
    };
    tk_sim *s = new_sim(64, code, 9);
    (void)state;
    assert_int_equal(run(s, 10), TK_END);
    assert_int_equal(X(s, 5), 101);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 24);
    tk_sim_free(s);
}

struct recs {
    tk_hart_retire r[64];
    size_t n;
};

static tk_status keep_records(void *ctx, const tk_hart_retire *recs, size_t n)
{
    struct recs *k = ctx;
    for (size_t i = 0; i < n && k->n < 64; i++)
        k->r[k->n++] = recs[i];
    return TK_OK;
}

/* fence.i drops every decoded slot, including its own: execution continues after it, its
 * record is intact, and code patched before it runs in its new form. */
static void test_fence_i(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),    /* 0 */
        ADDI(5, 5, 1),  /* 4: patched on the first pass */
        BNE(6, 0, 24),  /* 8: second pass: to 32 */
        ADDI(6, 0, 1),  /* 12 */
        LW(2, 1, 36),   /* 16 */
        SW(2, 1, 4),    /* 20: over the instruction at 4 */
        FENCE_I,        /* 24 */
        JAL(0, -24),    /* 28: back to 4 */
        JAL(0, 0),      /* 32 */
        ADDI(5, 5, 10), /* 36: replacement */
    };
    tk_sim *s = new_sim(64, code, 10);
    struct recs k = {.n = 0};
    (void)state;
    tk_sim_set_retire(s, keep_records, &k);
    assert_int_equal(run(s, 11), TK_END);
    assert_int_equal(X(s, 5), 11);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 32);
    assert_int_equal(k.n, 11);
    assert_int_equal(k.r[6].pc, BASE + 24);
    assert_int_equal(k.r[6].insn, FENCE_I);
    assert_int_equal(k.r[6].len, 4);
    assert_int_equal(k.r[7].pc, BASE + 28);
    assert_int_equal(k.r[7].insn, JAL(0, -24));
    assert_int_equal(k.r[7].rd, 0); /* x0 destination reported as x0 */
    assert_int_equal(k.r[7].itype, TK_ITYPE_INF_JUMP);
    assert_int_equal(k.r[8].pc, BASE + 4);
    assert_int_equal(k.r[8].insn, ADDI(5, 5, 10));
    assert_int_equal(k.r[9].itype, TK_ITYPE_TAKEN);
    tk_sim_free(s);
}

/* Straight-line code across a page boundary, with a 32-bit instruction straddling it; a
 * write to the upper half alone (in the next page) drops the straddling instruction; a
 * budget that ends at the boundary resumes there. */
static void test_page_crossing(void **state)
{
    const uint64_t at = BASE + 0xff8;
    const uint16_t cadd = 0x0085; /* c.addi x1, 1 */
    uint32_t w;
    uint16_t hi;
    tk_sim *s = new_sim(64, NULL, 0);
    (void)state;
    w = ADDI(1, 1, 1);
    tk_sim_write_mem(s, at, &w, 4);
    tk_sim_write_mem(s, at + 4, &cadd, 2);
    w = ADDI(1, 1, 2);
    tk_sim_write_mem(s, at + 6, &w, 4); /* 0xffe..0x1001 */
    w = ADDI(1, 1, 4);
    tk_sim_write_mem(s, at + 10, &w, 4);
    w = BEQ(0, 0, -0xff6); /* 0x1006: taken back into the first page, to BASE + 0x10 */
    tk_sim_write_mem(s, at + 14, &w, 4);
    w = JAL(0, 0);
    tk_sim_write_mem(s, BASE + 0x10, &w, 4);
    tk_sim_set_pc(s, 0, at);
    assert_int_equal(run(s, 5), TK_END);
    assert_int_equal(X(s, 1), 8);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 0x10);

    hi = (uint16_t)(ADDI(1, 1, 16) >> 16);
    assert_int_equal(tk_sim_write_mem(s, BASE + 0x1000, &hi, 2), TK_OK);
    tk_sim_set_xreg(s, 0, 1, 0);
    tk_sim_set_pc(s, 0, at);
    assert_int_equal(run(s, 2), TK_END);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 0xffe);
    assert_int_equal(run(s, 1), TK_END);
    assert_int_equal(tk_sim_get_pc(s, 0), BASE + 0x1002);
    assert_int_equal(run(s, 1), TK_END);
    assert_int_equal(X(s, 1), 22);
    tk_sim_free(s);
}

/* With misaligned_trap (spike's behaviour) a misaligned load or store raises address-
 * misaligned (cause 4 / 6) with the address in mtval; aligned ones are performed. */
static void test_misaligned_trap(void **state)
{
    for (unsigned store = 0; store < 2; store++) {
        const uint32_t code[] = {
            AUIPC(1, 0),                       /* 0 */
            ADDI(1, 1, 24),                    /* 4: x1 = handler */
            CSRRW(0, 0x305, 1),                /* 8: mtvec */
            LD(3, 1, 0),                       /* 12: aligned: performed */
            store ? SW(3, 1, 2) : LW(2, 1, 1), /* 16: misaligned */
            JAL(0, 0),                         /* 20 */
            JAL(0, 0),                         /* 24: handler */
        };
        tk_sim_config c;
        tk_sim *s = NULL;
        uint64_t v = 0;
        (void)state;
        tk_sim_config_init(&c);
        c.ram_size = 1u << 20;
        c.misaligned_trap = true;
        assert_int_equal(tk_sim_new(&c, &s), TK_OK);
        assert_int_equal(tk_sim_write_mem(s, BASE, code, sizeof(code)), TK_OK);
        tk_sim_set_pc(s, 0, BASE);
        assert_int_equal(run(s, 6), TK_END);
        assert_int_equal(X(s, 3), JAL(0, 0)); /* the handler word, then zeros */
        assert_int_equal(tk_sim_get_csr(s, 0, 0x342, &v), TK_OK);
        assert_int_equal(v, store ? 6 : 4);
        tk_sim_get_csr(s, 0, 0x343, &v);
        assert_int_equal(v, BASE + 24 + (store ? 2 : 1));
        tk_sim_get_csr(s, 0, 0x341, &v);
        assert_int_equal(v, BASE + 16);
        assert_int_equal(tk_sim_get_pc(s, 0), BASE + 24);
        tk_sim_free(s);
    }
}

struct out {
    char buf[64];
    size_t n;
};

static void console(void *ctx, const char *p, size_t n)
{
    struct out *o = ctx;
    memcpy(o->buf + o->n, p, n);
    o->n += n;
}

/* UART THR bytes reach the console; HTIF exit ends the run with the code. */
static void test_uart_and_htif_exit(void **state)
{
    const uint32_t code[] = {
        AUIPC(3, 1),     /* tohost at BASE + 0x1000 */
        LUI(1, 0x10000), /* UART */
        ADDI(2, 0, 'h'), SB(2, 1, 0),    ADDI(2, 0, 'i'),
        SB(2, 1, 0),     ADDI(4, 0, 85), /* (42 << 1) | 1 */
        SD(4, 3, 0),     JAL(0, 0),
    };
    tk_sim *s = new_sim(64, code, 9);
    struct out o = {{0}, 0};
    tk_sim_result r;
    tk_diag d;
    (void)state;
    tk_diag_clear(&d);
    tk_sim_set_htif(s, BASE + 0x1000, BASE + 0x1040);
    tk_sim_set_console(s, console, &o);
    assert_int_equal(tk_sim_run(s, 1000, &r, &d), TK_OK);
    assert_true(r.exited);
    assert_int_equal(r.exit_code, 42);
    assert_int_equal(r.instructions, 8);
    assert_int_equal(r.retired, 8);
    assert_int_equal(o.n, 2);
    assert_memory_equal(o.buf, "hi", 2);
    tk_sim_free(s);
}

/* CLINT: mtimecmp = mtime + 3 with MTIE and MIE set; a wfi sleeps until the deadline and the
 * timer interrupt (mcause with the interrupt bit, 7) is taken right after it. */
static void test_timer_wfi(void **state)
{
    const uint32_t code[] = {
        AUIPC(1, 0),
        ADDI(1, 1, 48),
        CSRRW(0, 0x305, 1), /* mtvec = BASE + 48 */
        LUI(2, 0x200c),
        LD(3, 2, -8), /* mtime */
        ADDI(3, 3, 3),
        LUI(2, 0x2004),
        SD(3, 2, 0), /* mtimecmp = mtime + 3 */
        ADDI(4, 0, 128),
        CSRRS(0, 0x304, 4),  /* mie.MTIE */
        CSRRWI(0, 0x300, 8), /* mstatus.MIE */
        WFI,                 /* 44 */
        CSRRS(5, 0x342, 0),  /* 48: handler */
        CSRRS(6, 0x341, 0),
        JAL(0, 0),
    };
    tk_sim *s = new_sim(64, code, 15);
    (void)state;
    assert_int_equal(run(s, 14), TK_END);
    assert_int_equal(X(s, 5), 0x8000000000000007ull);
    assert_int_equal(X(s, 6), BASE + 48); /* the instruction after wfi */
    tk_sim_free(s);
}

/* IEEE results: division by zero, sqrt of a negative, saturating conversion, NaN boxing,
 * minimum of -0 and +0, rounding modes of fcvt. */
static void test_fp(void **state)
{
    const uint32_t code[] = {
        LUI(1, 0x2),           CSRRS(0, 0x300, 1),    /* mstatus.FS = 1 */
        ADDI(2, 0, 1),         FOP(0x69, 1, 2, 0, 7), /* f1 = 1.0 (fcvt.d.w) */
        FMV_D_X(2, 0),                                /* f2 = +0 */
        FDIV_D(3, 1, 2),                              /* +inf, DZ */
        ADDI(3, 0, -1),        FOP(0x69, 4, 3, 0, 7), /* f4 = -1.0 */
        FSQRT_D(5, 4),                                /* canonical NaN, NV */
        FMV_X_D(10, 5),        CSRRS(11, 0x001, 0),   /* fflags */
        FMV_X_D(12, 3),        FMIN_D(6, 2, 4),       /* min(+0, -1) = -1 */
        FOP(0x11, 7, 4, 4, 0),                        /* f7 = fsgnj(-1, -1) = -1.0 */
        FOP(0x11, 8, 2, 7, 1),                        /* f8 = fsgnjn(+0, -1) = +0 */
        FOP(0x11, 9, 2, 7, 0),                        /* f9 = fsgnj(+0, -1) = -0 */
        FMIN_D(9, 8, 9),                              /* min(+0, -0) = -0 */
        FMV_X_D(13, 9),        FCVT_W_D(14, 3, 1),    /* inf -> INT32_MAX */
        FADD_S(15, 1, 1),                             /* f1 is not NaN-boxed: NaN */
        FMV_X_W(16, 15),       FLT_D(17, 5, 1),       /* NaN < 1: 0 */
    };
    tk_sim *s = new_sim(64, code, 22);
    (void)state;
    assert_int_equal(run(s, 22), TK_END);
    assert_int_equal(X(s, 10), 0x7ff8000000000000ull);
    assert_int_equal(X(s, 11) & 0x18, 0x18); /* NV | DZ */
    assert_int_equal(X(s, 12), 0x7ff0000000000000ull);
    assert_int_equal(X(s, 13), 0x8000000000000000ull);
    assert_int_equal(X(s, 14), 0x7fffffffull);
    assert_int_equal(X(s, 16), 0x7fc00000ull); /* canonical single NaN */
    assert_int_equal(X(s, 17), 0);
    tk_sim_free(s);
}

/* fcvt.w.d with each rounding mode on 2.5 and -2.5 (RNE, RTZ, RDN, RUP, RMM). */
static void test_fp_rounding(void **state)
{
    static const int expect_pos[5] = {2, 2, 2, 3, 3};
    static const int expect_neg[5] = {-2, -2, -3, -2, -3};
    for (unsigned rm = 0; rm < 5; rm++) {
        const uint32_t code[] = {
            LUI(1, 0x2),         CSRRS(0, 0x300, 1),
            ADDI(2, 0, 5),       FOP(0x69, 1, 2, 0, 7), /* 5.0 */
            ADDI(2, 0, 2),       FOP(0x69, 2, 2, 0, 7), /* 2.0 */
            FDIV_D(3, 1, 2),                            /* 2.5 */
            FCVT_W_D(10, 3, rm), FOP(0x11, 4, 3, 3, 1), /* -2.5 */
            FCVT_W_D(11, 4, rm),
        };
        tk_sim *s = new_sim(64, code, 10);
        (void)state;
        assert_int_equal(run(s, 10), TK_END);
        assert_int_equal((int64_t)X(s, 10), expect_pos[rm]);
        assert_int_equal((int64_t)X(s, 11), expect_neg[rm]);
        tk_sim_free(s);
    }
}

/* Two harts run the same code deterministically; mhartid differs. */
static void test_two_harts(void **state)
{
    const uint32_t code[] = {CSRRS(1, 0xf14, 0), ADDI(2, 1, 10), JAL(0, 0)};
    tk_sim_config c;
    tk_sim *s = NULL;
    (void)state;
    tk_sim_config_init(&c);
    c.nharts = 2;
    c.ram_size = 1u << 20;
    assert_int_equal(tk_sim_new(&c, &s), TK_OK);
    tk_sim_write_mem(s, BASE, code, sizeof(code));
    tk_sim_set_pc(s, 0, BASE);
    tk_sim_set_pc(s, 1, BASE);
    assert_int_equal(run(s, 1000), TK_END);
    assert_int_equal(tk_sim_get_xreg(s, 0, 2), 10);
    assert_int_equal(tk_sim_get_xreg(s, 1, 2), 11);
    tk_sim_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alu_rv64),
        cmocka_unit_test(test_muldiv),
        cmocka_unit_test(test_rv32),
        cmocka_unit_test(test_loads_stores),
        cmocka_unit_test(test_compressed),
        cmocka_unit_test(test_ecall_mret),
        cmocka_unit_test(test_umode_delegation),
        cmocka_unit_test(test_pmp_fetch_fault),
        cmocka_unit_test(test_illegal),
        cmocka_unit_test(test_unsupported_stops),
        cmocka_unit_test(test_self_modifying),
        cmocka_unit_test(test_self_modifying_next),
        cmocka_unit_test(test_fence_i),
        cmocka_unit_test(test_page_crossing),
        cmocka_unit_test(test_misaligned_trap),
        cmocka_unit_test(test_uart_and_htif_exit),
        cmocka_unit_test(test_timer_wfi),
        cmocka_unit_test(test_fp),
        cmocka_unit_test(test_fp_rounding),
        cmocka_unit_test(test_two_harts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
