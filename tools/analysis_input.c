/* SPDX-License-Identifier: BSD-2-Clause */
#include "analysis_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

#define MAX_ERROR_LINES 20

const char tk_an_input_help[] =
    "input (one of):\n"
    "  --scf S.scf --ucf U.ucf [--elf PROG.elf] TRACE.te_inst_raw\n"
    "                    E-Trace te_inst packets (the reference flow's raw packet file),\n"
    "                    decoded as `tracekit decode` does; the .ucf's object-files names\n"
    "                    the ELF unless --elf is given. Also: --spec VER (2.0, 0.29),\n"
    "                    --no-bootrom, --ecall-sequential (see tracekit decode --help)\n"
    "  --elf PROG.elf --pc-trace PCS\n"
    "                    executed PCs, one hex address per line (plain or .gz), e.g. the\n"
    "                    reference decoder's .decoder.trace or `tracekit decode` output\n"
    "other:\n"
    "  --quiet           no progress line (it is drawn on stderr only for a terminal)\n";

int tk_an_parse(tk_an_input *in, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char **val = NULL;
    if (!strcmp(a, "--elf"))
        val = &in->elf;
    else if (!strcmp(a, "--pc-trace"))
        val = &in->pc_trace;
    else if (!strcmp(a, "--scf"))
        val = &in->scf;
    else if (!strcmp(a, "--ucf"))
        val = &in->ucf;
    else if (!strcmp(a, "--spec"))
        val = &in->spec;
    else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
        return in->quiet = true, 1;
    else if (!strcmp(a, "--no-bootrom"))
        return in->no_bootrom = true, 1;
    else if (!strcmp(a, "--ecall-sequential"))
        return in->ecall_sequential = true, 1;
    else if (a[0] != '-' || !a[1]) {
        if (in->trace) {
            fprintf(stderr, "tracekit %s: more than one trace file ('%s')\n", in->cmd, a);
            return -1;
        }
        in->trace = a;
        return 1;
    } else
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "tracekit %s: %s needs a value\n", in->cmd, a);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

/* Events on their way to the profile: decode errors are printed (the first few), and on a
 * terminal a progress line is redrawn at most twice a second. */
typedef struct relay {
    const tk_an_input *in;
    tk_profile *profile;
    bool progress;
    bool drawn;
    uint64_t events;
    uint64_t errors;
    const uint64_t *pos; /* bytes consumed so far, for a percentage */
    uint64_t size;
    struct timespec last;
} relay;

/* One error line (the first few only), clearing the progress line first. */
static void print_line(relay *r, const char *msg)
{
    if (r->errors++ >= MAX_ERROR_LINES)
        return;
    if (r->drawn) {
        fputs("\r\033[K", stderr);
        r->drawn = false;
    }
    fprintf(stderr, "tracekit %s: %s\n", r->in->cmd, msg);
}

static void print_error(relay *r, uint64_t offset, uint64_t index, const char *msg)
{
    if (!r->in->trace) {
        print_line(r, msg);
        return;
    }
    char line[512];
    snprintf(line, sizeof(line), "%s: offset %" PRIu64 " (packet %" PRIu64 "): %s", r->in->trace,
             offset, index, msg);
    print_line(r, line);
}

static tk_status relay_event(void *ctx, const tk_event *ev)
{
    relay *r = ctx;
    if (ev->kind == TK_EV_ERROR)
        print_error(r, ev->byte_offset, ev->packet_index,
                    ev->message ? ev->message : tk_strerror(ev->status));
    if (r->progress && (++r->events & 0xffff) == 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt =
            (double)(now.tv_sec - r->last.tv_sec) + (double)(now.tv_nsec - r->last.tv_nsec) / 1e9;
        if (dt >= 0.5) {
            tk_profile_totals t;
            tk_profile_get_totals(r->profile, &t);
            if (r->pos && r->size)
                fprintf(stderr, "\rtracekit %s: %3.0f%% of the trace, %" PRIu64 " instructions ",
                        r->in->cmd, 100.0 * (double)*r->pos / (double)r->size, t.insns);
            else
                fprintf(stderr, "\rtracekit %s: %" PRIu64 " instructions ", r->in->cmd, t.insns);
            r->drawn = true;
            r->last = now;
        }
    }
    return tk_profile_event(r->profile, ev);
}

static int fail(const tk_an_input *in, tk_status st, const tk_diag *d, const char *what)
{
    if (d && d->message[0])
        fprintf(stderr, "tracekit %s: %s\n", in->cmd, d->message);
    else
        fprintf(stderr, "tracekit %s: %s: %s\n", in->cmd, what, tk_strerror(st));
    return 1;
}

static int run_pc_trace(const tk_an_input *in, tk_an_run *run, relay *r)
{
    tk_pc_flow *flow = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st = tk_pc_flow_new(run->img, relay_event, r, &flow);
    if (st == TK_OK)
        st = tk_pc_flow_read_file(flow, in->pc_trace, &d);
    if (st == TK_OK)
        st = tk_pc_flow_finish(flow);
    tk_pc_flow_free(flow);
    return st == TK_OK ? 0 : fail(in, st, &d, in->pc_trace);
}

/* spike's reset vector at 0x1000 (VERSIONS.md C.4), which the reference traces start in:
 * auipc t0,0; addi a1,t0,32; csrr a0,mhartid; ld t0,24(t0) (lw for RV32); jr t0. */
static tk_status add_bootrom(tk_image *img, bool rv32)
{
    const uint32_t code[5] = {0x00000297, 0x02028593, 0xf1402573, rv32 ? 0x0182a283 : 0x0182b283,
                              0x00028067};
    uint8_t bytes[sizeof(code)];
    for (size_t i = 0; i < 5; i++)
        for (size_t b = 0; b < 4; b++)
            bytes[i * 4 + b] = (uint8_t)(code[i] >> (8 * b));
    uint8_t probe;
    if (tk_image_read(img, 0x1000, &probe, 1) == TK_OK)
        return TK_OK;
    return tk_image_add_region(img, 0x1000, bytes, sizeof(bytes));
}

/* Every packet of the raw file to the decoder; damaged packets are reported and the decoder
 * told it lost them (it resumes at the next sync). */
static int run_trace(const tk_an_input *in, const tk_te_params *p, tk_an_run *run, relay *r)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_raw *raw = NULL;
    tk_te_decoder *dec = NULL;
    tk_status st = tk_te_raw_open(in->trace, &raw, &d);
    if (st != TK_OK)
        return fail(in, st, &d, in->trace);
    uint64_t pos = 0;
    r->pos = &pos;
    r->size = tk_te_raw_size(raw);
    if ((st = tk_te_decoder_new(p, run->img, relay_event, r, &dec)) != TK_OK) {
        tk_te_raw_close(raw);
        return fail(in, st, NULL, "decoder");
    }
    if (in->ecall_sequential)
        tk_te_decoder_set_flags(dec, TK_TE_DEC_ECALL_SEQUENTIAL);
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag_clear(&d);
        st = tk_te_raw_next(raw, &rp, &d);
        if (st == TK_END) {
            st = TK_OK;
            break;
        }
        if (st != TK_OK) {
            /* The reader's message already names the file, offset and packet. */
            print_line(r, d.message);
            if (st != TK_ERR_BAD_PACKET) {
                st = TK_OK; /* truncated: decode what came before */
                break;
            }
            if ((st = tk_te_decoder_lost(dec, d.byte_offset, d.packet_index)) != TK_OK)
                break;
            continue;
        }
        pos = rp.offset;
        tk_te_packet pkt;
        if (rp.msg_type == TK_ENCAP_FLOW_TE_INST &&
            tk_te_packet_decode(p, rp.payload, rp.len, &pkt, &d) == TK_OK) {
            if ((st = tk_te_decoder_packet(dec, &pkt, rp.offset, rp.index)) != TK_OK)
                break;
            continue;
        }
        print_error(r, rp.offset, rp.index,
                    rp.msg_type != TK_ENCAP_FLOW_TE_INST ? "not a te_inst packet"
                    : d.message[0]                       ? d.message
                                                         : "bad packet");
        if ((st = tk_te_decoder_lost(dec, rp.offset, rp.index)) != TK_OK)
            break;
    }
    if (st == TK_OK)
        st = tk_te_decoder_finish(dec);
    tk_te_decoder_free(dec);
    tk_te_raw_close(raw);
    r->pos = NULL;
    return st == TK_OK ? 0 : fail(in, st, NULL, in->trace);
}

static int check_input(const tk_an_input *in)
{
    bool trace = in->trace || in->scf || in->ucf;
    if (!trace && !in->pc_trace) {
        fprintf(stderr, "tracekit %s: no input (try --help)\n", in->cmd);
        return 2;
    }
    if (trace && in->pc_trace) {
        fprintf(stderr, "tracekit %s: give either a trace (--scf, --ucf, TRACE) or --pc-trace\n",
                in->cmd);
        return 2;
    }
    if (trace && (!in->trace || !in->scf || !in->ucf)) {
        fprintf(stderr, "tracekit %s: a trace needs --scf, --ucf and the trace file\n", in->cmd);
        return 2;
    }
    if (in->pc_trace && !in->elf) {
        fprintf(stderr, "tracekit %s: --elf PROG.elf is required with --pc-trace\n", in->cmd);
        return 2;
    }
    return 0;
}

int tk_an_collect(const tk_an_input *in, tk_an_run *run)
{
    memset(run, 0, sizeof(*run));
    int rc = check_input(in);
    if (rc)
        return rc;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st;
    tk_te_params p;
    tk_te_params_init(&p);
    if (in->trace) {
        if (in->spec && tk_te_spec_parse(in->spec, &p.spec) != TK_OK) {
            fprintf(stderr, "tracekit %s: unknown --spec '%s'\n", in->cmd, in->spec);
            return 2;
        }
        if ((st = tk_te_params_read_scf(&p, in->scf, &d)) != TK_OK ||
            (st = tk_te_params_read_ucf(&p, in->ucf, &run->elf, &d)) != TK_OK ||
            (st = tk_te_params_validate(&p, &d)) != TK_OK)
            return fail(in, st, &d, in->ucf);
    }
    if (in->elf) {
        free(run->elf);
        run->elf = strdup(in->elf);
        if (!run->elf)
            return fail(in, TK_ERR_NOMEM, NULL, "elf");
    }
    if (!run->elf) {
        fprintf(stderr, "tracekit %s: %s names no object-files: give --elf\n", in->cmd, in->ucf);
        return 2;
    }
    if ((st = tk_image_open_elf(run->elf, &run->img, &d)) != TK_OK)
        return fail(in, st, &d, run->elf);
    if (in->trace && !in->no_bootrom &&
        (st = add_bootrom(run->img, p.o.use_rv32_isa || tk_image_xlen(run->img) == 32)) != TK_OK)
        return fail(in, st, NULL, "reset code at 0x1000");
    tk_diag_clear(&run->lines_diag);
    if (tk_line_table_open_elf(run->elf, &run->lines, &run->lines_diag) != TK_OK)
        run->lines = NULL;
    tk_code_view_from_image(run->img, &run->view);
    if ((st = tk_profile_new(&run->view, &run->profile)) != TK_OK)
        return fail(in, st, NULL, "profile");

    relay r = {.in = in, .profile = run->profile, .progress = !in->quiet && isatty(2)};
    clock_gettime(CLOCK_MONOTONIC, &r.last);
    rc = in->trace ? run_trace(in, &p, run, &r) : run_pc_trace(in, run, &r);
    if (r.drawn)
        fputs("\r\033[K", stderr);
    if (rc)
        return rc;
    if ((st = tk_profile_finish(run->profile)) != TK_OK)
        return fail(in, st, NULL, "profile");
    tk_profile_totals t;
    tk_profile_get_totals(run->profile, &t);
    if (t.errors || r.errors)
        fprintf(stderr,
                "tracekit %s: warning: %" PRIu64
                " trace errors (damage, or code the ELF does not have); counts cover the rest\n",
                in->cmd, t.errors > r.errors ? t.errors : r.errors);
    if (t.bad_ranges)
        fprintf(stderr,
                "tracekit %s: warning: %" PRIu64 " ranges do not match %s's code (wrong ELF?)\n",
                in->cmd, t.bad_ranges, run->elf);
    return 0;
}

void tk_an_run_free(tk_an_run *run)
{
    tk_profile_free(run->profile);
    tk_line_table_free(run->lines);
    tk_image_free(run->img);
    free(run->elf);
    memset(run, 0, sizeof(*run));
}

FILE *tk_an_open_out(const char *cmd, const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tracekit %s: %s: cannot create\n", cmd, path);
    return f;
}

int tk_an_close_out(const char *cmd, const char *path, FILE *f)
{
    if (f == stdout)
        return fflush(f) == 0 ? 0 : 1;
    if (fclose(f) != 0) {
        fprintf(stderr, "tracekit %s: %s: write failed\n", cmd, path);
        return 1;
    }
    return 0;
}
