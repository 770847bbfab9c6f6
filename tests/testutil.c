/* SPDX-License-Identifier: BSD-2-Clause */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

char *tk_test_data_path(const char *rel)
{
    size_t n = strlen(TK_TESTDATA) + strlen(rel) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", TK_TESTDATA, rel);
    return p;
}

int tk_test_data_present(void)
{
    struct stat st;
    if (stat(TK_TESTDATA, &st) == 0 && S_ISDIR(st.st_mode))
        return 1;
    fprintf(stderr, "SKIP: shared test data not found at %s\n", TK_TESTDATA);
    return 0;
}

uint8_t *tk_test_read_file(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        int r = gzread(f, buf + n, (unsigned)(cap - n));
        if (r < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    gzclose(f);
    if (buf && len)
        *len = n;
    return buf;
}

uint64_t tk_test_dstream_offset(uint64_t s)
{
    return s + s / 504 * 8;
}

uint8_t *tk_test_dstream_file(const uint8_t *t, size_t n, size_t *len)
{
    uint8_t *f = malloc(tk_test_dstream_offset(n) + 8);
    size_t k = 0;
    for (size_t i = 0; f && i < n; i++) {
        f[k++] = t[i];
        if ((i + 1) % 504 == 0) {
            memset(f + k, 0xff, 8);
            k += 8;
        }
    }
    *len = k;
    return f;
}
