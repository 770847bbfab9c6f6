/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace filtering and triggers (filtering.adoc, informative) with the filter and
 * comparator units of the RISC-V Trace Control Interface (trTeFilter<i>*, trTeComp<j>*), and
 * the reader of a register dump that configures encoder, filters and decoder the way a chip's
 * registers do. */
#ifndef TRACEKIT_TE_FILTER_H
#define TRACEKIT_TE_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"
#include "te_ingress.h"
#include "te_params.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TK_TE_MAX_FILTERS = 16, TK_TE_MAX_COMPARATORS = 8 };

/* Comparator inputs (trTeCompPInput / trTeCompSInput). daddr (3) is data trace: no match. */
enum { TK_CMP_IADDR = 0, TK_CMP_CONTEXT = 1, TK_CMP_TVAL = 2, TK_CMP_DADDR = 3 };
/* Comparator functions (trTeCompPFunction / trTeCompSFunction). */
enum {
    TK_CMP_EQ = 0,
    TK_CMP_NE = 1,
    TK_CMP_LT = 2,
    TK_CMP_LE = 3,
    TK_CMP_GT = 4,
    TK_CMP_GE = 5,
    TK_CMP_NEVER = 6, /* primary: always false; secondary: always true, SMatch masks PMatch */
    TK_CMP_ALWAYS = 7,
};
/* trTeCompMatchMode */
enum { TK_CMP_P = 0, TK_CMP_P_AND_S = 1, TK_CMP_NOT_P_AND_S = 2, TK_CMP_LATCH = 3 };

/* One comparator unit: a primary and a secondary comparator (trTeComp<j>Control, P/S match
 * values). */
typedef struct tk_te_comparator {
    uint8_t p_input, s_input;
    uint8_t p_func, s_func;
    uint8_t mode;
    bool p_notify, s_notify; /* watchpoints: report the instruction (iaddr inputs only) */
    uint64_t p_match, s_match;
} tk_te_comparator;

/* One filter unit (trTeFilter<i>Control, MatchInst, MatchEcause): every enabled condition must
 * hold for it to match. */
typedef struct tk_te_filter_unit {
    bool enable;
    bool match_priv;
    uint8_t priv_choice; /* bit n: priv n matches */
    /* From a trap whose cause is chosen (exceptions) or of the chosen kind, up to the return
     * from it (nested traps counted). */
    bool match_ecause;
    uint64_t ecause_choice; /* bit n: cause n */
    bool match_interrupt;
    bool interrupt_value; /* match itype 2 (interrupt) if set, else 1 (exception) */
    bool match_comp[3];
    uint8_t comp[3]; /* comparator unit of each comparison */
} tk_te_filter_unit;

typedef struct tk_te_filter_config {
    bool inst_tracing;     /* trTeInstTracing: trace from the start */
    bool trig_enable;      /* trTeInstTrigEnable: trace-on/off triggers may change it */
    uint16_t inst_filters; /* trTeInstFilters: filters that qualify; 0 = everything */
    tk_te_filter_unit filter[TK_TE_MAX_FILTERS];
    tk_te_comparator comp[TK_TE_MAX_COMPARATORS];
} tk_te_filter_config;

/* Everything off: trace everything from the start, triggers enabled. */
void tk_te_filter_config_init(tk_te_filter_config *c);

/* The filter sits in front of the encoder (tk_te_encoder_options.start_qualified = false): it
 * takes single-instruction blocks (one per record, as the readers and the spike converter give
 * them, before any grouping), decides each instruction's qualification from trTeInstTracing,
 * the trace-on/off triggers and the filters, and hands the blocks on with the encoder's
 * trigger bits set so that exactly the qualified instructions are traced: TK_TRIGGER_ON on
 * the first of a qualified run, TK_TRIGGER_OFF on its last (the encoder then reports it and
 * sends a support packet with ended_rep or ended_ntr), TK_TRIGGER_NOTIFY on trace-notify
 * triggers and comparator watchpoints. It holds one block back (qualification ends after the
 * last qualified one, which is known only from the next). */
typedef struct tk_te_filter tk_te_filter;
tk_status tk_te_filter_new(const tk_te_filter_config *c, tk_te_filter **out);
/* Feed one block; *n (0 or 1) blocks come out in out. */
tk_status tk_te_filter_push(tk_te_filter *f, const tk_te_block *in, tk_te_block *out, size_t *n);
/* End of input: the held block, if any. */
tk_status tk_te_filter_finish(tk_te_filter *f, tk_te_block *out, size_t *n);
/* Was the instruction of the last block pushed qualified? (for tests and statistics) */
bool tk_te_filter_last_qualified(const tk_te_filter *f);
void tk_te_filter_free(tk_te_filter *f);

/* ---- Trace Control Interface register dump ----
 * A text file of `name=value` lines (value decimal or 0x hex; '#' starts a comment; names
 * case-insensitive) with the encoder's registers as read off a chip:
 *   trTeControl      trTeInstTracing (bit 2), trTeInstTrigEnable (11), trTeInstSyncMode
 *                    (17:16; 1 = count packets, 0 = off), trTeInstSyncMax (23:20), trTeFormat
 *                    (26:24, must be 0 = E-Trace)
 *   trTeImpl         checked: trTeProtocolMajor (19:16) 0 = 2.0
 *   trTeInstFeatures NoAddrDiff, NoTrapAddr, EnSequentialJump, EnImplicitReturn,
 *                    EnBranchPrediction, EnJumpTargetCache (bits 0-5), ImplicitReturnMode (7:6;
 *                    1 = call counter, 2 or 3 = return stack)
 *   trTeInstFilters, trTeFilter<i>Control, trTeFilter<i>MatchInst,
 *   trTeFilter<i>MatchEcauseLow/High, trTeComp<j>Control, trTeComp<j>PMatchLow/High,
 *   trTeComp<j>SMatchLow/High
 * Registers of the trace RAM/funnel/timestamp units and impdef/data matching are accepted and
 * ignored. The discovery information a decoder needs besides (E-Trace discovery.adoc) comes as
 * the parameter names of the .scf (iaddress_width_p=64, return_stack_size_p=3...), and
 * implicit exception mode's trap vectors as mtvec=, stvec=, utvec=; spec=0.29 selects a draft
 * layout. */
typedef struct tk_te_hw_config {
    tk_te_params params;
    tk_te_filter_config filter;
    uint64_t tvec[4]; /* per privilege: 0 U, 1 S, 3 M */
    uint8_t tvec_set;
    bool have_control; /* trTeControl was given */
    /* The packets' source field (trTeInstFeatures.trTeSrcBits/trTeSrcID, unless
     * trTeControl.trTeInhibitSrc): when src_bits > 0 the encoder's packets leave in the
     * general encapsulation (encap.h) with a srcID of src_bits bits, value src_id. */
    uint8_t src_bits;
    uint16_t src_id;
} tk_te_hw_config;

/* Start from the given parameters (NULL: tk_te_params_init defaults) and no filtering. */
void tk_te_hw_config_init(tk_te_hw_config *c, const tk_te_params *base);
/* Apply a register dump. Unknown names, values that do not fit, or settings tracekit cannot
 * model (another trace format, cycle-counted sync) are TK_ERR_CONFIG naming the line. */
tk_status tk_te_regs_read(tk_te_hw_config *c, const char *path, tk_diag *diag);
tk_status tk_te_regs_parse(tk_te_hw_config *c, const char *text, size_t len, tk_diag *diag);
/* Write the registers (and the extra keys) that give back c. */
tk_status tk_te_regs_write(const tk_te_hw_config *c, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
