/* SPDX-License-Identifier: BSD-2-Clause */
/* The text form of an encapsulation layout, as the command line takes it: the widths are
 * properties of the trace funnel or sink (encapsulation.adoc), not of the packets, so the
 * user states them once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"

static const struct {
    const char *key;
    size_t off;
} keys[] = {
    {"srcid-bits", offsetof(tk_encap_config, srcid_bits)},
    {"timestamp-bytes", offsetof(tk_encap_config, timestamp_bytes)},
    {"type-bits", offsetof(tk_encap_config, type_bits)},
    {"framed", 0}, /* a flag, not a width: handled apart */
};

tk_status tk_encap_config_parse(const char *spec, tk_encap_config *cfg, tk_diag *diag)
{
    if (!spec || !cfg)
        return tk_diag_set(diag, TK_ERR_INVALID, "encapsulation layout is NULL");
    tk_encap_config_init(cfg);
    bool framed = false;
    /* KEY=N items separated by commas; "" has none, a trailing comma an empty one */
    for (const char *p = spec; *spec;) {
        const char *eq = strchr(p, '=');
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (!eq || eq > end)
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "encapsulation layout '%s': expected KEY=N at '%.*s' "
                               "(keys: srcid-bits, timestamp-bytes, type-bits, framed)",
                               spec, (int)(end - p), p);
        size_t i = 0;
        while (i < sizeof(keys) / sizeof(keys[0]) &&
               (strlen(keys[i].key) != (size_t)(eq - p) || strncmp(keys[i].key, p, eq - p)))
            i++;
        if (i == sizeof(keys) / sizeof(keys[0]))
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "encapsulation layout '%s': unknown key '%.*s' "
                               "(keys: srcid-bits, timestamp-bytes, type-bits, framed)",
                               spec, (int)(eq - p), p);
        char *stop = NULL;
        errno = 0;
        unsigned long v = strtoul(eq + 1, &stop, 0);
        if (stop == eq + 1 || stop != end || errno || v > 0xffff)
            return tk_diag_set(diag, TK_ERR_CONFIG,
                               "encapsulation layout '%s': '%.*s' is not a width", spec,
                               (int)(end - eq - 1), eq + 1);
        if (!keys[i].off) {
            if (v > 1)
                return tk_diag_set(diag, TK_ERR_CONFIG,
                                   "encapsulation layout '%s': framed is 0 or 1", spec);
            framed = v == 1;
        } else {
            *(uint32_t *)((char *)cfg + keys[i].off) = (uint32_t)v;
        }
        if (!*end)
            break;
        p = end + 1;
    }
    cfg->unframed = !framed;
    return tk_encap_config_validate(cfg, diag);
}
