/* SPDX-License-Identifier: BSD-2-Clause */
/* The profile collector's own cost, apart from the decoder's:
 *
 *   profbench SCF UCF ELF RAW [RUNS [MODES]]
 *
 * decodes RAW (E-Trace te_inst packets, reference raw framing) RUNS times (default 5) into
 * each of these sinks, MODES (comma-separated, default all) picking some:
 *   null     a sink that does nothing (the decoder alone)
 *   batch    ranges through tk_block_batcher into a sink that does nothing
 *   ranges   tk_profile fed the decoder's TK_EV_RANGE events (finished)
 *   blocks   tk_profile fed TK_EV_BLOCKS batches through tk_block_batcher (finished)
 *   dnull    the decoder's own TK_EV_BLOCKS batches (TK_TE_DEC_BLOCK_EVENTS) into a sink that
 *            does nothing
 *   dcount   the same into the counting sink (tk_count_event)
 *   dfull    the same into tk_profile (finished)
 *   dflat    the same into tk_profile's flat level (TK_PROFILE_FLAT, finished)
 * and prints, per mode, the median thread CPU time and M instructions/s. Under
 * valgrind --tool=callgrind with RUNS 1 and one mode at a time, Ir(ranges) - Ir(null) is the
 * profile's cost from ranges, Ir(blocks) - Ir(batch) its cost from block batches, and
 * Ir(dfull|dflat|dcount) - Ir(dnull) a sink's cost from the decoder's batches; divide by
 * the "ranges" printed (one per block) for Ir per block.
 *
 * Build (Release library): cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude bench/profbench.c
 *   BUILD/src/libtracekit.a $(pkg-config --libs libdw libelf) -lz -lpthread -lm */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/analysis.h"
#include "tracekit/blocks.h"
#include "tracekit/count.h"
#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

enum { M_NULL, M_BATCH, M_RANGES, M_BLOCKS, M_DNULL, M_DCOUNT, M_DFULL, M_DFLAT, M_N };
static const char *const mode_name[M_N] = {"null",  "batch",  "ranges", "blocks",
                                           "dnull", "dcount", "dfull",  "dflat"};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static tk_status null_event(void *ctx, const tk_event *ev)
{
    uint64_t *n = ctx;
    *n += ev->kind == TK_EV_BLOCKS ? ev->nblocks : 1;
    return TK_OK;
}

/* Whole names in a comma-separated list ("null" is inside "dnull"). */
static bool listed(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *q = list; q; q = strchr(q, ',')) {
        if (*q == ',')
            q++;
        if (!strncmp(q, name, n) && (q[n] == ',' || q[n] == 0))
            return true;
    }
    return false;
}

static tk_status run_once(int mode, const tk_te_params *p, tk_image *img, tk_te_raw *raw,
                          const tk_code_view *view, uint64_t *insns, uint64_t *ranges)
{
    uint64_t sunk = 0;
    tk_profile *prof = NULL;
    tk_block_batcher *bb = NULL;
    tk_event_fn fn = null_event;
    void *ctx = &sunk;
    tk_status st = TK_OK;
    tk_count cnt;
    memset(&cnt, 0, sizeof(cnt));
    if (mode == M_RANGES || mode == M_BLOCKS || mode == M_DFULL || mode == M_DFLAT) {
        if ((st = tk_profile_new_flags(view, mode == M_DFLAT ? TK_PROFILE_FLAT : 0, &prof)) !=
            TK_OK)
            return st;
        fn = tk_profile_event;
        ctx = prof;
    } else if (mode == M_DCOUNT) {
        fn = tk_count_event;
        ctx = &cnt;
    }
    if (mode == M_BATCH || mode == M_BLOCKS) {
        if ((st = tk_block_batcher_new(img, fn, ctx, &bb)) != TK_OK) {
            tk_profile_free(prof);
            return st;
        }
        fn = tk_block_batcher_event;
        ctx = bb;
    }
    tk_te_decoder *dec = NULL;
    if ((st = tk_te_decoder_new(p, img, fn, ctx, &dec)) == TK_OK) {
        if (mode >= M_DNULL)
            tk_te_decoder_set_flags(dec, TK_TE_DEC_BLOCK_EVENTS);
        st = tk_te_decoder_run_raw(dec, raw);
        if (st == TK_OK)
            st = tk_te_decoder_finish(dec);
        tk_te_decoder_stats ds = {.size = sizeof(ds)};
        tk_te_decoder_get_stats(dec, &ds);
        *insns = ds.instructions;
        tk_te_decoder_free(dec);
    }
    if (st == TK_OK && bb)
        st = tk_block_batcher_flush(bb);
    if (st == TK_OK && prof)
        st = tk_profile_finish(prof);
    if (st == TK_OK && prof) {
        tk_profile_totals t;
        tk_profile_get_totals(prof, &t);
        *ranges = t.ranges;
    } else if (mode == M_DNULL) {
        *ranges = sunk;
    }
    tk_block_batcher_free(bb);
    tk_profile_free(prof);
    return st;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: profbench SCF UCF ELF RAW [RUNS [MODES]]\n");
        return 2;
    }
    int runs = argc > 5 ? atoi(argv[5]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    bool want[M_N];
    for (int m = 0; m < M_N; m++)
        want[m] = argc <= 6 || listed(argv[6], mode_name[m]);
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params p;
    tk_te_params_init(&p);
    tk_image *img = NULL;
    tk_te_raw *raw = NULL;
    if (tk_te_params_read_scf(&p, argv[1], &d) != TK_OK ||
        tk_te_params_read_ucf(&p, argv[2], NULL, &d) != TK_OK ||
        tk_te_params_validate(&p, &d) != TK_OK || tk_image_open_elf(argv[3], &img, &d) != TK_OK ||
        tk_te_add_spike_reset_code(img, false) != TK_OK ||
        tk_te_raw_open(argv[4], &raw, &d) != TK_OK) {
        fprintf(stderr, "profbench: %s\n", d.message[0] ? d.message : "cannot open the input");
        tk_image_free(img);
        return 1;
    }
    tk_code_view view;
    tk_code_view_from_image(img, &view);
    int rc = 0;
    for (int m = 0; m < M_N && !rc; m++) {
        if (!want[m])
            continue;
        double t[100];
        uint64_t insns = 0, ranges = 0;
        for (int i = 0; i < runs && !rc; i++) {
            double c0 = cpu_now();
            tk_status st = run_once(m, &p, img, raw, &view, &insns, &ranges);
            t[i] = cpu_now() - c0;
            if (st != TK_OK) {
                fprintf(stderr, "profbench: %s: %s\n", mode_name[m], tk_strerror(st));
                rc = 1;
            }
        }
        if (rc)
            break;
        qsort(t, (size_t)runs, sizeof(t[0]), cmp_double);
        double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
        printf("%-7s insns %" PRIu64 " ranges %" PRIu64
               " cpu_s %.4f (best %.4f) Minstr_per_s %.1f\n",
               mode_name[m], insns, ranges, med, t[0], (double)insns / med / 1e6);
    }
    tk_te_raw_close(raw);
    tk_image_free(img);
    return rc;
}
