/* SPDX-License-Identifier: BSD-2-Clause */
#include "te_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "testutil.h"
#include "tracekit/te_decoder.h"
#include "tracekit/encap.h"

const char *const tk_test_ref_progs[] = {
    "median",    "multiply", "towers", "vvadd", "spmv",
    "dhrystone", "qsort",    "mm",     "rsort", "test_discon_branch_exception"};
const size_t tk_test_ref_nprogs = sizeof(tk_test_ref_progs) / sizeof(tk_test_ref_progs[0]);
const char *const tk_test_ref_settings[] = {"itype3_basic", "itype4_basic", "itype3_debug",
                                            "itype4_debug"};
const size_t tk_test_ref_nsettings = sizeof(tk_test_ref_settings) / sizeof(tk_test_ref_settings[0]);

size_t tk_test_ref_each(void (*fn)(const char *prog, const char *setting, void *ctx), void *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < tk_test_ref_nprogs; i++) {
        for (size_t k = 0; k < tk_test_ref_nsettings; k++) {
            char rel[512];
            snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", tk_test_ref_progs[i],
                     tk_test_ref_settings[k]);
            char *dir = tk_test_data_path(rel);
            struct stat st;
            const int present = dir && stat(dir, &st) == 0;
            free(dir);
            if (present) {
                fn(tk_test_ref_progs[i], tk_test_ref_settings[k], ctx);
                n++;
            }
        }
    }
    return n;
}

uint8_t *tk_test_ref_raw(const char *prog, const char *setting, char **dir, size_t *len)
{
    char rel[512], path[1024];
    snprintf(rel, sizeof(rel), "etrace-ref/%s/%s", prog, setting);
    *dir = tk_test_data_path(rel);
    assert_non_null(*dir);
    snprintf(path, sizeof(path), "%s/%s.te_inst_raw", *dir, prog);
    uint8_t *raw = tk_test_read_file(path, len);
    assert_non_null(raw);
    return raw;
}

typedef struct each_raw {
    void (*fn)(const tk_te_params *p, const uint8_t *raw, size_t len, void *ctx);
    void *ctx;
} each_raw;

static void each_raw_one(const char *prog, const char *setting, void *ctx)
{
    const each_raw *e = ctx;
    char *dir;
    size_t len;
    uint8_t *raw = tk_test_ref_raw(prog, setting, &dir, &len);
    tk_te_params p;
    tk_test_ref_params(dir, prog, &p, NULL);
    e->fn(&p, raw, len, e->ctx);
    free(raw);
    free(dir);
}

size_t tk_test_ref_each_raw(void (*fn)(const tk_te_params *p, const uint8_t *raw, size_t len,
                                       void *ctx),
                            void *ctx)
{
    each_raw e = {fn, ctx};
    return tk_test_ref_each(each_raw_one, &e);
}

tk_image *tk_test_ref_image(const char *prog, bool reset_code)
{
    char rel[512];
    snprintf(rel, sizeof(rel), "riscv-ref/%s.riscv", prog);
    char *elf = tk_test_data_path(rel);
    tk_image *img = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    if (tk_image_open_elf(elf, &img, &d) != TK_OK)
        fail_msg("%s: %s", elf, d.message);
    free(elf);
    if (reset_code)
        assert_int_equal(tk_te_add_spike_reset_code(img, false), TK_OK);
    return img;
}

void tk_test_ref_params(const char *dir, const char *prog, tk_te_params *p, char **elf)
{
    char path[2048];
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params_init(p);
    snprintf(path, sizeof(path), "%s/%s.scf", dir, prog);
    if (tk_te_params_read_scf(p, path, &d) != TK_OK)
        fail_msg("%s: %s", path, d.message);
    snprintf(path, sizeof(path), "%s/%s.decoder.ucf", dir, prog);
    if (tk_te_params_read_ucf(p, path, elf, &d) != TK_OK)
        fail_msg("%s: %s", path, d.message);
}

void tk_test_ref_decode(const char *dir, const char *prog, tk_image *img, unsigned dec_flags,
                        tk_event_fn fn, void *ctx)
{
    tk_te_params params;
    tk_test_ref_params(dir, prog, &params, NULL);
    char path[2048];
    tk_diag d;
    tk_diag_clear(&d);
    snprintf(path, sizeof(path), "%s/%s.te_inst_raw", dir, prog);
    tk_te_raw *raw = NULL;
    if (tk_te_raw_open(path, &raw, &d) != TK_OK)
        fail_msg("%s: %s", path, d.message);
    tk_te_decoder *dec = NULL;
    assert_int_equal(tk_te_decoder_new(&params, img, fn, ctx, &dec), TK_OK);
    tk_te_decoder_set_flags(dec, dec_flags);
    assert_int_equal(tk_te_decoder_run_raw(dec, raw), TK_OK);
    assert_int_equal(tk_te_decoder_finish(dec), TK_OK);
    tk_te_decoder_free(dec);
    tk_te_raw_close(raw);
}
