/* SPDX-License-Identifier: BSD-2-Clause */
/* tracekit dump: one te_inst packet per line with its byte offset, like ptdump. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "legacy_cmds.h"
#include "encap_option.h"
#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"
#include "util/hex.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: tracekit dump --scf FILE.scf [--ucf FILE.ucf] [options] IN.te_inst_raw\n"
        "       tracekit dump --snapshot DIR ...   (Arm CoreSight ETMv4/ETE snapshot)\n"
        "       tracekit dump --trace FILE ...     (CoreSight trace file; see\n"
        "                     'tracekit dump --snapshot --help' for both)\n"
        "\n"
        "Print every E-Trace te_inst packet of a raw packet file (the reference flow's\n"
        ".te_inst_raw: per packet a header byte (type << 5) | length, then the payload),\n"
        "one per line: byte offset of the header, packet index, payload length, fields.\n"
        "Field widths come from the .scf; run-time options from the .ucf and from each\n"
        "support packet's ioptions (which override the .ucf from then on). A support\n"
        "packet that cannot come from the encoder (as the decoder judges it: undefined\n"
        "encoder_mode or ioptions bits, a mode the .scf's hardware lacks, options changed\n"
        "after a sync or after damage) is printed, followed by a line '! not applied' with\n"
        "its offset and the reason, and the options stay as they were.\n"
        "\n"
        "options:\n"
        "  --scf FILE     static parameters (*_p), reference .scf format (required)\n"
        "  --ucf FILE     run-time options, reference .ucf format\n"
        "  --spec VER     packet layout: 2.0 (default), 0.29 or 0.26\n"
        "  --trace-format F  etrace (default), nibble or rle (docs/formats.md)\n"
        "  --raw          also print the payload bytes\n"
        "  --csv          print the reference .te_inst CSV instead (as te_inst_deserialiser.py)\n"
        "  --keep-going   report damaged packets and continue after them where possible\n"
        "  --fixed-options  the .ucf's options are the encoder's: a support packet\n"
        "                 announcing others is not applied\n"
        "  --encap LAYOUT the general packet encapsulation (srcid-bits=N,\n"
        "                 timestamp-bytes=N[,type-bits=N][,framed=1]): the packets of\n"
        "                 --srcid N (default 0) are listed, with their timestamps ('ts=')\n"
        "  --srcid N      with --encap: the source (hart) to list\n"
        "  --srcid all    with --encap: every source's packets in stream order, each\n"
        "                 line tagged with its source ('src=N', before 'ts='); each\n"
        "                 source's options are those of its own support packets.\n"
        "                 Packets of another type (type-bits: data trace) are listed\n"
        "                 by type and length, not decoded, as with one source. At the\n"
        "                 end stderr has a summary: per source its te_inst packets,\n"
        "                 other types and damaged ones, then the totals (with packets\n"
        "                 of no known source and a cut end). Not with --csv\n"
        "  -h, --help     this text\n"
        "\n"
        "Errors are reported on stderr as 'FILE: offset N (packet I): reason' (with\n"
        "--srcid all, 'srcID S: ' comes before the reason when the packet's source is\n"
        "known); every packet before the error is printed. Exit status: 0 success,\n"
        "1 damaged input, 2 usage.\n"
        "\n"
        "example:\n"
        "  tracekit dump --scf shared/testdata/etrace-ref/median/itype3_basic/median.scf \\\n"
        "      shared/testdata/etrace-ref/median/itype3_basic/median.te_inst_raw\n"
        "  0         #0     1   F3.3 support ienable=1 encoder_mode=0 qual_status=no_change "
        "ioptions=0x0\n"
        "  2         #1     7   F3.0 start branch=1 priv=3 context=0x0 addr=0x80000000\n"
        "\n"
        "  # every hart of a funnel's capture (docs/encapsulation.md)\n"
        "  tracekit dump --scf P.scf --encap srcid-bits=8,timestamp-bytes=2 --srcid all \\\n"
        "      funnel.bin\n"
        "  35        #0     1   src=3 F3.3 support ienable=1 encoder_mode=0 ...\n"
        "  38        #1     2   src=5 ts=0x0 F3.3 support ienable=1 encoder_mode=0 ...\n");
}

typedef struct dump_opts {
    const char *scf, *ucf, *in, *spec;
    bool raw, csv, keep_going, fixed_options;
    tk_cli_encap encap; /* encap.all_sources: --srcid all */
} dump_opts;

static int parse(int argc, char **argv, dump_opts *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **val = NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--scf")) {
            val = &o->scf;
        } else if (!strcmp(a, "--ucf")) {
            val = &o->ucf;
        } else if (!strcmp(a, "--spec")) {
            val = &o->spec;
        } else if (!strcmp(a, "--raw")) {
            o->raw = true;
        } else if (!strcmp(a, "--csv")) {
            o->csv = true;
        } else if (!strcmp(a, "--keep-going")) {
            o->keep_going = true;
        } else if (!strcmp(a, "--fixed-options")) {
            o->fixed_options = true;
        } else if ((!strcmp(a, "--encap") || !strcmp(a, "--srcid")) && i + 1 >= argc) {
            fprintf(stderr, "tracekit dump: %s needs a value\n", a);
            return 2;
        } else if (!strcmp(a, "--encap")) {
            if (tk_cli_encap_layout(&o->encap, "dump", argv[++i]))
                return 2;
        } else if (!strcmp(a, "--srcid")) {
            if (tk_cli_encap_srcid_or_all(&o->encap, "dump", argv[++i]))
                return 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "tracekit dump: unknown option '%s' (try --help)\n", a);
            return 2;
        } else if (!o->in) {
            o->in = a;
        } else {
            fprintf(stderr, "tracekit dump: more than one input file ('%s')\n", a);
            return 2;
        }
        if (val) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tracekit dump: %s needs a value\n", a);
                return 2;
            }
            *val = argv[++i];
        }
    }
    if (tk_cli_encap_check(&o->encap, "dump"))
        return 2;
    if (o->encap.all_sources && o->csv) {
        fprintf(stderr, "tracekit dump: --csv lists one source (the reference .te_inst CSV has "
                        "no source column): give --srcid N\n");
        return 2;
    }
    if (!o->in || !o->scf) {
        fprintf(stderr, "tracekit dump: %s is required (try --help)\n",
                !o->scf ? "--scf" : "an input file");
        return 2;
    }
    return -1;
}

static int load_params(const dump_opts *o, tk_te_params *p)
{
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_params_init(p);
    if (o->spec && tk_te_spec_parse(o->spec, &p->spec) != TK_OK) {
        fprintf(stderr, "tracekit dump: unknown --spec '%s' (2.0, 0.29 or 0.26)\n", o->spec);
        return 2;
    }
    if (tk_te_params_read_scf(p, o->scf, &d) != TK_OK ||
        (o->ucf && tk_te_params_read_ucf(p, o->ucf, NULL, &d) != TK_OK) ||
        tk_te_params_validate(p, &d) != TK_OK) {
        fprintf(stderr, "tracekit dump: %s\n", d.message);
        return 2;
    }
    return 0;
}

/* The packet in hand: from the raw framing, or (--encap) one of the source's. */
typedef struct dump_packet {
    tk_te_raw_packet rp;
    bool has_ts;
    uint64_t timestamp;
    uint32_t type;  /* --encap: the type field (0: instruction trace) */
    uint16_t srcid; /* --encap: the source */
} dump_packet;

/* The next packet of the selected source (--srcid all: of any source). With --encap, other
 * sources' packets are counted in st and skipped, null packets and sync sequences read over
 * (tk_te_encap_next). */
static tk_status next_packet(const dump_opts *o, tk_te_raw *r, tk_encap_reader *er,
                             tk_te_encap_stats *st, dump_packet *out, tk_diag *d)
{
    out->has_ts = false;
    if (!er)
        return tk_te_raw_next(r, &out->rp, d);
    tk_encap_packet ep;
    tk_status s = tk_te_encap_next(
        er, o->encap.all_sources ? TK_TE_ENCAP_ALL_SOURCES : o->encap.srcid, st, &ep, d);
    if (s != TK_OK) {
        if (s != TK_END) { /* the reader's message has the offset, not the file */
            char msg[sizeof(d->message)];
            memcpy(msg, d->message, sizeof(msg));
            tk_diag_set(d, s, "%s: %s", o->in, msg);
        }
        return s;
    }
    st->packets++;
    /* type 0 is instruction trace (none: all); flow only routes packets to sinks, so the
     * listing's "not te_inst" test is given the type's meaning */
    out->rp =
        (tk_te_raw_packet){.offset = ep.offset,
                           .index = ep.index,
                           .msg_type = ep.type ? TK_ENCAP_FLOW_TE_DATA : TK_ENCAP_FLOW_TE_INST,
                           .payload = ep.payload,
                           .len = ep.payload_len};
    out->has_ts = ep.extend;
    out->type = ep.type;
    out->srcid = ep.srcid;
    out->timestamp = ep.timestamp;
    return TK_OK;
}

/* --srcid all: the column naming the packet's source ("src=N ", before any "ts="), and the
 * same for messages ("srcID N: "); nothing with one source, whose listing is as it was. */
static void print_src(const dump_opts *o, const dump_packet *dp)
{
    if (o->encap.all_sources)
        printf("src=%u ", (unsigned)dp->srcid);
}

static const char *src_label(const dump_opts *o, const dump_packet *dp, char buf[16])
{
    buf[0] = 0;
    if (o->encap.all_sources)
        snprintf(buf, 16, "srcID %u: ", (unsigned)dp->srcid);
    return buf;
}

/* v in decimal, left-justified in width columns ("%-<width>" PRIu64); q needs width + 20
 * bytes of room. */
static char *pad_dec(char *q, uint64_t v, unsigned width)
{
    char *const end = tk_put_dec(q, v);
    char *const full = q + width;
    if (end >= full)
        return end;
    memset(end, ' ', (size_t)(full - end));
    return full;
}

static void print_packet(const dump_opts *o, const tk_te_params *p, const dump_packet *dp,
                         const tk_te_packet *k)
{
    const tk_te_raw_packet *rp = &dp->rp;
    if (o->csv) {
        tk_te_csv_write(stdout, p, k);
        return;
    }
    if (!o->encap.all_sources && !dp->has_ts && !o->raw) {
        /* the common line, made by hand and written at once (printf's parsing of its format
         * was most of a listing's time) */
        char line[640];
        char *q = pad_dec(line, rp->offset, 9);
        memcpy(q, " #", 2);
        q = pad_dec(q + 2, rp->index, 5);
        *q++ = ' ';
        q = pad_dec(q, rp->len, 3);
        *q++ = ' ';
        const size_t room = (size_t)(line + sizeof(line) - 1 - q);
        const int n = tk_te_packet_format(p, k, q, room);
        q += n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
        *q++ = '\n';
        fwrite_unlocked(line, 1, (size_t)(q - line), stdout);
        return;
    }
    char text[512];
    tk_te_packet_format(p, k, text, sizeof(text));
    printf("%-9" PRIu64 " #%-5" PRIu64 " %-3zu ", rp->offset, rp->index, rp->len);
    print_src(o, dp);
    if (dp->has_ts)
        printf("ts=0x%" PRIx64 " ", dp->timestamp);
    fputs(text, stdout);
    if (o->raw) {
        printf("  [");
        for (size_t i = 0; i < rp->len; i++)
            printf(i ? " %02x" : "%02x", rp->payload[i]);
        printf("]");
    }
    putchar('\n');
}

/* The reader's place in the trace for tk_te_support_check (TK_TE_SUPPORT_* flags), as the
 * flow decoder keeps it: a sync starts following the flow and clears damage, a clean end
 * (support packet with a qual_status) stops following it, an error or a refused support
 * packet is damage. */
enum { FOLLOWING = TK_TE_SUPPORT_FOLLOWING, DAMAGED = TK_TE_SUPPORT_DAMAGED };

static void mark_damaged(unsigned *state)
{
    *state = (*state & ~(unsigned)FOLLOWING) | DAMAGED;
}

/* A support packet (just printed): its ioptions applied to p if the encoder can have sent
 * it, otherwise reported and ignored. Returns false if refused. */
static bool support_packet(const dump_opts *o, tk_te_params *p, const dump_packet *dp,
                           const tk_te_packet *k, unsigned *state)
{
    const char *why = tk_te_support_check(p, k->encoder_mode, k->ioptions, *state);
    if (why) {
        const tk_te_raw_packet *rp = &dp->rp;
        if (!o->csv) {
            printf("%-9" PRIu64 " ", rp->offset);
            print_src(o, dp);
            printf("! not applied: %s\n", why);
        }
        fflush(stdout);
        char who[16];
        fprintf(stderr,
                "tracekit dump: %s: offset %" PRIu64 " (packet %" PRIu64
                "): %ssupport packet not applied (ioptions 0x%" PRIx32 ", options in use 0x%" PRIx32
                ", encoder_mode %u): %s\n",
                o->in, rp->offset, rp->index, src_label(o, dp, who), (uint32_t)k->ioptions,
                tk_te_params_ioptions(p), (unsigned)k->encoder_mode, why);
        mark_damaged(state);
        return false;
    }
    /* E-Trace 2.0 payload.adoc F3SF3: the support packet states the run-time options */
    tk_te_params_apply_ioptions(p, k->ioptions);
    if (k->qual_status != TK_QUAL_NO_CHANGE) /* the trace ended (or was lost) cleanly */
        *state &= ~(unsigned)(FOLLOWING | DAMAGED);
    return true;
}

/* One source's codec state: the options its support packets set (the codec reads them
 * through layout) and its place for tk_te_support_check. Every hart's encoder sends its own
 * support packets, so with --srcid all each source has its own. The counts are the summary's. */
typedef struct dump_source {
    tk_te_params p;
    tk_te_layout layout; /* reads p: the struct does not move */
    unsigned state;
    uint16_t srcid;
    uint64_t losses; /* dump_sources.losses already marked in state */
    uint64_t te_inst, other, damaged;
} dump_source;

/* The listing's sources. One source is start itself. With --srcid all, start holds the .scf and
 * .ucf options a source begins with, copied when the source's first packet comes; by_id finds
 * a source by srcID, seen lists them in the order of their first packet (both have room for
 * every srcID of the layout: 1 << srcid-bits).
 * A packet the reader rejects has no known source: as for one source, where such a loss is
 * that source's damage, it is every source's, marked when the source's next packet comes. */
typedef struct dump_sources {
    dump_source start;
    dump_source **by_id, **seen;
    size_t nseen;
    uint64_t losses;     /* packets the reader rejected or cut */
    uint64_t unreadable; /* of them, the rejected ones (the cut one is counted apart) */
} dump_sources;

static bool sources_init(dump_sources *ss, const tk_te_params *p, const dump_opts *o)
{
    memset(ss, 0, sizeof(*ss));
    ss->start.p = *p;
    tk_te_layout_init(&ss->start.layout, &ss->start.p);
    ss->start.state = o->fixed_options ? TK_TE_SUPPORT_FIXED_OPTIONS : 0;
    if (!o->encap.all_sources)
        return true;
    const size_t n = (size_t)1 << o->encap.cfg.srcid_bits;
    ss->by_id = calloc(n, sizeof(*ss->by_id));
    ss->seen = calloc(n, sizeof(*ss->seen));
    return ss->by_id && ss->seen;
}

static void sources_free(dump_sources *ss)
{
    for (size_t i = 0; i < ss->nseen; i++)
        free(ss->seen[i]);
    free(ss->seen);
    free(ss->by_id);
}

/* A new source, starting from ss->start; NULL if out of memory. */
static dump_source *source_add(dump_sources *ss, uint16_t srcid)
{
    dump_source *s = malloc(sizeof(*s));
    if (!s)
        return NULL;
    *s = ss->start;
    tk_te_layout_init(&s->layout, &s->p);
    s->srcid = srcid;
    return ss->by_id[srcid] = ss->seen[ss->nseen++] = s;
}

/* The packet's source, with the losses since its last packet marked; NULL if out of memory. */
static dump_source *source_of(dump_sources *ss, const dump_packet *dp)
{
    dump_source *s = &ss->start;
    if (ss->by_id && !(s = ss->by_id[dp->srcid]) && !(s = source_add(ss, dp->srcid)))
        return NULL;
    if (s->losses != ss->losses) {
        mark_damaged(&s->state);
        s->losses = ss->losses;
    }
    return s;
}

/* --srcid all: what each source had, then the whole stream (on stderr, after the listing). */
static void print_summary(const dump_opts *o, const dump_sources *ss, const tk_te_encap_stats *est)
{
    uint64_t te_inst = 0, other = 0, damaged = ss->unreadable;
    fflush(stdout);
    for (size_t i = 0; i < ss->nseen; i++) {
        const dump_source *s = ss->seen[i];
        te_inst += s->te_inst;
        other += s->other;
        damaged += s->damaged;
        if (i < TK_TE_ENCAP_MAX_SOURCES)
            fprintf(stderr,
                    "tracekit dump: %s: srcID %u: %" PRIu64 " te_inst packets, %" PRIu64
                    " of other types, %" PRIu64 " damaged\n",
                    o->in, (unsigned)s->srcid, s->te_inst, s->other, s->damaged);
    }
    if (ss->nseen > TK_TE_ENCAP_MAX_SOURCES)
        fprintf(stderr, "tracekit dump: %s: and %zu more sources\n", o->in,
                ss->nseen - TK_TE_ENCAP_MAX_SOURCES);
    fprintf(stderr,
            "tracekit dump: %s: %zu source%s: %" PRIu64 " te_inst packets, %" PRIu64
            " of other types, %" PRIu64 " damaged (%" PRIu64 " of no known source), %u cut by "
            "the end of the stream\n",
            o->in, ss->nseen, ss->nseen == 1 ? "" : "s", te_inst, other, damaged, ss->unreadable,
            est->truncated ? 1u : 0u);
}

int tk_cmd_dump(int argc, char **argv)
{
    if (tk_cs_cli_wanted(argc, argv)) /* CoreSight: --snapshot or --trace (cmd_coresight.c) */
        return tk_cmd_dump_snapshot(argc, argv);
    if (tk_legacy_wanted(argc, argv)) /* nibble / RLE trace (legacy_cmds.c) */
        return tk_legacy_cmd_dump(argc, argv);
    argc = tk_legacy_strip_etrace(argc, argv);
    dump_opts o;
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    tk_te_params p;
    if ((rc = load_params(&o, &p)) != 0)
        return rc;
    tk_diag d;
    tk_diag_clear(&d);
    tk_te_raw *r = NULL;
    if (tk_te_raw_open(o.in, &r, &d) != TK_OK) {
        fprintf(stderr, "tracekit dump: %s\n", d.message);
        return 1;
    }
    tk_encap_reader *er = NULL;
    tk_te_encap_stats est = {.size = sizeof(est)};
    dump_sources ss;
    if (!sources_init(&ss, &p, &o) ||
        (o.encap.on && tk_encap_reader_alloc(&er, &o.encap.cfg, tk_te_raw_data(r),
                                             (size_t)tk_te_raw_size(r)) != TK_OK)) {
        fprintf(stderr, "tracekit dump: out of memory\n");
        sources_free(&ss);
        tk_te_raw_close(r);
        return 1;
    }
    if (o.csv)
        tk_te_csv_write_header(stdout);
    int status = 0;
    dump_packet dp;
    const tk_te_raw_packet *const rpp = &dp.rp;
    tk_status st;
    for (;;) {
        tk_diag_clear(&d);
        st = next_packet(&o, r, er, &est, &dp, &d);
        if (st == TK_END)
            break;
        dump_source *src = NULL; /* the packet's, if it was read */
        if (st == TK_OK && !(src = source_of(&ss, &dp))) {
            fprintf(stderr, "tracekit dump: out of memory\n");
            status = 1;
            break;
        }
        if (st == TK_OK && rpp->msg_type != TK_ENCAP_FLOW_TE_INST) {
            src->other++;
            if (!o.csv) {
                printf("%-9" PRIu64 " #%-5" PRIu64 " %-3zu ", rpp->offset, rpp->index, rpp->len);
                print_src(&o, &dp);
                if (er)
                    printf("type %u (data trace, skipped)\n", dp.type);
                else
                    printf("msg_type %u (not te_inst, skipped)\n", rpp->msg_type);
            }
            continue;
        }
        tk_te_packet k;
        if (st == TK_OK) {
            st = tk_te_packet_decode_layout(&src->layout, rpp->payload, rpp->len, &k, &d);
            if (st != TK_OK) {
                char msg[sizeof(d.message)], who[16];
                memcpy(msg, d.message, sizeof(msg));
                tk_diag_set(&d, st, "%s: offset %" PRIu64 " (packet %" PRIu64 "): %s%s", o.in,
                            rpp->offset, rpp->index, src_label(&o, &dp, who), msg);
            }
        }
        if (st != TK_OK) {
            fflush(stdout);
            fprintf(stderr, "tracekit dump: %s\n", d.message);
            status = 1;
            if (src) {
                src->damaged++;
                mark_damaged(&src->state);
            } else {
                ss.losses++;
                ss.unreadable += st != TK_ERR_TRUNCATED;
            }
            if (!o.keep_going)
                break;
            continue;
        }
        src->te_inst++;
        print_packet(&o, &src->p, &dp, &k);
        if (k.format != TK_TE_F3)
            continue;
        if (k.subformat == TK_TE_SF_SUPPORT) {
            if (!support_packet(&o, &src->p, &dp, &k, &src->state))
                status = 1;
        } else if (k.subformat == TK_TE_SF_START ||
                   (k.subformat == TK_TE_SF_TRAP && (src->p.spec != TK_TE_SPEC_2_0 || k.thaddr))) {
            /* a sync (decoder.c process_format3): the flow is followed from here */
            src->state = (src->state & ~(unsigned)DAMAGED) | FOLLOWING;
        }
    }
    if (er && tk_cli_encap_report(&o.encap, "dump", o.in, &est))
        status = 1;
    else if (er && o.encap.all_sources)
        print_summary(&o, &ss, &est);
    sources_free(&ss);
    tk_encap_reader_free(er);
    tk_te_raw_close(r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tracekit dump: error writing the output\n");
        return 1;
    }
    return status;
}
