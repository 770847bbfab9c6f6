/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace te_inst packets (payload.adoc): the decoded form, the bit-exact codec with
 * sign-based compression, and the reference flow's .te_inst CSV (spec/VERSIONS.md A, C.6). */
#ifndef TRACEKIT_TE_PACKET_H
#define TRACEKIT_TE_PACKET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    TK_TE_F0 = 0, /* optional extensions: SF0 branch count, SF1 jump target cache */
    TK_TE_F1 = 1, /* branch map + (optional) address */
    TK_TE_F2 = 2, /* address only */
    TK_TE_F3 = 3, /* sync: SF0 start, SF1 trap, SF2 context, SF3 support */
};
enum { TK_TE_SF_START = 0, TK_TE_SF_TRAP = 1, TK_TE_SF_CONTEXT = 2, TK_TE_SF_SUPPORT = 3 };
enum { TK_TE_F0_BRANCH_COUNT = 0, TK_TE_F0_JTC = 1 };
/* qual_status codes */
enum {
    TK_QUAL_NO_CHANGE = 0,
    TK_QUAL_ENDED_REP = 1,
    TK_QUAL_TRACE_LOST = 2,
    TK_QUAL_ENDED_NTR = 3
};

/* The logical content of one te_inst packet. notify, updiscon and irreport hold the logical
 * flags; the codec turns them into the transmitted bits (each relative to the bit before it)
 * and back. Fields the format does not carry are ignored by the encoder and zeroed by the
 * decoder, as are fields of width 0 (time with notime_p, context with nocontext_p...).
 * has_address tells whether the packet carries an address field: always for F2 and F3 SF0;
 * F3 SF1 unless implicit exception mode omits it; F0SF0 when branch_fmt is 10 or 11; F1 when
 * the branches field is non-zero.
 * F1 without address: the decoder returns branches = 0 (the wire value; the 31-bit map then
 * holds 31 branches) and the encoder accepts 0, or 31 with has_address false.
 * irdepth is the field as carried: meaningful only when irreport is set. When it is not, the
 * spec wants all its bits equal to updiscon's wire bit while encoder_model.py sends all ones;
 * the codec sends whatever the caller puts here (the encoder chooses).
 * F0 subformat with f0s_width_p = 0: the field is absent and inferred from the options,
 * branch prediction -> SF0 (branch count), else jump target cache -> SF1; neither is an
 * error. */
typedef struct tk_te_packet {
    uint8_t format;
    uint8_t subformat;
    /* branch information (F0, F1) */
    uint8_t branches;    /* 0..31 */
    uint32_t branch_map; /* bit i = i-th oldest branch, 1 = not taken */
    uint64_t branch_count;
    uint8_t branch_fmt;
    uint32_t jtc_index; /* F0SF1 */
    bool has_address;
    /* address (F0SF0 with address, F1 with branches, F2, F3 SF0/SF1): the value as carried in
     * the field, i.e. already shifted right by iaddress_lsb and differential unless full
     * address mode; masked to the field width */
    uint64_t address;
    bool notify;
    bool updiscon;
    bool irreport;
    uint64_t irdepth;
    /* F3 */
    uint8_t branch; /* 0: address is a taken branch's target... see spec */
    uint8_t privilege;
    uint64_t time;
    uint64_t context;
    uint32_t ecause;
    uint8_t interrupt;
    uint8_t thaddr;
    uint64_t tval;
    /* F3 SF3 support */
    uint8_t ienable;
    uint8_t encoder_mode;
    uint8_t qual_status;
    uint32_t ioptions;
    uint8_t denable;
    uint8_t dloss;
    uint32_t doptions;
    /* Draft v0.029 only: F1 branch count with address (branch_fmt 10) carries bpsuccess. */
    uint8_t bpsuccess;
} tk_te_packet;

/* Draft layouts (--spec 0.29 / 0.26) in the same struct, VERSIONS.md A.3-A.8:
 * - 0.029: irreport holds irfail and tval holds tvalepc (always sent, A bits); no time field;
 *   F3 SF3 has no denable/dloss/doptions; F1 with branches = 0 is a 31-bit map (branch_fmt 0
 *   here; on the wire 00 or 11 = copies of map bit 30), or a branch count (branch_fmt 01
 *   without address, 10 with bpsuccess and address); F0 is only the jump target cache and
 *   its subformat field (f0s_width_p bits, usually 0) carries 0: the struct says
 *   TK_TE_F0_JTC.
 * - 0.026: format 0 = full-delta and 1 = diff-delta, both branches[5], map (1/9/17/25/31
 *   bits) and, when branches != 0, address; format 2 = address only; format 3 SF0-SF2 = start,
 *   exception (ecause, interrupt, tval) and context; SF3 is reserved (0.026 had a separate
 *   te_support message, not encodable here). No notify/updiscon/irreport/irdepth. */

/* Longest payload in bytes (a 2.0 F3SF1 with 64-bit address, tval, context and time). */
#define TK_TE_MAX_PAYLOAD 64

/* Encode a packet to its sign-compressed payload (LSB-first bit order, little-endian bytes).
 * Returns TK_ERR_OVERFLOW if a field does not fit its width. */
tk_status tk_te_packet_encode(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                              size_t cap, size_t *len);
/* Encode without compression: exact number of significant bits in *nbits. */
tk_status tk_te_packet_encode_bits(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                                   size_t cap, size_t *nbits);
/* Why the last encode of this packet fails: the name of the field that does not fit its
 * width, or a reason; NULL if it encodes. For diagnostics only (re-runs the encoder). */
const char *tk_te_packet_encode_error(const tk_te_params *p, const tk_te_packet *pkt);
/* Decode a payload of len bytes. The payload is sign-extended past its end. A payload that
 * cannot be a packet (reserved subformat, fields inconsistent with parameters) is
 * TK_ERR_BAD_PACKET with a message in diag; so is a payload with a whole byte more than the
 * packet needs (usually parameters that do not match the trace). len 0 is TK_ERR_TRUNCATED.
 * Decoding is a fixed sequence of word-wide field extractions: no per-bit loop. */
tk_status tk_te_packet_decode(const tk_te_params *p, const uint8_t *payload, size_t len,
                              tk_te_packet *out, tk_diag *diag);

/* Field widths precomputed from the parameters, for decoding many packets: fill it with
 * tk_te_layout_init and decode with tk_te_packet_decode_layout, which then skips deriving
 * the widths for every packet. The layout keeps a pointer to the parameters (not owned) for
 * the run-time options it reads (implicit exception, F0 subformat inference); initialise it
 * again after changing the static attributes, spec or support-packet widths. */
typedef struct tk_te_layout {
    const tk_te_params *params;
    unsigned aw, a, p, t, c, e, k, s, d; /* address, tval, privilege, time, context, ecause,
                                            cache index, F0 subformat, irdepth */
    unsigned em, io, dop;                /* encoder_mode, ioptions, doptions */
    bool fast; /* 2.0 layout whose fields fit the specialised decoders (packet_fast.h) */
} tk_te_layout;
void tk_te_layout_init(tk_te_layout *l, const tk_te_params *p);
tk_status tk_te_packet_decode_layout(const tk_te_layout *l, const uint8_t *payload, size_t len,
                                     tk_te_packet *out, tk_diag *diag);

/* Scanner over a reference raw stream held in memory (.te_inst_raw, VERSIONS.md C.6: per
 * packet a header byte (msg_type << 5) | length, then the payload), decoding each te_inst
 * packet in place: no copy, no allocation. The buffer (usually a mapped file, see
 * tk_te_raw_data) must outlive the scanner. It holds a layout: the parameters must not move
 * while it is in use. The fields say where the packet last returned (or found damaged) is. */
/* Compact form of a te_inst packet for consumers of long traces (24 bytes instead of the
 * 120 of tk_te_packet): every field formats 1 and 2 carry, and the address of format 3
 * subformats 0 and 1. Values mean what they mean in tk_te_packet (address as carried, flags
 * logical, irdepth as carried; fields a packet does not carry are 0). */
typedef struct tk_te_rec {
    uint64_t address;    /* when flags has TK_TE_REC_ADDRESS, else 0 */
    uint64_t irdepth;    /* formats 1 and 2 with an address */
    uint32_t branch_map; /* format 1 */
    uint8_t format;
    uint8_t branches;  /* format 1 */
    uint8_t flags;     /* TK_TE_REC_* */
    uint8_t subformat; /* format 3 */
} tk_te_rec;
enum {
    TK_TE_REC_NOTIFY = 1u << 0,
    TK_TE_REC_UPDISCON = 1u << 1,
    TK_TE_REC_IRREPORT = 1u << 2,
    TK_TE_REC_ADDRESS = 1u << 3, /* has_address */
};

/* Per-layout decoding tables of the record scanner, indexed by the first payload byte
 * (format and F1 branches in its low 7 bits; entries repeat for bit 7, so that the index
 * is one zero-extending move): for formats 1 and 2, where the address starts, masks and the
 * longest valid payload; maxlen 0 for the formats it does not decode in line. One array
 * per field, so that every lookup is one load with the index scaled. Filled by
 * tk_te_scan_init from the parameters. */
typedef struct tk_te_scan_table {
    uint64_t amask[256]; /* address mask (0 when the packet carries no address) */
    uint64_t dmask[256]; /* irdepth mask (idem) */
    uint64_t tail[256];  /* the record's last 8 bytes without map and flags: format,
                            branches, TK_TE_REC_ADDRESS */
    uint64_t flags[16];  /* record flags in place, by address MSB and the three sent bits */
    uint32_t mapmask[256];
    /* the address position (bits 0..7) and the longest payload in bytes (at most 8) decoded
     * in line (bits 56..63, 0: none) in one word: the two are needed before the payload
     * can be read, and one load gives both */
    uint64_t apmax[256];
    uint8_t tpm1[256];     /* position of the bit before notify (the address MSB), at most 63 */
    uint8_t maxlen16[256]; /* longest payload (at most 16) for the 128-bit path, 0: none */
    uint8_t tpm1_16[256];  /* tpm1 for the 128-bit path, at most 127 */
    uint8_t dpos16[256];   /* irdepth position for the 128-bit path, at most 127 */
    /* by payload length n - 1 (0..15): the right shift, (64 - 8n) mod 64, that aligns and
     * sign-extends the 8 bytes ending with the payload's last one */
    uint8_t nshift[16];
    /* the same by header byte h (n = h - 0x40): -8h mod 64, for any h (0x40 * 8 is a
     * multiple of 64), so the in-line path reads it before it knows h is a te_inst header */
    uint8_t hshift[256];
    /* 1 when no format 1 or 2 payload of up to 8 bytes can carry notify, updiscon, irreport
     * or irdepth bits (address fields of 62 bits or more): they are sign copies there */
    uint8_t noflags8;
    /* format 3 subformat 0 (start): privilege, time, context, address */
    uint64_t smask[4];
    /* by the payload's bits 4..12 (branch, then privilege: at most 8 bits): branch |
     * privilege << 8, the struct's two bytes */
    uint16_t sbp[512];
    uint8_t spos[4];  /* at most 127 */
    uint8_t skind[4]; /* TK_TE_SCAN_LO, _HI or _BOTH: the 64-bit words the field is in */
    uint8_t sbelow64; /* 1 when every field starts below bit 64 (one formula for all) */
    uint8_t smaxlen;  /* longest valid payload (at most 16), 0: not decoded this way */
} tk_te_scan_table;
enum { TK_TE_SCAN_LO, TK_TE_SCAN_HI, TK_TE_SCAN_BOTH };

typedef struct tk_te_scan {
    tk_te_layout layout;
    const uint8_t *buf;
    size_t len;
    size_t pos;          /* next header byte */
    uint64_t offset;     /* byte offset of the last packet's header */
    uint64_t index;      /* 0-based index of the last packet */
    uint64_t next_index; /* index the next packet will have */
    /* Which implementation the record scanner uses: 1 when the CPU has BMI2 (shifts by a
     * register count without flags), set by tk_te_scan_init; clearing it selects the
     * portable code (tests compare both). */
    uint8_t use_bmi2;
    tk_te_scan_table table;
} tk_te_scan;
void tk_te_scan_init(tk_te_scan *s, const tk_te_params *p, const uint8_t *buf, size_t len);
/* Continue at byte offset (a packet boundary), numbering packets from index. */
void tk_te_scan_seek(tk_te_scan *s, size_t offset, uint64_t index);
/* Next te_inst packet: TK_OK, or TK_END after the last. Errors (diag holds a message
 * without file name, and the byte_offset and packet_index of the damaged packet, also in
 * s->offset and s->index):
 *   TK_ERR_BAD_PACKET a header with length 0, with bit 7 set, or with a message type other
 *                     than te_inst (2), or a payload that does not decode; scanning goes on
 *                     after it;
 *   TK_ERR_TRUNCATED  the payload runs past the end of the buffer; scanning ends. */
tk_status tk_te_scan_next(tk_te_scan *s, tk_te_packet *out, tk_diag *diag);
/* Decode up to max packets into out[], stopping before the first one that needs
 * tk_te_scan_next (a damaged packet, the last bytes of the buffer, an unusual layout).
 * Returns the count (0: call tk_te_scan_next). Packet i is at offsets[i] when offsets is
 * not NULL; the first has index s->next_index on entry. A batch ends after a support packet
 * (format 3 subformat 3), whose ioptions may change options the codec reads: a decoder
 * applies it to the parameters the scanner was given before the next batch is decoded.
 * The fast way through a long trace:
 *   while ((n = tk_te_scan_batch(s, pkts, offs, N)) > 0) { ...use them... }
 *   then tk_te_scan_next() once, and repeat until it returns TK_END. */
size_t tk_te_scan_batch(tk_te_scan *s, tk_te_packet *out, uint64_t *offsets, size_t max);

/* The same as tk_te_scan_batch, into compact records: rec[i] for every packet; for a packet
 * of format 3 (rec[i].format == TK_TE_F3; its record has subformat, address and
 * TK_TE_REC_ADDRESS), full[i] holds the whole packet (full must have room for max packets;
 * its other entries may be overwritten). offsets may be NULL. Same stopping rules (a batch
 * ends after a support packet; 0: call tk_te_scan_next). The fastest way through a long
 * trace: a third fewer instructions per packet than whole structs (and their use). */
size_t tk_te_scan_records(tk_te_scan *s, tk_te_rec *rec, tk_te_packet *full, uint64_t *offsets,
                          size_t max);
/* The tk_te_packet of a format 1 or 2 record (format 3: use full[i]). */
void tk_te_rec_to_packet(const tk_te_rec *r, tk_te_packet *out);

/* One line describing the packet, like ptdump: "F1 branches=3 map=0x5 addr=0x... ". */
int tk_te_packet_format(const tk_te_params *p, const tk_te_packet *pkt, char *buf, size_t cap);

/* The reference .te_inst CSV (C.6), for the 2.0 layout only (TK_ERR_UNSUPPORTED for the
 * drafts). Rows end in CRLF like the reference's; the reader accepts LF too, finds columns by
 * header name, and converts the transmitted notify/updiscon/irreport bits to logical flags.
 * tracekit extensions: F0SF1's index goes in the address column; support packets' denable,
 * dloss, doptions are written only when one is non-zero ('_' reads as 0). */
tk_status tk_te_csv_write_header(FILE *out);
tk_status tk_te_csv_write(FILE *out, const tk_te_params *p, const tk_te_packet *pkt);
typedef struct tk_te_csv_reader tk_te_csv_reader;
tk_status tk_te_csv_open(const char *path, tk_te_csv_reader **out, tk_diag *diag);
tk_status tk_te_csv_next(tk_te_csv_reader *r, const tk_te_params *p, tk_te_packet *out,
                         tk_diag *diag);
void tk_te_csv_close(tk_te_csv_reader *r);

#ifdef __cplusplus
}
#endif
#endif
