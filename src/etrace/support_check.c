/* SPDX-License-Identifier: BSD-2-Clause */
/* Whether a support packet (format 3 subformat 3) can come from the encoder whose trace is
 * being read: one check shared by the flow decoder and `tracekit dump`, so that a damaged
 * support packet changes the options of neither (docs/robustness.md, "Support packets the
 * decoder does not believe"). */
#include "tracekit/te_params.h"

/* The packet's encoder_mode and ioptions are checked against the spec and against where the
 * reader is in the trace:
 *  - encoder_mode: branch trace, 0, is the only mode defined (payload.adoc, format 3
 *    subformat 3); ioptions bits beyond those defined (VERSIONS.md C.6) are never set.
 *  - Options are programmed while the encoder is disabled (trace control interface, "Enabling
 *    and Disabling": trTeEnable is set to 1 after all other settings) and announced by a support
 *    packet before the first sync (payload.adoc); disabling flushes the trace and ends it with
 *    a support packet. So other options are believable only between a trace's clean end (or the
 *    reader's start) and the next sync: not while a flow is being followed, nor after damage
 *    (an error or a loss since the last clean end: a reconfiguration would have ended the
 *    trace cleanly first).
 *  - A mode switched on must exist: a zero *_size_p means the encoder has no predictor, cache,
 *    return stack or call counter, sijump_p = 0 no sijump (discovery.adoc), and without an F0
 *    subformat field branch prediction and the jump target cache exclude each other
 *    (payload.adoc, format 0). */
const char *tk_te_support_check(const tk_te_params *p, uint32_t encoder_mode, uint32_t ioptions,
                                unsigned state)
{
    const tk_te_static *s = &p->s;
    const uint32_t defined = p->ioptions_width > 5 ? 0x3fu : 0x1fu;
    if (encoder_mode != 0)
        return "encoder_mode is not 0 (branch trace, the only mode defined)";
    if (ioptions & ~defined)
        return "ioptions has bits set that no option is assigned to";
    const uint32_t now = tk_te_params_ioptions(p);
    if (ioptions == now)
        return NULL;
    if (state & TK_TE_SUPPORT_FIXED_OPTIONS)
        return "the options differ from those given as the encoder's (TK_TE_DEC_FIXED_OPTIONS, "
               "dump --fixed-options)";
    if (state & TK_TE_SUPPORT_FOLLOWING)
        return "the options changed while the flow is being followed (they may change only "
               "while the encoder is disabled, before the support packet that precedes the first "
               "sync)";
    if (state & TK_TE_SUPPORT_DAMAGED)
        return "the options changed after damage in the trace (a reconfigured encoder ends its "
               "trace cleanly first)";
    const uint32_t on = ioptions & ~now;
    if ((on & TK_TE_IOPT_BRANCH_PREDICTION) && s->bpred_size == 0)
        return "branch prediction switched on but bpred_size_p is 0 (no predictor)";
    if ((on & TK_TE_IOPT_JUMP_TARGET_CACHE) && s->cache_size == 0)
        return "jump target cache switched on but cache_size_p is 0 (no cache)";
    if ((on & TK_TE_IOPT_IMPLICIT_RETURN) && s->return_stack_size == 0 && s->call_counter_size == 0)
        return "implicit return switched on but return_stack_size_p and call_counter_size_p "
               "are 0";
    if ((on & TK_TE_IOPT_SIJUMP) && s->sijump == 0)
        return "sijump switched on but sijump_p is 0";
    const uint32_t f0 = TK_TE_IOPT_BRANCH_PREDICTION | TK_TE_IOPT_JUMP_TARGET_CACHE;
    if (p->spec == TK_TE_SPEC_2_0 && s->f0s_width == 0 && (ioptions & f0) == f0)
        return "branch prediction and jump target cache together need f0s_width_p >= 1";
    return NULL;
}
