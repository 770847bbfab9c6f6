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
 * decoder. has_address tells whether F0SF0/F1 carried an address (branches != 0 for F1;
 * branch_fmt != 0 for F0SF0). */
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
} tk_te_packet;

/* Longest payload in bytes (a 2.0 F3SF1 with 64-bit address, tval, context and time). */
#define TK_TE_MAX_PAYLOAD 64

/* Encode a packet to its sign-compressed payload (LSB-first bit order, little-endian bytes).
 * Returns TK_ERR_OVERFLOW if a field does not fit its width. */
tk_status tk_te_packet_encode(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                              size_t cap, size_t *len);
/* Encode without compression: exact number of significant bits in *nbits. */
tk_status tk_te_packet_encode_bits(const tk_te_params *p, const tk_te_packet *pkt, uint8_t *buf,
                                   size_t cap, size_t *nbits);
/* Decode a payload of len bytes. The payload is sign-extended past its end. A payload that
 * cannot be a packet (reserved subformat, fields inconsistent with parameters) is
 * TK_ERR_BAD_PACKET with a message in diag. */
tk_status tk_te_packet_decode(const tk_te_params *p, const uint8_t *payload, size_t len,
                              tk_te_packet *out, tk_diag *diag);

/* One line describing the packet, like ptdump: "F1 branches=3 map=0x5 addr=0x... ". */
int tk_te_packet_format(const tk_te_params *p, const tk_te_packet *pkt, char *buf, size_t cap);

/* The reference .te_inst CSV (C.6). */
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
