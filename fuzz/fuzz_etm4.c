/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 packet parser and flow decoder (etm4.h) with a configuration and a code region taken
 * from the input. Input: register values (CONFIGR, IDR0/1/2/8), trace ID, M-profile flag,
 * code region address and length, code bytes, then the trace. Properties: packets come in
 * index order with sizes that fit the input; decoding never faults; events are well formed. */
#include "fuzz_common.h"

#include "tracekit/etm4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct ctx {
    tk_etm4_decoder *dec;
    size_t len;
    uint64_t last_index;
    unsigned long packets;
} ctx;

static tk_status on_event(void *c, const tk_event *ev)
{
    (void)c;
    TK_FUZZ_CHECK(ev->kind >= TK_EV_RANGE && ev->kind <= TK_EV_TIMESTAMP);
    if (ev->kind == TK_EV_RANGE)
        TK_FUZZ_CHECK(ev->ninsn > 0);
    if (ev->kind == TK_EV_ERROR)
        TK_FUZZ_CHECK(ev->message != NULL);
    return TK_OK;
}

static tk_status on_packet(void *c, const tk_etm4_packet *pkt)
{
    ctx *x = c;
    TK_FUZZ_CHECK(pkt->type < TK_ETM4_PKT_TYPE_COUNT);
    TK_FUZZ_CHECK(pkt->index <= x->len);
    TK_FUZZ_CHECK(x->packets == 0 || pkt->index >= x->last_index);
    x->last_index = pkt->index;
    x->packets++;
    char text[256];
    TK_FUZZ_CHECK(tk_etm4_pkt_format(pkt, text, sizeof(text)) >= 0);
    return x->dec ? tk_etm4_decoder_packet(x->dec, pkt) : TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_etm4_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.configr = tk_fuzz_u32(&in);
    cfg.idr0 = tk_fuzz_u32(&in);
    cfg.idr1 = tk_fuzz_u32(&in);
    cfg.idr2 = tk_fuzz_u32(&in);
    cfg.idr8 = tk_fuzz_u32(&in);
    uint8_t id = tk_fuzz_u8(&in);
    cfg.trace_id = id & 0x7f;
    cfg.cortex_m = id >> 7;
    tk_etm4_config_init(&cfg);
    uint64_t base = (uint64_t)tk_fuzz_u32(&in) << (tk_fuzz_u8(&in) & 31);
    size_t codelen = tk_fuzz_u8(&in) * 4u;
    if (codelen > in.n)
        codelen = in.n;
    tk_cs_mem *mem = NULL;
    if (tk_cs_mem_new(&mem) != TK_OK)
        return 0;
    if (codelen)
        (void)tk_cs_mem_add(mem, base, in.p, codelen);
    in.p += codelen;
    in.n -= codelen;

    ctx x = {NULL, in.n, 0, 0};
    tk_etm4_parser *p = NULL;
    if (tk_etm4_decoder_new(&cfg, mem, on_event, &x, &x.dec) == TK_OK &&
        tk_etm4_parser_new(&cfg, on_packet, &x, &p) == TK_OK) {
        /* two calls, so a packet can straddle them */
        size_t half = in.n / 2;
        if (tk_etm4_parser_data(p, in.p, half, 0) == TK_OK &&
            tk_etm4_parser_data(p, in.p + half, in.n - half, half) == TK_OK)
            (void)tk_etm4_parser_end(p);
        (void)tk_etm4_decoder_end(x.dec);
    }
    tk_etm4_parser_free(p);
    tk_etm4_decoder_free(x.dec);
    tk_cs_mem_free(mem);
    return 0;
}
