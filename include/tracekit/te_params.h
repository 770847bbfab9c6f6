/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace parameters: the static *_p attributes of the encoder and the run-time options,
 * read from and written to the reference flow's .scf/.ucf files (spec/VERSIONS.md C.3). */
#ifndef TRACEKIT_TE_PARAMS_H
#define TRACEKIT_TE_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which packet layout is spoken. */
typedef enum tk_te_spec {
    TK_TE_SPEC_2_0 = 0, /* ratified 2.0 (default) */
    TK_TE_SPEC_0_29,    /* draft v0.029 (seed 002) */
    TK_TE_SPEC_0_26,    /* draft v0.026 (seed 000) */
} tk_te_spec;

/* "2.0", "0.29", "0.26" */
const char *tk_te_spec_name(tk_te_spec spec);
/* Parse a --spec argument ("2.0"/"2"/"1.1.3", "0.29"/"0.029", "0.26"/"0.026");
 * TK_ERR_CONFIG if unknown. */
tk_status tk_te_spec_parse(const char *text, tk_te_spec *out);

/* Static (hardware) attributes: names as in the spec and the .scf file, without the _p. */
typedef struct tk_te_static {
    /* [Required Attributes] */
    uint32_t arch;
    uint32_t bpred_size;
    uint32_t cache_size;
    uint32_t call_counter_size;
    uint32_t context_width;
    uint32_t time_width;
    uint32_t ecause_width;
    uint32_t f0s_width;
    uint32_t iaddress_lsb;
    uint32_t iaddress_width;
    uint32_t nocontext;
    uint32_t notime;
    uint32_t privilege_width;
    uint32_t return_stack_size;
    uint32_t sijump;
    /* [Optional Filtering Attributes] */
    uint32_t comparators;
    uint32_t filters;
    uint32_t ecause_choice;
    uint32_t filter_context;
    uint32_t filter_time;
    uint32_t filter_excint;
    uint32_t filter_privilege;
    uint32_t filter_tval;
    /* [Other Recommended Attributes] */
    uint32_t ctype_width;
    uint32_t ilastsize_width;
    uint32_t itype_width;
    uint32_t iretire_width;
    uint32_t retires;
    uint32_t taken_branches;
    uint32_t impdef_width;
} tk_te_static;

/* Run-time options ([codec] and [flags] of the .ucf). */
typedef struct tk_te_options {
    uint32_t resync_max; /* resync after 2^(resync_max+4) packets (reference semantics) */
    bool full_address;
    bool implicit_except;
    bool sijump;
    bool implicit_return;
    bool branch_prediction;
    bool jump_target_cache;
    bool cycle_accurate;
    bool use_rv32_isa;
} tk_te_options;

/* Everything an encoder or decoder needs to agree on. */
typedef struct tk_te_params {
    size_t size; /* sizeof(tk_te_params) */
    tk_te_spec spec;
    tk_te_static s;
    tk_te_options o;
    /* Support-packet layout (implementation-defined in the spec): widths of encoder_mode,
     * ioptions and doptions. Defaults match the reference model: 1, 5, 4. */
    uint32_t encoder_mode_width;
    uint32_t ioptions_width;
    uint32_t doptions_width;
} tk_te_params;

/* Fill with the reference template defaults (tests/config_files/i_template.scf/.ucf). */
void tk_te_params_init(tk_te_params *p);

/* Read an .scf (static) file into p->s. Keys not present keep their current values (note:
 * the reference post-iss reads missing keys as 0; start from a zeroed struct to mimic it).
 * Section headers only group keys; keys are matched by name. Unknown or duplicate keys and
 * malformed values are TK_ERR_CONFIG naming the file and line; unreadable file TK_ERR_IO. */
tk_status tk_te_params_read_scf(tk_te_params *p, const char *path, tk_diag *diag);
/* Read a .ucf (user) file into p->o. If elf_out is non-NULL and the file names object-files,
 * *elf_out receives a malloc'd path resolved relative to the .ucf's folder (caller frees);
 * it is NULL when the key is absent or NOT_SET. For "pk elf" the last word is taken.
 * Booleans are true/false. Errors as for the .scf. */
tk_status tk_te_params_read_ucf(tk_te_params *p, const char *path, char **elf_out, tk_diag *diag);
tk_status tk_te_params_write_scf(const tk_te_params *p, FILE *out);
tk_status tk_te_params_write_ucf(const tk_te_params *p, FILE *out);
/* As tk_te_params_write_ucf, also filling [required] file-stem and object-files (NULL:
 * NOT_SET), so the file is usable by the Python reference models. */
tk_status tk_te_params_write_ucf_ex(const tk_te_params *p, FILE *out, const char *file_stem,
                                    const char *object_files);
/* Check the combination is usable: widths the codec can carry (addresses, context and time
 * up to 64 bits, privilege 8, ecause 32, cache/bpred/stack sizes 31), itype width 3 or 4,
 * and an F0 subformat field when both F0 extensions are on. TK_ERR_CONFIG with a message. */
tk_status tk_te_params_validate(const tk_te_params *p, tk_diag *diag);

/* Derived widths (bits). */
static inline uint32_t tk_te_addr_bits(const tk_te_params *p)
{
    return p->s.iaddress_width - p->s.iaddress_lsb;
}
static inline uint32_t tk_te_context_bits(const tk_te_params *p)
{
    return p->s.nocontext ? 0 : p->s.context_width;
}
static inline uint32_t tk_te_time_bits(const tk_te_params *p)
{
    return p->s.notime ? 0 : p->s.time_width;
}
/* irdepth width: 2.0 return_stack_size + (return_stack_size>0) + call_counter_size;
 * 0.029 return_stack_size + call_counter_size. */
static inline uint32_t tk_te_irdepth_bits(const tk_te_params *p)
{
    uint32_t rs = p->s.return_stack_size;
    if (p->spec == TK_TE_SPEC_2_0)
        return rs + (rs > 0 ? 1u : 0u) + p->s.call_counter_size;
    return rs + p->s.call_counter_size;
}

/* ioptions bit assignment used by the reference flow (VERSIONS.md C.6). */
enum {
    TK_TE_IOPT_IMPLICIT_RETURN = 1u << 0,
    TK_TE_IOPT_IMPLICIT_EXCEPT = 1u << 1,
    TK_TE_IOPT_FULL_ADDRESS = 1u << 2,
    TK_TE_IOPT_JUMP_TARGET_CACHE = 1u << 3,
    TK_TE_IOPT_BRANCH_PREDICTION = 1u << 4,
    TK_TE_IOPT_SIJUMP = 1u << 5, /* tracekit extension; only with ioptions_width > 5 */
};
uint32_t tk_te_params_ioptions(const tk_te_params *p);
void tk_te_params_apply_ioptions(tk_te_params *p, uint32_t ioptions);

/* Where a reader of the trace is, for tk_te_support_check. */
enum {
    /* the options in p are the encoder's (known from its configuration): any other refused */
    TK_TE_SUPPORT_FIXED_OPTIONS = 1u << 0,
    /* a sync (format 3 subformat 0 or 1) was read since the start or the last clean end
     * (a support packet with qual_status other than no_change) */
    TK_TE_SUPPORT_FOLLOWING = 1u << 1,
    /* damage (an error or reported loss) since the last clean end */
    TK_TE_SUPPORT_DAMAGED = 1u << 2,
};
/* Whether a support packet with this encoder_mode and ioptions can come from the encoder
 * whose options p holds, the reader being in state (TK_TE_SUPPORT_* flags): NULL if it can
 * (its ioptions are then to be applied), otherwise why not (a constant string). A refused
 * packet was damaged and is not to be applied at all (src/etrace/support_check.c gives the
 * rules and their spec sections). */
const char *tk_te_support_check(const tk_te_params *p, uint32_t encoder_mode, uint32_t ioptions,
                                unsigned state);

#ifdef __cplusplus
}
#endif
#endif
