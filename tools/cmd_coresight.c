/* SPDX-License-Identifier: BSD-2-Clause */
/* `tracekit dump --snapshot DIR` and `tracekit decode --snapshot DIR`: CoreSight ETMv4. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "cs_input.h"
#include "analysis/out_buf.h"
#include "tracekit/etm4.h"
#include "util/grow.h"
#include "util/hex.h"

typedef struct cli {
    FILE *out; /* where the listing goes (stdout; a piece of --jobs: unused, see lines) */
    FILE *err; /* error lines of events (stderr; in memory for a piece of --jobs) */
    int format_ranges;
    tk_obuf *lines;       /* the listing: its lines go to out through this buffer */
    int64_t prefix_id;    /* the trace ID prefix_text is for (-1: none yet) */
    char prefix_text[16]; /* "0x<id> 0x": how a range line starts (prefix_len bytes) */
    unsigned prefix_len;
    unsigned long errors;
    unsigned long mismatches; /* decode errors saying trace and memory images disagree */
    /* --stats: count instead of printing */
    unsigned long long packets, ranges, insns;
    unsigned long long first_error; /* byte offset of the first error (valid when errors) */
} cli;

/* An error at byte offset off of the buffer: counted, the first one's offset kept. */
static void note_error(cli *c, uint64_t off)
{
    if (!c->errors++ || off < c->first_error)
        c->first_error = off;
}

static void usage(FILE *f, const char *cmd)
{
    const bool decode = !strcmp(cmd, "decode");
    fprintf(
        f,
        "usage: tracekit %s --snapshot DIR [--id N] [--buffer NAME] [--trace-format F]\n"
        "       tracekit %s --trace FILE [--trace-format F] [--reg R=V]... [--mem ADDR:FILE]...\n"
        "                [--id N]\n"
        "%s"
        "Arm CoreSight ETMv4/ETE trace: %s.\n"
        "%s"
        "  --stats N       print nothing per item: run N times over the buffer held in memory\n"
        "                  and report counts and throughput\n",
        cmd, cmd, decode ? "                [--format ranges|events] [--jobs N]\n" : "",
        decode ? "the instructions executed, walked over the memory images" : "one line per packet",
        tk_cli_cs_help);
    if (decode)
        fprintf(f, "  --format ranges one line per executed range: <id> <first> <last> <count>\n"
                   "  --format events every event (default)\n"
                   "  -j, --jobs N    decode on N threads: the trace is cut before A-Syncs, the\n"
                   "                  pieces decoded on N threads and stitched so the output\n"
                   "                  equals the serial decode. One trace ID (--id when the\n"
                   "                  buffer has several sources, else one thread); ETB/ETR\n"
                   "                  frames hand over to the serial decode at a bad packet\n"
                   "  --piece-size B  with --jobs: trace bytes per piece (default 128 KiB)\n");
    fprintf(f,
            "exit status: 0; 1 when the trace has errors (%s): the last line on\n"
            "  stderr counts them and gives the first one's byte offset; 2 for a usage error\n",
            decode ? "decode errors" : "bad packets, framing errors");
    fprintf(f,
            "example: tracekit %s --snapshot ../shared/testdata/opencsd/snapshots/juno_r1_1 "
            "--id 0x10\n",
            cmd);
}

/* "<byte offset>\t0x<id, two digits at least>\t" at the start of a line of the listing. */
static char *line_start(cli *c, uint64_t offset, uint32_t id)
{
    char *q = tk_put_dec(tk_obuf_line(c->lines), offset);
    memcpy(q, "\t0x", 3);
    q += 3;
    if (id < 0x10)
        *q++ = '0';
    q = tk_put_hex(q, id);
    *q++ = '\t';
    return q;
}

/* The rest of a line whose start line_start wrote: text, which may be long (an error's
 * message), and the newline. */
static void line_end(cli *c, char *q, const char *text, size_t len)
{
    if (len <= 64) {
        memcpy(q, text, len);
        q[len] = '\n';
        tk_obuf_done(c->lines, q + len + 1);
        return;
    }
    tk_obuf_done(c->lines, q);
    tk_obuf_mem(c->lines, text, len);
    tk_obuf_mem(c->lines, "\n", 1);
}

static tk_status print_packet(void *ctx, const tk_etm4_packet *p)
{
    cli *c = ctx;
    char text[256];
    if (tk_etm4_pkt_is_error(p))
        note_error(c, p->index); /* listed as the parser gives it; the exit status says it */
    const int n = tk_etm4_pkt_format(p, text, sizeof(text));
    line_end(c, line_start(c, p->index, p->trace_id), text,
             n < 0                      ? 0
             : (size_t)n < sizeof(text) ? (size_t)n
                                        : sizeof(text) - 1);
    return TK_OK;
}

/* Before a message on stderr: the listing so far out, so that on a terminal the message
 * comes after the lines before it, as it did when each line was printed at once. */
static void before_stderr(cli *c)
{
    if (c->err == stderr) {
        tk_obuf_flush(c->lines);
        fflush(c->out);
    }
}

/* An error event: counted, and a line on err. */
static void print_error(cli *c, const tk_event *ev)
{
    before_stderr(c);
    note_error(c, ev->byte_offset);
    c->mismatches += ev->status == TK_ERR_MISMATCH || ev->status == TK_ERR_BAD_INSN;
    fprintf(c->err, "[%llu, 0x%llx: %s: %s]\n", (unsigned long long)ev->byte_offset,
            (unsigned long long)ev->first, tk_strerror(ev->status), ev->message ? ev->message : "");
}

/* "<first> 0x<last> <ninsn>" of a range, both listings' (after their "0x"). */
static inline char *put_range_fields(char *p, const tk_event *ev)
{
    p = tk_put_hex(p, ev->first);
    memcpy(p, " 0x", 3);
    p = tk_put_hex(p + 3, ev->last);
    *p = ' ';
    return tk_put_dec(p + 1, ev->ninsn);
}

/* A range line of --format ranges, "0x%x 0x%llx 0x%llx %llu\n", formatted by hand and
 * written in large blocks: millions of lines (an fwrite each was 60% of a run; the fields by
 * tk_put_hex/tk_put_dec most of the rest). The "0x<id> 0x" start is made once per trace ID. */
static inline void put_range_line(cli *c, const tk_event *ev)
{
    if (TK_UNLIKELY(c->prefix_id != (int64_t)ev->trace_id)) {
        char t[32]; /* (tk_put_hex stores 8 bytes at a time) */
        memcpy(t, "0x", 2);
        char *q = tk_put_hex(t + 2, ev->trace_id);
        memcpy(q, " 0x", 3);
        c->prefix_len = (unsigned)(q + 3 - t); /* at most 13 */
        memcpy(c->prefix_text, t, sizeof(c->prefix_text));
        c->prefix_id = (int64_t)ev->trace_id;
    }
    char *p = tk_obuf_line(c->lines);
    memcpy(p, c->prefix_text, sizeof(c->prefix_text));
    p = put_range_fields(p + c->prefix_len, ev);
    *p++ = '\n';
    tk_obuf_done(c->lines, p);
}

/* --format ranges: range lines, and errors to err. */
static tk_status print_range(void *ctx, const tk_event *ev)
{
    cli *c = ctx;
    if (TK_LIKELY(ev->kind == TK_EV_RANGE)) {
        put_range_line(c, ev);
        return TK_OK;
    }
    if (ev->kind == TK_EV_ERROR)
        print_error(c, ev);
    return TK_OK;
}

static tk_status print_event(void *ctx, const tk_event *ev)
{
    cli *c = ctx;
    if (c->format_ranges)
        return print_range(ctx, ev);
    if (ev->kind == TK_EV_ERROR)
        print_error(c, ev);
    char text[512];
    int n;
    switch (ev->kind) {
    case TK_EV_RANGE: {
        /* most lines: formatted in place */
        char *q = line_start(c, ev->byte_offset, ev->trace_id);
        memcpy(q, "range 0x", 8);
        q = put_range_fields(q + 8, ev);
        if (ev->taken) {
            memcpy(q, " taken", 6);
            q += 6;
        }
        *q++ = '\n';
        tk_obuf_done(c->lines, q);
        return TK_OK;
    }
    case TK_EV_TRAP:
        n = snprintf(text, sizeof(text), "exception %u ret 0x%llx", ev->cause,
                     (unsigned long long)ev->first);
        break;
    case TK_EV_CONTEXT:
        n = snprintf(text, sizeof(text), "context el=%u cid=0x%llx", ev->priv,
                     (unsigned long long)ev->context);
        break;
    case TK_EV_TRACE_ON:
        n = snprintf(text, sizeof(text), "trace-on");
        break;
    case TK_EV_TIMESTAMP:
        n = snprintf(text, sizeof(text), "timestamp 0x%llx", (unsigned long long)ev->time);
        break;
    case TK_EV_LOST:
        n = snprintf(text, sizeof(text), "overflow");
        break;
    case TK_EV_ERROR:
        n = snprintf(text, sizeof(text), "error %s",
                     ev->message ? ev->message : tk_strerror(ev->status));
        break;
    default:
        return TK_OK;
    }
    line_end(c, line_start(c, ev->byte_offset, ev->trace_id), text,
             n < 0                      ? 0
             : (size_t)n < sizeof(text) ? (size_t)n
                                        : sizeof(text) - 1);
    return TK_OK;
}

static tk_status count_packet(void *ctx, const tk_etm4_packet *p)
{
    cli *c = ctx;
    c->packets++;
    (void)p;
    return TK_OK;
}

/* Compact records with the atoms in runs: each stands for tk_etm4_lite_packets packets. */
static tk_status count_packets(void *ctx, const tk_etm4_pkt_lite *p, size_t n)
{
    cli *c = ctx;
    c->packets += tk_etm4_lite_count_packets(p, n);
    return TK_OK;
}

static tk_status count_event(void *ctx, const tk_event *ev)
{
    cli *c = ctx;
    if (ev->kind == TK_EV_RANGE) {
        c->ranges++;
        c->insns += ev->ninsn;
    } else if (ev->kind == TK_EV_ERROR) {
        c->errors++;
    }
    return TK_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: fair on a busy machine */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The buffer tk_etm4_run_snapshot would pick. */
static int pick_buffer(const tk_cs_snapshot *ss, int b)
{
    return b >= 0 ? b : tk_cs_snapshot_default_buffer(ss);
}

/* --stats: time the pipeline over the in-memory buffer (file reading excluded). */
static int stats(const char *cmd, tk_cs_snapshot *ss, tk_etm4_run_opts *o, cli *c, long repeat)
{
    int b = pick_buffer(ss, o->buffer);
    if (b < 0 || (size_t)b >= ss->nbuffers) {
        fprintf(stderr, "tracekit %s: no ETMv4 trace buffer\n", cmd);
        return 1;
    }
    size_t len;
    uint8_t *data;
    tk_diag rd;
    tk_diag_clear(&rd);
    if (tk_cs_buffer_read(&ss->buffers[b], &data, &len, &rd)) {
        fprintf(stderr, "tracekit %s: %s\n", cmd, rd.message);
        return 1;
    }
    o->buffer = b;
    o->data = data;
    o->data_len = len;
    o->on_packet = o->decode ? NULL : count_packet;
    o->on_packets = o->decode ? NULL : count_packets; /* the parser's batch mode */
    o->atom_runs = true;
    o->on_event = count_event;
    tk_diag diag;
    tk_diag_clear(&diag);
    double best = 1e30;
    tk_status st = TK_OK;
    for (long i = 0; i < repeat && !st; i++) {
        c->packets = c->ranges = c->insns = c->errors = 0;
        double t0 = now();
        st = tk_etm4_run_snapshot(ss, o, &diag);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    free(data);
    if (st) {
        fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st), diag.message);
        return 1;
    }
    printf("bytes %zu seconds %.6f MB/s %.1f", len, best, (double)len / best / 1e6);
    if (o->decode)
        printf(" ranges %llu instructions %llu Minsn/s %.1f", c->ranges, c->insns,
               (double)c->insns / best / 1e6);
    else
        printf(" packets %llu Mpkt/s %.1f", c->packets, (double)c->packets / best / 1e6);
    printf(" errors %lu\n", c->errors);
    return 0;
}

static tk_status frame_error(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    cli *c = ctx;
    note_error(c, offset);
    before_stderr(c);
    fprintf(stderr, "[%llu: %s: %s]\n", (unsigned long long)offset, tk_strerror(st), msg);
    return TK_OK;
}

/* --jobs: one piece's events, printed into memory and written out in trace order. The
 * buffers are kept for later pieces: a fresh one per piece cost a page fault every 4 KiB. */
typedef struct membuf {
    char *p;
    size_t len, cap;
} membuf;

static ssize_t membuf_write(void *cookie, const char *buf, size_t n)
{
    membuf *m = cookie;
    if (TK_GROW(m->p, m->len, m->cap, m->len + n))
        return -1;
    memcpy(m->p + m->len, buf, n);
    m->len += n;
    return (ssize_t)n;
}

typedef struct piece_out {
    cli c; /* first: the sink is &c */
    membuf err;
    tk_obuf lines;          /* its listing, formatted in place (memory mode) */
    struct piece_out *next; /* in the pool */
} piece_out;

typedef struct jobs_ctx {
    cli *c;
    pthread_mutex_t mu; /* the pool: sinks are made on worker threads */
    piece_out *pool;
} jobs_ctx;

static void piece_free(piece_out *p)
{
    if (p->c.err)
        fclose(p->c.err);
    free(p->err.p);
    tk_obuf_free_mem(&p->lines);
    free(p);
}

/* Back to the pool, emptied. */
static void piece_drop(void *ctx, void *sink)
{
    jobs_ctx *j = ctx;
    piece_out *p = sink;
    tk_obuf_clear_mem(&p->lines); /* its lines are dropped too */
    fflush(p->c.err);
    p->err.len = 0;
    pthread_mutex_lock(&j->mu);
    p->next = j->pool;
    j->pool = p;
    pthread_mutex_unlock(&j->mu);
}

static tk_status piece_new(void *ctx, tk_event_fn *fn, void **sink)
{
    jobs_ctx *j = ctx;
    pthread_mutex_lock(&j->mu);
    piece_out *p = j->pool;
    if (p)
        j->pool = p->next;
    pthread_mutex_unlock(&j->mu);
    if (!p) {
        const cookie_io_functions_t io = {.write = membuf_write};
        if (!(p = calloc(1, sizeof(*p))))
            return TK_ERR_NOMEM;
        tk_obuf_init_mem(&p->lines);
        p->c.err = fopencookie(&p->err, "w", io);
        if (!p->c.err) {
            piece_free(p);
            return TK_ERR_NOMEM;
        }
    }
    p->c.format_ranges = j->c->format_ranges;
    p->c.lines = &p->lines;
    p->c.errors = p->c.mismatches = 0;
    p->c.first_error = 0;
    p->c.prefix_id = -1;
    *fn = p->c.format_ranges ? print_range : print_event;
    *sink = &p->c;
    return TK_OK;
}

static tk_status piece_done(void *ctx, void *sink, uint64_t packet_base)
{
    jobs_ctx *j = ctx;
    cli *c = j->c;
    (void)packet_base; /* the listing has byte offsets, not packet indexes */
    piece_out *p = sink;
    if (p->lines.failed || fflush(p->c.err))
        return TK_ERR_NOMEM;
    if (p->c.errors && (!c->errors || p->c.first_error < c->first_error))
        c->first_error = p->c.first_error;
    c->errors += p->c.errors;
    c->mismatches += p->c.mismatches;
    if (p->err.len)
        fwrite(p->err.p, 1, p->err.len, c->err);
    bool ok = true;
    if (p->lines.n) {
        tk_obuf_flush(c->lines); /* (empty: the serial part before the pieces) */
        ok = fwrite(p->lines.p, 1, p->lines.n, c->out) == p->lines.n;
    }
    piece_drop(ctx, p);
    return ok ? TK_OK : TK_ERR_IO;
}

/* decode --jobs N: in parallel when the buffer's selection is one source, else serially. */
static tk_status decode_jobs(const char *cmd, const tk_cs_snapshot *ss, tk_etm4_run_opts *o, cli *c,
                             unsigned jobs, size_t piece, tk_diag *diag)
{
    jobs_ctx j = {.c = c, .pool = NULL};
    pthread_mutex_init(&j.mu, NULL);
    /* Each piece's listing is held until its turn: 128 KiB of trace make about 7 MB of
     * ranges (smaller pieces cost more in threads than they save in memory). */
    tk_etm4_par_config pc = {.size = sizeof(pc),
                             .jobs = jobs,
                             .piece_bytes = piece ? piece : 128u << 10,
                             .ctx = &j,
                             .sink_new = piece_new,
                             .sink_done = piece_done,
                             .sink_drop = piece_drop};
    tk_status st = tk_etm4_decode_parallel(ss, o, &pc, NULL, diag);
    while (j.pool) {
        piece_out *p = j.pool;
        j.pool = p->next;
        piece_free(p);
    }
    pthread_mutex_destroy(&j.mu);
    if (st != TK_ERR_UNSUPPORTED)
        return st;
    fprintf(stderr, "tracekit %s: --jobs: %s; decoding on one thread\n", cmd, diag->message);
    tk_diag_clear(diag);
    return tk_etm4_run_snapshot(ss, o, diag);
}

static int run(int argc, char **argv, const char *cmd, int decode)
{
    const char *format = "events";
    tk_cli_cs in;
    tk_cli_cs_init(&in);
    long repeat = 0;
    unsigned long jobs = 1, piece = 0;
    /* --help anywhere, even where an option wants its value ("--snapshot --help"). */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout, cmd);
            return 0;
        }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = tk_cli_cs_parse(&in, cmd, argc, argv, &i);
        if (k < 0)
            return 2;
        if (k)
            continue;
        if (i + 1 >= argc) {
            fprintf(stderr, "tracekit %s: option %s needs a value\n", cmd, a);
            return 2;
        }
        if (!strcmp(a, "--format") && decode)
            format = argv[++i];
        else if ((!strcmp(a, "--jobs") || !strcmp(a, "-j") || !strcmp(a, "--piece-size")) &&
                 decode) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 0);
            if (*end || !*argv[i] || !v || v > (a[2] == 'p' ? 1ul << 30 : 256)) {
                fprintf(stderr, "tracekit %s: bad %s '%s'\n", cmd, a, argv[i]);
                return 2;
            }
            *(a[2] == 'p' ? &piece : &jobs) = v;
        } else if (!strcmp(a, "--stats")) {
            repeat = strtol(argv[++i], NULL, 0);
            if (repeat < 1 || repeat > 100000) {
                fprintf(stderr, "tracekit %s: bad --stats count '%s'\n", cmd, argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "tracekit %s: unknown option '%s'\n", cmd, a);
            usage(stderr, cmd);
            return 2;
        }
    }
    if (strcmp(format, "ranges") && strcmp(format, "events")) {
        fprintf(stderr, "tracekit %s: unknown format '%s'\n", cmd, format);
        return 2;
    }
    tk_cs_snapshot *ss;
    int b;
    int rc = tk_cli_cs_open(&in, cmd, &ss, &b);
    if (rc) {
        if (rc == 2)
            usage(stderr, cmd);
        return rc;
    }
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st;
    tk_obuf *ranges = malloc(sizeof(*ranges));
    if (!ranges) {
        fprintf(stderr, "tracekit %s: out of memory\n", cmd);
        tk_cs_snapshot_free(ss);
        return 1;
    }
    tk_obuf_init(ranges, stdout);
    cli c = {.out = stdout,
             .err = stderr,
             .format_ranges = !strcmp(format, "ranges"),
             .prefix_id = -1,
             .lines = ranges};
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = b;
    o.id = (int)in.id;
    o.decode = decode;
    o.on_packet = decode ? NULL : print_packet;
    o.on_event = c.format_ranges ? print_range : print_event;
    o.on_frame_error = frame_error;
    o.ctx = &c;
    if (repeat) {
        rc = stats(cmd, ss, &o, &c, repeat);
        tk_cs_snapshot_free(ss);
        free(ranges);
        return rc;
    }
    st = jobs > 1 ? decode_jobs(cmd, ss, &o, &c, (unsigned)jobs, piece, &diag)
                  : tk_etm4_run_snapshot(ss, &o, &diag);
    tk_obuf_flush(ranges);
    free(ranges);
    tk_cs_snapshot_free(ss);
    if (st) {
        fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st), diag.message);
        return 1;
    }
    if (!c.errors)
        return 0;
    if (!decode) {
        /* The listing is complete; bad packets and framing errors make the exit status 1, as
         * for `tracekit decode`, with a line that says so (the packets are in the listing). */
        fprintf(stderr,
                "tracekit dump: %lu bad packets or framing errors, the first at byte "
                "offset %llu\n",
                c.errors, c.first_error);
        return 1;
    }
    /* As `tracekit decode` of E-Trace: everything decodable was written, errors make the
     * exit status 1, and a trace that does not fit the code is named as such. */
    if (c.mismatches)
        fprintf(stderr,
                "tracekit %s: %lu places where the trace does not fit the memory images: are "
                "they the traced program's, loaded at the traced addresses?\n",
                cmd, c.mismatches);
    fprintf(stderr, "tracekit %s: %lu errors in all, the first at byte offset %llu\n", cmd,
            c.errors, c.first_error);
    return 1;
}

int tk_cmd_dump_snapshot(int argc, char **argv)
{
    return run(argc, argv, "dump", 0);
}

int tk_cmd_decode_snapshot(int argc, char **argv)
{
    return run(argc, argv, "decode", 1);
}
