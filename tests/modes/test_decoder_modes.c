/* SPDX-License-Identifier: BSD-2-Clause */
/* The decoder's side of the optional modes on hand-built packet sequences over tiny programs:
 * branch counts (format 0 subformat 0, all three branch_fmt), the jump target cache (format 0
 * subformat 1), implicit exceptions (handler from the trap vector) and irreport/irdepth with
 * a return address stack. Every packet goes through the codec as bytes. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tracekit/te_decoder.h"

#define ENC_I(op, rd, rs1, imm)                                                                    \
    ((((uint32_t)(imm)) & 0xfffu) << 20 | (rs1) << 15 | (rd) << 7 | (op))
#define NOP ENC_I(0x13u, 0u, 0u, 0)
#define JALR(rd, rs1, imm) ENC_I(0x67u, rd, rs1, imm)
#define JAL(rd, imm)                                                                               \
    ((((uint32_t)(imm) >> 20) & 1u) << 31 | (((uint32_t)(imm) >> 1) & 0x3ffu) << 21 |              \
     (((uint32_t)(imm) >> 11) & 1u) << 20 | (((uint32_t)(imm) >> 12) & 0xffu) << 12 | (rd) << 7 |  \
     0x6fu)
#define BNE(rs1, rs2, imm)                                                                         \
    ((((uint32_t)(imm) >> 12) & 1u) << 31 | (((uint32_t)(imm) >> 5) & 0x3fu) << 25 | (rs2) << 20 | \
     (rs1) << 15 | 1u << 12 | (((uint32_t)(imm) >> 1) & 0xfu) << 8 |                               \
     (((uint32_t)(imm) >> 11) & 1u) << 7 | 0x63u)
#define ECALL 0x00000073u
#define BASE 0x80000000ull
#define A(i) (BASE + 4u * (i))
#define MAX_PCS 1024

typedef struct rec {
    tk_image *img;
    tk_te_params p;
    tk_te_decoder *d;
    uint64_t pcs[MAX_PCS];
    size_t npcs, nerrors, ntraps;
    uint64_t trap_handler, trap_epc;
    uint64_t last_addr, index;
} rec;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    rec *r = ctx;
    if (ev->kind == TK_EV_RANGE)
        for (uint64_t i = 0; i < ev->ninsn; i++) {
            assert_true(r->npcs < MAX_PCS);
            r->pcs[r->npcs++] = ev->first + 4 * i;
        }
    if (ev->kind == TK_EV_ERROR) {
        print_message("decoder: %s\n", ev->message);
        r->nerrors++;
    }
    if (ev->kind == TK_EV_TRAP) {
        r->ntraps++;
        r->trap_handler = ev->next;
        r->trap_epc = ev->first;
    }
    return TK_OK;
}

static void setup(rec *r, const uint32_t *code, size_t n, void (*tune)(tk_te_params *))
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &r->img), TK_OK);
    uint8_t *bytes = malloc(4 * n);
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 4; b++)
            bytes[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    assert_int_equal(tk_image_add_region(r->img, BASE, bytes, 4 * n), TK_OK);
    free(bytes);
    tk_te_params_init(&r->p);
    r->p.s.iaddress_width = 64;
    r->p.s.iaddress_lsb = 1;
    r->p.s.itype_width = 4;
    r->p.ioptions_width = 6;
    tune(&r->p);
    assert_int_equal(tk_te_decoder_new(&r->p, r->img, on_event, r, &r->d), TK_OK);
}

static void teardown_rec(rec *r)
{
    tk_te_decoder_free(r->d);
    tk_image_free(r->img);
}

/* Through the wire format and into the decoder. */
static void feed(rec *r, const tk_te_packet *pkt)
{
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    tk_te_packet back;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_te_packet_encode(&r->p, pkt, buf, sizeof(buf), &len), TK_OK);
    assert_int_equal(tk_te_packet_decode(&r->p, buf, len, &back, &diag), TK_OK);
    assert_int_equal(tk_te_decoder_packet(r->d, &back, r->index * 8, r->index), TK_OK);
    r->index++;
}

static void support(rec *r, unsigned qual)
{
    tk_te_packet s = {.format = 3,
                      .subformat = 3,
                      .ienable = qual == 0,
                      .qual_status = qual,
                      .ioptions = tk_te_params_ioptions(&r->p)};
    feed(r, &s);
}

static void sync_start(rec *r, uint64_t addr)
{
    tk_te_packet s = {
        .format = 3, .subformat = 0, .branch = 1, .privilege = 3, .address = addr >> 1};
    r->last_addr = addr;
    feed(r, &s);
}

static uint64_t diff(rec *r, uint64_t addr)
{
    const uint64_t v = (addr - r->last_addr) >> 1;
    r->last_addr = addr;
    return v & ((1ull << 63) - 1);
}

static void expect_pcs(rec *r, const uint64_t *want, size_t n)
{
    if (getenv("TK_DEBUG_PCS"))
        for (size_t i = 0; i < r->npcs; i++)
            print_message("%zu %llx\n", i, (unsigned long long)((r->pcs[i] - BASE) / 4));
    for (size_t i = 0; i < n && i < r->npcs; i++)
        if (r->pcs[i] != want[i])
            fail_msg("pc %zu: got 0x%llx, want 0x%llx", i, (unsigned long long)r->pcs[i],
                     (unsigned long long)want[i]);
    assert_int_equal(r->npcs, n);
    assert_int_equal(r->nerrors, 0);
}

static void bp_on(tk_te_params *p)
{
    p->s.bpred_size = 4;
    p->o.branch_prediction = true;
}

/* 40 not-taken branches (predicted: entries start at 01), then the same branch taken
 * (prediction fails): a branch count without address reports it; the jump after it is an
 * ordinary address packet. */
static void test_branch_count_no_address(void **state)
{
    (void)state;
    const uint32_t code[] = {
        NOP,         BNE(5u, 6u, 12), /* 1: not taken x40, then taken -> 4 */
        JAL(0u, -4),                  /* 2: -> 1 */
        NOP,         JALR(0u, 7u, 0), /* 4: -> 8, reported */
        NOP,         NOP,
        NOP,         NOP,
    };
    rec r;
    setup(&r, code, 9, bp_on);
    support(&r, 0);
    sync_start(&r, A(0));
    tk_te_packet bc = {.format = 0, .subformat = 0, .branch_count = 40 - 31, .branch_fmt = 0};
    feed(&r, &bc);
    tk_te_packet f2 = {.format = 2, .has_address = true, .address = diff(&r, A(8))};
    r.last_addr = A(8);
    feed(&r, &f2);
    support(&r, 1);
    uint64_t want[100];
    size_t n = 0;
    want[n++] = A(0);
    for (int i = 0; i < 40; i++) {
        want[n++] = A(1);
        want[n++] = A(2);
    }
    want[n++] = A(1);
    want[n++] = A(4);
    want[n++] = A(8);
    expect_pcs(&r, want, n);
    teardown_rec(&r);
}

/* 35 different branches, all not taken as predicted, then an uninferable jump: the count
 * comes with its target's address (branch_fmt 10). branch_fmt 11: the reported instruction is
 * a branch whose prediction failed. */
static void test_branch_count_with_address(void **state)
{
    (void)state;
    uint32_t code[44];
    for (int i = 0; i < 35; i++)
        code[i] = BNE(5u, 6u, 8);
    code[35] = JALR(0u, 7u, 0); /* -> 40 */
    for (int i = 36; i < 44; i++)
        code[i] = NOP;
    code[40] = BNE(5u, 6u, 8);  /* 40: taken (fails) -> 42 */
    code[42] = JALR(0u, 8u, 0); /* -> 43 */
    rec r;
    setup(&r, code, 44, bp_on);
    support(&r, 0);
    sync_start(&r, A(0));
    /* the sync's own branch (0) goes in its branch bit (1 = not taken); 34 more predicted */
    tk_te_packet bc = {
        .format = 0, .subformat = 0, .branch_count = 34 - 31, .branch_fmt = 2, .has_address = true};
    bc.address = diff(&r, A(40));
    feed(&r, &bc);
    /* 40 is a branch and its prediction failed: no predicted branch before it (count 31 minus
     * 31 would claim 31), so the map reports it, and the jump's target comes after */
    tk_te_packet f1 = {.format = 1, .branches = 1, .branch_map = 0, .has_address = true};
    f1.address = diff(&r, A(43));
    feed(&r, &f1);
    support(&r, 1);
    uint64_t want[64];
    size_t n = 0;
    for (int i = 0; i <= 35; i++)
        want[n++] = A(i);
    want[n++] = A(40);
    want[n++] = A(42);
    want[n++] = A(43);
    expect_pcs(&r, want, n);
    teardown_rec(&r);

    /* branch_fmt 11: 31 predicted, then the reported branch (40 again) failed */
    uint32_t code2[44];
    memcpy(code2, code, sizeof(code2));
    code2[35] = BNE(5u, 6u, 8); /* 35: predicted not taken */
    code2[36] = JAL(0u, 16);    /* -> 40 */
    setup(&r, code2, 44, bp_on);
    support(&r, 0);
    sync_start(&r, A(4));
    /* branches 4..35: the sync's own (4) in its branch bit, 31 more predicted correctly,
     * then 40 fails and is reported with its address because an interrupt follows it */
    tk_te_packet b3 = {
        .format = 0, .subformat = 0, .branch_count = 0, .branch_fmt = 3, .has_address = true};
    b3.address = diff(&r, A(40));
    feed(&r, &b3);
    tk_te_packet irq = {.format = 3,
                        .subformat = 1,
                        .branch = 1,
                        .privilege = 3,
                        .ecause = 7,
                        .interrupt = 1,
                        .thaddr = 1,
                        .address = A(43) >> 1};
    feed(&r, &irq);
    support(&r, 1);
    n = 0;
    for (int i = 4; i <= 36; i++)
        want[n++] = A(i);
    want[n++] = A(40);
    want[n++] = A(43);
    expect_pcs(&r, want, n);
    assert_int_equal(r.ntraps, 1);
    assert_int_equal(r.trap_epc, A(42)); /* 40 was taken: the opposite of its prediction */
    teardown_rec(&r);
}

static void jtc_on(tk_te_params *p)
{
    p->s.cache_size = 4;
    p->o.jump_target_cache = true;
}

/* Two uninferable jumps bouncing between 0 and 4: after each target was reported once, the
 * packets name cache entries. */
static void test_jump_target_cache(void **state)
{
    (void)state;
    const uint32_t code[] = {JALR(0u, 7u, 0), NOP, NOP, NOP, NOP, JALR(0u, 8u, 0), NOP};
    rec r;
    setup(&r, code, 7, jtc_on);
    support(&r, 0);
    sync_start(&r, A(0));
    tk_te_packet f2 = {.format = 2, .has_address = true};
    f2.address = diff(&r, A(4));
    feed(&r, &f2); /* 0 -> 4: cached at entry (A(4) >> 1) & 15 = 8 */
    f2.address = diff(&r, A(0));
    feed(&r, &f2); /* 5 -> 0: entry 0 */
    tk_te_packet c = {.format = 0, .subformat = 1, .jtc_index = 8};
    feed(&r, &c); /* 0 -> 4 */
    c.jtc_index = 0;
    feed(&r, &c); /* 5 -> 0 */
    c.jtc_index = 8;
    feed(&r, &c); /* 0 -> 4 */
    r.last_addr = A(4);
    support(&r, 1);
    const uint64_t want[] = {A(0), A(4), A(5), A(0), A(4), A(5), A(0), A(4)};
    expect_pcs(&r, want, 8);
    /* a cache entry that holds nothing is an error, not a guess */
    rec e;
    setup(&e, code, 7, jtc_on);
    support(&e, 0);
    sync_start(&e, A(0));
    c.jtc_index = 3;
    feed(&e, &c);
    assert_int_equal(e.nerrors, 1);
    teardown_rec(&e);
    teardown_rec(&r);
}

static void iexc_on(tk_te_params *p)
{
    p->o.implicit_except = true;
}

/* The trap packet has no handler address: it is mtvec (direct) or mtvec + 4 * cause for
 * interrupts in vectored mode. */
static void test_implicit_exception(void **state)
{
    (void)state;
    uint32_t code[24];
    for (int i = 0; i < 24; i++)
        code[i] = NOP;
    code[2] = ECALL;
    for (int vectored = 0; vectored < 2; vectored++) {
        rec r;
        setup(&r, code, 24, iexc_on);
        tk_te_decoder_set_trap_vector(r.d, 3, A(4) | (uint64_t)vectored);
        support(&r, 0);
        sync_start(&r, A(0));
        tk_te_packet f2 = {.format = 2, .has_address = true};
        f2.address = diff(&r, A(2)); /* the ecall retires and traps */
        feed(&r, &f2);
        tk_te_packet t = {
            .format = 3, .subformat = 1, .branch = 1, .privilege = 3, .ecause = 11, .thaddr = 1};
        feed(&r, &t);
        r.last_addr = A(4);
        f2.address = diff(&r, A(5));
        feed(&r, &f2);
        /* an interrupt: vectored mode adds 4 * cause (7: timer -> A(4) + 28 = A(11)) */
        tk_te_packet irq = {.format = 3,
                            .subformat = 1,
                            .branch = 1,
                            .privilege = 3,
                            .ecause = 7,
                            .interrupt = 1,
                            .thaddr = 1};
        feed(&r, &irq);
        const uint64_t h = vectored ? A(11) : A(4);
        assert_int_equal(r.trap_handler, h);
        r.last_addr = h;
        f2.address = diff(&r, h + 4);
        feed(&r, &f2);
        support(&r, 1);
        const uint64_t want[] = {A(0), A(1), A(2), A(4), A(5), h, h + 4};
        expect_pcs(&r, want, 7);
        assert_int_equal(r.ntraps, 2);
        teardown_rec(&r);
    }
    /* no vector given: an error event, not a made-up address */
    rec r;
    setup(&r, code, 24, iexc_on);
    support(&r, 0);
    sync_start(&r, A(0));
    tk_te_packet t = {
        .format = 3, .subformat = 1, .branch = 1, .privilege = 3, .ecause = 11, .thaddr = 1};
    feed(&r, &t);
    assert_int_equal(r.nerrors, 1);
    teardown_rec(&r);
}

static void ras_on(tk_te_params *p)
{
    p->s.return_stack_size = 2;
    p->o.implicit_return = true;
}

/* A return that does not go where its call would: reported with irreport and the depth
 * before it (2), so the decoder does not take the deeper return (depth 2 -> 1 is the one). */
static void test_irreport_mispredicted_return(void **state)
{
    (void)state;
    const uint32_t code[] = {
        JAL(1u, 12),     /* 0: call 3 */
        JALR(0u, 9u, 0), /* 1: -> 12 (reported) */
        NOP,
        JAL(1u, 12), /* 3: call 6 */
        NOP,         /* 4: not returned to */
        NOP,
        JALR(0u, 1u, 0), /* 6: ret (implicit) -> 4?? no: mispredicted -> 1 */
        NOP,
        NOP,
        NOP,
        NOP,
        NOP,
        NOP, /* 12 */
    };
    rec r;
    setup(&r, code, 13, ras_on);
    support(&r, 0);
    sync_start(&r, A(0));
    /* 0 call (push 1), 3 call (push 4), 6 ret to A(1) instead of A(4): explicit with depth 2 */
    tk_te_packet f2 = {.format = 2, .has_address = true, .irreport = true, .irdepth = 2};
    f2.address = diff(&r, A(1));
    feed(&r, &f2);
    /* 1 -> 12: an ordinary uninferable jump; the return used up its entry, depth 1 */
    tk_te_packet f2b = {.format = 2, .has_address = true};
    f2b.address = diff(&r, A(12));
    feed(&r, &f2b);
    support(&r, 1);
    const uint64_t want[] = {A(0), A(3), A(6), A(1), A(12)};
    expect_pcs(&r, want, 5);
    teardown_rec(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_count_no_address),
        cmocka_unit_test(test_branch_count_with_address),
        cmocka_unit_test(test_jump_target_cache),
        cmocka_unit_test(test_implicit_exception),
        cmocka_unit_test(test_irreport_mispredicted_return),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
