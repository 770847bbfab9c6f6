/* SPDX-License-Identifier: BSD-2-Clause */
/* `tracekit dump --snapshot DIR` and `tracekit decode --snapshot DIR`: CoreSight ETMv4. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tracekit/etm4.h"

typedef struct cli {
    FILE *out;
    int format_ranges;
    unsigned long errors;
} cli;

static void usage(FILE *f, const char *cmd)
{
    fprintf(f,
            "usage: tracekit %s --snapshot DIR [--id N] [--buffer NAME]%s\n"
            "  --snapshot DIR  DS-5 snapshot directory (snapshot.ini, trace.ini, device .ini)\n"
            "  --id N          only trace ID N (decimal or 0x hex)\n"
            "  --buffer NAME   trace buffer to read (default: the first with an ETMv4 source)\n",
            cmd, strcmp(cmd, "decode") ? "" : " [--format ranges|events]");
    if (!strcmp(cmd, "decode"))
        fprintf(f, "  --format ranges one line per executed range: <id> <first> <last> <count>\n"
                   "  --format events every event (default)\n");
    fprintf(f, "example: tracekit %s --snapshot testdata/opencsd/snapshots/juno_r1_1 --id 0x10\n",
            cmd);
}

static tk_status print_packet(void *ctx, const tk_etm4_packet *p)
{
    cli *c = ctx;
    char text[256];
    tk_etm4_pkt_format(p, text, sizeof(text));
    fprintf(c->out, "%llu\t0x%02x\t%s\n", (unsigned long long)p->index, p->trace_id, text);
    return TK_OK;
}

static tk_status print_event(void *ctx, const tk_event *ev)
{
    cli *c = ctx;
    if (ev->kind == TK_EV_ERROR) {
        c->errors++;
        fprintf(stderr, "[%llu, 0x%llx: %s: %s]\n", (unsigned long long)ev->byte_offset,
                (unsigned long long)ev->first, tk_strerror(ev->status),
                ev->message ? ev->message : "");
    }
    if (c->format_ranges) {
        if (ev->kind == TK_EV_RANGE)
            fprintf(c->out, "0x%x 0x%llx 0x%llx %llu\n", ev->trace_id,
                    (unsigned long long)ev->first, (unsigned long long)ev->last,
                    (unsigned long long)ev->ninsn);
        return TK_OK;
    }
    switch (ev->kind) {
    case TK_EV_RANGE:
        fprintf(c->out, "%llu\t0x%02x\trange 0x%llx 0x%llx %llu%s\n",
                (unsigned long long)ev->byte_offset, ev->trace_id, (unsigned long long)ev->first,
                (unsigned long long)ev->last, (unsigned long long)ev->ninsn,
                ev->taken ? " taken" : "");
        break;
    case TK_EV_TRAP:
        fprintf(c->out, "%llu\t0x%02x\texception %u ret 0x%llx\n",
                (unsigned long long)ev->byte_offset, ev->trace_id, ev->cause,
                (unsigned long long)ev->first);
        break;
    case TK_EV_CONTEXT:
        fprintf(c->out, "%llu\t0x%02x\tcontext el=%u cid=0x%llx\n",
                (unsigned long long)ev->byte_offset, ev->trace_id, ev->priv,
                (unsigned long long)ev->context);
        break;
    case TK_EV_TRACE_ON:
        fprintf(c->out, "%llu\t0x%02x\ttrace-on\n", (unsigned long long)ev->byte_offset,
                ev->trace_id);
        break;
    case TK_EV_TIMESTAMP:
        fprintf(c->out, "%llu\t0x%02x\ttimestamp 0x%llx\n", (unsigned long long)ev->byte_offset,
                ev->trace_id, (unsigned long long)ev->time);
        break;
    case TK_EV_LOST:
        fprintf(c->out, "%llu\t0x%02x\toverflow\n", (unsigned long long)ev->byte_offset,
                ev->trace_id);
        break;
    case TK_EV_ERROR:
        fprintf(c->out, "%llu\t0x%02x\terror %s\n", (unsigned long long)ev->byte_offset,
                ev->trace_id, ev->message ? ev->message : tk_strerror(ev->status));
        break;
    default:
        break;
    }
    return TK_OK;
}

static tk_status frame_error(void *ctx, tk_status st, uint64_t offset, const char *msg)
{
    cli *c = ctx;
    c->errors++;
    fprintf(stderr, "[%llu: %s: %s]\n", (unsigned long long)offset, tk_strerror(st), msg);
    return TK_OK;
}

static int run(int argc, char **argv, const char *cmd, int decode)
{
    const char *dir = NULL, *buffer = NULL, *format = "events";
    long id = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout, cmd);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "tracekit %s: option %s needs a value\n", cmd, a);
            return 2;
        }
        if (!strcmp(a, "--snapshot"))
            dir = argv[++i];
        else if (!strcmp(a, "--buffer"))
            buffer = argv[++i];
        else if (!strcmp(a, "--format") && decode)
            format = argv[++i];
        else if (!strcmp(a, "--id")) {
            char *end;
            id = strtol(argv[++i], &end, 0);
            if (*end || id < 0 || id > 0x7f) {
                fprintf(stderr, "tracekit %s: bad trace ID '%s'\n", cmd, argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "tracekit %s: unknown option '%s'\n", cmd, a);
            usage(stderr, cmd);
            return 2;
        }
    }
    if (!dir) {
        usage(stderr, cmd);
        return 2;
    }
    if (strcmp(format, "ranges") && strcmp(format, "events")) {
        fprintf(stderr, "tracekit %s: unknown format '%s'\n", cmd, format);
        return 2;
    }
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_cs_snapshot *ss;
    tk_status st = tk_cs_snapshot_load(dir, &ss, &diag);
    if (st) {
        fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st), diag.message);
        return 1;
    }
    int b = -1;
    if (buffer) {
        for (size_t i = 0; i < ss->nbuffers; i++)
            if (!strcmp(ss->buffers[i].name, buffer))
                b = (int)i;
        if (b < 0) {
            fprintf(stderr, "tracekit %s: no trace buffer '%s'\n", cmd, buffer);
            tk_cs_snapshot_free(ss);
            return 1;
        }
    }
    for (size_t i = 0; i < ss->nsources; i++) {
        const tk_cs_source *s = &ss->sources[i];
        if (s->protocol != TK_CS_PROTO_ETM4 && (id < 0 || s->trace_id == id))
            fprintf(stderr, "tracekit %s: skipping %s (trace ID 0x%x): %s is not decoded\n", cmd,
                    s->name, s->trace_id, tk_cs_protocol_name(s->protocol));
    }
    cli c = {stdout, !strcmp(format, "ranges"), 0};
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = b;
    o.id = (int)id;
    o.decode = decode;
    o.on_packet = decode ? NULL : print_packet;
    o.on_event = print_event;
    o.on_frame_error = frame_error;
    o.ctx = &c;
    st = tk_etm4_run_snapshot(ss, &o, &diag);
    tk_cs_snapshot_free(ss);
    if (st) {
        fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st), diag.message);
        return 1;
    }
    return 0;
}

int tk_cmd_dump_snapshot(int argc, char **argv)
{
    return run(argc, argv, "dump", 0);
}

int tk_cmd_decode_snapshot(int argc, char **argv)
{
    return run(argc, argv, "decode", 1);
}
