/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference flow's .te_inst CSV (VERSIONS.md C.6): one packet per row, '_' for fields the
 * packet does not carry, address/tval in unpadded lowercase hex (already shifted and masked),
 * everything else decimal, notify/updiscon/irreport as the transmitted bits, CRLF line ends
 * (written like Python's csv module; the reader accepts LF too).
 * The reference never writes format 0; tracekit writes the F0SF1 jump target cache index in
 * the address column (the header has no index column), and support packets' denable, dloss
 * and doptions only when one is non-zero (the reference shows '_' there). */
#include "tracekit/te_packet.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "etrace/packet_layout.h"

enum csv_col {
    C_FORMAT,
    C_SUBFORMAT,
    C_ADDRESS,
    C_BRANCH,
    C_BRANCHES,
    C_BRANCH_MAP,
    C_BRANCH_COUNT,
    C_BRANCH_FMT,
    C_CONTEXT,
    C_ECAUSE,
    C_IENABLE,
    C_ENCODER_MODE,
    C_INTERRUPT,
    C_IRREPORT,
    C_IRDEPTH,
    C_NOTIFY,
    C_IOPTIONS,
    C_PRIVILEGE,
    C_QUAL_STATUS,
    C_TIME,
    C_THADDR,
    C_TVAL,
    C_UPDISCON,
    C_DENABLE,
    C_DLOSS,
    C_DOPTIONS,
    C_COUNT
};

static const char *const col_names[C_COUNT] = {
    "format",       "subformat",  "address", "branch", "branches", "branch_map",
    "branch_count", "branch_fmt", "context", "ecause", "ienable",  "encoder_mode",
    "interrupt",    "irreport",   "irdepth", "notify", "ioptions", "privilege",
    "qual_status",  "time",       "thaddr",  "tval",   "updiscon", "denable",
    "dloss",        "doptions"};

/* Hex columns; the rest are decimal. */
static bool col_is_hex(int c)
{
    return c == C_ADDRESS || c == C_TVAL;
}

tk_status tk_te_csv_write_header(FILE *out)
{
    for (int c = 0; c < C_COUNT; c++)
        fprintf(out, "%s%s", c ? "," : "", col_names[c]);
    fputs("\r\n", out); /* Python's csv module ends rows with CRLF */
    return ferror(out) ? TK_ERR_IO : TK_OK;
}

/* ---- writing ---------------------------------------------------------------------------- */

typedef struct row {
    bool set[C_COUNT];
    uint64_t v[C_COUNT];
} row;

static void put(row *r, int c, uint64_t v)
{
    r->set[c] = true;
    r->v[c] = v;
}

/* Wire bits of notify/updiscon/irreport after an address (payload.adoc F1/F2). */
static void put_tail(row *r, const tk_te_widths *w, const tk_te_packet *pkt)
{
    put(r, C_ADDRESS, pkt->address);
    unsigned msb = w->aw ? (unsigned)(pkt->address >> (w->aw - 1)) & 1u : 0u;
    unsigned notify = msb ^ pkt->notify;
    unsigned updiscon = notify ^ pkt->updiscon;
    put(r, C_NOTIFY, notify);
    put(r, C_UPDISCON, updiscon);
    put(r, C_IRREPORT, updiscon ^ pkt->irreport);
    if (w->d)
        put(r, C_IRDEPTH, pkt->irdepth);
}

tk_status tk_te_csv_write(FILE *out, const tk_te_params *p, const tk_te_packet *pkt)
{
    if (!out || !p || !pkt || pkt->format > 3)
        return TK_ERR_INVALID;
    if (p->spec != TK_TE_SPEC_2_0) /* the reference CSV has columns for 2.0 fields only */
        return TK_ERR_UNSUPPORTED;
    tk_te_widths w;
    tk_te_widths_init(&w, p);
    row r;
    memset(&r, 0, sizeof(r));
    put(&r, C_FORMAT, pkt->format);
    switch (pkt->format) {
    case TK_TE_F3:
        put(&r, C_SUBFORMAT, pkt->subformat);
        if (pkt->subformat == TK_TE_SF_SUPPORT) {
            put(&r, C_IENABLE, pkt->ienable);
            put(&r, C_ENCODER_MODE, pkt->encoder_mode);
            put(&r, C_QUAL_STATUS, pkt->qual_status);
            put(&r, C_IOPTIONS, pkt->ioptions);
            if (pkt->denable || pkt->dloss || pkt->doptions) {
                put(&r, C_DENABLE, pkt->denable);
                put(&r, C_DLOSS, pkt->dloss);
                put(&r, C_DOPTIONS, pkt->doptions);
            }
            break;
        }
        if (pkt->subformat != TK_TE_SF_CONTEXT)
            put(&r, C_BRANCH, pkt->branch);
        put(&r, C_PRIVILEGE, pkt->privilege);
        if (w.t)
            put(&r, C_TIME, pkt->time);
        if (w.c)
            put(&r, C_CONTEXT, pkt->context);
        if (pkt->subformat == TK_TE_SF_START) {
            put(&r, C_ADDRESS, pkt->address);
        } else if (pkt->subformat == TK_TE_SF_TRAP) {
            put(&r, C_ECAUSE, pkt->ecause);
            put(&r, C_INTERRUPT, pkt->interrupt);
            put(&r, C_THADDR, pkt->thaddr);
            if (tk_te_trap_has_address(p, pkt))
                put(&r, C_ADDRESS, pkt->address);
            if (!pkt->interrupt)
                put(&r, C_TVAL, pkt->tval);
        }
        break;
    case TK_TE_F2:
        put_tail(&r, &w, pkt);
        break;
    case TK_TE_F1: {
        unsigned branches = pkt->branches;
        if (branches == 31 && !pkt->has_address)
            branches = 0;
        put(&r, C_BRANCHES, branches);
        put(&r, C_BRANCH_MAP, pkt->branch_map);
        if (branches)
            put_tail(&r, &w, pkt);
        break;
    }
    case TK_TE_F0:
        put(&r, C_SUBFORMAT, pkt->subformat);
        if (pkt->subformat == TK_TE_F0_BRANCH_COUNT) {
            put(&r, C_BRANCH_COUNT, pkt->branch_count);
            put(&r, C_BRANCH_FMT, pkt->branch_fmt);
            if (pkt->branch_fmt & 2)
                put_tail(&r, &w, pkt);
        } else {
            put(&r, C_ADDRESS, pkt->jtc_index);
            put(&r, C_BRANCHES, pkt->branches);
            unsigned prev = (pkt->branches >> 4) & 1u;
            if (pkt->branches) {
                unsigned bm = tk_te_map_bits(pkt->branches);
                put(&r, C_BRANCH_MAP, pkt->branch_map);
                prev = (pkt->branch_map >> (bm - 1)) & 1u;
            }
            put(&r, C_IRREPORT, prev ^ pkt->irreport);
            if (w.d)
                put(&r, C_IRDEPTH, pkt->irdepth);
        }
        break;
    }
    char line[C_COUNT * 22 + 2];
    size_t n = 0;
    for (int c = 0; c < C_COUNT; c++) {
        if (c)
            line[n++] = ',';
        if (!r.set[c])
            line[n++] = '_';
        else
            n += (size_t)snprintf(line + n, sizeof(line) - n,
                                  col_is_hex(c) ? "%" PRIx64 : "%" PRIu64, r.v[c]);
    }
    line[n++] = '\r';
    line[n++] = '\n';
    return fwrite(line, 1, n, out) == n ? TK_OK : TK_ERR_IO;
}

/* ---- reading ---------------------------------------------------------------------------- */

struct tk_te_csv_reader {
    gzFile f;
    char *path;
    uint64_t line;
    int col_of[C_COUNT]; /* position in the file of each known column */
    int ncols;
    char buf[4096];
};

/* Split a line in place at commas; returns the number of cells (at most max). */
static int split(char *s, char **cells, int max)
{
    int n = 0;
    size_t len = strlen(s);
    while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
        s[--len] = '\0';
    for (;;) {
        if (n == max)
            return max + 1;
        cells[n++] = s;
        char *comma = strchr(s, ',');
        if (!comma)
            return n;
        *comma = '\0';
        s = comma + 1;
    }
}

/* gzgets a whole line; false at end of file. Lines longer than the buffer are an error. */
static tk_status read_line(tk_te_csv_reader *r, tk_diag *diag)
{
    if (!gzgets(r->f, r->buf, sizeof(r->buf))) {
        int err;
        const char *msg = gzerror(r->f, &err);
        if (err != Z_OK && err != Z_STREAM_END)
            return tk_diag_set(diag, TK_ERR_IO, "%s: read error: %s", r->path, msg);
        return TK_END;
    }
    r->line++;
    size_t n = strlen(r->buf);
    if (n == sizeof(r->buf) - 1 && r->buf[n - 1] != '\n' && !gzeof(r->f))
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": line too long", r->path, r->line);
    return TK_OK;
}

tk_status tk_te_csv_open(const char *path, tk_te_csv_reader **out, tk_diag *diag)
{
    if (!path || !out)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_csv_open: NULL argument");
    *out = NULL;
    tk_te_csv_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return tk_diag_set(diag, TK_ERR_NOMEM, "out of memory");
    r->path = strdup(path);
    r->f = gzopen(path, "rb");
    if (!r->path || !r->f) {
        tk_status st = tk_diag_set(diag, r->path ? TK_ERR_IO : TK_ERR_NOMEM, "%s: cannot open: %s",
                                   path, strerror(errno));
        tk_te_csv_close(r);
        return st;
    }
    tk_status st = read_line(r, diag);
    if (st == TK_END)
        st = tk_diag_set(diag, TK_ERR_FORMAT, "%s: empty file, expected a te_inst header", path);
    if (st != TK_OK) {
        tk_te_csv_close(r);
        return st;
    }
    char *cells[C_COUNT + 1];
    int n = split(r->buf, cells, C_COUNT);
    for (int c = 0; c < C_COUNT; c++)
        r->col_of[c] = -1;
    for (int i = 0; i < n && i < C_COUNT; i++) {
        int c = 0;
        while (c < C_COUNT && strcmp(cells[i], col_names[c]))
            c++;
        if (c == C_COUNT || r->col_of[c] >= 0) {
            st = tk_diag_set(diag, TK_ERR_FORMAT, "%s:1: unexpected column '%s' in te_inst header",
                             path, cells[i]);
            break;
        }
        r->col_of[c] = i;
    }
    for (int c = 0; st == TK_OK && c < C_COUNT; c++)
        if (r->col_of[c] < 0 || n != C_COUNT)
            st = tk_diag_set(diag, TK_ERR_FORMAT,
                             "%s:1: te_inst header must have the %d reference columns "
                             "(missing or extra: '%s')",
                             path, C_COUNT, col_names[c]);
    if (st != TK_OK) {
        tk_te_csv_close(r);
        return st;
    }
    r->ncols = n;
    *out = r;
    return TK_OK;
}

void tk_te_csv_close(tk_te_csv_reader *r)
{
    if (!r)
        return;
    if (r->f)
        gzclose(r->f);
    free(r->path);
    free(r);
}

typedef struct cells {
    char *v[C_COUNT];
    const tk_te_csv_reader *r;
    tk_diag *diag;
    tk_status st;
} cells;

/* Value of a column; absent ('_') gives dflt, or an error if required. */
static uint64_t get(cells *c, int col, bool required, uint64_t dflt)
{
    if (c->st != TK_OK)
        return 0;
    const char *s = c->v[col];
    if (!strcmp(s, "_")) {
        if (required)
            c->st = tk_diag_set(c->diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": %s is required here",
                                c->r->path, c->r->line, col_names[col]);
        return dflt;
    }
    errno = 0;
    char *end = NULL;
    uint64_t v = strtoull(s, &end, col_is_hex(col) ? 16 : 10);
    if (*s == '\0' || *s == '-' || *s == '+' || *end != '\0' || errno)
        c->st = tk_diag_set(c->diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": %s: bad %s number '%s'",
                            c->r->path, c->r->line, col_names[col],
                            col_is_hex(col) ? "hex" : "decimal", s);
    return v;
}

static uint64_t req(cells *c, int col)
{
    return get(c, col, true, 0);
}
static uint64_t opt(cells *c, int col)
{
    return get(c, col, false, 0);
}

static void get_tail(cells *c, const tk_te_widths *w, tk_te_packet *out)
{
    out->address = req(c, C_ADDRESS);
    out->has_address = true;
    unsigned msb = w->aw ? (unsigned)(out->address >> (w->aw - 1)) & 1u : 0u;
    uint64_t notify = req(c, C_NOTIFY), updiscon = req(c, C_UPDISCON),
             irreport = req(c, C_IRREPORT);
    out->notify = notify != msb;
    out->updiscon = updiscon != notify;
    out->irreport = irreport != updiscon;
    out->irdepth = opt(c, C_IRDEPTH);
}

tk_status tk_te_csv_next(tk_te_csv_reader *r, const tk_te_params *p, tk_te_packet *out,
                         tk_diag *diag)
{
    if (!r || !p || !out)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_csv_next: NULL argument");
    memset(out, 0, sizeof(*out));
    if (p->spec != TK_TE_SPEC_2_0)
        return tk_diag_set(diag, TK_ERR_UNSUPPORTED,
                           "%s: the .te_inst CSV holds 2.0 packets only (spec %s requested)",
                           r->path, tk_te_spec_name(p->spec));
    tk_status st;
    do {
        st = read_line(r, diag);
        if (st != TK_OK)
            return st;
    } while (r->buf[0] == '\n' || (r->buf[0] == '\r' && r->buf[1] == '\n'));
    if (diag)
        diag->line = r->line;
    char *raw[C_COUNT + 1];
    int n = split(r->buf, raw, C_COUNT);
    if (n != r->ncols)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": %d columns, expected %d", r->path,
                           r->line, n > C_COUNT ? n - 1 : n, r->ncols);
    cells c = {.r = r, .diag = diag, .st = TK_OK};
    for (int i = 0; i < C_COUNT; i++)
        c.v[i] = raw[r->col_of[i]];
    tk_te_widths w;
    tk_te_widths_init(&w, p);
    uint64_t format = req(&c, C_FORMAT);
    if (c.st == TK_OK && format > 3)
        return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": format %" PRIu64 " is not 0..3",
                           r->path, r->line, format);
    out->format = (uint8_t)format;
    switch (out->format) {
    case TK_TE_F3:
        out->subformat = (uint8_t)req(&c, C_SUBFORMAT);
        if (out->subformat == TK_TE_SF_SUPPORT) {
            out->ienable = (uint8_t)req(&c, C_IENABLE);
            out->encoder_mode = (uint8_t)req(&c, C_ENCODER_MODE);
            out->qual_status = (uint8_t)req(&c, C_QUAL_STATUS);
            out->ioptions = (uint32_t)req(&c, C_IOPTIONS);
            out->denable = (uint8_t)opt(&c, C_DENABLE);
            out->dloss = (uint8_t)opt(&c, C_DLOSS);
            out->doptions = (uint32_t)opt(&c, C_DOPTIONS);
            break;
        }
        if (out->subformat != TK_TE_SF_CONTEXT)
            out->branch = (uint8_t)req(&c, C_BRANCH);
        out->privilege = (uint8_t)req(&c, C_PRIVILEGE);
        out->time = w.t ? opt(&c, C_TIME) : 0;
        out->context = w.c ? opt(&c, C_CONTEXT) : 0;
        if (out->subformat == TK_TE_SF_START) {
            out->address = req(&c, C_ADDRESS);
            out->has_address = true;
        } else if (out->subformat == TK_TE_SF_TRAP) {
            out->ecause = (uint32_t)req(&c, C_ECAUSE);
            out->interrupt = (uint8_t)req(&c, C_INTERRUPT);
            out->thaddr = (uint8_t)req(&c, C_THADDR);
            if (tk_te_trap_has_address(p, out)) {
                out->address = req(&c, C_ADDRESS);
                out->has_address = true;
            }
            if (!out->interrupt)
                out->tval = req(&c, C_TVAL);
        } else if (c.st == TK_OK && out->subformat > 3) {
            return tk_diag_set(diag, TK_ERR_FORMAT, "%s:%" PRIu64 ": subformat %u is not 0..3",
                               r->path, r->line, out->subformat);
        }
        break;
    case TK_TE_F2:
        get_tail(&c, &w, out);
        break;
    case TK_TE_F1:
        out->branches = (uint8_t)req(&c, C_BRANCHES);
        out->branch_map = (uint32_t)req(&c, C_BRANCH_MAP);
        if (out->branches)
            get_tail(&c, &w, out);
        break;
    case TK_TE_F0:
        out->subformat = (uint8_t)req(&c, C_SUBFORMAT);
        if (out->subformat == TK_TE_F0_BRANCH_COUNT) {
            out->branch_count = req(&c, C_BRANCH_COUNT);
            out->branch_fmt = (uint8_t)req(&c, C_BRANCH_FMT);
            if (out->branch_fmt & 2)
                get_tail(&c, &w, out);
        } else {
            out->jtc_index = (uint32_t)req(&c, C_ADDRESS);
            out->branches = (uint8_t)req(&c, C_BRANCHES);
            unsigned prev = (out->branches >> 4) & 1u;
            if (out->branches) {
                out->branch_map = (uint32_t)req(&c, C_BRANCH_MAP);
                prev = (out->branch_map >> (tk_te_map_bits(out->branches) - 1)) & 1u;
            }
            out->irreport = req(&c, C_IRREPORT) != prev;
            out->irdepth = opt(&c, C_IRDEPTH);
        }
        break;
    }
    if (c.st != TK_OK)
        memset(out, 0, sizeof(*out));
    return c.st;
}
