/* SPDX-License-Identifier: BSD-2-Clause */
/* ETMv4 configuration derived from the trace unit's ID and control registers (IHI0064 §7.3). */
#include <string.h>
#include <strings.h>

#include "tracekit/etm4.h"

void tk_etm4_config_init(tk_etm4_config *cfg)
{
    uint32_t idr0 = cfg->idr0, idr1 = cfg->idr1, idr2 = cfg->idr2;
    /* TRCIDR1: TRCARCHMAJ [11:8], TRCARCHMIN [7:4]. ETE sets both to 0xf and identifies
     * itself in TRCDEVARCH: ARCHVER [15:12] = 5, REVISION [19:16]. */
    if (((cfg->devarch >> 12) & 0xf) == 5)
        cfg->ete = true;
    if (cfg->ete)
        cfg->version = (uint8_t)(0x50 | ((cfg->devarch >> 16) & 0xf));
    else
        cfg->version = (uint8_t)((((idr1 >> 8) & 0xf) << 4) | ((idr1 >> 4) & 0xf));
    cfg->wfx_branch = (idr2 >> 31) & 1;
    /* TRCIDR2: CIDSIZE [9:5] (0 or 4 bytes), VMIDSIZE [14:10] (0, 1, 2 or 4 bytes),
     * CCSIZE [28:25] (counter of CCSIZE + 12 bits). */
    cfg->cid_bytes = ((idr2 >> 5) & 0x1f) == 4 ? 4 : 0;
    switch ((idr2 >> 10) & 0x1f) {
    case 1:
        cfg->vmid_bytes = 1;
        break;
    case 2:
        cfg->vmid_bytes = 2;
        break;
    case 4:
        cfg->vmid_bytes = 4;
        break;
    default:
        cfg->vmid_bytes = 0;
    }
    cfg->cc_bits = (uint8_t)(((idr2 >> 25) & 0xf) + 12);
    /* TRCIDR0.COMMOPT [29] only matters with cycle counting (TRCIDR0.TRCCCI [7]). */
    cfg->commit_opt1 = ((idr0 >> 29) & 1) && ((idr0 >> 7) & 1);
    /* TRCCONFIGR.DA [16], DV [17]: data tracing enables the data synchronisation markers. */
    cfg->data_trace = (cfg->configr >> 16) & 3;
    /* TRCIDR0.TRCCOND [6] and TRCCONFIGR.COND [10:8]. */
    cfg->cond_trace = ((idr0 >> 6) & 1) && ((cfg->configr >> 8) & 7);
    /* TRCIDR0.QSUPP [16:15]. */
    cfg->q_elements = ((idr0 >> 15) & 3) != 0;
    cfg->max_spec = cfg->idr8;
}

void tk_etm4_config_from_source(tk_etm4_config *cfg, const tk_cs_snapshot *ss,
                                const tk_cs_source *src)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->configr = src->regs.configr;
    cfg->idr0 = src->regs.idr[0];
    cfg->idr1 = src->regs.idr[1];
    cfg->idr2 = src->regs.idr[2];
    cfg->idr8 = src->regs.idr[8];
    cfg->devarch = src->regs.devarch;
    cfg->trace_id = src->trace_id;
    cfg->ete = src->protocol == TK_CS_PROTO_ETE;
    if (src->core >= 0 && (size_t)src->core < ss->ncores)
        cfg->cortex_m = !strncasecmp(ss->cores[src->core].type, "Cortex-M", 8);
    tk_etm4_config_init(cfg);
}
