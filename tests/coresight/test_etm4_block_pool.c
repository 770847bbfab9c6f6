/* SPDX-License-Identifier: BSD-2-Clause */
/* The flow decoder's block cache under pressure: the decoder compiled with a cache of 8
 * blocks and a 16-entry index, so that the pool is emptied every few atoms (links dropped,
 * index entries taken over, blocks walked again), must give exactly the events of the
 * library's decoder, through the batch entry (links, fused loop) and the per-packet one, on
 * real streams (ETMv4 and ETE). The return stack cases are in test_etm4_decoder (no snapshot
 * with the return stack on has code images). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

/* The decoder again, with its own names and a tiny cache (etm4.h, already included, declares
 * the library's names only). */
typedef struct tiny_decoder tiny_decoder;
tk_status tiny_decoder_new(const tk_etm4_config *cfg, const tk_cs_mem *mem, tk_event_fn fn,
                           void *ctx, tiny_decoder **out);
void tiny_decoder_free(tiny_decoder *d);
tk_status tiny_decoder_packet(tiny_decoder *d, const tk_etm4_packet *pkt);
tk_status tiny_decoder_packets(tiny_decoder *d, const tk_etm4_pkt_lite *pkts, size_t n);
tk_status tiny_decoder_end(tiny_decoder *d);
#define BLOCK_CHUNK 4
#define BLOCK_CHUNKS 2
#define NINDEX 16
#define tk_etm4_decoder tiny_decoder
#define tk_etm4_decoder_new tiny_decoder_new
#define tk_etm4_decoder_free tiny_decoder_free
#define tk_etm4_decoder_packet tiny_decoder_packet
#define tk_etm4_decoder_packets tiny_decoder_packets
#define tk_etm4_decoder_end tiny_decoder_end
/* (the state functions of etm4_state.h, unused here) */
#define tk_etm4_decoder_settled tiny_decoder_settled
#define tk_etm4_decoder_get_state tiny_decoder_get_state
#define tk_etm4_dec_state_equal tiny_dec_state_equal
#define tk_etm4_decoder_reset tiny_decoder_reset
#define tk_etm4_decoder_set_events tiny_decoder_set_events
#define tk_etm4_decoder_packet_count tiny_decoder_packet_count
#include "coresight/etm4_decoder.c"
#undef tk_etm4_decoder
#undef tk_etm4_decoder_new
#undef tk_etm4_decoder_free
#undef tk_etm4_decoder_packet
#undef tk_etm4_decoder_packets
#undef tk_etm4_decoder_end

/* Every field of every event, hashed. */
typedef struct evs {
    uint64_t *h;
    size_t n, cap, ranges;
} evs;

static uint64_t fnv(const void *data, size_t n, uint64_t h)
{
    const uint8_t *s = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    evs *l = ctx;
    uint64_t f[] = {ev->kind,    ev->end,  ev->taken,       ev->indirect,     ev->cause,
                    ev->first,   ev->last, ev->ninsn,       ev->next,         ev->context,
                    ev->time,    ev->priv, ev->byte_offset, ev->packet_index, (uint64_t)ev->status,
                    ev->trace_id};
    uint64_t h = fnv(f, sizeof(f), 1469598103934665603ull);
    if (ev->message)
        h = fnv(ev->message, strlen(ev->message), h);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4096;
        l->h = realloc(l->h, l->cap * sizeof(*l->h));
        assert_non_null(l->h);
    }
    l->h[l->n++] = h;
    l->ranges += ev->kind == TK_EV_RANGE;
    return TK_OK;
}

/* One source's deformatted bytes. */
typedef struct stream {
    uint8_t id;
    uint8_t *b;
    size_t n;
} stream;

static tk_status grab(void *ctx, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    stream *s = ctx;
    (void)index;
    if (id == s->id) {
        s->b = realloc(s->b, s->n + n);
        assert_non_null(s->b);
        memcpy(s->b + s->n, d, n);
        s->n += n;
    }
    return TK_OK;
}

/* The packets of one parse go to three decoders: the library's (batch entry), the tiny one
 * (batch entry) and the tiny one (per packet). */
typedef struct three {
    tk_etm4_decoder *lib;
    tiny_decoder *tiny_batch, *tiny_full;
} three;

static tk_status to_three(void *ctx, const tk_etm4_packet *p)
{
    three *x = ctx;
    tk_status st = tk_etm4_decoder_packet(x->lib, p);
    if (!st)
        st = tiny_decoder_packet(x->tiny_batch, p);
    if (!st)
        st = tiny_decoder_packet(x->tiny_full, p);
    return st;
}

static tk_status lite_to_three(void *ctx, const tk_etm4_pkt_lite *v, size_t n)
{
    three *x = ctx;
    tk_status st = tk_etm4_decoder_packets(x->lib, v, n);
    if (!st)
        st = tiny_decoder_packets(x->tiny_batch, v, n);
    for (size_t k = 0; k < n && !st; k++) {
        tk_etm4_packet p;
        tk_etm4_pkt_from_lite(&v[k], 0, &p); /* (the decoders use their own trace ID) */
        st = tiny_decoder_packet(x->tiny_full, &p);
    }
    return st;
}

static void same(const evs *a, const evs *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        assert_int_equal(a->h[i], b->h[i]);
}

static void check(const char *rel, uint8_t id, size_t min_ranges)
{
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss;
    tk_diag diag;
    assert_int_equal(tk_cs_snapshot_load(dir, &ss, &diag), TK_OK);
    free(dir);
    const tk_cs_source *src = tk_cs_snapshot_find_id(ss, id);
    assert_non_null(src);
    size_t raw_len;
    uint8_t *raw = tk_test_read_file(ss->buffers[src->buffer].path, &raw_len);
    assert_non_null(raw);
    stream s = {id, NULL, 0};
    if (ss->buffers[src->buffer].format == TK_CS_FMT_RAW) { /* a single source */
        s.b = raw;
        s.n = raw_len;
        raw = NULL;
    } else {
        tk_cs_deformatter *df;
        unsigned flags = tk_cs_buffer_deformat_flags(ss->buffers[src->buffer].format);
        assert_int_equal(tk_cs_deformatter_new(flags, grab, NULL, &s, &df), TK_OK);
        assert_int_equal(tk_cs_deformat(df, raw, raw_len), TK_OK);
        assert_int_equal(tk_cs_deformat_end(df), TK_OK);
        tk_cs_deformatter_free(df);
    }
    assert_true(s.n > 0);

    tk_etm4_config cfg;
    tk_etm4_config_from_source(&cfg, ss, src);
    const tk_cs_mem *mem = ss->cores[src->core >= 0 ? src->core : 0].mem;
    evs e_lib = {0}, e_batch = {0}, e_full = {0};
    three x;
    assert_int_equal(tk_etm4_decoder_new(&cfg, mem, on_event, &e_lib, &x.lib), TK_OK);
    assert_int_equal(tiny_decoder_new(&cfg, mem, on_event, &e_batch, &x.tiny_batch), TK_OK);
    assert_int_equal(tiny_decoder_new(&cfg, mem, on_event, &e_full, &x.tiny_full), TK_OK);
    tk_etm4_parser *p;
    assert_int_equal(tk_etm4_parser_new(&cfg, to_three, &x, &p), TK_OK);
    tk_etm4_parser_set_batch(p, lite_to_three, &x);
    assert_int_equal(tk_etm4_parser_data(p, s.b, s.n, 0), TK_OK);
    assert_int_equal(tk_etm4_parser_end(p), TK_OK);
    assert_int_equal(tk_etm4_decoder_end(x.lib), TK_OK);
    assert_int_equal(tiny_decoder_end(x.tiny_batch), TK_OK);
    assert_int_equal(tiny_decoder_end(x.tiny_full), TK_OK);
    tk_etm4_parser_free(p);

    /* The tiny cache was really emptied over and over. */
    assert_non_null(x.tiny_batch->blocks);
    assert_true(x.tiny_batch->blocks->gen > min_ranges / 100);
    assert_true(e_lib.ranges >= min_ranges);
    same(&e_lib, &e_batch);
    same(&e_lib, &e_full);
    print_message("%s id 0x%x: %zu events (%zu ranges), pool emptied %u times, identical\n", rel,
                  id, e_lib.n, e_lib.ranges, (unsigned)x.tiny_batch->blocks->gen);
    tk_etm4_decoder_free(x.lib);
    tiny_decoder_free(x.tiny_batch);
    tiny_decoder_free(x.tiny_full);
    free(e_lib.h);
    free(e_batch.h);
    free(e_full.h);
    free(s.b);
    free(raw);
    tk_cs_snapshot_free(ss);
}

static void test_etm4(void **state)
{
    (void)state;
    check("opencsd/snapshots/bugfix-exact-match", 0x12, 1000000);
    check("opencsd/snapshots/juno_r1_1", 0x10, 6000);
}

static void test_ete(void **state)
{
    (void)state;
    check("opencsd/snapshots-ete/001-ack_test", 0x2, 20000);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_etm4),
        cmocka_unit_test(test_ete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
