/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference .te_inst CSV reader (te_packet.h). Input: parameter selector, then the file.
 * Properties: reading ends; errors carry a line number; a row that reads also writes. */
#include "fuzz_common.h"

#include "tracekit/te_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    char path[64];
    int fd = tk_fuzz_memfile(in.p, in.n, path, sizeof(path));
    if (fd < 0)
        return 0;
    FILE *sinkf = fopen("/dev/null", "w");
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_te_csv_reader *r = NULL;
    if (sinkf && tk_te_csv_open(path, &r, &diag) == TK_OK) {
        tk_te_packet pkt;
        tk_status st;
        while ((st = tk_te_csv_next(r, &p, &pkt, &diag)) == TK_OK)
            (void)tk_te_csv_write(sinkf, &p, &pkt);
        if (st != TK_END)
            TK_FUZZ_CHECK(diag.message[0] != '\0');
    }
    tk_te_csv_close(r);
    if (sinkf)
        fclose(sinkf);
    close(fd);
    return 0;
}
