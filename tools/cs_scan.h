/* SPDX-License-Identifier: BSD-2-Clause */
/* The first pass of a CoreSight profile (`profile`, `coverage`, `report`): one decode of the
 * trace to find the source its ranges are of, their instruction set and first address, and
 * (into the code view) the functions the calls enter, which must be known before the profile
 * files a range under one. With several jobs the pieces of the trace are decoded and learned
 * on as many threads (tk_etm4_decode_parallel) and joined in trace order
 * (tk_cs_code_learn_after); wherever that could learn otherwise than one decode does (several
 * sources with trace, ranges of another instruction set, damaged ETB/ETR frames, an error),
 * the pass runs on one thread instead. Either way the results are those of one decode. */
#ifndef TK_TOOLS_CS_SCAN_H
#define TK_TOOLS_CS_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/cs_code.h"

typedef struct tk_cli_cs_scan {
    bool any;          /* a range seen: */
    uint32_t id;       /* its trace ID */
    uint8_t isa;       /* its instruction set (tk_event.isa) */
    uint64_t first;    /* its first address */
    uint32_t other_id; /* a range of another source (UINT32_MAX: none) */
    bool parallel;     /* the pass ran on several threads */
} tk_cli_cs_scan;

/* Decode buffer (-1: the default) of ss, source id (-1: every one), on jobs threads (pieces
 * of piece_bytes; 0: the default), learning into code (nothing learned yet). Frame errors are
 * not reported (the second pass does). Errors: those of tk_etm4_run_snapshot, in diag. */
tk_status tk_cli_cs_scan_run(const tk_cs_snapshot *ss, int buffer, int id, unsigned jobs,
                             size_t piece_bytes, tk_cs_code *code, tk_cli_cs_scan *out,
                             tk_diag *diag);

#endif
