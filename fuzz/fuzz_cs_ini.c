/* SPDX-License-Identifier: BSD-2-Clause */
/* The INI reader of CoreSight snapshots (src/coresight/ini.h: snapshot.ini, trace.ini and the
 * device files). The input is the file. Properties: errors carry a line number; entries have
 * section, key and value, with line numbers in order; lookups of present keys find them. */
#include "fuzz_common.h"

#include "coresight/ini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = tk_fuzz_memfile(data, size, path, sizeof(path));
    if (fd < 0)
        return 0;
    tk_ini ini;
    memset(&ini, 0, sizeof(ini));
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_ini_load(path, &ini, &diag);
    close(fd);
    if (st != TK_OK) {
        TK_FUZZ_CHECK(diag.message[0] != '\0');
        tk_ini_free(&ini);
        return 0;
    }
    unsigned last = 0;
    for (size_t i = 0; i < ini.n; i++) {
        const tk_ini_entry *e = &ini.e[i];
        TK_FUZZ_CHECK(e->section && e->key && e->value && e->line >= last);
        last = e->line;
        TK_FUZZ_CHECK(tk_ini_get(&ini, e->section, e->key) != NULL);
    }
    (void)tk_ini_get(&ini, "device", "name");
    tk_ini_free(&ini);
    return 0;
}
