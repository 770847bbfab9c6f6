/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 instruction trace packet parser (IHI0064 chapter 6).
 *
 * Packets are decoded straight from the caller's buffer; only a packet split between two
 * deformatted runs is assembled in a small side buffer. The parser keeps the packet-level state
 * the compressed packets are relative to: the three-entry address history (§6.4.12, used by
 * short and exact-match address packets), the context, the timestamp and the cycle count
 * threshold from the last Trace Info. The batch modes' fast paths, which take atoms and
 * addresses straight into compact records, are in etm4_batch.c; the state both share is in
 * etm4_parser_int.h. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coresight/etm4_parser_int.h"
#include "coresight/etm4_state.h"
#include "tracekit/etm4.h"

/* Joined frames of 15 bytes (tk_etm4_parser_frames): byte k is at k + k / 15 from the start,
 * for k < JOINED_MAX (256 frames; longer joined data is walked JOINED_MAX bytes at a time). The
 * batch path reads it from this table (a load per record; computed, a multiply). */
#define JOINED_MAX (15 * 256)
#define AT_FRAME(f)                                                                                \
    16 * (f), 16 * (f) + 1, 16 * (f) + 2, 16 * (f) + 3, 16 * (f) + 4, 16 * (f) + 5, 16 * (f) + 6,  \
        16 * (f) + 7, 16 * (f) + 8, 16 * (f) + 9, 16 * (f) + 10, 16 * (f) + 11, 16 * (f) + 12,     \
        16 * (f) + 13, 16 * (f) + 14
#define AT_FRAMES4(f) AT_FRAME(f), AT_FRAME((f) + 1), AT_FRAME((f) + 2), AT_FRAME((f) + 3)
#define AT_FRAMES16(f) AT_FRAMES4(f), AT_FRAMES4((f) + 4), AT_FRAMES4((f) + 8), AT_FRAMES4((f) + 12)
#define AT_FRAMES64(f)                                                                             \
    AT_FRAMES16(f), AT_FRAMES16((f) + 16), AT_FRAMES16((f) + 32), AT_FRAMES16((f) + 48)
static const uint16_t joined_at[JOINED_MAX] = {AT_FRAMES64(0), AT_FRAMES64(64), AT_FRAMES64(128),
                                               AT_FRAMES64(192)};
#undef AT_FRAMES64
#undef AT_FRAMES16
#undef AT_FRAMES4
#undef AT_FRAME
#define NEED_MORE 0

static int pkt_atom(const uint8_t *b, tk_etm4_packet *pkt);

/* The atom format of a header 0xc0-0xff (§6.4.16-6.4.21). */
static tk_etm4_pkt_type atom_format(unsigned h)
{
    if (h <= 0xd4 || (h >= 0xe0 && h <= 0xf4))
        return TK_ETM4_ATOM_F6;
    if (h <= 0xd7 || h == 0xf5)
        return TK_ETM4_ATOM_F5;
    if (h <= 0xdb)
        return TK_ETM4_ATOM_F2;
    if (h <= 0xdf)
        return TK_ETM4_ATOM_F4;
    if (h <= 0xf7)
        return TK_ETM4_ATOM_F1;
    return TK_ETM4_ATOM_F3;
}

tk_etm4_pkt_type tk_etm4_atom_header(uint8_t header, uint8_t *num, uint32_t *bits)
{
    tk_etm4_packet pkt;
    memset(&pkt, 0, sizeof(pkt));
    *num = 0;
    *bits = 0;
    if (header < 0xc0)
        return TK_ETM4_BAD_SEQUENCE;
    pkt.type = atom_format(header);
    pkt_atom(&header, &pkt);
    if (pkt.type != TK_ETM4_BAD_SEQUENCE) {
        *num = pkt.atom_num;
        *bits = pkt.atoms;
    }
    return (tk_etm4_pkt_type)pkt.type;
}

static void build_atom_table(tk_etm4_parser *p)
{
    for (int h = 0xc0; h <= 0xff; h++) {
        uint8_t num;
        uint32_t bits;
        const tk_etm4_pkt_type type = tk_etm4_atom_header((uint8_t)h, &num, &bits);
        /* num 0 would leave a header to the general path; pkt_atom() defines all 64 (F5's
         * four encodings included), which the batch path's tk_etm4_atom_run() relies on. */
        p->atom[h - 0xc0].type = (uint8_t)type;
        p->atom[h - 0xc0].num = num;
        p->atom[h - 0xc0].bits = bits;
        tk_etm4_pkt_lite *l = &p->atom_lite[h - 0xc0];
        memset(l, 0, sizeof(*l));
        l->type = (uint8_t)type;
        l->header = (uint8_t)h;
        l->size = 1;
        l->atom_num = num;
        l->atoms = bits;
    }
    tk_etm4_build_rules(p);
}

tk_status tk_etm4_parser_new(const tk_etm4_config *cfg, tk_etm4_packet_fn fn, void *ctx,
                             tk_etm4_parser **out)
{
    if (!cfg || !fn || !out)
        return TK_ERR_INVALID;
    tk_etm4_parser *p = calloc(1, sizeof(*p));
    if (!p)
        return TK_ERR_NOMEM;
    p->cfg = *cfg;
    p->fn = fn;
    p->ctx = ctx;
    p->window = tk_etm4_window_best();
    p->pext = tk_etm4_pext_is_fast();
    build_atom_table(p);
    *out = p;
    return TK_OK;
}

void tk_etm4_parser_free(tk_etm4_parser *p)
{
    free(p);
}

void tk_etm4_parser_reset(tk_etm4_parser *p)
{
    tk_etm4_config cfg = p->cfg;
    tk_etm4_packet_fn fn = p->fn;
    void *ctx = p->ctx;
    tk_etm4_batch_fn batch_fn = p->batch_fn;
    void *batch_ctx = p->batch_ctx;
    const bool runs = p->runs, pext = p->pext;
    const tk_etm4_window_fn window = p->window;
    memset(p, 0, sizeof(*p));
    p->cfg = cfg;
    p->fn = fn;
    p->ctx = ctx;
    p->batch_fn = batch_fn;
    p->batch_ctx = batch_ctx;
    p->runs = runs;
    p->pext = pext; /* the builds chosen at creation (or by tk_etm4_parser_use_pext) stay */
    p->window = window;
    build_atom_table(p);
}

void tk_etm4_parser_use_pext(tk_etm4_parser *p, bool on)
{
    p->pext = on && tk_etm4_pext_is_fast();
}

void tk_etm4_parser_set_batch(tk_etm4_parser *p, tk_etm4_batch_fn fn, void *ctx)
{
    p->batch_fn = fn;
    p->batch_ctx = ctx;
    p->nlite = 0;
    p->runs = false;
}

void tk_etm4_parser_set_batch_runs(tk_etm4_parser *p, tk_etm4_batch_fn fn, void *ctx)
{
    tk_etm4_parser_set_batch(p, fn, ctx);
    p->runs = fn != NULL;
}

tk_status tk_etm4_parser_flush(tk_etm4_parser *p)
{
    size_t n = p->nlite;
    if (!n)
        return TK_OK;
    p->nlite = 0;
    return p->batch_fn(p->batch_ctx, p->lite, n);
}

/* Every complete packet goes out through here: compact packets held back go first, so the
 * consumer sees trace order. */
static tk_status emit_pkt(tk_etm4_parser *p, const tk_etm4_packet *pkt)
{
    tk_status st;
    if (p->nlite && (st = tk_etm4_parser_flush(p)))
        return st;
    return p->fn(p->ctx, pkt);
}

void tk_etm4_parser_resync(tk_etm4_parser *p)
{
    p->npart = 0;
    p->synced = false;
    p->notsync_sent = false;
    p->zeros = 0;
}

/* ---- field helpers -------------------------------------------------------------------- */

/* Continuation field (7 bits per byte, bit 7 = more) of at most max bytes starting at b[0].
 * Returns its length, 0 if more bytes are needed, -1 if it exceeds max bytes. */
static int cont_len(const uint8_t *b, size_t n, int max)
{
    for (int i = 0; i < max; i++) {
        if ((size_t)i >= n)
            return NEED_MORE;
        if (!(b[i] & 0x80))
            return i + 1;
    }
    return -1;
}

static uint64_t cont_val(const uint8_t *b, int len)
{
    uint64_t v = 0;
    for (int i = 0; i < len; i++)
        v |= (uint64_t)(b[i] & 0x7f) << (7 * i);
    return v;
}

static void push_addr(tk_etm4_parser *p)
{
    p->stack[2] = p->stack[1];
    p->stack[1] = p->stack[0];
    p->stack[0] = p->cur;
}

static void fill_addr(const tk_etm4_parser *p, tk_etm4_packet *pkt)
{
    pkt->addr = p->cur.val;
    pkt->addr_is = p->cur.is;
    pkt->addr_64 = p->cur.is64;
}

/* §6.4.12 long address: IS0 packs addr[8:2] and [15:9] in the first two bytes, IS1 packs
 * addr[7:1] and [15:8]; the rest are whole bytes. */
static void set_addr64(tk_etm4_parser *p, uint64_t a, int is, tk_etm4_packet *pkt)
{
    p->cur = (addr_entry){a, (uint8_t)is, 64, 1};
    push_addr(p);
    pkt->addr_bits = 64;
    fill_addr(p, pkt);
}

/* A 32-bit address replaces the low half; in AArch64 state the high half is kept. */
static void set_addr32(tk_etm4_parser *p, uint32_t a, int is, tk_etm4_packet *pkt)
{
    if (p->ctx_valid && p->ctxs.sf) {
        p->cur.val = (p->cur.val & ~0xffffffffull) | a;
        p->cur.is64 = 1;
    } else {
        p->cur.val = a;
        p->cur.is64 = 0;
    }
    if (p->cur.valid_bits < 32)
        p->cur.valid_bits = 32;
    p->cur.is = (uint8_t)is;
    push_addr(p);
    pkt->addr_bits = 32;
    fill_addr(p, pkt);
}

/* §6.4.12 short address: 7 (+8) bits above the instruction alignment, relative to the most
 * recent address. Returns the field length or 0 if incomplete. */
static int short_addr(tk_etm4_parser *p, const uint8_t *b, size_t n, int is, tk_etm4_packet *pkt,
                      bool apply)
{
    if (n < 1)
        return NEED_MORE;
    int len = (b[0] & 0x80) ? 2 : 1;
    if ((size_t)len > n)
        return NEED_MORE;
    if (!apply)
        return len;
    int shift = is ? 1 : 2;
    uint64_t v = (uint64_t)(b[0] & 0x7f) << shift;
    int bits = 7 + shift;
    if (len == 2) {
        v |= (uint64_t)b[1] << (7 + shift);
        bits += 8;
    }
    uint64_t mask = (1ull << bits) - 1;
    p->cur.val = (p->cur.val & ~mask) | (v & mask);
    if (p->cur.valid_bits < bits)
        p->cur.valid_bits = (uint8_t)bits;
    p->cur.is = (uint8_t)is;
    push_addr(p);
    pkt->addr_bits = (uint8_t)bits;
    fill_addr(p, pkt);
    return len;
}

static void exact_match(tk_etm4_parser *p, int idx, tk_etm4_packet *pkt)
{
    pkt->match_idx = (uint8_t)idx;
    p->cur = p->stack[idx < 3 ? idx : 0];
    push_addr(p);
    fill_addr(p, pkt);
}

/* Context information byte (§6.4.11): EL [1:0], SF [4], NS [5], V [6], C [7], then the VMID
 * and context ID bytes it announces. Returns the length or 0 if incomplete. */
static int context_len(const tk_etm4_parser *p, const uint8_t *b, size_t n)
{
    if (n < 1)
        return NEED_MORE;
    int len = 1 + ((b[0] & 0x40) ? p->cfg.vmid_bytes : 0) + ((b[0] & 0x80) ? p->cfg.cid_bytes : 0);
    return (size_t)len > n ? NEED_MORE : len;
}

static void context_apply(tk_etm4_parser *p, const uint8_t *b, tk_etm4_packet *pkt)
{
    uint8_t info = b[0];
    int i = 1;
    p->ctx_valid = true;
    p->ctxs.el = info & 3;
    p->ctxs.sf = (info >> 4) & 1;
    p->ctxs.ns = (info >> 5) & 1;
    p->ctxs.has_vmid = p->ctxs.has_cid = 0;
    if ((info & 0x40) && p->cfg.vmid_bytes) {
        uint32_t v = 0;
        for (int k = 0; k < p->cfg.vmid_bytes; k++)
            v |= (uint32_t)b[i++] << (8 * k);
        p->ctxs.vmid = v;
        p->ctxs.has_vmid = 1;
    }
    if ((info & 0x80) && p->cfg.cid_bytes) {
        uint32_t v = 0;
        for (int k = 0; k < p->cfg.cid_bytes; k++)
            v |= (uint32_t)b[i++] << (8 * k);
        p->ctxs.cid = v;
        p->ctxs.has_cid = 1;
    }
    pkt->ctx_updated = 1;
    pkt->ctx = p->ctxs;
}

static int bad(tk_etm4_packet *pkt, tk_etm4_pkt_type err, int len)
{
    pkt->err_type = (uint8_t)err;
    pkt->type = TK_ETM4_BAD_SEQUENCE;
    return len;
}

static int reserved(tk_etm4_packet *pkt, tk_etm4_pkt_type type, tk_etm4_pkt_type what)
{
    pkt->err_type = (uint8_t)what;
    pkt->type = (uint8_t)type;
    return 1;
}

/* ---- packet bodies -------------------------------------------------------------------- */

/* §6.4.2 extension packets: A-Sync (11 x 0x00, 0x80), Discard, Overflow. */
static int pkt_extension(const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    if (n < 2)
        return NEED_MORE;
    switch (b[1]) {
    case 0x03:
        pkt->type = TK_ETM4_DISCARD;
        return 2;
    case 0x05:
        pkt->type = TK_ETM4_OVERFLOW;
        return 2;
    case 0x00:
        for (size_t i = 2; i < 12; i++) {
            if (i >= n)
                return NEED_MORE;
            if (b[i] != (i == 11 ? 0x80 : 0x00))
                return bad(pkt, TK_ETM4_ASYNC, (int)i + 1);
        }
        pkt->type = TK_ETM4_ASYNC;
        return 12;
    default:
        return bad(pkt, TK_ETM4_EXTENSION, 2);
    }
}

/* §6.4.3 Trace Info: PLCTL (continuation), then INFO, KEY, SPEC, CYCT sections as present. */
static int pkt_trace_info(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    int c = cont_len(b + 1, n - 1, 4);
    if (c < 0)
        return bad(pkt, TK_ETM4_TRACE_INFO, 5);
    if (c == NEED_MORE)
        return NEED_MORE;
    /* PLCTL: INFO [0], KEY [1], SPEC [2], CYCT [3], and in ETE WNDW [4] (commit window,
     * parsed and ignored). */
    uint8_t plctl = b[1] & (p->cfg.ete ? 0x1f : 0x0f);
    size_t pos = 1 + (size_t)c;
    uint32_t vals[5] = {0, 0, 0, 0, 0};
    for (int s = 0; s < 5; s++) {
        if (!(plctl & (1u << s)))
            continue;
        int l = cont_len(b + pos, n - pos, 5);
        if (l < 0)
            return bad(pkt, TK_ETM4_TRACE_INFO, (int)pos + 5);
        if (l == NEED_MORE)
            return NEED_MORE;
        vals[s] = (uint32_t)cont_val(b + pos, l);
        pos += (size_t)l;
    }
    pkt->info_sections = plctl & 0x0f;
    pkt->info = vals[0];
    pkt->p0_key = vals[1];
    pkt->spec_depth = vals[2];
    pkt->cc_threshold = vals[3];
    /* A Trace Info resets the address history and the timestamp reference (§6.4.3). */
    memset(&p->cur, 0, sizeof(p->cur));
    memset(p->stack, 0, sizeof(p->stack));
    p->ts_valid = false;
    p->seen_trace_info = true;
    p->cc_threshold = (plctl & 8) ? vals[3] : 0;
    return (int)pos;
}

/* §6.4.4 Timestamp: up to 9 bytes of timestamp (7 bits each, the 9th byte 8 bits), then an
 * optional cycle count (header bit 0). Fewer bytes update only the low bits, except for the
 * first timestamp after a Trace Info, which is complete. */
static int pkt_timestamp(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    size_t pos = 1;
    int tl = 0;
    for (;;) {
        if (pos + (size_t)tl >= n)
            return NEED_MORE;
        uint8_t v = b[pos + (size_t)tl];
        tl++;
        if (tl == 9 || !(v & 0x80))
            break;
    }
    uint64_t ts = 0;
    for (int i = 0; i < tl; i++)
        ts |= (i == 8 ? (uint64_t)b[pos + 8] : (uint64_t)(b[pos + (size_t)i] & 0x7f)) << (7 * i);
    pos += (size_t)tl;
    int cl = 0;
    if (b[0] & 1) {
        cl = cont_len(b + pos, n - pos, 3);
        if (cl < 0)
            return bad(pkt, TK_ETM4_TIMESTAMP, (int)pos + 3);
        if (cl == NEED_MORE)
            return NEED_MORE;
        pkt->has_cc = 1;
        pkt->cc = (uint32_t)cont_val(b + pos, cl) & ((1u << p->cfg.cc_bits) - 1);
    }
    int bits = tl < 7 ? tl * 7 : 64;
    if (!p->ts_valid && p->seen_trace_info)
        bits = 64;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    p->ts = (p->ts & ~mask) | (ts & mask);
    p->ts_valid = true;
    pkt->timestamp = p->ts;
    pkt->ts_bits = (uint8_t)bits;
    return (int)pos + cl;
}

/* §6.4.7 Exception: one or two payload bytes: E0 [0], TYPE [5:1], E1 [6], C [7]; the second
 * byte extends TYPE with [4:0] and has P (fault pending) at [5]. */
static int pkt_exception(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    if (n < 2)
        return NEED_MORE;
    int len = (b[1] & 0x80) ? 3 : 2;
    unsigned type = (b[1] >> 1) & 0x1f;
    /* ETE: PE reset (type 0) and transaction failure (type 0x18) always have a third byte. */
    bool ete_special = p->cfg.ete && (type == 0 || type == 0x18);
    if (ete_special)
        len = 3;
    if ((size_t)len > n)
        return NEED_MORE;
    pkt->exc_type = (uint16_t)type;
    pkt->exc_addr_interp = (uint8_t)(((b[1] >> 5) & 2) | (b[1] & 1));
    if (b[1] & 0x80) {
        pkt->exc_type |= (uint16_t)((b[2] & 0x1f) << 5);
        pkt->exc_fault_pending = (b[2] >> 5) & 1;
    }
    if (ete_special) {
        pkt->type = type == 0x18 ? TK_ETM4_TRANS_FAIL : TK_ETM4_PE_RESET;
        set_addr64(p, 0, 0, pkt); /* the address history restarts from 0 */
    }
    return len;
}

/* §6.4.5 Cycle count formats 1-3 (values are relative to the Trace Info CYCT threshold). */
static int pkt_ccnt(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    uint8_t h = b[0];
    if (pkt->type == TK_ETM4_CCNT_F3) {
        if (!p->cfg.commit_opt1) {
            pkt->has_commit = 1;
            pkt->commit = ((h >> 2) & 3) + 1;
        }
        pkt->has_cc = 1;
        pkt->cc = p->cc_threshold + (h & 3);
        return 1;
    }
    if (pkt->type == TK_ETM4_CCNT_F2) {
        if (n < 2)
            return NEED_MORE;
        /* unsigned: TRCIDR8.MAXSPEC comes from the snapshot and may be any 32-bit value */
        uint32_t off = (h & 1) ? p->cfg.max_spec - 15u : 1u;
        pkt->has_commit = 1;
        pkt->commit = ((b[1] >> 4) & 0xfu) + off;
        pkt->has_cc = 1;
        pkt->cc = p->cc_threshold + (b[1] & 0xf);
        return 2;
    }
    /* Format 1: [commit] [count], count absent when header bit 0 is set (unknown count). */
    size_t pos = 1;
    if (!p->cfg.commit_opt1) {
        int l = cont_len(b + pos, n - pos, 5);
        if (l < 0)
            return bad(pkt, TK_ETM4_CCNT_F1, (int)pos + 5);
        if (l == NEED_MORE)
            return NEED_MORE;
        pkt->has_commit = 1;
        pkt->commit = (uint32_t)cont_val(b + pos, l);
        pos += (size_t)l;
    }
    pkt->has_cc = 1;
    if (!(h & 1)) {
        int l = cont_len(b + pos, n - pos, 3);
        if (l < 0)
            return bad(pkt, TK_ETM4_CCNT_F1, (int)pos + 3);
        if (l == NEED_MORE)
            return NEED_MORE;
        pkt->cc = (uint32_t)cont_val(b + pos, l) + p->cc_threshold;
        pos += (size_t)l;
    } else {
        pkt->cc = 0;
    }
    return (int)pos;
}

/* §6.4.9 speculation resolution: Commit, Cancel F1-F3, Mispredict. */
static int pkt_spec(const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    uint8_t h = b[0];
    switch (pkt->type) {
    case TK_ETM4_MISPREDICT:
    case TK_ETM4_CANCEL_F2:
        switch (h & 3) {
        case 1:
            pkt->atom_num = 1, pkt->atoms = 1;
            break;
        case 2:
            pkt->atom_num = 2, pkt->atoms = 3;
            break;
        case 3:
            pkt->atom_num = 1, pkt->atoms = 0;
            break;
        }
        if (pkt->type == TK_ETM4_CANCEL_F2)
            pkt->cancel = 1;
        return 1;
    case TK_ETM4_CANCEL_F3:
        if (h & 1)
            pkt->atom_num = 1, pkt->atoms = 1;
        pkt->cancel = ((h >> 1) & 3) + 2;
        return 1;
    default: { /* COMMIT, CANCEL_F1, CANCEL_F1_MISPRED: one continuation field */
        int l = cont_len(b + 1, n - 1, 5);
        if (l < 0)
            return bad(pkt, (tk_etm4_pkt_type)pkt->type, 6);
        if (l == NEED_MORE)
            return NEED_MORE;
        uint32_t v = (uint32_t)cont_val(b + 1, l);
        if (pkt->type == TK_ETM4_COMMIT) {
            pkt->has_commit = 1;
            pkt->commit = v;
        } else {
            pkt->cancel = v;
        }
        return 1 + l;
    }
    }
}

/* §6.4.10 conditional instruction and result packets. Only their extent and small fields are
 * kept: tracekit's flow decoder does not trace data-dependent condition results. */
static int pkt_cond(const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    uint8_t h = b[0];
    switch (pkt->type) {
    case TK_ETM4_COND_I_F2:
    case TK_ETM4_COND_RES_F2:
    case TK_ETM4_COND_RES_F4:
    case TK_ETM4_COND_FLUSH:
        pkt->value = h & 7;
        return 1;
    case TK_ETM4_COND_I_F3:
    case TK_ETM4_COND_RES_F3:
        if (n < 2)
            return NEED_MORE;
        pkt->value = b[1];
        return 2;
    case TK_ETM4_COND_I_F1: {
        int l = cont_len(b + 1, n - 1, 5);
        if (l < 0)
            return bad(pkt, TK_ETM4_COND_I_F1, 6);
        return l == NEED_MORE ? NEED_MORE : 1 + l;
    }
    default: { /* COND_RES_F1: one or two result+key fields of up to 6 bytes */
        int fields = ((h & 0xfc) == 0x6c) ? 1 : 2;
        size_t pos = 1;
        for (int f = 0; f < fields; f++) {
            int l = cont_len(b + pos, n - pos, 6);
            if (l < 0)
                return bad(pkt, TK_ETM4_COND_RES_F1, (int)pos + 6);
            if (l == NEED_MORE)
                return NEED_MORE;
            pos += (size_t)l;
        }
        return (int)pos;
    }
    }
}

/* §6.4.14 Q packets: an instruction count with an optional address. */
static int pkt_q(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    uint8_t t = b[0] & 0xf;
    size_t pos = 1;
    pkt->q_type = t;
    int alen = 0;
    switch (t) {
    case 0x5:
    case 0x6:
        if ((alen = short_addr(p, b + pos, n - pos, t == 0x6, pkt, false)) == NEED_MORE)
            return NEED_MORE;
        break;
    case 0xa:
    case 0xb:
        alen = 4;
        if (n < pos + 4)
            return NEED_MORE;
        break;
    case 0xf:
        return 1;
    default:
        break;
    }
    pos += (size_t)alen;
    int l = cont_len(b + pos, n - pos, 5);
    if (l < 0)
        return bad(pkt, TK_ETM4_Q, (int)pos + 5);
    if (l == NEED_MORE)
        return NEED_MORE;
    /* Complete: now apply the address part. */
    if (t <= 2)
        exact_match(p, t, pkt);
    else if (t == 5 || t == 6)
        short_addr(p, b + 1, n - 1, t == 6, pkt, true);
    else if (t == 0xa || t == 0xb)
        set_addr32(p, (uint32_t)long_addr(b + 1, 4, t == 0xb), t == 0xb, pkt);
    pkt->q_has_count = 1;
    pkt->q_count = (uint32_t)cont_val(b + pos, l);
    return (int)pos + l;
}

/* §6.4.13 atoms. Bit i of atoms is the i-th oldest atom, 1 = E (taken/executed). */
static int pkt_atom(const uint8_t *b, tk_etm4_packet *pkt)
{
    static const uint8_t f4[4] = {0xe, 0x0, 0xa, 0x5};
    uint8_t h = b[0];
    switch (pkt->type) {
    case TK_ETM4_ATOM_F1:
        pkt->atom_num = 1, pkt->atoms = h & 1;
        break;
    case TK_ETM4_ATOM_F2:
        pkt->atom_num = 2, pkt->atoms = h & 3;
        break;
    case TK_ETM4_ATOM_F3:
        pkt->atom_num = 3, pkt->atoms = h & 7;
        break;
    case TK_ETM4_ATOM_F4:
        pkt->atom_num = 4, pkt->atoms = f4[h & 3];
        break;
    case TK_ETM4_ATOM_F5:
        pkt->atom_num = 5;
        switch (((h >> 3) & 4) | (h & 3)) {
        case 5:
            pkt->atoms = 0x1e;
            break;
        case 1:
            pkt->atoms = 0x00;
            break;
        case 2:
            pkt->atoms = 0x0a;
            break;
        case 3:
            pkt->atoms = 0x15;
            break;
        default:
            return bad(pkt, TK_ETM4_ATOM_F5, 1);
        }
        break;
    default: { /* F6: (h & 0x1f) + 3 E atoms then one E (bit 5 clear) or N */
        unsigned count = (h & 0x1f) + 3u;
        pkt->atoms = (1u << count) - 1;
        if (!(h & 0x20))
            pkt->atoms |= 1u << count;
        pkt->atom_num = (uint8_t)(count + 1);
        break;
    }
    }
    return 1;
}

/* Reset the fields that are read conditionally; every other field is written by the packet
 * types it belongs to. (A full memset per packet costs a third of the parse time.) */
static inline void clear_pkt(tk_etm4_packet *pkt)
{
    pkt->err_type = 0;
    pkt->atom_num = 0;
    pkt->addr_bits = 0;
    pkt->ctx_updated = 0;
    pkt->info_sections = 0;
    pkt->has_cc = 0;
    pkt->has_commit = 0;
    pkt->exc_fault_pending = 0;
    pkt->q_has_count = 0;
    pkt->cancel = 0;
}

/* Decode one packet from b[0..n). Returns its length, NEED_MORE, or (for error packets) the
 * number of bytes it covers with pkt->type set to an error type. State changes happen only
 * when a packet is complete. */
static int decode(tk_etm4_parser *p, const uint8_t *b, size_t n, tk_etm4_packet *pkt)
{
    uint8_t h = b[0];
    pkt->header = h;
    if (h >= 0xc0) {
        pkt->type = atom_format(h);
        return pkt_atom(b, pkt);
    }
    switch (h) {
    case 0x00:
        pkt->type = TK_ETM4_EXTENSION;
        return pkt_extension(b, n, pkt);
    case 0x01:
        pkt->type = TK_ETM4_TRACE_INFO;
        return pkt_trace_info(p, b, n, pkt);
    case 0x02:
    case 0x03:
        pkt->type = TK_ETM4_TIMESTAMP;
        return pkt_timestamp(p, b, n, pkt);
    case 0x04:
        pkt->type = TK_ETM4_TRACE_ON;
        return 1;
    case 0x05:
        /* v8-M function return (ETMv4.2+, M profile only). */
        if (p->cfg.cortex_m && p->cfg.version >= 0x42) {
            pkt->type = TK_ETM4_FUNC_RET;
            return 1;
        }
        return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_FUNC_RET);
    case 0x06:
        pkt->type = TK_ETM4_EXCEPT;
        return pkt_exception(p, b, n, pkt);
    case 0x07:
        if (p->cfg.ete) /* no Exception Return packet in ETE */
            return reserved(pkt, TK_ETM4_RESERVED_CFG, TK_ETM4_EXCEPT_RTN);
        pkt->type = TK_ETM4_EXCEPT_RTN;
        return 1;
    case 0x09:
        /* ETE software instrumentation (FEAT_ITE, ETE 1.3+): EL byte, 64-bit value. */
        if (!p->cfg.ete || (p->cfg.version & 0xf) < 3)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        if (n < 10)
            return NEED_MORE;
        pkt->type = TK_ETM4_ITE;
        pkt->value = b[1];
        pkt->ite_value = 0;
        for (int i = 0; i < 8; i++)
            pkt->ite_value |= (uint64_t)b[2 + i] << (8 * i);
        return 10;
    case 0x0a:
    case 0x0b:
        if (!p->cfg.ete)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = h == 0x0a ? TK_ETM4_TRANS_ST : TK_ETM4_TRANS_COMMIT;
        return 1;
    case 0x88:
        if (p->cfg.version < 0x46)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = TK_ETM4_TS_MARKER;
        return 1;
    case 0xb0:
    case 0xb1:
    case 0xb2:
        if (p->cfg.version < 0x50)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = TK_ETM4_SRC_ADDR_MATCH;
        exact_match(p, h & 3, pkt);
        return 1;
    case 0xb4:
    case 0xb5: {
        if (p->cfg.version < 0x50)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = h == 0xb4 ? TK_ETM4_SRC_ADDR_S_IS0 : TK_ETM4_SRC_ADDR_S_IS1;
        int l = short_addr(p, b + 1, n - 1, h == 0xb5, pkt, false);
        if (l == NEED_MORE)
            return NEED_MORE;
        short_addr(p, b + 1, n - 1, h == 0xb5, pkt, true);
        return 1 + l;
    }
    case 0xb6:
    case 0xb7:
        if (p->cfg.version < 0x50)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = h == 0xb6 ? TK_ETM4_SRC_ADDR_L_32IS0 : TK_ETM4_SRC_ADDR_L_32IS1;
        if (n < 5)
            return NEED_MORE;
        set_addr32(p, (uint32_t)long_addr(b + 1, 4, h & 1), h & 1, pkt);
        return 5;
    case 0xb8:
    case 0xb9:
        if (p->cfg.version < 0x50)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        pkt->type = h == 0xb8 ? TK_ETM4_SRC_ADDR_L_64IS0 : TK_ETM4_SRC_ADDR_L_64IS1;
        if (n < 9)
            return NEED_MORE;
        set_addr64(p, long_addr(b + 1, 8, h & 1), h & 1, pkt);
        return 9;
    case 0x0c:
    case 0x0d:
        pkt->type = TK_ETM4_CCNT_F2;
        return pkt_ccnt(p, b, n, pkt);
    case 0x0e:
    case 0x0f:
        pkt->type = TK_ETM4_CCNT_F1;
        return pkt_ccnt(p, b, n, pkt);
    case 0x2d:
        pkt->type = TK_ETM4_COMMIT;
        return pkt_spec(b, n, pkt);
    case 0x2e:
        pkt->type = TK_ETM4_CANCEL_F1;
        return pkt_spec(b, n, pkt);
    case 0x2f:
        pkt->type = TK_ETM4_CANCEL_F1_MISPRED;
        return pkt_spec(b, n, pkt);
    case 0x70:
        if (p->cfg.version >= 0x43) {
            pkt->type = TK_ETM4_IGNORE;
            return 1;
        }
        return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_IGNORE);
    case 0x80:
        pkt->type = TK_ETM4_CTXT;
        pkt->ctx_updated = 0;
        pkt->ctx = p->ctxs;
        p->ctx_valid = true;
        return 1;
    case 0x81: {
        pkt->type = TK_ETM4_CTXT;
        int l = context_len(p, b + 1, n - 1);
        if (l == NEED_MORE)
            return NEED_MORE;
        context_apply(p, b + 1, pkt);
        return 1 + l;
    }
    case 0x82:
    case 0x83:
    case 0x85:
    case 0x86: {
        static const uint8_t types[] = {TK_ETM4_ADDR_CTXT_L_32IS0, TK_ETM4_ADDR_CTXT_L_32IS1, 0,
                                        TK_ETM4_ADDR_CTXT_L_64IS0, TK_ETM4_ADDR_CTXT_L_64IS1};
        pkt->type = types[h - 0x82];
        int is = (h == 0x83 || h == 0x86);
        int ab = h >= 0x85 ? 8 : 4;
        if (n < 1 + (size_t)ab)
            return NEED_MORE;
        int l = context_len(p, b + 1 + ab, n - 1 - (size_t)ab);
        if (l == NEED_MORE)
            return NEED_MORE;
        if (ab == 8)
            set_addr64(p, long_addr(b + 1, 8, is), is, pkt);
        else
            set_addr32(p, (uint32_t)long_addr(b + 1, 4, is), is, pkt);
        context_apply(p, b + 1 + ab, pkt);
        return 1 + ab + l;
    }
    case 0x90:
    case 0x91:
    case 0x92:
        pkt->type = TK_ETM4_ADDR_MATCH;
        exact_match(p, h & 3, pkt);
        return 1;
    case 0x95:
    case 0x96: {
        pkt->type = h == 0x95 ? TK_ETM4_ADDR_S_IS0 : TK_ETM4_ADDR_S_IS1;
        int l = short_addr(p, b + 1, n - 1, h == 0x96, pkt, false);
        if (l == NEED_MORE)
            return NEED_MORE;
        short_addr(p, b + 1, n - 1, h == 0x96, pkt, true);
        return 1 + l;
    }
    case 0x9a:
    case 0x9b:
        pkt->type = h == 0x9a ? TK_ETM4_ADDR_L_32IS0 : TK_ETM4_ADDR_L_32IS1;
        if (n < 5)
            return NEED_MORE;
        set_addr32(p, (uint32_t)long_addr(b + 1, 4, h & 1), h & 1, pkt);
        return 5;
    case 0x9d:
    case 0x9e:
        pkt->type = h == 0x9d ? TK_ETM4_ADDR_L_64IS0 : TK_ETM4_ADDR_L_64IS1;
        if (n < 9)
            return NEED_MORE;
        set_addr64(p, long_addr(b + 1, 8, h == 0x9e), h == 0x9e, pkt);
        return 9;
    default:
        break;
    }
    if (h >= 0x10 && h <= 0x1f) {
        pkt->type = TK_ETM4_CCNT_F3;
        return pkt_ccnt(p, b, n, pkt);
    }
    if (h >= 0x20 && h <= 0x2c) {
        tk_etm4_pkt_type t = h <= 0x27 ? TK_ETM4_NUM_DS_MKR : TK_ETM4_UNNUM_DS_MKR;
        if (!p->cfg.data_trace)
            return reserved(pkt, TK_ETM4_RESERVED_CFG, t);
        pkt->type = (uint8_t)t;
        pkt->value = h & 7;
        return 1;
    }
    if (h >= 0x30 && h <= 0x3f) {
        pkt->type =
            h <= 0x33 ? TK_ETM4_MISPREDICT : (h <= 0x37 ? TK_ETM4_CANCEL_F2 : TK_ETM4_CANCEL_F3);
        return pkt_spec(b, n, pkt);
    }
    if (h >= 0x40 && h <= 0x6f) {
        tk_etm4_pkt_type t;
        if (h <= 0x42)
            t = TK_ETM4_COND_I_F2;
        else if (h == 0x43)
            t = TK_ETM4_COND_FLUSH;
        else if (h <= 0x46)
            t = TK_ETM4_COND_RES_F4;
        else if ((h >= 0x48 && h <= 0x4a) || (h >= 0x4c && h <= 0x4e))
            t = TK_ETM4_COND_RES_F2;
        else if (h >= 0x50 && h <= 0x5f)
            t = TK_ETM4_COND_RES_F3;
        else if ((h >= 0x68 && h <= 0x6b) || h >= 0x6e)
            t = TK_ETM4_COND_RES_F1;
        else if (h == 0x6c)
            t = TK_ETM4_COND_I_F1;
        else if (h == 0x6d)
            t = TK_ETM4_COND_I_F3;
        else
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
        if (!p->cfg.cond_trace)
            return reserved(pkt, TK_ETM4_RESERVED_CFG, t);
        pkt->type = (uint8_t)t;
        return pkt_cond(b, n, pkt);
    }
    if (h >= 0x71 && h <= 0x7f) {
        pkt->type = TK_ETM4_EVENT;
        pkt->value = h & 0xf;
        return 1;
    }
    if (h >= 0xa0 && h <= 0xaf) {
        uint8_t t = h & 0xf;
        bool ok = t <= 2 || t == 5 || t == 6 || t == 0xa || t == 0xb || t == 0xc || t == 0xf;
        if (!ok || !p->cfg.q_elements)
            return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_Q);
        pkt->type = TK_ETM4_Q;
        return pkt_q(p, b, n, pkt);
    }
    return reserved(pkt, TK_ETM4_RESERVED, TK_ETM4_RESERVED);
}

/* ---- stream handling ------------------------------------------------------------------ */

static tk_status emit_notsync(tk_etm4_parser *p, uint64_t index)
{
    if (p->notsync_sent)
        return TK_OK;
    p->notsync_sent = true;
    tk_etm4_packet pkt;
    memset(&pkt, 0, sizeof(pkt));
    pkt.type = TK_ETM4_NOT_SYNC;
    pkt.trace_id = p->cfg.trace_id;
    pkt.index = index;
    return emit_pkt(p, &pkt);
}

/* Unsynchronised: drop bytes until 11 zero bytes followed by 0x80 (§6.4.2 A-Sync). Returns the
 * number of bytes consumed; sets *found when the A-Sync was completed (and reported). */
static tk_status hunt_async(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index,
                            size_t *used)
{
    size_t i = 0;
    tk_status st;
    for (; i < n; i++) {
        uint8_t b = d[i];
        if (b == 0x00) {
            if (!p->zeros)
                p->zero_start = index + i;
            p->zero_idx[p->zeros % 12] = index + i;
            if (p->zeros < UINT32_MAX)
                p->zeros++;
            continue;
        }
        if (b == 0x80 && p->zeros >= 11) {
            /* The zero run may be longer than 11: the extra leading zeros were not part of the
             * packet and are reported as unsynchronised data. */
            uint64_t start = p->zero_idx[(p->zeros - 11) % 12];
            if (p->zeros > 11 && (st = emit_notsync(p, p->zero_start)))
                return st;
            tk_etm4_packet pkt;
            memset(&pkt, 0, sizeof(pkt));
            pkt.type = TK_ETM4_ASYNC;
            pkt.header = 0;
            pkt.size = 12;
            pkt.trace_id = p->cfg.trace_id;
            pkt.index = start;
            p->synced = true;
            p->zeros = 0;
            *used = i + 1;
            return emit_pkt(p, &pkt);
        }
        /* Non-sync byte: it and any zeros before it are dropped. */
        if ((st = emit_notsync(p, p->zeros ? p->zero_start : index + i)))
            return st;
        p->zeros = 0;
    }
    *used = n;
    return TK_OK;
}

/* Batch mode: a packet of the complete parser that a compact packet holds (one split between
 * runs) joins the batch, as the batch path would have taken it. */
static tk_status push_lite(tk_etm4_parser *p, const tk_etm4_packet *pkt)
{
    tk_status st;
    if (p->nlite == LITE_MAX && (st = tk_etm4_parser_flush(p)))
        return st;
    tk_etm4_pkt_lite *l = &p->lite[p->nlite++];
    memset(l, 0, sizeof(*l));
    l->index = pkt->index;
    if (p->runs && pkt->type >= TK_ETM4_ATOM_F1) {
        /* an atom reached through the complete parser: a run of one */
        l->type = TK_ETM4_LITE_ATOMS;
        l->size = 1;
        l->atom_headers[0] = pkt->header;
        return TK_OK;
    }
    l->type = pkt->type;
    l->header = pkt->header;
    l->size = pkt->size;
    if (pkt->type >= TK_ETM4_ATOM_F1) {
        l->atom_num = pkt->atom_num;
        l->atoms = pkt->atoms;
        return TK_OK;
    }
    l->addr = pkt->addr;
    l->addr_bits = pkt->addr_bits;
    l->addr_is = pkt->addr_is;
    l->addr_64 = pkt->addr_64;
    l->match_idx = pkt->match_idx;
    return TK_OK;
}

static tk_status deliver(tk_etm4_parser *p, tk_etm4_packet *pkt, uint64_t index, int len)
{
    pkt->index = index;
    pkt->trace_id = p->cfg.trace_id;
    pkt->size = (uint8_t)(len > 255 ? 255 : len);
    if (tk_etm4_pkt_is_error(pkt)) {
        /* Resynchronise at the next A-Sync; the NOT_SYNC that follows says where. */
        p->synced = false;
        p->notsync_sent = false;
        p->zeros = 0;
    }
    const uint8_t t = pkt->type;
    if (p->batch_fn && ((t >= TK_ETM4_ATOM_F1 && t <= TK_ETM4_ATOM_F6) ||
                        (t >= TK_ETM4_ADDR_MATCH && t <= TK_ETM4_ADDR_L_64IS1)))
        return push_lite(p, pkt);
    return emit_pkt(p, pkt);
}

/* The packet at d[0] through the complete parser: delivered, or kept as a partial packet when d
 * ends inside it. *used: the bytes taken (all of d for a partial packet). */
static tk_status slow_packet(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index,
                             size_t *used)
{
    tk_etm4_packet *pkt = &p->pkt;
    clear_pkt(pkt);
    int r = decode(p, d, n, pkt);
    if (r == NEED_MORE) {
        if (n < MAX_PKT) {
            memcpy(p->part, d, n);
            p->npart = n;
            p->part_index = index;
            *used = n;
            return TK_OK;
        }
        r = bad(pkt, (tk_etm4_pkt_type)pkt->type, MAX_PKT);
    }
    *used = (size_t)r;
    return deliver(p, pkt, index, r);
}

/* Complete a packet split across runs: append as much of d as the side buffer holds and
 * decode once. Decoding only looks at the bytes a packet needs, so this finds the same packet
 * as feeding the bytes one at a time would. Returns bytes of d consumed in *used. */
static tk_status complete_part(tk_etm4_parser *p, const uint8_t *d, size_t n, size_t *used)
{
    tk_etm4_packet *pkt = &p->pkt;
    size_t old = p->npart;
    size_t take = MAX_PKT - old < n ? MAX_PKT - old : n;
    memcpy(p->part + old, d, take);
    p->npart = old + take;
    clear_pkt(pkt);
    int r = decode(p, p->part, p->npart, pkt);
    if (r == NEED_MORE && p->npart == MAX_PKT)
        r = bad(pkt, (tk_etm4_pkt_type)pkt->type, MAX_PKT);
    if (r == NEED_MORE) {
        *used = take;
        return TK_OK;
    }
    p->npart = 0;
    /* An error packet may end before the bytes gathered so far: the rest are parsed again
     * (those of d by the caller, any earlier ones here). */
    if ((size_t)r < old) {
        tk_status st = deliver(p, pkt, p->part_index, r);
        *used = 0;
        if (st)
            return st;
        uint8_t rest[MAX_PKT];
        size_t nrest = old - (size_t)r;
        uint64_t rest_index = p->part_index + (uint64_t)r;
        memcpy(rest, p->part + r, nrest);
        return tk_etm4_parser_data(p, rest, nrest, rest_index);
    }
    *used = (size_t)r - old;
    return deliver(p, pkt, p->part_index, r);
}

static tk_status parse_data(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index);

tk_status tk_etm4_parser_data(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index)
{
    p->win_d = NULL; /* the caller may reuse its buffer: no window of an earlier call */
    return parse_data(p, d, n, index);
}

static tk_status parse_data(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index)
{
    size_t i = 0;
    tk_status st;
    tk_etm4_packet *pkt = &p->pkt;
    const tk_etm4_packet_fn fn = p->fn;
    void *const ctx = p->ctx;
    while (i < n) {
        if (!p->synced) {
            size_t used;
            if ((st = hunt_async(p, d + i, n - i, index + i, &used)))
                return st;
            i += used;
            continue;
        }
        if (p->npart) {
            size_t used;
            if ((st = complete_part(p, d + i, n - i, &used)))
                return st;
            i += used;
            continue;
        }
        /* Synchronised: the packets that make up nearly all instruction trace (atoms, short
         * and exact-match addresses) are handled in line; the rest go through decode(). */
        if (p->batch_fn) {
            if ((st = tk_etm4_batch_run(p, d, NULL, n, index, &i)))
                return st;
        }
        while (!p->batch_fn && i < n) {
            uint8_t h = d[i];
            if (h >= 0xc0 && p->atom[h - 0xc0].num) {
                pkt->type = p->atom[h - 0xc0].type;
                pkt->atom_num = p->atom[h - 0xc0].num;
                pkt->atoms = p->atom[h - 0xc0].bits;
                pkt->header = h;
                pkt->size = 1;
                pkt->trace_id = p->cfg.trace_id;
                pkt->index = index + i;
                if ((st = fn(ctx, pkt)))
                    return st;
                i++;
                continue;
            }
            if ((h == 0x95 || h == 0x96) && i + 1 < n && (i + 2 < n || !(d[i + 1] & 0x80))) {
                /* §6.4.12 short address, as short_addr() */
                clear_pkt(pkt);
                pkt->header = h;
                pkt->type = h == 0x95 ? TK_ETM4_ADDR_S_IS0 : TK_ETM4_ADDR_S_IS1;
                const uint8_t is = h == 0x96, b1 = d[i + 1];
                const int shift = 2 - is;
                int bits = 7 + shift, l = 1;
                uint64_t v = (uint64_t)(b1 & 0x7f) << shift;
                if (b1 & 0x80) {
                    v |= (uint64_t)d[i + 2] << bits;
                    bits += 8;
                    l = 2;
                }
                uint64_t mask = (1ull << bits) - 1;
                p->cur.val = (p->cur.val & ~mask) | v;
                if (p->cur.valid_bits < bits)
                    p->cur.valid_bits = (uint8_t)bits;
                p->cur.is = is;
                push_addr(p);
                pkt->addr_bits = (uint8_t)bits;
                fill_addr(p, pkt);
                pkt->size = (uint8_t)(1 + l);
                pkt->trace_id = p->cfg.trace_id;
                pkt->index = index + i;
                if ((st = fn(ctx, pkt)))
                    return st;
                i += 1 + (size_t)l;
                continue;
            }
            if (h >= 0x90 && h <= 0x92) {
                clear_pkt(pkt);
                pkt->header = h;
                pkt->type = TK_ETM4_ADDR_MATCH;
                exact_match(p, h & 3, pkt);
                pkt->size = 1;
                pkt->trace_id = p->cfg.trace_id;
                pkt->index = index + i;
                if ((st = fn(ctx, pkt)))
                    return st;
                i++;
                continue;
            }
            break;
        }
        if (i >= n)
            break;
        size_t used;
        if ((st = slow_packet(p, d + i, n - i, index + i, &used)))
            return st;
        i += used;
    }
    return TK_OK;
}

/* Joined frames, byte k at index + at[k] (at: NULL for k + k / 15): the end of the frame that
 * byte i is in (the bytes from i on whose index goes on by one). */
static size_t frame_end(const uint16_t *at, size_t i, size_t n)
{
    if (!at) {
        const size_t end = (i / 15 + 1) * 15;
        return end < n ? end : n;
    }
    size_t k = i + 1;
    while (k < n && at[k] == at[k - 1] + 1)
        k++;
    return k;
}

/* Joined frames, byte k at index + at[k]; without at, k + k / 15 from the parser's table, at
 * most JOINED_MAX bytes from a frame start at a time (as many as the table covers). */
static tk_status parse_frames(tk_etm4_parser *p, const uint8_t *d, const uint16_t *at, size_t n,
                              uint64_t index)
{
    tk_status st;
    size_t i = 0, used;
    p->win_d = NULL;
#define AT(k) (at ? at[k] : (k) + (k) / 15)
    while (i < n) {
        /* Synchronised, no partial packet: compact packets straight from the joined frames. */
        if (p->batch_fn && p->synced && !p->npart) {
            if (at) {
                if ((st = tk_etm4_batch_run(p, d, at, n, index, &i)))
                    return st;
            } else {
                const size_t w = i - i % 15, wn = n - w < JOINED_MAX ? n - w : JOINED_MAX;
                size_t k = i - w;
                if ((st = tk_etm4_batch_run(p, d + w, joined_at, wn, index + AT(w), &k)))
                    return st;
                i = w + k;
                if (k >= wn)
                    continue; /* the window is done (or the data) */
            }
            if (i >= n)
                break;
            /* Stopped at a packet the fast path does not take, or one the data ends inside
             * (it goes on in the next run): to the complete parser straight from the joined
             * bytes, which are contiguous across frames, as one run per frame gives it (its
             * index is its first byte's). A run of the frame's rest instead cost a padded
             * window for a few bytes, five times per call (docs/performance.md, session 17). */
            if ((st = slow_packet(p, d + i, n - i, index + AT(i), &used)))
                return st;
            i += used;
            continue;
        }
        const size_t end = frame_end(at, i, n);
        if (p->batch_fn && p->npart) {
            /* The first bytes complete a partial packet: as a run of this frame's bytes
             * would. */
            if ((st = complete_part(p, d + i, end - i, &used)))
                return st;
            i += used;
            continue;
        }
        /* Anything else: the rest of this frame's bytes as one run, as without joining. */
        if ((st = parse_data(p, d + i, end - i, index + AT(i))))
            return st;
        i = end;
    }
#undef AT
    return TK_OK;
}

tk_status tk_etm4_parser_frames(tk_etm4_parser *p, const uint8_t *d, size_t n, uint64_t index)
{
    return parse_frames(p, d, NULL, n, index);
}

tk_status tk_etm4_parser_frames_at(tk_etm4_parser *p, const uint8_t *d, const uint16_t *at,
                                   size_t n, uint64_t index)
{
    return parse_frames(p, d, at, n, index);
}

tk_status tk_etm4_parser_end(tk_etm4_parser *p)
{
    if (!p->npart)
        return tk_etm4_parser_flush(p);
    tk_etm4_packet pkt;
    memset(&pkt, 0, sizeof(pkt));
    int r = decode(p, p->part, p->npart, &pkt);
    (void)r;
    pkt.err_type = pkt.type;
    pkt.type = TK_ETM4_INCOMPLETE_EOT;
    pkt.trace_id = p->cfg.trace_id;
    pkt.index = p->part_index;
    pkt.size = (uint8_t)p->npart;
    p->npart = 0;
    return emit_pkt(p, &pkt);
}

/* ---- state for parallel decoding (coresight/etm4_state.h) ------------------------------- */

void tk_etm4_parser_get_state(const tk_etm4_parser *p, tk_etm4_parser_state *s)
{
    memset(s, 0, sizeof(*s));
    s->synced = p->synced;
    s->notsync_sent = p->notsync_sent;
    s->ctx_valid = p->ctx_valid;
    s->ts_valid = p->ts_valid;
    s->seen_trace_info = p->seen_trace_info;
    s->zeros = p->zeros;
    s->cc_threshold = p->cc_threshold;
    s->npart = p->npart;
    const addr_entry *a[4] = {&p->cur, &p->stack[0], &p->stack[1], &p->stack[2]};
    for (int i = 0; i < 4; i++) {
        s->addr[i] = a[i]->val;
        s->addr_is[i] = a[i]->is;
        s->addr_bits[i] = a[i]->valid_bits;
        s->addr_64[i] = a[i]->is64;
    }
    s->ctx = p->ctxs;
    s->ts = p->ts;
}

bool tk_etm4_parser_state_equal(const tk_etm4_parser_state *a, const tk_etm4_parser_state *b)
{
    const tk_etm4_context *x = &a->ctx, *y = &b->ctx;
    /* the A-Sync hunt's flags matter only while hunting */
    if (a->synced != b->synced ||
        (!a->synced && (a->notsync_sent != b->notsync_sent || a->zeros != b->zeros)) ||
        a->ctx_valid != b->ctx_valid || a->ts_valid != b->ts_valid ||
        a->seen_trace_info != b->seen_trace_info || a->cc_threshold != b->cc_threshold ||
        a->npart != b->npart || a->ts != b->ts)
        return false;
    for (int i = 0; i < 4; i++)
        if (a->addr[i] != b->addr[i] || a->addr_is[i] != b->addr_is[i] ||
            a->addr_bits[i] != b->addr_bits[i] || a->addr_64[i] != b->addr_64[i])
            return false;
    return x->el == y->el && x->ns == y->ns && x->sf == y->sf && x->has_vmid == y->has_vmid &&
           x->has_cid == y->has_cid && x->vmid == y->vmid && x->cid == y->cid;
}
