/* SPDX-License-Identifier: BSD-2-Clause */
/* RISC-V "Unformatted Trace & Diagnostic Data Packet Encapsulation" (spec/encap): reading,
 * writing, synchronisation and demultiplexing by srcID; plus the reference flow's
 * .te_inst_raw files, which are this encapsulation with flow = 2 (te_inst) or 3 (te_data)
 * and no srcID, timestamp or type field (VERSIONS.md C.6).
 *
 * Packet layout, transmitted in this order, multi-bit fields LSB first and bit-contiguous:
 *   header[8] = length[5] | flow[2] << 5 | extend[1] << 7
 *   srcID[srcid_bits]  timestamp[8*timestamp_bytes, only if extend]  type[type_bits]
 *   trace_payload (whole bytes)  padding (to a byte boundary)
 * Total bytes = 1 + srcid_bits/8 + extend*timestamp_bytes + length. length = 0 is a null
 * packet: null.idle (extend 0) or null.alignment (extend 1), one byte in all. */
#ifndef TRACEKIT_ENCAP_H
#define TRACEKIT_ENCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest header.length (5 bits). */
#define TK_ENCAP_MAX_LENGTH 31
/* Longest encapsulated packet: header, 16-bit srcID, 8-byte timestamp, 31 bytes. */
#define TK_ENCAP_MAX_PACKET (1 + 2 + 8 + TK_ENCAP_MAX_LENGTH)

/* Flow values used by the reference flow's raw files (its "msg_type"). */
enum { TK_ENCAP_FLOW_TE_INST = 2, TK_ENCAP_FLOW_TE_DATA = 3 };

/* Fixed, discoverable properties of a stream (encapsulation.adoc "Packet Length"). */
typedef struct tk_encap_config {
    size_t size;              /* sizeof(tk_encap_config) */
    uint32_t srcid_bits;      /* 0..16 */
    uint32_t timestamp_bytes; /* T: 0..8; 0 means extend must be 0 on normal packets */
    uint32_t type_bits;       /* Y: 0..8 (E-Trace: 0, or 1 with 0 = instruction, 1 = data) */
    bool report_nulls;        /* reader: return null packets instead of skipping them */
    /* reader: the stream is unframed (PIB, a byte capture), where the last null before a
     * normal packet must be a null.alignment (encapsulation.adoc "Synchronization"). A
     * null.idle there is then TK_ERR_BAD_PACKET at the normal packet: zeroed or lost bytes
     * would otherwise read as idle fill. Off by default (framed streams need no alignment). */
    bool unframed;
} tk_encap_config;

/* Zero srcID/timestamp/type: the layout of the reference .te_inst_raw files. */
void tk_encap_config_init(tk_encap_config *cfg);
/* TK_ERR_CONFIG if a width is out of range. */
tk_status tk_encap_config_validate(const tk_encap_config *cfg, tk_diag *diag);
/* A layout from its text form, comma-separated KEY=N: srcid-bits (0..16), timestamp-bytes
 * (0..8), type-bits (0..8), framed (0 or 1); widths left out are 0 ("" is the reference raw
 * framing's layout). The text describes a stream as captured: unframed (cfg->unframed set)
 * unless framed=1. e.g. "srcid-bits=8,timestamp-bytes=2". TK_ERR_CONFIG with a message
 * naming the bad part. */
tk_status tk_encap_config_parse(const char *spec, tk_encap_config *cfg, tk_diag *diag);
/* Longest run of "null" bytes (5 LSBs zero) inside a normal packet: N = 31 + T + S. A run of
 * N such bytes is followed by the start of a packet (encapsulation.adoc "Synchronization"). */
uint32_t tk_encap_sync_run(const tk_encap_config *cfg);

/* One packet as found in the buffer. */
typedef struct tk_encap_packet {
    uint64_t offset; /* byte offset of the header in the stream */
    uint64_t index;  /* 0-based count of normal packets before this one */
    uint8_t length;  /* header.length */
    uint8_t flow;
    uint8_t extend;
    bool is_null; /* length == 0: null.idle (extend 0) or null.alignment (extend 1) */
    uint16_t srcid;
    uint64_t timestamp; /* valid if extend (and not null) */
    uint32_t type;
    /* The trace payload: whole bytes after srcID/timestamp/type. Points into the input
     * buffer when those fields end on a byte boundary (the usual case: zero copy), else into
     * the reader's scratch space, valid until the next call. */
    const uint8_t *payload;
    size_t payload_len;
    size_t total_len; /* bytes of the whole packet, header included */
} tk_encap_packet;

/* ---- reader (libipt style: alloc, sync, next, get_offset, free) -------------------------- */
typedef struct tk_encap_reader tk_encap_reader;

/* Read packets from buf[0..len); the buffer must outlive the reader. Starts at offset 0,
 * assumed to be a packet boundary. */
tk_status tk_encap_reader_alloc(tk_encap_reader **out, const tk_encap_config *cfg,
                                const uint8_t *buf, size_t len);
void tk_encap_reader_free(tk_encap_reader *r);
/* Next packet. TK_END at the end of the buffer. Errors (diag holds byte_offset and
 * packet_index of the damaged packet):
 *   TK_ERR_TRUNCATED  the packet runs past the end of the buffer (the reader moves to the
 *                     end);
 *   TK_ERR_BAD_PACKET extend = 1 on a normal packet while timestamp_bytes is 0, or the
 *                     payload is shorter than the type field (the reader skips the packet
 *                     as its length says, so iteration can continue). */
tk_status tk_encap_reader_next(tk_encap_reader *r, tk_encap_packet *pkt, tk_diag *diag);
/* Move forward to the next synchronisation point: after a run of at least
 * tk_encap_sync_run() null bytes, the first non-null byte. TK_END if there is none. */
tk_status tk_encap_reader_sync_forward(tk_encap_reader *r);
/* Continue at offset (a known packet boundary). */
tk_status tk_encap_reader_sync_set(tk_encap_reader *r, uint64_t offset);
uint64_t tk_encap_reader_get_offset(const tk_encap_reader *r);

/* ---- writer ------------------------------------------------------------------------------ */
typedef struct tk_encap_fields {
    uint8_t flow;       /* 0..3 */
    bool extend;        /* include the timestamp (needs timestamp_bytes > 0) */
    uint16_t srcid;     /* must fit srcid_bits */
    uint64_t timestamp; /* must fit 8*timestamp_bytes */
    uint32_t type;      /* must fit type_bits */
} tk_encap_fields;

/* Encapsulate payload[0..len) into out (cap bytes); *written = packet bytes. Padding bits are
 * zero. TK_ERR_OVERFLOW if the packet needs length > 31 or does not fit cap; TK_ERR_INVALID
 * if a field does not fit its width or len is 0. */
tk_status tk_encap_write(const tk_encap_config *cfg, const tk_encap_fields *f,
                         const uint8_t *payload, size_t len, uint8_t *out, size_t cap,
                         size_t *written);
/* A one-byte null packet. */
uint8_t tk_encap_null(bool alignment, uint8_t flow);
/* A synchronisation sequence of N+1 null bytes (N = tk_encap_sync_run): N null.idle then
 * one null.alignment (valid for framed and unframed streams). Returns bytes written, or 0 if
 * cap is too small. */
size_t tk_encap_write_sync(const tk_encap_config *cfg, uint8_t *out, size_t cap);

/* ---- demultiplexer by srcID -------------------------------------------------------------- */
typedef tk_status (*tk_encap_sink)(void *ctx, const tk_encap_packet *pkt);
typedef struct tk_encap_demux tk_encap_demux;

tk_status tk_encap_demux_alloc(tk_encap_demux **out);
void tk_encap_demux_free(tk_encap_demux *d);
/* Route packets with this srcID to fn (replaces an earlier route). */
tk_status tk_encap_demux_route(tk_encap_demux *d, uint16_t srcid, tk_encap_sink fn, void *ctx);
/* Sink for srcIDs without a route; without one such packets are counted and dropped. */
void tk_encap_demux_default(tk_encap_demux *d, tk_encap_sink fn, void *ctx);
/* Hand one packet to its sink (null packets are ignored). Returns the sink's status. */
tk_status tk_encap_demux_dispatch(tk_encap_demux *d, const tk_encap_packet *pkt);
/* Read every packet of r and dispatch it. Stops at the first reader or sink error. */
tk_status tk_encap_demux_run(tk_encap_demux *d, tk_encap_reader *r, tk_diag *diag);
/* Packets dropped for lack of a route. */
uint64_t tk_encap_demux_dropped(const tk_encap_demux *d);

/* ---- reference .te_inst_raw files -------------------------------------------------------- */
typedef struct tk_te_raw tk_te_raw;

typedef struct tk_te_raw_packet {
    uint64_t offset;        /* byte offset of the header byte */
    uint64_t index;         /* 0-based packet index */
    uint8_t msg_type;       /* the flow field: 2 te_inst, 3 te_data */
    const uint8_t *payload; /* into the mapped file */
    size_t len;             /* payload bytes, 1..31 */
} tk_te_raw_packet;

/* Map a file (read-only). TK_ERR_IO naming the file if it cannot be opened. */
tk_status tk_te_raw_open(const char *path, tk_te_raw **out, tk_diag *diag);
/* Iterate over a caller's buffer instead (not copied; must outlive the iterator). */
tk_status tk_te_raw_from_buffer(const uint8_t *buf, size_t len, tk_te_raw **out);
/* Next packet, TK_END at the end. On error diag names the file (if any) and holds the
 * byte_offset and packet_index of the damaged packet:
 *   TK_ERR_BAD_PACKET a header with length 0 or with bit 7 set (not written by the reference
 *                     flow); iteration continues after it;
 *   TK_ERR_TRUNCATED  the payload runs past the end of the file; iteration ends. */
tk_status tk_te_raw_next(tk_te_raw *r, tk_te_raw_packet *pkt, tk_diag *diag);
/* Append one packet in the reference raw format: header (msg_type << 5) | len, then the
 * payload. len must be 1..31 (encoder_model.py itself never exceeds 30). TK_ERR_INVALID for
 * a bad length or msg_type > 3, TK_ERR_IO if the write fails. */
tk_status tk_te_raw_write(FILE *out, uint8_t msg_type, const uint8_t *payload, size_t len);
/* Total size of the input in bytes. */
uint64_t tk_te_raw_size(const tk_te_raw *r);
/* The whole input (the mapped file or the caller's buffer), for scanning it directly
 * (tk_te_scan) or in pieces on several threads; valid until tk_te_raw_close. */
const uint8_t *tk_te_raw_data(const tk_te_raw *r);
/* The bytes before offset are not needed for now: a mapped file gives their pages back
 * (they stay in the page cache and fault back in if read again), so resident memory does
 * not grow with the trace. A no-op for caller buffers. */
void tk_te_raw_release(tk_te_raw *r, uint64_t offset);
void tk_te_raw_close(tk_te_raw *r);

#ifdef __cplusplus
}
#endif
#endif
