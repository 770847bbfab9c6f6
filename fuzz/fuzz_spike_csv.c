/* SPDX-License-Identifier: BSD-2-Clause */
/* The spike CSV reader and the spike-to-ingress converter (te_ingress.h). Input: an options
 * byte, then the file. Properties: reading ends; errors carry a line number. */
#include "fuzz_common.h"

#include "tracekit/te_ingress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    tk_fuzz_params_fixed(tk_fuzz_u8(&in), &p);
    uint8_t opt = tk_fuzz_u8(&in);
    tk_spike_conv_options o = {.reference_quirks = opt & 1, .rv32 = (opt >> 1) & 1};
    char path[64];
    int fd = tk_fuzz_memfile(in.p, in.n, path, sizeof(path));
    if (fd < 0)
        return 0;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_spike_reader *r = NULL;
    tk_spike_conv *c = NULL;
    if (tk_spike_open(path, &r, &diag) == TK_OK && tk_spike_conv_new(&p, &o, &c) == TK_OK) {
        tk_spike_row row;
        tk_te_block b;
        bool ready = false;
        tk_status st;
        while ((st = tk_spike_next(r, &row, &diag)) == TK_OK) {
            if (tk_spike_conv_push(c, &row, &b, &ready, &diag) != TK_OK)
                break;
            while (ready) /* held-back blocks of an interrupted branch */
                (void)tk_spike_conv_next(c, &b, &ready);
        }
        if (st != TK_END && st != TK_OK)
            TK_FUZZ_CHECK(diag.line != UINT64_MAX && diag.line >= 1);
        if (tk_spike_conv_finish(c, &b, &ready, &diag) == TK_OK)
            while (ready)
                (void)tk_spike_conv_next(c, &b, &ready);
    }
    tk_spike_conv_free(c);
    tk_spike_close(r);
    close(fd);
    return 0;
}
