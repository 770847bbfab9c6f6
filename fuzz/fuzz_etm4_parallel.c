/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel ETMv4 decoding (tk_etm4_decode_parallel) against the serial decode of the same
 * input: the events, field by field and in order, must be the same whatever the bytes, the
 * configuration, the piece size and the thread count. Input: register values (CONFIGR,
 * IDR0/1/2/8), trace ID, M-profile flag, code region address and length, code bytes (as
 * fuzz_etm4), then a framing byte (bit 0: formatter frames, else one raw source), the piece
 * size (u16, 64 bytes and up), the thread count (1-3), then the trace. */
#include "fuzz_common.h"

#include <stdlib.h>

#include "tracekit/etm4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Events as a hash of their fields but packet_index, and packet_index (a piece's sink counts
 * it from the piece: sink_done's packet_base). */
typedef struct ev_list {
    uint64_t *v;
    size_t n, cap; /* n pairs in v: hash, packet_index */
} ev_list;

static tk_status add_pair(ev_list *l, uint64_t h, uint64_t pi)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        uint64_t *v = realloc(l->v, 2 * cap * sizeof(*v));
        if (!v)
            return TK_ERR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    l->v[2 * l->n] = h;
    l->v[2 * l->n + 1] = pi;
    l->n++;
    return TK_OK;
}

static tk_status add_event(void *ctx, const tk_event *ev)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint64_t f[] = {ev->kind | ((uint64_t)ev->end << 16) | ((uint64_t)ev->taken << 24) |
                              ((uint64_t)ev->indirect << 32) | ((uint64_t)ev->isa << 40),
                          ev->first,
                          ev->last,
                          ev->ninsn,
                          ev->next,
                          ev->byte_offset,
                          ev->cause,
                          ev->context,
                          (uint64_t)ev->status};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        h = (h ^ f[i]) * 0x100000001b3ull;
    return add_pair(ctx, h, ev->packet_index);
}

/* The pieces' sinks: lists appended to the total in the order they are finished. */
static tk_status sink_new(void *ctx, tk_event_fn *fn, void **sink)
{
    (void)ctx;
    *fn = add_event;
    *sink = calloc(1, sizeof(ev_list));
    return *sink ? TK_OK : TK_ERR_NOMEM;
}

static tk_status sink_done(void *ctx, void *sink, uint64_t packet_base)
{
    ev_list *total = ctx, *l = sink;
    tk_status st = TK_OK;
    for (size_t i = 0; i < l->n && !st; i++)
        st = add_pair(total, l->v[2 * i], l->v[2 * i + 1] + packet_base);
    free(l->v);
    free(l);
    return st;
}

static void sink_drop(void *ctx, void *sink)
{
    ev_list *l = sink;
    (void)ctx;
    free(l->v);
    free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_cs_etm_regs regs;
    memset(&regs, 0, sizeof(regs));
    regs.configr = tk_fuzz_u32(&in);
    regs.idr[0] = tk_fuzz_u32(&in);
    regs.idr[1] = tk_fuzz_u32(&in);
    regs.idr[2] = tk_fuzz_u32(&in);
    regs.idr[8] = tk_fuzz_u32(&in);
    const int id = (tk_fuzz_u8(&in) & 0x7f) % 0x6f + 1;
    uint64_t base = (uint64_t)tk_fuzz_u32(&in) << (tk_fuzz_u8(&in) & 31);
    size_t codelen = tk_fuzz_u8(&in) * 4u;
    if (codelen > in.n)
        codelen = in.n;
    const uint8_t *code = in.p;
    in.p += codelen;
    in.n -= codelen;
    const uint8_t framing = tk_fuzz_u8(&in);
    const size_t piece = 64 + (size_t)tk_fuzz_u8(&in) * 256 + tk_fuzz_u8(&in);
    const unsigned jobs = 1 + tk_fuzz_u8(&in) % 3;

    tk_cs_snapshot *ss = NULL;
    if (tk_cs_snapshot_from_file("fuzz", (framing & 1) ? TK_CS_FMT_FRAMED : TK_CS_FMT_RAW, &regs,
                                 id, &ss) != TK_OK)
        return 0;
    if (codelen)
        (void)tk_cs_mem_add(ss->cores[0].mem, base, code, codelen);

    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = 0;
    o.id = id;
    o.data = in.p;
    o.data_len = in.n;
    tk_diag diag;
    tk_diag_clear(&diag);

    ev_list serial = {0}, parallel = {0};
    o.decode = true;
    o.on_event = add_event;
    o.ctx = &serial;
    const tk_status s1 = tk_etm4_run_snapshot(ss, &o, &diag);

    o.decode = false;
    o.on_event = NULL;
    o.ctx = NULL;
    tk_etm4_par_config pc = {.size = sizeof(pc),
                             .jobs = jobs,
                             .piece_bytes = piece,
                             .ctx = &parallel,
                             .sink_new = sink_new,
                             .sink_done = sink_done,
                             .sink_drop = sink_drop};
    tk_etm4_par_stats st = {.size = sizeof(st)};
    const tk_status s2 = tk_etm4_decode_parallel(ss, &o, &pc, &st, &diag);

    TK_FUZZ_CHECK(s1 == s2);
    if (s1 == TK_OK) {
        TK_FUZZ_CHECK(serial.n == parallel.n);
        TK_FUZZ_CHECK(!serial.n || !memcmp(serial.v, parallel.v, 2 * serial.n * sizeof(uint64_t)));
        TK_FUZZ_CHECK(st.fallback || st.stitched + st.redecoded + (st.pieces > 0) == st.pieces);
    }
    free(serial.v);
    free(parallel.v);
    tk_cs_snapshot_free(ss);
    return 0;
}
