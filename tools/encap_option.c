/* SPDX-License-Identifier: BSD-2-Clause */
#include "encap_option.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tk_cli_encap_layout(tk_cli_encap *e, const char *cmd, const char *layout)
{
    tk_diag diag;
    tk_diag_clear(&diag);
    if (tk_encap_config_parse(layout, &e->cfg, &diag) != TK_OK) {
        fprintf(stderr, "tracekit %s: --encap: %s\n", cmd, diag.message);
        return 2;
    }
    e->on = e->layout_given = true;
    return 0;
}

int tk_cli_encap_srcid(tk_cli_encap *e, const char *cmd, const char *text)
{
    if (!strcmp(text, "all")) {
        fprintf(stderr,
                "tracekit %s: --srcid all: only 'tracekit dump' lists every source; %s takes "
                "one source (hart): --srcid N\n",
                cmd, cmd);
        return 2;
    }
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(text, &end, 0);
    if (end == text || *end || errno || v > 0xffff) {
        fprintf(stderr, "tracekit %s: --srcid '%s': expected 0..65535\n", cmd, text);
        return 2;
    }
    e->srcid = (uint16_t)v;
    e->srcid_given = true;
    e->all_sources = false;
    return 0;
}

int tk_cli_encap_srcid_or_all(tk_cli_encap *e, const char *cmd, const char *text)
{
    if (strcmp(text, "all"))
        return tk_cli_encap_srcid(e, cmd, text);
    e->srcid = 0;
    e->srcid_given = e->all_sources = true;
    return 0;
}

int tk_cli_encap_check(const tk_cli_encap *e, const char *cmd)
{
    if (!e->on && e->srcid_given) {
        fprintf(stderr,
                "tracekit %s: --srcid picks a source of an encapsulated stream: give "
                "--encap LAYOUT (or --regs with trTeSrcBits)\n",
                cmd);
        return 2;
    }
    if (e->on && e->cfg.srcid_bits < 16 && (e->srcid >> e->cfg.srcid_bits)) {
        fprintf(stderr, "tracekit %s: --srcid %u does not fit srcid-bits=%u\n", cmd,
                (unsigned)e->srcid, (unsigned)e->cfg.srcid_bits);
        return 2;
    }
    return 0;
}

int tk_cli_encap_from_regs(tk_cli_encap *e, const char *cmd, const tk_te_hw_config *hw)
{
    if (hw->src_bits && !e->layout_given) {
        e->on = true;
        tk_encap_config_init(&e->cfg);
        e->cfg.srcid_bits = hw->src_bits;
    }
    if (hw->src_bits && !e->srcid_given)
        e->srcid = hw->src_id;
    return tk_cli_encap_check(e, cmd);
}

bool tk_cli_encap_report(const tk_cli_encap *e, const char *cmd, const char *input,
                         const tk_te_encap_stats *st)
{
    if (st->packets)
        return false;
    if (e->all_sources) {
        fprintf(stderr, "tracekit %s: %s: no packet of any source (is the layout right?)\n", cmd,
                input);
        return true;
    }
    fprintf(stderr, "tracekit %s: %s: no te_inst packet of srcID %u", cmd, input,
            (unsigned)e->srcid);
    if (st->nsources == 0) {
        fprintf(stderr, " (no packet at all: is the layout right?)\n");
        return true;
    }
    fprintf(stderr, "; the stream has srcID");
    for (uint32_t i = 0; i < st->nsources && i < TK_TE_ENCAP_MAX_SOURCES; i++)
        fprintf(stderr, "%s %u (%" PRIu64 " packets)", i ? "," : "", (unsigned)st->sources[i],
                st->source_packets[i]);
    if (st->nsources > TK_TE_ENCAP_MAX_SOURCES)
        fprintf(stderr, " and %" PRIu32 " more", st->nsources - TK_TE_ENCAP_MAX_SOURCES);
    fprintf(stderr, "\n");
    return true;
}
