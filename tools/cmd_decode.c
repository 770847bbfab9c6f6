/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit decode: te_inst packets (.te_inst_raw) plus the ELF in, the executed program flow
 * out (a PC list like the reference decoder's .decoder.trace, or a listing). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "legacy_cmds.h"
#include "tracekit/encap.h"
#include "tracekit/sink.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_filter.h"
#include "tracekit/te_params.h"

#define MAX_ERROR_LINES 20

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tracekit decode --scf S.scf --ucf U.ucf [--elf PROG.elf] IN.te_inst_raw\n"
            "       tracekit decode --regs REGS.txt --elf PROG.elf IN.te_inst_raw\n"
            "                       [-o OUT] [--format pcs|listing|count] [options]\n"
            "\n"
            "Reconstruct the executed instructions from E-Trace te_inst packets and the program.\n"
            "The input is the reference flow's raw packet file, or its .te_inst CSV (also\n"
            "gzipped) when the name ends in .te_inst or .te_inst.gz.\n"
            "\n"
            "  --scf FILE        static (hardware) parameters, the reference flow's .scf\n"
            "  --ucf FILE        run-time options, the reference flow's .ucf; its object-files\n"
            "                    names the ELF (relative to the .ucf) unless --elf is given\n"
            "  --regs FILE       the encoder's Trace Control Interface registers as read off the\n"
            "                    chip (name=value lines: trTeControl, trTeInstFeatures, ... and\n"
            "                    discovery parameters such as iaddress_width_p=64; mtvec= for\n"
            "                    implicit exceptions), instead of or on top of --scf/--ucf\n"
            "  --elf FILE        the traced program\n"
            "  -o, --output FILE output file (default: standard output)\n"
            "  --format KIND     pcs: one hex PC per line, as decoder_model.py writes it\n"
            "                    (default); listing: address, symbol and disassembly with\n"
            "                    events in brackets; count: only the number of instructions\n"
            "  --spec VERSION    packet layout: 2.0 (default), 0.29, 0.26\n"
            "  --no-bootrom      do not add spike's reset code at 0x1000 (added by default,\n"
            "                    as the reference decoder does, when the ELF has no code there)\n"
            "  --ecall-sequential  ecall/ebreak are not uninferable discontinuities (2025 text)\n"
            "  --stats           print packet and instruction counts to standard error\n"
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

typedef struct decode_ctx {
    const char *input;
    tk_event_fn sink_fn;
    void *sink;
    uint64_t ninsn;
    uint64_t errors;
    uint64_t mismatches; /* decoder errors saying trace and program disagree */
    bool csv;            /* byte offsets are line numbers of a .te_inst CSV */
} decode_ctx;

static void print_error(decode_ctx *c, uint64_t offset, uint64_t index, const char *msg)
{
    if (c->errors++ < MAX_ERROR_LINES)
        fprintf(stderr, "tracekit decode: %s: %s %" PRIu64 " (packet %" PRIu64 "): %s\n", c->input,
                c->csv ? "line" : "offset", offset, index, msg);
}

static tk_status on_event(void *ctx, const tk_event *ev)
{
    decode_ctx *c = ctx;
    if (ev->kind == TK_EV_RANGE) {
        c->ninsn += ev->ninsn;
    } else if (ev->kind == TK_EV_ERROR) {
        if (ev->status == TK_ERR_MISMATCH || ev->status == TK_ERR_NO_CODE ||
            ev->status == TK_ERR_BAD_INSN)
            c->mismatches++;
        print_error(c, ev->byte_offset, ev->packet_index,
                    ev->message ? ev->message : tk_strerror(ev->status));
    }
    return c->sink_fn ? c->sink_fn(c->sink, ev) : TK_OK;
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
        if ((s = tk_te_decoder_packet(d, &pkt, index + 2, index)) != TK_OK)
            return s;
    }
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

int tk_cmd_decode(int argc, char **argv)
{
    if (tk_legacy_wanted(argc, argv)) /* nibble / RLE trace (legacy_cmds.c) */
        return tk_legacy_cmd_decode(argc, argv);
    argc = tk_legacy_strip_etrace(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--snapshot"))
            return tk_cmd_decode_snapshot(argc, argv);

    enum {
        OPT_SCF = 256,
        OPT_UCF,
        OPT_ELF,
        OPT_FORMAT,
        OPT_SPEC,
        OPT_NOBOOT,
        OPT_ECALL,
        OPT_STATS,
        OPT_REGS
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
        {"regs", required_argument, NULL, OPT_REGS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *scf = NULL, *ucf = NULL, *elf = NULL, *outpath = NULL, *format = "pcs";
    const char *spec = NULL, *regs = NULL;
    bool bootrom = true, stats = false;
    unsigned flags = 0;
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
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
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind + 1 != argc || (!regs && (!scf || !ucf)) || (!scf != !ucf)) {
        fprintf(stderr, "tracekit decode: need --scf and --ucf, or --regs, and one input file\n");
        usage(stderr);
        return 2;
    }
    const bool want_pcs = !strcmp(format, "pcs"), want_listing = !strcmp(format, "listing");
    if (!want_pcs && !want_listing && strcmp(format, "count")) {
        fprintf(stderr, "tracekit decode: unknown --format '%s' (pcs, listing, count)\n", format);
        return 2;
    }
    const char *input = argv[optind];

    int rc = 2;
    tk_te_params p;
    tk_diag diag;
    tk_diag_clear(&diag);
    char *ucf_elf = NULL;
    tk_image *img = NULL;
    tk_te_decoder *d = NULL;
    tk_pc_list *pcs = NULL;
    tk_listing *lst = NULL;
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
    if ((s = tk_te_params_validate(&p, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit decode: %s\n", diag.message[0] ? diag.message : tk_strerror(s));
        goto done;
    }
    if (!elf)
        elf = ucf_elf;
    if (!elf) {
        fprintf(stderr, "tracekit decode: %s names no object-files: give --elf\n",
                ucf ? ucf : regs);
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
    if (!want_pcs && !want_listing) {
        out = NULL;
    } else if (!outpath || !strcmp(outpath, "-")) {
        out = stdout;
    } else if (!(out = fopen(outpath, "w"))) {
        fprintf(stderr, "tracekit decode: %s: cannot create\n", outpath);
        goto done;
    }

    decode_ctx c = {.input = input, .csv = csv_in};
    if (want_pcs) {
        if ((s = tk_pc_list_new(img, out, &pcs)) != TK_OK)
            goto fail;
        c.sink_fn = tk_pc_list_event;
        c.sink = pcs;
    } else if (want_listing) {
        if ((s = tk_listing_new(img, out, 0, &lst)) != TK_OK)
            goto fail;
        c.sink_fn = tk_listing_event;
        c.sink = lst;
    }
    if ((s = tk_te_decoder_new(&p, img, on_event, &c, &d)) != TK_OK)
        goto fail;
    tk_te_decoder_set_flags(d, flags);
    for (unsigned priv = 0; priv < 4; priv++)
        if ((hw.tvec_set >> priv) & 1u)
            tk_te_decoder_set_trap_vector(d, priv, hw.tvec[priv]);

    tk_te_decoder_stats st = {.size = sizeof(st)};
    tk_status run = csv ? run_csv(&c, &p, d, csv) : tk_te_decoder_run_raw(d, raw);
    s = tk_te_decoder_finish(d);
    if (run == TK_ERR_IO || run == TK_ERR_NOMEM)
        s = run; /* the sink failed (write error) */
    if (s == TK_OK && pcs)
        s = tk_pc_list_flush(pcs);
    if (s == TK_OK && lst)
        s = tk_listing_flush(lst);
    if (s != TK_OK)
        goto fail;
    tk_te_decoder_get_stats(d, &st);
    if (!want_pcs && !want_listing)
        printf("%" PRIu64 "\n", c.ninsn);
    if (stats)
        fprintf(stderr,
                "tracekit decode: %" PRIu64 " packets, %" PRIu64 " instructions, %" PRIu64
                " traps, %" PRIu64 " errors\n",
                st.packets, st.instructions, st.traps, c.errors);
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
    tk_pc_list_free(pcs);
    tk_listing_free(lst);
    tk_image_free(img);
    tk_te_raw_close(raw);
    tk_te_csv_close(csv);
    free(ucf_elf);
    return rc;
}
