/* SPDX-License-Identifier: BSD-2-Clause */
/* The full E-Trace path (te_decoder.h): raw framing, te_inst codec and flow decoder against a
 * fixed program (dhrystone of riscv-ref, loaded once, plus spike's reset code as the
 * reference decoder has it). Input: parameter selector, then a .te_inst_raw stream; damaged
 * packets are reported to the decoder as lost, as `tracekit decode` does. Properties: no
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
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_image_open_elf(TK_TESTDATA "/riscv-ref/dhrystone.riscv", &image, &diag) != TK_OK) {
        fprintf(stderr, "fuzz_te_decoder: %s\n", diag.message);
        return 0;
    }
    /* spike's reset code (spec/VERSIONS.md C.4): auipc t0,0; addi a1,t0,32; csrr a0,mhartid;
     * ld t0,24(t0); jr t0 */
    static const uint8_t boot[] = {0x97, 0x02, 0x00, 0x00, 0x93, 0x85, 0x02, 0x02, 0x73, 0x25,
                                   0x40, 0xf1, 0x83, 0xb2, 0x82, 0x01, 0x67, 0x80, 0x02, 0x00};
    (void)tk_image_add_region(image, 0x1000, boot, sizeof(boot));
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
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_raw_next(r, &rp, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            if (st != TK_ERR_BAD_PACKET)
                break;
            if (tk_te_decoder_lost(d, diag.byte_offset, diag.packet_index) != TK_OK)
                break;
            continue;
        }
        tk_te_packet pkt;
        if (tk_te_packet_decode(&p, rp.payload, rp.len, &pkt, &diag) != TK_OK) {
            if (tk_te_decoder_lost(d, rp.offset, rp.index) != TK_OK)
                break;
            continue;
        }
        if (tk_te_decoder_packet(d, &pkt, rp.offset, rp.index) != TK_OK)
            break;
    }
    (void)tk_te_decoder_finish(d);
    tk_te_decoder_free(d);
    tk_te_raw_close(r);
    return 0;
}
