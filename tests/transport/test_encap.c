/* SPDX-License-Identifier: BSD-2-Clause */
/* Packet encapsulation: hand-built packets with odd srcID widths, writer/reader round trips
 * over random configurations, synchronisation by null runs, damage reporting, the srcID
 * demultiplexer, the reference .te_inst_raw iterator and the source reader tk_te_encap_next. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_hand_built(void **state)
{
    (void)state;
    /* 12-bit srcID 0xabc, 2-byte timestamp 0x1234 (extend), 1-bit type 1, payload 0x5a.
     * Bits after the header: srcID[12] ts[16] type[1] payload[8] = 37 bits; header.length =
     * ceil((12%8 + 1 + 8)/8) = 2; packet = 1 + 1 + 2 + 2 = 6 bytes.
     * bit stream (LSB first from byte 1): bc | c:a (srcid 11:8 = 0xa, ts 3:0 = 4) -> 0x4a |
     * ts 11:4 = 0x23 | ts 15:12 = 1, type 1, payload 2:0 = 010 -> 0b0101_0001 = 0x51 |
     * payload 7:3 = 01011 -> 0x0b, pad 0 */
    static const uint8_t pkt[] = {0x82, 0xbc, 0x4a, 0x23, 0x51, 0x0b};
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.srcid_bits = 12;
    cfg.timestamp_bytes = 2;
    cfg.type_bits = 1;
    uint8_t out[64];
    size_t n = 0;
    tk_encap_fields f = {.flow = 0, .extend = true, .srcid = 0xabc, .timestamp = 0x1234, .type = 1};
    uint8_t payload = 0x5a;
    assert_int_equal(tk_encap_write(&cfg, &f, &payload, 1, out, sizeof(out), &n), TK_OK);
    assert_int_equal(n, sizeof(pkt));
    assert_memory_equal(out, pkt, n);
    tk_encap_reader *r;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, pkt, sizeof(pkt)), TK_OK);
    tk_encap_packet p;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.length, 2);
    assert_int_equal(p.extend, 1);
    assert_int_equal(p.srcid, 0xabc);
    assert_int_equal(p.timestamp, 0x1234);
    assert_int_equal(p.type, 1);
    assert_int_equal(p.payload_len, 1);
    assert_int_equal(p.payload[0], 0x5a);
    assert_int_equal(p.total_len, 6);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_END);
    tk_encap_reader_free(r);

    /* The reference raw layout: 8-bit aligned, zero copy into the buffer */
    static const uint8_t ref[] = {0x41, 0x1f, 0x47, 0x73, 0, 0, 0, 0, 0, 0x04};
    tk_encap_config_init(&cfg);
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, ref, sizeof(ref)), TK_OK);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.flow, TK_ENCAP_FLOW_TE_INST);
    assert_ptr_equal(p.payload, ref + 1);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.offset, 2);
    assert_int_equal(p.index, 1);
    assert_ptr_equal(p.payload, ref + 3);
    assert_int_equal(p.payload_len, 7);
    tk_encap_reader_free(r);
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    uint64_t s = 5;
    static uint8_t stream[1 << 16];
    for (int c = 0; c < 300; c++) {
        tk_encap_config cfg;
        tk_encap_config_init(&cfg);
        cfg.srcid_bits = (uint32_t)(rnd(&s) % 17);
        cfg.timestamp_bytes = (uint32_t)(rnd(&s) % 9);
        cfg.type_bits = (uint32_t)(rnd(&s) % 9);
        unsigned maxlen = (TK_ENCAP_MAX_LENGTH * 8 - cfg.srcid_bits % 8 - cfg.type_bits) / 8;
        tk_encap_fields fs[200];
        uint8_t pl[200][TK_ENCAP_MAX_LENGTH];
        size_t pn[200], off = 0;
        for (int i = 0; i < 200; i++) {
            if (rnd(&s) % 4 == 0) /* sprinkle nulls, which the reader skips */
                stream[off++] = tk_encap_null(rnd(&s) & 1, 0);
            tk_encap_fields *f = &fs[i];
            f->flow = (uint8_t)(rnd(&s) & 3);
            f->extend = cfg.timestamp_bytes && (rnd(&s) & 1);
            f->srcid = (uint16_t)(cfg.srcid_bits ? rnd(&s) & ((1u << cfg.srcid_bits) - 1) : 0);
            f->timestamp = f->extend ? rnd(&s) : 0;
            if (f->extend && cfg.timestamp_bytes < 8)
                f->timestamp &= (1ull << (8 * cfg.timestamp_bytes)) - 1;
            f->type = cfg.type_bits ? (uint32_t)(rnd(&s) & ((1u << cfg.type_bits) - 1)) : 0;
            pn[i] = 1 + rnd(&s) % maxlen;
            for (size_t k = 0; k < pn[i]; k++)
                pl[i][k] = (uint8_t)rnd(&s);
            size_t w = 0;
            assert_int_equal(
                tk_encap_write(&cfg, f, pl[i], pn[i], stream + off, sizeof(stream) - off, &w),
                TK_OK);
            off += w;
        }
        tk_encap_reader *r;
        assert_int_equal(tk_encap_reader_alloc(&r, &cfg, stream, off), TK_OK);
        tk_diag d;
        tk_diag_clear(&d);
        for (int i = 0; i < 200; i++) {
            tk_encap_packet p;
            if (tk_encap_reader_next(r, &p, &d) != TK_OK)
                fail_msg("config %d packet %d: %s", c, i, d.message);
            assert_int_equal(p.index, i);
            assert_int_equal(p.flow, fs[i].flow);
            assert_int_equal(p.extend, fs[i].extend);
            assert_int_equal(p.srcid, fs[i].srcid);
            assert_int_equal(p.timestamp, fs[i].timestamp);
            assert_int_equal(p.type, fs[i].type);
            assert_int_equal(p.payload_len, pn[i]);
            assert_memory_equal(p.payload, pl[i], pn[i]);
        }
        tk_encap_packet p;
        assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_END);
        assert_int_equal(tk_encap_reader_get_offset(r), off);
        tk_encap_reader_free(r);
    }
}

static void test_sync(void **state)
{
    (void)state;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    assert_int_equal(tk_encap_sync_run(&cfg), 31);
    uint8_t buf[256];
    size_t off = 0;
    /* garbage, then a packet whose 31-byte payload is all zero (a run of 31 'null' bytes
     * inside a packet), then a real packet: the sync point after that run is the header */
    buf[off++] = 0x13;
    buf[off++] = 0x20;
    buf[off++] = 0x5f; /* header of a 31-byte packet */
    memset(buf + off, 0, 31);
    off += 31;
    size_t second = off;
    buf[off++] = 0x42;
    buf[off++] = 0x11;
    buf[off++] = 0x22;
    tk_encap_reader *r;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, off), TK_OK);
    assert_int_equal(tk_encap_reader_sync_forward(r), TK_OK);
    assert_int_equal(tk_encap_reader_get_offset(r), second);
    tk_encap_packet p;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.payload_len, 2);
    assert_int_equal(p.payload[1], 0x22);
    assert_int_equal(tk_encap_reader_sync_forward(r), TK_END);
    tk_encap_reader_free(r);

    /* an explicit sync sequence: 31 null.idle + null.alignment */
    cfg.srcid_bits = 8;
    cfg.timestamp_bytes = 4;
    size_t n = tk_encap_write_sync(&cfg, buf, sizeof(buf));
    assert_int_equal(n, 31 + 4 + 1 + 1);
    assert_int_equal(buf[n - 1], 0x80);
    assert_int_equal(buf[0], 0x00);
    buf[n] = 0x01; /* a 1-byte packet: srcid, no extend, length 1 */
    buf[n + 1] = 7;
    buf[n + 2] = 9;
    /* preceded by 3 bytes of garbage */
    memmove(buf + 3, buf, n + 3);
    buf[0] = 0xff;
    buf[1] = 0x01;
    buf[2] = 0x02;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, n + 6), TK_OK);
    assert_int_equal(tk_encap_reader_sync_forward(r), TK_OK);
    assert_int_equal(tk_encap_reader_get_offset(r), n + 3);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.srcid, 7);
    assert_int_equal(p.payload[0], 9);
    tk_encap_reader_free(r);
    assert_int_equal(tk_encap_write_sync(&cfg, buf, 5), 0);
}

static void test_damage(void **state)
{
    (void)state;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    /* extend set without timestamps: reported, then the next packet is read */
    static const uint8_t a[] = {0x41, 0x10, 0x81, 0x55, 0x42, 0x01, 0x02, 0x43, 0x01};
    tk_encap_reader *r;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, a, sizeof(a)), TK_OK);
    tk_encap_packet p;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_ERR_BAD_PACKET);
    assert_int_equal(d.byte_offset, 2);
    assert_int_equal(d.packet_index, 1);
    assert_non_null(strstr(d.message, "offset 2"));
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
    assert_int_equal(p.offset, 4);
    assert_int_equal(p.index, 2);
    /* the last packet announces 3 bytes, 1 remains */
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_ERR_TRUNCATED);
    assert_int_equal(d.byte_offset, 7);
    assert_int_equal(d.packet_index, 3);
    assert_non_null(strstr(d.message, "truncated"));
    assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_END);
    tk_encap_reader_free(r);

    /* writer limits */
    uint8_t out[64], pl[32] = {0};
    tk_encap_fields f = {0};
    size_t w;
    assert_int_equal(tk_encap_write(&cfg, &f, pl, 32, out, sizeof(out), &w), TK_ERR_OVERFLOW);
    assert_int_equal(tk_encap_write(&cfg, &f, pl, 31, out, sizeof(out), &w), TK_OK);
    assert_int_equal(w, 32);
    assert_int_equal(tk_encap_write(&cfg, &f, pl, 0, out, sizeof(out), &w), TK_ERR_INVALID);
    f.extend = true; /* no timestamp configured */
    assert_int_equal(tk_encap_write(&cfg, &f, pl, 1, out, sizeof(out), &w), TK_ERR_INVALID);
    cfg.srcid_bits = 3;
    f.extend = false;
    f.srcid = 8;
    assert_int_equal(tk_encap_write(&cfg, &f, pl, 1, out, sizeof(out), &w), TK_ERR_INVALID);
    cfg.srcid_bits = 17;
    assert_int_equal(tk_encap_config_validate(&cfg, &d), TK_ERR_CONFIG);
}

typedef struct counts {
    unsigned n[4];
    size_t bytes;
} counts;

static tk_status sink(void *ctx, const tk_encap_packet *p)
{
    counts *c = ctx;
    c->n[p->srcid & 3]++;
    c->bytes += p->payload_len;
    return p->payload[0] == 0xee ? TK_ERR_BAD_PACKET : TK_OK;
}

static void test_demux(void **state)
{
    (void)state;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.srcid_bits = 8;
    uint8_t buf[1024];
    size_t off = 0;
    uint64_t s = 77;
    unsigned want[4] = {0};
    for (int i = 0; i < 100; i++) {
        tk_encap_fields f = {.flow = 2, .srcid = (uint16_t)(rnd(&s) % 4)};
        uint8_t pl[2] = {(uint8_t)i, 0};
        size_t w;
        assert_int_equal(
            tk_encap_write(&cfg, &f, pl, 1 + (size_t)(i & 1), buf + off, sizeof(buf) - off, &w),
            TK_OK);
        off += w;
        want[f.srcid]++;
    }
    tk_encap_demux *dm;
    assert_int_equal(tk_encap_demux_alloc(&dm), TK_OK);
    counts c0 = {{0}, 0}, c1 = {{0}, 0}, other = {{0}, 0};
    assert_int_equal(tk_encap_demux_route(dm, 0, sink, &c0), TK_OK);
    assert_int_equal(tk_encap_demux_route(dm, 1, sink, &c1), TK_OK);
    tk_encap_reader *r;
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, off), TK_OK);
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_demux_run(dm, r, &d), TK_OK);
    assert_int_equal(c0.n[0], want[0]);
    assert_int_equal(c1.n[1], want[1]);
    assert_int_equal(tk_encap_demux_dropped(dm), want[2] + want[3]);
    /* with a default sink nothing is dropped */
    tk_encap_demux_default(dm, sink, &other);
    tk_encap_reader_sync_set(r, 0);
    assert_int_equal(tk_encap_demux_run(dm, r, &d), TK_OK);
    assert_int_equal(other.n[2], want[2]);
    assert_int_equal(other.n[3], want[3]);
    assert_int_equal(tk_encap_demux_dropped(dm), want[2] + want[3]);
    /* a sink error stops the run and names the packet */
    tk_encap_reader_free(r);
    tk_encap_fields f = {.srcid = 1};
    uint8_t bad = 0xee;
    size_t w;
    assert_int_equal(tk_encap_write(&cfg, &f, &bad, 1, buf + off, sizeof(buf) - off, &w), TK_OK);
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, off + w), TK_OK);
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_demux_run(dm, r, &d), TK_ERR_BAD_PACKET);
    assert_int_equal(d.byte_offset, off);
    assert_int_equal(d.packet_index, 100);
    tk_encap_reader_free(r);
    tk_encap_demux_free(dm);
}

static void test_raw(void **state)
{
    (void)state;
    /* support, a zero length byte, F2, then a truncated packet */
    static const uint8_t a[] = {0x41, 0x1f, 0x40, 0x45, 0x02, 0xe0, 0xff, 0xff, 0x00, 0x45, 0x01};
    tk_te_raw *r;
    assert_int_equal(tk_te_raw_from_buffer(a, sizeof(a), &r), TK_OK);
    tk_te_raw_packet p;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_OK);
    assert_int_equal(p.offset, 0);
    assert_int_equal(p.msg_type, 2);
    assert_int_equal(p.len, 1);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_ERR_BAD_PACKET);
    assert_int_equal(d.byte_offset, 2);
    assert_non_null(strstr(d.message, "length 0"));
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_OK);
    assert_int_equal(p.offset, 3);
    assert_int_equal(p.index, 1);
    assert_int_equal(p.len, 5);
    assert_ptr_equal(p.payload, a + 4);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_ERR_TRUNCATED);
    assert_int_equal(d.byte_offset, 9);
    assert_int_equal(d.packet_index, 2);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_END);
    tk_te_raw_close(r);

    /* the writer produces what the iterator reads */
    FILE *wf = fopen("written.te_inst_raw", "wb");
    assert_non_null(wf);
    static const uint8_t pa[] = {0x1f}, pb[] = {0x02, 0xe0, 0xff, 0xff, 0x00};
    assert_int_equal(tk_te_raw_write(wf, 2, pa, sizeof(pa)), TK_OK);
    assert_int_equal(tk_te_raw_write(wf, 3, pb, sizeof(pb)), TK_OK);
    assert_int_equal(tk_te_raw_write(wf, 2, pb, 0), TK_ERR_INVALID);
    assert_int_equal(tk_te_raw_write(wf, 4, pb, 1), TK_ERR_INVALID);
    fclose(wf);
    assert_int_equal(tk_te_raw_open("written.te_inst_raw", &r, &d), TK_OK);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_OK);
    assert_int_equal(p.msg_type, 2);
    assert_int_equal(p.payload[0], 0x1f);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_OK);
    assert_int_equal(p.msg_type, 3);
    assert_int_equal(p.offset, 2);
    assert_memory_equal(p.payload, pb, sizeof(pb));
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_END);
    tk_te_raw_close(r);

    assert_int_equal(tk_te_raw_open("no/such.te_inst_raw", &r, &d), TK_ERR_IO);
    assert_non_null(strstr(d.message, "no/such.te_inst_raw"));
    /* an empty file has no packets */
    FILE *f = fopen("empty.te_inst_raw", "wb");
    fclose(f);
    assert_int_equal(tk_te_raw_open("empty.te_inst_raw", &r, &d), TK_OK);
    assert_int_equal(tk_te_raw_next(r, &p, &d), TK_END);
    tk_te_raw_close(r);

    /* a reference file: the packet count of stats.json */
    if (!tk_test_data_present())
        return;
    char *path = tk_test_data_path("etrace-ref/median/itype3_basic/median.te_inst_raw");
    assert_int_equal(tk_te_raw_open(path, &r, &d), TK_OK);
    uint64_t n = 0, payload = 0;
    tk_status st;
    while ((st = tk_te_raw_next(r, &p, &d)) == TK_OK) {
        assert_int_equal(p.index, n);
        n++;
        payload += p.len;
    }
    assert_int_equal(st, TK_END);
    assert_int_equal(n, 217);       /* stats.json "packets" */
    assert_int_equal(payload, 919); /* stats.json "payload_bytes" */
    assert_int_equal(tk_te_raw_size(r), 1136);
    tk_te_raw_close(r);
    free(path);
}

/* The layout's text form (--encap): keys in any order, omitted ones 0, each error named. */
static void test_config_parse(void **state)
{
    (void)state;
    tk_encap_config c;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_config_parse("srcid-bits=8,timestamp-bytes=2", &c, &d), TK_OK);
    assert_int_equal(c.srcid_bits, 8);
    assert_int_equal(c.timestamp_bytes, 2);
    assert_int_equal(c.type_bits, 0);
    assert_int_equal(c.size, sizeof(c));
    assert_int_equal(tk_encap_config_parse("type-bits=1,srcid-bits=0x3", &c, &d), TK_OK);
    assert_int_equal(c.srcid_bits, 3);
    assert_int_equal(c.timestamp_bytes, 0);
    assert_int_equal(c.type_bits, 1);
    assert_true(c.unframed); /* a captured stream, unless framed=1 */
    assert_int_equal(tk_encap_config_parse("", &c, &d), TK_OK); /* the raw framing's */
    assert_int_equal(c.srcid_bits + c.timestamp_bytes + c.type_bits, 0);
    assert_int_equal(tk_encap_config_parse("framed=1,srcid-bits=4", &c, &d), TK_OK);
    assert_false(c.unframed);
    assert_int_equal(c.srcid_bits, 4);
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"srcid=8", "unknown key 'srcid'"},
        {"srcid-bits", "expected KEY=N at 'srcid-bits'"},
        {"srcid-bits=8,", "expected KEY=N at ''"},
        {"srcid-bits=x", "'x' is not a width"},
        {"srcid-bits=8x", "'8x' is not a width"},
        {"srcid-bits=-1", "'-1' is not a width"},
        {"srcid-bits=17", "srcID of 17 bits exceeds 16"},
        {"timestamp-bytes=9", "timestamp of 9 bytes exceeds 8"},
        {"type-bits=9", "type field of 9 bits exceeds 8"},
        {"framed=2", "framed is 0 or 1"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tk_diag_clear(&d);
        assert_int_equal(tk_encap_config_parse(bad[i].spec, &c, &d), TK_ERR_CONFIG);
        if (!strstr(d.message, bad[i].says))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, d.message, bad[i].says);
    }
}

/* An unframed stream ends every run of nulls with a null.alignment; with cfg.unframed a
 * null.idle right before a normal packet is reported there (zeroed bytes read as idle fill),
 * the packet skipped by its length, and reading goes on. */
static void test_unframed_alignment(void **state)
{
    (void)state;
    /* te_inst packets of 2 payload bytes: after an alignment, after an idle, after nothing */
    const uint8_t s[] = {0x00, 0x00, 0x80, 0x42, 0xaa, 0xbb, 0x00, 0x42, 0xcc, 0xdd,
                         0x42, 0xee, 0xff, 0x00, 0x00, 0x80, 0x42, 0x11, 0x22};
    for (int unframed = 0; unframed < 2; unframed++) {
        tk_encap_config cfg;
        tk_encap_config_init(&cfg);
        cfg.unframed = unframed;
        tk_encap_reader *r = NULL;
        assert_int_equal(tk_encap_reader_alloc(&r, &cfg, s, sizeof(s)), TK_OK);
        tk_encap_packet p;
        tk_diag d;
        tk_diag_clear(&d);
        assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
        assert_int_equal(p.offset, 3);
        if (unframed) {
            assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_ERR_BAD_PACKET);
            assert_int_equal(d.byte_offset, 7);
            assert_int_equal(d.packet_index, 1);
            assert_non_null(strstr(d.message, "follows a null.idle"));
        } else {
            assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
            assert_int_equal(p.offset, 7);
        }
        assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
        assert_int_equal(p.offset, 10);
        assert_int_equal(p.index, 2);
        assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_OK);
        assert_int_equal(p.offset, 16);
        assert_int_equal(tk_encap_reader_next(r, &p, &d), TK_END);
        tk_encap_reader_free(r);
    }
}

static tk_status ignore_event(void *ctx, const tk_event *ev)
{
    (void)ctx;
    (void)ev;
    return TK_OK;
}

/* tk_te_encap_next: one source's packets, or with TK_TE_ENCAP_ALL_SOURCES every source's in
 * stream order with its srcID; a cut last packet reported once; out-of-range srcIDs refused. */
static void test_encap_next_sources(void **state)
{
    (void)state;
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    cfg.srcid_bits = 8;
    cfg.type_bits = 1;
    /* srcID 3, 5, 3 (type 1: data trace), 5, then srcID 3 cut: header announces 3 bytes */
    static const struct {
        uint16_t srcid;
        uint32_t type;
        uint8_t payload;
    } in[] = {{3, 0, 0x10}, {5, 0, 0x20}, {3, 1, 0x30}, {5, 0, 0x40}};
    uint8_t buf[64];
    size_t len = 0;
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        tk_encap_fields f = {.srcid = in[i].srcid, .type = in[i].type};
        size_t n = 0;
        assert_int_equal(
            tk_encap_write(&cfg, &f, &in[i].payload, 1, buf + len, sizeof(buf) - len, &n), TK_OK);
        len += n;
    }
    const size_t cut = len;
    buf[len++] = 0x03;
    buf[len++] = 3;

    tk_encap_reader *r = NULL;
    tk_encap_packet p;
    tk_diag d;
    tk_diag_clear(&d);
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, len), TK_OK);
    tk_te_encap_stats st = {.size = sizeof(st)};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        assert_int_equal(tk_te_encap_next(r, TK_TE_ENCAP_ALL_SOURCES, &st, &p, &d), TK_OK);
        assert_int_equal(p.srcid, in[i].srcid);
        assert_int_equal(p.type, in[i].type);
        assert_int_equal(p.index, i);
        assert_int_equal(p.payload[0], in[i].payload);
    }
    assert_int_equal(tk_te_encap_next(r, TK_TE_ENCAP_ALL_SOURCES, &st, &p, &d), TK_ERR_TRUNCATED);
    assert_int_equal(d.byte_offset, cut);
    assert_int_equal(tk_te_encap_next(r, TK_TE_ENCAP_ALL_SOURCES, &st, &p, &d), TK_END);
    assert_int_equal(st.other_packets, 0);
    assert_int_equal(st.truncated, 2); /* the cut packet, and its srcID byte read as a header */
    assert_int_equal(st.nsources, 2);
    assert_int_equal(st.sources[0], 3);
    assert_int_equal(st.source_packets[0], 2);
    assert_int_equal(st.sources[1], 5);
    assert_int_equal(st.source_packets[1], 2);
    tk_encap_reader_free(r);

    /* one source: the others are counted and skipped, the cut packet is still reported */
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, len), TK_OK);
    st = (tk_te_encap_stats){.size = sizeof(st)};
    assert_int_equal(tk_te_encap_next(r, 5, &st, &p, &d), TK_OK);
    assert_int_equal(p.payload[0], 0x20);
    assert_int_equal(tk_te_encap_next(r, 5, &st, &p, &d), TK_OK);
    assert_int_equal(p.payload[0], 0x40);
    assert_int_equal(tk_te_encap_next(r, 5, &st, &p, &d), TK_ERR_TRUNCATED);
    assert_int_equal(tk_te_encap_next(r, 5, &st, &p, &d), TK_END);
    assert_int_equal(st.other_packets, 2);
    assert_int_equal(st.nsources, 2);

    /* no srcID is wider than 16 bits; a flow decoder takes one source */
    assert_int_equal(tk_te_encap_next(r, 0x10001, &st, &p, &d), TK_ERR_INVALID);
    assert_int_equal(tk_te_encap_next(r, UINT32_MAX, &st, &p, &d), TK_ERR_INVALID);
    tk_encap_reader_free(r);
    assert_int_equal(tk_encap_reader_alloc(&r, &cfg, buf, len), TK_OK);
    st = (tk_te_encap_stats){.size = sizeof(st)};
    assert_int_equal(tk_te_encap_next(r, 0xffff, &st, &p, &d), TK_ERR_TRUNCATED);
    tk_encap_reader_free(r);
    tk_te_params tp;
    tk_te_params_init(&tp);
    tk_image *img = NULL;
    tk_te_decoder *dec = NULL;
    tk_te_raw *raw = NULL;
    assert_int_equal(tk_image_new(TK_ARCH_RISCV, 64, &img), TK_OK);
    assert_int_equal(tk_te_decoder_new(&tp, img, ignore_event, NULL, &dec), TK_OK);
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &raw), TK_OK);
    assert_int_equal(tk_te_decoder_run_encap(dec, raw, &cfg, TK_TE_ENCAP_ALL_SOURCES, NULL),
                     TK_ERR_INVALID);
    tk_te_raw_close(raw);
    tk_te_decoder_free(dec);
    tk_image_free(img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_built),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_sync),
        cmocka_unit_test(test_damage),
        cmocka_unit_test(test_demux),
        cmocka_unit_test(test_raw),
        cmocka_unit_test(test_config_parse),
        cmocka_unit_test(test_unframed_alignment),
        cmocka_unit_test(test_encap_next_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
