/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace parameters: defaults, .scf/.ucf reading and writing, validation and the support
 * packet's ioptions mapping (spec/VERSIONS.md C.3, C.6). */
#include "tracekit/te_params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/ini.h"

void tk_te_params_init(tk_te_params *p)
{
    memset(p, 0, sizeof(*p));
    p->size = sizeof(*p);
    p->spec = TK_TE_SPEC_2_0;
    /* referenceFlow tests/config_files/i_template.scf */
    tk_te_static *s = &p->s;
    s->context_width = 32;
    s->time_width = 1;
    s->ecause_width = 5;
    s->iaddress_width = 40;
    s->notime = 1;
    s->privilege_width = 2;
    s->comparators = 1;
    s->filters = 1;
    s->ecause_choice = 5;
    s->filter_context = 1;
    s->filter_time = 1;
    s->filter_excint = 1;
    s->filter_privilege = 1;
    s->filter_tval = 1;
    s->ctype_width = 2;
    s->ilastsize_width = 1;
    s->itype_width = 3;
    s->iretire_width = 3;
    s->retires = 1;
    s->taken_branches = 1;
    s->impdef_width = 1;
    /* i_template.ucf: resync-max 1, every option false */
    p->o.resync_max = 1;
    /* support packet layout of encoder_model.py (VERSIONS.md E) */
    p->encoder_mode_width = 1;
    p->ioptions_width = 5;
    p->doptions_width = 4;
}

/* ---- .scf ---------------------------------------------------------------------------- */

typedef struct scf_key {
    const char *name;
    size_t offset; /* in tk_te_static */
    int section;   /* index in scf_sections, for writing */
} scf_key;

static const char *const scf_sections[] = {"Required Attributes", "Optional Filtering Attributes",
                                           "Other Recommended Attributes"};

#define SCF_KEY(field, sec)                                                                        \
    {                                                                                              \
#field "_p", offsetof(tk_te_static, field), sec                                            \
    }
static const scf_key scf_keys[] = {
    SCF_KEY(arch, 0),
    SCF_KEY(bpred_size, 0),
    SCF_KEY(cache_size, 0),
    SCF_KEY(call_counter_size, 0),
    SCF_KEY(context_width, 0),
    SCF_KEY(time_width, 0),
    SCF_KEY(ecause_width, 0),
    SCF_KEY(f0s_width, 0),
    SCF_KEY(iaddress_lsb, 0),
    SCF_KEY(iaddress_width, 0),
    SCF_KEY(nocontext, 0),
    SCF_KEY(notime, 0),
    SCF_KEY(privilege_width, 0),
    SCF_KEY(return_stack_size, 0),
    SCF_KEY(sijump, 0),
    SCF_KEY(comparators, 1),
    SCF_KEY(filters, 1),
    SCF_KEY(ecause_choice, 1),
    SCF_KEY(filter_context, 1),
    SCF_KEY(filter_time, 1),
    SCF_KEY(filter_excint, 1),
    SCF_KEY(filter_privilege, 1),
    SCF_KEY(filter_tval, 1),
    SCF_KEY(ctype_width, 2),
    SCF_KEY(ilastsize_width, 2),
    SCF_KEY(itype_width, 2),
    SCF_KEY(iretire_width, 2),
    SCF_KEY(retires, 2),
    SCF_KEY(taken_branches, 2),
    SCF_KEY(impdef_width, 2),
};
#undef SCF_KEY
#define N_SCF_KEYS (sizeof(scf_keys) / sizeof(scf_keys[0]))

typedef struct parse_ctx {
    const char *path;
    tk_te_params *p;
    uint64_t seen; /* bit per key index, to reject duplicates like configparser does */
    char **elf_out;
} parse_ctx;

/* Unsigned integer in decimal or 0x-hex (debug-flags = 0x7f). */
static tk_status parse_uint(const parse_ctx *c, const char *key, const char *v, unsigned line,
                            uint32_t *out, tk_diag *diag)
{
    errno = 0;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 0);
    if (*v == '\0' || *v == '-' || *end != '\0' || errno || x > UINT32_MAX)
        return tk_diag_set(diag, TK_ERR_CONFIG, "%s:%u: %s: expected an unsigned integer, got '%s'",
                           c->path, line, key, v);
    *out = (uint32_t)x;
    return TK_OK;
}

static tk_status parse_bool(const parse_ctx *c, const char *key, const char *v, unsigned line,
                            bool *out, tk_diag *diag)
{
    /* The Python models compare with the string "true"; accept the case variants too. */
    if (!strcasecmp(v, "true")) {
        *out = true;
        return TK_OK;
    }
    if (!strcasecmp(v, "false")) {
        *out = false;
        return TK_OK;
    }
    return tk_diag_set(diag, TK_ERR_CONFIG, "%s:%u: %s: expected true or false, got '%s'", c->path,
                       line, key, v);
}

static tk_status mark_seen(parse_ctx *c, unsigned idx, const char *key, unsigned line,
                           tk_diag *diag)
{
    if (c->seen & (1ull << idx))
        return tk_diag_set(diag, TK_ERR_CONFIG, "%s:%u: duplicate key '%s'", c->path, line, key);
    c->seen |= 1ull << idx;
    return TK_OK;
}

/* Section headers are only grouping: the reference C reader ignored them, and the encoder
 * .ucf files of the golden vectors lack their [codec] header. Keys are matched by name. */
static tk_status scf_key_fn(void *ctx, const char *section, const char *key, const char *value,
                            unsigned line, tk_diag *diag)
{
    parse_ctx *c = ctx;
    (void)section;
    for (unsigned i = 0; i < N_SCF_KEYS; i++) {
        if (strcmp(scf_keys[i].name, key))
            continue;
        tk_status st = mark_seen(c, i, key, line, diag);
        if (st != TK_OK)
            return st;
        return parse_uint(c, key, value, line, (uint32_t *)((char *)&c->p->s + scf_keys[i].offset),
                          diag);
    }
    return tk_diag_set(diag, TK_ERR_CONFIG, "%s:%u: unknown key '%s'", c->path, line, key);
}

tk_status tk_te_params_read_scf(tk_te_params *p, const char *path, tk_diag *diag)
{
    if (!p || !path)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_params_read_scf: NULL argument");
    parse_ctx c = {.path = path, .p = p};
    return tk_ini_parse(path, NULL, scf_key_fn, &c, diag);
}

tk_status tk_te_params_write_scf(const tk_te_params *p, FILE *out)
{
    if (!p || !out)
        return TK_ERR_INVALID;
    fprintf(out, "# E-Trace static (hardware) parameters, reference flow .scf format\n");
    for (int sec = 0; sec < 3; sec++) {
        fprintf(out, "%s[%s]\n", sec ? "\n" : "", scf_sections[sec]);
        for (unsigned i = 0; i < N_SCF_KEYS; i++)
            if (scf_keys[i].section == sec)
                fprintf(out, "%s=%" PRIu32 "\n", scf_keys[i].name,
                        *(const uint32_t *)((const char *)&p->s + scf_keys[i].offset));
    }
    return ferror(out) ? TK_ERR_IO : TK_OK;
}

/* ---- .ucf ---------------------------------------------------------------------------- */

enum ucf_kind { UCF_IGNORED_TEXT, UCF_IGNORED_UINT, UCF_IGNORED_BOOL, UCF_UINT, UCF_BOOL, UCF_ELF };

typedef struct ucf_key {
    const char *name;
    enum ucf_kind kind;
    size_t offset; /* in tk_te_options, for UCF_UINT/UCF_BOOL */
} ucf_key;

static const ucf_key ucf_keys[] = {
    /* [required] */
    {"file-stem", UCF_IGNORED_TEXT, 0},
    {"debug-flags", UCF_IGNORED_UINT, 0},
    {"ip-version", UCF_IGNORED_UINT, 0},
    {"object-files", UCF_ELF, 0},
    /* [codec] */
    {"cycle-accurate", UCF_BOOL, offsetof(tk_te_options, cycle_accurate)},
    {"resync-max", UCF_UINT, offsetof(tk_te_options, resync_max)},
    {"full-address", UCF_BOOL, offsetof(tk_te_options, full_address)},
    {"implicit-except", UCF_BOOL, offsetof(tk_te_options, implicit_except)},
    {"si-jump", UCF_BOOL, offsetof(tk_te_options, sijump)},
    {"implicit-return", UCF_BOOL, offsetof(tk_te_options, implicit_return)},
    {"branch-prediction", UCF_BOOL, offsetof(tk_te_options, branch_prediction)},
    {"jump-target-cache", UCF_BOOL, offsetof(tk_te_options, jump_target_cache)},
    /* [flags] */
    {"print-set-pc", UCF_IGNORED_BOOL, 0},
    {"use-rv32-isa", UCF_BOOL, offsetof(tk_te_options, use_rv32_isa)},
};
#define N_UCF_KEYS (sizeof(ucf_keys) / sizeof(ucf_keys[0]))

/* object-files names the ELF, or "pk elf" (proxy kernel then program): the program is the
 * last word. Relative paths are relative to the .ucf's folder. NOT_SET means none. */
static tk_status resolve_elf(const parse_ctx *c, const char *value, unsigned line, tk_diag *diag)
{
    if (!c->elf_out)
        return TK_OK;
    const char *last = value;
    for (const char *s = value; *s; s++)
        if (isspace((unsigned char)*s) && s[1] && !isspace((unsigned char)s[1]))
            last = s + 1;
    free(*c->elf_out);
    *c->elf_out = NULL;
    if (*last == '\0' || !strcmp(last, "NOT_SET"))
        return TK_OK;
    size_t dirlen = 0;
    if (*last != '/') {
        const char *slash = strrchr(c->path, '/');
        dirlen = slash ? (size_t)(slash - c->path) + 1 : 0;
    }
    size_t n = dirlen + strlen(last) + 1;
    char *r = malloc(n);
    if (!r)
        return tk_diag_set(diag, TK_ERR_NOMEM, "%s:%u: out of memory", c->path, line);
    memcpy(r, c->path, dirlen);
    memcpy(r + dirlen, last, strlen(last) + 1);
    *c->elf_out = r;
    return TK_OK;
}

static tk_status ucf_key_fn(void *ctx, const char *section, const char *key, const char *value,
                            unsigned line, tk_diag *diag)
{
    parse_ctx *c = ctx;
    (void)section;
    for (unsigned i = 0; i < N_UCF_KEYS; i++) {
        if (strcmp(ucf_keys[i].name, key))
            continue;
        tk_status st = mark_seen(c, i, key, line, diag);
        if (st != TK_OK)
            return st;
        uint32_t u;
        bool b;
        char *field = (char *)&c->p->o + ucf_keys[i].offset;
        switch (ucf_keys[i].kind) {
        case UCF_IGNORED_TEXT:
            return TK_OK;
        case UCF_IGNORED_UINT:
            return parse_uint(c, key, value, line, &u, diag);
        case UCF_IGNORED_BOOL:
            return parse_bool(c, key, value, line, &b, diag);
        case UCF_UINT:
            return parse_uint(c, key, value, line, (uint32_t *)field, diag);
        case UCF_BOOL:
            return parse_bool(c, key, value, line, (bool *)field, diag);
        case UCF_ELF:
            return resolve_elf(c, value, line, diag);
        }
    }
    return tk_diag_set(diag, TK_ERR_CONFIG, "%s:%u: unknown key '%s'", c->path, line, key);
}

tk_status tk_te_params_read_ucf(tk_te_params *p, const char *path, char **elf_out, tk_diag *diag)
{
    if (!p || !path)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_params_read_ucf: NULL argument");
    if (elf_out)
        *elf_out = NULL;
    parse_ctx c = {.path = path, .p = p, .elf_out = elf_out};
    tk_status st = tk_ini_parse(path, NULL, ucf_key_fn, &c, diag);
    if (st != TK_OK && elf_out) {
        free(*elf_out);
        *elf_out = NULL;
    }
    return st;
}

static const char *tf(bool b)
{
    return b ? "true" : "false";
}

tk_status tk_te_params_write_ucf_ex(const tk_te_params *p, FILE *out, const char *file_stem,
                                    const char *object_files)
{
    if (!p || !out)
        return TK_ERR_INVALID;
    const tk_te_options *o = &p->o;
    fprintf(out, "; E-Trace run-time options, reference flow .ucf format\n[required]\n");
    fprintf(out, "file-stem = %s\n", file_stem ? file_stem : "NOT_SET");
    fprintf(out, "debug-flags = 0x7f\nip-version = 6\n");
    fprintf(out, "object-files = %s\n", object_files ? object_files : "NOT_SET");
    fprintf(out, "\n[codec]\ncycle-accurate = %s\nresync-max = %" PRIu32 "\n",
            tf(o->cycle_accurate), o->resync_max);
    fprintf(out, "full-address = %s\nimplicit-except = %s\nsi-jump = %s\n", tf(o->full_address),
            tf(o->implicit_except), tf(o->sijump));
    fprintf(out, "implicit-return = %s\nbranch-prediction = %s\njump-target-cache = %s\n",
            tf(o->implicit_return), tf(o->branch_prediction), tf(o->jump_target_cache));
    fprintf(out, "\n[flags]\nprint-set-pc = false\nuse-rv32-isa = %s\n", tf(o->use_rv32_isa));
    return ferror(out) ? TK_ERR_IO : TK_OK;
}

tk_status tk_te_params_write_ucf(const tk_te_params *p, FILE *out)
{
    return tk_te_params_write_ucf_ex(p, out, NULL, NULL);
}

/* ---- validation ---------------------------------------------------------------------- */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return tk_diag_set(diag, TK_ERR_CONFIG, __VA_ARGS__);                                  \
    } while (0)

tk_status tk_te_params_validate(const tk_te_params *p, tk_diag *diag)
{
    if (!p)
        return tk_diag_set(diag, TK_ERR_INVALID, "tk_te_params_validate: NULL argument");
    const tk_te_static *s = &p->s;
    CHECK(p->spec <= TK_TE_SPEC_0_26, "unknown spec version %d", (int)p->spec);
    CHECK(s->iaddress_width >= 2 && s->iaddress_width <= 64,
          "iaddress_width_p=%" PRIu32 " is outside 2..64", s->iaddress_width);
    CHECK(s->iaddress_lsb < s->iaddress_width,
          "iaddress_lsb_p=%" PRIu32 " must be below iaddress_width_p", s->iaddress_lsb);
    CHECK(s->nocontext <= 1 && s->notime <= 1 && s->sijump <= 1,
          "nocontext_p, notime_p and sijump_p are 0 or 1");
    CHECK(tk_te_context_bits(p) <= 64, "context_width_p=%" PRIu32 " exceeds 64", s->context_width);
    CHECK(tk_te_time_bits(p) <= 64, "time_width_p=%" PRIu32 " exceeds 64", s->time_width);
    CHECK(s->privilege_width <= 8, "privilege_width_p=%" PRIu32 " exceeds 8", s->privilege_width);
    CHECK(s->ecause_width <= 32, "ecause_width_p=%" PRIu32 " exceeds 32", s->ecause_width);
    CHECK(s->f0s_width <= 8, "f0s_width_p=%" PRIu32 " exceeds 8", s->f0s_width);
    CHECK(s->cache_size <= 31, "cache_size_p=%" PRIu32 " exceeds 31", s->cache_size);
    CHECK(s->bpred_size <= 31, "bpred_size_p=%" PRIu32 " exceeds 31", s->bpred_size);
    CHECK(s->return_stack_size <= 31 && s->call_counter_size <= 31,
          "return_stack_size_p and call_counter_size_p must be at most 31");
    CHECK(tk_te_irdepth_bits(p) <= 64, "irdepth would be %" PRIu32 " bits (max 64)",
          tk_te_irdepth_bits(p));
    CHECK(s->itype_width == 3 || s->itype_width == 4, "itype_width_p=%" PRIu32 " must be 3 or 4",
          s->itype_width);
    CHECK(s->retires >= 1, "retires_p must be at least 1");
    CHECK(p->encoder_mode_width <= 8, "encoder_mode width %" PRIu32 " exceeds 8",
          p->encoder_mode_width);
    CHECK(p->ioptions_width <= 32 && p->doptions_width <= 32,
          "ioptions/doptions widths must be at most 32");
    CHECK(p->o.resync_max <= 27, "resync-max=%" PRIu32 " exceeds 27 (2^(n+4) packets)",
          p->o.resync_max);
    /* 2.0 payload.adoc: the F0 subformat field may be omitted only when a single F0 extension
     * is in use (it is then inferred from the options). */
    CHECK(!(p->spec == TK_TE_SPEC_2_0 && s->f0s_width == 0 && p->o.branch_prediction &&
            p->o.jump_target_cache),
          "branch-prediction and jump-target-cache together need f0s_width_p >= 1");
    return TK_OK;
}

/* ---- ioptions (VERSIONS.md C.6: order inherited from the old C decoder) --------------- */

uint32_t tk_te_params_ioptions(const tk_te_params *p)
{
    const tk_te_options *o = &p->o;
    uint32_t v = (o->implicit_return ? TK_TE_IOPT_IMPLICIT_RETURN : 0) |
                 (o->implicit_except ? TK_TE_IOPT_IMPLICIT_EXCEPT : 0) |
                 (o->full_address ? TK_TE_IOPT_FULL_ADDRESS : 0) |
                 (o->jump_target_cache ? TK_TE_IOPT_JUMP_TARGET_CACHE : 0) |
                 (o->branch_prediction ? TK_TE_IOPT_BRANCH_PREDICTION : 0);
    if (p->ioptions_width > 5 && o->sijump)
        v |= TK_TE_IOPT_SIJUMP;
    return v;
}

void tk_te_params_apply_ioptions(tk_te_params *p, uint32_t v)
{
    tk_te_options *o = &p->o;
    o->implicit_return = v & TK_TE_IOPT_IMPLICIT_RETURN;
    o->implicit_except = v & TK_TE_IOPT_IMPLICIT_EXCEPT;
    o->full_address = v & TK_TE_IOPT_FULL_ADDRESS;
    o->jump_target_cache = v & TK_TE_IOPT_JUMP_TARGET_CACHE;
    o->branch_prediction = v & TK_TE_IOPT_BRANCH_PREDICTION;
    /* Without a transmitted sijump bit the decoder keeps its configured setting. */
    if (p->ioptions_width > 5)
        o->sijump = v & TK_TE_IOPT_SIJUMP;
}

/* ---- spec names ---------------------------------------------------------------------- */

const char *tk_te_spec_name(tk_te_spec spec)
{
    switch (spec) {
    case TK_TE_SPEC_2_0:
        return "2.0";
    case TK_TE_SPEC_0_29:
        return "0.29";
    case TK_TE_SPEC_0_26:
        return "0.26";
    }
    return "?";
}

tk_status tk_te_spec_parse(const char *text, tk_te_spec *out)
{
    static const struct {
        const char *name;
        tk_te_spec spec;
    } names[] = {{"2.0", TK_TE_SPEC_2_0},   {"2", TK_TE_SPEC_2_0},      {"1.1.3", TK_TE_SPEC_2_0},
                 {"0.29", TK_TE_SPEC_0_29}, {"0.029", TK_TE_SPEC_0_29}, {"0.26", TK_TE_SPEC_0_26},
                 {"0.026", TK_TE_SPEC_0_26}};
    if (!text || !out)
        return TK_ERR_INVALID;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(text, names[i].name)) {
            *out = names[i].spec;
            return TK_OK;
        }
    return TK_ERR_CONFIG;
}
