/* SPDX-License-Identifier: BSD-2-Clause */
/* --encap LAYOUT and --srcid N, shared by the E-Trace commands: te_inst packets in the
 * general packet encapsulation (a trace funnel's output, several harts by srcID) instead of
 * the reference raw framing. */
#ifndef TK_TOOLS_ENCAP_OPTION_H
#define TK_TOOLS_ENCAP_OPTION_H

#include <stdbool.h>
#include <stdint.h>

#include "tracekit/encap.h"
#include "tracekit/te_decoder.h"
#include "tracekit/te_filter.h"

typedef struct tk_cli_encap {
    bool on; /* --encap given, or the registers say so */
    bool layout_given, srcid_given;
    tk_encap_config cfg;
    uint16_t srcid;
    bool all_sources; /* --srcid all (tk_cli_encap_srcid_or_all: dump only) */
} tk_cli_encap;

/* The help lines of both options, for the commands' usage texts. */
#define TK_CLI_ENCAP_HELP                                                                          \
    "  --encap LAYOUT    te_inst packets in the general packet encapsulation (a trace\n"           \
    "                    funnel's output): LAYOUT is srcid-bits=N,timestamp-bytes=N\n"             \
    "                    [,type-bits=N][,framed=1] (docs/encapsulation.md)\n"                      \
    "  --srcid N         with --encap: the source (hart) to take (default 0)\n"

/* Return 0, or print what is wrong (prefixed with cmd) and return 2 (a usage error).
 * tk_cli_encap_srcid takes one source and refuses "all" (saying only dump lists every
 * source); tk_cli_encap_srcid_or_all also takes "all" (all_sources). */
int tk_cli_encap_layout(tk_cli_encap *e, const char *cmd, const char *layout);
int tk_cli_encap_srcid(tk_cli_encap *e, const char *cmd, const char *text);
int tk_cli_encap_srcid_or_all(tk_cli_encap *e, const char *cmd, const char *text);
/* --srcid needs the encapsulation and must fit its srcID width: 0 or 2. Commands with
 * --regs call tk_cli_encap_from_regs instead, once the registers are read. */
int tk_cli_encap_check(const tk_cli_encap *e, const char *cmd);

/* A register dump (--regs) whose trTeSrcBits is not 0 (nor inhibited) says the packets are
 * encapsulated with a srcID of that width, value trTeSrcID: taken unless --encap or --srcid
 * said otherwise (the timestamp width is not in the encoder's registers: --encap gives it).
 * Then checks as tk_cli_encap_check: 0 or 2. */
int tk_cli_encap_from_regs(tk_cli_encap *e, const char *cmd, const tk_te_hw_config *hw);

/* After a decode: when the source had no packet, say which sources the stream has (a wrong
 * --srcid or layout is the likely cause); with all_sources, when the stream had no packet at
 * all. Returns true if it had none. */
bool tk_cli_encap_report(const tk_cli_encap *e, const char *cmd, const char *input,
                         const tk_te_encap_stats *st);

#endif
