/* SPDX-License-Identifier: BSD-2-Clause */
/* The full E-Trace path (te_decoder.h): raw framing, te_inst codec and flow decoder against a
 * fixed program (dhrystone of riscv-ref, loaded once, plus spike's reset code as the
 * reference decoder has it). Input: parameter selector, then a .te_inst_raw stream, decoded
 * by tk_te_decoder_run_raw as `tracekit decode` does, three times: with range events (the PC
 * list and listing sinks), with block batches (TK_TE_DEC_BLOCK_EVENTS: count and profile),
 * and with block batches from a decoder without its walk memo (walk_memo.h).
 * Properties: no fault; ranges and batched blocks are non-empty and lie in the image; errors
 * carry a message and an offset inside the stream; every way reports the same instructions,
 * ranges and errors; the two block ways send exactly the same events (a hash of every field
 * and batch boundary); the work per input stays bounded (libFuzzer's -timeout and
 * -rss_limit_mb catch a decoder that walks or grows without end). */
#include "fuzz_common.h"

#include "etrace/walk_memo.h"
#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* About a millisecond of walking per branch-count packet under ASan. */
#define FUZZ_MAX_PREDICTED 1024u
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Set once in LLVMFuzzerInitialize (libFuzzer's setup hook takes no context). The block
 * cache inside it fills as code is visited; it is bounded by the program's size. */
static tk_image *image;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    image = tk_fuzz_dhrystone_image("fuzz_te_decoder");
    return 0;
}

typedef struct ctx {
    size_t len;
    uint64_t insns, ranges, errors;
    uint64_t hash; /* of every event, as the sink sees it */
} ctx;

static void mix(ctx *x, uint64_t v)
{
    x->hash = (x->hash ^ v) * 0x100000001b3ull;
}

static void check_range(ctx *x, uint64_t first, uint64_t last, uint64_t ninsn)
{
    TK_FUZZ_CHECK(ninsn > 0);
    tk_rv_insn insn;
    TK_FUZZ_CHECK(tk_image_fetch(image, first, &insn) == TK_OK);
    TK_FUZZ_CHECK(tk_image_fetch(image, last, &insn) == TK_OK);
    x->insns += ninsn;
    x->ranges++;
}

static tk_status on_event(void *c, const tk_event *ev)
{
    ctx *x = c;
    TK_FUZZ_CHECK(ev->kind >= TK_EV_RANGE && ev->kind <= TK_EV_BLOCKS);
    mix(x, ev->kind);
    mix(x, ev->byte_offset);
    mix(x, ev->packet_index);
    mix(x, ev->first);
    mix(x, ev->last);
    mix(x, ev->ninsn);
    mix(x, ev->next);
    mix(x, (uint64_t)ev->end << 16 | (uint64_t)ev->taken << 8 | ev->indirect);
    if (ev->kind == TK_EV_RANGE) {
        check_range(x, ev->first, ev->last, ev->ninsn);
    } else if (ev->kind == TK_EV_BLOCKS) {
        TK_FUZZ_CHECK(ev->nblocks > 0 && ev->blocks);
        for (uint32_t i = 0; i < ev->nblocks; i++) {
            const tk_bblock *b = ev->blocks[i].block;
            check_range(x, b->start, b->last, b->ninsn);
            mix(x, b->start);
            mix(x, ev->blocks[i].next);
            mix(x, (uint64_t)ev->blocks[i].taken << 8 | ev->blocks[i].end);
        }
    } else if (ev->kind == TK_EV_ERROR) {
        TK_FUZZ_CHECK(ev->message && ev->message[0]);
        TK_FUZZ_CHECK(ev->byte_offset < x->len);
        x->errors++;
    }
    return TK_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!image)
        return 0;
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    ctx x[3];
    for (int way = 0; way < 3; way++)
        x[way] = (ctx){.len = in.n ? in.n : 1, .hash = 0xcbf29ce484222325ull};
    for (int way = 0; way < 3; way++) {
        tk_te_decoder *d = NULL;
        tk_te_raw *r = NULL;
        if (tk_te_decoder_new(&p, image, on_event, &x[way], &d) != TK_OK ||
            tk_te_raw_from_buffer(in.p, in.n, &r) != TK_OK) {
            tk_te_decoder_free(d);
            return 0;
        }
        if (way)
            tk_te_decoder_set_flags(d, TK_TE_DEC_BLOCK_EVENTS);
        if (way == 2)
            (void)tk_dec_set_walk_memo(d, false);
        /* A branch-count packet may claim 2^32 predicted branches, all of which the decoder
         * would follow: 20 minutes under ASan for 8 bytes (bug 7). Bounded here as a tool
         * taking untrusted trace would bound it; the path to the limit is still fuzzed. */
        tk_te_decoder_set_max_predicted(d, FUZZ_MAX_PREDICTED);
        /* damaged packets become error events; the status is the first of them */
        (void)tk_te_decoder_run_raw(d, r);
        (void)tk_te_decoder_finish(d);
        tk_te_decoder_free(d);
        tk_te_raw_close(r);
    }
    for (int way = 1; way < 3; way++) {
        TK_FUZZ_CHECK(x[0].insns == x[way].insns);
        TK_FUZZ_CHECK(x[0].ranges == x[way].ranges);
        TK_FUZZ_CHECK(x[0].errors == x[way].errors);
    }
    TK_FUZZ_CHECK(x[1].hash == x[2].hash);
    return 0;
}
