/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 packet parser on hand-encoded packets (IHI0064 chapter 6 encodings; expected values
 * worked out from the field definitions), byte-at-a-time feeding, errors and resynchronisation. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

typedef struct list {
    tk_etm4_packet p[256];
    size_t n;
} list;

static tk_status collect(void *ctx, const tk_etm4_packet *pkt)
{
    list *l = ctx;
    if (l->n < 256)
        l->p[l->n++] = *pkt;
    return TK_OK;
}

static void config(tk_etm4_config *cfg, uint32_t idr1)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->idr0 = 0x28000ea1; /* cycle counting, COMMOPT=1 */
    cfg->idr1 = idr1;
    cfg->idr2 = 0x00000488; /* 64-bit addresses, 32-bit context ID, 8-bit VMID */
    cfg->trace_id = 0x10;
    tk_etm4_config_init(cfg);
}

static const uint8_t stream[] = {
    /* 0: A-Sync */
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0x80,
    /* 12: Trace Info: PLCTL = INFO|CYCT, INFO = 1 (cycle counting), CYCT = 5 */
    0x01,
    0x09,
    0x01,
    0x05,
    /* 16: Address + context, 64-bit IS0, 0xffffffc000081234; EL1 SF NS, VMID 5, CID */
    0x85,
    (0x1234 >> 2) & 0x7f,
    (0x1234 >> 9) & 0x7f,
    0x08,
    0x00,
    0xc0,
    0xff,
    0xff,
    0xff,
    0xf1,
    0x05,
    0x78,
    0x56,
    0x34,
    0x12,
    /* 31: short address IS0, bits [8:2] = 0x10 */
    0x95,
    0x10,
    /* 33: exact match, entry 1 */
    0x91,
    /* 34: long 32-bit address IS0 0x00400000 (AArch64: upper half kept) */
    0x9a,
    0x00,
    0x00,
    0x40,
    0x00,
    /* 39: atoms F6 EEEN, F5 NNNNN, F5 NEEEE, F3 NEN, F4 NENE, F1 E, F2 EN */
    0xe0,
    0xd5,
    0xf5,
    0xfa,
    0xde,
    0xf7,
    0xd9,
    /* 46: timestamp 0x123456 with cycle count 0x10 */
    0x03,
    0xd6,
    0xe8,
    0x48,
    0x10,
    /* 51: exception IRQ (14), return address follows */
    0x06,
    0x1d,
    /* 53: cycle count F3 (+2), F1 (0x83) */
    0x12,
    0x0e,
    0x83,
    0x01,
    /* 57: event 4, context "same", overflow, discard */
    0x74,
    0x80,
    0x00,
    0x05,
    0x00,
    0x03,
    /* 63: reserved header, two dropped bytes, A-Sync, Trace On */
    0x08,
    0x11,
    0x22,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0x80,
    0x04,
    /* 79: truncated 64-bit address */
    0x9d,
    0x01,
    0x02,
};

static void check(const list *l)
{
    const tk_etm4_packet *p = l->p;
    assert_int_equal(l->n, 26);
    assert_int_equal(p[0].type, TK_ETM4_ASYNC);
    assert_int_equal(p[0].index, 0);
    assert_int_equal(p[1].type, TK_ETM4_TRACE_INFO);
    assert_int_equal(p[1].index, 12);
    assert_int_equal(p[1].info, 1);
    assert_int_equal(p[1].cc_threshold, 5);
    assert_int_equal(p[2].type, TK_ETM4_ADDR_CTXT_L_64IS0);
    assert_int_equal(p[2].addr, 0xffffffc000081234ull);
    assert_int_equal(p[2].ctx.el, 1);
    assert_true(p[2].ctx.sf && p[2].ctx.ns);
    assert_int_equal(p[2].ctx.vmid, 5);
    assert_int_equal(p[2].ctx.cid, 0x12345678);
    assert_int_equal(p[3].type, TK_ETM4_ADDR_S_IS0);
    assert_int_equal(p[3].index, 31);
    assert_int_equal(p[3].addr, 0xffffffc000081240ull);
    assert_int_equal(p[4].type, TK_ETM4_ADDR_MATCH);
    assert_int_equal(p[4].addr, 0xffffffc000081234ull);
    assert_int_equal(p[5].type, TK_ETM4_ADDR_L_32IS0);
    assert_int_equal(p[5].addr, 0xffffffc000400000ull);
    static const struct {
        uint8_t type, num;
        uint32_t bits;
    } atoms[] = {{TK_ETM4_ATOM_F6, 4, 0x7}, {TK_ETM4_ATOM_F5, 5, 0x00}, {TK_ETM4_ATOM_F5, 5, 0x1e},
                 {TK_ETM4_ATOM_F3, 3, 0x2}, {TK_ETM4_ATOM_F4, 4, 0xa},  {TK_ETM4_ATOM_F1, 1, 1},
                 {TK_ETM4_ATOM_F2, 2, 0x1}};
    for (int i = 0; i < 7; i++) {
        assert_int_equal(p[6 + i].type, atoms[i].type);
        assert_int_equal(p[6 + i].atom_num, atoms[i].num);
        assert_int_equal(p[6 + i].atoms, atoms[i].bits);
        assert_int_equal(p[6 + i].index, 39 + i);
    }
    assert_int_equal(p[13].type, TK_ETM4_TIMESTAMP);
    assert_int_equal(p[13].timestamp, 0x123456);
    assert_true(p[13].has_cc);
    assert_int_equal(p[13].cc, 0x10);
    assert_int_equal(p[14].type, TK_ETM4_EXCEPT);
    assert_int_equal(p[14].exc_type, 14);
    assert_int_equal(p[14].exc_addr_interp, 1);
    assert_int_equal(p[15].type, TK_ETM4_CCNT_F3);
    assert_int_equal(p[15].cc, 7);
    assert_false(p[15].has_commit); /* COMMOPT = 1 */
    assert_int_equal(p[16].type, TK_ETM4_CCNT_F1);
    assert_int_equal(p[16].cc, 0x83 + 5);
    assert_int_equal(p[17].type, TK_ETM4_EVENT);
    assert_int_equal(p[17].value, 4);
    assert_int_equal(p[18].type, TK_ETM4_CTXT);
    assert_false(p[18].ctx_updated);
    assert_int_equal(p[19].type, TK_ETM4_OVERFLOW);
    assert_int_equal(p[20].type, TK_ETM4_DISCARD);
    assert_int_equal(p[21].type, TK_ETM4_RESERVED);
    assert_int_equal(p[21].index, 63);
    assert_int_equal(p[22].type, TK_ETM4_NOT_SYNC);
    assert_int_equal(p[22].index, 64);
    assert_int_equal(p[23].type, TK_ETM4_ASYNC);
    assert_int_equal(p[23].index, 66);
    assert_int_equal(p[24].type, TK_ETM4_TRACE_ON);
    assert_int_equal(p[24].index, 78);
    assert_int_equal(p[25].type, TK_ETM4_INCOMPLETE_EOT);
    assert_int_equal(p[25].err_type, TK_ETM4_ADDR_L_64IS0);
    assert_int_equal(p[25].index, 79);
}

static void run_stream(size_t chunk, list *l)
{
    tk_etm4_config cfg;
    config(&cfg, 0x4100f403);
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(&cfg, collect, l, &p), TK_OK);
    /* Leading garbage before the first A-Sync is reported once as NOT_SYNC. */
    const uint8_t junk[3] = {0x42, 0x00, 0x17};
    assert_int_equal(tk_etm4_parser_data(p, junk, 3, 1000), TK_OK);
    for (size_t off = 0; off < sizeof(stream); off += chunk) {
        size_t n = sizeof(stream) - off < chunk ? sizeof(stream) - off : chunk;
        assert_int_equal(tk_etm4_parser_data(p, stream + off, n, off), TK_OK);
    }
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    tk_etm4_parser_free(p);
}

static void test_packets(void **state)
{
    (void)state;
    for (size_t chunk = 1; chunk <= sizeof(stream); chunk = chunk * 2 + 1) {
        list *l = calloc(1, sizeof(*l));
        run_stream(chunk, l);
        assert_int_equal(l->p[0].type, TK_ETM4_NOT_SYNC);
        assert_int_equal(l->p[0].index, 1000);
        l->n--;
        memmove(l->p, l->p + 1, l->n * sizeof(l->p[0]));
        check(l);
        free(l);
    }
}

/* Headers that depend on the configuration: Ignore needs ETMv4.3+, DS markers need data
 * tracing, conditional packets need conditional tracing. */
static void test_config_headers(void **state)
{
    (void)state;
    const uint8_t s[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x70, 0x20};
    for (int v = 0; v < 2; v++) {
        tk_etm4_config cfg;
        config(&cfg, v ? 0x4200f440 : 0x4100f403);
        list l = {.n = 0};
        tk_etm4_parser *p;
        assert_int_equal(tk_etm4_parser_new(&cfg, collect, &l, &p), TK_OK);
        assert_int_equal(tk_etm4_parser_data(p, s, sizeof(s), 0), TK_OK);
        tk_etm4_parser_free(p);
        assert_int_equal(l.p[1].type, v ? TK_ETM4_IGNORE : TK_ETM4_RESERVED);
        if (v) /* 0x20 without data trace: reserved for this configuration */
            assert_int_equal(l.p[2].type, TK_ETM4_RESERVED_CFG);
    }
}

/* ETE (TRCDEVARCH.ARCHVER = 5) headers on top of ETMv4: transactions, TS marker, source
 * address, PE reset (a 3-byte exception packet of type 0), ITE (ETE 1.3+). */
static void test_ete_headers(void **state)
{
    (void)state;
    const uint8_t s[] = {0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0x80, /* A-Sync */
                         0x0a, 0x0b, 0x88, /* TRANS_ST/COMMIT, TS marker */
                         0xb4, 0x10,       /* source address short IS0 */
                         0x06, 0x01, 0x00, /* PE reset */
                         0x09, 0x01, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 0}; /* ITE, EL1 */
    static const uint8_t want[] = {TK_ETM4_ASYNC,     TK_ETM4_TRANS_ST,       TK_ETM4_TRANS_COMMIT,
                                   TK_ETM4_TS_MARKER, TK_ETM4_SRC_ADDR_S_IS0, TK_ETM4_PE_RESET,
                                   TK_ETM4_ITE};
    tk_etm4_config cfg;
    config(&cfg, 0x4100fff0);
    cfg.devarch = 0x47735a13; /* ETE revision 3 */
    tk_etm4_config_init(&cfg);
    assert_true(cfg.ete);
    assert_int_equal(cfg.version, 0x53);
    list l = {.n = 0};
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(&cfg, collect, &l, &p), TK_OK);
    assert_int_equal(tk_etm4_parser_data(p, s, sizeof(s), 0), TK_OK);
    tk_etm4_parser_free(p);
    assert_int_equal(l.n, sizeof(want));
    for (size_t i = 0; i < sizeof(want); i++)
        assert_int_equal(l.p[i].type, want[i]);
    assert_int_equal(l.p[4].addr, 0x40);
    assert_int_equal(l.p[5].index, 17);
    assert_int_equal(l.p[5].addr, 0); /* PE reset restarts the address history at 0 */
    assert_int_equal(l.p[6].value, 1);
    assert_int_equal(l.p[6].ite_value, 0xdeadbeef);

    /* The same bytes to an ETMv4.0 unit: 0x0a is a reserved header. */
    config(&cfg, 0x4100f403);
    memset(&l, 0, sizeof(l));
    assert_int_equal(tk_etm4_parser_new(&cfg, collect, &l, &p), TK_OK);
    assert_int_equal(tk_etm4_parser_data(p, s, sizeof(s), 0), TK_OK);
    tk_etm4_parser_free(p);
    assert_int_equal(l.p[1].type, TK_ETM4_RESERVED);
    assert_int_equal(l.p[1].index, 12);
}

/* The text of atoms and addresses (written without snprintf), against snprintf; with less
 * room, as snprintf: what fits, and the whole length. */
static void test_format_text(void **state)
{
    (void)state;
    static const uint8_t types[] = {
        TK_ETM4_ATOM_F1,      TK_ETM4_ATOM_F2,      TK_ETM4_ATOM_F3,      TK_ETM4_ATOM_F4,
        TK_ETM4_ATOM_F5,      TK_ETM4_ATOM_F6,      TK_ETM4_ADDR_S_IS0,   TK_ETM4_ADDR_S_IS1,
        TK_ETM4_ADDR_L_32IS0, TK_ETM4_ADDR_L_32IS1, TK_ETM4_ADDR_L_64IS0, TK_ETM4_ADDR_L_64IS1,
        TK_ETM4_ADDR_MATCH};
    uint64_t x = 12345;
    for (unsigned k = 0; k < 20000; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tk_etm4_packet p;
        memset(&p, 0, sizeof(p));
        p.type = types[k % sizeof(types)];
        p.addr = k % 7 == 0 ? 0 : x >> (x & 63);
        p.addr_bits = (uint8_t)(x >> 8);
        p.match_idx = (uint8_t)(x >> 16) % 3;
        p.atom_num = (uint8_t)(1 + (x >> 24) % 40); /* (F6 has up to 24; over 32: cut) */
        p.atoms = (uint32_t)(x >> 32);
        char want[256];
        int nw = snprintf(want, sizeof(want), "%s", tk_etm4_pkt_name((tk_etm4_pkt_type)p.type));
        if (p.type == TK_ETM4_ADDR_MATCH) {
            nw += snprintf(want + nw, sizeof(want) - (size_t)nw, " match=%u addr=0x%llx",
                           p.match_idx, (unsigned long long)p.addr);
        } else if (p.type >= TK_ETM4_ADDR_S_IS0 && p.type <= TK_ETM4_ADDR_L_64IS1) {
            nw += snprintf(want + nw, sizeof(want) - (size_t)nw, " addr=0x%llx bits=%u",
                           (unsigned long long)p.addr, p.addr_bits);
        } else {
            nw += snprintf(want + nw, sizeof(want) - (size_t)nw, " atoms=");
            for (unsigned i = 0; i < p.atom_num && i < 32; i++)
                want[nw++] = (p.atoms >> i) & 1 ? 'E' : 'N';
            want[nw] = 0;
        }
        char got[256];
        assert_int_equal(tk_etm4_pkt_format(&p, got, sizeof(got)), nw);
        assert_string_equal(got, want);
        const size_t room = 1 + (size_t)(x >> 40) % 100;
        memset(got, 'x', sizeof(got));
        assert_int_equal(tk_etm4_pkt_format(&p, got, room), nw);
        assert_int_equal(strlen(got), (size_t)nw < room ? (size_t)nw : room - 1);
        assert_memory_equal(got, want, strlen(got));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packets),
        cmocka_unit_test(test_config_headers),
        cmocka_unit_test(test_ete_headers),
        cmocka_unit_test(test_format_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
