/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit sim: run a RISC-V ELF on the hart model, print its console output, exit code,
 * instruction count and time; optionally write its PC list, spike CSV, .encoder_input, or
 * encode its trace in-process to a .te_inst_raw file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "legacy_cmds.h"
#include "tracekit/hart.h"
#include "tracekit/image.h"
#include "tracekit/te_encoder.h"
#include "tracekit/te_filter.h"
#include "tracekit/te_ingress.h"
#include "tracekit/te_packet.h"
#include "tracekit/encap.h"
#include "util/compiler.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: tracekit sim PROG.elf [options]\n"
        "\n"
        "Runs a RISC-V ELF (RV32/RV64 IMAFDC, M/S/U) on the hart model. Console output of\n"
        "the program (HTIF, UART) goes to stdout; exit code, instructions and time to\n"
        "stderr. The exit status is the program's exit code (mod 256), 2 for usage or\n"
        "file errors, 3 when the program did something the model does not support.\n"
        "\n"
        "options:\n"
        "  --max-insns N        stop after N executed instructions\n"
        "  --pcs OUT            write the executed PCs, one hex address per line\n"
        "  --spike-csv OUT      write the spike CSV (VALID,ADDRESS,INSN,...)\n"
        "  --encoder-input OUT  write the reference .encoder_input CSV (single retirement)\n"
        "  --encode             encode the trace in-process (needs -o)\n"
        "  --scf FILE --ucf FILE  encoder parameters (default: reference template)\n"
        "  --regs FILE          the encoder's Trace Control Interface registers (modes, sync,\n"
        "                       filters; name=value lines, docs/modes.md); implies\n"
        "                       --spec-faithful\n"
        "  -o OUT.te_inst_raw   packets in the reference raw format\n"
        "  --retires N          retire up to N instructions per cycle (with --encode)\n"
        "  --taken T            at most T blocks (taken branches/jumps) per cycle\n"
        "  --harts N            number of harts (default 1); --hart H traces hart H\n"
        "  --no-clint           no CLINT (reading the time CSR then traps, as on QEMU -M none)\n"
        "  --quiet              do not echo the program's console output\n"
        "  --trace-format F     with --encode: etrace (default), nibble or rle (docs/formats.md)\n"
        "\n"
        "examples:\n"
        "  tracekit sim coremark.riscv --max-insns 1000000 --pcs coremark.pcs\n"
        "  tracekit sim dhrystone.riscv --encode --scf hw.scf --ucf run.ucf -o d.te_inst_raw\n");
}

struct sink {
    FILE *pcs, *spike, *ingress, *raw;
    const tk_te_params *params;
    tk_hart_blocks *blocks;
    tk_te_encoder *enc;
    tk_te_filter *filter; /* --regs filters, in front of the encoder */
    int hart;
    bool retired_only;
    uint64_t packets, bytes;
    char buf[1 << 16];
    size_t blen;
    /* blocks waiting for the encoder, pushed as runs (tk_te_encoder_push_run: the packets of
     * one push per cycle, at a fraction of the cost) */
    tk_te_block run[1024];
    size_t nrun;
    tk_te_layout layout; /* field widths derived once (tk_te_packet_encode_layout) */
};

static tk_status run_flush(struct sink *k)
{
    tk_status st = k->nrun ? tk_te_encoder_push_run(k->enc, k->run, k->nrun) : TK_OK;
    k->nrun = 0;
    return st;
}

/* One cycle's blocks to the encoder. The encoder takes a cycle's blocks one after the other,
 * so cycles of several blocks join the run as well (same packets, tests/encoder/test_golden). */
static tk_status encode_cycle(struct sink *k, const tk_te_block *b, size_t n)
{
    tk_status st = TK_OK;
    for (size_t i = 0; i < n && st == TK_OK; i++) {
        k->run[k->nrun++] = b[i];
        if (k->nrun == sizeof(k->run) / sizeof(k->run[0]))
            st = run_flush(k);
    }
    return st;
}

static void con(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    fwrite(data, 1, len, stdout);
}

static tk_status write_pcs(struct sink *k, const tk_hart_retire *r, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        char tmp[17];
        int j = 16;
        uint64_t v = r[i].pc;
        if (k->hart >= 0 && r[i].hart != (unsigned)k->hart)
            continue;
        if (k->retired_only && !(r[i].flags & TK_HART_F_RETIRED))
            continue;
        if (k->blen + 18 > sizeof(k->buf)) {
            if (fwrite(k->buf, 1, k->blen, k->pcs) != k->blen)
                return TK_ERR_IO;
            k->blen = 0;
        }
        do {
            tmp[--j] = hex[v & 15];
            v >>= 4;
        } while (v);
        memcpy(k->buf + k->blen, tmp + j, (size_t)(16 - j));
        k->blen += (size_t)(16 - j);
        k->buf[k->blen++] = '\n';
    }
    return TK_OK;
}

static tk_status on_retire(void *ctx, const tk_hart_retire *r, size_t n)
{
    struct sink *k = ctx;
    tk_status st = TK_OK;
    if (k->pcs && (st = write_pcs(k, r, n)) != TK_OK)
        return st;
    if (k->spike)
        for (size_t i = 0; i < n; i++) {
            tk_spike_row row;
            if (k->hart >= 0 && r[i].hart != (unsigned)k->hart)
                continue;
            tk_hart_retire_to_spike(&r[i], &row);
            if ((st = tk_spike_write_row(k->spike, &row)) != TK_OK)
                return st;
        }
    if (k->blocks)
        st = tk_hart_blocks_push(k->blocks, r, n);
    return st;
}

/* Blocks for .encoder_input output or through filters; not inlined, so that the common
 * case in on_blocks needs no stack frame. */
TK_NOINLINE static tk_status on_blocks_general(struct sink *k, const tk_te_block *b, size_t n)
{
    tk_status st = TK_OK;
    if (k->ingress)
        for (size_t i = 0; i < n && st == TK_OK; i++)
            st = tk_te_ingress_write_block(k->ingress, k->params, &b[i]);
    if (st == TK_OK && k->enc && k->filter) {
        /* single retirement: one instruction per block, qualified by the filters */
        for (size_t i = 0; i < n && st == TK_OK; i++) {
            tk_te_block f;
            size_t nf;
            st = tk_te_filter_push(k->filter, &b[i], &f, &nf);
            if (st == TK_OK && nf)
                st = encode_cycle(k, &f, 1);
        }
    } else if (st == TK_OK && k->enc) {
        st = encode_cycle(k, b, n);
    }
    return st;
}

static tk_status on_blocks(void *ctx, const tk_te_block *b, size_t n)
{
    struct sink *k = ctx;
    /* the common case: the blocks of many cycles (tk_hart_blocks_options.batch), straight to
     * the encoder as one run */
    if (k->enc && !k->ingress && !k->filter) {
        tk_status st = run_flush(k);
        return st == TK_OK ? tk_te_encoder_push_run(k->enc, b, n) : st;
    }
    return on_blocks_general(k, b, n);
}

static tk_status on_packet(void *ctx, const tk_te_packet *pkt)
{
    struct sink *k = ctx;
    uint8_t buf[TK_TE_MAX_PAYLOAD];
    size_t len = 0;
    tk_status st = tk_te_packet_encode_layout(&k->layout, pkt, buf, sizeof(buf), &len);
    if (st != TK_OK)
        return st;
    k->packets++;
    k->bytes += len + 1;
    return tk_te_raw_write(k->raw, 2, buf, len);
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tracekit sim: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 0);
    return s[0] && !*end && errno == 0;
}

int tk_cmd_sim(int argc, char **argv)
{
    if (tk_legacy_wanted(argc, argv)) /* nibble / RLE trace (legacy_cmds.c) */
        return tk_legacy_cmd_sim(argc, argv);
    argc = tk_legacy_strip_etrace(argc, argv);
    const char *elf = NULL, *pcs = NULL, *spike = NULL, *ingress = NULL, *scf = NULL, *ucf = NULL,
               *out = NULL, *regs = NULL;
    tk_te_hw_config hw;
    uint64_t max = 0, retires = 1, taken = 1, nharts = 1, hart = 0;
    bool encode = false, quiet = false, clint = true, retired_only = false, faithful = false,
         mis_trap = false;
    tk_image *img = NULL;
    tk_sim *sim = NULL;
    tk_sim_config cfg;
    tk_te_params params;
    tk_hart_blocks_options bo;
    tk_sim_result res;
    tk_diag diag;
    struct sink *k = calloc(1, sizeof(*k));
    struct timespec t0, t1;
    tk_status st;
    int rc = 2;
    double secs;

    if (!k)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(k);
            return 0;
        } else if (!strcmp(a, "--encode")) {
            encode = true;
            continue;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        } else if (!strcmp(a, "--retired-only")) {
            retired_only = true;
            continue;
        } else if (!strcmp(a, "--spec-faithful")) {
            faithful = true;
            continue;
        } else if (!strcmp(a, "--misaligned-trap")) {
            mis_trap = true;
            continue;
        } else if (!strcmp(a, "--no-clint")) {
            clint = false;
            continue;
        } else if (a[0] != '-') {
            if (elf) {
                fprintf(stderr, "tracekit sim: more than one program: %s\n", a);
                goto done;
            }
            elf = a;
            continue;
        }
        if (!v) {
            fprintf(stderr, "tracekit sim: %s needs a value\n", a);
            goto done;
        }
        i++;
        if (!strcmp(a, "--max-insns"))
            ok = parse_u64(v, &max);
        else if (!strcmp(a, "--pcs"))
            pcs = v;
        else if (!strcmp(a, "--spike-csv"))
            spike = v;
        else if (!strcmp(a, "--encoder-input"))
            ingress = v;
        else if (!strcmp(a, "--scf"))
            scf = v;
        else if (!strcmp(a, "--ucf"))
            ucf = v;
        else if (!strcmp(a, "--regs"))
            regs = v;
        else if (!strcmp(a, "-o"))
            out = v;
        else if (!strcmp(a, "--retires"))
            ok = parse_u64(v, &retires) && retires >= 1 && retires <= 64;
        else if (!strcmp(a, "--taken"))
            ok = parse_u64(v, &taken) && taken >= 1 && taken <= 64;
        else if (!strcmp(a, "--harts"))
            ok = parse_u64(v, &nharts) && nharts >= 1 && nharts <= 64;
        else if (!strcmp(a, "--hart"))
            ok = parse_u64(v, &hart) && hart < 64;
        else {
            fprintf(stderr, "tracekit sim: unknown option %s\n", a);
            usage(stderr);
            goto done;
        }
        if (!ok) {
            fprintf(stderr, "tracekit sim: bad value for %s: %s\n", a, v);
            goto done;
        }
    }
    if (!elf) {
        usage(stderr);
        goto done;
    }
    if (encode != (out != NULL)) {
        fprintf(stderr, "tracekit sim: --encode and -o go together\n");
        goto done;
    }
    if (hart >= nharts) {
        fprintf(stderr, "tracekit sim: --hart %llu but only %llu harts\n", (unsigned long long)hart,
                (unsigned long long)nharts);
        goto done;
    }
    if (ingress && (retires > 1 || taken > 1)) {
        fprintf(stderr, "tracekit sim: the .encoder_input format holds single retirement only\n");
        goto done;
    }

    tk_diag_clear(&diag);
    tk_te_params_init(&params);
    if (scf && (st = tk_te_params_read_scf(&params, scf, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", scf, diag.message);
        goto done;
    }
    if (ucf && (st = tk_te_params_read_ucf(&params, ucf, NULL, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", ucf, diag.message);
        goto done;
    }
    tk_te_hw_config_init(&hw, &params);
    if (regs) {
        if ((st = tk_te_regs_read(&hw, regs, &diag)) != TK_OK) {
            fprintf(stderr, "tracekit sim: %s: %s\n", regs, diag.message);
            goto done;
        }
        params = hw.params;
        faithful = true;
    }
    const bool filtering = hw.filter.inst_filters != 0 || !hw.filter.inst_tracing;
    if (filtering && (retires > 1 || taken > 1)) {
        fprintf(stderr, "tracekit sim: filters need single retirement (no --retires/--taken)\n");
        goto done;
    }
    if ((st = tk_image_open_elf(elf, &img, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", elf,
                diag.message[0] ? diag.message : tk_strerror(st));
        goto done;
    }
    tk_sim_config_init(&cfg);
    cfg.xlen = tk_image_xlen(img);
    cfg.nharts = (unsigned)nharts;
    cfg.clint = clint;
    cfg.misaligned_trap = mis_trap;
    if ((st = tk_sim_new(&cfg, &sim)) != TK_OK) {
        fprintf(stderr, "tracekit sim: cannot create the hart model: %s\n", tk_strerror(st));
        goto done;
    }
    if ((st = tk_sim_load_image(sim, img, &diag)) != TK_OK) {
        fprintf(stderr, "tracekit sim: %s: %s\n", elf, diag.message);
        goto done;
    }
    if (!quiet)
        tk_sim_set_console(sim, con, NULL);

    k->params = &params;
    tk_te_layout_init(&k->layout, &params);
    k->hart = nharts > 1 ? (int)hart : -1;
    k->retired_only = retired_only;
    if ((pcs && !(k->pcs = open_out(pcs))) || (spike && !(k->spike = open_out(spike))) ||
        (ingress && !(k->ingress = open_out(ingress))) || (out && !(k->raw = open_out(out))))
        goto done;
    if (k->spike)
        tk_spike_write_header(k->spike);
    if (k->ingress)
        tk_te_ingress_write_header(k->ingress, &params);
    if (ingress || encode) {
        tk_hart_blocks_options_init(&bo);
        bo.itype_width = params.s.itype_width == 3 ? 3 : 4;
        bo.sijump = params.s.sijump && params.o.sijump;
        bo.retires = (unsigned)retires;
        bo.taken = (unsigned)taken;
        bo.hart = (int)hart;
        bo.xret_itype3 = faithful;
        bo.batch = true; /* every consumer below takes blocks one after the other */
        if ((st = tk_hart_blocks_new(&bo, on_blocks, k, &k->blocks)) != TK_OK) {
            fprintf(stderr, "tracekit sim: bad retirement options: %s\n", tk_strerror(st));
            goto done;
        }
    }
    if (encode) {
        tk_te_encoder_options eo;
        tk_te_encoder_options_init(&eo);
        if (faithful)
            eo.reference_quirks = eo.irdepth_ones = false;
        eo.start_qualified = !filtering;
        st = tk_te_encoder_new_opts(&params, &eo, on_packet, k, &k->enc);
        if (st == TK_OK && filtering)
            st = tk_te_filter_new(&hw.filter, &k->filter);
    }
    if (encode && st != TK_OK) {
        fprintf(stderr, "tracekit sim: cannot create the encoder: %s\n", tk_strerror(st));
        goto done;
    }
    if (pcs || spike || ingress || encode)
        tk_sim_set_retire(sim, on_retire, k);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = tk_sim_run(sim, max, &res, &diag);
    if (k->blocks && (st == TK_OK || st == TK_END)) {
        tk_status s2 = tk_hart_blocks_finish(k->blocks);
        if (s2 == TK_OK && k->enc && k->filter) {
            tk_te_block f;
            size_t nf;
            s2 = tk_te_filter_finish(k->filter, &f, &nf);
            if (s2 == TK_OK && nf)
                s2 = encode_cycle(k, &f, 1);
        }
        if (s2 == TK_OK && k->enc)
            s2 = run_flush(k);
        if (s2 == TK_OK && k->enc)
            s2 = tk_te_encoder_finish(k->enc);
        if (s2 != TK_OK)
            st = s2;
    } else if (k->enc) {
        /* the cycles before the failure are encoded, as they were one by one */
        (void)run_flush(k);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fflush(stdout);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (k->pcs && k->blen)
        fwrite(k->buf, 1, k->blen, k->pcs);

    if (st == TK_OK) {
        fprintf(stderr, "exit code %lld\n", (long long)res.exit_code);
        rc = (int)(res.exit_code & 0xff);
    } else if (st == TK_END) {
        fprintf(stderr, "stopped after %llu instructions (--max-insns)\n",
                (unsigned long long)res.instructions);
        rc = 0;
    } else {
        fprintf(stderr, "tracekit sim: %s: %s\n", tk_strerror(st), diag.message);
        rc = (st == TK_ERR_UNSUPPORTED || st == TK_ERR_TRAP) ? 3 : 2;
    }
    fprintf(stderr, "%llu instructions retired, %llu executed", (unsigned long long)res.retired,
            (unsigned long long)res.instructions);
    fprintf(stderr, " in %.3f s (%.1f M instructions/s)\n", secs,
            secs > 0 ? (double)res.instructions / secs / 1e6 : 0.0);
    if (encode)
        fprintf(stderr, "%llu packets, %llu bytes, %.3f bits/instruction\n",
                (unsigned long long)k->packets, (unsigned long long)k->bytes,
                res.instructions ? (double)(k->bytes - k->packets) * 8.0 / (double)res.instructions
                                 : 0.0);
done:
    if (k->pcs && fclose(k->pcs) != 0)
        rc = 2;
    if (k->spike && fclose(k->spike) != 0)
        rc = 2;
    if (k->ingress && fclose(k->ingress) != 0)
        rc = 2;
    if (k->raw && fclose(k->raw) != 0)
        rc = 2;
    tk_te_encoder_free(k->enc);
    tk_te_filter_free(k->filter);
    tk_hart_blocks_free(k->blocks);
    tk_sim_free(sim);
    tk_image_free(img);
    free(k);
    return rc;
}
