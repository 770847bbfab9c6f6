/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit decode: te_inst packets (.te_inst_raw) plus the ELF in, the executed program flow
 * out (a PC list like the reference decoder's .decoder.trace, or a listing). */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "legacy_cmds.h"
#include "tracekit/count.h"
#include "encap_option.h"
#include "limit_option.h"
#include "tracekit/encap.h"
#include "tracekit/sink.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_filter.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"
#include "tracekit/te_parallel.h"

#define MAX_ERROR_LINES 20

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit decode --scf S.scf [--ucf U.ucf] [--elf PROG.elf] IN.te_inst_raw\n"
            "       tracekit decode --regs REGS.txt --elf PROG.elf IN.te_inst_raw\n"
            "                       [-o OUT] [--format pcs|listing|count] [options]\n"
            "       tracekit decode --snapshot DIR ...   (Arm CoreSight ETMv4/ETE snapshot)\n"
            "       tracekit decode --trace FILE ...     (CoreSight trace file; see\n"
            "                       'tracekit decode --snapshot --help' for both)\n"
            "\n"
            "Reconstruct the executed instructions from E-Trace te_inst packets and the program.\n"
            "\n"
            "  --scf FILE        static (hardware) parameters, the reference flow's .scf\n"
            "  --ucf FILE        run-time options, the reference flow's .ucf; its object-files\n"
            "                    names the ELF (relative to the .ucf) unless --elf is given.\n"
            "                    Without it, options start all off and the trace's support\n"
            "                    packets set them (then --elf is needed)\n"
            "  --regs FILE       the encoder's Trace Control Interface registers as read off the\n"
            "                    chip (name=value lines: trTeControl, trTeInstFeatures, ... and\n"
            "                    discovery parameters such as iaddress_width_p=64; mtvec= for\n"
            "                    implicit exceptions), instead of or on top of --scf/--ucf;\n"
            "                    a trTeSrcBits other than 0 means the packets are\n"
            "                    encapsulated with that srcID width, srcID trTeSrcID\n"
            "  --elf FILE        the traced program\n"
            "  -o, --output FILE output file (default: standard output)\n"
            "  --format KIND     pcs: one hex PC per line, as decoder_model.py writes it\n"
            "                    (default); listing: address, symbol and disassembly with\n"
            "                    events in brackets; count: totals only (instructions,\n"
            "                    branches, taken branches, other jumps, traps, packets)\n"
            "  -j, --jobs N      decode on N threads: the trace is cut at format 3 syncs and\n"
            "                    the pieces stitched so the output equals the serial decode\n"
            "  --piece-size B    with --jobs: trace bytes per piece (default 1 MiB, 64 KiB\n"
            "                    for pcs and listing, whose output is held per piece)\n"
            "  --spec VERSION    packet layout: 2.0 (default), 0.29, 0.26\n"
            "  --trace-format F  etrace (default), nibble or rle (docs/formats.md)\n"
            "  --no-bootrom      do not add spike's reset code at 0x1000 (added by default,\n"
            "                    as the reference decoder does, when the ELF has no code there)\n"
            "  --ecall-sequential  ecall/ebreak are not uninferable discontinuities (2025 text)\n"
            "  --fixed-options   the options of --ucf/--regs are the encoder's (the tool\n"
            "                    programmed them): a support packet announcing others is\n"
            "                    damaged, reported and not applied (without it, a trace's\n"
            "                    first support packet may change them)\n"
            "  --max-predicted N a branch-count packet (branch prediction mode) claiming more\n"
            "                    than N correctly predicted branches is an error at its offset,\n"
            "                    not followed: bounds the work of damaged or hostile trace\n"
            "                    (the format allows 2^32 + 30, minutes to follow). Default\n"
            "                    16777216 (a loop of 16 Mi iterations without another\n"
            "                    packet); 0: no limit\n" TK_CLI_ENCAP_HELP
            "  --stats           print packet and instruction counts (and, on one thread, the\n"
            "                    walks the decoder replayed from its memo) to standard error\n"
            "\n"
            "Errors (bad packet, truncated file, trace not matching the program) are printed as\n"
            "'tracekit decode: FILE: offset N (packet K): message'; decoding resumes at the\n"
            "next format 3 sync, everything decoded is written, and the exit status is 1.\n"
            "\n"
            "example:\n"
            "  d=shared/testdata/etrace-ref/dhrystone/itype3_basic\n"
            "  tracekit decode --scf $d/dhrystone.scf --ucf $d/dhrystone.decoder.ucf \\\n"
            "      $d/dhrystone.te_inst_raw -o dhrystone.decoder.trace\n");
}

/* Pooled piece sinks at most (the pieces in flight are at most 4 per thread). */
#define SINK_POOL_MAX 16

/* The sink of one piece of the trace (the whole trace when decoding serially): counts,
 * the chosen output, and the decoder's error messages. Serially everything goes straight
 * out; in parallel, output and messages are kept in memory until the piece's turn comes. */
typedef struct piece_sink {
    struct decode_ctx *c;
    tk_count count;
    uint64_t errors;
    uint64_t mismatches; /* decoder errors saying trace and program disagree */
    tk_pc_list *pcs;
    tk_listing *lst;
    FILE *mem; /* parallel: output kept here (mem_write) */
    char *membuf;
    size_t memlen, memcap;
    char *msgs; /* parallel: error lines kept here */
    size_t msglen, nmsgs;
} piece_sink;

typedef struct decode_ctx {
    const char *input;
    const char *elf;
    bool bootrom, rv32;
    bool want_pcs, want_listing;
    bool parallel;
    bool csv; /* byte offsets are line numbers of a .te_inst CSV */
    FILE *out;
    tk_te_raw *raw;
    tk_count count;
    uint64_t errors;
    uint64_t mismatches;
    /* Parallel: sinks of pieces already written out, for the next pieces (their output
     * buffers are paged in and their printers' per-block text is made: a fresh sink per
     * piece of 64 KiB spent more time in page faults than in decoding). */
    pthread_mutex_t pool_mu;
    struct piece_sink *pool[SINK_POOL_MAX];
    size_t npool;
} decode_ctx;

/* An error line, on the calling thread, within the overall limit. */
static void print_line(decode_ctx *c, const char *line)
{
    if (c->errors++ < MAX_ERROR_LINES)
        fputs(line, stderr);
}

static void print_error(decode_ctx *c, uint64_t offset, uint64_t index, const char *msg)
{
    char line[512];
    snprintf(line, sizeof(line),
             "tracekit decode: %s: offset %" PRIu64 " (packet %" PRIu64 "): %s\n", c->input, offset,
             index, msg);
    print_line(c, line);
}

/* Parallel: append an error line to the piece's messages (worker thread). */
static void keep_line(piece_sink *ps, const char *line)
{
    size_t n = strlen(line);
    char *m = realloc(ps->msgs, ps->msglen + n + 1);
    if (!m)
        return;
    memcpy(m + ps->msglen, line, n + 1);
    ps->msgs = m;
    ps->msglen += n;
    ps->nmsgs++;
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    piece_sink *ps = ctx;
    tk_count_event(&ps->count, ev);
    if (ev->kind == TK_EV_ERROR) {
        if (ev->status == TK_ERR_MISMATCH || ev->status == TK_ERR_NO_CODE ||
            ev->status == TK_ERR_BAD_INSN)
            ps->mismatches++;
        if (!ps->c->parallel) {
            print_error(ps->c, ev->byte_offset, ev->packet_index,
                        ev->message ? ev->message : tk_strerror(ev->status));
        } else {
            /* kept for the piece's turn: lines must come out in trace order */
            char line[512];
            snprintf(line, sizeof(line),
                     "tracekit decode: %s: offset %" PRIu64 " (packet %" PRIu64 "): %s\n",
                     ps->c->input, ev->byte_offset, ev->packet_index,
                     ev->message ? ev->message : tk_strerror(ev->status));
            keep_line(ps, line);
        }
    }
    if (ps->pcs)
        return tk_pc_list_event(ps->pcs, ev);
    if (ps->lst)
        return tk_listing_event(ps->lst, ev);
    return TK_OK;
}

/* fopencookie's write: append to the piece's buffer, which is kept when the sink is
 * pooled. */
static ssize_t mem_write(void *cookie, const char *buf, size_t n)
{
    piece_sink *ps = cookie;
    if (ps->memcap - ps->memlen < n) {
        size_t cap = ps->memcap ? ps->memcap : 1u << 16;
        while (cap - ps->memlen < n)
            cap *= 2;
        char *nb = realloc(ps->membuf, cap);
        if (!nb)
            return -1;
        ps->membuf = nb;
        ps->memcap = cap;
    }
    memcpy(ps->membuf + ps->memlen, buf, n);
    ps->memlen += n;
    return (ssize_t)n;
}

static void piece_free(piece_sink *ps)
{
    if (!ps)
        return;
    tk_pc_list_free(ps->pcs);
    tk_listing_free(ps->lst);
    if (ps->mem)
        fclose(ps->mem);
    free(ps->membuf);
    free(ps->msgs);
    free(ps);
}

static tk_status piece_new(decode_ctx *c, tk_image *img, piece_sink **out)
{
    piece_sink *ps = calloc(1, sizeof(*ps));
    if (!ps)
        return TK_ERR_NOMEM;
    ps->c = c;
    FILE *f = c->out;
    if (c->parallel && (c->want_pcs || c->want_listing)) {
        if (!(ps->mem = fopencookie(ps, "w", (cookie_io_functions_t){.write = mem_write}))) {
            free(ps);
            return TK_ERR_NOMEM;
        }
        f = ps->mem;
    }
    tk_status st = TK_OK;
    if (c->want_pcs)
        st = tk_pc_list_new(img, f, &ps->pcs);
    else if (c->want_listing)
        st = tk_listing_new(img, f, 0, &ps->lst);
    if (st != TK_OK) {
        piece_free(ps);
        return st;
    }
    *out = ps;
    return TK_OK;
}

/* Flush the piece's output and fold its counts into the totals. */
static tk_status piece_done(decode_ctx *c, piece_sink *ps)
{
    tk_status st = TK_OK;
    if (ps->pcs)
        st = tk_pc_list_flush(ps->pcs);
    else if (ps->lst)
        st = tk_listing_flush(ps->lst);
    if (st == TK_OK && ps->mem) {
        if (fflush(ps->mem) != 0)
            st = TK_ERR_NOMEM;
        else if (ps->memlen && fwrite(ps->membuf, 1, ps->memlen, c->out) != ps->memlen)
            st = TK_ERR_IO;
    }
    if (ps->msgs) {
        /* the lines were counted when kept: print within the overall limit */
        const char *line = ps->msgs;
        for (size_t i = 0; i < ps->nmsgs && *line; i++) {
            const char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
            if (c->errors++ < MAX_ERROR_LINES)
                fwrite(line, 1, n, stderr);
            line += n;
        }
    }
    tk_count_add(&c->count, &ps->count);
    c->mismatches += ps->mismatches;
    return st;
}

/* The reference .te_inst CSV (VERSIONS.md C.6), plain or gzipped: one packet per line. */
static tk_status run_csv(decode_ctx *c, const tk_te_params *p, tk_te_decoder *d,
                         tk_te_csv_reader *csv)
{
    for (uint64_t index = 0;; index++) {
        tk_te_packet pkt;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status s = tk_te_csv_next(csv, p, &pkt, &diag);
        if (s == TK_END)
            return TK_OK;
        if (s != TK_OK) {
            /* the reader's message names file and line; a CSV error ends the input */
            if (c->errors++ < MAX_ERROR_LINES)
                fprintf(stderr, "tracekit decode: %s\n", diag.message);
            return s;
        }
        c->count.packets++;
        if ((s = tk_te_decoder_packet(d, &pkt, index + 2, index)) != TK_OK)
            return s;
    }
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* ---- callbacks of the parallel decode ---- */

static tk_status open_image(decode_ctx *c, tk_image **out)
{
    tk_diag diag;
    tk_status s = tk_image_open_elf(c->elf, out, &diag);
    if (s == TK_OK && c->bootrom && (s = tk_te_add_spike_reset_code(*out, c->rv32)) != TK_OK) {
        tk_image_free(*out);
        *out = NULL;
    }
    return s;
}

static tk_status par_open_image(void *ctx, tk_image **out)
{
    return open_image(ctx, out);
}

static tk_status par_sink_new(void *ctx, tk_image *img, tk_event_fn *fn, void **sink)
{
    decode_ctx *c = ctx;
    piece_sink *ps = NULL;
    tk_status st = TK_OK;
    pthread_mutex_lock(&c->pool_mu);
    if (c->npool)
        ps = c->pool[--c->npool];
    pthread_mutex_unlock(&c->pool_mu);
    /* (a pooled sink's printer reads the code through the image of the worker that made
     * it: images are safe to read from several threads, and all hold the same code) */
    if (!ps)
        st = piece_new(ctx, img, &ps);
    *fn = on_event;
    *sink = ps;
    return st;
}

/* The piece's output is written out (or dropped): empty the sink and pool it for another
 * piece. */
static void piece_recycle(decode_ctx *c, piece_sink *ps)
{
    if (!ps->mem || fflush(ps->mem) != 0) {
        piece_free(ps);
        return;
    }
    ps->count = (tk_count){0};
    ps->errors = ps->mismatches = 0;
    free(ps->msgs);
    ps->msgs = NULL;
    ps->msglen = ps->nmsgs = 0;
    ps->memlen = 0;
    pthread_mutex_lock(&c->pool_mu);
    if (c->npool < SINK_POOL_MAX) {
        c->pool[c->npool++] = ps;
        ps = NULL;
    }
    pthread_mutex_unlock(&c->pool_mu);
    piece_free(ps);
}

static tk_status par_sink_done(void *ctx, void *sink)
{
    tk_status st = piece_done(ctx, sink);
    if (st == TK_OK)
        piece_recycle(ctx, sink);
    else
        piece_free(sink);
    return st;
}

static void par_sink_drop(void *ctx, void *sink)
{
    piece_sink *ps = sink;
    /* what it printed goes nowhere: out of the printer's buffer (piece_recycle empties the
     * piece's own) */
    const tk_status st = ps->pcs   ? tk_pc_list_flush(ps->pcs)
                         : ps->lst ? tk_listing_flush(ps->lst)
                                   : TK_OK;
    if (st != TK_OK)
        piece_free(ps);
    else
        piece_recycle(ctx, ps);
}

static void par_release(void *ctx, uint64_t offset)
{
    tk_te_raw_release(((decode_ctx *)ctx)->raw, offset);
}

int tk_cmd_decode(int argc, char **argv)
{
    if (tk_cs_cli_wanted(argc, argv)) /* CoreSight: --snapshot or --trace (cmd_coresight.c) */
        return tk_cmd_decode_snapshot(argc, argv);
    if (tk_legacy_wanted(argc, argv)) /* nibble / RLE trace (legacy_cmds.c) */
        return tk_legacy_cmd_decode(argc, argv);
    argc = tk_legacy_strip_etrace(argc, argv);

    enum {
        OPT_SCF = 256,
        OPT_UCF,
        OPT_ELF,
        OPT_FORMAT,
        OPT_SPEC,
        OPT_NOBOOT,
        OPT_ECALL,
        OPT_STATS,
        OPT_PIECE,
        OPT_REGS,
        OPT_FIXED,
        OPT_MAXPRED,
        OPT_ENCAP,
        OPT_SRCID,
    };
    static const struct option opts[] = {
        {"scf", required_argument, NULL, OPT_SCF},
        {"ucf", required_argument, NULL, OPT_UCF},
        {"elf", required_argument, NULL, OPT_ELF},
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"spec", required_argument, NULL, OPT_SPEC},
        {"no-bootrom", no_argument, NULL, OPT_NOBOOT},
        {"ecall-sequential", no_argument, NULL, OPT_ECALL},
        {"stats", no_argument, NULL, OPT_STATS},
        {"jobs", required_argument, NULL, 'j'},
        {"piece-size", required_argument, NULL, OPT_PIECE},
        {"regs", required_argument, NULL, OPT_REGS},
        {"fixed-options", no_argument, NULL, OPT_FIXED},
        {"max-predicted", required_argument, NULL, OPT_MAXPRED},
        {"encap", required_argument, NULL, OPT_ENCAP},
        {"srcid", required_argument, NULL, OPT_SRCID},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *scf = NULL, *ucf = NULL, *elf = NULL, *outpath = NULL, *format = "pcs";
    const char *spec = NULL, *regs = NULL;
    bool bootrom = true, stats = false;
    unsigned flags = 0;
    unsigned long jobs = 1;
    unsigned long long piece = 0;
    uint64_t max_predicted = 0; /* 0: not given (the decoder's default) */
    tk_cli_encap encap = {0};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:hj:", opts, NULL)) != -1) {
        switch (ch) {
        case OPT_SCF:
            scf = optarg;
            break;
        case OPT_UCF:
            ucf = optarg;
            break;
        case OPT_ELF:
            elf = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case OPT_FORMAT:
            format = optarg;
            break;
        case OPT_SPEC:
            spec = optarg;
            break;
        case OPT_NOBOOT:
            bootrom = false;
            break;
        case OPT_ECALL:
            flags |= TK_TE_DEC_ECALL_SEQUENTIAL;
            break;
        case OPT_STATS:
            stats = true;
            break;
        case OPT_REGS:
            regs = optarg;
            break;
        case OPT_FIXED:
            flags |= TK_TE_DEC_FIXED_OPTIONS;
            break;
        case OPT_MAXPRED:
            if (!tk_cli_max_predicted("decode", optarg, &max_predicted))
                return 2;
            break;
        case OPT_ENCAP:
            if (tk_cli_encap_layout(&encap, "decode", optarg))
                return 2;
            break;
        case OPT_SRCID:
            if (tk_cli_encap_srcid(&encap, "decode", optarg))
                return 2;
            break;
        case OPT_PIECE: {
            char *end = NULL;
            piece = strtoull(optarg, &end, 10);
            if (!end || *end || piece < 1) {
                fprintf(stderr, "tracekit decode: --piece-size wants a byte count\n");
                return 2;
            }
            break;
        }
        case 'j': {
            char *end = NULL;
            jobs = strtoul(optarg, &end, 10);
            if (!end || *end || jobs < 1 || jobs > 256) {
                fprintf(stderr, "tracekit decode: --jobs wants a number from 1 to 256\n");
                return 2;
            }
            break;
        }
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if ((flags & TK_TE_DEC_FIXED_OPTIONS) && !ucf && !regs) {
        fprintf(stderr, "tracekit decode: --fixed-options needs the options, from --ucf or "
                        "--regs\n");
        return 2;
    }
    if (optind + 1 != argc || (!regs && !scf) || (ucf && !scf)) {
        fprintf(stderr, "tracekit decode: need --scf (and --ucf or --elf), or --regs, and one "
                        "input file\n");
        usage(stderr);
        return 2;
    }
    const bool want_pcs = !strcmp(format, "pcs"), want_listing = !strcmp(format, "listing");
    if (!want_pcs && !want_listing && strcmp(format, "count")) {
        fprintf(stderr, "tracekit decode: unknown --format '%s' (pcs, listing, count)\n", format);
        return 2;
    }
    const char *input = argv[optind];
    /* every format takes whole blocks in batches (the count sink sums them, the PC list and
     * the listing print the text they keep for each block), so the decoder replays the walks
     * it has seen from its memo */
    flags |= TK_TE_DEC_BLOCK_EVENTS;

    int rc = 2;
    tk_te_params p;
    tk_diag diag;
    tk_diag_clear(&diag);
    char *ucf_elf = NULL;
    tk_image *img = NULL;
    tk_te_decoder *d = NULL;
    piece_sink *ps = NULL;
    FILE *out = NULL;
    tk_te_raw *raw = NULL;
    tk_te_csv_reader *csv = NULL;
    tk_status s;

    tk_te_params_init(&p);
    if (spec && tk_te_spec_parse(spec, &p.spec) != TK_OK) {
        fprintf(stderr, "tracekit decode: unknown --spec '%s'\n", spec);
        goto done;
    }
    if ((scf && (s = tk_te_params_read_scf(&p, scf, &diag)) != TK_OK) ||
        (ucf && (s = tk_te_params_read_ucf(&p, ucf, &ucf_elf, &diag)) != TK_OK)) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    tk_te_hw_config hw;
    tk_te_hw_config_init(&hw, &p);
    if (regs && (s = tk_te_regs_read(&hw, regs, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s: %s\n", regs,
                diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    p = hw.params;
    if (tk_cli_encap_from_regs(&encap, "decode", &hw))
        goto done;
    if ((s = tk_te_params_validate(&p, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    if (!elf)
        elf = ucf_elf;
    if (!elf) {
        if (ucf || regs)
            fprintf(stderr, "tracekit decode: %s names no object-files: give --elf\n",
                    ucf ? ucf : regs);
        else
            fprintf(stderr, "tracekit decode: without --ucf, give the program with --elf\n");
        goto done;
    }
    if ((s = tk_image_open_elf(elf, &img, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    if (bootrom && (s = tk_te_add_spike_reset_code(img, p.o.use_rv32_isa ||
                                                            tk_image_xlen(img) == 32)) != TK_OK) {
        fprintf(stderr, "tracekit decode: cannot add the reset code: %s\n", tk_strerror(s));
        goto done;
    }
    const bool csv_in = ends_with(input, ".te_inst") || ends_with(input, ".te_inst.gz");
    if (csv_in && (s = tk_te_csv_open(input, &csv, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    if (!csv_in && (s = tk_te_raw_open(input, &raw, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    if (csv_in && encap.on) {
        fprintf(stderr, "tracekit decode: %s: a .te_inst CSV has no encapsulation\n", input);
        goto done;
    }
    if (csv_in)
        jobs = 1; /* a CSV is read line by line: no cutting */
    if (encap.on && jobs > 1) {
        /* the cutter finds syncs by the raw framing's headers */
        fprintf(stderr, "tracekit decode: --jobs with --encap: decoding on one thread\n");
        jobs = 1;
    }
    if (!outpath || !strcmp(outpath, "-")) {
        out = stdout;
    } else if (!(out = fopen(outpath, "w"))) {
        fprintf(stderr, "tracekit decode: %s: cannot create\n", outpath);
        goto done;
    }

    decode_ctx c = {.input = input,
                    .elf = elf,
                    .bootrom = bootrom,
                    .rv32 = p.o.use_rv32_isa || tk_image_xlen(img) == 32,
                    .want_pcs = want_pcs,
                    .want_listing = want_listing,
                    .parallel = jobs > 1,
                    .csv = csv_in,
                    .out = out,
                    .raw = raw};
    tk_status run;
    uint64_t packets;
    uint64_t walks_replayed = 0, chunks_replayed = 0; /* serial decodes with block events */
    if (jobs > 1) {
        tk_te_par_config cfg = {.size = sizeof(cfg),
                                .jobs = (unsigned)jobs,
                                /* listing and PC output is kept per piece: smaller pieces */
                                .piece_bytes = piece                      ? (size_t)piece
                                               : want_pcs || want_listing ? 64u << 10
                                                                          : 1u << 20,
                                .flags = flags,
                                .max_predicted = max_predicted,
                                .tvec_set = hw.tvec_set,
                                .ctx = &c,
                                .open_image = par_open_image,
                                .sink_new = par_sink_new,
                                .sink_done = par_sink_done,
                                .sink_drop = par_sink_drop,
                                .release = par_release};
        memcpy(cfg.tvec, hw.tvec, sizeof(cfg.tvec));
        tk_te_par_stats pst = {.size = sizeof(pst)};
        pthread_mutex_init(&c.pool_mu, NULL);
        s = tk_te_decode_parallel(&p, tk_te_raw_data(raw), (size_t)tk_te_raw_size(raw), &cfg, &pst,
                                  &run);
        while (c.npool)
            piece_free(c.pool[--c.npool]);
        pthread_mutex_destroy(&c.pool_mu);
        if (s != TK_OK)
            goto fail;
        packets = pst.packets;
        if (stats)
            fprintf(stderr,
                    "tracekit decode: %" PRIu64 " pieces on %lu threads, %" PRIu64
                    " stitched, %" PRIu64 " decoded again serially\n",
                    pst.pieces, jobs, pst.stitched, pst.redecoded);
    } else {
        if ((s = piece_new(&c, img, &ps)) != TK_OK)
            goto fail;
        if ((s = tk_te_decoder_new(&p, img, on_event, ps, &d)) != TK_OK)
            goto fail;
        tk_te_decoder_set_flags(d, flags);
        if (max_predicted)
            tk_te_decoder_set_max_predicted(d, max_predicted);
        for (unsigned priv = 0; priv < 4; priv++)
            if ((hw.tvec_set >> priv) & 1u)
                tk_te_decoder_set_trap_vector(d, priv, hw.tvec[priv]);
        tk_te_encap_stats est = {.size = sizeof(est)};
        if (csv) {
            run = run_csv(&c, &p, d, csv);
        } else if (encap.on) {
            run = tk_te_decoder_run_encap(d, raw, &encap.cfg, encap.srcid, &est);
            if (tk_cli_encap_report(&encap, "decode", input, &est) && run == TK_OK)
                run = TK_ERR_NO_SYNC;
        } else {
            run = tk_te_decoder_run_raw(d, raw);
        }
        tk_te_decoder_stats dst = {.size = sizeof(dst)};
        tk_te_decoder_get_stats(d, &dst);
        packets = csv ? c.count.packets : dst.packets;
        walks_replayed = dst.walks_replayed;
        chunks_replayed = dst.chunks_replayed;
        if (encap.on && stats)
            fprintf(stderr,
                    "tracekit decode: srcID %u: %" PRIu64 " te_inst packets, %" PRIu64
                    " packets of other sources or types skipped, %" PRIu64 " damaged\n",
                    (unsigned)encap.srcid, est.packets, est.other_packets, est.damaged);
        s = tk_te_decoder_finish(d);
        if (run == TK_ERR_IO || run == TK_ERR_NOMEM)
            s = run; /* the sink failed (write error) */
        if (s == TK_OK)
            s = piece_done(&c, ps);
        if (s != TK_OK)
            goto fail;
    }
    c.count.packets = packets;
    if (!want_pcs && !want_listing && tk_count_write(&c.count, out) != TK_OK) {
        s = TK_ERR_IO;
        goto fail;
    }
    if (stats)
        fprintf(stderr,
                "tracekit decode: %" PRIu64 " packets, %" PRIu64 " instructions, %" PRIu64
                " traps, %" PRIu64 " errors\n",
                packets, c.count.instructions, c.count.traps, c.errors);
    if (stats && (walks_replayed || chunks_replayed))
        fprintf(stderr,
                "tracekit decode: %" PRIu64 " walks and %" PRIu64
                " chunks of walks replayed from the walk memo\n",
                walks_replayed, chunks_replayed);
    if (c.errors > MAX_ERROR_LINES)
        fprintf(stderr, "tracekit decode: %s: %" PRIu64 " errors in all\n", input, c.errors);
    if (c.mismatches)
        fprintf(stderr,
                "tracekit decode: %s: %" PRIu64 " places where the trace does not fit %s: "
                "is it the traced program, and are the .scf/.ucf the encoder's?\n",
                input, c.mismatches, elf);
    rc = (run != TK_OK || c.errors) ? 1 : 0;
    goto done;

fail:
    fprintf(stderr, "tracekit decode: %s: %s\n", input, tk_strerror(s));
    rc = 1;
done:
    if (out && out != stdout && fclose(out) != 0 && rc == 0) {
        fprintf(stderr, "tracekit decode: %s: write failed\n", outpath);
        rc = 1;
    }
    tk_te_decoder_free(d);
    piece_free(ps);
    tk_image_free(img);
    tk_te_raw_close(raw);
    tk_te_csv_close(csv);
    free(ucf_elf);
    return rc;
}
