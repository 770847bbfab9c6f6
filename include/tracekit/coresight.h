/* SPDX-License-Identifier: BSD-2-Clause */
/* Arm CoreSight input side: DS-5 snapshot directories, memory images with load addresses, and
 * the TPIU/ETB formatter frame deformatter that demultiplexes trace bytes by source ID.
 *
 * References: CoreSight Architecture Specification v3.0 (IHI0029) §D4 "Trace Formatter";
 * the DS-5 "snapshot" format as used by OpenCSD's test snapshots (snapshot.ini, trace.ini,
 * one .ini per device). */
#ifndef TRACEKIT_CORESIGHT_H
#define TRACEKIT_CORESIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory images ---------------------------------------------------------------------- */

/* A set of read-only byte regions at load addresses (the program code the flow decoder walks). */
typedef struct tk_cs_mem tk_cs_mem;

tk_status tk_cs_mem_new(tk_cs_mem **out);
void tk_cs_mem_free(tk_cs_mem *mem);
/* Add a copy of data at addr. Later regions do not override earlier ones where they overlap. */
tk_status tk_cs_mem_add(tk_cs_mem *mem, uint64_t addr, const uint8_t *data, size_t len);
/* Add the contents of a file (from offset, at most len bytes; len 0 = to the end). */
tk_status tk_cs_mem_add_file(tk_cs_mem *mem, uint64_t addr, const char *path, uint64_t offset,
                             uint64_t len, tk_diag *diag);
/* Bytes at addr: returns a pointer and sets *avail to the number of contiguous bytes there, or
 * returns NULL when nothing is mapped at addr. */
const uint8_t *tk_cs_mem_ptr(const tk_cs_mem *mem, uint64_t addr, size_t *avail);
size_t tk_cs_mem_nregions(const tk_cs_mem *mem);

/* ---- snapshots -------------------------------------------------------------------------- */

typedef enum tk_cs_buffer_format {
    TK_CS_FMT_FRAMED = 1, /* "coresight": 16-byte formatter frames, memory aligned (ETB/ETR) */
    TK_CS_FMT_DSTREAM,    /* "dstream_coresight": frames with FSYNC patterns between them, in
                             512-byte blocks ending with an 8-byte footer */
    TK_CS_FMT_RAW,        /* "source_data": one unformatted source, no frames */
    TK_CS_FMT_TPIU,       /* a TPIU capture: frames with FSYNCs, no blocks (no snapshot name) */
    TK_CS_FMT_TPIU_HSYNC, /* the same with HSYNC halfwords inside frames */
} tk_cs_buffer_format;

typedef enum tk_cs_protocol {
    TK_CS_PROTO_UNKNOWN = 0,
    TK_CS_PROTO_ETM4, /* ETMv4 instruction trace */
    TK_CS_PROTO_ETE,
    TK_CS_PROTO_ETM3,
    TK_CS_PROTO_PTM,
    TK_CS_PROTO_STM,
    TK_CS_PROTO_ITM,
} tk_cs_protocol;

/* Protocols the ETMv4 packet parser and flow decoder handle: ETMv4 and ETE (its Armv9
 * successor, a superset of the ETMv4 instruction trace packets). */
static inline bool tk_cs_protocol_is_etm4(tk_cs_protocol p)
{
    return p == TK_CS_PROTO_ETM4 || p == TK_CS_PROTO_ETE;
}

/* Register values of a trace source, as found in its device .ini (0 when absent). */
typedef struct tk_cs_etm_regs {
    uint32_t configr, traceidr, authstatus;
    uint32_t devarch; /* TRCDEVARCH: identifies ETE and its revision */
    uint32_t idr[14]; /* TRCIDR0..TRCIDR13 */
} tk_cs_etm_regs;

/* Set a register by name (TRCCONFIGR, TRCTRACEIDR, TRCAUTHSTATUS, TRCDEVARCH, TRCIDR0..13; case
 * does not matter; anything from '(' on is ignored, as in snapshot keys). TK_ERR_INVALID if
 * unknown. */
tk_status tk_cs_etm_regs_set(tk_cs_etm_regs *regs, const char *name, uint32_t value);

typedef struct tk_cs_source {
    char name[64]; /* device name, e.g. ETM_0 */
    char type[32]; /* device type, e.g. ETM4, ETM4.2, PTM1.1 */
    tk_cs_protocol protocol;
    uint8_t trace_id; /* TRCTRACEIDR[6:0]; ETMv3, PTM: ETMTRACEIDR; STM, ITM: [22:16] of
                         STMTCSR, ITMTCR; 0 when the .ini lacks the register */
    int buffer;       /* index of its trace buffer, -1 if none */
    int core;         /* index in the snapshot's core list, -1 if none */
    tk_cs_etm_regs regs;
} tk_cs_source;

typedef struct tk_cs_core {
    char name[64];
    char type[32];  /* e.g. Cortex-A53, Cortex-M55 */
    tk_cs_mem *mem; /* its memory dumps (may have no regions) */
} tk_cs_core;

typedef struct tk_cs_buffer {
    char name[64];
    char *path; /* absolute or relative to the current directory */
    tk_cs_buffer_format format;
} tk_cs_buffer;

typedef struct tk_cs_snapshot {
    size_t nsources, ncores, nbuffers;
    tk_cs_source *sources;
    tk_cs_core *cores;
    tk_cs_buffer *buffers;
} tk_cs_snapshot;

/* Read a trace buffer's file into memory (*out, malloc'd). Errors: TK_ERR_IO, TK_ERR_NOMEM. */
tk_status tk_cs_buffer_read(const tk_cs_buffer *b, uint8_t **out, size_t *len, tk_diag *diag);
/* The memory images a source's trace runs over: its core's, or when the source names no core,
 * the first core's that has images (a bare trace's --mem images are on cores[0]). NULL when
 * the snapshot has no core. */
const tk_cs_mem *tk_cs_snapshot_source_mem(const tk_cs_snapshot *ss, const tk_cs_source *src);
/* Load a snapshot directory. Errors: TK_ERR_IO (missing file), TK_ERR_FORMAT (malformed .ini,
 * with line number in diag), TK_ERR_NOMEM. */
tk_status tk_cs_snapshot_load(const char *dir, tk_cs_snapshot **out, tk_diag *diag);
void tk_cs_snapshot_free(tk_cs_snapshot *ss);
/* A snapshot for a bare trace file (no .ini files): one buffer in the given format and ETMv4
 * sources with the register values regs: for TK_CS_FMT_RAW one source with trace ID id, for
 * framed formats one source per id (id < 0: every valid ID 0x01..0x6f). Memory images are then
 * added to cores[0].mem (tk_cs_mem_add_file). */
tk_status tk_cs_snapshot_from_file(const char *path, tk_cs_buffer_format format,
                                   const tk_cs_etm_regs *regs, int id, tk_cs_snapshot **out);
/* The trace buffer decoded by default: the first (in trace.ini order) that holds an ETMv4 or
 * ETE source; -1 if none. */
int tk_cs_snapshot_default_buffer(const tk_cs_snapshot *ss);
/* Trace source with this trace ID, or NULL. */
const tk_cs_source *tk_cs_snapshot_find_id(const tk_cs_snapshot *ss, uint8_t id);
const char *tk_cs_protocol_name(tk_cs_protocol proto);

/* ---- formatter frame deformatter -------------------------------------------------------- */

/* Called with each run of consecutive bytes of one source. index is the position the run is
 * attributed to in the raw buffer (see tk_cs_deformat), so index + k locates byte k. */
typedef tk_status (*tk_cs_data_fn)(void *ctx, uint8_t id, const uint8_t *data, size_t n,
                                   uint64_t index);
/* Called on a framing error (bad FSYNC/HSYNC, reserved ID, truncated frame) at byte offset. The
 * deformatter then resynchronises (next FSYNC for DSTREAM, next frame otherwise). Return TK_OK
 * to continue. */
typedef tk_status (*tk_cs_error_fn)(void *ctx, tk_status status, uint64_t offset,
                                    const char *message);

typedef struct tk_cs_deformatter tk_cs_deformatter;

enum {
    TK_CS_DEFMT_FSYNC = 1 << 0, /* FSYNC (0x7fffffff) patterns between frames (DSTREAM, TPIU) */
    TK_CS_DEFMT_HSYNC = 1 << 1, /* HSYNC (0x7fff) halfwords may occur inside frames (TPIU) */
    /* DSTREAM capture files: 512-byte blocks whose last 8 bytes are a footer, not trace. The
     * footers are dropped before deframing; indices and error offsets stay file offsets (as
     * if the footers were trace, runs are cut at them). Used with TK_CS_DEFMT_FSYNC. */
    TK_CS_DEFMT_DSTREAM_BLOCKS = 1 << 2,
};

/* The deformatter flags for a buffer format (0 for TK_CS_FMT_RAW, which is not framed). */
unsigned tk_cs_buffer_deformat_flags(tk_cs_buffer_format format);

tk_status tk_cs_deformatter_new(unsigned flags, tk_cs_data_fn data, tk_cs_error_fn error, void *ctx,
                                tk_cs_deformatter **out);
void tk_cs_deformatter_free(tk_cs_deformatter *d);
/* Bytes of consecutive whole frames of one source, joined: each frame of the run holds 15 data
 * bytes of that source and no ID change, so byte k is at index + k + k / 15. The last frame
 * may hold 14 (its one ID byte restates the source): n is then 14 more than a multiple of 15,
 * and the mapping is the same. */
typedef tk_status (*tk_cs_frames_fn)(void *ctx, uint8_t id, const uint8_t *data, size_t n,
                                     uint64_t index);
/* Optional: deliver runs of such frames (the common case of a single active source) to fn in
 * one call instead of one tk_cs_data_fn call per frame. Every other run still goes to the
 * tk_cs_data_fn, in order. Joined frames are handed over before tk_cs_deformat returns. */
void tk_cs_deformatter_set_frames_fn(tk_cs_deformatter *d, tk_cs_frames_fn fn);
/* Bytes of consecutive frames of one source joined, where frames whose one ID byte restates the
 * source (14 data bytes) do not end the run: byte k is at index + at[k], where the bytes of a
 * frame have consecutive indices and the next frame's start 16 later (at[] holds n entries). */
typedef tk_status (*tk_cs_frames_at_fn)(void *ctx, uint8_t id, const uint8_t *data,
                                        const uint16_t *at, size_t n, uint64_t index);
/* Optional, instead of tk_cs_deformatter_set_frames_fn: such runs to fn (longer runs: formatters
 * restate the source every few frames). */
void tk_cs_deformatter_set_frames_at_fn(tk_cs_deformatter *d, tk_cs_frames_at_fn fn);
/* Feed raw buffer bytes (may be called repeatedly with consecutive pieces). Indices follow the
 * convention of OpenCSD so that packet positions can be compared: a run starts at the index of
 * the frame byte pair where its source ID took effect (frame start for the first run). */
tk_status tk_cs_deformat(tk_cs_deformatter *d, const uint8_t *buf, size_t len);
/* End of data: reports a partial frame as TK_ERR_TRUNCATED. */
tk_status tk_cs_deformat_end(tk_cs_deformatter *d);
/* Start over at raw (file) offset offset: the next byte fed to tk_cs_deformat is the byte at offset
 * (indices continue from there) and starts a frame. A partial frame and joined frames not yet
 * handed over are dropped, the current source ID is unknown until the next ID byte, and in
 * FSYNC mode the next FSYNC is looked for. Used after the frame alignment of a buffer without
 * FSYNC was lost and re-found (tk_etm4_run_snapshot). */
void tk_cs_deformatter_restart(tk_cs_deformatter *d, uint64_t offset);

#ifdef __cplusplus
}
#endif
#endif
