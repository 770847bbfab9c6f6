/* SPDX-License-Identifier: BSD-2-Clause */
/* Golden test: every etrace-ref vector (program x setting) decoded with its .scf, decoder
 * .ucf and ELF must give the reference decoder's .decoder.trace line for line. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "te_ref.h"
#include "testutil.h"
#include "tracekit/sink.h"
#include "tracekit/te_decoder.h"

typedef struct golden {
    const char *want; /* expected text, one hex PC per line */
    size_t want_len;
    size_t pos;     /* bytes of want matched so far */
    uint64_t lines; /* lines matched */
    bool differs;
    char got_line[32];
    char want_line[32];
    tk_image *img;
    uint64_t errors;
} golden;

static void next_want_line(golden *g, char *out)
{
    size_t n = 0;
    while (g->pos < g->want_len && g->want[g->pos] != '\n' && n < 31)
        out[n++] = g->want[g->pos++];
    out[n] = '\0';
    if (g->pos < g->want_len && g->want[g->pos] == '\n')
        g->pos++;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    golden *g = ctx;
    if (ev->kind == TK_EV_ERROR) {
        g->errors++;
        print_message("decoder error at packet %llu: %s\n", (unsigned long long)ev->packet_index,
                      ev->message);
        return TK_OK;
    }
    if (ev->kind != TK_EV_RANGE || g->differs)
        return TK_OK;
    uint64_t pc = ev->first;
    for (uint64_t i = 0; i < ev->ninsn; i++) {
        char got[32], want[32];
        snprintf(got, sizeof(got), "%llx", (unsigned long long)pc);
        next_want_line(g, want);
        if (strcmp(got, want)) {
            g->differs = true;
            strcpy(g->got_line, got);
            strcpy(g->want_line, want);
            return TK_OK;
        }
        g->lines++;
        tk_rv_insn insn;
        if (i + 1 < ev->ninsn) {
            assert_int_equal(tk_image_fetch(g->img, pc, &insn), TK_OK);
            pc += insn.len;
        }
    }
    return TK_OK;
}

/* Decode one vector folder; returns the number of PCs compared. */
static uint64_t check_vector(const char *dir, const char *prog)
{
    char path[2048];
    tk_te_params p;
    tk_diag diag;
    tk_diag_clear(&diag);
    char *elf = NULL;
    /* the ELF as the .ucf names it (object-files) */
    tk_test_ref_params(dir, prog, &p, &elf);
    assert_non_null(elf);

    golden g = {0};
    assert_int_equal(tk_image_open_elf(elf, &g.img, &diag), TK_OK);
    assert_int_equal(tk_te_add_spike_reset_code(g.img, false), TK_OK);
    snprintf(path, sizeof(path), "%s/%s.decoder.trace.gz", dir, prog);
    uint8_t *want = tk_test_read_file(path, &g.want_len);
    assert_non_null(want);
    g.want = (const char *)want;

    snprintf(path, sizeof(path), "%s/%s.te_inst_raw", dir, prog);
    tk_te_raw *raw;
    assert_int_equal(tk_te_raw_open(path, &raw, &diag), TK_OK);
    tk_te_decoder *d;
    assert_int_equal(tk_te_decoder_new(&p, g.img, on_event, &g, &d), TK_OK);
    assert_int_equal(tk_te_decoder_run_raw(d, raw), TK_OK);
    assert_int_equal(tk_te_decoder_finish(d), TK_OK);

    if (g.differs)
        fail_msg("%s: line %llu: got %s, want %s", dir, (unsigned long long)g.lines + 1, g.got_line,
                 g.want_line);
    if (g.pos != g.want_len) {
        char want_line[32];
        next_want_line(&g, want_line);
        fail_msg("%s: output ends after %llu lines; next expected %s", dir,
                 (unsigned long long)g.lines, want_line);
    }
    assert_int_equal(g.errors, 0);
    print_message("%s: %llu PCs identical\n", dir, (unsigned long long)g.lines);

    tk_te_decoder_free(d);
    tk_image_free(g.img);
    tk_te_raw_close(raw);
    free(want);
    free(elf);
    return g.lines;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted subfolder names of dir (malloc'd). */
static size_t list_dirs(const char *dir, char ***out)
{
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dh))) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!is_dir(path))
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        assert_non_null(names);
        names[n++] = strdup(de->d_name);
    }
    closedir(dh);
    qsort(names, n, sizeof(*names), cmp_str);
    *out = names;
    return n;
}

static void test_golden_vectors(void **state)
{
    (void)state;
    char *root = tk_test_data_path("etrace-ref");
    char **progs;
    size_t nprogs = list_dirs(root, &progs);
    size_t nvectors = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < nprogs; i++) {
        char pdir[1024];
        snprintf(pdir, sizeof(pdir), "%s/%s", root, progs[i]);
        char **settings;
        size_t nset = list_dirs(pdir, &settings);
        for (size_t j = 0; j < nset; j++) {
            char vdir[1200];
            snprintf(vdir, sizeof(vdir), "%s/%s", pdir, settings[j]);
            total += check_vector(vdir, progs[i]);
            nvectors++;
            free(settings[j]);
        }
        free(settings);
        free(progs[i]);
    }
    free(progs);
    free(root);
    print_message("%zu vectors, %llu PCs identical to decoder_model.py\n", nvectors,
                  (unsigned long long)total);
    assert_true(nvectors >= 20);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
