/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit encode: ingress (reference .encoder_input or spike CSV) -> te_inst packets in the
 * reference raw framing (one header byte (2<<5)|length, then the payload), optionally also
 * the reference .te_inst CSV. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "legacy_cmds.h"
#include "encap_option.h"
#include "tracekit/encap.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_filter.h"
#include "tracekit/te_ingress.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static void encode_usage(FILE *out)
{
    fprintf(
        out,
        "usage: tracekit encode --scf S.scf --ucf U.ucf [options] IN -o OUT.te_inst_raw\n"
        "\n"
        "Run the E-Trace encoder on an ingress file and write te_inst packets.\n"
        "\n"
        "  --scf FILE          static parameters (*_p)\n"
        "  --ucf FILE          run-time options ([codec] resync-max, full-address, ...)\n"
        "  --input-format F    encoder-input (reference .encoder_input CSV, default) or\n"
        "                      spike-csv (converted on the fly, like post-iss)\n"
        "  --reference-quirks  byte-identical to the reference encoder_model.py (default)\n"
        "  --spec-faithful     2.0 behaviour where the reference deviates (docs/encoder.md)\n"
        "  --rv32              spike-csv input: decode instructions as RV32\n"
        "  --retire N          group the single-retirement input into blocks of up to N\n"
        "                      instructions (multiple retirement); --blocks B per cycle\n"
        "  --csv FILE          also write the packets as the reference .te_inst CSV\n"
        "  --regs FILE         Trace Control Interface registers (name=value: trTeControl,\n"
        "                      trTeInstFeatures, filters and comparators, discovery *_p): modes,\n"
        "                      sync interval and filtering as a chip would run them; implies\n"
        "                      --spec-faithful unless --reference-quirks is given; with\n"
        "                      trTeSrcBits set the packets are encapsulated (as --encap)\n"
        "  --trace-format F    etrace (default), nibble or rle (docs/formats.md)\n"
        "  --spec VERSION      packet layout: 2.0 (default), 0.29, 0.26 (0.026's separate\n"
        "                      te_support messages are not written)\n"
        "  --encap LAYOUT      write the general packet encapsulation instead of the raw\n"
        "                      framing: srcid-bits=N,timestamp-bytes=N[,type-bits=N]\n"
        "                      (no timestamps are written; docs/encapsulation.md)\n"
        "  --srcid N           with --encap: the packets' source ID (default 0)\n"
        "  --encap-sync N      with --encap: a synchronisation sequence before every Nth\n"
        "                      packet (the first included), as a funnel inserts them\n"
        "  --stats             print instructions, packets, bytes and speed to stderr\n"
        "  -o FILE             raw packet output\n"
        "\n"
        "examples:\n"
        "  tracekit encode --scf itype3_basic/towers.scf --ucf itype3_basic/towers.encoder.ucf \\\n"
        "      itype3_basic/towers.encoder_input.gz -o towers.te_inst_raw --csv towers.te_inst\n"
        "  tracekit encode --scf hw.scf --ucf run.ucf --input-format spike-csv \\\n"
        "      towers.spike_pc_trace.gz -o towers.te_inst_raw --stats\n");
}

/* Packets are framed straight into an output buffer (header (2 << 5) | length, then the
 * payload: tracekit/encap.h) and written in large pieces: one fwrite per ~64 KiB instead of
 * two stdio calls per packet. */
enum { SINK_BUF = 1 << 16 };

typedef struct sink {
    const tk_te_params *p;
    tk_te_layout layout; /* field widths derived once (tk_te_packet_encode_layout) */
    FILE *raw, *csv;
    uint64_t packets, bytes;
    const char *raw_path, *csv_path;
    uint8_t *out; /* SINK_BUF bytes */
    size_t olen;
    const tk_cli_encap *encap; /* --encap: the general encapsulation instead of raw framing */
    unsigned long sync_every;  /* --encap-sync: a sync sequence before every Nth packet */
    char err[256];
} sink;

static tk_status sink_flush(sink *s)
{
    if (s->olen && fwrite(s->out, 1, s->olen, s->raw) != s->olen) {
        snprintf(s->err, sizeof(s->err), "%s: write error", s->raw_path);
        return TK_ERR_IO;
    }
    s->olen = 0;
    return TK_OK;
}

/* The payload at payload[0..len) (in the output buffer, past olen) wrapped in the general
 * encapsulation at olen, after a sync sequence when one is due. The payload is copied first:
 * the wrapped packet overlaps where it lies. */
static tk_status encap_packet(sink *s, const uint8_t *payload, size_t len)
{
    uint8_t copy[TK_TE_MAX_PAYLOAD];
    memcpy(copy, payload, len);
    size_t sync = 0;
    if (s->sync_every && s->packets % s->sync_every == 0)
        sync = tk_encap_write_sync(&s->encap->cfg, s->out + s->olen, SINK_BUF - s->olen);
    s->olen += sync;
    const tk_encap_fields f = {.flow = TK_ENCAP_FLOW_TE_INST, .srcid = s->encap->srcid};
    size_t wr = 0;
    tk_status st =
        tk_encap_write(&s->encap->cfg, &f, copy, len, s->out + s->olen, SINK_BUF - s->olen, &wr);
    if (st != TK_OK) {
        snprintf(s->err, sizeof(s->err), "packet %llu: cannot encapsulate: %s",
                 (unsigned long long)s->packets, tk_strerror(st));
        return st;
    }
    s->olen += wr;
    s->bytes += sync + wr - 1 - len; /* the header and payload are counted by the caller */
    return TK_OK;
}

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    sink *s = ctx;
    size_t len = 0;
    tk_status st;
    /* 0.026's support packet was a separate te_support message, not a te_inst */
    if (s->p->spec == TK_TE_SPEC_0_26 && pkt->format == TK_TE_F3 &&
        pkt->subformat == TK_TE_SF_SUPPORT)
        return TK_OK;
    /* room for a header and a packet as long as the codec allows (cap TK_TE_MAX_PAYLOAD, as
     * with tk_te_packet_encode: the same errors; the scratch bytes stay within it) */
    if (s->olen + 1 + TK_TE_MAX_PAYLOAD > SINK_BUF && (st = sink_flush(s)) != TK_OK)
        return st;
    if (s->encap && s->olen + 2 * TK_ENCAP_MAX_PACKET + TK_TE_MAX_PAYLOAD > SINK_BUF &&
        (st = sink_flush(s)) != TK_OK)
        return st;
    uint8_t *hdr = s->out + s->olen;
    st = tk_te_packet_encode_layout(&s->layout, pkt, hdr + 1, TK_TE_MAX_PAYLOAD, &len);
    if (st != TK_OK) {
        snprintf(s->err, sizeof(s->err), "packet %llu: %s", (unsigned long long)s->packets,
                 tk_strerror(st));
        return st;
    }
    if (len == 0 || len > TK_ENCAP_MAX_LENGTH) {
        snprintf(s->err, sizeof(s->err), "%s: packet too long for the raw framing", s->raw_path);
        return TK_ERR_INVALID;
    }
    if (s->encap) {
        if ((st = encap_packet(s, hdr + 1, len)) != TK_OK)
            return st;
    } else {
        hdr[0] = (uint8_t)(TK_ENCAP_FLOW_TE_INST << 5 | len);
        s->olen += 1 + len;
    }
    if (s->csv && tk_te_csv_write(s->csv, s->p, pkt) != TK_OK) {
        snprintf(s->err, sizeof(s->err), "%s: write error", s->csv_path);
        return TK_ERR_IO;
    }
    s->packets++;
    s->bytes += len + 1;
    return TK_OK;
}

/* Where single-instruction blocks come from. */
typedef struct source {
    tk_te_ingress_reader *ingress;
    tk_spike_reader *spike;
    tk_spike_conv *conv;
    bool conv_done;
    const char *path;
    tk_te_filter *filter; /* --regs filters: qualification before the encoder */
    bool filter_done;
} source;

static tk_status source_read(source *src, tk_te_block *b);

/* TK_OK with a block, TK_END, or an error already printed. The filter holds one block back
 * (it sets the trace-on/off triggers of the encoder). */
static tk_status source_next(source *src, tk_te_block *b)
{
    if (!src->filter)
        return source_read(src, b);
    for (;;) {
        if (src->filter_done)
            return TK_END;
        tk_te_block in;
        size_t n = 0;
        tk_status st = source_read(src, &in);
        if (st == TK_END) {
            src->filter_done = true;
            st = tk_te_filter_finish(src->filter, b, &n);
            return st == TK_OK && n ? TK_OK : st == TK_OK ? TK_END : st;
        }
        if (st != TK_OK)
            return st;
        if ((st = tk_te_filter_push(src->filter, &in, b, &n)) != TK_OK || n)
            return st;
    }
}

static tk_status source_read(source *src, tk_te_block *b)
{
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st;
    if (src->ingress) {
        st = tk_te_ingress_next(src->ingress, b, &diag);
        if (st < 0)
            fprintf(stderr, "tracekit encode: %s\n", diag.message);
        return st;
    }
    for (;;) {
        bool ready = false;
        tk_spike_row row;
        /* blocks the converter held back (an interrupted branch waiting for its outcome) */
        tk_spike_conv_next(src->conv, b, &ready);
        if (ready)
            return TK_OK;
        if (src->conv_done)
            return TK_END;
        st = tk_spike_next(src->spike, &row, &diag);
        if (st == TK_END) {
            src->conv_done = true;
            st = tk_spike_conv_finish(src->conv, b, &ready, &diag);
        } else if (st == TK_OK) {
            st = tk_spike_conv_push(src->conv, &row, b, &ready, &diag);
        } else {
            fprintf(stderr, "tracekit encode: %s\n", diag.message);
            return st;
        }
        if (st != TK_OK) {
            fprintf(stderr, "tracekit encode: %s:%llu: %s\n", src->path,
                    (unsigned long long)tk_spike_line(src->spike), diag.message);
            return st;
        }
        if (ready)
            return TK_OK;
    }
}

static uint64_t source_line(const source *src)
{
    return src->ingress ? tk_te_ingress_line(src->ingress) : tk_spike_line(src->spike);
}

/* Blocks are read into a buffer and pushed as runs (tk_te_encoder_push_run: the packets of
 * one push per block, at a fraction of the cost). A cycle of several blocks (--blocks) is
 * pushed on its own, after the run before it. */
enum { RUN_BLOCKS = 1024 };

typedef struct runner {
    tk_te_encoder *enc;
    tk_te_block *buf; /* RUN_BLOCKS + room for one cycle of --blocks */
    size_t n;
    uint64_t first_line; /* input line before the first buffered block (for messages) */
} runner;

static tk_status runner_flush(runner *r, const source *src)
{
    tk_status st = r->n ? tk_te_encoder_push_run(r->enc, r->buf, r->n) : TK_OK;
    if (st == TK_OK) {
        r->n = 0;
        r->first_line = source_line(src);
    }
    return st;
}

static int run(const tk_te_params *p, const tk_te_encoder_options *eo, source *src, unsigned retire,
               unsigned blocks, sink *sk, uint64_t *ninsn)
{
    tk_te_grouper *grp = NULL;
    runner r = {.buf = malloc((RUN_BLOCKS + blocks) * sizeof(tk_te_block))};
    int rc = 1;
    if (!r.buf) {
        fprintf(stderr, "tracekit encode: out of memory\n");
        return 1;
    }
    if (tk_te_encoder_new_opts(p, eo, on_packet, sk, &r.enc) != TK_OK) {
        fprintf(stderr, "tracekit encode: parameters not usable by the encoder\n");
        goto done;
    }
    if ((retire > 1 || blocks > 1) && tk_te_grouper_new(retire, blocks, &grp) != TK_OK) {
        fprintf(stderr, "tracekit encode: out of memory\n");
        goto done;
    }
    tk_status st = TK_OK;
    size_t n;
    uint64_t count = 0;
    tk_te_block b;
    while (st == TK_OK) {
        if (r.n >= RUN_BLOCKS && (st = runner_flush(&r, src)) != TK_OK)
            break;
        tk_te_block *slot = &r.buf[r.n];
        if ((st = source_next(src, grp ? &b : slot)) != TK_OK)
            break;
        if (!grp) {
            count += slot->iretire != 0;
            r.n++;
            continue;
        }
        count += b.iretire != 0;
        /* the grouper writes the cycle after the buffered blocks (room for --blocks) */
        if ((st = tk_te_grouper_push(grp, &b, slot, &n)) != TK_OK || n == 0)
            continue;
        if (n == 1) {
            r.n++;
        } else {
            const size_t at = r.n; /* the cycle, after the run before it */
            if ((st = runner_flush(&r, src)) == TK_OK)
                st = tk_te_encoder_push(r.enc, r.buf + at, n);
        }
    }
    *ninsn = count;
    if (st == TK_END) {
        st = runner_flush(&r, src);
        if (st == TK_OK && grp && tk_te_grouper_finish(grp, r.buf, &n) == TK_OK && n)
            st = tk_te_encoder_push(r.enc, r.buf, n);
        if (st == TK_OK)
            st = tk_te_encoder_finish(r.enc);
    }
    if (st == TK_OK) {
        rc = 0;
    } else if (st == TK_ERR_INVALID || sk->err[0]) {
        /* the run in which it happened: its blocks before the failing one were encoded */
        const uint64_t a = r.first_line + 1, z = source_line(src);
        char lines[64];
        if (z > a)
            snprintf(lines, sizeof(lines), "lines %llu-%llu", (unsigned long long)a,
                     (unsigned long long)z);
        else
            snprintf(lines, sizeof(lines), "line %llu", (unsigned long long)z);
        if (sk->err[0])
            fprintf(stderr, "tracekit encode: %s (input %s)\n", sk->err, lines);
        else
            fprintf(stderr,
                    "tracekit encode: %s: inconsistent block (iretire/ilastsize/itype) "
                    "in input %s\n",
                    src->path, lines);
    }
done:
    free(r.buf);
    tk_te_grouper_free(grp);
    tk_te_encoder_free(r.enc);
    return rc;
}

int tk_cmd_encode(int argc, char **argv)
{
    if (tk_legacy_wanted(argc, argv)) /* nibble / RLE trace (legacy_cmds.c) */
        return tk_legacy_cmd_encode(argc, argv);
    argc = tk_legacy_strip_etrace(argc, argv);
    static const struct option opts[] = {
        {"scf", required_argument, NULL, 's'},
        {"ucf", required_argument, NULL, 'u'},
        {"input-format", required_argument, NULL, 'i'},
        {"reference-quirks", no_argument, NULL, 'q'},
        {"spec-faithful", no_argument, NULL, 'f'},
        {"rv32", no_argument, NULL, 'r'},
        {"retire", required_argument, NULL, 'n'},
        {"blocks", required_argument, NULL, 'b'},
        {"csv", required_argument, NULL, 'c'},
        {"stats", no_argument, NULL, 'S'},
        {"regs", required_argument, NULL, 'R'},
        {"spec", required_argument, NULL, 'V'},
        {"output", required_argument, NULL, 'o'},
        {"encap", required_argument, NULL, 'E'},
        {"srcid", required_argument, NULL, 'I'},
        {"encap-sync", required_argument, NULL, 'Y'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *scf = NULL, *ucf = NULL, *outp = NULL, *csvp = NULL, *fmt = "encoder-input";
    const char *regs = NULL, *spec = NULL;
    bool quirks = true, quirks_given = false, rv32 = false, stats = false;
    unsigned retire = 1, blocks = 1;
    tk_cli_encap encap = {0};
    unsigned long sync_every = 0;
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
        case 'i':
            fmt = optarg;
            break;
        case 'q':
            quirks = true;
            quirks_given = true;
            break;
        case 'f':
            quirks = false;
            quirks_given = true;
            break;
        case 'R':
            regs = optarg;
            break;
        case 'V':
            spec = optarg;
            break;
        case 'r':
            rv32 = true;
            break;
        case 'n':
            retire = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'b':
            blocks = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'c':
            csvp = optarg;
            break;
        case 'S':
            stats = true;
            break;
        case 'o':
            outp = optarg;
            break;
        case 'E':
            if (tk_cli_encap_layout(&encap, "encode", optarg))
                return 2;
            break;
        case 'I':
            if (tk_cli_encap_srcid(&encap, "encode", optarg))
                return 2;
            break;
        case 'Y': {
            char *end = NULL;
            sync_every = strtoul(optarg, &end, 10);
            if (!end || *end || optarg[0] == '-') {
                fprintf(stderr, "tracekit encode: --encap-sync wants a packet count\n");
                return 2;
            }
            break;
        }
        case 'h':
            encode_usage(stdout);
            return 0;
        default:
            encode_usage(stderr);
            return 2;
        }
    }
    if ((!regs && (!scf || !ucf)) || !scf != !ucf || !outp || optind != argc - 1) {
        fprintf(stderr, "tracekit encode: need --scf and --ucf (or --regs), one input file and "
                        "-o OUTPUT\n");
        encode_usage(stderr);
        return 2;
    }
    bool spike = !strcmp(fmt, "spike-csv");
    if (!spike && strcmp(fmt, "encoder-input")) {
        fprintf(stderr, "tracekit encode: unknown --input-format '%s'\n", fmt);
        return 2;
    }
    if (retire < 1 || retire > 4096 || blocks < 1 || blocks > 64) {
        fprintf(stderr, "tracekit encode: --retire must be 1..4096 and --blocks 1..64\n");
        return 2;
    }
    const char *inp = argv[optind];
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_te_params p;
    tk_te_params_init(&p);
    tk_status st = TK_OK;
    if (spec && tk_te_spec_parse(spec, &p.spec) != TK_OK) {
        fprintf(stderr, "tracekit encode: unknown --spec '%s'\n", spec);
        return 2;
    }
    if (scf)
        st = tk_te_params_read_scf(&p, scf, &diag);
    if (st == TK_OK && ucf)
        st = tk_te_params_read_ucf(&p, ucf, NULL, &diag);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit encode: %s\n", diag.message[0] ? diag.message : tk_strerror(st));
        return 1;
    }
    /* the registers of a chip: options, sync interval, filters (tracekit/te_filter.h) */
    tk_te_hw_config hw;
    tk_te_hw_config_init(&hw, &p);
    if (regs) {
        if ((st = tk_te_regs_read(&hw, regs, &diag)) != TK_OK) {
            fprintf(stderr, "tracekit encode: %s: %s\n", regs,
                    diag.message[0] ? diag.message : tk_strerror(st));
            return 1;
        }
        p = hw.params;
        if (!quirks_given)
            quirks = false;
    }
    if (tk_cli_encap_from_regs(&encap, "encode", &hw))
        return 2;
    if (sync_every && !encap.on) {
        fprintf(stderr, "tracekit encode: --encap-sync needs --encap\n");
        return 2;
    }
    if ((st = tk_te_params_validate(&p, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit encode: %s\n", diag.message);
        return 1;
    }
    const bool filtering = hw.filter.inst_filters != 0 || !hw.filter.inst_tracing;
    source src = {.path = inp};
    if (spike) {
        tk_spike_conv_options co = {.reference_quirks = quirks, .rv32 = rv32 || p.o.use_rv32_isa};
        if (tk_spike_conv_new(&p, &co, &src.conv) != TK_OK) {
            fprintf(stderr, "tracekit encode: %s: itype_width_p must be 3 or 4\n", scf);
            return 1;
        }
        st = tk_spike_open(inp, &src.spike, &diag);
    } else {
        st = tk_te_ingress_open(inp, &src.ingress, &diag);
    }
    int rc = 1;
    sink sk = {.p = &p,
               .raw_path = outp,
               .csv_path = csvp,
               .encap = encap.on ? &encap : NULL,
               .sync_every = sync_every};
    tk_te_layout_init(&sk.layout, &p);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit encode: %s\n", diag.message);
        goto out;
    }
    sk.out = malloc(SINK_BUF);
    if (!sk.out) {
        fprintf(stderr, "tracekit encode: out of memory\n");
        goto out;
    }
    sk.raw = fopen(outp, "wb");
    if (!sk.raw) {
        fprintf(stderr, "tracekit encode: %s: cannot create\n", outp);
        goto out;
    }
    if (csvp) {
        sk.csv = fopen(csvp, "w");
        if (!sk.csv || tk_te_csv_write_header(sk.csv) != TK_OK) {
            fprintf(stderr, "tracekit encode: %s: cannot create\n", csvp);
            goto out;
        }
    }
    tk_te_encoder_options eo;
    tk_te_encoder_options_init(&eo);
    eo.reference_quirks = quirks;
    eo.irdepth_ones = quirks;
    eo.start_qualified = !filtering;
    uint64_t ninsn = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (filtering && tk_te_filter_new(&hw.filter, &src.filter) != TK_OK) {
        fprintf(stderr, "tracekit encode: %s: a filter names a missing comparator\n", regs);
        goto out;
    }
    rc = run(&p, &eo, &src, retire, blocks, &sk, &ninsn);
    /* the packets before a failure are written too, as they were before buffering */
    if (sink_flush(&sk) != TK_OK && rc == 0) {
        fprintf(stderr, "tracekit encode: %s\n", sk.err);
        rc = 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == 0 && stats) {
        double sec = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fprintf(stderr,
                "instructions %llu, packets %llu, bytes %llu, %.4f bits/instruction, "
                "%.1f M instructions/s\n",
                (unsigned long long)ninsn, (unsigned long long)sk.packets,
                (unsigned long long)sk.bytes,
                ninsn ? (double)(sk.bytes - sk.packets) * 8.0 / (double)ninsn : 0.0,
                sec > 0 ? (double)ninsn / sec / 1e6 : 0.0);
    }
out:
    if (sk.raw && fclose(sk.raw) != 0 && rc == 0) {
        fprintf(stderr, "tracekit encode: %s: write error\n", outp);
        rc = 1;
    }
    if (sk.csv && fclose(sk.csv) != 0 && rc == 0) {
        fprintf(stderr, "tracekit encode: %s: write error\n", csvp);
        rc = 1;
    }
    tk_te_ingress_close(src.ingress);
    tk_spike_close(src.spike);
    tk_spike_conv_free(src.conv);
    tk_te_filter_free(src.filter);
    free(sk.out);
    return rc;
}
