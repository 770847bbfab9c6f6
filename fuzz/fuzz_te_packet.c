/* SPDX-License-Identifier: BSD-2-Clause */
/* te_inst payload codec (te_packet.h) under the parameter sets of fuzz_common.h.
 * Input: parameter selector, then one payload. Properties: decoding never crashes; a payload
 * that decodes re-encodes (every field fits the width it was read from), and the re-encoded
 * payload decodes to the same packet (the codec is its own inverse up to sign compression). */
#include "fuzz_common.h"

#include "tracekit/te_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p) || in.n > 2 * TK_TE_MAX_PAYLOAD)
        return 0;
    tk_te_packet pkt;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_te_packet_decode(&p, in.p, in.n, &pkt, &diag) != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0] != '\0');
        return 0;
    }
    char text[512], cut[100];
    const int n = tk_te_packet_format(&p, &pkt, text, sizeof(text));
    TK_FUZZ_CHECK(n > 0);
    /* with less room: the same text, cut as snprintf would cut it */
    const size_t room = 1 + in.n % sizeof(cut);
    TK_FUZZ_CHECK(tk_te_packet_format(&p, &pkt, cut, room) == n);
    TK_FUZZ_CHECK(strlen(cut) == ((size_t)n < room ? (size_t)n : room - 1));
    TK_FUZZ_CHECK(!memcmp(cut, text, strlen(cut)));

    uint8_t enc[TK_TE_MAX_PAYLOAD];
    size_t len = 0;
    tk_status st = tk_te_packet_encode(&p, &pkt, enc, sizeof(enc), &len);
    if (st != TK_OK) {
        fprintf(stderr, "decoded packet does not re-encode: %s (%s)\n",
                tk_te_packet_encode_error(&p, &pkt), text);
        abort();
    }
    TK_FUZZ_CHECK(len > 0 && len <= in.n);
    tk_te_packet again;
    TK_FUZZ_CHECK(tk_te_packet_decode(&p, enc, len, &again, &diag) == TK_OK);
    TK_FUZZ_CHECK(memcmp(&pkt, &again, sizeof(pkt)) == 0);
    return 0;
}
