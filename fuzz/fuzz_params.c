/* SPDX-License-Identifier: BSD-2-Clause */
/* The .scf and .ucf configuration readers (te_params.h). Input: a selector byte (bit 0: scf
 * or ucf), then the file. Properties: reading never crashes; errors carry a message; what
 * was read writes back out and reads again to the same parameters. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    bool ucf = tk_fuzz_u8(&in) & 1;
    char path[64];
    int fd = tk_fuzz_memfile(in.p, in.n, path, sizeof(path));
    if (fd < 0)
        return 0;
    tk_te_params p;
    tk_te_params_init(&p);
    tk_diag diag;
    tk_diag_clear(&diag);
    char *elf = NULL;
    tk_status st =
        ucf ? tk_te_params_read_ucf(&p, path, &elf, &diag) : tk_te_params_read_scf(&p, path, &diag);
    close(fd);
    free(elf);
    if (st != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0] != '\0');
        return 0;
    }
    (void)tk_te_params_validate(&p, &diag);
    /* round trip through the writer */
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return 0;
    st = ucf ? tk_te_params_write_ucf(&p, m) : tk_te_params_write_scf(&p, m);
    fclose(m);
    if (st == TK_OK) {
        int fd2 = tk_fuzz_memfile((const uint8_t *)text, len, path, sizeof(path));
        if (fd2 >= 0) {
            tk_te_params q;
            tk_te_params_init(&q);
            st = ucf ? tk_te_params_read_ucf(&q, path, NULL, &diag)
                     : tk_te_params_read_scf(&q, path, &diag);
            if (st != TK_OK) {
                fprintf(stderr, "written file does not read back: %s\n%s", diag.message, text);
                abort();
            }
            TK_FUZZ_CHECK(memcmp(&p.s, &q.s, sizeof(p.s)) == 0);
            TK_FUZZ_CHECK(memcmp(&p.o, &q.o, sizeof(p.o)) == 0);
            close(fd2);
        }
    }
    free(text);
    return 0;
}
