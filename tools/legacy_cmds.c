/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit sim/encode/decode/dump with --trace-format nibble|rle: the RISC-V debug-spec
 * nibble trace and the Am29460 run-length trace (legacy.h, docs/formats.md). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "legacy_cmds.h"
#include "tracekit/analysis.h"
#include "tracekit/hart.h"
#include "tracekit/legacy.h"
#include "tracekit/blocks.h"
#include "tracekit/sink.h"
#include "tracekit/te_ingress.h"
#include "util/hex.h"

enum { FMT_ETRACE, FMT_NIBBLE, FMT_RLE };

/* Options every legacy subcommand understands. */
typedef struct lopts {
    int format;
    tk_nibble_params np;
    tk_rle_params rp;
    bool emit_set;
} lopts;

static void lopts_init(lopts *o)
{
    memset(o, 0, sizeof(*o));
    o->format = FMT_ETRACE;
    tk_nibble_params_init(&o->np);
    tk_rle_params_init(&o->rp);
}

static const char *format_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trace-format") && i + 1 < argc)
            return argv[i + 1];
        if (!strncmp(argv[i], "--trace-format=", 15))
            return argv[i] + 15;
    }
    return NULL;
}

bool tk_legacy_wanted(int argc, char **argv)
{
    const char *f = format_arg(argc, argv);
    return f && (!strcmp(f, "nibble") || !strcmp(f, "rle"));
}

int tk_legacy_strip_etrace(int argc, char **argv)
{
    int w = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--trace-format") && i + 1 < argc && !strcmp(argv[i + 1], "etrace")) {
            i++;
            continue;
        }
        if (!strcmp(argv[i], "--trace-format=etrace"))
            continue;
        argv[w++] = argv[i];
    }
    if (w < argc)
        argv[w] = NULL;
    return w;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 0);
    return s[0] && !*end && errno == 0;
}

static bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    uint64_t v;
    if (!parse_u64(s, &v) || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

static bool parse_emit(const char *list, uint32_t *emit)
{
    static const struct {
        const char *name;
        uint32_t bits;
    } names[] = {
        {"pc", TK_NIB_PC},
        {"branch", TK_NIB_BRANCH},
        {"load-addr", TK_NIB_LOAD_ADDR},
        {"load-data", TK_NIB_LOAD_DATA},
        {"store-addr", TK_NIB_STORE_ADDR},
        {"store-data", TK_NIB_STORE_DATA},
        {"data", TK_NIB_LOAD_ADDR | TK_NIB_LOAD_DATA | TK_NIB_STORE_ADDR | TK_NIB_STORE_DATA},
        {"csr", TK_NIB_CSR},
        {"timestamp", TK_NIB_TIMESTAMP},
    };
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    *emit = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
            if (!strcmp(t, names[i].name))
                break;
        if (i == sizeof(names) / sizeof(names[0]))
            return false;
        *emit |= names[i].bits;
    }
    return true;
}

/* 1: a flag was consumed, 2: an option and its value, 0: not ours, -1: bad value. */
static int lopt(lopts *o, const char *a, const char *v)
{
    unsigned u;
    uint64_t x;
    if (!strcmp(a, "--wrap")) {
        o->np.wrap = true;
        return 1;
    }
    if (!strcmp(a, "--no-compressed")) {
        o->np.compressed = false;
        return 1;
    }
    int took = 2;
    if (!strncmp(a, "--trace-format=", 15)) {
        v = a + 15;
        a = "--trace-format";
        took = 1;
    }
    if (!strcmp(a, "--trace-format") || !strcmp(a, "--emit") || !strcmp(a, "--buffer-words") ||
        !strcmp(a, "--region") || !strcmp(a, "--timestamp-period") || !strcmp(a, "--run-bits") ||
        !strcmp(a, "--depth") || !strcmp(a, "--retire-width") || !strcmp(a, "--trace-div")) {
        if (!v)
            return -1;
    } else {
        return 0;
    }
    if (!strcmp(a, "--trace-format")) {
        if (!strcmp(v, "nibble"))
            o->format = FMT_NIBBLE;
        else if (!strcmp(v, "rle"))
            o->format = FMT_RLE;
        else if (!strcmp(v, "etrace"))
            o->format = FMT_ETRACE;
        else
            return -1;
    } else if (!strcmp(a, "--emit")) {
        if (!parse_emit(v, &o->np.emit))
            return -1;
        o->emit_set = true;
    } else if (!strcmp(a, "--buffer-words")) {
        if (!parse_uint(v, TK_NIB_MIN_BUFFER_WORDS, 1u << 28, &o->np.buffer_words))
            return -1;
    } else if (!strcmp(a, "--region")) {
        char *colon = strchr(v, ':');
        char lo[64];
        if (!colon || (size_t)(colon - v) >= sizeof(lo))
            return -1;
        memcpy(lo, v, (size_t)(colon - v));
        lo[colon - v] = 0;
        if (!parse_u64(lo, &o->np.region_lo) || !parse_u64(colon + 1, &o->np.region_hi))
            return -1;
    } else if (!strcmp(a, "--timestamp-period")) {
        if (!parse_u64(v, &x) || !x)
            return -1;
        o->np.timestamp_period = x;
    } else if (!strcmp(a, "--run-bits")) {
        if (!parse_uint(v, 1, 32, &o->rp.run_bits))
            return -1;
    } else if (!strcmp(a, "--depth")) {
        if (!parse_uint(v, 1, 1u << 20, &o->rp.depth))
            return -1;
    } else if (!strcmp(a, "--retire-width")) {
        if (!parse_uint(v, 1, 64, &u))
            return -1;
        o->rp.retire_width = u;
    } else if (!strcmp(a, "--trace-div")) {
        if (!parse_uint(v, 1, 1024, &o->rp.trace_div))
            return -1;
    }
    return took;
}

static const char LEGACY_OPTIONS[] =
    "  --trace-format F     nibble (RISC-V debug-spec trace module) or rle (Am29460)\n"
    "nibble trace:\n"
    "  --emit LIST          comma list of pc, branch, load-addr, load-data, store-addr,\n"
    "                       store-data, data (all four), csr, timestamp (default: branch)\n"
    "  --buffer-words N     trace buffer of N 32-bit words, 8 sync points (default 4096)\n"
    "  --wrap               circular buffer: keep only its last N words\n"
    "  --region LO:HI       data trace only for addresses LO <= a < HI\n"
    "  --timestamp-period N a timestamp every N retired instructions (default 1000)\n"
    "  --no-compressed      PC values hold bits XLEN-1:2 (code without the C extension)\n"
    "rle trace:\n"
    "  --run-bits N         TRACERUN width (default 8)\n"
    "  --depth N            queue entries (default 4)\n"
    "  --retire-width N     instructions retired per clock (default 2)\n"
    "  --trace-div N        core clocks per TRACECLK (default 1)\n";

/* ---- encoding from records ---- */

typedef struct enc {
    int format;
    tk_nibble_encoder *ne;
    tk_rle_encoder *re;
    tk_rle_params rp;
    FILE *pcs;
    int hart;
    uint64_t retired;
    tk_pc_flow *flow; /* reference events (--events) */
    FILE *events;
    tk_pc_flow *blind; /* events from the PCs alone (--events-pcs-only) */
    FILE *bevents;
    tk_nibble_params np;
    FILE *acc; /* the accesses a nibble data trace must give back (--accesses) */
} enc;

static tk_status enc_push(enc *e, const tk_hart_retire *r, size_t n)
{
    return e->ne ? tk_nibble_encoder_push(e->ne, r, n, NULL, 0) : tk_rle_encoder_push(e->re, r, n);
}

static tk_status enc_finish(enc *e, bool have_next, uint64_t next)
{
    return e->ne ? tk_nibble_encoder_finish(e->ne, have_next, next)
                 : tk_rle_encoder_finish(e->re, have_next, next);
}

static tk_status enc_new(enc *e, const lopts *o, unsigned xlen, int hart, tk_diag *diag)
{
    tk_status st;
    e->format = o->format;
    e->hart = hart;
    if (o->format == FMT_NIBBLE) {
        tk_nibble_params p = o->np;
        p.xlen = xlen;
        p.hart = hart;
        e->np = p;
        if ((st = tk_nibble_params_validate(&p, diag)) != TK_OK)
            return st;
        return tk_nibble_encoder_new(&p, &e->ne);
    }
    e->rp = o->rp;
    e->rp.xlen = xlen;
    e->rp.hart = hart;
    if ((st = tk_rle_params_validate(&e->rp, diag)) != TK_OK)
        return st;
    return tk_rle_encoder_new(&e->rp, &e->re);
}

static void enc_free(enc *e)
{
    tk_nibble_encoder_free(e->ne);
    tk_rle_encoder_free(e->re);
    tk_pc_flow_free(e->flow);
    tk_pc_flow_free(e->blind);
}

static tk_status enc_write(enc *e, const char *out, tk_diag *diag)
{
    if (e->ne)
        return tk_nibble_write_file(out, tk_nibble_encoder_trace(e->ne), diag);
    size_t n;
    const tk_rle_pair *pairs = tk_rle_encoder_pairs(e->re, &n);
    return tk_rle_write_file(out, &e->rp, pairs, n, diag);
}

static void enc_report(enc *e, uint64_t insns)
{
    const double den = insns ? (double)insns : 1.0;
    if (e->ne) {
        tk_nibble_stats s;
        tk_nibble_encoder_get_stats(e->ne, &s);
        fprintf(stderr,
                "nibble trace: %" PRIu64 " nibbles (%" PRIu64 " bytes), %.3f bits/instruction, "
                "%" PRIu64 " sync points, %" PRIu64 " Nop nibbles, %" PRIu64 " accesses%s\n",
                s.nibbles, s.nibbles / 2, 4.0 * (double)s.nibbles / den, s.syncs, s.nop_nibbles,
                s.accesses, tk_nibble_encoder_trace(e->ne)->wrapped ? ", buffer wrapped" : "");
    } else {
        tk_rle_stats s;
        tk_rle_encoder_get_stats(e->re, &s);
        fprintf(stderr,
                "rle trace: %" PRIu64 " pairs of %u bits, %.3f bits/instruction; %" PRIu64
                " clocks, retirement throttled %" PRIu64 " times (%" PRIu64
                " clocks), queue at most %u of %u, %" PRIu64 " idle TRACECLKs\n",
                s.pairs, tk_rle_pair_bits(&e->rp), (double)s.pairs * tk_rle_pair_bits(&e->rp) / den,
                s.clocks, s.throttle_events, s.throttled_clocks, s.max_fill, e->rp.depth,
                s.idle_pairs);
    }
}

/* ---- event lines (--format events; sim --events) ---- */

static const char *const END_NAMES[] = {"none", "branch", "jump",        "call", "return",
                                        "swap", "other",  "trap-return", "trap"};

static tk_status print_event(FILE *out, const tk_event *ev)
{
    int r = 0;
    switch (ev->kind) {
    case TK_EV_RANGE:
        r = fprintf(out, "range %" PRIx64 " %" PRIx64 " %" PRIu64 " %s%s\n", ev->first, ev->last,
                    ev->ninsn, ev->end < 9 ? END_NAMES[ev->end] : "?",
                    ev->end == TK_END_BRANCH ? (ev->taken ? " taken" : " not-taken") : "");
        break;
    case TK_EV_TRAP:
        r = fprintf(out, "trap %" PRIx64 " cause %u%s\n", ev->first, ev->cause,
                    ev->interrupt ? " interrupt" : "");
        break;
    case TK_EV_ERROR:
        r = fprintf(out, "error offset %" PRIu64 ": %s\n", ev->byte_offset,
                    ev->message ? ev->message : tk_strerror(ev->status));
        break;
    case TK_EV_TIMESTAMP:
        r = fprintf(out, "timestamp %" PRIu64 "\n", ev->time);
        break;
    default:
        break;
    }
    return r < 0 ? TK_ERR_IO : TK_OK;
}

static tk_status flow_event(void *ctx, const tk_event *ev)
{
    return print_event(ctx, ev);
}

/* ---- sim ---- */

/* What a nibble data trace under the options must give back for this record's access:
 * the seed's emit rules, written out independently of the encoder. */
static int expected_access(const enc *e, const tk_hart_retire *x)
{
    const uint32_t em = e->np.emit;
    const bool csr = x->mflags & TK_HART_M_CSR;
    int r = 0;
    for (int k = 0; k < 2 && r >= 0; k++) {
        const bool load = k == 0;
        if (!(x->mflags & (load ? TK_HART_M_LOAD : TK_HART_M_STORE)))
            continue;
        const uint64_t data = load ? x->mrdata : x->mwdata;
        const bool want_data = em & (load ? TK_NIB_LOAD_DATA : TK_NIB_STORE_DATA);
        if (csr) {
            if ((em & TK_NIB_CSR) && want_data)
                r = fprintf(e->acc, "%s data %" PRIx64 "\n", load ? "load" : "store", data);
            continue;
        }
        if (e->np.region_hi && (x->maddr < e->np.region_lo || x->maddr >= e->np.region_hi))
            continue;
        const bool want_addr = em & (load ? TK_NIB_LOAD_ADDR : TK_NIB_STORE_ADDR);
        if (!want_addr && !want_data)
            continue;
        r = fprintf(e->acc, "%s", load ? "load" : "store");
        if (r >= 0 && want_addr)
            r = fprintf(e->acc, " addr %" PRIx64, x->maddr);
        if (r >= 0 && want_data)
            r = fprintf(e->acc, " data %" PRIx64, data);
        if (r >= 0)
            r = fprintf(e->acc, "\n");
    }
    return r;
}

static tk_status sim_retire(void *ctx, const tk_hart_retire *r, size_t n)
{
    enc *e = ctx;
    for (size_t i = 0; i < n; i++) {
        const tk_hart_retire *x = &r[i];
        if (x->hart != (unsigned)e->hart)
            continue;
        tk_status st = TK_OK;
        if (x->flags & TK_HART_F_RETIRED) {
            e->retired++;
            if (e->pcs && fprintf(e->pcs, "%" PRIx64 "\n", x->pc) < 0)
                return TK_ERR_IO;
            if (e->blind && (st = tk_pc_flow_pc(e->blind, x->pc)) != TK_OK)
                return st;
            if (e->acc && x->mflags && !(x->flags & TK_HART_F_EXCEPTION) &&
                expected_access(e, x) < 0)
                return TK_ERR_IO;
        }
        if (e->flow) {
            /* the exact events of this execution, for comparison with a decoder's */
            if (x->flags & TK_HART_F_RETIRED)
                st = tk_pc_flow_pc(e->flow, x->pc);
            if (st == TK_OK && (x->flags & TK_HART_F_EXCEPTION))
                st = tk_pc_flow_trap(e->flow, x->pc, (uint32_t)x->cause, false);
            else if (st == TK_OK && (x->flags & TK_HART_F_INTERRUPT))
                st = tk_pc_flow_trap(e->flow, x->epc, (uint32_t)x->cause, true);
            if (st != TK_OK)
                return st;
        }
    }
    return enc_push(e, r, n);
}

static void sim_usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit sim PROG.elf --encode --trace-format nibble|rle [options] -o OUT\n"
            "\n"
            "Run the program on the hart model and write its nibble or run-length trace.\n"
            "  --max-insns N        stop after N executed instructions\n"
            "  --pcs FILE           also write the retired PCs of the traced hart\n"
            "  --events FILE        also write the exact events of the execution (as\n"
            "                       'decode --format events' prints them)\n"
            "  --events-pcs-only FILE  the same from the retired PCs alone (what a trace\n"
            "                       without trap causes can give back)\n"
            "  --accesses FILE      the data accesses a nibble data trace under the options\n"
            "                       must give back (as 'decode --accesses' prints them)\n"
            "  --harts N, --hart H  harts in the model, the one traced (default 1, 0)\n"
            "  --quiet              do not echo the program's console output\n"
            "%s"
            "\nexample:\n"
            "  tracekit sim towers.riscv --encode --trace-format nibble --emit pc -o t.nib\n",
            LEGACY_OPTIONS);
}

static void con(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    fwrite(data, 1, len, stdout);
}

int tk_legacy_cmd_sim(int argc, char **argv)
{
    lopts o;
    lopts_init(&o);
    const char *elf = NULL, *out = NULL, *pcs = NULL, *events = NULL, *bevents = NULL,
               *accesses = NULL;
    uint64_t max = 0, nharts = 1, hart = 0;
    bool quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = lopt(&o, a, v);
        if (k < 0) {
            fprintf(stderr, "tracekit sim: bad value for %s\n", a);
            return 2;
        }
        if (k) {
            i += k - 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            sim_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--encode")) {
            continue;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        } else if (a[0] != '-') {
            elf = a;
            continue;
        }
        bool ok = v != NULL;
        if (ok && !strcmp(a, "-o"))
            out = v;
        else if (ok && !strcmp(a, "--pcs"))
            pcs = v;
        else if (ok && !strcmp(a, "--events"))
            events = v;
        else if (ok && !strcmp(a, "--events-pcs-only"))
            bevents = v;
        else if (ok && !strcmp(a, "--accesses"))
            accesses = v;
        else if (ok && !strcmp(a, "--max-insns"))
            ok = parse_u64(v, &max);
        else if (ok && !strcmp(a, "--harts"))
            ok = parse_u64(v, &nharts) && nharts >= 1 && nharts <= 64;
        else if (ok && !strcmp(a, "--hart"))
            ok = parse_u64(v, &hart) && hart < 64;
        else {
            fprintf(stderr, "tracekit sim: unknown option %s\n", a);
            sim_usage(stderr);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "tracekit sim: bad value for %s\n", a);
            return 2;
        }
        i++;
    }
    if (!elf || !out || o.format == FMT_ETRACE || hart >= nharts) {
        sim_usage(stderr);
        return 2;
    }
    int rc = 2;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_image *img = NULL;
    tk_sim *sim = NULL;
    enc e;
    memset(&e, 0, sizeof(e));
    tk_status st = tk_image_open_elf(elf, &img, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    cfg.xlen = tk_image_xlen(img);
    cfg.nharts = (unsigned)nharts;
    if ((st = tk_sim_new(&cfg, &sim)) != TK_OK ||
        (st = tk_sim_load_image(sim, img, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    if (!quiet)
        tk_sim_set_console(sim, con, NULL);
    if ((st = enc_new(&e, &o, cfg.xlen, (int)hart, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    if (pcs && !(e.pcs = fopen(pcs, "w"))) {
        fprintf(stderr, "tracekit sim: cannot write %s\n", pcs);
        goto done;
    }
    if (events && (!(e.events = fopen(events, "w")) ||
                   tk_pc_flow_new(img, flow_event, e.events, &e.flow) != TK_OK)) {
        fprintf(stderr, "tracekit sim: cannot write %s\n", events);
        goto done;
    }
    if (bevents && (!(e.bevents = fopen(bevents, "w")) ||
                    tk_pc_flow_new(img, flow_event, e.bevents, &e.blind) != TK_OK)) {
        fprintf(stderr, "tracekit sim: cannot write %s\n", bevents);
        goto done;
    }
    if (accesses && !(e.acc = fopen(accesses, "w"))) {
        fprintf(stderr, "tracekit sim: cannot write %s\n", accesses);
        goto done;
    }
    /* data trace needs the hart model to report loads, stores and CSR accesses */
    tk_sim_set_mem_trace(sim, o.format == FMT_NIBBLE && (o.np.emit & TK_NIB_DATA_MASK));
    tk_sim_set_retire(sim, sim_retire, &e);
    tk_sim_result res;
    st = tk_sim_run(sim, max, &res, &diag);
    if (st != TK_OK && st != TK_END) {
        fprintf(stderr, "tracekit sim: %s: %s\n", tk_strerror(st), diag.message);
        rc = (st == TK_ERR_UNSUPPORTED || st == TK_ERR_TRAP) ? 3 : 2;
        goto done;
    }
    fflush(stdout);
    if ((st = enc_finish(&e, true, tk_sim_get_pc(sim, (unsigned)hart))) != TK_OK ||
        (e.flow && (st = tk_pc_flow_finish(e.flow)) != TK_OK) ||
        (e.blind && (st = tk_pc_flow_finish(e.blind)) != TK_OK) ||
        (st = enc_write(&e, out, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    if (res.exited)
        fprintf(stderr, "exit code %lld\n", (long long)res.exit_code);
    fprintf(stderr, "%" PRIu64 " instructions executed (%" PRIu64 " retired)\n", res.instructions,
            e.retired);
    enc_report(&e, e.retired);
    rc = 0;
done:
    if (e.pcs && fclose(e.pcs) != 0)
        rc = 2;
    if (e.events && fclose(e.events) != 0)
        rc = 2;
    if (e.bevents && fclose(e.bevents) != 0)
        rc = 2;
    if (e.acc && fclose(e.acc) != 0)
        rc = 2;
    enc_free(&e);
    tk_sim_free(sim);
    tk_image_free(img);
    return rc;
}

/* ---- encode (spike CSV) ---- */

static void encode_usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit encode --trace-format nibble|rle [options] IN.spike_csv -o OUT\n"
            "\n"
            "Encode an execution given as a spike CSV (VALID,ADDRESS,INSN,PRIVILEGE,...; plain\n"
            "or .gz) as a nibble or run-length trace.\n"
            "  --rv32               the CSV is an RV32 execution\n"
            "  --stats              print the size of the trace to stderr\n"
            "%s",
            LEGACY_OPTIONS);
}

int tk_legacy_cmd_encode(int argc, char **argv)
{
    lopts o;
    lopts_init(&o);
    const char *in = NULL, *out = NULL;
    bool rv32 = false, stats = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = lopt(&o, a, v);
        if (k < 0) {
            fprintf(stderr, "tracekit encode: bad value for %s\n", a);
            return 2;
        }
        if (k) {
            i += k - 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            encode_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--rv32")) {
            rv32 = true;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (!strcmp(a, "-o") && v) {
            out = v;
            i++;
        } else if (a[0] != '-' && !in) {
            in = a;
        } else {
            fprintf(stderr, "tracekit encode: unknown option %s\n", a);
            encode_usage(stderr);
            return 2;
        }
    }
    if (!in || !out || o.format == FMT_ETRACE) {
        encode_usage(stderr);
        return 2;
    }
    const unsigned xlen = rv32 ? 32 : 64;
    tk_diag diag;
    tk_diag_clear(&diag);
    enc e;
    memset(&e, 0, sizeof(e));
    tk_spike_reader *sr = NULL;
    int rc = 2;
    tk_status st = enc_new(&e, &o, xlen, -1, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit encode: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    if ((st = tk_spike_open(in, &sr, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit encode: %s: %s\n", in, diag.message);
        goto done;
    }
    tk_spike_row prev, row;
    bool have_prev = false;
    uint64_t rows = 0;
    while ((st = tk_spike_next(sr, &row, &diag)) == TK_OK) {
        if (have_prev) {
            tk_hart_retire r;
            tk_legacy_retire_from_spike(&prev, true, row.address, xlen, &r);
            if ((st = enc_push(&e, &r, 1)) != TK_OK)
                break;
        }
        prev = row;
        have_prev = true;
        rows++;
    }
    if (st != TK_END) {
        fprintf(stderr, "tracekit encode: %s: %s\n", in,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    st = TK_OK;
    if (have_prev) {
        tk_hart_retire r;
        tk_legacy_retire_from_spike(&prev, false, 0, xlen, &r);
        st = enc_push(&e, &r, 1);
    }
    if (st == TK_OK)
        st = enc_finish(&e, false, 0);
    if (st == TK_OK)
        st = enc_write(&e, out, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit encode: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    if (stats) {
        fprintf(stderr, "%" PRIu64 " rows\n", rows);
        enc_report(&e, rows);
    }
    rc = 0;
done:
    tk_spike_close(sr);
    enc_free(&e);
    return rc;
}

/* ---- decode ---- */

typedef struct dec {
    tk_event_fn sink_fn;
    void *sink;
    FILE *out;
    bool blind_pcs; /* print PCs without the program: 4-byte instructions */
    uint64_t ninsn, errors;
    const char *input;
    FILE *acc;
} dec;

static tk_status dec_event(void *ctx, const tk_event *ev)
{
    dec *c = ctx;
    if (ev->kind == TK_EV_RANGE)
        c->ninsn += ev->ninsn;
    if (ev->kind == TK_EV_ERROR && c->errors++ < 20)
        fprintf(stderr, "tracekit decode: %s: offset %" PRIu64 ": %s\n", c->input, ev->byte_offset,
                ev->message ? ev->message : tk_strerror(ev->status));
    if (c->blind_pcs && ev->kind == TK_EV_RANGE) {
        for (uint64_t i = 0, a = ev->first; i < ev->ninsn; i++, a += 4)
            if (fprintf(c->out, "%" PRIx64 "\n", a) < 0)
                return TK_ERR_IO;
        return TK_OK;
    }
    return c->sink_fn ? c->sink_fn(c->sink, ev) : TK_OK;
}

static tk_status dec_access(void *ctx, const tk_access *a)
{
    dec *c = ctx;
    if (!c->acc)
        return TK_OK;
    int r = fprintf(c->acc, "%s", a->kind == TK_ACC_LOAD ? "load" : "store");
    if (r >= 0 && (a->flags & TK_ACC_HAVE_ADDR))
        r = fprintf(c->acc, " addr %" PRIx64, a->addr);
    if (r >= 0 && (a->flags & TK_ACC_HAVE_DATA))
        r = fprintf(c->acc, " data %" PRIx64, a->data);
    if (r >= 0)
        r = fprintf(c->acc, "\n");
    return r < 0 ? TK_ERR_IO : TK_OK;
}

static void decode_usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit decode --trace-format nibble|rle [--elf PROG.elf] IN [-o OUT]\n"
            "                       [--format pcs|listing|count|events] [--accesses FILE]\n"
            "\n"
            "Reconstruct the executed instructions from a nibble trace (the options are in its\n"
            "header) or a run-length trace. A nibble trace with PC values only decodes without\n"
            "the program: exact address ranges (--format events), and PCs for code without\n"
            "the C extension. A wrapped nibble buffer decodes from its next sync point.\n"
            "  --format KIND   pcs (default), listing, count, events (one line per range/trap)\n"
            "  --accesses FILE the data accesses of a nibble data trace, one per line\n"
            "  --stats         print counts to standard error\n");
}

int tk_legacy_cmd_decode(int argc, char **argv)
{
    lopts o;
    lopts_init(&o);
    const char *in = NULL, *elf = NULL, *outpath = NULL, *format = "pcs", *accpath = NULL;
    bool stats = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = lopt(&o, a, v);
        if (k < 0) {
            fprintf(stderr, "tracekit decode: bad value for %s\n", a);
            return 2;
        }
        if (k) {
            i += k - 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            decode_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--stats")) {
            stats = true;
        } else if (a[0] != '-' && !in) {
            in = a;
        } else if (v && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
            outpath = v;
            i++;
        } else if (v && !strcmp(a, "--elf")) {
            elf = v;
            i++;
        } else if (v && !strcmp(a, "--format")) {
            format = v;
            i++;
        } else if (v && !strcmp(a, "--accesses")) {
            accpath = v;
            i++;
        } else {
            fprintf(stderr, "tracekit decode: unknown option %s\n", a);
            decode_usage(stderr);
            return 2;
        }
    }
    const bool want_pcs = !strcmp(format, "pcs"), want_listing = !strcmp(format, "listing"),
               want_events = !strcmp(format, "events"), want_count = !strcmp(format, "count");
    if (!in || o.format == FMT_ETRACE || !(want_pcs || want_listing || want_events || want_count)) {
        decode_usage(stderr);
        return 2;
    }
    int rc = 2;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_image *img = NULL;
    tk_pc_list *pcs = NULL;
    tk_listing *lst = NULL;
    tk_block_batcher *bat = NULL;
    tk_nibble_trace t;
    memset(&t, 0, sizeof(t));
    tk_nibble_decoder *nd = NULL;
    tk_rle_pair *pairs = NULL;
    size_t npairs = 0;
    tk_rle_params rp;
    dec c;
    memset(&c, 0, sizeof(c));
    c.input = in;
    tk_status st;
    if (o.format == FMT_NIBBLE)
        st = tk_nibble_read_file(in, &t, &diag);
    else
        st = tk_rle_read_file(in, &rp, &pairs, &npairs, &diag);
    /* a cut file: say so, decode what it holds, and end with status 1 */
    const bool cut = st == TK_ERR_TRUNCATED && (t.nwords || npairs);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        if (!cut)
            goto done;
    }
    const bool need_elf = o.format == FMT_RLE || (t.params.emit & TK_NIB_BRANCH) || want_listing ||
                          (want_pcs && t.params.compressed);
    if (need_elf && !elf) {
        fprintf(stderr, "tracekit decode: %s needs --elf (%s)\n", in,
                o.format == FMT_RLE               ? "run lengths count instructions of the program"
                : (t.params.emit & TK_NIB_BRANCH) ? "branch trace follows the program"
                                                  : "instruction lengths of compressed code");
        goto done;
    }
    if (elf && (st = tk_image_open_elf(elf, &img, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    c.out = stdout;
    if (outpath && strcmp(outpath, "-") && !(c.out = fopen(outpath, "w"))) {
        fprintf(stderr, "tracekit decode: %s: cannot create\n", outpath);
        c.out = NULL;
        goto done;
    }
    if (accpath && !(c.acc = fopen(accpath, "w"))) {
        fprintf(stderr, "tracekit decode: %s: cannot create\n", accpath);
        goto done;
    }
    if (want_pcs && img) {
        if ((st = tk_pc_list_new(img, c.out, &pcs)) != TK_OK)
            goto fail;
        c.sink_fn = tk_pc_list_event;
        c.sink = pcs;
    } else if (want_pcs) {
        c.blind_pcs = true;
    } else if (want_listing) {
        if ((st = tk_listing_new(img, c.out, 0, &lst)) != TK_OK)
            goto fail;
        c.sink_fn = tk_listing_event;
        c.sink = lst;
    } else if (want_events) {
        c.sink_fn = flow_event;
        c.sink = c.out;
    }
    /* The printers keep the text of whole blocks (TK_EV_BLOCKS): ranges that are one whole
     * block of the program reach them batched. */
    if (img && (pcs || lst)) {
        if ((st = tk_block_batcher_new(img, c.sink_fn, c.sink, &bat)) != TK_OK)
            goto fail;
        c.sink_fn = tk_block_batcher_event;
        c.sink = bat;
    }
    uint64_t nins = 0;
    if (o.format == FMT_NIBBLE) {
        if ((st = tk_nibble_decoder_new(&t.params, img, dec_event, &c, dec_access, &c, &nd)) !=
            TK_OK)
            goto fail;
        st = tk_nibble_decoder_run(nd, &t);
        tk_nibble_decoder_stats ds;
        tk_nibble_decoder_get_stats(nd, &ds);
        nins = ds.instructions;
        if (stats)
            fprintf(stderr,
                    "tracekit decode: %" PRIu64 " sequences from nibble %" PRIu64 "%s, %" PRIu64
                    " instructions, %" PRIu64 " traps, %" PRIu64 " accesses, %" PRIu64
                    " resyncs, %" PRIu64 " errors\n",
                    ds.sequences, ds.start_nibble, t.wrapped ? " (wrapped buffer)" : "", nins,
                    ds.traps, ds.accesses, ds.resyncs, ds.errors);
    } else {
        st = tk_rle_decode(&rp, img, pairs, npairs, dec_event, &c, &nins);
        if (stats)
            fprintf(stderr,
                    "tracekit decode: %zu pairs, %" PRIu64 " instructions, %" PRIu64 " errors\n",
                    npairs, nins, c.errors);
    }
    if (st == TK_OK && bat)
        st = tk_block_batcher_flush(bat);
    if (st == TK_OK && pcs)
        st = tk_pc_list_flush(pcs);
    if (st == TK_OK && lst)
        st = tk_listing_flush(lst);
    if (st != TK_OK)
        goto fail;
    if (want_count)
        printf("%" PRIu64 "\n", nins);
    rc = c.errors || cut ? 1 : 0;
    goto done;
fail:
    fprintf(stderr, "tracekit decode: %s: %s\n", in, tk_strerror(st));
    rc = 1;
done:
    if (c.out && c.out != stdout && fclose(c.out) != 0)
        rc = rc ? rc : 1;
    if (c.acc && fclose(c.acc) != 0)
        rc = rc ? rc : 1;
    tk_block_batcher_free(bat);
    tk_pc_list_free(pcs);
    tk_listing_free(lst);
    tk_nibble_decoder_free(nd);
    tk_nibble_trace_free(&t);
    free(pairs);
    tk_image_free(img);
    return rc;
}

/* ---- dump ---- */

static const char *const HEADER_NAMES[16] = {
    "Nop",       "PC",         "BranchTaken", "BranchNotTaken", "TraceEnabled", "TraceDisabled",
    "Privilege", "ChangeHart", "LoadAddr",    "StoreAddr",      "LoadData",     "StoreData",
    "Timestamp", "Reserved",   "TrapCause",   "Custom"};

typedef struct dump_ctx {
    FILE *out;
    bool nops;
    uint64_t base; /* ring start nibble */
    uint64_t ring;
} dump_ctx;

/* v in hex with at least width digits (zeros in front: "%0*" PRIx64); q needs width + 24
 * bytes of room. */
static char *put_hex_width(char *q, uint64_t v, unsigned width)
{
    const unsigned n = v ? (unsigned)(67 - __builtin_clzll(v)) / 4 : 1;
    if (n < width) {
        memset(q, '0', width - n);
        q += width - n;
    }
    return tk_put_hex(q, v);
}

static tk_status dump_seq(void *ctx, const tk_nibble_seq *s)
{
    dump_ctx *d = ctx;
    if (s->header == TK_NIB_H_NOP && !d->nops)
        return TK_OK;
    const uint64_t at = d->ring ? (d->base + s->offset) % d->ring : s->offset;
    /* a line of a few fields, made by hand and written at once (fprintf's parsing of its
     * format was most of a listing's time) */
    char line[384]; /* (nnibbles < 256) */
    char *q = put_hex_width(line, at, 8);
    *q++ = s->sync_point ? '*' : ' ';
    *q++ = ' ';
    const char *name = HEADER_NAMES[s->header & 15];
    const size_t nlen = strlen(name);
    memcpy(q, name, nlen);
    q += nlen;
    if (s->header == TK_NIB_H_PRIV) {
        q += snprintf(q, 64, " interrupt=%u prv=%u ie=%u", (unsigned)s->arg >> 3,
                      ((unsigned)s->arg >> 1) & 3u, s->arg & 1u);
    } else if (s->header == TK_NIB_H_TRACE_ON) {
        q += snprintf(q, 64, " version=%u", (unsigned)s->arg);
    } else if (s->nnibbles) {
        *q++ = ' ';
        q = put_hex_width(q, s->raw, s->nnibbles);
        memcpy(q, " (", 2);
        q = tk_put_dec(q + 2, s->nnibbles);
        memcpy(q, " nibbles)", 9);
        q += 9;
    }
    *q++ = '\n';
    const size_t len = (size_t)(q - line);
    return fwrite_unlocked(line, 1, len, d->out) == len ? TK_OK : TK_ERR_IO;
}

int tk_legacy_cmd_dump(int argc, char **argv)
{
    lopts o;
    lopts_init(&o);
    const char *in = NULL;
    bool nops = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int k = lopt(&o, a, v);
        if (k < 0) {
            fprintf(stderr, "tracekit dump: bad value for %s\n", a);
            return 2;
        }
        if (k) {
            i += k - 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("usage: tracekit dump --trace-format nibble|rle [--nops] IN\n"
                   "One sequence (nibble: nibble offset, * at a sync point, header, value) or\n"
                   "one pair (rle: index, TRACEADDR, TRACERUN) per line.\n");
            return 0;
        } else if (!strcmp(a, "--nops")) {
            nops = true;
        } else if (a[0] != '-' && !in) {
            in = a;
        } else {
            fprintf(stderr, "tracekit dump: unknown option %s\n", a);
            return 2;
        }
    }
    if (!in || o.format == FMT_ETRACE) {
        fprintf(stderr, "usage: tracekit dump --trace-format nibble|rle [--nops] IN\n");
        return 2;
    }
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st;
    if (o.format == FMT_RLE) {
        tk_rle_params rp;
        tk_rle_pair *pairs;
        size_t n;
        if ((st = tk_rle_read_file(in, &rp, &pairs, &n, &diag)) != TK_OK) {
            fprintf(stderr, "tracekit dump: %s\n", diag.message);
            if (st != TK_ERR_TRUNCATED || !n) {
                free(pairs);
                return 1;
            }
        }
        printf("# %zu pairs, TRACEADDR %u bits, TRACERUN %u bits\n", n, rp.xlen - 1, rp.run_bits);
        for (size_t i = 0; i < n; i++) {
            /* "%zu addr %" PRIx64 " run %u\n", by hand (as dump_seq) */
            char line[96];
            char *q = tk_put_dec(line, i);
            memcpy(q, " addr ", 6);
            q = tk_put_hex(q + 6, pairs[i].addr);
            memcpy(q, " run ", 5);
            q = tk_put_dec(q + 5, pairs[i].run);
            *q++ = '\n';
            fwrite_unlocked(line, 1, (size_t)(q - line), stdout);
        }
        free(pairs);
        return st == TK_OK ? 0 : 1;
    }
    tk_nibble_trace t;
    if ((st = tk_nibble_read_file(in, &t, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit dump: %s\n", diag.message);
        if (st != TK_ERR_TRUNCATED || !t.nwords) {
            tk_nibble_trace_free(&t);
            return 1;
        }
    }
    const tk_status read_st = st;
    printf("# xlen %u, %s PCs, emit 0x%02x, buffer %u words (sync every %u nibbles), %" PRIu64
           " nibbles written%s\n",
           t.params.xlen, t.params.compressed ? "compressed" : "4-byte", t.params.emit,
           t.params.buffer_words, t.params.buffer_words, t.total_nibbles,
           t.wrapped ? ", wrapped" : "");
    dump_ctx d = {.out = stdout, .nops = nops};
    if (t.wrapped) {
        d.ring = 8ull * t.params.buffer_words;
        const uint64_t wp = t.total_nibbles % d.ring;
        d.base = (wp + t.params.buffer_words - 1) / t.params.buffer_words * t.params.buffer_words %
                 d.ring;
    }
    st = tk_nibble_scan(&t, dump_seq, &d, &diag);
    tk_nibble_trace_free(&t);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit dump: %s: %s\n", in,
                diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    return read_st == TK_OK ? 0 : 1;
}
