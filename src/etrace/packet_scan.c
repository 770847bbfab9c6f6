/* SPDX-License-Identifier: BSD-2-Clause */
/* Zero-copy scanner of the reference raw framing (VERSIONS.md C.6) with the te_inst codec
 * folded in. Formats 1 and 2 of up to 8 bytes (nearly every packet of a trace) are decoded
 * in line from per-layout tables built once by tk_te_scan_init: the first payload byte
 * (format, F1 branches) selects where the address starts, the masks and the longest valid
 * payload, so each field is one shift of the sign-extended payload and one mask, and no
 * branch depends on the data. Format 3 start packets (table positions) and formats 1 and 2
 * of 9..16 bytes (the same table entry, 128-bit positions) are decoded in the same loop
 * too, without a packet struct for the latter, so that a run of packets is not cut by
 * them; other format 3 packets, and packets that start in the first 7 bytes of the buffer (the
 * in-line path reads up to 7 bytes before a header), take the struct decoders of packet_fast.h
 * outside the loop; errors, format 0 and the last 16 bytes of the buffer go to
 * tk_te_scan_next, which gives the same results as the generic codec
 * (tests/speed/test_scan.c and tests/codec/test_packet_scan_paths.c compare every path with
 * it). The same loop writes compact records (tk_te_scan_records) or whole structs
 * (tk_te_scan_batch), in a portable copy and a BMI2 copy chosen at run time, each in a copy
 * with and without offsets and, for records, with and without an irdepth field and with and
 * without flag bits in payloads of up to 8 bytes (none where addresses have 62 bits or
 * more). */
#include "tracekit/te_packet.h"

#include <stddef.h>
#include <string.h>

#include "etrace/packet_fast.h"
#include "tracekit/encap.h"
#include "util/compiler.h"

/* The record scanner's BMI2 build (shifts by a register count: one instruction, no flags)
 * next to the portable one, chosen at run time. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define TK_SCAN_BMI2 1
#else
#define TK_SCAN_BMI2 0
#endif

/* The decoding table of formats 1 and 2 (payload.adoc "Format 1", "Format 2"), by the
 * payload's first byte: format (2 bits) and, for format 1, branches (5 bits), which fix
 * the map length and so where the address and the rest start. A format 2 entry is repeated
 * for every value of its first six address bits, every entry for the map's or address's bit
 * at bit 7 (the index is then the byte as loaded). */
static void table_init(tk_te_scan *s)
{
    const tk_te_layout *l = &s->layout;
    tk_te_scan_table *t = &s->table;
    memset(t, 0, sizeof(*t));
    /* Record flags from four transmitted bits: address MSB, notify, updiscon, irreport;
     * each flag is sent relative to the bit before it (VERSIONS.md A.1). */
    for (unsigned b = 0; b < 16; b++)
        t->flags[b] = (uint64_t)((b ^ (b >> 1)) & 7u) << 48;
    for (unsigned h = 0; h < 256; h++)
        t->hshift[h] = (uint8_t)((0u - 8u * h) & 63u);
    for (unsigned n = 1; n <= TK_TE_FAST_MAX_LEN; n++)
        t->nshift[n - 1] = (uint8_t)((64u - 8u * n) & 63u);
    /* no address field: its MSB is not the bit before notify (the generic path knows) */
    if (!l->fast || l->aw == 0 || l->aw > 64 || l->d > 64)
        return;
    /* F3 SF0 (payload.adoc "Format 3 subformat 0"): format, subformat, branch, then these */
    const unsigned w3[4] = {l->p, l->t, l->c, l->aw};
    unsigned at = 5;
    for (unsigned f = 0; f < 4; f++) {
        t->smask[f] = tk_te_fast_mask(w3[f]);
        /* from bit 127 of a 16-byte payload on, every bit is a sign copy */
        t->spos[f] = (uint8_t)(at < 127u ? at : 127u);
        t->skind[f] = (uint8_t)(at >= 64u           ? TK_TE_SCAN_HI
                                : at + w3[f] <= 64u ? TK_TE_SCAN_LO
                                                    : TK_TE_SCAN_BOTH);
        at += w3[f];
    }
    t->sbelow64 = t->spos[3] < 64u;
    for (unsigned b = 0; b < 512; b++)
        t->sbp[b] = (uint16_t)((b & 1u) | ((b >> 1) & t->smask[0]) << 8);
    const unsigned sl = (at + 7u) / 8u;
    t->smaxlen = (uint8_t)(sl < TK_TE_FAST_MAX_LEN ? sl : TK_TE_FAST_MAX_LEN);
    /* whether the bit before notify lies inside some payload of up to 8 bytes */
    bool flags8 = false;
    for (unsigned i = 0; i < 256; i++) {
        const unsigned fmt = i & 3u;
        if (fmt != TK_TE_F1 && fmt != TK_TE_F2)
            continue; /* maxlen 0: formats 0 and 3 take the other path */
        const unsigned br = fmt == TK_TE_F1 ? (i >> 2) & 31u : 0u;
        const unsigned mb = fmt == TK_TE_F1 ? tk_te_map_bits(br) : 0u;
        /* F1 with branches = 0: a full 31-bit map and nothing after it */
        const bool has = fmt == TK_TE_F2 || br != 0;
        const unsigned ap = fmt == TK_TE_F1 ? 7u + mb : 2u;
        const unsigned tp = ap + l->aw;
        const unsigned total = has ? tp + 3u + l->d : ap;
        t->amask[i] = has ? tk_te_fast_mask(l->aw) : 0;
        t->dmask[i] = has ? tk_te_fast_mask(l->d) : 0;
        t->tail[i] = (uint64_t)fmt << 32 | (uint64_t)br << 40 |
                     (uint64_t)(has ? TK_TE_REC_ADDRESS : 0u) << 48;
        t->mapmask[i] = (uint32_t)tk_te_fast_mask(mb);
        /* From bit 63 of the widened payload on, all bits are sign copies; reading there
         * gives 0 or ~0, whose flags (each bit XOR the one before) are 0: right for a
         * field past the payload and for packets without an address. */
        t->tpm1[i] = (uint8_t)(has && tp - 1u < 63u ? tp - 1u : 63u);
        /* the same from bit 127 on, for payloads of 9..16 bytes */
        t->tpm1_16[i] = (uint8_t)(has && tp - 1u < 127u ? tp - 1u : 127u);
        t->dpos16[i] = (uint8_t)(has && tp + 3u < 127u ? tp + 3u : 127u);
        /* a payload with a whole byte more than the packet needs goes to the careful path,
         * which reports it */
        const unsigned ml = (total + 7u) / 8u;
        t->apmax[i] = (uint64_t)ap | (uint64_t)(ml < 8u ? ml : 8u) << 56;
        t->maxlen16[i] = (uint8_t)(ml < TK_TE_FAST_MAX_LEN ? ml : TK_TE_FAST_MAX_LEN);
        if (t->tpm1[i] < 63u)
            flags8 = true;
    }
    t->noflags8 = !flags8;
}

void tk_te_scan_init(tk_te_scan *s, const tk_te_params *p, const uint8_t *buf, size_t len)
{
    memset(s, 0, sizeof(*s));
    tk_te_layout_init(&s->layout, p);
    s->buf = buf;
    s->len = buf ? len : 0;
#if TK_SCAN_BMI2
    s->use_bmi2 = __builtin_cpu_supports("bmi2") ? 1 : 0;
#endif
    table_init(s);
}

void tk_te_scan_seek(tk_te_scan *s, size_t offset, uint64_t index)
{
    s->pos = offset < s->len ? offset : s->len;
    s->next_index = index;
}

static tk_status damaged(tk_te_scan *s, tk_diag *diag, tk_status st, size_t off, uint64_t index)
{
    s->offset = off;
    s->index = index;
    if (diag) {
        diag->byte_offset = off;
        diag->packet_index = index;
    }
    return st;
}

/* Framing errors are worded like the raw file reader's (te_raw.c, encap_reader.c). */
TK_NOINLINE
static tk_status slow_next(tk_te_scan *s, tk_te_packet *out, tk_diag *diag)
{
    const size_t off = s->pos;
    const uint64_t index = s->next_index;
    const uint8_t h = s->buf[off];
    const unsigned n = h & 0x1fu;
    if (n == 0) {
        /* the reference writes at least one payload byte; the packet index does not move */
        s->pos = off + 1;
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): header 0x%02x has length 0 (skipped 1 byte)", off,
                    (unsigned long long)index, h);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    s->next_index = index + 1;
    if (h & 0x80) {
        /* encapsulation.adoc: extend must be 0 when the stream has no timestamps */
        s->pos = off + 1 + n <= s->len ? off + 1 + n : s->len;
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): header 0x%02x has extend set but the stream has no "
                    "timestamps (skipped %u bytes)",
                    off, (unsigned long long)index, h, 1 + n);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    if (1 + n > s->len - off) {
        s->pos = s->len;
        tk_diag_set(diag, TK_ERR_TRUNCATED,
                    "offset %zu (packet %llu): header 0x%02x announces a %u-byte packet but only "
                    "%zu bytes remain (truncated)",
                    off, (unsigned long long)index, h, 1 + n, s->len - off);
        return damaged(s, diag, TK_ERR_TRUNCATED, off, index);
    }
    s->pos = off + 1 + n;
    s->offset = off;
    s->index = index;
    const unsigned msg_type = (h >> 5) & 3u;
    if (msg_type != TK_ENCAP_FLOW_TE_INST) {
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): bad packet header: message type %u, not te_inst "
                    "(2)",
                    off, (unsigned long long)index, msg_type);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    tk_diag local;
    tk_diag_clear(&local);
    tk_status st = tk_te_packet_decode_layout(&s->layout, s->buf + off + 1, n, out, &local);
    if (st != TK_OK) {
        tk_diag_set(diag, st, "offset %zu (packet %llu): %s", off, (unsigned long long)index,
                    local.message[0] ? local.message : tk_strerror(st));
        return damaged(s, diag, st, off, index);
    }
    return TK_OK;
}

/* The field at bit pos (at most 127) of the payload held as hi:lo, sign copies past it:
 * below bit 64 a double shift, from bit 64 on one shift of hi. The test on pos depends only on the
 * parameters, so it is always predicted. */
TK_TE_FAST_INLINE uint64_t field128(uint64_t lo, uint64_t hi, unsigned pos)
{
    if (pos >= 64)
        return (uint64_t)((int64_t)hi >> (pos & 63u));
    /* hi << (64 - pos) in two steps, right for pos 0 too (63 - pos is ~pos in 6 bits); in
     * 64-bit words, as GCC spills an __int128 shifted by a variable count to the stack */
    return lo >> pos | (hi << 1) << (~pos & 63u);
}

__extension__ typedef unsigned __int128 tk_te_scan_u128;

/* Start packet field f (1..3: time, context, address; privilege comes with the branch bit
 * from sbp) of the payload hi:lo. Where every field starts below bit 64 (low64: the usual
 * parameters), one formula without branches: the 128-bit payload shifted down by a count
 * below 64, which is one double shift on x86-64 (shrd; the two shifts and the or of the
 * 64-bit words took two instructions and a table position more per field). Otherwise the
 * kind of extraction its position needs (a parameter: always predicted), one shift for a
 * field inside one word. */
TK_TE_FAST_INLINE uint64_t start_field(const tk_te_scan_table *t, unsigned f, uint64_t lo,
                                       uint64_t hi, const bool low64)
{
    const unsigned pos = t->spos[f];
    uint64_t v;
    if (low64)
        v = (uint64_t)(((tk_te_scan_u128)hi << 64 | lo) >> (pos & 63u));
    else if (t->skind[f] == TK_TE_SCAN_LO)
        v = lo >> (pos & 63u);
    else if (t->skind[f] == TK_TE_SCAN_HI)
        v = (uint64_t)((int64_t)hi >> (pos & 63u));
    else
        v = field128(lo, hi, pos);
    return v & t->smask[f];
}

/* The second word of a payload of n (1..16) bytes at p (16 bytes readable), sign-extended
 * past its last byte; lo is the first word, sign-extended in place when n <= 8. From 9
 * bytes on, the second word is the 8 bytes that end with the payload, shifted by the
 * table's amount (one shift aligns and sign-extends it). */
TK_TE_FAST_INLINE uint64_t payload_hi(const tk_te_scan_table *t, const uint8_t *p, unsigned n,
                                      uint64_t *lo)
{
    if (n <= 8) {
        const unsigned sh = 64 - 8 * n;
        *lo = (uint64_t)((int64_t)(*lo << sh) >> sh);
        return (uint64_t)((int64_t)*lo >> 63);
    }
    return (uint64_t)((int64_t)tk_te_fast_ld64(p + n - 8) >> t->nshift[n - 1]);
}

/* The record's last 8 bytes as one word (little-endian: map, format, branches, flags,
 * subformat), or field by field. */
TK_TE_FAST_INLINE void rec_put(tk_te_rec *r, uint64_t address, uint64_t irdepth, uint64_t tail)
{
    r->address = address;
    r->irdepth = irdepth;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    r->branch_map = (uint32_t)tail;
    r->format = (uint8_t)(tail >> 32);
    r->branches = (uint8_t)(tail >> 40);
    r->flags = (uint8_t)(tail >> 48);
    r->subformat = (uint8_t)(tail >> 56);
#else
    memcpy(&r->branch_map, &tail, 8);
#endif
}

/* A format 3 start packet's struct. Where the struct has the layout below, it is written in
 * 12 stores, each 8 or 16 bytes covering fields and zeros at once, instead of a clear and
 * then the fields (16 stores): one start packet comes every 17 packets of a trace. */
TK_TE_FAST_INLINE void start_struct(tk_te_packet *f, unsigned bp, uint64_t time, uint64_t context,
                                    uint64_t address)
/* (bp: branch | privilege << 8) */
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    _Static_assert(
        offsetof(tk_te_packet, format) == 0 && offsetof(tk_te_packet, subformat) == 1 &&
            offsetof(tk_te_packet, branches) == 2 && offsetof(tk_te_packet, branch_map) == 4 &&
            offsetof(tk_te_packet, branch_count) == 8 &&
            offsetof(tk_te_packet, has_address) == 24 && offsetof(tk_te_packet, address) == 32 &&
            offsetof(tk_te_packet, notify) == 40 && offsetof(tk_te_packet, branch) == 56 &&
            offsetof(tk_te_packet, privilege) == 57 && offsetof(tk_te_packet, time) == 64 &&
            offsetof(tk_te_packet, context) == 72 && offsetof(tk_te_packet, ecause) == 80 &&
            sizeof(tk_te_packet) == 120 && TK_TE_SF_START == 0,
        "start_struct: update the store list");
    typedef uint64_t chunk __attribute__((vector_size(16), aligned(1), may_alias));
    unsigned char *o = (unsigned char *)f;
    const chunk z = {0, 0};
    const uint64_t w0 = TK_TE_F3, w3 = 1, w7 = bp;
    memcpy(o, &w0, 8);      /* format; subformat (start), branches, map: 0 */
    *(chunk *)(o + 8) = z;  /* branch_count, branch_fmt, jtc_index */
    memcpy(o + 24, &w3, 8); /* has_address */
    memcpy(o + 32, &address, 8);
    *(chunk *)(o + 40) = z; /* notify, updiscon, irreport, irdepth */
    memcpy(o + 56, &w7, 8); /* branch, privilege */
    memcpy(o + 64, &time, 8);
    memcpy(o + 72, &context, 8);
    *(chunk *)(o + 80) = z;  /* ecause .. tval */
    *(chunk *)(o + 96) = z;  /* support fields, bpsuccess */
    *(chunk *)(o + 104) = z; /* overlaps: 120 bytes */
#else
    tk_te_packet_clear(f);
    f->format = TK_TE_F3;
    f->branch = (uint8_t)bp;
    f->privilege = (uint8_t)(bp >> 8);
    f->time = time;
    f->context = context;
    f->address = address;
    f->has_address = true;
#endif
}

/* Format 3 start, the sync packet of every trace (payload.adoc "Format 3 subformat 0"), of
 * n (1..smaxlen) payload bytes at p with 16 bytes readable: the fields sit at positions
 * fixed by the parameters (the table), each one double shift of the sign-extended payload.
 * Into f, and into r unless it is NULL. */
TK_TE_FAST_INLINE void start_packet(const tk_te_scan_table *t, const uint8_t *p, unsigned n,
                                    tk_te_rec *r, tk_te_packet *f, const bool with_rec,
                                    const bool low64)
{
    uint64_t lo = tk_te_fast_ld64(p);
    const uint64_t hi = payload_hi(t, p, n, &lo);
    const uint64_t address = start_field(t, 3, lo, hi, low64);
    /* branch and privilege (from bit 5, at most 8 bits: params.c) with one lookup */
    start_struct(f, t->sbp[lo >> 4 & 511u], start_field(t, 1, lo, hi, low64),
                 start_field(t, 2, lo, hi, low64), address);
    if (with_rec)
        rec_put(r, address, 0,
                (uint64_t)TK_TE_F3 << 32 | (uint64_t)TK_TE_REC_ADDRESS << 48 |
                    (uint64_t)TK_TE_SF_START << 56);
}

/* other_packet: the batch ends after this packet */
enum { OTHER_LAST = 0x100 };

/* A packet the in-line path does not take (format 3, longer payloads, damage): the struct
 * decoder of packet_fast.h into full[k]. Returns the bytes used (header and payload), with
 * OTHER_LAST after a support packet; 0 if the packet needs tk_te_scan_next. */
TK_NOINLINE
static size_t other_packet(const tk_te_scan *s, size_t pos, tk_te_rec *rec, tk_te_packet *full,
                           size_t k)
/* (rec NULL: whole structs only) */
{
    const uint8_t *const p = s->buf + pos;
    const unsigned h = p[0], n = h & 0x1fu;
    if ((h & 0xe0u) != (TK_ENCAP_FLOW_TE_INST << 5) || n - 1u >= TK_TE_FAST_MAX_LEN)
        return 0;
    if ((p[1] & 15u) == (TK_TE_SF_START << 2 | TK_TE_F3) && n <= s->table.smaxlen) {
        start_packet(&s->table, p + 1, n, rec ? &rec[k] : NULL, &full[k], rec != NULL, false);
        return 1u + n;
    }
    if (tk_te_fast_decode(&s->layout, tk_te_fast_words_overread(p + 1, n), n, &full[k]) !=
        TK_TE_FAST_OK)
        return 0;
    if (rec)
        tk_te_fast_rec_of(&full[k], &rec[k]);
    /* A support packet can change the run-time options the codec reads (implicit
     * exception, F0 subformat inference): the caller applies it before the next. */
    if (full[k].format == TK_TE_F3 && full[k].subformat == TK_TE_SF_SUPPORT)
        return OTHER_LAST | (1u + n);
    return 1u + n;
}

/* GCC pairs the address and irdepth masks into vector instructions, which takes more
 * instructions than the two scalar ANDs. */
#if defined(__GNUC__) && !defined(__clang__)
#define TK_SCAN_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define TK_SCAN_NO_SLP
#endif

/* The whole struct of a format 1 or 2 packet from its record fields (tk_te_scan_batch). */
TK_TE_FAST_INLINE void f12_struct(tk_te_packet *f, uint64_t address, uint64_t irdepth,
                                  uint64_t tail)
{
    tk_te_packet_clear(f);
    f->format = (uint8_t)(tail >> 32);
    f->branches = (uint8_t)(tail >> 40);
    f->branch_map = (uint32_t)tail;
    f->has_address = (tail >> 48 & TK_TE_REC_ADDRESS) != 0;
    f->address = address;
    f->notify = (tail >> 48 & TK_TE_REC_NOTIFY) != 0;
    f->updiscon = (tail >> 48 & TK_TE_REC_UPDISCON) != 0;
    f->irreport = (tail >> 48 & TK_TE_REC_IRREPORT) != 0;
    f->irdepth = irdepth;
}

/* One packet at buf + at (17 bytes readable from there, 7 before it) the in-line way: a
 * format 1 or 2 packet of up to 8 bytes costs the header byte, the first payload byte (the
 * table index), one unaligned 8-byte load that ends with the payload's last byte (so that
 * one arithmetic shift sign-extends the payload), four table entries, three shifts of the
 * payload and, where the layout has them, a 16-entry table of flags, with no branch that
 * depends on the data except the one test that the header is a te_inst of a length the
 * entry accepts; a format 3 start packet takes the table positions, a format 1 or 2 packet
 * of 9..16 bytes the same entry with 128-bit positions. Into *r (records) or *f
 * (to_struct); the rarer paths of the records write the whole packet into fend[j] too.
 * flags8 is 0 when the layout puts no notify, updiscon, irreport or irdepth bit inside a
 * payload of up to 8 bytes (noflags8): the copy of the loop for it skips their extraction.
 * Moves *pat past the packet; false when the packet needs the other path. Packets are
 * addressed by their offset from buf, and the loads take buf + offset as their address,
 * so no pointer is kept beside the offset.
 *
 * What one packet waits for of the one before is its offset: the chain is the header's
 * load and one three-operand add of it (next = at + h - 0x3f), shorter than a length
 * computed first (h - 0x41, then at + n1 + 2) and used for both. Everything else hangs
 * off the chain: the shift count comes from the header byte, not from the length, and
 * the test that the packet is taken here needs nothing the chain waits for. The masks
 * and the record's fixed bits are table operands (no shift for them); computing them
 * from widths in one table word (BMI2's bzhi) took fewer loads but more operations on
 * the two shift units, and was slower. */
TK_TE_FAST_INLINE bool in_line(const tk_te_scan_table *t, const uint8_t *buf, size_t *pat,
                               tk_te_rec *r, tk_te_packet *f, tk_te_packet *fend, ptrdiff_t j,
                               const bool to_struct, const bool depth, const bool flags8)
{
    const size_t at = *pat;
    /* zero-extended to the offset's width, for the add below */
    const size_t h = buf[at];
    /* one zero-extending load: the tables repeat every entry for bit 7 */
    const size_t i = buf[at + 1];
    const uint64_t apmax = t->apmax[i];
    /* payload length - 1 when h is a te_inst header (flow 2, extend 0: 0x41..); a header
     * below 0x41 wraps to above every maxlen. (TK_LIKELY: in-line formats 1 and 2 are nearly
     * every packet; with the hint the compiler keeps no pointer for the rarer paths in
     * registers through the loop.) */
    if (TK_LIKELY((unsigned)h - (TK_ENCAP_FLOW_TE_INST << 5 | 1u) < (unsigned)(apmax >> 56))) {
        /* past the header and the payload: at + 1 + (h - 0x40) */
        size_t next = at + h - ((TK_ENCAP_FLOW_TE_INST << 5) - 1u);
#if defined(__GNUC__)
        /* one add for it, and the load below from it (GCC would add twice) */
        __asm__("" : "+r"(next));
#endif
        /* The 8 bytes ending with the payload's last one: the payload is their top n
         * bytes, and one arithmetic shift by (64 - 8n) mod 64 both aligns and sign-extends
         * it; with n = h - 0x40 that is -8h mod 64 (0x40 * 8 is a multiple of 64). */
        const int64_t w = (int64_t)tk_te_fast_ld64(buf + next - 8) >> t->hshift[h];
        const uint64_t address = (uint64_t)(w >> (apmax & 63u)) & t->amask[i];
        /* the map from bit 7 on: rotated, not shifted (the mask clears what comes round),
         * which BMI2's rorx does without a copy of w */
        const uint64_t map = ((uint64_t)w >> 7 | (uint64_t)w << 57) & t->mapmask[i];
        uint64_t tail = t->tail[i] | map;
        /* without an irdepth field (no return stack, no call counter: the reference
         * flow's settings) the copy of the loop for it skips the extraction */
        uint64_t irdepth = 0;
        if (flags8) {
            /* address MSB, notify, updiscon, irreport as sent, then irdepth */
            const int64_t v = w >> t->tpm1[i];
            tail |= t->flags[v & 15];
            if (depth)
                irdepth = (uint64_t)(v >> 4) & t->dmask[i];
        } else if (depth) {
            /* past the payload: sign copies (the flags, sent relative to the address MSB,
             * are then 0) */
            irdepth = (uint64_t)(w >> 63) & t->dmask[i];
        }
        if (to_struct)
            f12_struct(f, address, irdepth, tail);
        else
            rec_put(r, address, irdepth, tail);
        *pat = next;
        return true;
    }
    /* The slot of full for the rarer paths. Its index is hidden from the loop's induction
     * variables: otherwise a pointer into full[] is kept and advanced for every packet, for
     * paths of one packet in 17. */
    size_t pa = at;
#if defined(__GNUC__)
    __asm__("" : "+r"(j));
    /* the pointer and n1 again from the offset: kept from above, GCC computes the pointer
     * and copies the header bytes on every packet */
    __asm__("" : "+r"(pa));
#endif
    const uint8_t *const p = buf + pa;
    const unsigned n1 = p[0] - (TK_ENCAP_FLOW_TE_INST << 5 | 1u);
    uint64_t lo = tk_te_fast_ld64(p + 1);
    tk_te_packet *const fk = to_struct ? f : &fend[j];
    if (n1 < t->smaxlen && (lo & 15u) == (TK_TE_SF_START << 2 | TK_TE_F3)) {
        /* format 3 start (one packet in 17 of a trace with resync-max 0): in line too, as
         * a call would end the caller's loop */
        if (t->sbelow64)
            start_packet(t, p + 1, n1 + 1u, r, fk, !to_struct, true);
        else
            start_packet(t, p + 1, n1 + 1u, r, fk, !to_struct, false);
        *pat = at + n1 + 2u;
        return true;
    }
    if (n1 - 8u < TK_TE_FAST_MAX_LEN - 8u && n1 < t->maxlen16[i]) {
        /* format 1 or 2 of 9..16 bytes (a full address): the same entry with the positions
         * of the 128-bit payload (the address starts below bit 64) */
        const uint64_t hi = payload_hi(t, p + 1, n1 + 1u, &lo);
        const int64_t v = (int64_t)field128(lo, hi, t->tpm1_16[i]);
        const uint64_t address = field128(lo, hi, t->apmax[i] & 63u) & t->amask[i];
        const uint64_t irdepth = depth ? field128(lo, hi, t->dpos16[i]) & t->dmask[i] : 0;
        const uint64_t tail = t->tail[i] | (lo >> 7 & t->mapmask[i]) | t->flags[v & 15];
        if (to_struct)
            f12_struct(f, address, irdepth, tail);
        else
            rec_put(r, address, irdepth, tail);
        *pat = at + n1 + 2u;
        return true;
    }
    return false;
}

/* One packet of a run at offset *at: in_line, then its offset into o[j] (or *last); *at
 * moves past it. Returns false when it needs the other path. */
TK_TE_FAST_INLINE bool run_step(const tk_te_scan_table *t, const uint8_t *buf, size_t *at,
                                tk_te_rec *r, tk_te_packet *f, tk_te_packet *fend, uint64_t *o,
                                ptrdiff_t j, size_t *last, const bool with_offsets,
                                const bool to_struct, const bool depth, const bool flags8)
{
    const size_t here = *at;
    if (!in_line(t, buf, at, r, f, fend, j, to_struct, depth, flags8))
        return false;
    if (with_offsets)
        o[j] = here; /* then the last one is there */
    else
        *last = here;
    return true;
}

/* The record scanner: runs of packets that fit before the end whatever their length (no
 * bounds test inside), each in_line, or else other_packet outside the run. with_offsets and
 * to_struct are constants in each copy, so the loop has no test for them. The run counts a
 * negative index up to 0 (one add and branch per pair of packets); the offsets are indexed
 * from the run's end. */
TK_TE_FAST_INLINE size_t records_body(tk_te_scan *s, tk_te_rec *rec, tk_te_packet *full,
                                      uint64_t *offsets, size_t max, const bool with_offsets,
                                      const bool to_struct, const bool depth, const bool flags8)
{
    /* the longest packet taken here (header and payload): 17 bytes readable from each
     * header, so the payload's words can be loaded whole */
    enum { STEP = 1 + TK_TE_FAST_MAX_LEN };
    /* in_line reads up to 7 bytes before a header: the first packets of the buffer take
     * other_packet */
    enum { BACK = 7 };
    const uint8_t *const buf = s->buf;
    const tk_te_scan_table *const t = &s->table;
    const size_t end = s->len > TK_TE_FAST_MAX_LEN ? s->len - TK_TE_FAST_MAX_LEN : 0;
    size_t pos = s->pos, k = 0, last = pos;
    for (;;) {
        /* so many packets fit before the end whatever their length */
        size_t m = pos < end ? (end - pos) / STEP : 0;
        if (m > max - k)
            m = max - k;
        if (m == 0) {
            if (k == max || pos >= end)
                break;
            m = 1;
        }
        const size_t stop = k + m;
        if (TK_LIKELY(pos >= BACK)) {
            /* The packet chain (each header says where the next is) runs through the
             * offset: the loads address buf + at, the next offset is one add. */
            tk_te_rec *r = to_struct ? NULL : rec + k;
            tk_te_packet *f = to_struct ? full + k : NULL;
            uint64_t *const o = with_offsets ? offsets + stop : NULL;
            size_t at = pos;
            ptrdiff_t j = -(ptrdiff_t)m;
            tk_te_packet *const fend = full + stop;
            /* Two packets an iteration (one count and one record pointer step per pair):
             * an odd run takes one packet first. */
            bool go = true;
            if (m & 1u) {
                go = run_step(t, buf, &at, r, f, fend, o, j, &last, with_offsets, to_struct, depth,
                              flags8);
                if (go) {
                    j++;
                    r = to_struct ? NULL : r + 1;
                    f = to_struct ? f + 1 : NULL;
                }
            }
            while (go && j != 0) {
                /* the other path, out of the inner loop: no call inside it */
                if (!run_step(t, buf, &at, r, f, fend, o, j, &last, with_offsets, to_struct, depth,
                              flags8))
                    break;
                if (!run_step(t, buf, &at, to_struct ? NULL : r + 1, to_struct ? f + 1 : NULL, fend,
                              o, j + 1, &last, with_offsets, to_struct, depth, flags8)) {
                    j++;
                    break;
                }
                r = to_struct ? NULL : r + 2;
                f = to_struct ? f + 2 : NULL;
                j += 2;
            }
            k = stop - (size_t)-j;
            pos = at;
            if (k == stop) {
                if (k == max)
                    break;
                continue;
            }
        }
        const size_t used = other_packet(s, pos, to_struct ? NULL : rec, full, k);
        if (!used)
            break;
        if (with_offsets)
            offsets[k] = pos;
        k++;
        last = pos;
        pos += used & (OTHER_LAST - 1u);
        if (used & OTHER_LAST)
            break;
    }
    if (k) {
        s->offset = with_offsets ? offsets[k - 1] : last;
        s->index = s->next_index + k - 1;
        s->next_index += k;
        s->pos = pos;
    }
    return k;
}

/* One copy of the record loop per use of offsets, presence of the irdepth field and of
 * flag bits in payloads of up to 8 bytes. */
#define TK_SCAN_RECORDS_OFFSETS(s, rec, full, offsets, max, depth, flags8)                         \
    ((offsets) ? records_body(s, rec, full, offsets, max, true, false, depth, flags8)              \
               : records_body(s, rec, full, offsets, max, false, false, depth, flags8))
#define TK_SCAN_RECORDS_DEPTH(s, rec, full, offsets, max, flags8)                                  \
    ((s)->layout.d ? TK_SCAN_RECORDS_OFFSETS(s, rec, full, offsets, max, true, flags8)             \
                   : TK_SCAN_RECORDS_OFFSETS(s, rec, full, offsets, max, false, flags8))
#define TK_SCAN_RECORDS_COPIES(s, rec, full, offsets, max)                                         \
    ((s)->table.noflags8 ? TK_SCAN_RECORDS_DEPTH(s, rec, full, offsets, max, false)                \
                         : TK_SCAN_RECORDS_DEPTH(s, rec, full, offsets, max, true))

TK_SCAN_NO_SLP static size_t records_portable(tk_te_scan *s, tk_te_rec *rec, tk_te_packet *full,
                                              uint64_t *offsets, size_t max)
{
    return TK_SCAN_RECORDS_COPIES(s, rec, full, offsets, max);
}

#if TK_SCAN_BMI2
TK_SCAN_NO_SLP __attribute__((target("bmi2"))) static size_t
records_bmi2(tk_te_scan *s, tk_te_rec *rec, tk_te_packet *full, uint64_t *offsets, size_t max)
{
    return TK_SCAN_RECORDS_COPIES(s, rec, full, offsets, max);
}
#endif

size_t tk_te_scan_records(tk_te_scan *s, tk_te_rec *rec, tk_te_packet *full, uint64_t *offsets,
                          size_t max)
{
    if (!s->layout.fast)
        return 0;
#if TK_SCAN_BMI2
    if (s->use_bmi2)
        return records_bmi2(s, rec, full, offsets, max);
#endif
    return records_portable(s, rec, full, offsets, max);
}

void tk_te_rec_to_packet(const tk_te_rec *r, tk_te_packet *out)
{
    tk_te_fast_rec_expand(r, out);
}

/* Packets into the full struct: the same loop, writing structs. */
TK_SCAN_NO_SLP static size_t batch_portable(tk_te_scan *s, tk_te_packet *out, uint64_t *offsets,
                                            size_t max)
{
    return offsets ? records_body(s, NULL, out, offsets, max, true, true, true, true)
                   : records_body(s, NULL, out, offsets, max, false, true, true, true);
}

#if TK_SCAN_BMI2
TK_SCAN_NO_SLP __attribute__((target("bmi2"))) static size_t
batch_bmi2(tk_te_scan *s, tk_te_packet *out, uint64_t *offsets, size_t max)
{
    return offsets ? records_body(s, NULL, out, offsets, max, true, true, true, true)
                   : records_body(s, NULL, out, offsets, max, false, true, true, true);
}
#endif

size_t tk_te_scan_batch(tk_te_scan *s, tk_te_packet *out, uint64_t *offsets, size_t max)
{
    if (!s->layout.fast)
        return 0;
#if TK_SCAN_BMI2
    if (s->use_bmi2)
        return batch_bmi2(s, out, offsets, max);
#endif
    return batch_portable(s, out, offsets, max);
}

tk_status tk_te_scan_next(tk_te_scan *s, tk_te_packet *out, tk_diag *diag)
{
    const size_t pos = s->pos;
    if (pos >= s->len)
        return TK_END;
    /* 17 bytes readable from the header: the payload's two words can be loaded whole */
    if (s->layout.fast && s->len - pos >= 1 + TK_TE_FAST_MAX_LEN) {
        const uint8_t h = s->buf[pos];
        const unsigned n = h & 0x1fu;
        /* te_inst (flow 2, extend 0) with 1..16 payload bytes */
        if ((h & 0xe0u) == (TK_ENCAP_FLOW_TE_INST << 5) && n - 1u < TK_TE_FAST_MAX_LEN) {
            const tk_te_fast_word w = tk_te_fast_words_overread(s->buf + pos + 1, n);
            if (tk_te_fast_decode(&s->layout, w, n, out) == TK_TE_FAST_OK) {
                s->offset = pos;
                s->index = s->next_index++;
                s->pos = pos + 1 + n;
                return TK_OK;
            }
        }
    }
    return slow_next(s, out, diag);
}
