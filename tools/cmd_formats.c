/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit formats: the bandwidth of the trace formats side by side on the same executions.
 * Each program runs once on the hart model (with its data accesses reported); every record
 * goes to E-Trace encoders under several modes, nibble-trace encoders under several emit
 * options and run-length encoders under several queue models. Prints bits per retired
 * instruction (and, for the data trace, bits per traced access) and how often the RLE queue
 * throttled retirement. docs/formats.md is this command's --markdown output. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tracekit/hart.h"
#include "tracekit/legacy.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_packet.h"

/* E-Trace modes compared (branchTrace.adoc optional modes; as tracekit stats names them). */
typedef struct et_cfg {
    const char *name;
    unsigned rss, bpred, cache;
} et_cfg;
static const et_cfg ET[] = {
    {"E-Trace baseline", 0, 0, 0},
    {"E-Trace ir stack 2^3", 3, 0, 0},
    {"E-Trace ir+bp+jtc large", 4, 10, 7},
};
#define NET (sizeof(ET) / sizeof(ET[0]))

typedef struct nib_cfg {
    const char *name;
    uint32_t emit;
} nib_cfg;
#define MEM_DATA (TK_NIB_LOAD_ADDR | TK_NIB_LOAD_DATA | TK_NIB_STORE_ADDR | TK_NIB_STORE_DATA)
static const nib_cfg NIB[] = {
    {"nibble pc", TK_NIB_PC},
    {"nibble branch", TK_NIB_BRANCH},
    {"nibble branch+data", TK_NIB_BRANCH | MEM_DATA},
    {"nibble branch+addresses", TK_NIB_BRANCH | TK_NIB_LOAD_ADDR | TK_NIB_STORE_ADDR},
    {"nibble branch+data+csr", TK_NIB_BRANCH | MEM_DATA | TK_NIB_CSR},
};
#define NNIB (sizeof(NIB) / sizeof(NIB[0]))

typedef struct rle_cfg {
    const char *name;
    unsigned depth, width, div;
} rle_cfg;
static const rle_cfg RLE[] = {
    {"RLE", 4, 2, 1}, /* the default model: its bits are the RLE column */
    {"RLE d1 w2", 1, 2, 1},   {"RLE d2 w2", 2, 2, 1},   {"RLE d4 w4", 4, 4, 1},
    {"RLE d2 div2", 2, 1, 2}, {"RLE d8 div2", 8, 1, 2},
};
#define NRLE (sizeof(RLE) / sizeof(RLE[0]))

typedef struct et_run {
    tk_te_params p;
    tk_hart_blocks *blocks;
    tk_te_encoder *enc;
    uint64_t payload;
    tk_status fail;
} et_run;

typedef struct prog {
    et_run et[NET];
    tk_nibble_encoder *nib[NNIB];
    tk_rle_encoder *rle[NRLE];
    tk_rle_params rp[NRLE];
    uint64_t retired;
} prog;

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    et_run *r = ctx;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    tk_status st = tk_te_packet_encode(&r->p, pkt, buf, sizeof(buf), &len);
    if (st != TK_OK)
        return r->fail = st;
    r->payload += len;
    return TK_OK;
}

static tk_status on_blocks(void *ctx, const tk_te_block *b, size_t n)
{
    et_run *r = ctx;
    return tk_te_encoder_push(r->enc, b, n);
}

static tk_status on_retire(void *ctx, const tk_hart_retire *r, size_t n)
{
    prog *g = ctx;
    tk_status st = TK_OK;
    for (size_t i = 0; i < n; i++)
        if (r[i].flags & TK_HART_F_RETIRED)
            g->retired++;
    for (size_t i = 0; i < NET && st == TK_OK; i++)
        st = tk_hart_blocks_push(g->et[i].blocks, r, n);
    for (size_t i = 0; i < NNIB && st == TK_OK; i++)
        st = tk_nibble_encoder_push(g->nib[i], r, n, NULL, 0);
    for (size_t i = 0; i < NRLE && st == TK_OK; i++)
        st = tk_rle_encoder_push(g->rle[i], r, n);
    return st;
}

static void et_params(const et_cfg *c, unsigned xlen, tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = xlen;
    p->s.iaddress_lsb = 1;
    p->s.itype_width = 4;
    p->s.return_stack_size = c->rss;
    p->s.bpred_size = c->bpred;
    p->s.cache_size = c->cache;
    p->s.f0s_width = (c->bpred && c->cache) ? 1 : 0;
    p->o.implicit_return = c->rss != 0;
    p->o.branch_prediction = c->bpred != 0;
    p->o.jump_target_cache = c->cache != 0;
    p->ioptions_width = 6;
}

static void prog_free(prog *g)
{
    for (size_t i = 0; i < NET; i++) {
        tk_hart_blocks_free(g->et[i].blocks);
        tk_te_encoder_free(g->et[i].enc);
    }
    for (size_t i = 0; i < NNIB; i++)
        tk_nibble_encoder_free(g->nib[i]);
    for (size_t i = 0; i < NRLE; i++)
        tk_rle_encoder_free(g->rle[i]);
}

static tk_status prog_init(prog *g, unsigned xlen, tk_diag *diag)
{
    tk_status st;
    memset(g, 0, sizeof(*g));
    for (size_t i = 0; i < NET; i++) {
        et_run *r = &g->et[i];
        et_params(&ET[i], xlen, &r->p);
        if ((st = tk_te_params_validate(&r->p, diag)) != TK_OK)
            return st;
        tk_te_encoder_options eo;
        tk_te_encoder_options_init(&eo);
        eo.reference_quirks = false; /* the spec's behaviour, as tracekit stats measures */
        eo.irdepth_ones = false;
        tk_hart_blocks_options bo;
        tk_hart_blocks_options_init(&bo);
        bo.itype_width = 4;
        bo.xret_itype3 = true;
        if ((st = tk_te_encoder_new_opts(&r->p, &eo, on_packet, r, &r->enc)) != TK_OK ||
            (st = tk_hart_blocks_new(&bo, on_blocks, r, &r->blocks)) != TK_OK)
            return st;
    }
    for (size_t i = 0; i < NNIB; i++) {
        tk_nibble_params p;
        tk_nibble_params_init(&p);
        p.xlen = xlen;
        p.emit = NIB[i].emit;
        if ((st = tk_nibble_encoder_new(&p, &g->nib[i])) != TK_OK)
            return st;
    }
    for (size_t i = 0; i < NRLE; i++) {
        tk_rle_params_init(&g->rp[i]);
        g->rp[i].xlen = xlen;
        g->rp[i].depth = RLE[i].depth;
        g->rp[i].retire_width = RLE[i].width;
        g->rp[i].trace_div = RLE[i].div;
        if ((st = tk_rle_encoder_new(&g->rp[i], &g->rle[i])) != TK_OK)
            return st;
    }
    return TK_OK;
}

typedef struct row {
    char name[64];
    uint64_t retired, accesses[NNIB];
    double bits[NET + NNIB + 1];
    double access_bits[NNIB]; /* data-trace nibbles * 4 / traced accesses */
    uint64_t pairs[NRLE], throttles[NRLE], throttled_clocks[NRLE], clocks[NRLE];
} row;

static int run_program(const char *elf, uint64_t max, row *out)
{
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_image *img = NULL;
    tk_sim *sim = NULL;
    prog g;
    int rc = 1;
    memset(&g, 0, sizeof(g));
    memset(out, 0, sizeof(*out));
    const char *base = strrchr(elf, '/');
    snprintf(out->name, sizeof(out->name), "%s", base ? base + 1 : elf);
    char *dot = strrchr(out->name, '.');
    if (dot)
        *dot = 0;
    tk_status st = tk_image_open_elf(elf, &img, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit formats: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    cfg.xlen = tk_image_xlen(img);
    if ((st = tk_sim_new(&cfg, &sim)) != TK_OK ||
        (st = tk_sim_load_image(sim, img, &diag)) != TK_OK ||
        (st = prog_init(&g, cfg.xlen, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit formats: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    tk_sim_set_mem_trace(sim, true);
    tk_sim_set_retire(sim, on_retire, &g);
    tk_sim_result res;
    st = tk_sim_run(sim, max, &res, &diag);
    if (st != TK_OK && st != TK_END) {
        fprintf(stderr, "tracekit formats: %s: %s: %s\n", elf, tk_strerror(st), diag.message);
        goto done;
    }
    st = TK_OK;
    const uint64_t next = tk_sim_get_pc(sim, 0);
    for (size_t i = 0; i < NET && st == TK_OK; i++)
        if ((st = tk_hart_blocks_finish(g.et[i].blocks)) == TK_OK)
            st = tk_te_encoder_finish(g.et[i].enc);
    for (size_t i = 0; i < NNIB && st == TK_OK; i++)
        st = tk_nibble_encoder_finish(g.nib[i], true, next);
    for (size_t i = 0; i < NRLE && st == TK_OK; i++)
        st = tk_rle_encoder_finish(g.rle[i], true, next);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit formats: %s: %s\n", elf, tk_strerror(st));
        goto done;
    }
    const double n = g.retired ? (double)g.retired : 1.0;
    out->retired = g.retired;
    for (size_t i = 0; i < NET; i++)
        out->bits[i] = 8.0 * (double)g.et[i].payload / n;
    for (size_t i = 0; i < NNIB; i++) {
        tk_nibble_stats s;
        tk_nibble_encoder_get_stats(g.nib[i], &s);
        out->bits[NET + i] = 4.0 * (double)s.nibbles / n;
        out->accesses[i] = s.accesses;
        out->access_bits[i] = s.accesses ? 4.0 * (double)s.data_nibbles / (double)s.accesses : 0;
    }
    for (size_t i = 0; i < NRLE; i++) {
        tk_rle_stats s;
        tk_rle_encoder_get_stats(g.rle[i], &s);
        out->pairs[i] = s.pairs;
        out->throttles[i] = s.throttle_events;
        out->throttled_clocks[i] = s.throttled_clocks;
        out->clocks[i] = s.clocks;
    }
    out->bits[NET + NNIB] = (double)out->pairs[0] * tk_rle_pair_bits(&g.rp[0]) / n;
    rc = 0;
done:
    prog_free(&g);
    tk_sim_free(sim);
    tk_image_free(img);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit formats [--max-insns N] [--markdown] PROG.elf...\n"
            "\n"
            "Run each program on the hart model once and measure, on that one execution, the\n"
            "bits per retired instruction of E-Trace under several modes, of the nibble trace\n"
            "(RISC-V debug-spec trace module) under several emit options and of the Am29460\n"
            "run-length trace; the bits per traced data access of the nibble data trace; and\n"
            "how often the run-length trace's queue throttled retirement.\n"
            "  --max-insns N   stop each program after N instructions (default 2000000)\n"
            "  --markdown      Markdown tables (docs/formats.md)\n"
            "\n"
            "example:\n"
            "  tracekit formats --markdown ../shared/testdata/riscv-ref/*.riscv "
            "build/examples/*.elf\n");
}

int tk_cmd_formats(int argc, char **argv)
{
    uint64_t max = 2000000;
    bool md = false;
    static const struct option opts[] = {{"max-insns", required_argument, NULL, 'm'},
                                         {"markdown", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'm':
            errno = 0;
            max = strtoull(optarg, &end, 0);
            if (!optarg[0] || *end || errno) {
                fprintf(stderr, "tracekit formats: bad --max-insns %s\n", optarg);
                return 2;
            }
            break;
        case 'k':
            md = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    const int np = argc - optind;
    row *rows = calloc((size_t)np, sizeof(*rows));
    if (!rows)
        return 2;
    int rc = 0;
    for (int i = 0; i < np; i++)
        if (run_program(argv[optind + i], max, &rows[i]) != 0)
            rc = 1;
    const char *sep = md ? " | " : "  ";

    /* 1. bits per retired instruction */
    printf(md ? "| program | instructions" : "%-22s %10s", "program", "instructions");
    for (size_t c = 0; c < NET; c++)
        printf(md ? " | %s" : "  %s", ET[c].name);
    for (size_t c = 0; c < NNIB; c++)
        printf(md ? " | %s" : "  %s", NIB[c].name);
    printf(md ? " | %s |\n" : "  %s\n", RLE[0].name);
    if (md) {
        printf("|---|---:");
        for (size_t c = 0; c < NET + NNIB + 1; c++)
            printf("|---:");
        printf("|\n");
    }
    for (int i = 0; i < np; i++) {
        if (!rows[i].retired)
            continue;
        printf(md ? "| %s | %" PRIu64 : "%-22s %10" PRIu64, rows[i].name, rows[i].retired);
        for (size_t c = 0; c < NET + NNIB + 1; c++)
            printf("%s%.3f", sep, rows[i].bits[c]);
        printf(md ? " |\n" : "\n");
    }

    /* 2. data trace: bits per traced access */
    printf(md ? "\n| program | accesses" : "\n%-22s %10s", "program", "accesses");
    for (size_t c = 2; c < NNIB; c++)
        printf(md ? " | %s: bits/access" : "  %s: bits/access", NIB[c].name);
    printf(md ? " |\n|---|---:" : "\n");
    if (md) {
        for (size_t c = 2; c < NNIB; c++)
            printf("|---:");
        printf("|\n");
    }
    for (int i = 0; i < np; i++) {
        if (!rows[i].retired)
            continue;
        printf(md ? "| %s | %" PRIu64 : "%-22s %10" PRIu64, rows[i].name, rows[i].accesses[2]);
        for (size_t c = 2; c < NNIB; c++)
            printf("%s%.2f", sep, rows[i].access_bits[c]);
        printf(md ? " |\n" : "\n");
    }

    /* 3. RLE queue */
    printf(md ? "\n| program | pairs" : "\n%-22s %10s", "program", "pairs");
    for (size_t c = 0; c < NRLE; c++)
        printf(md ? " | %s: throttled / clocks" : "  %s: throttled/clocks", RLE[c].name);
    printf(md ? " |\n|---|---:" : "\n");
    if (md) {
        for (size_t c = 0; c < NRLE; c++)
            printf("|---:");
        printf("|\n");
    }
    for (int i = 0; i < np; i++) {
        if (!rows[i].retired)
            continue;
        printf(md ? "| %s | %" PRIu64 : "%-22s %10" PRIu64, rows[i].name, rows[i].pairs[0]);
        for (size_t c = 0; c < NRLE; c++)
            printf("%s%" PRIu64 " / %" PRIu64, sep, rows[i].throttles[c], rows[i].clocks[c]);
        printf(md ? " |\n" : "\n");
    }
    free(rows);
    return rc;
}
