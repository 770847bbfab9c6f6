/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder fed from a reference .te_inst_raw stream, and spike's reset code
 * that the reference flow's traces start in (VERSIONS.md C.4, C.6). */
#include <stdio.h>
#include <string.h>

#include "decoder_int.h"

/* The reader's messages read "[file: ]offset N (packet K): what"; events carry offset and
 * index themselves, so keep only "what". */
static const char *what_of(const char *msg)
{
    const char *p = strstr(msg, "(packet ");
    if (p && (p = strstr(p, "): ")))
        return p + 3;
    return msg;
}

static tk_status damaged(tk_te_decoder *d, tk_status status, uint64_t offset, uint64_t index,
                         const char *msg)
{
    d->byte_offset = offset;
    d->packet_index = index;
    /* Messages longer than the buffer are cut on purpose; they are one-line diagnostics. */
    size_t n = strlen(msg);
    if (n >= sizeof(d->msg))
        n = sizeof(d->msg) - 1;
    memcpy(d->msg, msg, n);
    d->msg[n] = '\0';
    d->stats.errors++;
    tk_event ev = {.kind = TK_EV_ERROR, .status = status, .message = d->msg, .first = d->pc};
    tk_status st = tk_dec_emit(d, &ev);
    if (st != TK_OK)
        return d->stop;
    return tk_te_decoder_lost(d, offset, index);
}

tk_status tk_te_decoder_run_raw(tk_te_decoder *d, tk_te_raw *raw)
{
    if (!d || !raw)
        return TK_ERR_INVALID;
    tk_status first = TK_OK;
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status s = tk_te_raw_next(raw, &rp, &diag);
        if (s == TK_END)
            return first;
        tk_status bad = TK_OK;
        if (s != TK_OK) {
            bad = s;
            s = damaged(d, s, diag.byte_offset, diag.packet_index, what_of(diag.message));
        } else if (rp.msg_type != TK_ENCAP_FLOW_TE_INST) {
            char msg[96];
            snprintf(msg, sizeof(msg), "bad packet header: message type %u, not te_inst (2)",
                     rp.msg_type);
            bad = TK_ERR_BAD_PACKET;
            s = damaged(d, bad, rp.offset, rp.index, msg);
        } else {
            tk_te_packet pkt;
            s = tk_te_packet_decode(&d->p, rp.payload, rp.len, &pkt, &diag);
            if (s == TK_OK) {
                s = tk_te_decoder_packet(d, &pkt, rp.offset, rp.index);
            } else {
                bad = s;
                s = damaged(d, s, rp.offset, rp.index,
                            diag.message[0] ? diag.message : tk_strerror(s));
            }
        }
        if (s != TK_OK)
            return s;
        if (bad != TK_OK && first == TK_OK)
            first = bad;
        if (bad == TK_ERR_TRUNCATED)
            return first; /* nothing follows a truncated packet */
    }
}

tk_status tk_te_add_spike_reset_code(tk_image *img, bool rv32)
{
    const uint32_t code[5] = {0x00000297, 0x02028593, 0xf1402573, rv32 ? 0x0182a283 : 0x0182b283,
                              0x00028067};
    uint8_t bytes[sizeof(code)];
    uint8_t probe;
    if (!img)
        return TK_ERR_INVALID;
    if (tk_image_read(img, 0x1000, &probe, 1) == TK_OK)
        return TK_OK;
    for (size_t i = 0; i < 5; i++)
        for (size_t b = 0; b < 4; b++)
            bytes[i * 4 + b] = (uint8_t)(code[i] >> (8 * b));
    return tk_image_add_region(img, 0x1000, bytes, sizeof(bytes));
}
