/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 flow decoder on a small A64 program and hand-encoded packets: atoms walk to the next
 * branch, the return stack supplies omitted return targets (IHI0064 §4.4.6), exceptions end
 * the range at the preferred return address, and missing code is an error event. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

/* A64 encodings from llvm-mc -show-encoding */
#define BL_0x1000 0x94000400u /* bl #0x1000 */
#define NOP 0xd503201fu
#define BEQ_8 0x54000040u /* b.eq #8 */
#define RET 0xd65f03c0u

typedef struct evs {
    tk_event e[64];
    size_t n;
} evs;

static tk_status collect(void *ctx, const tk_event *ev)
{
    evs *l = ctx;
    if (l->n < 64)
        l->e[l->n++] = *ev;
    return TK_OK;
}

static tk_status feed(void *ctx, const tk_etm4_packet *pkt)
{
    return tk_etm4_decoder_packet(ctx, pkt);
}

static tk_status feed_batch(void *ctx, const tk_etm4_pkt_lite *v, size_t n)
{
    return tk_etm4_decoder_packets(ctx, v, n);
}

static void put32(uint8_t *m, uint32_t v)
{
    m[0] = (uint8_t)v, m[1] = (uint8_t)(v >> 8), m[2] = (uint8_t)(v >> 16),
    m[3] = (uint8_t)(v >> 24);
}

/* Long 64-bit IS0 address packet body (§6.4.12): addr[8:2], addr[15:9], then bytes. */
static size_t addr64(uint8_t *b, uint8_t hdr, uint64_t a)
{
    b[0] = hdr;
    b[1] = (uint8_t)((a >> 2) & 0x7f);
    b[2] = (uint8_t)((a >> 9) & 0x7f);
    for (int i = 2; i < 8; i++)
        b[1 + i] = (uint8_t)(a >> (8 * i));
    return 9;
}

/* batch: atoms and addresses through the parser's batch mode and the decoder's fused loop. */
static void run_mode(uint32_t configr, uint64_t exc_ret, bool batch, evs *out)
{
    tk_cs_mem *mem;
    assert_int_equal(tk_cs_mem_new(&mem), TK_OK);
    uint8_t code[0x20];
    const uint32_t f1[] = {BL_0x1000, NOP, BEQ_8, NOP, RET};
    for (int i = 0; i < 5; i++)
        put32(code + 4 * i, f1[i]);
    assert_int_equal(tk_cs_mem_add(mem, 0x1000, code, 20), TK_OK);
    put32(code, NOP);
    put32(code + 4, RET);
    assert_int_equal(tk_cs_mem_add(mem, 0x2000, code, 8), TK_OK);

    uint8_t s[128];
    size_t n = 0;
    memset(s, 0, 11), n = 11;
    s[n++] = 0x80;             /* A-Sync */
    s[n++] = 0x01, s[n++] = 0; /* Trace Info, no sections */
    n += addr64(s + n, 0x85, 0x1000);
    s[n++] = 0x31;                /* context: EL1, AArch64, non-secure */
    s[n++] = 0xdb;                /* atoms E E: bl taken, ret taken (no address follows) */
    s[n++] = 0xf6;                /* atom N: b.eq at 0x1008 not taken */
    s[n++] = 0x06, s[n++] = 0x1d; /* exception (IRQ), return address follows */
    n += addr64(s + n, 0x9d, exc_ret);
    n += addr64(s + n, 0x9d, 0x2000); /* handler */
    s[n++] = 0xf7;                    /* atom E: ret at 0x2004 */
    n += addr64(s + n, 0x9d, 0x9000); /* no code there */
    s[n++] = 0xf7;

    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.configr = configr;
    cfg.idr0 = 0x28000ea1;
    cfg.idr1 = 0x4100f403;
    cfg.idr2 = 0x488;
    cfg.trace_id = 0x10;
    tk_etm4_config_init(&cfg);
    tk_etm4_decoder *d;
    assert_int_equal(tk_etm4_decoder_new(&cfg, mem, collect, out, &d), TK_OK);
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(&cfg, feed, d, &p), TK_OK);
    if (batch)
        tk_etm4_parser_set_batch(p, feed_batch, d);
    assert_int_equal(tk_etm4_parser_data(p, s, n, 0), TK_OK);
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    assert_int_equal(tk_etm4_decoder_end(d), TK_OK);
    tk_etm4_parser_free(p);
    tk_etm4_decoder_free(d);
    tk_cs_mem_free(mem);
}

/* Both decoder entries, which must give the same events (every field); the exception's
 * preferred return address is exc_ret (0x1010 in the program's flow). */
static void run_exc(uint32_t configr, uint64_t exc_ret, evs *out)
{
    evs b = {.n = 0};
    run_mode(configr, exc_ret, false, out);
    run_mode(configr, exc_ret, true, &b);
    assert_int_equal(out->n, b.n);
    for (size_t i = 0; i < b.n; i++) {
        const tk_event *x = &out->e[i], *y = &b.e[i];
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->taken, y->taken);
        assert_int_equal(x->indirect, y->indirect);
        assert_int_equal(x->cause, y->cause);
        assert_int_equal(x->first, y->first);
        assert_int_equal(x->last, y->last);
        assert_int_equal(x->ninsn, y->ninsn);
        assert_int_equal(x->next, y->next);
        assert_int_equal(x->byte_offset, y->byte_offset);
        assert_int_equal(x->packet_index, y->packet_index);
        assert_int_equal(x->status, y->status);
    }
}

static void run(uint32_t configr, evs *out)
{
    run_exc(configr, 0x1010, out);
}

static const tk_event *next_kind(const evs *l, size_t *i, int kind)
{
    while (*i < l->n && l->e[*i].kind != kind)
        (*i)++;
    assert_true(*i < l->n);
    return &l->e[(*i)++];
}

static void check_range(const tk_event *e, uint64_t first, uint64_t last, uint64_t n)
{
    assert_int_equal(e->first, first);
    assert_int_equal(e->last, last);
    assert_int_equal(e->ninsn, n);
}

static void test_return_stack(void **state)
{
    (void)state;
    evs l = {.n = 0};
    run(0x10c1, &l); /* TRCCONFIGR.RS set */
    size_t i = 0;
    const tk_event *e = next_kind(&l, &i, TK_EV_RANGE);
    check_range(e, 0x1000, 0x1000, 1);
    assert_int_equal(e->end, TK_END_CALL);
    assert_int_equal(e->next, 0x2000);
    e = next_kind(&l, &i, TK_EV_RANGE);
    check_range(e, 0x2000, 0x2004, 2);
    assert_int_equal(e->end, TK_END_RETURN);
    e = next_kind(&l, &i, TK_EV_RANGE); /* target of the ret from the return stack */
    check_range(e, 0x1004, 0x1008, 2);
    assert_int_equal(e->end, TK_END_BRANCH);
    assert_false(e->taken);
    e = next_kind(&l, &i, TK_EV_RANGE); /* up to the exception's return address */
    check_range(e, 0x100c, 0x100c, 1);
    assert_int_equal(e->end, TK_END_TRAP);
    e = next_kind(&l, &i, TK_EV_TRAP);
    assert_int_equal(e->cause, 14);
    assert_int_equal(e->first, 0x1010);
    e = next_kind(&l, &i, TK_EV_RANGE);
    check_range(e, 0x2000, 0x2004, 2);
    e = next_kind(&l, &i, TK_EV_ERROR);
    assert_int_equal(e->status, TK_ERR_NO_CODE);
    assert_int_equal(e->first, 0x9000);
}

/* Without the return stack the omitted target is unknown: the N atom is dropped and the
 * flow resumes at the next address. */
static void test_no_return_stack(void **state)
{
    (void)state;
    evs l = {.n = 0};
    run(0x00c1, &l);
    size_t ranges = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.e[i].kind == TK_EV_RANGE) {
            ranges++;
            assert_true(l.e[i].first != 0x1004);
        }
    assert_int_equal(ranges, 3);
}

/* An exception whose return address lies behind the decoded pc cannot be reached by the
 * instructions executed since: a mismatch is reported at it (the memory image or the trace
 * is wrong), and the flow goes on from the exception as before. */
static void test_exception_behind_pc(void **state)
{
    (void)state;
    evs l = {.n = 0};
    run_exc(0x10c1, 0x1004, &l);
    size_t i = 0;
    const tk_event *e = next_kind(&l, &i, TK_EV_ERROR);
    assert_int_equal(e->status, TK_ERR_MISMATCH);
    assert_int_equal(e->first, 0x1004);
    e = next_kind(&l, &i, TK_EV_TRAP);
    assert_int_equal(e->first, 0x1004);
    e = next_kind(&l, &i, TK_EV_RANGE);
    check_range(e, 0x2000, 0x2004, 2);
    /* and none when it is where the flow got to */
    l.n = 0;
    run(0x10c1, &l);
    for (size_t k = 0; k < l.n; k++)
        assert_false(l.e[k].kind == TK_EV_ERROR && l.e[k].status == TK_ERR_MISMATCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_return_stack),
        cmocka_unit_test(test_no_return_stack),
        cmocka_unit_test(test_exception_behind_pc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
