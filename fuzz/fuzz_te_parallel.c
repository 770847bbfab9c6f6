/* SPDX-License-Identifier: BSD-2-Clause */
/* Parallel E-Trace decoding (tk_te_decode_parallel: the cutter's header walk, the pieces on
 * worker threads with the walk memo each thread lends its pieces' decoders, the stitching)
 * against the serial decode of the same bytes (tk_te_decoder_run_raw), on dhrystone as
 * fuzz_te_decoder (every decode on its own copy of the program's segments). Input: parameter
 * selector (as fuzz_te_decoder), a configuration byte (bits 0-1: threads, 1-3; bit 2: block events;
 * bits 3-5: piece size, 64 << k bytes), then a .te_inst_raw stream. Properties: the same status and
 * first damaged packet; the same instructions, one address each in the same order (events may be
 * cut differently at a seam: the stitch ends the serial range that was open at a sync there); the
 * same error events (offset, packet index, status, message) in the same order; every piece either
 * stitched or decoded again. */
#include "fuzz_common.h"

#include "tracekit/te_parallel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
/* As fuzz_te_decoder: a branch-count packet may claim 2^32 predicted branches. */
#define FUZZ_MAX_PREDICTED 1024u

/* The program, loaded once. Every decode, serial or on a thread, gets a copy of its segments
 * (an image caches blocks and is not shared between threads; and so both sides see the same
 * memory). */
static tk_image *program;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    program = tk_fuzz_dhrystone_image("fuzz_te_parallel");
    return 0;
}

static tk_status copy_image(void *ctx, tk_image **out)
{
    (void)ctx;
    tk_image *img = NULL;
    tk_status st = tk_image_new(tk_image_get_arch(program), tk_image_xlen(program), &img);
    for (size_t i = 0; st == TK_OK && i < tk_image_segment_count(program); i++) {
        const tk_segment *g = tk_image_segment(program, i);
        if (g->exec)
            st = tk_image_add_region(img, g->vaddr, g->data, g->filesz);
    }
    if (st != TK_OK) {
        tk_image_free(img);
        return st;
    }
    *out = img;
    return TK_OK;
}

/* Order-sensitive hashes that join: h(ab) = h(a) * B^len(b) + h(b). A piece's sink keeps its
 * own, the pieces are joined in trace order, and the result is that of one sequence however
 * it was cut. */
#define B 0x100000001b3ull

typedef struct seq {
    uint64_t h, n;
} seq;

static void seq_add(seq *s, uint64_t v)
{
    s->h = s->h * B + v;
    s->n++;
}

static void seq_join(seq *a, const seq *b)
{
    uint64_t f = 1, base = B;
    for (uint64_t e = b->n; e; e >>= 1, base *= base)
        if (e & 1)
            f *= base;
    a->h = a->h * f + b->h;
    a->n += b->n;
}

/* What a decode did: every instruction address in order, every error event in order. */
typedef struct flow {
    const tk_image *img;
    seq pcs, errors;
} flow;

static void add_range(flow *f, uint64_t first, uint64_t last, uint64_t ninsn)
{
    uint64_t pc = first;
    for (uint64_t k = 0; k < ninsn; k++) {
        seq_add(&f->pcs, pc);
        tk_rv_insn insn;
        TK_FUZZ_CHECK(tk_image_fetch(f->img, pc, &insn) == TK_OK);
        if (k + 1 < ninsn)
            pc += insn.len;
    }
    TK_FUZZ_CHECK(pc == last);
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    flow *f = ctx;
    if (ev->kind == TK_EV_RANGE) {
        add_range(f, ev->first, ev->last, ev->ninsn);
    } else if (ev->kind == TK_EV_BLOCKS) {
        for (uint32_t i = 0; i < ev->nblocks; i++) {
            const tk_bblock *b = ev->blocks[i].block;
            add_range(f, b->start, b->last, b->ninsn);
        }
    } else if (ev->kind == TK_EV_ERROR) {
        uint64_t e = 0xcbf29ce484222325ull;
        const uint64_t v[] = {ev->byte_offset, ev->packet_index, (uint64_t)ev->status};
        for (size_t i = 0; i < 3; i++)
            e = (e ^ v[i]) * B;
        for (const char *s = ev->message; s && *s; s++)
            e = (e ^ (uint8_t)*s) * B;
        seq_add(&f->errors, e);
    }
    return TK_OK;
}

/* The pieces' sinks: flows of their own, joined to the whole in trace order. */
static tk_status sink_new(void *ctx, tk_image *img, tk_event_fn *fn, void **sink)
{
    (void)ctx;
    flow *f = calloc(1, sizeof(*f));
    if (!f)
        return TK_ERR_NOMEM;
    f->img = img;
    *fn = on_event;
    *sink = f;
    return TK_OK;
}

static tk_status sink_done(void *ctx, void *sink)
{
    flow *all = ctx, *f = sink;
    seq_join(&all->pcs, &f->pcs);
    seq_join(&all->errors, &f->errors);
    free(f);
    return TK_OK;
}

static void sink_drop(void *ctx, void *sink)
{
    (void)ctx;
    free(sink);
}

/* Serially: tk_te_decoder_run_raw as `tracekit decode` runs it. Returns the fatal status
 * (TK_OK if none); *bad gets the first damaged packet's. */
static tk_status decode_serial(const tk_te_params *p, const uint8_t *buf, size_t len,
                               unsigned flags, flow *f, tk_status *bad)
{
    tk_image *img;
    if (copy_image(NULL, &img) != TK_OK)
        return TK_ERR_NOMEM;
    f->img = img;
    tk_te_decoder *d = NULL;
    tk_te_raw *r = NULL;
    tk_status st = tk_te_decoder_new(p, img, on_event, f, &d);
    if (st == TK_OK)
        st = tk_te_raw_from_buffer(buf, len, &r);
    if (st == TK_OK) {
        tk_te_decoder_set_flags(d, flags);
        tk_te_decoder_set_max_predicted(d, FUZZ_MAX_PREDICTED);
        st = tk_te_decoder_run_raw(d, r);
        *bad = st == TK_ERR_BAD_PACKET || st == TK_ERR_TRUNCATED ? st : TK_OK;
        if (*bad != TK_OK)
            st = TK_OK; /* damaged packets are error events; the decode goes on */
        if (st == TK_OK)
            st = tk_te_decoder_finish(d);
    }
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
    tk_image_free(img);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!program)
        return 0;
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    const uint8_t conf = tk_fuzz_u8(&in);
    const unsigned jobs = 1 + (conf & 3u) % 3u;
    const unsigned flags = conf & 4u ? TK_TE_DEC_BLOCK_EVENTS : 0u;
    const size_t piece = (size_t)64 << ((conf >> 3) & 7u);

    flow want = {0};
    tk_status want_bad = TK_OK;
    const tk_status want_st = decode_serial(&p, in.p, in.n, flags, &want, &want_bad);
    if (want_st == TK_ERR_NOMEM)
        return 0;

    flow got = {0};
    tk_te_par_config cfg = {.size = sizeof(cfg),
                            .jobs = jobs,
                            .piece_bytes = piece,
                            .flags = flags,
                            .max_predicted = FUZZ_MAX_PREDICTED,
                            .ctx = &got,
                            .open_image = copy_image,
                            .sink_new = sink_new,
                            .sink_done = sink_done,
                            .sink_drop = sink_drop};
    tk_te_par_stats st = {.size = sizeof(st)};
    tk_status got_bad = TK_OK;
    const tk_status got_st = tk_te_decode_parallel(&p, in.p, in.n, &cfg, &st, &got_bad);
    TK_FUZZ_CHECK(got_st == want_st);
    if (got_st != TK_OK)
        return 0; /* where a fatal status stops the flow is not compared */
    TK_FUZZ_CHECK(got_bad == want_bad);
    TK_FUZZ_CHECK(st.pieces == 0 || st.stitched + st.redecoded + 1 == st.pieces);
    TK_FUZZ_CHECK(got.pcs.n == want.pcs.n && got.pcs.h == want.pcs.h);
    TK_FUZZ_CHECK(got.errors.n == want.errors.n && got.errors.h == want.errors.h);
    return 0;
}
