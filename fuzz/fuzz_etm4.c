/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 packet parser and flow decoder (etm4.h) with a configuration and a code region taken
 * from the input. Input: register values (CONFIGR, IDR0/1/2/8), trace ID, M-profile flag,
 * code region address and length, code bytes, then the trace. Properties: packets come in
 * index order with sizes that fit the input; decoding never faults; events are well formed;
 * the batch modes' compact packets (tk_etm4_parser_set_batch: atoms, addresses; and
 * tk_etm4_parser_set_batch_runs: atom runs, addresses; its walk with pext where the CPU has it
 * and without) are the complete parser's packets, over
 * plain data and over joined formatter frames (tk_etm4_parser_frames against one
 * tk_etm4_parser_data call per 15-byte frame, and tk_etm4_parser_frames_at, in one call and in runs
 * of frames, against one call per frame of 15 or 14 bytes, the sizes from the register values). */
#include "fuzz_common.h"

#include "coresight/etm4_state.h"
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
    char text[256], general[95];
    const int n = tk_etm4_pkt_format(pkt, text, sizeof(text));
    TK_FUZZ_CHECK(n >= 0);
    /* with less room: the same text, cut as snprintf would cut it */
    const int ng = tk_etm4_pkt_format(pkt, general, sizeof(general));
    TK_FUZZ_CHECK(ng >= (int)sizeof(general) || (ng == n && !strcmp(text, general)));
    return x->dec ? tk_etm4_decoder_packet(x->dec, pkt) : TK_OK;
}

/* ---- batch mode against the complete parser ------------------------------------------ */

typedef struct trail {
    uint64_t *h; /* one hash per packet: index, type, size, header, printed values */
    size_t n, cap;
} trail;

static void trail_put(trail *t, const tk_etm4_packet *pkt)
{
    char text[256];
    int len = tk_etm4_pkt_format(pkt, text, sizeof(text));
    uint64_t h = 1469598103934665603ull;
    const uint64_t f[] = {pkt->index, pkt->type, pkt->size, pkt->header};
    const uint8_t *b = (const uint8_t *)f;
    for (size_t i = 0; i < sizeof(f); i++)
        h = (h ^ b[i]) * 1099511628211ull;
    for (int i = 0; i < len; i++)
        h = (h ^ (uint8_t)text[i]) * 1099511628211ull;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        uint64_t *nh = realloc(t->h, cap * sizeof(*nh));
        TK_FUZZ_CHECK(nh != NULL);
        t->h = nh;
        t->cap = cap;
    }
    t->h[t->n++] = h;
}

static tk_status trail_packet(void *c, const tk_etm4_packet *pkt)
{
    trail_put(c, pkt);
    return TK_OK;
}

typedef struct lite_ctx {
    trail *t;
    uint8_t trace_id;
} lite_ctx;

static tk_status trail_lite(void *c, const tk_etm4_pkt_lite *v, size_t n)
{
    lite_ctx *x = c;
    TK_FUZZ_CHECK(n >= 1);
    for (size_t i = 0; i < n; i++) {
        const unsigned np = tk_etm4_lite_packets(&v[i]);
        TK_FUZZ_CHECK(np >= 1 && np <= 8);
        for (unsigned k = 0; k < np; k++) {
            tk_etm4_packet pkt;
            tk_etm4_pkt_from_lite_at(&v[i], k, x->trace_id, &pkt);
            trail_put(x->t, &pkt);
        }
    }
    return TK_OK;
}

/* Frames of 15 or 14 bytes (bit f % 32 of layout set: 14) at index 16 f: where byte k of d is
 * from its frame's run (runs of 1 to 8 frames, from layout too), and where frames start (as
 * many as at[] can place). Returns the number of frames. */
enum { AT_MAX = 4000 };
static size_t frames_layout(uint32_t layout, size_t n, uint16_t *at, size_t *start)
{
    size_t f = 0, pos = 0, run = 0;
    for (; pos < n && f < AT_MAX; f++) {
        const size_t len = (layout >> (f % 32)) & 1 ? 14 : 15;
        if (f % (1 + (layout >> 29)) == 0)
            run = f; /* a run of frames starts here */
        start[f] = pos;
        for (size_t i = 0; i < len && pos < n; i++)
            at[pos++] = (uint16_t)(16 * (f - run) + i);
    }
    start[f] = pos;
    return f;
}

/* The packets of d as frames (frames_layout): complete, one tk_etm4_parser_data call per frame;
 * batch mode, one tk_etm4_parser_frames_at call per run of frames. */
static tk_status parse_frames_at(tk_etm4_parser *p, const uint8_t *d, size_t n, uint32_t layout,
                                 bool batch)
{
    static uint16_t at[AT_MAX * 15];
    static size_t start[AT_MAX + 1];
    const size_t nf = frames_layout(layout, n, at, start);
    tk_status st = TK_OK;
    for (size_t f = 0; f < nf && st == TK_OK;) {
        size_t g = batch ? f + 1 + (layout >> 29) : f + 1; /* the run's frames: f..g-1 */
        if (g > nf)
            g = nf;
        if (batch) /* at[] of a run counts from its first frame */
            st = tk_etm4_parser_frames_at(p, d + start[f], at + start[f], start[g] - start[f],
                                          16 * (uint64_t)f);
        else
            st = tk_etm4_parser_data(p, d + start[f], start[g] - start[f], 16 * (uint64_t)f);
        f = g;
    }
    return st;
}

/* The packets of d[0..n): frames 0: in two tk_etm4_parser_data calls (batch mode or not);
 * frames 1: as joined frames, one tk_etm4_parser_frames call (batch) or one
 * tk_etm4_parser_data call per 15 bytes at index 16 * frame (complete); frames 2: as frames of
 * 15 or 14 bytes (parse_frames_at). */
static void parse_trail(const tk_etm4_config *cfg, const uint8_t *d, size_t n, int batch,
                        int frames, trail *t)
{
    tk_etm4_parser *p = NULL;
    lite_ctx lc = {t, cfg->trace_id};
    if (tk_etm4_parser_new(cfg, trail_packet, t, &p) != TK_OK)
        return;
    if (batch == 1)
        tk_etm4_parser_set_batch(p, trail_lite, &lc);
    else if (batch >= 2)
        tk_etm4_parser_set_batch_runs(p, trail_lite, &lc);
    if (batch == 3)
        tk_etm4_parser_use_pext(p, false);
    tk_status st = TK_OK;
    if (!frames) {
        size_t half = n / 2;
        st = tk_etm4_parser_data(p, d, half, 0);
        if (st == TK_OK)
            st = tk_etm4_parser_data(p, d + half, n - half, half);
    } else if (frames == 2) {
        st = parse_frames_at(p, d, n, cfg->idr1 ^ cfg->configr, batch);
    } else if (batch) {
        st = tk_etm4_parser_frames(p, d, n, 0);
    } else {
        for (size_t f = 0; f * 15 < n && st == TK_OK; f++) {
            size_t k = n - f * 15 < 15 ? n - f * 15 : 15;
            st = tk_etm4_parser_data(p, d + f * 15, k, 16 * (uint64_t)f);
        }
    }
    if (st == TK_OK)
        (void)tk_etm4_parser_end(p);
    tk_etm4_parser_free(p);
}

static void same_batch_packets(const tk_etm4_config *cfg, const uint8_t *d, size_t n, int frames)
{
    trail full = {0}, lite = {0}, runs = {0}, portable = {0};
    parse_trail(cfg, d, n, 0, frames, &full);
    parse_trail(cfg, d, n, 1, frames, &lite);
    parse_trail(cfg, d, n, 2, frames, &runs);
    parse_trail(cfg, d, n, 3, frames, &portable);
    TK_FUZZ_CHECK(full.n == lite.n && full.n == runs.n && full.n == portable.n);
    for (size_t i = 0; i < full.n; i++)
        TK_FUZZ_CHECK(full.h[i] == lite.h[i] && full.h[i] == runs.h[i] &&
                      full.h[i] == portable.h[i]);
    free(full.h);
    free(lite.h);
    free(runs.h);
    free(portable.h);
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
    same_batch_packets(&cfg, in.p, in.n, 0);
    same_batch_packets(&cfg, in.p, in.n, 1);
    same_batch_packets(&cfg, in.p, in.n, 2);
    return 0;
}
