/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference .encoder_input CSV reader (te_ingress.h), whose blocks then go through the
 * multiple-retirement grouper. The input is the file (plain or gzip: gzopen reads both).
 * Properties: reading ends; errors carry a line number. */
#include "fuzz_common.h"

#include "tracekit/te_ingress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = tk_fuzz_memfile(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_te_ingress_reader *r = NULL;
    tk_te_grouper *g = NULL;
    if (tk_te_ingress_open(path, &r, &diag) == TK_OK && tk_te_grouper_new(4, 2, &g) == TK_OK) {
        tk_te_block b, out[2];
        size_t n = 0;
        tk_status st;
        while ((st = tk_te_ingress_next(r, &b, &diag)) == TK_OK) {
            if (tk_te_grouper_push(g, &b, out, &n) != TK_OK)
                break;
        }
        if (st != TK_END && st != TK_OK)
            TK_FUZZ_CHECK(diag.line != UINT64_MAX && diag.line >= 1);
        (void)tk_te_grouper_finish(g, out, &n);
    }
    tk_te_grouper_free(g);
    tk_te_ingress_close(r);
    close(fd);
    return 0;
}
