/* SPDX-License-Identifier: BSD-2-Clause */
/* Reader and writer of a RISC-V Trace Control Interface register dump (`name=value` text):
 * the encoder's control, feature, filter and comparator registers (TCI "Trace Encoder
 * Control Interface", E-Trace control.adoc for which fields apply), plus the discovery
 * parameters and trap vectors a decoder needs. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracekit/te_filter.h"

/* Discovery parameters (E-Trace discovery.adoc), named as in the .scf. */
static const struct {
    const char *name;
    size_t off;
} static_keys[] = {
#define K(n)                                                                                       \
    {                                                                                              \
#n "_p", offsetof(tk_te_static, n)                                                         \
    }
    K(arch),
    K(bpred_size),
    K(cache_size),
    K(call_counter_size),
    K(context_width),
    K(time_width),
    K(ecause_width),
    K(f0s_width),
    K(iaddress_lsb),
    K(iaddress_width),
    K(nocontext),
    K(notime),
    K(privilege_width),
    K(return_stack_size),
    K(sijump),
    K(comparators),
    K(filters),
    K(ecause_choice),
    K(filter_context),
    K(filter_time),
    K(filter_excint),
    K(filter_privilege),
    K(filter_tval),
    K(ctype_width),
    K(ilastsize_width),
    K(itype_width),
    K(iretire_width),
    K(retires),
    K(taken_branches),
    K(impdef_width),
#undef K
};

/* Registers of other trace components or of data trace: valid in a dump, no effect here. */
static const char *const ignored_prefixes[] = {"trTeData", "trTs",  "trTeTrig",   "trRam",
                                               "trFunnel", "trPib", "trAtbBridge"};

/* Raw register values, applied once the whole dump is read (order does not matter). */
typedef struct regs {
    uint64_t control, impl, features, inst_filters;
    bool has_control, has_impl, has_features, has_filters;
    uint32_t fctl[TK_TE_MAX_FILTERS], finst[TK_TE_MAX_FILTERS];
    uint64_t fecause[TK_TE_MAX_FILTERS];
    uint32_t cctl[TK_TE_MAX_COMPARATORS];
    uint64_t pmatch[TK_TE_MAX_COMPARATORS], smatch[TK_TE_MAX_COMPARATORS];
} regs;

void tk_te_hw_config_init(tk_te_hw_config *c, const tk_te_params *base)
{
    memset(c, 0, sizeof(*c));
    if (base)
        c->params = *base;
    else
        tk_te_params_init(&c->params);
    tk_te_filter_config_init(&c->filter);
}

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *s == '-')
        return false;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

/* "trTeFilter12MatchInst" with prefix "trTeFilter": index 12, rest "MatchInst". */
static bool indexed(const char *name, const char *prefix, unsigned max, unsigned *idx,
                    const char **rest)
{
    size_t n = strlen(prefix);
    if (strncasecmp(name, prefix, n) != 0 || !isdigit((unsigned char)name[n]))
        return false;
    char *end;
    unsigned long v = strtoul(name + n, &end, 10);
    if (v >= max)
        return false;
    *idx = (unsigned)v;
    *rest = end;
    return true;
}

static tk_status set_key(tk_te_hw_config *c, regs *r, const char *name, const char *value,
                         uint64_t line, tk_diag *diag)
{
    uint64_t v = 0;
    unsigned i;
    const char *rest;
    if (strcasecmp(name, "spec") == 0) {
        if (tk_te_spec_parse(value, &c->params.spec) != TK_OK)
            goto bad_value;
        return TK_OK;
    }
    if (!parse_u64(value, &v))
        goto bad_value;
    for (size_t k = 0; k < sizeof(static_keys) / sizeof(static_keys[0]); k++) {
        if (strcasecmp(name, static_keys[k].name) == 0) {
            if (v > UINT32_MAX)
                goto bad_value;
            *(uint32_t *)((char *)&c->params.s + static_keys[k].off) = (uint32_t)v;
            return TK_OK;
        }
    }
    static const char *const tvecs[] = {"utvec", "stvec", NULL, "mtvec"};
    for (unsigned p = 0; p < 4; p++) {
        if (tvecs[p] && strcasecmp(name, tvecs[p]) == 0) {
            c->tvec[p] = v;
            c->tvec_set |= (uint8_t)(1u << p);
            return TK_OK;
        }
    }
    const bool fits32 = v <= UINT32_MAX;
    if (strcasecmp(name, "trTeControl") == 0) {
        r->control = v;
        r->has_control = true;
    } else if (strcasecmp(name, "trTeImpl") == 0) {
        r->impl = v;
        r->has_impl = true;
    } else if (strcasecmp(name, "trTeInstFeatures") == 0) {
        r->features = v;
        r->has_features = true;
    } else if (strcasecmp(name, "trTeInstFilters") == 0) {
        r->inst_filters = v;
        r->has_filters = true;
    } else if (indexed(name, "trTeFilter", TK_TE_MAX_FILTERS, &i, &rest)) {
        if (strcasecmp(rest, "Control") == 0)
            r->fctl[i] = (uint32_t)v;
        else if (strcasecmp(rest, "MatchInst") == 0)
            r->finst[i] = (uint32_t)v;
        else if (strcasecmp(rest, "MatchEcauseLow") == 0)
            r->fecause[i] = (r->fecause[i] & ~0xffffffffull) | (v & 0xffffffffull);
        else if (strcasecmp(rest, "MatchEcauseHigh") == 0)
            r->fecause[i] = (r->fecause[i] & 0xffffffffull) | (v << 32);
        else if (strcasecmp(rest, "MatchValueImpdef") != 0 &&
                 strcasecmp(rest, "MatchMaskImpdef") != 0 && strcasecmp(rest, "MatchData") != 0)
            goto unknown;
    } else if (indexed(name, "trTeComp", TK_TE_MAX_COMPARATORS, &i, &rest)) {
        if (strcasecmp(rest, "Control") == 0)
            r->cctl[i] = (uint32_t)v;
        else if (strcasecmp(rest, "PMatchLow") == 0)
            r->pmatch[i] = (r->pmatch[i] & ~0xffffffffull) | (v & 0xffffffffull);
        else if (strcasecmp(rest, "PMatchHigh") == 0)
            r->pmatch[i] = (r->pmatch[i] & 0xffffffffull) | (v << 32);
        else if (strcasecmp(rest, "SMatchLow") == 0)
            r->smatch[i] = (r->smatch[i] & ~0xffffffffull) | (v & 0xffffffffull);
        else if (strcasecmp(rest, "SMatchHigh") == 0)
            r->smatch[i] = (r->smatch[i] & 0xffffffffull) | (v << 32);
        else
            goto unknown;
    } else {
        for (size_t k = 0; k < sizeof(ignored_prefixes) / sizeof(ignored_prefixes[0]); k++)
            if (strncasecmp(name, ignored_prefixes[k], strlen(ignored_prefixes[k])) == 0)
                return TK_OK;
        goto unknown;
    }
    if (!fits32)
        goto bad_value;
    return TK_OK;
unknown:
    if (diag)
        diag->line = line;
    return tk_diag_set(diag, TK_ERR_CONFIG, "line %" PRIu64 ": unknown register '%s'", line, name);
bad_value:
    if (diag)
        diag->line = line;
    return tk_diag_set(diag, TK_ERR_CONFIG, "line %" PRIu64 ": bad value '%s' for %s", line, value,
                       name);
}

static unsigned bits(uint64_t v, unsigned lo, unsigned n)
{
    return (unsigned)((v >> lo) & ((1u << n) - 1));
}

static tk_status apply(tk_te_hw_config *c, const regs *r, tk_diag *diag)
{
    tk_te_params *p = &c->params;
    tk_te_filter_config *f = &c->filter;
    if (r->has_impl && bits(r->impl, 16, 4) != 0)
        return tk_diag_set(diag, TK_ERR_CONFIG, "trTeImpl: trTeProtocolMajor %u (E-Trace 2.0 is 0)",
                           bits(r->impl, 16, 4));
    if (r->has_control) {
        c->have_control = true;
        if (bits(r->control, 24, 3) != 0)
            return tk_diag_set(diag, TK_ERR_CONFIG, "trTeControl: trTeFormat %u is not E-Trace (0)",
                               bits(r->control, 24, 3));
        f->inst_tracing = bits(r->control, 2, 1);
        f->trig_enable = bits(r->control, 11, 1);
        switch (bits(r->control, 16, 2)) {
        case 0: /* off: the longest interval the model has */
            p->o.resync_max = 27;
            break;
        case 1:
            p->o.resync_max = bits(r->control, 20, 4);
            break;
        default:
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeControl: trTeInstSyncMode %u (cycles/half-words) is not "
                               "modelled; tracekit's encoder counts packets (mode 1)",
                               bits(r->control, 16, 2));
        }
    }
    if (r->has_features) {
        const uint64_t x = r->features;
        p->o.full_address = bits(x, 0, 1);
        p->o.implicit_except = bits(x, 1, 1);
        p->o.sijump = bits(x, 2, 1);
        p->o.implicit_return = bits(x, 3, 1);
        p->o.branch_prediction = bits(x, 4, 1);
        p->o.jump_target_cache = bits(x, 5, 1);
        const unsigned irmode = bits(x, 6, 2);
        if (irmode == 1 && (p->s.call_counter_size == 0 || p->s.return_stack_size != 0))
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeInstImplicitReturnMode 1 (call counter) needs "
                               "call_counter_size_p > 0 and return_stack_size_p = 0");
        if (irmode >= 2 && p->s.return_stack_size == 0)
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeInstImplicitReturnMode %u (return address stack) needs "
                               "return_stack_size_p > 0",
                               irmode);
        if (bits(x, 8, 3))
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeInstFeatures: repeated history, all jumps and extended "
                               "address MSB (bits 8-10) are not E-Trace features");
        /* the source field (TCI: 0..12 bits; the encapsulation allows up to 16) */
        c->src_bits = (uint8_t)bits(x, 28, 4);
        c->src_id = (uint16_t)bits(x, 16, 12);
        if (c->src_bits > 12)
            return tk_diag_set(diag, TK_ERR_CONFIG, "trTeInstFeatures: trTeSrcBits %u exceeds 12",
                               c->src_bits);
        if (c->src_bits && c->src_bits < 12 && (c->src_id >> c->src_bits))
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeInstFeatures: trTeSrcID 0x%x does not fit trTeSrcBits %u",
                               c->src_id, c->src_bits);
    }
    if (r->has_control && bits(r->control, 15, 1)) /* trTeInhibitSrc */
        c->src_bits = 0;
    if (r->has_filters)
        f->inst_filters = (uint16_t)r->inst_filters;
    for (unsigned i = 0; i < TK_TE_MAX_FILTERS; i++) {
        const uint32_t x = r->fctl[i];
        tk_te_filter_unit *u = &f->filter[i];
        if (x & ((1u << 16) | (3u << 24)))
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "trTeFilter%uControl: impdef, dtype and dsize matching are not "
                               "modelled",
                               i);
        u->enable = bits(x, 0, 1);
        u->match_priv = bits(x, 1, 1);
        u->match_ecause = bits(x, 2, 1);
        u->match_interrupt = bits(x, 3, 1);
        for (unsigned k = 0; k < 3; k++) {
            u->match_comp[k] = bits(x, 4 + 4 * k, 1);
            u->comp[k] = (uint8_t)bits(x, 5 + 4 * k, 3);
        }
        u->priv_choice = (uint8_t)bits(r->finst[i], 0, 8);
        u->interrupt_value = bits(r->finst[i], 8, 1);
        u->ecause_choice = r->fecause[i];
    }
    for (unsigned j = 0; j < TK_TE_MAX_COMPARATORS; j++) {
        const uint32_t x = r->cctl[j];
        tk_te_comparator *k = &f->comp[j];
        k->p_input = (uint8_t)bits(x, 0, 2);
        k->s_input = (uint8_t)bits(x, 2, 2);
        k->p_func = (uint8_t)bits(x, 4, 3);
        k->s_func = (uint8_t)bits(x, 8, 3);
        k->mode = (uint8_t)bits(x, 12, 2);
        k->p_notify = bits(x, 14, 1);
        k->s_notify = bits(x, 15, 1);
        k->p_match = r->pmatch[j];
        k->s_match = r->smatch[j];
    }
    return tk_te_params_validate(p, diag);
}

tk_status tk_te_regs_parse(tk_te_hw_config *c, const char *text, size_t len, tk_diag *diag)
{
    regs r;
    memset(&r, 0, sizeof(r));
    /* Registers not in the dump keep the configuration's current values. */
    const tk_te_filter_config *f = &c->filter;
    r.inst_filters = f->inst_filters;
    for (unsigned i = 0; i < TK_TE_MAX_FILTERS; i++) {
        const tk_te_filter_unit *u = &f->filter[i];
        r.fctl[i] = (uint32_t)u->enable | (uint32_t)u->match_priv << 1 |
                    (uint32_t)u->match_ecause << 2 | (uint32_t)u->match_interrupt << 3;
        for (unsigned k = 0; k < 3; k++)
            r.fctl[i] |= ((uint32_t)u->match_comp[k] | (uint32_t)u->comp[k] << 1) << (4 + 4 * k);
        r.finst[i] = u->priv_choice | (uint32_t)u->interrupt_value << 8;
        r.fecause[i] = u->ecause_choice;
    }
    for (unsigned j = 0; j < TK_TE_MAX_COMPARATORS; j++) {
        const tk_te_comparator *k = &f->comp[j];
        r.cctl[j] = (uint32_t)k->p_input | (uint32_t)k->s_input << 2 | (uint32_t)k->p_func << 4 |
                    (uint32_t)k->s_func << 8 | (uint32_t)k->mode << 12 |
                    (uint32_t)k->p_notify << 14 | (uint32_t)k->s_notify << 15;
        r.pmatch[j] = k->p_match;
        r.smatch[j] = k->s_match;
    }
    uint64_t line = 0;
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        line++;
        char buf[512];
        size_t n = end - pos;
        if (n >= sizeof(buf)) {
            if (diag)
                diag->line = line;
            return tk_diag_set(diag, TK_ERR_CONFIG, "line %" PRIu64 ": too long", line);
        }
        memcpy(buf, text + pos, n);
        buf[n] = 0;
        pos = end + 1;
        char *hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        char *s = buf;
        while (isspace((unsigned char)*s))
            s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = 0;
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            if (diag)
                diag->line = line;
            return tk_diag_set(diag, TK_ERR_CONFIG, "line %" PRIu64 ": expected name=value", line);
        }
        char *name_end = eq;
        while (name_end > s && isspace((unsigned char)name_end[-1]))
            name_end--;
        *name_end = 0;
        char *value = eq + 1;
        while (isspace((unsigned char)*value))
            value++;
        tk_status st = set_key(c, &r, s, value, line, diag);
        if (st != TK_OK)
            return st;
    }
    return apply(c, &r, diag);
}

tk_status tk_te_regs_read(tk_te_hw_config *c, const char *path, tk_diag *diag)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return tk_diag_set(diag, TK_ERR_IO, "%s: cannot open", path);
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    if (!text) {
        fclose(fp);
        return TK_ERR_NOMEM;
    }
    size_t got;
    while ((got = fread(text + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) {
            if (cap >= (1u << 24)) {
                free(text);
                fclose(fp);
                return tk_diag_set(diag, TK_ERR_CONFIG, "%s: too large for a register dump", path);
            }
            char *t = realloc(text, cap * 2);
            if (!t) {
                free(text);
                fclose(fp);
                return TK_ERR_NOMEM;
            }
            text = t;
            cap *= 2;
        }
    }
    const bool err = ferror(fp);
    fclose(fp);
    if (err) {
        free(text);
        return tk_diag_set(diag, TK_ERR_IO, "%s: read error", path);
    }
    tk_status st = tk_te_regs_parse(c, text, len, diag);
    free(text);
    return st;
}

tk_status tk_te_regs_write(const tk_te_hw_config *c, FILE *out)
{
    const tk_te_params *p = &c->params;
    const tk_te_filter_config *f = &c->filter;
    fprintf(out, "# discovery parameters\n");
    for (size_t k = 0; k < sizeof(static_keys) / sizeof(static_keys[0]); k++)
        fprintf(out, "%s=%" PRIu32 "\n", static_keys[k].name,
                *(const uint32_t *)((const char *)&p->s + static_keys[k].off));
    if (p->spec != TK_TE_SPEC_2_0)
        fprintf(out, "spec=%s\n", tk_te_spec_name(p->spec));
    static const char *const tvecs[] = {"utvec", "stvec", NULL, "mtvec"};
    for (unsigned i = 0; i < 4; i++)
        if (tvecs[i] && ((c->tvec_set >> i) & 1u))
            fprintf(out, "%s=0x%" PRIx64 "\n", tvecs[i], c->tvec[i]);
    /* trTeActive, trTeEnable, E-Trace format, packet-counted sync */
    uint32_t control = 3u | (uint32_t)f->inst_tracing << 2 | (uint32_t)f->trig_enable << 11 |
                       1u << 16 | (p->o.resync_max & 15u) << 20;
    fprintf(out, "# registers\ntrTeControl=0x%08" PRIx32 "\n", control);
    uint32_t irmode = p->s.return_stack_size ? 3u : p->s.call_counter_size ? 1u : 0u;
    uint32_t feat = (uint32_t)p->o.full_address | (uint32_t)p->o.implicit_except << 1 |
                    (uint32_t)p->o.sijump << 2 | (uint32_t)p->o.implicit_return << 3 |
                    (uint32_t)p->o.branch_prediction << 4 | (uint32_t)p->o.jump_target_cache << 5 |
                    irmode << 6 | (uint32_t)c->src_id << 16 | (uint32_t)c->src_bits << 28;
    fprintf(out, "trTeInstFeatures=0x%08" PRIx32 "\n", feat);
    fprintf(out, "trTeInstFilters=0x%04x\n", f->inst_filters);
    for (unsigned i = 0; i < TK_TE_MAX_FILTERS; i++) {
        const tk_te_filter_unit *u = &f->filter[i];
        uint32_t x = (uint32_t)u->enable | (uint32_t)u->match_priv << 1 |
                     (uint32_t)u->match_ecause << 2 | (uint32_t)u->match_interrupt << 3;
        for (unsigned k = 0; k < 3; k++)
            x |= ((uint32_t)u->match_comp[k] | (uint32_t)u->comp[k] << 1) << (4 + 4 * k);
        const uint32_t inst = u->priv_choice | (uint32_t)u->interrupt_value << 8;
        if (!x && !inst && !u->ecause_choice)
            continue;
        fprintf(out, "trTeFilter%uControl=0x%08" PRIx32 "\n", i, x);
        fprintf(out, "trTeFilter%uMatchInst=0x%08" PRIx32 "\n", i, inst);
        fprintf(out, "trTeFilter%uMatchEcauseLow=0x%08" PRIx32 "\n", i, (uint32_t)u->ecause_choice);
        fprintf(out, "trTeFilter%uMatchEcauseHigh=0x%08" PRIx32 "\n", i,
                (uint32_t)(u->ecause_choice >> 32));
    }
    for (unsigned j = 0; j < TK_TE_MAX_COMPARATORS; j++) {
        const tk_te_comparator *k = &f->comp[j];
        const uint32_t x = (uint32_t)k->p_input | (uint32_t)k->s_input << 2 |
                           (uint32_t)k->p_func << 4 | (uint32_t)k->s_func << 8 |
                           (uint32_t)k->mode << 12 | (uint32_t)k->p_notify << 14 |
                           (uint32_t)k->s_notify << 15;
        if (!x && !k->p_match && !k->s_match)
            continue;
        fprintf(out, "trTeComp%uControl=0x%08" PRIx32 "\n", j, x);
        fprintf(out, "trTeComp%uPMatchLow=0x%08" PRIx32 "\n", j, (uint32_t)k->p_match);
        fprintf(out, "trTeComp%uPMatchHigh=0x%08" PRIx32 "\n", j, (uint32_t)(k->p_match >> 32));
        fprintf(out, "trTeComp%uSMatchLow=0x%08" PRIx32 "\n", j, (uint32_t)k->s_match);
        fprintf(out, "trTeComp%uSMatchHigh=0x%08" PRIx32 "\n", j, (uint32_t)(k->s_match >> 32));
    }
    return ferror(out) ? TK_ERR_IO : TK_OK;
}
