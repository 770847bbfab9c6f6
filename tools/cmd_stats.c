/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit stats: how many packets, bytes and bits per retired instruction each combination
 * of E-Trace modes costs on real executions, and the share of each packet format. The
 * executions come from spike PC traces (the reference flow's input: rows -> ingress blocks
 * through the converter); each one goes through the encoder and the packet codec of the
 * chosen spec and, with --check, back through the decoder, whose PCs must be the executed
 * ones. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "etrace/modes.h"
#include "tracekit/hart.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_ingress.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: tracekit stats [options] PROG.elf|ELF:SPIKE_TRACE...\n"
        "       tracekit stats [options] --golden DIR\n"
        "Encode executions under a matrix of E-Trace modes and print packets, bytes, bits\n"
        "per retired instruction and the share of each packet format.\n"
        "\n"
        "inputs:\n"
        "  PROG.elf          a program, run on the hart model (its first --max-insns)\n"
        "  ELF:SPIKE_TRACE   a program and its spike PC trace (VALID,ADDRESS,INSN,... CSV,\n"
        "                    plain or .gz)\n"
        "  --golden DIR      every DIR/<p>/<p>.spike_pc_trace.gz with DIR/../riscv-ref/<p>.riscv\n"
        "                    (the layout of the shared golden vectors)\n"
        "options:\n"
        "  --config LIST     one configuration instead of the default matrix; repeat for more.\n"
        "                    LIST is comma separated: base, full, sijump, iexc, ir=stack:N,\n"
        "                    ir=counter:N, bp=N, jtc=N (log2 sizes), group=N (instructions\n"
        "                    retired per cycle, 2 blocks), name=TEXT\n"
        "  --spec V          packet layout: 2.0 (default), 0.29, 0.26\n"
        "  --check           decode every trace again and fail unless the PCs are exact\n"
        "  --max-insns N     instructions of a hart-model run (default 2000000)\n"
        "  --markdown        print Markdown tables (as in docs/modes.md)\n"
        "  -h, --help        this text\n"
        "\n"
        "The default matrix: baseline, sijump, implicit return (stack 2^3 / counter 2^4),\n"
        "branch prediction (2^4 and 2^10 entries), jump target cache (2^3 and 2^7), and\n"
        "implicit return + branch prediction + jump target cache, small and large.\n"
        "\n"
        "examples:\n"
        "  d=../shared/testdata\n"
        "  tracekit stats --check --golden $d/etrace-ref\n"
        "  tracekit stats --markdown build/examples/*.elf\n"
        "  tracekit stats --config base --config ir=stack:3,bp=10,jtc=7 \\\n"
        "      $d/riscv-ref/towers.riscv:$d/etrace-ref/towers/towers.spike_pc_trace.gz\n");
}

/* One column of the matrix. */
typedef struct config {
    char name[48];
    bool full, sijump, iexc, ir, bp, jtc;
    unsigned rss, ccs, bpred, cache, group;
} config;

static const config default_matrix[] = {
    {.name = "baseline"},
    {.name = "sijump", .sijump = true},
    {.name = "ir stack 2^3", .ir = true, .rss = 3},
    {.name = "ir counter 2^4", .ir = true, .ccs = 4},
    {.name = "bp 2^4", .bp = true, .bpred = 4},
    {.name = "bp 2^10", .bp = true, .bpred = 10},
    {.name = "jtc 2^3", .jtc = true, .cache = 3},
    {.name = "jtc 2^7", .jtc = true, .cache = 7},
    {.name = "ir+bp+jtc small",
     .ir = true,
     .rss = 2,
     .bp = true,
     .bpred = 4,
     .jtc = true,
     .cache = 3},
    {.name = "ir+bp+jtc large",
     .ir = true,
     .rss = 4,
     .bp = true,
     .bpred = 10,
     .jtc = true,
     .cache = 7},
};

static bool parse_uint(const char *s, unsigned max, unsigned *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (end == s || *end || v > max)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_config(const char *text, config *c)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", text);
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", text);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "base"))
            continue;
        else if (!strcmp(tok, "full"))
            c->full = true;
        else if (!strcmp(tok, "sijump"))
            c->sijump = true;
        else if (!strcmp(tok, "iexc"))
            c->iexc = true;
        else if (!strncmp(tok, "ir=stack:", 9) && parse_uint(tok + 9, 16, &c->rss) && c->rss)
            c->ir = true;
        else if (!strncmp(tok, "ir=counter:", 11) && parse_uint(tok + 11, 16, &c->ccs) && c->ccs)
            c->ir = true;
        else if (!strncmp(tok, "bp=", 3) && parse_uint(tok + 3, 24, &c->bpred))
            c->bp = true;
        else if (!strncmp(tok, "jtc=", 4) && parse_uint(tok + 4, 24, &c->cache))
            c->jtc = true;
        else if (!strncmp(tok, "group=", 6) && parse_uint(tok + 6, 64, &c->group))
            continue;
        else if (!strncmp(tok, "name=", 5))
            snprintf(c->name, sizeof(c->name), "%s", tok + 5);
        else
            return false;
    }
    return true;
}

static void config_params(const config *c, tk_te_spec spec, tk_te_params *p)
{
    tk_te_params_init(p);
    p->spec = spec;
    p->s.iaddress_width = 64;
    p->s.iaddress_lsb = 1;
    p->s.itype_width = 4;
    p->s.sijump = c->sijump;
    p->s.return_stack_size = c->rss;
    p->s.call_counter_size = c->ccs;
    p->s.bpred_size = c->bpred;
    p->s.cache_size = c->cache;
    p->s.f0s_width = (c->bp && c->jtc) ? 1 : 0;
    p->o.full_address = c->full;
    p->o.sijump = c->sijump;
    p->o.implicit_except = c->iexc;
    p->o.implicit_return = c->ir;
    p->o.branch_prediction = c->bp;
    p->o.jump_target_cache = c->jtc;
    p->ioptions_width = 6;
}

/* A program: its image and executed rows, loaded once for all configurations. */
typedef struct program {
    char *name;
    tk_image *img;
    tk_spike_row *rows; /* a spike trace, through the converter */
    size_t nrows;
    tk_te_block *blocks; /* or the hart model's blocks */
    size_t nblocks;
    uint64_t *pcs;
    size_t npcs;
    size_t pcap, bcap;
    tk_hart_blocks *hb;
    uint64_t tvec[4]; /* trap vectors per privilege (implicit exception mode) */
    uint8_t tvec_set;
} program;

static void program_free(program *g)
{
    if (g->img)
        tk_image_free(g->img);
    free(g->rows);
    free(g->blocks);
    free(g->pcs);
    free(g->name);
}

static int program_load(program *g, const char *elf, const char *trace)
{
    memset(g, 0, sizeof(*g));
    const char *base = strrchr(elf, '/');
    g->name = strdup(base ? base + 1 : elf);
    char *dot = g->name ? strrchr(g->name, '.') : NULL;
    if (dot)
        *dot = 0;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_image_open_elf(elf, &g->img, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit stats: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    if ((st = tk_te_add_spike_reset_code(g->img, false)) != TK_OK)
        return 1;
    tk_spike_reader *sr;
    if ((st = tk_spike_open(trace, &sr, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit stats: %s: %s\n", trace,
                diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    size_t cap = 1024;
    g->rows = malloc(cap * sizeof(*g->rows));
    g->pcs = malloc(cap * sizeof(*g->pcs));
    tk_spike_row row;
    bool after_trap = false;
    while (g->rows && g->pcs && (st = tk_spike_next(sr, &row, &diag)) == TK_OK) {
        if (g->nrows == cap) {
            cap *= 2;
            tk_spike_row *r = realloc(g->rows, cap * sizeof(*r));
            uint64_t *p = r ? realloc(g->pcs, cap * sizeof(*p)) : NULL;
            if (r)
                g->rows = r;
            if (!p) {
                st = TK_ERR_NOMEM;
                break;
            }
            g->pcs = p;
        }
        g->rows[g->nrows++] = row;
        /* The first handler seen gives the machine trap vector (for --config iexc). */
        if (after_trap && !(g->tvec_set & 8u)) {
            g->tvec[3] = row.address;
            g->tvec_set |= 8u;
        }
        after_trap = row.exception || row.interrupt;
        /* retired: everything but faulting rows (ecall/ebreak retire) */
        if (!row.exception || row.insn == 0x73 || row.insn == 0x100073)
            g->pcs[g->npcs++] = row.address;
    }
    tk_spike_close(sr);
    if (st != TK_END) {
        fprintf(stderr, "tracekit stats: %s: %s\n", trace,
                diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    return 0;
}

static bool grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? 2 * *cap : 4096;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return false;
    *p = q;
    *cap = nc;
    return true;
}

static tk_status hart_blocks(void *ctx, const tk_te_block *blocks, size_t n)
{
    program *g = ctx;
    for (size_t i = 0; i < n; i++) {
        if (!grow((void **)&g->blocks, &g->bcap, g->nblocks, sizeof(*g->blocks)))
            return TK_ERR_NOMEM;
        g->blocks[g->nblocks++] = blocks[i];
    }
    return TK_OK;
}

static tk_status hart_retire(void *ctx, const tk_hart_retire *recs, size_t n)
{
    program *g = ctx;
    for (size_t i = 0; i < n; i++) {
        if (!(recs[i].flags & TK_HART_F_RETIRED))
            continue;
        if (!grow((void **)&g->pcs, &g->pcap, g->npcs, sizeof(*g->pcs)))
            return TK_ERR_NOMEM;
        g->pcs[g->npcs++] = recs[i].pc;
    }
    return tk_hart_blocks_push(g->hb, recs, n);
}

/* Run the program on the hart model: single-retirement ingress blocks (2.0 itypes, sijump
 * marks; an interrupt after a branch in a block of its own) and the retired PCs. */
static int program_run(program *g, const char *elf, uint64_t max_insns)
{
    memset(g, 0, sizeof(*g));
    const char *base = strrchr(elf, '/');
    g->name = strdup(base ? base + 1 : elf);
    char *dot = g->name ? strrchr(g->name, '.') : NULL;
    if (dot)
        *dot = 0;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_sim *sim = NULL;
    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    tk_hart_blocks_options bo;
    tk_hart_blocks_options_init(&bo);
    bo.itype_width = 4;
    bo.sijump = true;
    bo.retires = 1;
    bo.xret_itype3 = true;
    tk_sim_result res;
    tk_status st = tk_image_open_elf(elf, &g->img, &diag);
    if (st == TK_OK)
        st = tk_sim_new(&cfg, &sim);
    if (st == TK_OK)
        st = tk_sim_load_image(sim, g->img, &diag);
    if (st == TK_OK)
        st = tk_hart_blocks_new(&bo, hart_blocks, g, &g->hb);
    if (st == TK_OK) {
        tk_sim_set_retire(sim, hart_retire, g);
        st = tk_sim_run(sim, max_insns, &res, &diag);
        if (st == TK_END)
            st = TK_OK;
    }
    if (st == TK_OK)
        st = tk_hart_blocks_finish(g->hb);
    /* the trap vectors the program installed, for implicit exception mode */
    static const struct {
        unsigned priv, csr;
    } vec[] = {{3, 0x305}, {1, 0x105}};
    for (size_t i = 0; st == TK_OK && i < 2; i++) {
        uint64_t v;
        if (tk_sim_get_csr(sim, 0, vec[i].csr, &v) == TK_OK && v) {
            g->tvec[vec[i].priv] = v;
            g->tvec_set |= (uint8_t)(1u << vec[i].priv);
        }
    }
    tk_hart_blocks_free(g->hb);
    g->hb = NULL;
    tk_sim_free(sim);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit stats: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    return 0;
}

/* What one program under one configuration gave. */
typedef struct result {
    uint64_t insns, packets, raw_bytes, payload_bytes;
    uint64_t fmt[6]; /* F0SF0, F0SF1, F1, F2, F3 sync, F3 support */
    bool checked, exact;
} result;

typedef struct run {
    const tk_te_params *p;
    tk_te_decoder *d;
    result *r;
    const program *g;
    size_t pos;
    bool differs;
    uint64_t errors;
    tk_status fail;
} run;

static tk_status on_event(void *ctx, const tk_event *ev)
{
    run *x = ctx;
    if (ev->kind == TK_EV_ERROR)
        x->errors++;
    if (ev->kind != TK_EV_RANGE || x->differs)
        return TK_OK;
    uint64_t pc = ev->first;
    for (uint64_t i = 0; i < ev->ninsn; i++) {
        if (x->pos >= x->g->npcs || x->g->pcs[x->pos] != pc) {
            x->differs = true;
            return TK_OK;
        }
        x->pos++;
        tk_rv_insn insn;
        if (tk_image_fetch(x->g->img, pc, &insn) != TK_OK) {
            x->differs = true;
            return TK_OK;
        }
        pc += insn.len;
    }
    return TK_OK;
}

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    run *x = ctx;
    result *r = x->r;
    unsigned slot = pkt->format == TK_TE_F0   ? (pkt->subformat == TK_TE_F0_BRANCH_COUNT ? 0 : 1)
                    : pkt->format == TK_TE_F3 ? (pkt->subformat == TK_TE_SF_SUPPORT ? 5 : 4)
                                              : pkt->format + 1u;
    r->fmt[slot]++;
    r->packets++;
    /* the encoder hands over its spec's layout; 0.026's support packet is a separate
     * te_support message of 16 bits */
    if (x->p->spec == TK_TE_SPEC_0_26 && slot == 5) {
        r->raw_bytes += 2;
        r->payload_bytes += 2;
        return x->d ? tk_te_decoder_packet(x->d, pkt, r->raw_bytes, r->packets - 1) : TK_OK;
    }
    const tk_te_packet wire = *pkt;
    tk_status st = TK_OK;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len;
    if (st == TK_OK)
        st = tk_te_packet_encode(x->p, &wire, buf, sizeof(buf), &len);
    if (st != TK_OK) {
        x->fail = st;
        return st;
    }
    r->raw_bytes += len + 1;
    r->payload_bytes += len;
    if (!x->d)
        return TK_OK;
    tk_te_packet back;
    tk_diag diag;
    tk_diag_clear(&diag);
    if ((st = tk_te_packet_decode(x->p, buf, len, &back, &diag)) != TK_OK) {
        x->fail = st;
        return st;
    }
    return tk_te_decoder_packet(x->d, &back, r->raw_bytes, r->packets - 1);
}

static int run_one(const program *g, const config *c, tk_te_spec spec, bool check, result *r)
{
    memset(r, 0, sizeof(*r));
    tk_te_params p;
    config_params(c, spec, &p);
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_te_params_validate(&p, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit stats: %s: %s\n", c->name, diag.message);
        return 1;
    }
    run x = {.p = &p, .r = r, .g = g};
    if (check && (st = tk_te_decoder_new(&p, g->img, on_event, &x, &x.d)) != TK_OK)
        goto api_error;
    for (unsigned priv = 0; x.d && priv < 4; priv++)
        if ((g->tvec_set >> priv) & 1u)
            tk_te_decoder_set_trap_vector(x.d, priv, g->tvec[priv]);
    tk_te_encoder_options eo;
    tk_te_encoder_options_init(&eo);
    eo.reference_quirks = false;
    eo.irdepth_ones = false;
    tk_te_encoder *e = NULL;
    tk_spike_conv *conv = NULL;
    tk_te_grouper *grp = NULL;
    tk_te_block cyc[2];
    tk_spike_conv_options co = {.reference_quirks = false};
    if ((st = tk_te_encoder_new_opts(&p, &eo, on_packet, &x, &e)) != TK_OK ||
        (st = tk_spike_conv_new(&p, &co, &conv)) != TK_OK ||
        (c->group && (st = tk_te_grouper_new(c->group, 2, &grp)) != TK_OK))
        goto done;
    for (size_t i = 0; i <= g->nrows + g->nblocks && st == TK_OK; i++) {
        tk_te_block b;
        bool ready = true;
        if (i < g->nblocks)
            b = g->blocks[i];
        else if (g->nblocks)
            break;
        else
            st = i < g->nrows ? tk_spike_conv_push(conv, &g->rows[i], &b, &ready, &diag)
                              : tk_spike_conv_finish(conv, &b, &ready, &diag);
        /* the converter may hand out several blocks for one row (an interrupted branch) */
        while (st == TK_OK && ready) {
            size_t n = 1;
            if (!grp)
                st = tk_te_encoder_push(e, &b, 1);
            else if ((st = tk_te_grouper_push(grp, &b, cyc, &n)) == TK_OK && n)
                st = tk_te_encoder_push(e, cyc, n);
            if (st == TK_OK && i >= g->nblocks)
                st = tk_spike_conv_next(conv, &b, &ready);
            else
                ready = false;
        }
    }
    if (st == TK_OK && grp) {
        size_t n;
        if ((st = tk_te_grouper_finish(grp, cyc, &n)) == TK_OK && n)
            st = tk_te_encoder_push(e, cyc, n);
    }
    if (st == TK_OK)
        st = tk_te_encoder_finish(e);
    if (st == TK_OK && x.d)
        st = tk_te_decoder_finish(x.d);
done:
    r->insns = g->npcs;
    r->checked = check;
    r->exact = check && !x.differs && x.pos == g->npcs && !x.errors && st == TK_OK;
    tk_te_grouper_free(grp);
    tk_spike_conv_free(conv);
    tk_te_encoder_free(e);
    tk_te_decoder_free(x.d);
    if (st == TK_OK)
        return 0;
    if (x.fail)
        st = x.fail;
api_error:
    fprintf(stderr, "tracekit stats: %s, %s: %s%s%s\n", g->name, c->name, tk_strerror(st),
            diag.message[0] ? ": " : "", diag.message);
    return 1;
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_row(bool md, const char *prog, const char *cfg, const result *r, double base)
{
    const double bpi = r->insns ? 8.0 * (double)r->payload_bytes / (double)r->insns : 0.0;
    const double gain = base > 0 ? 100.0 * (1.0 - bpi / base) : 0.0;
    const char *ok = !r->checked ? "-" : r->exact ? "exact" : "WRONG";
    if (md)
        printf("| %s | %s | %llu | %llu | %llu | %.4f | %+.1f%% | %.0f/%.0f/%.0f/%.0f/%.0f/%.0f | "
               "%s |\n",
               prog, cfg, (unsigned long long)r->insns, (unsigned long long)r->packets,
               (unsigned long long)r->payload_bytes, bpi, -gain, pct(r->fmt[0], r->packets),
               pct(r->fmt[1], r->packets), pct(r->fmt[2], r->packets), pct(r->fmt[3], r->packets),
               pct(r->fmt[4], r->packets), pct(r->fmt[5], r->packets), ok);
    else
        printf("%-14s %-18s %9llu %8llu %9llu %8.4f %+7.1f%%  %5.1f %5.1f %5.1f %5.1f %5.1f %5.1f  "
               "%s\n",
               prog, cfg, (unsigned long long)r->insns, (unsigned long long)r->packets,
               (unsigned long long)r->payload_bytes, bpi, -gain, pct(r->fmt[0], r->packets),
               pct(r->fmt[1], r->packets), pct(r->fmt[2], r->packets), pct(r->fmt[3], r->packets),
               pct(r->fmt[4], r->packets), pct(r->fmt[5], r->packets), ok);
}

static void print_header(bool md)
{
    if (md) {
        printf("| program | modes | instructions | packets | payload bytes | bits/instr | vs "
               "baseline | %% F0SF0/F0SF1/F1/F2/F3/support | round trip |\n");
        printf("|---|---|---:|---:|---:|---:|---:|---|---|\n");
    } else {
        printf("%-14s %-18s %9s %8s %9s %8s %8s  %5s %5s %5s %5s %5s %5s  %s\n", "program", "modes",
               "instr", "packets", "bytes", "bits/ins", "vs base", "F0SF0", "F0SF1", "F1", "F2",
               "F3", "supp", "check");
    }
}

/* Programs of a golden-vector folder: DIR/<p>/<p>.spike_pc_trace.gz, DIR/../riscv-ref/<p>.riscv */
static int add_golden(const char *dir, char ***pairs, size_t *n)
{
    static const char *const names[] = {"test_discon_branch_exception",
                                        "vvadd",
                                        "median",
                                        "towers",
                                        "multiply",
                                        "spmv",
                                        "dhrystone",
                                        "qsort",
                                        "mm",
                                        "rsort"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        size_t len = 2 * strlen(dir) + 3 * strlen(names[i]) + 64;
        char *s = malloc(len);
        if (!s)
            return 1;
        snprintf(s, len, "%s/../riscv-ref/%s.riscv:%s/%s/%s.spike_pc_trace.gz", dir, names[i], dir,
                 names[i], names[i]);
        char **np = realloc(*pairs, (*n + 1) * sizeof(*np));
        if (!np) {
            free(s);
            return 1;
        }
        *pairs = np;
        (*pairs)[(*n)++] = s;
    }
    return 0;
}

int tk_cmd_stats(int argc, char **argv)
{
    enum { OPT_CONFIG = 256, OPT_SPEC, OPT_CHECK, OPT_MD, OPT_GOLDEN, OPT_MAX };
    static const struct option longopts[] = {
        {"config", required_argument, NULL, OPT_CONFIG},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"check", no_argument, NULL, OPT_CHECK},
        {"markdown", no_argument, NULL, OPT_MD},
        {"golden", required_argument, NULL, OPT_GOLDEN},
        {"max-insns", required_argument, NULL, OPT_MAX},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    config *configs = NULL;
    size_t nconfigs = 0;
    char **pairs = NULL;
    size_t npairs = 0;
    tk_te_spec spec = TK_TE_SPEC_2_0;
    bool check = false, md = false;
    uint64_t max_insns = 2000000;
    bool wrong = false; /* a --check round trip was not exact */
    int rc = 0, opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case OPT_CONFIG: {
            config *nc = realloc(configs, (nconfigs + 1) * sizeof(*nc));
            if (!nc) {
                rc = 1;
                goto out;
            }
            configs = nc;
            if (!parse_config(optarg, &configs[nconfigs])) {
                fprintf(stderr, "tracekit stats: bad --config '%s'\n", optarg);
                rc = 2;
                goto out;
            }
            nconfigs++;
            break;
        }
        case OPT_SPEC:
            if (tk_te_spec_parse(optarg, &spec) != TK_OK) {
                fprintf(stderr, "tracekit stats: unknown --spec '%s'\n", optarg);
                rc = 2;
                goto out;
            }
            break;
        case OPT_CHECK:
            check = true;
            break;
        case OPT_MD:
            md = true;
            break;
        case OPT_MAX: {
            char *end;
            max_insns = strtoull(optarg, &end, 0);
            if (end == optarg || *end || max_insns == 0) {
                fprintf(stderr, "tracekit stats: bad --max-insns '%s'\n", optarg);
                rc = 2;
                goto out;
            }
            break;
        }
        case OPT_GOLDEN:
            if (add_golden(optarg, &pairs, &npairs)) {
                rc = 1;
                goto out;
            }
            break;
        case 'h':
            usage(stdout);
            goto out;
        default:
            usage(stderr);
            rc = 2;
            goto out;
        }
    }
    for (int i = optind; i < argc; i++) {
        char **np = realloc(pairs, (npairs + 1) * sizeof(*np));
        if (!np || !(np[npairs] = strdup(argv[i]))) {
            pairs = np ? np : pairs;
            rc = 1;
            goto out;
        }
        pairs = np;
        npairs++;
    }
    if (!npairs) {
        fprintf(stderr,
                "tracekit stats: no program given (PROG.elf, ELF:SPIKE_TRACE or --golden DIR)\n");
        usage(stderr);
        rc = 2;
        goto out;
    }
    const config *matrix = configs ? configs : default_matrix;
    const size_t nm = configs ? nconfigs : sizeof(default_matrix) / sizeof(default_matrix[0]);
    result *total = calloc(nm, sizeof(*total));
    if (!total) {
        rc = 1;
        goto out;
    }
    for (size_t k = 0; k < nm; k++)
        total[k].exact = true;
    print_header(md);
    for (size_t i = 0; i < npairs && rc == 0; i++) {
        char *colon = strchr(pairs[i], ':');
        if (colon)
            *colon = 0;
        program g;
        if (colon ? program_load(&g, pairs[i], colon + 1) : program_run(&g, pairs[i], max_insns)) {
            program_free(&g);
            rc = 1;
            break;
        }
        double base = 0;
        for (size_t k = 0; k < nm && rc == 0; k++) {
            result r;
            rc = run_one(&g, &matrix[k], spec, check, &r);
            if (rc)
                break;
            if (k == 0)
                base = r.insns ? 8.0 * (double)r.payload_bytes / (double)r.insns : 0;
            print_row(md, g.name, matrix[k].name, &r, base);
            total[k].insns += r.insns;
            total[k].packets += r.packets;
            total[k].raw_bytes += r.raw_bytes;
            total[k].payload_bytes += r.payload_bytes;
            for (int f = 0; f < 6; f++)
                total[k].fmt[f] += r.fmt[f];
            total[k].checked = check;
            total[k].exact = total[k].exact && r.exact;
            if (check && !r.exact) {
                fprintf(stderr, "tracekit stats: %s, %s: decoded PCs differ\n", g.name,
                        matrix[k].name);
                wrong = true; /* reported, and the other rows still printed */
            }
        }
        program_free(&g);
    }
    if (rc == 0 && wrong)
        rc = 1;
    if (npairs > 1 && (rc == 0 || wrong)) {
        const double base =
            total[0].insns ? 8.0 * (double)total[0].payload_bytes / (double)total[0].insns : 0;
        for (size_t k = 0; k < nm; k++)
            print_row(md, "all", matrix[k].name, &total[k], base);
    }
    free(total);
out:
    free(configs);
    for (size_t i = 0; i < npairs; i++)
        free(pairs[i]);
    free(pairs);
    return rc;
}
