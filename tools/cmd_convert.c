/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit convert: spike CSV -> reference .encoder_input CSV, as post-iss does. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tracekit/te_ingress.h"
#include "tracekit/te_params.h"

static void convert_usage(FILE *out)
{
    fprintf(
        out,
        "usage: tracekit convert --scf S.scf [--ucf U.ucf] [--rv32] [--spec-faithful]\n"
        "                        IN.spike_pc_trace[.gz] -o OUT.encoder_input\n"
        "\n"
        "Turn a spike instruction trace (VALID,ADDRESS,INSN,PRIVILEGE,EXCEPTION,ECAUSE,TVAL,\n"
        "INTERRUPT) into the encoder's ingress CSV, one block per retired instruction.\n"
        "\n"
        "  --scf FILE        static parameters (itype_width_p, sijump_p, nocontext_p, notime_p)\n"
        "  --ucf FILE        run-time options; [flags] use-rv32-isa selects RV32 decoding\n"
        "  --rv32            decode instructions as RV32 (c.jal exists), like post-iss -r\n"
        "  --reference-quirks  reproduce post-iss byte for byte (default): xRET as itype\n"
        "                    14 (6), 8-bit cause/tval, missing .scf keys read as 0\n"
        "  --spec-faithful   2.0 ingress: xRET as itype 3, full cause and tval, sijump kept\n"
        "  -o FILE           output file ('-' for stdout)\n"
        "\n"
        "examples:\n"
        "  tracekit convert --scf itype4_basic/towers.scf towers.spike_pc_trace.gz \\\n"
        "      -o towers.encoder_input\n"
        "  tracekit convert --scf hw.scf --spec-faithful run.spike_pc_trace -o - | head\n");
}

int tk_cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = {
        {"scf", required_argument, NULL, 's'},     {"ucf", required_argument, NULL, 'u'},
        {"rv32", no_argument, NULL, 'r'},          {"reference-quirks", no_argument, NULL, 'q'},
        {"spec-faithful", no_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *scf = NULL, *ucf = NULL, *outp = NULL;
    bool rv32 = false, quirks = true;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            scf = optarg;
            break;
        case 'u':
            ucf = optarg;
            break;
        case 'r':
            rv32 = true;
            break;
        case 'q':
            quirks = true;
            break;
        case 'f':
            quirks = false;
            break;
        case 'o':
            outp = optarg;
            break;
        case 'h':
            convert_usage(stdout);
            return 0;
        default:
            convert_usage(stderr);
            return 2;
        }
    }
    if (!scf || !outp || optind != argc - 1) {
        fprintf(stderr, "tracekit convert: need --scf, one input file and -o OUTPUT\n");
        convert_usage(stderr);
        return 2;
    }
    const char *inp = argv[optind];
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_te_params p;
    tk_te_params_init(&p);
    if (quirks) /* post-iss reads missing keys as 0 */
        memset(&p.s, 0, sizeof(p.s));
    tk_status st = tk_te_params_read_scf(&p, scf, &diag);
    if (st == TK_OK && ucf)
        st = tk_te_params_read_ucf(&p, ucf, NULL, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit convert: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    tk_spike_conv_options co = {.reference_quirks = quirks, .rv32 = rv32 || p.o.use_rv32_isa};
    tk_spike_conv *conv = NULL;
    if (tk_spike_conv_new(&p, &co, &conv) != TK_OK) {
        fprintf(stderr, "tracekit convert: %s: itype_width_p must be 3 or 4 (is %u)\n", scf,
                p.s.itype_width);
        return 1;
    }
    tk_spike_reader *rd = NULL;
    st = tk_spike_open(inp, &rd, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit convert: %s\n", diag.message);
        tk_spike_conv_free(conv);
        return 1;
    }
    FILE *out = strcmp(outp, "-") ? fopen(outp, "w") : stdout;
    if (!out) {
        fprintf(stderr, "tracekit convert: %s: cannot create\n", outp);
        tk_spike_close(rd);
        tk_spike_conv_free(conv);
        return 1;
    }
    int rc = tk_te_ingress_write_header(out, &p) == TK_OK ? 0 : 1;
    tk_spike_row row;
    tk_te_block b;
    bool ready = false;
    while (rc == 0) {
        st = tk_spike_next(rd, &row, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            fprintf(stderr, "tracekit convert: %s\n", diag.message);
            rc = 1;
            break;
        }
        st = tk_spike_conv_push(conv, &row, &b, &ready, &diag);
        if (st != TK_OK) {
            fprintf(stderr, "tracekit convert: %s:%llu: %s\n", inp,
                    (unsigned long long)tk_spike_line(rd), diag.message);
            rc = 1;
            break;
        }
        /* with the blocks the converter held back, if any */
        for (; rc == 0 && ready; tk_spike_conv_next(conv, &b, &ready))
            if (tk_te_ingress_write_block(out, &p, &b) != TK_OK)
                rc = 1;
    }
    if (rc == 0) {
        st = tk_spike_conv_finish(conv, &b, &ready, &diag);
        if (st != TK_OK) {
            fprintf(stderr, "tracekit convert: %s:%llu: %s\n", inp,
                    (unsigned long long)tk_spike_line(rd), diag.message);
            rc = 1;
        }
        for (; rc == 0 && ready; tk_spike_conv_next(conv, &b, &ready))
            if (tk_te_ingress_write_block(out, &p, &b) != TK_OK)
                rc = 1;
    }
    bool werr = ferror(out) != 0;
    if (out != stdout && fclose(out) != 0)
        werr = true;
    if (werr) {
        fprintf(stderr, "tracekit convert: %s: write error\n", outp);
        rc = 1;
    }
    tk_spike_close(rd);
    tk_spike_conv_free(conv);
    return rc;
}
