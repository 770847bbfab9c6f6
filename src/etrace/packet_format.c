/* SPDX-License-Identifier: BSD-2-Clause */
/* One-line text form of a te_inst packet, in the spirit of ptdump. Addresses are shown as
 * byte addresses (the field shifted left by iaddress_lsb_p); differential ones as a signed
 * delta. Branch maps are shown oldest branch first, T = taken, N = not taken. */
#include "tracekit/te_packet.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "etrace/packet_layout.h"
#include "util/hex.h"

typedef struct out {
    char *buf;
    size_t cap, n; /* n may exceed cap: snprintf semantics */
} out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
say(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k =
        vsnprintf(o->n < o->cap ? o->buf + o->n : NULL, o->n < o->cap ? o->cap - o->n : 0, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->n += (size_t)k;
}

static void full_address(out *o, const tk_te_params *p, uint64_t field)
{
    say(o, " addr=0x%" PRIx64, field << p->s.iaddress_lsb);
}

static void map(out *o, unsigned n, uint32_t m)
{
    char s[33];
    for (unsigned i = 0; i < n && i < 32; i++)
        s[i] = (m >> i) & 1u ? 'N' : 'T';
    s[n < 32 ? n : 32] = '\0';
    say(o, " map=%s", s);
}

/* What follows the map in F0SF0/F1/F2 (and F1's branch count): the address, differential
 * unless full address mode is on, and the flags. q needs 128 bytes of room. */
static char *put_tail(char *q, const tk_te_params *p, const tk_te_widths *w,
                      const tk_te_packet *pkt)
{
    if (p->o.full_address || w->aw == 0 || w->aw >= 64) {
        memcpy(q, " addr=0x", 8);
        q = tk_put_hex(q + 8, pkt->address << p->s.iaddress_lsb);
    } else {
        int64_t v = (int64_t)(pkt->address << (64 - w->aw)) >> (64 - w->aw);
        v *= (int64_t)1 << p->s.iaddress_lsb;
        memcpy(q, v < 0 ? " daddr=-0x" : " daddr=+0x", 10);
        q = tk_put_hex(q + 10, v < 0 ? -(uint64_t)v : (uint64_t)v);
    }
    if (pkt->notify) {
        memcpy(q, " notify", 7);
        q += 7;
    }
    if (pkt->updiscon) {
        memcpy(q, " updiscon", 9);
        q += 9;
    }
    if (pkt->irreport) {
        memcpy(q, " irreport irdepth=", 18);
        q = tk_put_dec(q + 18, pkt->irdepth);
    }
    return q;
}

static void tail(out *o, const tk_te_params *p, const tk_te_widths *w, const tk_te_packet *pkt)
{
    char t[128];
    *put_tail(t, p, w, pkt) = '\0';
    say(o, "%s", t);
}

static const char *const qual_names[4] = {"no_change", "ended_rep", "trace_lost", "ended_ntr"};

/* The packets that make up nearly all of a listing (format 1 with a branch map and an
 * address, format 2), written without vsnprintf, whose format parsing was most of `tracekit
 * dump`'s time: the same text as the general path below. buf has room for the longest (160
 * bytes). Returns the length, or -1 for a packet this does not write. */
static int format_common(const tk_te_params *p, const tk_te_widths *w, const tk_te_packet *pkt,
                         char *buf)
{
    char *q = buf;
    if (pkt->format == TK_TE_F2) {
        memcpy(q, "F2 addr-only", 12);
        q = put_tail(q + 12, p, w, pkt);
    } else if (pkt->format == TK_TE_F1 && pkt->branches != 0 && pkt->has_address &&
               p->spec != TK_TE_SPEC_0_26) {
        memcpy(q, "F1 branches=", 12);
        q = tk_put_dec(q + 12, pkt->branches);
        memcpy(q, " map=", 5);
        q += 5;
        for (unsigned i = 0; i < pkt->branches && i < 32; i++)
            *q++ = (pkt->branch_map >> i) & 1u ? 'N' : 'T';
        q = put_tail(q, p, w, pkt);
    } else {
        return -1;
    }
    *q = '\0';
    return (int)(q - buf);
}

static int format_general(const tk_te_params *p, const tk_te_widths *w, const tk_te_packet *pkt,
                          char *buf, size_t cap);

int tk_te_packet_format(const tk_te_params *p, const tk_te_packet *pkt, char *buf, size_t cap)
{
    if (cap)
        buf[0] = '\0';
    if (!p || !pkt)
        return -1;
    tk_te_widths w;
    tk_te_widths_init(&w, p);
    if (cap >= 160) {
        const int n = format_common(p, &w, pkt, buf);
        return n >= 0 ? n : format_general(p, &w, pkt, buf, cap);
    }
    char tmp[160];
    const int n = format_common(p, &w, pkt, tmp);
    if (n < 0)
        return format_general(p, &w, pkt, buf, cap);
    if (cap) { /* as snprintf: as much as fits, and the whole length */
        const size_t k = (size_t)n < cap ? (size_t)n : cap - 1;
        memcpy(buf, tmp, k);
        buf[k] = '\0';
    }
    return n;
}

static int format_general(const tk_te_params *p, const tk_te_widths *wp, const tk_te_packet *pkt,
                          char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    const tk_te_widths w = *wp;
    switch (pkt->format) {
    case TK_TE_F3: {
        static const char *const names[4] = {"start", "trap", "context", "support"};
        say(&o, "F3.%u %s", pkt->subformat & 3u, names[pkt->subformat & 3u]);
        if (pkt->subformat == TK_TE_SF_SUPPORT) {
            say(&o, " ienable=%u encoder_mode=%u qual_status=%s ioptions=0x%" PRIx32, pkt->ienable,
                pkt->encoder_mode, qual_names[pkt->qual_status & 3u], pkt->ioptions);
            if (pkt->denable || pkt->dloss || pkt->doptions)
                say(&o, " denable=%u dloss=%u doptions=0x%" PRIx32, pkt->denable, pkt->dloss,
                    pkt->doptions);
            break;
        }
        if (pkt->subformat != TK_TE_SF_CONTEXT)
            say(&o, " branch=%u", pkt->branch);
        say(&o, " priv=%u", pkt->privilege);
        if (w.t)
            say(&o, " time=0x%" PRIx64, pkt->time);
        if (w.c)
            say(&o, " context=0x%" PRIx64, pkt->context);
        if (pkt->subformat == TK_TE_SF_TRAP)
            say(&o, " ecause=%" PRIu32 " interrupt=%u thaddr=%u", pkt->ecause, pkt->interrupt,
                pkt->thaddr);
        if (pkt->has_address)
            full_address(&o, p, pkt->address);
        if (pkt->subformat == TK_TE_SF_TRAP && !pkt->interrupt)
            say(&o, " tval=0x%" PRIx64, pkt->tval);
        break;
    }
    case TK_TE_F2:
        say(&o, "F2 addr-only");
        tail(&o, p, &w, pkt);
        break;
    case TK_TE_F1:
        if (p->spec == TK_TE_SPEC_0_29 && pkt->branches == 0 &&
            (pkt->branch_fmt == 1 || pkt->branch_fmt == 2)) {
            /* v0.029 branch count (VERSIONS.md A.5) */
            say(&o, "F1 branch-count count=%" PRIu64 " (+31) branch_fmt=%u", pkt->branch_count,
                pkt->branch_fmt);
            if (pkt->branch_fmt == 2) {
                say(&o, " bpsuccess=%u", pkt->bpsuccess);
                tail(&o, p, &w, pkt);
            }
        } else if (pkt->branches == 0 || !pkt->has_address) {
            say(&o, "F1 branches=31 (full, no address)");
            map(&o, 31, pkt->branch_map);
        } else {
            say(&o, "F1 %sbranches=%u", p->spec == TK_TE_SPEC_0_26 ? "diff-delta " : "",
                pkt->branches);
            map(&o, pkt->branches, pkt->branch_map);
            tail(&o, p, &w, pkt);
        }
        break;
    case TK_TE_F0:
        if (p->spec == TK_TE_SPEC_0_26) {
            /* v0.026 full-delta: branch map and full address (VERSIONS.md A.8) */
            say(&o, "F0 full-delta branches=%u", pkt->branches);
            map(&o, pkt->branches ? pkt->branches : 31, pkt->branch_map);
            if (pkt->has_address)
                full_address(&o, p, pkt->address);
        } else if (pkt->subformat == TK_TE_F0_BRANCH_COUNT) {
            say(&o, "F0.0 branch-count count=%" PRIu64 " (+31) branch_fmt=%u", pkt->branch_count,
                pkt->branch_fmt);
            if (pkt->branch_fmt & 2)
                tail(&o, p, &w, pkt);
        } else {
            say(&o, "F0.1 jtc index=%" PRIu32 " branches=%u", pkt->jtc_index, pkt->branches);
            if (pkt->branches)
                map(&o, pkt->branches, pkt->branch_map);
            if (pkt->irreport)
                say(&o, " irreport irdepth=%" PRIu64, pkt->irdepth);
        }
        break;
    default:
        say(&o, "F%u ?", pkt->format);
        break;
    }
    return o.n > (size_t)INT32_MAX ? -1 : (int)o.n;
}
