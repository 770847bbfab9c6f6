/* SPDX-License-Identifier: BSD-2-Clause */
#include "cs_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

const char tk_cli_cs_help[] =
    "  --snapshot DIR  DS-5 snapshot directory (snapshot.ini, trace.ini, device .ini)\n"
    "  --trace FILE    a bare trace file instead of a snapshot; its ETMv4 configuration\n"
    "                  comes from --reg (defaults: a Cortex-A53 ETMv4.0: TRCCONFIGR=0xc1\n"
    "                  TRCIDR0=0x28000ea1 TRCIDR1=0x4100f403 TRCIDR2=0x488, TRCIDR8=0);\n"
    "                  TRCDEVARCH with ARCHVER (bits [15:12]) 5 makes it ETE\n"
    "  --trace-format F  how the trace is framed: framed (ETB/ETR formatter frames,\n"
    "                  memory aligned; the default for --trace), dstream (DSTREAM\n"
    "                  capture: frames with FSYNCs in 512-byte blocks ending with an\n"
    "                  8-byte footer), tpiu (frames with FSYNCs), tpiu-hsync (FSYNCs\n"
    "                  between and HSYNCs inside frames) or raw (one unformatted source;\n"
    "                  needs --id). With --snapshot it overrides trace.ini's format=\n"
    "  --reg R=V       register value, e.g. --reg TRCIDR0=0x28000ea1\n"
    "  --mem ADDR:FILE program image FILE loaded at ADDR (repeatable; with --snapshot\n"
    "                  in addition to its images, for every core)\n"
    "  --id N          only trace ID N (decimal or 0x hex)\n"
    "  --buffer NAME   trace buffer to read (default: the first with an ETMv4 source)\n";

void tk_cli_cs_init(tk_cli_cs *c)
{
    memset(c, 0, sizeof(*c));
    c->regs = (tk_cs_etm_regs){.configr = 0xc1, .idr = {0x28000ea1, 0x4100f403, 0x488}};
    c->id = -1;
}

bool tk_cs_cli_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--snapshot") || !strcmp(argv[i], "--trace"))
            return true;
    return false;
}

/* --reg NAME=VALUE */
static int parse_reg(tk_cli_cs *c, const char *cmd, const char *arg)
{
    char name[64], *end;
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : 0;
    unsigned long v = eq ? strtoul(eq + 1, &end, 0) : 0;
    if (!eq || n >= sizeof(name) || *end || eq[1] == 0) {
        fprintf(stderr, "tracekit %s: --reg wants NAME=VALUE, not '%s'\n", cmd, arg);
        return -1;
    }
    memcpy(name, arg, n);
    name[n] = 0;
    if (tk_cs_etm_regs_set(&c->regs, name, (uint32_t)v)) {
        fprintf(stderr, "tracekit %s: unknown register '%s'\n", cmd, name);
        return -1;
    }
    return 1;
}

int tk_cli_cs_parse(tk_cli_cs *c, const char *cmd, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--snapshot", "--buffer", "--trace", "--trace-format",
                                        "--mem",      "--reg",    "--id"};
    const char *a = argv[*i];
    size_t k = 0;
    while (k < sizeof(names) / sizeof(names[0]) && strcmp(a, names[k]))
        k++;
    if (k == sizeof(names) / sizeof(names[0]))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "tracekit %s: option %s needs a value\n", cmd, a);
        return -1;
    }
    const char *v = argv[++*i];
    switch (k) {
    case 0:
        c->dir = v;
        return 1;
    case 1:
        c->buffer = v;
        return 1;
    case 2:
        c->trace = v;
        return 1;
    case 3:
        c->trace_format = v;
        return 1;
    case 4:
        if (c->nmem == TK_CLI_CS_MAX_MEM) {
            fprintf(stderr, "tracekit %s: too many --mem options\n", cmd);
            return -1;
        }
        c->mems[c->nmem++] = v;
        return 1;
    case 5:
        return parse_reg(c, cmd, v);
    default: {
        char *end;
        c->id = strtol(v, &end, 0);
        if (!*v || *end || c->id < 0 || c->id > 0x7f) {
            fprintf(stderr, "tracekit %s: bad trace ID '%s'\n", cmd, v);
            return -1;
        }
        return 1;
    }
    }
}

/* --trace-format NAME; 0 if unknown. */
static tk_cs_buffer_format format_named(const char *name)
{
    static const struct {
        const char *name;
        tk_cs_buffer_format format;
    } names[] = {
        {"framed", TK_CS_FMT_FRAMED}, {"dstream", TK_CS_FMT_DSTREAM},
        {"tpiu", TK_CS_FMT_TPIU},     {"tpiu-hsync", TK_CS_FMT_TPIU_HSYNC},
        {"raw", TK_CS_FMT_RAW},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(name, names[i].name))
            return names[i].format;
    return 0;
}

/* The --mem images, added to every core's (a bare trace has one core). */
static int add_mems(const tk_cli_cs *c, const char *cmd, tk_cs_snapshot *ss, tk_diag *diag)
{
    for (int m = 0; m < c->nmem; m++) {
        char *end;
        uint64_t addr = strtoull(c->mems[m], &end, 0);
        if (*end != ':' || !end[1]) {
            fprintf(stderr, "tracekit %s: --mem wants ADDR:FILE, not '%s'\n", cmd, c->mems[m]);
            return 2;
        }
        for (size_t k = 0; k < ss->ncores; k++) {
            tk_status st = tk_cs_mem_add_file(ss->cores[k].mem, addr, end + 1, 0, 0, diag);
            if (st) {
                fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st), diag->message);
                return 1;
            }
        }
    }
    return 0;
}

int tk_cli_cs_open(const tk_cli_cs *c, const char *cmd, tk_cs_snapshot **out, int *buffer)
{
    *out = NULL;
    *buffer = -1;
    if (!c->dir == !c->trace) {
        fprintf(stderr, "tracekit %s: %s\n", cmd,
                c->dir ? "--snapshot and --trace exclude each other: a snapshot names its own "
                         "trace files"
                       : "give --snapshot DIR or --trace FILE");
        return 2;
    }
    tk_cs_buffer_format f = c->trace_format ? format_named(c->trace_format) : TK_CS_FMT_FRAMED;
    if (!f || (c->trace && f == TK_CS_FMT_RAW && c->id < 0)) {
        fprintf(stderr, "tracekit %s: %s\n", cmd,
                f ? "--trace-format raw needs --id"
                  : "unknown --trace-format (framed, dstream, tpiu, tpiu-hsync or raw)");
        return 2;
    }
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_cs_snapshot *ss = NULL;
    tk_status st = c->trace ? tk_cs_snapshot_from_file(c->trace, f, &c->regs, (int)c->id, &ss)
                            : tk_cs_snapshot_load(c->dir, &ss, &diag);
    if (st) {
        fprintf(stderr, "tracekit %s: %s: %s\n", cmd, tk_strerror(st),
                diag.message[0] ? diag.message : c->trace);
        return 1;
    }
    int rc = add_mems(c, cmd, ss, &diag);
    if (rc) {
        tk_cs_snapshot_free(ss);
        return rc;
    }
    int b = -1;
    if (c->buffer) {
        for (size_t i = 0; i < ss->nbuffers; i++)
            if (!strcmp(ss->buffers[i].name, c->buffer))
                b = (int)i;
        if (b < 0) {
            fprintf(stderr, "tracekit %s: no trace buffer '%s'\n", cmd, c->buffer);
            tk_cs_snapshot_free(ss);
            return 1;
        }
    }
    /* With a snapshot, --trace-format says how the buffer read is framed, whatever trace.ini
     * says (as trc_pkt_lister's -tpiu and -tpiu_hsync). */
    const int fb =
        c->dir && c->trace_format ? (b >= 0 ? b : tk_cs_snapshot_default_buffer(ss)) : -1;
    if (fb >= 0)
        ss->buffers[fb].format = f;
    for (size_t i = 0; i < ss->nsources; i++) {
        const tk_cs_source *s = &ss->sources[i];
        if (!tk_cs_protocol_is_etm4(s->protocol) && (c->id < 0 || s->trace_id == c->id))
            fprintf(stderr, "tracekit %s: skipping %s (trace ID 0x%x): %s is not decoded\n", cmd,
                    s->name, s->trace_id, tk_cs_protocol_name(s->protocol));
    }
    *out = ss;
    *buffer = b;
    return 0;
}
