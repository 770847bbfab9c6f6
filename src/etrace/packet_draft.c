/* SPDX-License-Identifier: BSD-2-Clause */
/* te_inst layouts of the drafts v0.029 (seed 002) and v0.026 (seed 000), VERSIONS.md A. */
#include "etrace/packet_codec.h"

tk_status tk_te_encode_029(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    (void)p;
    (void)pkt;
    e->why = "the v0.029 layout is not implemented yet";
    return TK_ERR_UNSUPPORTED;
}

tk_status tk_te_decode_029(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag)
{
    (void)p, (void)r, (void)w, (void)out;
    return tk_diag_set(diag, TK_ERR_UNSUPPORTED, "the v0.029 layout is not implemented yet");
}

tk_status tk_te_encode_026(const tk_te_params *p, const tk_te_packet *pkt, tk_te_enc *e)
{
    (void)p;
    (void)pkt;
    e->why = "the v0.026 layout is not implemented yet";
    return TK_ERR_UNSUPPORTED;
}

tk_status tk_te_decode_026(const tk_te_params *p, tk_bitr *r, const tk_te_widths *w,
                           tk_te_packet *out, tk_diag *diag)
{
    (void)p, (void)r, (void)w, (void)out;
    return tk_diag_set(diag, TK_ERR_UNSUPPORTED, "the v0.026 layout is not implemented yet");
}
