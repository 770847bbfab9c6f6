/* SPDX-License-Identifier: BSD-2-Clause */
/* Benchmark driver for `make bench` (bench/run.sh):
 *
 *   tkbench parse SCF UCF RAW [RUNS [records]]
 *       E-Trace te_inst packet parsing over the reference raw framing of a mapped file:
 *       the zero-copy scanner into compact records (tk_te_scan_records) against the raw
 *       reader with the generic bit-reader codec (the peer), each run RUNS times,
 *       interleaved; also the records without BMI2, whole structs (tk_te_scan_batch) and the
 *       bare header walk. With "records", only the first; with "struct", only the struct
 *       batches (for cachegrind).
 *   tkbench flow SCF UCF ELF RAW [RUNS [SINKS]]
 *       Serial flow decoding of RAW (tk_te_decoder_run_raw) into four sinks, each run RUNS
 *       times: the counting sink, the profile collector (tk_profile, finished) and its flat
 *       level (profile_flat: TK_PROFILE_FLAT, what `tracekit coverage` collects), all three
 *       with block events (TK_TE_DEC_BLOCK_EVENTS), and the PC list (written to /dev/null).
 *       Reports instructions/s and trace MB/s per sink. SINKS (comma-separated names, e.g.
 *       "count,pcs") runs only those (to profile one sink under callgrind).
 *   tkbench gen SCF UCF ENCODER_INPUT COPIES OUT.te_inst_raw [GOLDEN.te_inst_raw]
 *       Encode the ingress (read into memory once; the read's rows/s is reported) COPIES
 *       times with a fresh encoder each time (each copy is a complete trace: start packet ...
 *       support packet with ended_rep) and write the concatenated raw stream; reports the
 *       encoder's speed and whether the first copy is byte-identical to GOLDEN. Four ways
 *       in, timed separately, each checked to give the same bytes: encoder_Minstr_per_s
 *       with tk_te_encoder_push_run over the rows (one instruction per row),
 *       encoder_push1_Minstr_per_s with one tk_te_encoder_push per row, and
 *       encoder_grouped_Minstr_per_s over grouped ingress (tk_te_grouper: up to 8
 *       instructions per block, 2 blocks per cycle), one push per cycle, and
 *       encoder_grouped_run_Minstr_per_s with the same blocks through tk_te_encoder_push_run
 *       (cycle boundaries do not change the packets). Every packet is
 *       serialised in the timed part (tk_te_packet_encode_layout, as a sink would).
 *       TK_BENCH_GEN_MODE=run|push1|grouped|grouped_run runs only that way in (copy 0 also
 *       runs "run", the reference bytes), to count one way's instructions under callgrind:
 *       (Ir of COPIES=3 - Ir of COPIES=1) / (2 * instructions per copy).
 *
 * Output: one "key value" per line, for run.sh. Times are the thread's CPU time (the
 * machine is shared: CPU time is what one core spends) and wall-clock time. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/analysis.h"
#include "tracekit/count.h"
#include "tracekit/encap.h"
#include "tracekit/sink.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_ingress.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static double now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int read_params(tk_te_params *p, const char *scf, const char *ucf)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params_init(p);
    if (tk_te_params_read_scf(p, scf, &d) != TK_OK || tk_te_params_read_ucf(p, ucf, NULL, &d) ||
        tk_te_params_validate(p, &d) != TK_OK) {
        fprintf(stderr, "tkbench: %s\n", d.message);
        return -1;
    }
    return 0;
}

/* What the parser found, folded so the compiler cannot drop the work. */
typedef struct digest {
    uint64_t packets, errors, sum;
} digest;

/* The digest of a whole packet (what a decoder reads of formats 1 and 2, and of format 3
 * also time, context, privilege and options). */
static inline void fold(digest *g, const tk_te_packet *k)
{
    g->packets++;
    g->sum += k->address ^ k->branch_map ^ ((uint64_t)k->format << 56) ^ k->irdepth ^
              ((uint64_t)k->notify << 60) ^ ((uint64_t)k->updiscon << 61) ^ k->branches;
    if (k->format == TK_TE_F3)
        g->sum += k->time ^ k->context ^ k->privilege ^ k->ioptions;
}

/* The digest of a compact record: its three words, as a consumer would load them (format
 * 3: and the whole packet's time, context, privilege, options). */
static inline void fold_rec(digest *g, const tk_te_rec *r, const tk_te_packet *full)
{
    uint64_t tail;
    memcpy(&tail, &r->branch_map, 8);
    g->packets++;
    g->sum += r->address ^ (r->irdepth << 7) ^ (tail * 31);
    if (r->format == TK_TE_F3)
        g->sum += full->time ^ full->context ^ full->privilege ^ full->ioptions;
}

/* The record digest of a whole packet (for the peer, which makes whole packets). */
static void fold_as_rec(digest *g, const tk_te_packet *k)
{
    const tk_te_rec r = {.address = k->address,
                         .irdepth = k->irdepth,
                         .branch_map = k->branch_map,
                         .format = k->format,
                         .branches = k->branches,
                         .flags = (uint8_t)((k->notify ? TK_TE_REC_NOTIFY : 0) |
                                            (k->updiscon ? TK_TE_REC_UPDISCON : 0) |
                                            (k->irreport ? TK_TE_REC_IRREPORT : 0) |
                                            (k->has_address ? TK_TE_REC_ADDRESS : 0)),
                         .subformat = k->subformat};
    fold_rec(g, &r, k);
}

/* The fastest way through: compact records (tk_te_scan_records). */
static digest parse_records(const tk_te_params *p, const uint8_t *buf, size_t len, int bmi2)
{
    digest g = {0};
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, len);
    if (!bmi2)
        s.use_bmi2 = 0;
    tk_te_rec r[64];
    tk_te_packet full[64];
    uint64_t off[64];
    for (;;) {
        size_t n;
        while ((n = tk_te_scan_records(&s, r, full, off, 64)) > 0)
            for (size_t i = 0; i < n; i++)
                fold_rec(&g, &r[i], &full[i]);
        tk_te_packet k;
        tk_status st = tk_te_scan_next(&s, &k, NULL);
        if (st == TK_END)
            break;
        if (st == TK_OK)
            fold_as_rec(&g, &k);
        else if (g.errors++, st == TK_ERR_TRUNCATED)
            break;
    }
    return g;
}

/* Only the framing walk (header chain), no decoding: the floor of any parser. */
static digest parse_walk(const uint8_t *buf, size_t len)
{
    digest g = {0};
    size_t pos = 0;
    while (pos < len) {
        g.packets++;
        g.sum += buf[pos];
        pos += 1u + (buf[pos] & 0x1fu);
    }
    return g;
}

/* Whole packets (tk_te_scan_batch, 120-byte structs). */
static digest parse_scan(const tk_te_params *p, const uint8_t *buf, size_t len)
{
    digest g = {0};
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, len);
    tk_te_packet k[64];
    for (;;) {
        size_t n;
        while ((n = tk_te_scan_batch(&s, k, NULL, 64)) > 0)
            for (size_t i = 0; i < n; i++)
                fold(&g, &k[i]);
        tk_status st = tk_te_scan_next(&s, &k[0], NULL);
        if (st == TK_END)
            break;
        if (st == TK_OK)
            fold(&g, &k[0]);
        else if (g.errors++, st == TK_ERR_TRUNCATED)
            break;
    }
    return g;
}

/* The peer: the raw file reader and the generic codec, as the codec first shipped. */
static digest parse_generic(const tk_te_params *p, const uint8_t *buf, size_t len, digest *as_rec)
{
    digest g = {0};
    *as_rec = g;
    tk_te_raw *r = NULL;
    if (tk_te_raw_from_buffer(buf, len, &r) != TK_OK)
        return g;
    tk_te_layout l;
    tk_te_layout_init(&l, p);
    l.fast = false;
    tk_te_raw_packet rp;
    tk_te_packet k;
    tk_status st;
    while ((st = tk_te_raw_next(r, &rp, NULL)) != TK_END) {
        if (st == TK_OK && tk_te_packet_decode_layout(&l, rp.payload, rp.len, &k, NULL) == TK_OK) {
            fold(&g, &k);
            fold_as_rec(as_rec, &k);
        } else if (g.errors++, st == TK_ERR_TRUNCATED)
            break;
    }
    tk_te_raw_close(r);
    return g;
}

static int cmd_parse(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    tk_te_params p;
    if (read_params(&p, argv[2], argv[3]))
        return 1;
    int runs = argc > 5 ? atoi(argv[5]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    tk_diag d;
    tk_te_raw *raw = NULL;
    if (tk_te_raw_open(argv[4], &raw, &d) != TK_OK) {
        fprintf(stderr, "tkbench: %s\n", d.message);
        return 1;
    }
    const uint8_t *buf = tk_te_raw_data(raw);
    const size_t len = (size_t)tk_te_raw_size(raw);
    /* "parse SCF UCF RAW RUNS records|struct" times only the record scanner or only the
     * struct batches (for cachegrind) */
    const int only = argc > 6 && !strcmp(argv[6], "records");
    const int only_struct = argc > 6 && !strcmp(argv[6], "struct");
    if (only_struct) {
        digest x = parse_scan(&p, buf, len);
        printf("packets %" PRIu64 "\n", x.packets);
        tk_te_raw_close(raw);
        return 0;
    }
    double cpu_fast[100], cpu_gen[100], wall_fast[100], wall_gen[100];
    double cpu_port[100], cpu_struct[100], cpu_walk[100];
    digest a = {0}, b = {0}, br = {0}, c = {0}, e = {0};
    for (int i = 0; i < runs; i++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
        a = parse_records(&p, buf, len, 1);
        double c1 = now(CLOCK_THREAD_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
        cpu_fast[i] = c1 - c0;
        wall_fast[i] = w1 - w0;
        if (only) {
            b = br = a;
            cpu_gen[i] = wall_gen[i] = cpu_port[i] = cpu_struct[i] = cpu_walk[i] = 1;
            continue;
        }
        b = parse_generic(&p, buf, len, &br);
        double c2 = now(CLOCK_THREAD_CPUTIME_ID), w2 = now(CLOCK_MONOTONIC);
        cpu_gen[i] = c2 - c1;
        wall_gen[i] = w2 - w1;
        c = parse_records(&p, buf, len, 0);
        double c3 = now(CLOCK_THREAD_CPUTIME_ID);
        e = parse_scan(&p, buf, len);
        double c4 = now(CLOCK_THREAD_CPUTIME_ID);
        digest wk = parse_walk(buf, len);
        double c5 = now(CLOCK_THREAD_CPUTIME_ID);
        cpu_port[i] = c3 - c2;
        cpu_struct[i] = c4 - c3;
        cpu_walk[i] = wk.packets == a.packets ? c5 - c4 : 1e9;
    }
    const double mb = (double)len / 1e6;
    const double cf = median(cpu_fast, runs), cg = median(cpu_gen, runs);
    /* records against the peer's record digest, structs against its struct digest */
    const bool same = a.packets == br.packets && a.sum == br.sum &&
                      (only || (c.packets == br.packets && c.sum == br.sum &&
                                e.packets == b.packets && e.sum == b.sum));
    printf("bytes %zu\npackets %" PRIu64 "\nerrors %" PRIu64 "\n", len, a.packets, a.errors);
    printf("same_result %s\n", same ? "yes" : "NO");
    /* scan: records with the implementation the CPU allows; portable: without BMI2;
     * struct: whole tk_te_packet structs; walk: the header chain alone */
    printf("scan_cpu_s %.4f\nscan_MBps %.1f\nscan_wall_MBps %.1f\nscan_ns_per_packet %.2f\n", cf,
           mb / cf, mb / median(wall_fast, runs), cf * 1e9 / (double)a.packets);
    /* the fastest run (median() sorted the times): on a shared machine the least disturbed
     * one, to compare two builds run back to back */
    printf("scan_best_MBps %.1f\nscan_best_ns_per_packet %.2f\n", mb / cpu_fast[0],
           cpu_fast[0] * 1e9 / (double)a.packets);
    const double cp = median(cpu_port, runs), cs = median(cpu_struct, runs),
                 cw = median(cpu_walk, runs);
    printf("scan_portable_MBps %.1f\nscan_portable_ns_per_packet %.2f\n", mb / cp,
           cp * 1e9 / (double)a.packets);
    printf("scan_struct_MBps %.1f\nscan_struct_ns_per_packet %.2f\n", mb / cs,
           cs * 1e9 / (double)a.packets);
    printf("walk_MBps %.1f\nwalk_ns_per_packet %.2f\n", mb / cw, cw * 1e9 / (double)a.packets);
    printf("generic_cpu_s %.4f\ngeneric_MBps %.1f\ngeneric_wall_MBps %.1f\n"
           "generic_ns_per_packet %.2f\n",
           cg, mb / cg, mb / median(wall_gen, runs), cg * 1e9 / (double)b.packets);
    tk_te_raw_close(raw);
    return same ? 0 : 1;
}

/* ---- flow: decoding into sinks ----------------------------------------------------------- */

/* spike's reset code, as `tracekit decode` adds it (VERSIONS.md C.4). */
static tk_status add_bootrom(tk_image *img)
{
    const uint32_t code[5] = {0x00000297, 0x02028593, 0xf1402573, 0x0182b283, 0x00028067};
    uint8_t bytes[sizeof(code)], probe;
    for (size_t i = 0; i < 5; i++)
        for (size_t b = 0; b < 4; b++)
            bytes[i * 4 + b] = (uint8_t)(code[i] >> (8 * b));
    if (tk_image_read(img, 0x1000, &probe, 1) == TK_OK)
        return TK_OK;
    return tk_image_add_region(img, 0x1000, bytes, sizeof(bytes));
}

/* Serial decode of the raw stream in buf with tk_te_decoder_run_raw (the scanner's records
 * where the parameters allow them), as `tracekit decode` does; flags for the decoder. */
static tk_status decode_into(const tk_te_params *p, tk_image *img, const uint8_t *buf, size_t len,
                             unsigned flags, tk_event_fn fn, void *ctx, uint64_t *insns)
{
    tk_te_decoder *d = NULL;
    tk_te_raw *raw = NULL;
    tk_status st = tk_te_raw_from_buffer(buf, len, &raw);
    if (st == TK_OK)
        st = tk_te_decoder_new(p, img, fn, ctx, &d);
    if (st != TK_OK) {
        tk_te_raw_close(raw);
        return st;
    }
    tk_te_decoder_set_flags(d, flags);
    st = tk_te_decoder_run_raw(d, raw);
    /* damaged packets were error events; decoding went on */
    if (st == TK_ERR_BAD_PACKET || st == TK_ERR_TRUNCATED)
        st = TK_OK;
    if (st == TK_OK)
        st = tk_te_decoder_finish(d);
    tk_te_decoder_stats ds = {.size = sizeof(ds)};
    tk_te_decoder_get_stats(d, &ds);
    *insns = ds.instructions;
    tk_te_decoder_free(d);
    tk_te_raw_close(raw);
    return st;
}

static int cmd_flow(int argc, char **argv)
{
    if (argc < 6)
        return 2;
    tk_te_params p;
    if (read_params(&p, argv[2], argv[3]))
        return 1;
    int runs = argc > 6 ? atoi(argv[6]) : 5;
    if (runs < 1 || runs > 100)
        runs = 5;
    enum { NSINK = 4 };
    static const char *const names[NSINK] = {"count", "profile", "profile_flat", "pcs"};
    bool want[NSINK] = {true, true, true, true};
    if (argc > 7) {
        /* whole names: "profile" is a prefix of "profile_flat" */
        for (int k = 0; k < NSINK; k++) {
            const size_t n = strlen(names[k]);
            want[k] = false;
            for (const char *q = argv[7]; q && *q; q = strchr(q, ',') ? strchr(q, ',') + 1 : NULL)
                if (!strncmp(q, names[k], n) && (q[n] == ',' || q[n] == 0))
                    want[k] = true;
        }
    }
    tk_diag d;
    tk_image *img = NULL;
    tk_te_raw *raw = NULL;
    if (tk_image_open_elf(argv[4], &img, &d) != TK_OK || add_bootrom(img) != TK_OK ||
        tk_te_raw_open(argv[5], &raw, &d) != TK_OK) {
        fprintf(stderr, "tkbench: %s\n", d.message);
        tk_image_free(img);
        return 1;
    }
    const uint8_t *buf = tk_te_raw_data(raw);
    const size_t len = (size_t)tk_te_raw_size(raw);
    FILE *null = fopen("/dev/null", "w");
    tk_code_view view;
    tk_code_view_from_image(img, &view);
    double t[NSINK][100];
    uint64_t insns[NSINK] = {0};
    tk_status st = null ? TK_OK : TK_ERR_IO;
    for (int i = 0; st == TK_OK && i < runs; i++) {
        double c0 = now(CLOCK_THREAD_CPUTIME_ID);
        tk_count cnt = {0};
        if (want[0])
            st = decode_into(&p, img, buf, len, TK_TE_DEC_BLOCK_EVENTS, tk_count_event, &cnt,
                             &insns[0]);
        double c1 = now(CLOCK_THREAD_CPUTIME_ID);
        tk_profile *prof = NULL;
        if (want[1] && st == TK_OK && (st = tk_profile_new(&view, &prof)) == TK_OK) {
            st = decode_into(&p, img, buf, len, TK_TE_DEC_BLOCK_EVENTS, tk_profile_event, prof,
                             &insns[1]);
            if (st == TK_OK)
                st = tk_profile_finish(prof);
        }
        tk_profile_free(prof);
        double c2 = now(CLOCK_THREAD_CPUTIME_ID);
        prof = NULL;
        if (want[2] && st == TK_OK &&
            (st = tk_profile_new_flags(&view, TK_PROFILE_FLAT, &prof)) == TK_OK) {
            st = decode_into(&p, img, buf, len, TK_TE_DEC_BLOCK_EVENTS, tk_profile_event, prof,
                             &insns[2]);
            if (st == TK_OK)
                st = tk_profile_finish(prof);
        }
        tk_profile_free(prof);
        double c3 = now(CLOCK_THREAD_CPUTIME_ID);
        tk_pc_list *pcs = NULL;
        if (want[3] && st == TK_OK && (st = tk_pc_list_new(img, null, &pcs)) == TK_OK) {
            st = decode_into(&p, img, buf, len, TK_TE_DEC_BLOCK_EVENTS, tk_pc_list_event, pcs,
                             &insns[3]);
            if (st == TK_OK)
                st = tk_pc_list_flush(pcs);
        }
        tk_pc_list_free(pcs);
        double c4 = now(CLOCK_THREAD_CPUTIME_ID);
        t[0][i] = c1 - c0;
        t[1][i] = c2 - c1;
        t[2][i] = c3 - c2;
        t[3][i] = c4 - c3;
    }
    if (null)
        fclose(null);
    tk_te_raw_close(raw);
    tk_image_free(img);
    if (st != TK_OK) {
        fprintf(stderr, "tkbench: flow: %s\n", tk_strerror(st));
        return 1;
    }
    uint64_t total = 0;
    for (int k = 0; k < NSINK; k++)
        if (want[k] && (!total || insns[k] != total))
            total = total ? UINT64_MAX : insns[k];
    printf("bytes %zu\ninstructions %" PRIu64 "\n", len, total);
    for (int k = 0; k < NSINK; k++) {
        if (!want[k])
            continue;
        const double m = median(t[k], runs);
        printf("flow_%s_cpu_s %.4f\nflow_%s_Minstr_per_s %.1f\nflow_%s_MBps %.1f\n", names[k], m,
               names[k], (double)insns[k] / m / 1e6, names[k], (double)len / m / 1e6);
    }
    return total != UINT64_MAX ? 0 : 1; /* every sink saw the same instructions */
}

/* ---- gen: the encoder over repeated ingress ---------------------------------------------- */

typedef struct sink {
    const tk_te_layout *l; /* field widths for tk_te_packet_encode_layout */
    uint8_t *buf;
    size_t len, cap;
    tk_status err;
} sink;

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    sink *s = ctx;
    if (s->cap - s->len < 1 + TK_TE_MAX_PAYLOAD) {
        size_t cap = s->cap ? 2 * s->cap : 1u << 20;
        uint8_t *nb = realloc(s->buf, cap);
        if (!nb)
            return TK_ERR_NOMEM;
        s->buf = nb;
        s->cap = cap;
    }
    size_t n = 0;
    tk_status st =
        tk_te_packet_encode_layout(s->l, pkt, s->buf + s->len + 1, TK_TE_MAX_PAYLOAD, &n);
    if (st != TK_OK)
        return st;
    if (n > TK_ENCAP_MAX_LENGTH)
        return TK_ERR_OVERFLOW;
    s->buf[s->len] = (uint8_t)(TK_ENCAP_FLOW_TE_INST << 5 | n);
    s->len += 1 + n;
    return TK_OK;
}

/* How the ingress reaches the encoder. */
enum gen_mode {
    GEN_RUN,         /* tk_te_encoder_push_run over all rows (cycles of one instruction) */
    GEN_PUSH1,       /* tk_te_encoder_push once per row */
    GEN_GROUPED,     /* grouped ingress (several instructions per block), one push per cycle */
    GEN_GROUPED_RUN, /* the same blocks through tk_te_encoder_push_run, cycles ignored */
    GEN_MODES
};

/* Cycles of grouped ingress: blocks[] cut into cycles of ncycle[k] blocks. */
typedef struct cycles {
    tk_te_block *blocks;
    uint8_t *ncycle;
    size_t nblocks, ncycles;
} cycles;

/* Group the single-retired rows (tk_te_grouper) into blocks of up to max_insns
 * instructions, max_blocks per cycle, once, outside the timed part. */
static tk_status group_rows(const tk_te_block *rows, size_t n, unsigned max_insns,
                            unsigned max_blocks, cycles *out)
{
    memset(out, 0, sizeof(*out));
    tk_te_grouper *g = NULL;
    tk_status st = tk_te_grouper_new(max_insns, max_blocks, &g);
    out->blocks = malloc((n + 1) * sizeof(*out->blocks));
    out->ncycle = malloc(n + 1);
    if (st == TK_OK && (!out->blocks || !out->ncycle))
        st = TK_ERR_NOMEM;
    for (size_t i = 0; st == TK_OK && i <= n; i++) {
        size_t k = 0;
        st = i < n ? tk_te_grouper_push(g, &rows[i], out->blocks + out->nblocks, &k)
                   : tk_te_grouper_finish(g, out->blocks + out->nblocks, &k);
        if (st == TK_OK && k) {
            out->nblocks += k;
            out->ncycle[out->ncycles++] = (uint8_t)k;
        }
    }
    tk_te_grouper_free(g);
    return st;
}

static tk_status encode_once(const tk_te_params *p, enum gen_mode mode, const tk_te_block *rows,
                             size_t n, const cycles *cy, sink *s)
{
    tk_te_encoder *e = NULL;
    tk_status st = tk_te_encoder_new(p, on_packet, s, &e);
    if (st == TK_OK && mode == GEN_RUN)
        st = tk_te_encoder_push_run(e, rows, n);
    for (size_t i = 0; st == TK_OK && mode == GEN_PUSH1 && i < n; i++)
        st = tk_te_encoder_push(e, &rows[i], 1);
    const tk_te_block *b = cy->blocks;
    for (size_t k = 0; st == TK_OK && mode == GEN_GROUPED && k < cy->ncycles; k++) {
        st = tk_te_encoder_push(e, b, cy->ncycle[k]);
        b += cy->ncycle[k];
    }
    if (st == TK_OK && mode == GEN_GROUPED_RUN)
        st = tk_te_encoder_push_run(e, cy->blocks, cy->nblocks);
    if (st == TK_OK)
        st = tk_te_encoder_finish(e);
    tk_te_encoder_free(e);
    return st;
}

static int cmd_gen(int argc, char **argv)
{
    if (argc < 7)
        return 2;
    tk_te_params p;
    if (read_params(&p, argv[2], argv[3]))
        return 1;
    const long copies = atol(argv[5]);
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_ingress_reader *in = NULL;
    double r0 = now(CLOCK_THREAD_CPUTIME_ID);
    if (tk_te_ingress_open(argv[4], &in, &d) != TK_OK) {
        fprintf(stderr, "tkbench: %s\n", d.message);
        return 1;
    }
    size_t n = 0, cap = 1u << 16;
    tk_te_block *blocks = malloc(cap * sizeof(*blocks));
    tk_status st = TK_OK;
    while (blocks && (st = tk_te_ingress_next(in, &blocks[n], &d)) == TK_OK) {
        if (++n == cap) {
            tk_te_block *nb = realloc(blocks, (cap *= 2) * sizeof(*blocks));
            if (!nb)
                free(blocks);
            blocks = nb;
        }
    }
    tk_te_ingress_close(in);
    const double read_cpu = now(CLOCK_THREAD_CPUTIME_ID) - r0;
    if (!blocks || st != TK_END) {
        fprintf(stderr, "tkbench: %s\n", blocks ? d.message : "out of memory");
        free(blocks);
        return 1;
    }
    uint64_t insns = 0;
    for (size_t i = 0; i < n; i++)
        insns += blocks[i].iretire >> blocks[i].ilastsize; /* single retirement */
    /* grouped ingress: up to 8 instructions per block, 2 blocks per cycle (a wide core) */
    cycles cy;
    if ((st = group_rows(blocks, n, 8, 2, &cy)) != TK_OK) {
        fprintf(stderr, "tkbench: grouping: %s\n", tk_strerror(st));
        free(cy.blocks);
        free(cy.ncycle);
        free(blocks);
        return 1;
    }
    FILE *out = fopen(argv[6], "wb");
    if (!out) {
        fprintf(stderr, "tkbench: %s: cannot create\n", argv[6]);
        free(cy.blocks);
        free(cy.ncycle);
        free(blocks);
        return 1;
    }
    /* every mode must give the bytes of the first copy of GEN_RUN */
    tk_te_layout layout;
    tk_te_layout_init(&layout, &p);
    sink s = {.l = &layout}, first = {.l = &layout};
    double cpu[GEN_MODES] = {0}, wall[GEN_MODES] = {0};
    int identical = -1, same = 1;
    static const char *const mode_names[GEN_MODES] = {"run", "push1", "grouped", "grouped_run"};
    const char *only = getenv("TK_BENCH_GEN_MODE");
    int only_mode = -1;
    for (int m = 0; only && m < GEN_MODES; m++)
        if (!strcmp(only, mode_names[m]))
            only_mode = m;
    if (only && only_mode < 0) {
        fprintf(stderr, "tkbench: TK_BENCH_GEN_MODE: run, push1, grouped or grouped_run\n");
        st = TK_ERR_INVALID;
    }
    for (long c = 0; c < copies && st == TK_OK; c++) {
        for (int m = 0; m < GEN_MODES && st == TK_OK; m++) {
            if (only_mode >= 0 && m != only_mode && !(c == 0 && m == GEN_RUN))
                continue;
            s.len = 0;
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
            st = encode_once(&p, (enum gen_mode)m, blocks, n, &cy, &s);
            cpu[m] += now(CLOCK_THREAD_CPUTIME_ID) - c0;
            wall[m] += now(CLOCK_MONOTONIC) - w0;
            if (st != TK_OK) {
                fprintf(stderr, "tkbench: encoder: %s\n", tk_strerror(st));
                break;
            }
            if (c == 0 && m == GEN_RUN) {
                first.buf = malloc(s.len + 1);
                if (!first.buf) {
                    st = TK_ERR_NOMEM;
                    break;
                }
                memcpy(first.buf, s.buf, s.len);
                first.len = s.len;
            }
            if (s.len != first.len || memcmp(s.buf, first.buf, s.len))
                same = 0;
            if (m == GEN_RUN && fwrite(s.buf, 1, s.len, out) != s.len)
                st = TK_ERR_IO;
        }
    }
    if (st == TK_OK && argc > 7) {
        FILE *g = fopen(argv[7], "rb");
        identical = 0;
        if (g) {
            uint8_t *gb = malloc(first.len + 1);
            size_t gl = gb ? fread(gb, 1, first.len + 1, g) : 0;
            identical = gl == first.len && !memcmp(gb, first.buf, first.len);
            free(gb);
            fclose(g);
        }
    }
    if (fclose(out) != 0)
        st = TK_ERR_IO;
    free(s.buf);
    free(first.buf);
    free(cy.blocks);
    free(cy.ncycle);
    free(blocks);
    if (st != TK_OK)
        return 1;
    const double total = (double)insns * (double)copies;
    printf("instructions %.0f\nrows %zu\ningress_read_rows_per_s %.0f\n", total, n,
           (double)n / read_cpu);
    printf("encoder_cpu_s %.4f\nencoder_Minstr_per_s %.1f\nencoder_wall_Minstr_per_s %.1f\n",
           cpu[GEN_RUN], total / cpu[GEN_RUN] / 1e6, total / wall[GEN_RUN] / 1e6);
    printf("encoder_push1_Minstr_per_s %.1f\n", total / cpu[GEN_PUSH1] / 1e6);
    printf("grouped_blocks %zu\ngrouped_cycles %zu\nencoder_grouped_Minstr_per_s %.1f\n",
           cy.nblocks, cy.ncycles, total / cpu[GEN_GROUPED] / 1e6);
    printf("encoder_grouped_run_Minstr_per_s %.1f\n", total / cpu[GEN_GROUPED_RUN] / 1e6);
    printf("modes_identical %s\n", same ? "yes" : "NO");
    if (identical >= 0)
        printf("identical_to_golden %s\n", identical ? "yes" : "NO");
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    int rc = 2;
    if (argc > 1 && !strcmp(argv[1], "parse"))
        rc = cmd_parse(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "flow"))
        rc = cmd_flow(argc, argv);
    else if (argc > 1 && !strcmp(argv[1], "gen"))
        rc = cmd_gen(argc, argv);
    if (rc == 2)
        fprintf(stderr, "usage: tkbench parse SCF UCF RAW [RUNS]\n"
                        "       tkbench flow SCF UCF ELF RAW [RUNS]\n"
                        "       tkbench gen SCF UCF ENCODER_INPUT COPIES OUT [GOLDEN]\n");
    return rc;
}
