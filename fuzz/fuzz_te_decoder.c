/* SPDX-License-Identifier: BSD-2-Clause */
/* The full E-Trace path (te_decoder.h): raw framing, te_inst codec and flow decoder against a
 * fixed program (dhrystone of riscv-ref, loaded once, plus spike's reset code as the
 * reference decoder has it). Input: parameter selector, then a .te_inst_raw stream, decoded
 * by tk_te_decoder_run_raw as `tracekit decode` does. Properties: no
 * fault; ranges are non-empty and lie in the image; errors carry a message and an offset
 * inside the stream; the work per input stays bounded (libFuzzer's -timeout and
 * -rss_limit_mb catch a decoder that walks or grows without end). */
#include "fuzz_common.h"

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
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
    uint64_t insns;
} ctx;

static tk_status on_event(void *c, const tk_event *ev)
{
    ctx *x = c;
    TK_FUZZ_CHECK(ev->kind >= TK_EV_RANGE && ev->kind <= TK_EV_TIMESTAMP);
    if (ev->kind == TK_EV_RANGE) {
        TK_FUZZ_CHECK(ev->ninsn > 0);
        tk_rv_insn insn;
        TK_FUZZ_CHECK(tk_image_fetch(image, ev->first, &insn) == TK_OK);
        TK_FUZZ_CHECK(tk_image_fetch(image, ev->last, &insn) == TK_OK);
        x->insns += ev->ninsn;
    } else if (ev->kind == TK_EV_ERROR) {
        TK_FUZZ_CHECK(ev->message && ev->message[0]);
        TK_FUZZ_CHECK(ev->byte_offset < x->len);
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
    ctx x = {in.n ? in.n : 1, 0};
    tk_te_decoder *d = NULL;
    tk_te_raw *r = NULL;
    if (tk_te_decoder_new(&p, image, on_event, &x, &d) != TK_OK ||
        tk_te_raw_from_buffer(in.p, in.n, &r) != TK_OK) {
        tk_te_decoder_free(d);
        return 0;
    }
    /* damaged packets become error events; the status is the first of them */
    (void)tk_te_decoder_run_raw(d, r);
    (void)tk_te_decoder_finish(d);
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
    return 0;
}
