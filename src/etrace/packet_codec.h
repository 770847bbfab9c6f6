/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals shared by the te_inst layouts of each spec version (packet.c, packet_draft.c). */
#ifndef TK_ETRACE_PACKET_CODEC_H
#define TK_ETRACE_PACKET_CODEC_H

#include "etrace/packet_layout.h"
#include "util/bitbuf.h"

typedef struct tk_te_enc {
    tk_bitw b;
    tk_te_widths w;
    const char *why; /* first problem found: a field that does not fit, or a reason */
} tk_te_enc;

/* Append a field of n bits, noting it in e->why if the value does not fit. A zero-width
 * field is absent from the packet and its value is ignored. */
void tk_te_put(tk_te_enc *e, const char *name, uint64_t v, unsigned n);
/* address[AW], notify, updiscon, irreport (each XORed with the bit before), irdepth[D]. */
void tk_te_put_address_tail(tk_te_enc *e, const tk_te_packet *pkt);
static inline void tk_te_get_address_tail(tk_bitr *r, const tk_te_widths *w, tk_te_packet *out)
{
    out->address = tk_bitr_get(r, w->aw);
    out->has_address = true;
    unsigned msb = w->aw ? (unsigned)(out->address >> (w->aw - 1)) & 1u : 0u;
    unsigned bits = (unsigned)tk_bitr_get(r, 3); /* notify, updiscon, irreport on the wire */
    unsigned notify = bits & 1u, updiscon = (bits >> 1) & 1u, irreport = (bits >> 2) & 1u;
    out->notify = notify != msb;
    out->updiscon = updiscon != notify;
    out->irreport = irreport != updiscon;
    out->irdepth = tk_bitr_get(r, w->d);
}

tk_status tk_te_encode_029(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e);
tk_status tk_te_decode_029(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag);
tk_status tk_te_encode_026(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e);
tk_status tk_te_decode_026(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag);

#endif
