/* SPDX-License-Identifier: BSD-2-Clause */
/* The general packet encapsulation (encap.h): reader with resynchronisation, srcID
 * demultiplexer, and the te_inst codec on the payloads. Input: srcID/timestamp/type widths,
 * a parameter selector, then the stream. Properties: the reader always progresses and ends,
 * packets stay inside the buffer, and after an error sync_forward lands on a later offset. */
#include "fuzz_common.h"

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct sink_ctx {
    const tk_te_params *p;
    unsigned long packets;
} sink_ctx;

static tk_status sink(void *ctx, const tk_encap_packet *pkt)
{
    sink_ctx *c = ctx;
    tk_te_packet te;
    tk_diag diag;
    tk_diag_clear(&diag);
    c->packets++;
    if (pkt->flow == TK_ENCAP_FLOW_TE_INST && pkt->payload_len > 0)
        (void)tk_te_packet_decode(c->p, pkt->payload, pkt->payload_len, &te, &diag);
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_encap_config cfg;
    tk_encap_config_init(&cfg);
    uint8_t w = tk_fuzz_u8(&in), w2 = tk_fuzz_u8(&in);
    cfg.srcid_bits = w % 17;
    cfg.timestamp_bytes = (w >> 5) + (w2 & 1);
    cfg.type_bits = (w2 >> 1) % 9;
    cfg.report_nulls = (w2 >> 5) & 1;
    bool demux = (w2 >> 6) & 1;
    cfg.unframed = w2 >> 7; /* shares the bit with type_bits' residue: both values reach each */
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_encap_config_validate(&cfg, &diag) != TK_OK)
        return 0;
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    tk_encap_reader *r = NULL;
    if (tk_encap_reader_alloc(&r, &cfg, in.p, in.n) != TK_OK)
        return 0;
    sink_ctx sc = {&p, 0};
    if (demux) {
        tk_encap_demux *d = NULL;
        if (tk_encap_demux_alloc(&d) == TK_OK) {
            tk_encap_demux_route(d, 1, sink, &sc);
            tk_encap_demux_default(d, sink, &sc);
            /* on an error, resynchronise and run again until the stream ends */
            for (size_t rounds = 0; rounds <= in.n; rounds++) {
                tk_status st = tk_encap_demux_run(d, r, &diag);
                if (st == TK_OK || st == TK_END)
                    break;
                if (tk_encap_reader_sync_forward(r) != TK_OK)
                    break;
            }
            tk_encap_demux_free(d);
        }
        tk_encap_reader_free(r);
        return 0;
    }
    size_t calls = 0;
    for (;;) {
        TK_FUZZ_CHECK(calls++ <= in.n + 1);
        uint64_t before = tk_encap_reader_get_offset(r);
        tk_encap_packet pkt;
        tk_status st = tk_encap_reader_next(r, &pkt, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            TK_FUZZ_CHECK(diag.byte_offset < in.n);
            if (st == TK_ERR_TRUNCATED)
                break;
            if (calls & 1) {
                if (tk_encap_reader_sync_forward(r) != TK_OK)
                    break;
                TK_FUZZ_CHECK(tk_encap_reader_get_offset(r) > before);
            }
            continue;
        }
        TK_FUZZ_CHECK(pkt.offset >= before && pkt.total_len >= 1);
        TK_FUZZ_CHECK(pkt.offset + pkt.total_len <= in.n);
        TK_FUZZ_CHECK(tk_encap_reader_get_offset(r) == pkt.offset + pkt.total_len);
        if (pkt.payload_len)
            TK_FUZZ_CHECK(pkt.payload != NULL);
        sink(&sc, &pkt);
    }
    tk_encap_reader_free(r);
    return 0;
}
