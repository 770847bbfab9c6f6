/* SPDX-License-Identifier: BSD-2-Clause */
#include "analysis_input.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cs_scan.h"
#include "limit_option.h"
#include "tracekit/blocks.h"
#include "tracekit/encap.h"
#include "tracekit/etm4.h"
#include "tracekit/event_pipe.h"
#include "tracekit/hart.h"
#include "tracekit/riscv.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"
#include "util/compiler.h"

#define MAX_ERROR_LINES 20
/* --sim without --max-insns: a program that never exits still ends. */
#define DEFAULT_MAX_INSNS 2000000000ull

const char tk_an_input_help[] =
    "input (one of):\n"
    "  --scf S.scf [--ucf U.ucf] [--elf PROG.elf] TRACE.te_inst_raw\n"
    "                    E-Trace te_inst packets (the reference flow's raw packet file),\n"
    "                    decoded as `tracekit decode` does; the .ucf's object-files names\n"
    "                    the ELF unless --elf is given (without a .ucf the options come\n"
    "                    from the trace's support packets). Also: --spec VER (2.0, 0.29),\n"
    "                    --no-bootrom, --ecall-sequential, --max-predicted N, --encap\n"
    "                    LAYOUT with --srcid N (see tracekit decode --help)\n"
    "  --sim PROG.elf    run the program on tracekit's hart model (RV32/RV64 IMAFDC, HTIF\n"
    "                    exit, see tracekit sim) and profile every retired instruction;\n"
    "                    --max-insns N stops it (default 2000000000), --hart H picks the\n"
    "                    hart; the program's console output goes to stderr\n"
    "  --elf PROG.elf --pc-trace PCS\n"
    "                    executed PCs, one hex address per line (plain or .gz), e.g. the\n"
    "                    reference decoder's .decoder.trace or `tracekit decode` output\n"
    "  --snapshot DIR | --trace FILE [--id N] [--elf SYMS.elf] ...\n"
    "                    Arm CoreSight ETMv4/ETE trace, decoded over the memory images as\n"
    "                    `tracekit decode --snapshot` does (its options: --buffer,\n"
    "                    --trace-format, --reg, --mem). Functions are the symbols of --elf\n"
    "                    (any ELF: AArch64, Arm; its DWARF gives source lines) and, outside\n"
    "                    them, inferred from the flow: each call target and exception\n"
    "                    handler is a function sub_ADDR that runs to the next one. One trace\n"
    "                    ID per profile: --id picks it when several sources have trace\n"
    "other:\n"
    "  -o, --output FILE where to write (default: standard output)\n"
    "  -j, --jobs N      2 or more: decode the trace (or run the program) on one thread\n"
    "                    while the profile is collected on another; the same output\n"
    "                    (the collector is one thread: more than 2 gives nothing more).\n"
    "                    CoreSight: only the first pass, which finds the functions,\n"
    "                    runs on N threads (pieces of the trace); the profile is\n"
    "                    collected beside the decoder\n"
    "  --piece-size B    with --jobs, CoreSight: trace bytes per piece of the first pass\n"
    "                    (default 64 KiB)\n"
    "  --quiet           no progress line (it is drawn on stderr only for a terminal)\n"
    "  --by-range        hand the flow to the profile range by range instead of in\n"
    "                    batches of whole basic blocks (slower, same output: for checking)\n";

int tk_an_parse(tk_an_input *in, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char **val = NULL;
    /* CoreSight input options, over their defaults the first time */
    tk_cli_cs cs;
    if (in->cs_on)
        cs = in->cs;
    else
        tk_cli_cs_init(&cs);
    const int k = tk_cli_cs_parse(&cs, in->cmd, argc, argv, i);
    if (k > 0) {
        in->cs = cs;
        in->cs_on = true;
    }
    if (k)
        return k;
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
    else if (!strcmp(a, "--sim"))
        val = &in->sim;
    else if (!strcmp(a, "-o") || !strcmp(a, "--output"))
        val = &in->outpath;
    else if (in->top && !strcmp(a, "--top")) {
        char *end = NULL;
        unsigned long v = *i + 1 < argc ? strtoul(argv[*i + 1], &end, 10) : 0;
        if (!end || *end || !v || v > 100000) {
            fprintf(stderr, "tracekit %s: --top needs a number from 1 to 100000\n", in->cmd);
            return -1;
        }
        *in->top = (unsigned)v;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--max-predicted")) {
        if (!tk_cli_max_predicted(in->cmd, *i + 1 < argc ? argv[*i + 1] : NULL, &in->max_predicted))
            return -1;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
        char *end = NULL;
        unsigned long v = *i + 1 < argc ? strtoul(argv[*i + 1], &end, 10) : 0;
        if (!end || *end || v < 1 || v > 256) {
            fprintf(stderr, "tracekit %s: --jobs needs a number from 1 to 256\n", in->cmd);
            return -1;
        }
        in->jobs = (unsigned)v;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--piece-size")) {
        char *end = NULL;
        unsigned long long v = *i + 1 < argc ? strtoull(argv[*i + 1], &end, 0) : 0;
        if (!end || !*argv[*i + 1] || *end || !v || v > (1ull << 30)) {
            fprintf(stderr, "tracekit %s: --piece-size needs a byte count from 1 to 2^30\n",
                    in->cmd);
            return -1;
        }
        in->piece_bytes = (size_t)v;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--max-insns") || !strcmp(a, "--hart")) {
        char *end = NULL;
        unsigned long long v = *i + 1 < argc ? strtoull(argv[*i + 1], &end, 0) : 0;
        if (!end || !*argv[*i + 1] || *end || (a[2] == 'h' && v > 63)) {
            fprintf(stderr, "tracekit %s: %s needs a number\n", in->cmd, a);
            return -1;
        }
        if (a[2] == 'h')
            in->hart = (int)v;
        else
            in->max_insns = v;
        ++*i;
        return 1;
    } else if (!strcmp(a, "--encap") || !strcmp(a, "--srcid")) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "tracekit %s: %s needs a value\n", in->cmd, a);
            return -1;
        }
        const char *v = argv[++*i];
        return (a[2] == 'e' ? tk_cli_encap_layout(&in->encap, in->cmd, v)
                            : tk_cli_encap_srcid(&in->encap, in->cmd, v))
                   ? -1
                   : 1;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
        return in->quiet = true, 1;
    else if (!strcmp(a, "--by-range"))
        return in->by_range = true, 1;
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

/* Events on their way to the profile: ranges are gathered into batches of whole basic blocks
 * (TK_EV_BLOCKS, which the profile counts per block) unless --by-range, decode errors are
 * printed (the first few), and on a terminal a progress line is redrawn at most twice a
 * second. */
typedef struct relay {
    const tk_an_input *in;
    const char *name; /* the trace, named in error lines with their offsets (NULL: none) */
    tk_profile *profile;
    tk_block_batcher *batcher; /* NULL: --by-range */
    /* --jobs: the producer's events go through the pipe, and a thread of the pipe's hands
     * them to target (relay_event or feed_event): the profile is collected there, next to
     * the decoder. Every line below is printed on that thread. */
    tk_event_pipe *pipe;
    tk_event_fn target;
    bool progress;
    bool drawn;
    uint64_t events; /* a batch counts its blocks */
    uint64_t check_at;
    uint64_t errors;
    uint64_t pos; /* byte offset of the latest packet, for a percentage */
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
    if (!r->name) {
        print_line(r, msg);
        return;
    }
    char line[512];
    snprintf(line, sizeof(line), "%s: offset %" PRIu64 " (packet %" PRIu64 "): %s", r->name, offset,
             index, msg);
    print_line(r, line);
}

/* The progress line's counts (and the line, when it is due). */
static void progress(relay *r, const tk_event *ev)
{
    if (ev->byte_offset > r->pos && ev->byte_offset != UINT64_MAX)
        r->pos = ev->byte_offset;
    r->events += ev->kind == TK_EV_BLOCKS ? ev->nblocks : 1;
    if (r->events >= r->check_at) {
        r->check_at = r->events + 0x10000;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt =
            (double)(now.tv_sec - r->last.tv_sec) + (double)(now.tv_nsec - r->last.tv_nsec) / 1e9;
        if (dt >= 0.5) {
            tk_profile_totals t;
            tk_profile_get_totals(r->profile, &t);
            if (r->size)
                fprintf(stderr, "\rtracekit %s: %3.0f%% of the trace, %" PRIu64 " instructions ",
                        r->in->cmd, 100.0 * (double)r->pos / (double)r->size, t.insns);
            else
                fprintf(stderr, "\rtracekit %s: %" PRIu64 " instructions ", r->in->cmd, t.insns);
            r->drawn = true;
            r->last = now;
        }
    }
}

/* relay_event for an error or with a progress line: out of line, so that relay_event
 * needs no stack frame of its own. */
TK_NOINLINE static tk_status relay_lines(relay *r, const tk_event *ev)
{
    if (ev->kind == TK_EV_ERROR)
        print_error(r, ev->byte_offset, ev->packet_index,
                    ev->message ? ev->message : tk_strerror(ev->status));
    if (r->progress)
        progress(r, ev);
    return tk_profile_event(r->profile, ev);
}

static tk_status relay_event(void *ctx, const tk_event *ev)
{
    relay *r = ctx;
    /* without a terminal (a pipe, a file, --quiet) an event costs two tests here: a
     * CoreSight profile hands over one per branch */
    if (ev->kind == TK_EV_ERROR || r->progress)
        return relay_lines(r, ev);
    return tk_profile_event(r->profile, ev);
}

/* Where the sources without block events of their own (PC lists, the hart model) send their
 * events: through the batcher to relay_event. */
static tk_status feed_event(void *ctx, const tk_event *ev)
{
    relay *r = ctx;
    return r->batcher ? tk_block_batcher_event(r->batcher, ev) : relay_event(r, ev);
}

/* The pipe's side (--jobs): the events go where they would have gone without it. */
static tk_status piped_event(void *ctx, const tk_event *ev)
{
    relay *r = ctx;
    return r->target(r, ev);
}

/* The callback (and its ctx) a producer calls for events that go to fn: fn itself, or the
 * pipe in front of it. */
static tk_event_fn producer_fn(relay *r, tk_event_fn fn, void **ctx)
{
    if (!r->pipe) {
        *ctx = r;
        return fn;
    }
    r->target = fn;
    *ctx = r->pipe;
    return tk_event_pipe_event;
}

/* The producer is done, with status st: wait until the pipe (if any) has delivered
 * everything, so that what is printed next comes after the events' lines. Returns st, or
 * the sink's status if st is TK_OK. */
static tk_status drain(relay *r, tk_status st)
{
    tk_status ds = r->pipe ? tk_event_pipe_finish(r->pipe) : TK_OK;
    return st != TK_OK ? st : ds;
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
    void *ctx;
    tk_event_fn fn = producer_fn(r, feed_event, &ctx);
    tk_status st = tk_pc_flow_new(run->img, fn, ctx, &flow);
    if (st == TK_OK)
        st = tk_pc_flow_read_file(flow, in->pc_trace, &d);
    if (st == TK_OK)
        st = tk_pc_flow_finish(flow);
    tk_pc_flow_free(flow);
    st = drain(r, st);
    return st == TK_OK ? 0 : fail(in, st, &d, in->pc_trace);
}

/* Every packet of the raw file to the decoder (tk_te_decoder_run_raw): damaged packets come
 * back as error events, printed by the relay, and decoding resumes at the next sync. */
static int run_trace(const tk_an_input *in, const tk_te_params *p, tk_an_run *run, relay *r)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_raw *raw = NULL;
    tk_te_decoder *dec = NULL;
    tk_status st = tk_te_raw_open(in->trace, &raw, &d);
    if (st != TK_OK)
        return fail(in, st, &d, in->trace);
    r->size = tk_te_raw_size(raw);
    /* The decoder batches whole blocks itself (no lookup per range, as the batcher needs);
     * --by-range keeps plain range events. */
    const bool blocks = r->batcher != NULL;
    void *ctx;
    tk_event_fn fn = producer_fn(r, blocks ? relay_event : feed_event, &ctx);
    if ((st = tk_te_decoder_new(p, run->img, fn, ctx, &dec)) != TK_OK) {
        tk_te_raw_close(raw);
        return fail(in, st, NULL, "decoder");
    }
    tk_te_decoder_set_flags(dec, (in->ecall_sequential ? TK_TE_DEC_ECALL_SEQUENTIAL : 0u) |
                                     (blocks ? TK_TE_DEC_BLOCK_EVENTS : 0u));
    if (in->max_predicted)
        tk_te_decoder_set_max_predicted(dec, in->max_predicted);
    tk_te_encap_stats est = {.size = sizeof(est)};
    st = in->encap.on ? tk_te_decoder_run_encap(dec, raw, &in->encap.cfg, in->encap.srcid, &est)
                      : tk_te_decoder_run_raw(dec, raw);
    /* A damaged stream was reported packet by packet; only a stop of our own is fatal. */
    if (st != TK_ERR_NOMEM && st != TK_ERR_STATE)
        st = tk_te_decoder_finish(dec);
    st = drain(r, st);
    /* --encap: no packet of the source (reported) */
    const bool none = in->encap.on && tk_cli_encap_report(&in->encap, in->cmd, in->trace, &est);
    tk_te_decoder_free(dec);
    tk_te_raw_close(raw);
    if (none && st == TK_OK)
        return 1;
    return st == TK_OK ? 0 : fail(in, st, NULL, in->trace);
}

typedef struct sim_feed {
    tk_pc_flow *flow;
    int hart;
    unsigned xlen;
} sim_feed;

/* Where an interrupt taken after record r returns to: the next instruction in program order
 * (E-Trace epc). Unknown for uninferable jumps: their own address stands in (it only names
 * the call site of the handler). */
static uint64_t interrupt_epc(const tk_hart_retire *r, unsigned xlen)
{
    tk_rv_insn in;
    switch (r->itype) {
    case TK_ITYPE_NONE:
    case TK_ITYPE_NOT_TAKEN:
        return r->pc + r->len;
    case TK_ITYPE_TAKEN:
    case TK_ITYPE_INF_CALL:
    case TK_ITYPE_INF_JUMP:
    case TK_ITYPE_INF_OTHER:
        if (tk_rv_decode(r->insn, xlen, &in) == TK_OK &&
            (in.cf == TK_RV_CF_BRANCH || in.cf == TK_RV_CF_JAL)) {
            uint64_t t = r->pc + (uint64_t)in.imm;
            return xlen == 32 ? t & 0xffffffffu : t;
        }
        return r->pc;
    default:
        return r->pc;
    }
}

/* Retirement records to events: retired instructions are the flow; a faulting instruction
 * (not retired), ecall/ebreak and interrupts are traps with the hart's own cause. */
static tk_status sim_retire(void *ctx, const tk_hart_retire *recs, size_t n)
{
    sim_feed *f = ctx;
    tk_status st = TK_OK;
    for (size_t i = 0; i < n && st == TK_OK; i++) {
        const tk_hart_retire *r = &recs[i];
        if (f->hart >= 0 && r->hart != (unsigned)f->hart)
            continue;
        if (r->flags & TK_HART_F_RETIRED)
            st = tk_pc_flow_pc(f->flow, r->pc);
        if (st != TK_OK)
            break;
        if (r->flags & TK_HART_F_EXCEPTION)
            st = tk_pc_flow_trap(f->flow, r->pc, (uint32_t)r->cause, false);
        else if (r->flags & TK_HART_F_INTERRUPT)
            st = tk_pc_flow_trap(f->flow, interrupt_epc(r, f->xlen), (uint32_t)r->cause, true);
    }
    return st;
}

static void sim_console(void *ctx, const char *data, size_t len)
{
    (void)ctx;
    fwrite(data, 1, len, stderr);
}

static int run_sim(const tk_an_input *in, tk_an_run *run, relay *r)
{
    tk_sim_config cfg;
    tk_sim_config_init(&cfg);
    cfg.xlen = tk_image_xlen(run->img);
    if (in->hart >= 0)
        cfg.nharts = (unsigned)in->hart + 1;
    tk_sim *sim = NULL;
    tk_diag d;
    tk_diag_clear(&d);
    sim_feed feed = {.hart = in->hart, .xlen = cfg.xlen};
    void *ctx;
    tk_event_fn fn = producer_fn(r, feed_event, &ctx);
    tk_status st = tk_sim_new(&cfg, &sim);
    if (st == TK_OK)
        st = tk_sim_load_image(sim, run->img, &d);
    if (st == TK_OK)
        st = tk_pc_flow_new(run->img, fn, ctx, &feed.flow);
    if (st != TK_OK) {
        tk_sim_free(sim);
        return fail(in, st, &d, in->sim);
    }
    if (!in->quiet)
        tk_sim_set_console(sim, sim_console, NULL);
    tk_sim_set_retire(sim, sim_retire, &feed);
    tk_sim_result res = {0};
    uint64_t max = in->max_insns ? in->max_insns : DEFAULT_MAX_INSNS;
    st = tk_sim_run(sim, max, &res, &d);
    tk_status fs = tk_pc_flow_finish(feed.flow);
    tk_pc_flow_free(feed.flow);
    tk_sim_free(sim);
    fs = drain(r, fs);
    if (r->drawn) {
        fputs("\r\033[K", stderr);
        r->drawn = false;
    }
    if (st == TK_END) {
        fprintf(stderr, "tracekit %s: stopped after %" PRIu64 " instructions (--max-insns)\n",
                in->cmd, res.instructions);
    } else if (st == TK_OK) {
        if (res.exit_code)
            fprintf(stderr, "tracekit %s: the program exited with code %lld\n", in->cmd,
                    (long long)res.exit_code);
    } else {
        /* Unsupported instruction or device: profile what ran up to there. */
        fprintf(stderr, "tracekit %s: the program stopped: %s\n", in->cmd,
                d.message[0] ? d.message : tk_strerror(st));
        if (st != TK_ERR_UNSUPPORTED && st != TK_ERR_TRAP)
            return 1;
    }
    return fs == TK_OK ? 0 : fail(in, fs, NULL, in->sim);
}

/* ---- CoreSight --------------------------------------------------------------------------- */

/* Frame errors: the decoder's events report the packets they damaged; these say where. */
static tk_status cs_frame_error(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    (void)st;
    print_error(ctx, offset, 0, msg);
    return TK_OK;
}

/* The memory images of the core that source id traces. */
static const tk_cs_mem *cs_mem_of(const tk_cs_snapshot *ss, uint32_t id)
{
    for (size_t i = 0; i < ss->nsources; i++) {
        const tk_cs_source *src = &ss->sources[i];
        if (src->trace_id == id && tk_cs_protocol_is_etm4(src->protocol))
            return tk_cs_snapshot_source_mem(ss, src);
    }
    return NULL;
}

/* Decode the buffer twice: once to find the source, its instruction set and the functions
 * (cs_scan.h; on several threads with --jobs), then into the profile. The decode is cheap
 * next to the profile, and a function's extent must be known before the profile files its
 * first range under it. */
static int run_snapshot(const tk_an_input *in, tk_an_run *run, relay *r, int buffer)
{
    tk_cli_cs_scan scan;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st = tk_cli_cs_scan_run(run->ss, buffer, (int)in->cs.id, in->jobs, in->piece_bytes,
                                      run->code, &scan, &d);
    if (st != TK_OK)
        return fail(in, st, &d, run->elf);
    if (scan.other_id != UINT32_MAX) {
        fprintf(stderr,
                "tracekit %s: the buffer has trace of several sources (trace IDs 0x%x and "
                "0x%x at least): profile one at a time with --id\n",
                in->cmd, scan.id, scan.other_id);
        return 2;
    }
    if (scan.any) {
        if ((st = tk_cs_code_set_mem(run->code, cs_mem_of(run->ss, scan.id), scan.isa)) ||
            (st = tk_cs_code_add_entry(run->code, scan.first)))
            return fail(in, st, NULL, "profile");
    }
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = buffer;
    o.id = (int)in->cs.id;
    o.decode = true;
    /* (no event pipe for CoreSight: see tk_an_collect) */
    o.on_event = relay_event;
    o.on_frame_error = cs_frame_error;
    o.ctx = r;
    st = tk_etm4_run_snapshot(run->ss, &o, &d);
    return st == TK_OK ? 0 : fail(in, st, &d, run->elf);
}

/* Open the snapshot and the symbols (--elf), and make the code view. */
static int open_snapshot(const tk_an_input *in, tk_an_run *run, int *buffer)
{
    int rc = tk_cli_cs_open(&in->cs, in->cmd, &run->ss, buffer);
    if (rc)
        return rc;
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st;
    if ((st = tk_cs_code_new(&run->code)) != TK_OK)
        return fail(in, st, NULL, "profile");
    run->elf = strdup(in->elf ? in->elf : in->cs.dir ? in->cs.dir : in->cs.trace);
    if (!run->elf)
        return fail(in, TK_ERR_NOMEM, NULL, "elf");
    if (in->elf) {
        if ((st = tk_image_open_elf_any(in->elf, &run->img, &d)) != TK_OK)
            return fail(in, st, &d, in->elf);
        tk_cs_code_set_symbols(run->code, run->img);
        tk_diag_clear(&run->lines_diag);
        if (tk_line_table_open_elf(in->elf, &run->lines, &run->lines_diag) != TK_OK)
            run->lines = NULL;
    } else {
        snprintf(run->lines_diag.message, sizeof(run->lines_diag.message),
                 "no source lines without an ELF (--elf)");
    }
    tk_cs_code_view(run->code, &run->view);
    return 0;
}

static int check_input(const tk_an_input *in)
{
    bool trace = in->trace || in->scf || in->ucf;
    int sources = trace + !!in->pc_trace + !!in->sim + in->cs_on;
    if (!sources) {
        fprintf(stderr, "tracekit %s: no input (try --help)\n", in->cmd);
        return 2;
    }
    if (sources > 1) {
        fprintf(stderr,
                "tracekit %s: give one input: a trace (--scf, --ucf, TRACE), --sim, "
                "--pc-trace, or CoreSight trace (--snapshot, --trace)\n",
                in->cmd);
        return 2;
    }
    if (in->sim && in->elf && strcmp(in->sim, in->elf)) {
        fprintf(stderr, "tracekit %s: --sim names the program; --elf is not needed\n", in->cmd);
        return 2;
    }
    if (trace && (!in->trace || !in->scf || (!in->ucf && !in->elf))) {
        fprintf(stderr, "tracekit %s: a trace needs --scf, the trace file and --ucf or --elf\n",
                in->cmd);
        return 2;
    }
    if (in->encap.on && !trace) {
        fprintf(stderr, "tracekit %s: --encap describes a trace file\n", in->cmd);
        return 2;
    }
    if (tk_cli_encap_check(&in->encap, in->cmd))
        return 2;
    if (in->pc_trace && !in->elf) {
        fprintf(stderr, "tracekit %s: --elf PROG.elf is required with --pc-trace\n", in->cmd);
        return 2;
    }
    return 0;
}

/* Read the E-Trace parameters and open the RISC-V program (trace, --sim, --pc-trace). */
static int open_program(const tk_an_input *in, tk_an_run *run, tk_te_params *p)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_status st;
    if (in->trace) {
        if (in->spec && tk_te_spec_parse(in->spec, &p->spec) != TK_OK) {
            fprintf(stderr, "tracekit %s: unknown --spec '%s'\n", in->cmd, in->spec);
            return 2;
        }
        if ((st = tk_te_params_read_scf(p, in->scf, &d)) != TK_OK ||
            (in->ucf && (st = tk_te_params_read_ucf(p, in->ucf, &run->elf, &d)) != TK_OK) ||
            (st = tk_te_params_validate(p, &d)) != TK_OK)
            return fail(in, st, &d, in->ucf ? in->ucf : in->scf);
    }
    if (in->elf || in->sim) {
        free(run->elf);
        run->elf = strdup(in->sim ? in->sim : in->elf);
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
        (st = tk_te_add_spike_reset_code(run->img, p->o.use_rv32_isa ||
                                                       tk_image_xlen(run->img) == 32)) != TK_OK)
        return fail(in, st, NULL, "reset code at 0x1000");
    tk_diag_clear(&run->lines_diag);
    if (tk_line_table_open_elf(run->elf, &run->lines, &run->lines_diag) != TK_OK)
        run->lines = NULL;
    tk_code_view_from_image(run->img, &run->view);
    return 0;
}

int tk_an_collect(const tk_an_input *in, tk_an_run *run)
{
    memset(run, 0, sizeof(*run));
    int rc = check_input(in);
    if (rc)
        return rc;
    tk_status st;
    tk_te_params p;
    tk_te_params_init(&p);
    int buffer = -1;
    if ((rc = in->cs_on ? open_snapshot(in, run, &buffer) : open_program(in, run, &p)))
        return rc;
    if ((st = tk_profile_new_flags(&run->view, in->profile_flags, &run->profile)) != TK_OK)
        return fail(in, st, NULL, "profile");

    /* r.last zero: the line appears at the first check (after 65536 events), so a terminal
     * shows it at once however fast the run is, then at most twice a second */
    relay r = {.in = in,
               .name = in->cs_on ? run->elf : in->trace,
               .profile = run->profile,
               .progress = !in->quiet && isatty(2)};
    /* (CoreSight: the ranges come from the ETMv4 decoder's own blocks, not the image's) */
    if (!in->by_range && !in->cs_on &&
        (st = tk_block_batcher_new(run->img, relay_event, &r, &r.batcher)) != TK_OK)
        return fail(in, st, NULL, "profile");
    /* (CoreSight: --jobs runs the first pass on several threads, and the profile beside the
     * decoder on one: the ETMv4 decoder hands over one range per branch, and moving them to
     * another thread cost more than the collector's thread saved, -j 2 0.7-0.8x -j 1) */
    if (in->jobs > 1 && !in->cs_on &&
        (st = tk_event_pipe_new(piped_event, NULL, &r, &r.pipe)) != TK_OK) {
        tk_block_batcher_free(r.batcher);
        return fail(in, st, NULL, "profile");
    }
    rc = in->cs_on   ? run_snapshot(in, run, &r, buffer)
         : in->trace ? run_trace(in, &p, run, &r)
         : in->sim   ? run_sim(in, run, &r)
                     : run_pc_trace(in, run, &r);
    /* The blocks after the source's last other event. */
    if (!rc && r.batcher && (st = tk_block_batcher_flush(r.batcher)) != TK_OK)
        rc = fail(in, st, NULL, "profile");
    tk_event_pipe_free(r.pipe);
    tk_block_batcher_free(r.batcher);
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
                " trace errors (damage, or code %s not have); counts cover the rest\n",
                in->cmd, t.errors > r.errors ? t.errors : r.errors,
                in->cs_on ? "the memory images do" : "the ELF does");
    if (t.bad_ranges && in->cs_on)
        fprintf(stderr, "tracekit %s: warning: %" PRIu64 " ranges do not match the memory images\n",
                in->cmd, t.bad_ranges);
    else if (t.bad_ranges)
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
    tk_cs_code_free(run->code);
    tk_cs_snapshot_free(run->ss);
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

int tk_an_write(const tk_an_input *in, tk_an_run *run, tk_an_writer write,
                const tk_write_options *o, const char *what)
{
    FILE *out = tk_an_open_out(in->cmd, in->outpath);
    if (!out)
        return 1;
    tk_status st = write(run->profile, out, o);
    int rc = tk_an_close_out(in->cmd, in->outpath ? in->outpath : "-", out);
    if (st != TK_OK) {
        fprintf(stderr, "tracekit %s: writing %s: %s\n", in->cmd, what, tk_strerror(st));
        rc = 1;
    }
    return rc;
}

void tk_an_write_options(const tk_an_run *run, tk_write_options *o)
{
    tk_write_options_init(o);
    o->program = run->elf;
    o->lines = run->lines;
}
