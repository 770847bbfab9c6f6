/* SPDX-License-Identifier: BSD-2-Clause */
/* Names and one-line text of ETMv4 packets (for `tracekit dump`). The field names are
 * tracekit's own; the packet names follow the I_* names used across ETMv4 tools. */
#include <stdio.h>
#include <string.h>

#include "tracekit/etm4.h"
#include "util/hex.h"

static const char *const names[TK_ETM4_PKT_TYPE_COUNT] = {
    [TK_ETM4_NOT_SYNC] = "I_NOT_SYNC",
    [TK_ETM4_INCOMPLETE_EOT] = "I_INCOMPLETE_EOT",
    [TK_ETM4_BAD_SEQUENCE] = "I_BAD_SEQUENCE",
    [TK_ETM4_RESERVED] = "I_RESERVED",
    [TK_ETM4_RESERVED_CFG] = "I_RESERVED_CFG",
    [TK_ETM4_EXTENSION] = "I_EXTENSION",
    [TK_ETM4_ASYNC] = "I_ASYNC",
    [TK_ETM4_DISCARD] = "I_DISCARD",
    [TK_ETM4_OVERFLOW] = "I_OVERFLOW",
    [TK_ETM4_TRACE_INFO] = "I_TRACE_INFO",
    [TK_ETM4_TIMESTAMP] = "I_TIMESTAMP",
    [TK_ETM4_TRACE_ON] = "I_TRACE_ON",
    [TK_ETM4_FUNC_RET] = "I_FUNC_RET",
    [TK_ETM4_EXCEPT] = "I_EXCEPT",
    [TK_ETM4_EXCEPT_RTN] = "I_EXCEPT_RTN",
    [TK_ETM4_CCNT_F1] = "I_CCNT_F1",
    [TK_ETM4_CCNT_F2] = "I_CCNT_F2",
    [TK_ETM4_CCNT_F3] = "I_CCNT_F3",
    [TK_ETM4_NUM_DS_MKR] = "I_NUM_DS_MKR",
    [TK_ETM4_UNNUM_DS_MKR] = "I_UNNUM_DS_MKR",
    [TK_ETM4_COMMIT] = "I_COMMIT",
    [TK_ETM4_CANCEL_F1] = "I_CANCEL_F1",
    [TK_ETM4_CANCEL_F1_MISPRED] = "I_CANCEL_F1_MISPRED",
    [TK_ETM4_MISPREDICT] = "I_MISPREDICT",
    [TK_ETM4_CANCEL_F2] = "I_CANCEL_F2",
    [TK_ETM4_CANCEL_F3] = "I_CANCEL_F3",
    [TK_ETM4_COND_I_F1] = "I_COND_I_F1",
    [TK_ETM4_COND_I_F2] = "I_COND_I_F2",
    [TK_ETM4_COND_I_F3] = "I_COND_I_F3",
    [TK_ETM4_COND_FLUSH] = "I_COND_FLUSH",
    [TK_ETM4_COND_RES_F1] = "I_COND_RES_F1",
    [TK_ETM4_COND_RES_F2] = "I_COND_RES_F2",
    [TK_ETM4_COND_RES_F3] = "I_COND_RES_F3",
    [TK_ETM4_COND_RES_F4] = "I_COND_RES_F4",
    [TK_ETM4_IGNORE] = "I_IGNORE",
    [TK_ETM4_EVENT] = "I_EVENT",
    [TK_ETM4_CTXT] = "I_CTXT",
    [TK_ETM4_ADDR_CTXT_L_32IS0] = "I_ADDR_CTXT_L_32IS0",
    [TK_ETM4_ADDR_CTXT_L_32IS1] = "I_ADDR_CTXT_L_32IS1",
    [TK_ETM4_ADDR_CTXT_L_64IS0] = "I_ADDR_CTXT_L_64IS0",
    [TK_ETM4_ADDR_CTXT_L_64IS1] = "I_ADDR_CTXT_L_64IS1",
    [TK_ETM4_ADDR_MATCH] = "I_ADDR_MATCH",
    [TK_ETM4_ADDR_S_IS0] = "I_ADDR_S_IS0",
    [TK_ETM4_ADDR_S_IS1] = "I_ADDR_S_IS1",
    [TK_ETM4_ADDR_L_32IS0] = "I_ADDR_L_32IS0",
    [TK_ETM4_ADDR_L_32IS1] = "I_ADDR_L_32IS1",
    [TK_ETM4_ADDR_L_64IS0] = "I_ADDR_L_64IS0",
    [TK_ETM4_ADDR_L_64IS1] = "I_ADDR_L_64IS1",
    [TK_ETM4_Q] = "I_Q",
    [TK_ETM4_ATOM_F1] = "I_ATOM_F1",
    [TK_ETM4_ATOM_F2] = "I_ATOM_F2",
    [TK_ETM4_ATOM_F3] = "I_ATOM_F3",
    [TK_ETM4_ATOM_F4] = "I_ATOM_F4",
    [TK_ETM4_ATOM_F5] = "I_ATOM_F5",
    [TK_ETM4_ATOM_F6] = "I_ATOM_F6",
    [TK_ETM4_ITE] = "I_ITE",
    [TK_ETM4_TRANS_ST] = "I_TRANS_ST",
    [TK_ETM4_TRANS_COMMIT] = "I_TRANS_COMMIT",
    [TK_ETM4_TRANS_FAIL] = "I_TRANS_FAIL",
    [TK_ETM4_PE_RESET] = "I_PE_RESET",
    [TK_ETM4_TS_MARKER] = "I_TS_MARKER",
    [TK_ETM4_SRC_ADDR_MATCH] = "I_SRC_ADDR_MATCH",
    [TK_ETM4_SRC_ADDR_S_IS0] = "I_SRC_ADDR_S_IS0",
    [TK_ETM4_SRC_ADDR_S_IS1] = "I_SRC_ADDR_S_IS1",
    [TK_ETM4_SRC_ADDR_L_32IS0] = "I_SRC_ADDR_L_32IS0",
    [TK_ETM4_SRC_ADDR_L_32IS1] = "I_SRC_ADDR_L_32IS1",
    [TK_ETM4_SRC_ADDR_L_64IS0] = "I_SRC_ADDR_L_64IS0",
    [TK_ETM4_SRC_ADDR_L_64IS1] = "I_SRC_ADDR_L_64IS1",
};

const char *tk_etm4_pkt_name(tk_etm4_pkt_type type)
{
    return (unsigned)type < TK_ETM4_PKT_TYPE_COUNT && names[type] ? names[type] : "I_UNKNOWN";
}

/* Append to buf at *pos, never past size. */
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int w_ = snprintf(buf + pos, pos < size ? size - pos : 0, __VA_ARGS__);                    \
        if (w_ > 0)                                                                                \
            pos += (size_t)w_;                                                                     \
    } while (0)

static size_t put_ctx(char *buf, size_t size, size_t pos, const tk_etm4_packet *p)
{
    if (!p->ctx_updated) {
        PUT(" ctx=same");
        return pos;
    }
    PUT(" el=%u %s %s", p->ctx.el, p->ctx.ns ? "ns" : "s", p->ctx.sf ? "aarch64" : "aarch32");
    if (p->ctx.has_vmid)
        PUT(" vmid=0x%x", p->ctx.vmid);
    if (p->ctx.has_cid)
        PUT(" cid=0x%x", p->ctx.cid);
    return pos;
}

static int format_general(const tk_etm4_packet *p, char *buf, size_t size);

/* The packets that make up nearly all of a listing (atoms, exact-match, short and long
 * addresses), written without snprintf, whose format parsing was most of `tracekit dump`'s
 * time; format_general below writes the others. buf has room for the longest of them (96
 * bytes: tk_put_hex stores 8 bytes at a time). Returns the length, or -1 for a packet this
 * does not write. */
static int format_common(const tk_etm4_packet *p, char *buf)
{
    const char *name = tk_etm4_pkt_name((tk_etm4_pkt_type)p->type);
    const size_t nlen = strlen(name);
    char *q = buf;
    switch (p->type) {
    case TK_ETM4_ATOM_F1:
    case TK_ETM4_ATOM_F2:
    case TK_ETM4_ATOM_F3:
    case TK_ETM4_ATOM_F4:
    case TK_ETM4_ATOM_F5:
    case TK_ETM4_ATOM_F6:
        memcpy(q, name, nlen);
        memcpy(q + nlen, " atoms=", 7);
        q += nlen + 7;
        /* (atoms holds 32: a made-up packet with more, none the parser makes, shows 32) */
        for (unsigned i = 0; i < p->atom_num && i < 32; i++)
            *q++ = (p->atoms >> i) & 1 ? 'E' : 'N';
        break;
    case TK_ETM4_ADDR_S_IS0:
    case TK_ETM4_ADDR_S_IS1:
    case TK_ETM4_ADDR_L_32IS0:
    case TK_ETM4_ADDR_L_32IS1:
    case TK_ETM4_ADDR_L_64IS0:
    case TK_ETM4_ADDR_L_64IS1:
        memcpy(q, name, nlen);
        memcpy(q + nlen, " addr=0x", 8);
        q = tk_put_hex(q + nlen + 8, p->addr);
        memcpy(q, " bits=", 6);
        q = tk_put_dec(q + 6, p->addr_bits);
        break;
    case TK_ETM4_ADDR_MATCH:
        memcpy(q, name, nlen);
        memcpy(q + nlen, " match=", 7);
        q = tk_put_dec(q + nlen + 7, p->match_idx);
        memcpy(q, " addr=0x", 8);
        q = tk_put_hex(q + 8, p->addr);
        break;
    default:
        return -1;
    }
    *q = 0;
    return (int)(q - buf);
}

int tk_etm4_pkt_format(const tk_etm4_packet *p, char *buf, size_t size)
{
    if (size >= 96) {
        const int n = format_common(p, buf);
        return n >= 0 ? n : format_general(p, buf, size);
    }
    char tmp[96];
    const int n = format_common(p, tmp);
    if (n < 0)
        return format_general(p, buf, size);
    if (size) { /* as snprintf: as much as fits, and the whole length */
        const size_t k = (size_t)n < size ? (size_t)n : size - 1;
        memcpy(buf, tmp, k);
        buf[k] = 0;
    }
    return n;
}

static int format_general(const tk_etm4_packet *p, char *buf, size_t size)
{
    size_t pos = 0;
    if (size)
        buf[0] = 0;
    PUT("%s", tk_etm4_pkt_name((tk_etm4_pkt_type)p->type));
    switch (p->type) {
    case TK_ETM4_BAD_SEQUENCE:
    case TK_ETM4_INCOMPLETE_EOT:
    case TK_ETM4_RESERVED:
    case TK_ETM4_RESERVED_CFG:
        PUT(" err=%s hdr=0x%02x", tk_etm4_pkt_name((tk_etm4_pkt_type)p->err_type), p->header);
        break;
    case TK_ETM4_TRACE_INFO:
        PUT(" info=0x%x", p->info);
        if (p->info_sections & 2)
            PUT(" key=0x%x", p->p0_key);
        if (p->info_sections & 4)
            PUT(" spec=%u", p->spec_depth);
        if (p->info_sections & 8)
            PUT(" cc_threshold=0x%x", p->cc_threshold);
        break;
    case TK_ETM4_TIMESTAMP:
        PUT(" ts=0x%llx bits=%u", (unsigned long long)p->timestamp, p->ts_bits);
        if (p->has_cc)
            PUT(" cc=0x%x", p->cc);
        break;
    case TK_ETM4_EXCEPT:
        PUT(" type=0x%x addr_interp=%u", p->exc_type, p->exc_addr_interp);
        if (p->exc_fault_pending)
            PUT(" fault_pending");
        break;
    case TK_ETM4_CCNT_F1:
    case TK_ETM4_CCNT_F2:
    case TK_ETM4_CCNT_F3:
        PUT(" count=0x%x", p->cc);
        if (p->has_commit)
            PUT(" commit=%u", p->commit);
        break;
    case TK_ETM4_COMMIT:
        PUT(" commit=%u", p->commit);
        break;
    case TK_ETM4_CANCEL_F1:
    case TK_ETM4_CANCEL_F1_MISPRED:
    case TK_ETM4_CANCEL_F2:
    case TK_ETM4_CANCEL_F3:
    case TK_ETM4_MISPREDICT:
        if (p->type != TK_ETM4_MISPREDICT)
            PUT(" cancel=%u", p->cancel);
        if (p->atom_num) {
            PUT(" atoms=");
            for (unsigned i = 0; i < p->atom_num && i < 32; i++)
                PUT("%c", (p->atoms >> i) & 1 ? 'E' : 'N');
        }
        break;
    case TK_ETM4_CTXT:
        pos = put_ctx(buf, size, pos, p);
        break;
    case TK_ETM4_ADDR_CTXT_L_32IS0:
    case TK_ETM4_ADDR_CTXT_L_32IS1:
    case TK_ETM4_ADDR_CTXT_L_64IS0:
    case TK_ETM4_ADDR_CTXT_L_64IS1:
        PUT(" addr=0x%llx", (unsigned long long)p->addr);
        pos = put_ctx(buf, size, pos, p);
        break;
    case TK_ETM4_SRC_ADDR_MATCH:
        PUT(" match=%u addr=0x%llx", p->match_idx, (unsigned long long)p->addr);
        break;
    case TK_ETM4_SRC_ADDR_S_IS0:
    case TK_ETM4_SRC_ADDR_S_IS1:
    case TK_ETM4_SRC_ADDR_L_32IS0:
    case TK_ETM4_SRC_ADDR_L_32IS1:
    case TK_ETM4_SRC_ADDR_L_64IS0:
    case TK_ETM4_SRC_ADDR_L_64IS1:
        PUT(" addr=0x%llx bits=%u", (unsigned long long)p->addr, p->addr_bits);
        break;
    case TK_ETM4_TRANS_FAIL:
    case TK_ETM4_PE_RESET:
        PUT(" type=0x%x addr_interp=%u", p->exc_type, p->exc_addr_interp);
        break;
    case TK_ETM4_ITE:
        PUT(" el=%u value=0x%llx", p->value, (unsigned long long)p->ite_value);
        break;
    case TK_ETM4_Q:
        PUT(" qtype=0x%x", p->q_type);
        if (p->q_has_count)
            PUT(" count=%u", p->q_count);
        if (p->q_type <= 2 || p->q_type == 5 || p->q_type == 6 || p->q_type == 0xa ||
            p->q_type == 0xb)
            PUT(" addr=0x%llx", (unsigned long long)p->addr);
        break;
    case TK_ETM4_EVENT:
        PUT(" event=0x%x", p->value);
        break;
    case TK_ETM4_NUM_DS_MKR:
    case TK_ETM4_UNNUM_DS_MKR:
    case TK_ETM4_COND_I_F2:
    case TK_ETM4_COND_I_F3:
    case TK_ETM4_COND_RES_F2:
    case TK_ETM4_COND_RES_F3:
    case TK_ETM4_COND_RES_F4:
        PUT(" value=0x%x", p->value);
        break;
    default:
        break;
    }
    return (int)pos;
}
