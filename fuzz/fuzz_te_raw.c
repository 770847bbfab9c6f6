/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference raw framing (.te_inst_raw, encap.h tk_te_raw_*) feeding the te_inst codec.
 * Input: parameter selector, then the stream. Properties: iteration ends, each packet lies
 * inside the buffer in increasing offset order, and every error names a byte offset inside
 * the stream. */
#include "fuzz_common.h"

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    tk_te_raw *r = NULL;
    if (tk_te_raw_from_buffer(in.p, in.n, &r) != TK_OK)
        return 0;
    TK_FUZZ_CHECK(tk_te_raw_size(r) == in.n);
    uint64_t last = 0;
    size_t calls = 0;
    for (;;) {
        TK_FUZZ_CHECK(calls++ <= in.n); /* at least one byte consumed per call */
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_raw_next(r, &rp, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            TK_FUZZ_CHECK(diag.byte_offset < in.n);
            if (st == TK_ERR_TRUNCATED)
                break;
            continue;
        }
        TK_FUZZ_CHECK(rp.offset < in.n && (calls == 1 || rp.offset >= last));
        TK_FUZZ_CHECK(rp.payload == in.p + rp.offset + 1 && rp.len >= 1 && rp.len <= 31);
        TK_FUZZ_CHECK(rp.offset + 1 + rp.len <= in.n);
        last = rp.offset;
        tk_te_packet pkt;
        if (rp.msg_type == TK_ENCAP_FLOW_TE_INST &&
            tk_te_packet_decode(&p, rp.payload, rp.len, &pkt, &diag) == TK_OK) {
            char text[512];
            tk_te_packet_format(&p, &pkt, text, sizeof(text));
        }
    }
    tk_te_raw_close(r);
    return 0;
}
