/* SPDX-License-Identifier: BSD-2-Clause */
/* Writer of the RISC-V trace packet encapsulation (spec/encap, chapter 2). */
#include "tracekit/encap.h"

#include <string.h>

#include "util/bitbuf.h"

uint8_t tk_encap_null(bool alignment, uint8_t flow)
{
    return (uint8_t)(((flow & 3u) << 5) | (alignment ? 0x80u : 0u));
}

size_t tk_encap_write_sync(const tk_encap_config *cfg, uint8_t *out, size_t cap)
{
    size_t n = (size_t)tk_encap_sync_run(cfg) + 1;
    if (!out || cap < n)
        return 0;
    memset(out, tk_encap_null(false, 0), n - 1);
    out[n - 1] = tk_encap_null(true, 0); /* marks the byte boundary on unframed streams */
    return n;
}

tk_status tk_encap_write(const tk_encap_config *cfg, const tk_encap_fields *f,
                         const uint8_t *payload, size_t len, uint8_t *out, size_t cap,
                         size_t *written)
{
    if (!cfg || !f || !payload || !out || len == 0 || f->flow > 3)
        return TK_ERR_INVALID;
    if (tk_encap_config_validate(cfg, NULL) != TK_OK)
        return TK_ERR_CONFIG;
    if (f->extend && cfg->timestamp_bytes == 0)
        return TK_ERR_INVALID;
    if (cfg->srcid_bits < 16 && (f->srcid >> cfg->srcid_bits))
        return TK_ERR_INVALID;
    if (cfg->type_bits < 32 && (f->type >> cfg->type_bits))
        return TK_ERR_INVALID;
    unsigned tbits = f->extend ? 8 * cfg->timestamp_bytes : 0;
    if (tbits && tbits < 64 && (f->timestamp >> tbits))
        return TK_ERR_INVALID;
    /* header.length counts the srcID bits beyond whole bytes, the type and the payload */
    size_t bits = cfg->srcid_bits % 8 + cfg->type_bits + 8 * len;
    size_t length = (bits + 7) / 8;
    if (length > TK_ENCAP_MAX_LENGTH)
        return TK_ERR_OVERFLOW;
    size_t total = 1 + cfg->srcid_bits / 8 + tbits / 8 + length;
    if (total > cap)
        return TK_ERR_OVERFLOW;
    out[0] = (uint8_t)(length | ((unsigned)f->flow << 5) | (f->extend ? 0x80u : 0u));
    if (cfg->srcid_bits == 0 && cfg->type_bits == 0) {
        for (unsigned i = 0; i < tbits / 8; i++)
            out[1 + i] = (uint8_t)(f->timestamp >> (8 * i));
        memcpy(out + 1 + tbits / 8, payload, len);
    } else {
        tk_bitw w;
        tk_bitw_init(&w);
        tk_bitw_put(&w, f->srcid, cfg->srcid_bits);
        tk_bitw_put(&w, f->timestamp, tbits);
        tk_bitw_put(&w, f->type, cfg->type_bits);
        for (size_t i = 0; i < len; i++)
            tk_bitw_put(&w, payload[i], 8);
        /* zero padding up to the packet end: nothing leaks (encapsulation.adoc) */
        if (tk_bitw_bytes(&w, out + 1, cap - 1) == 0 && w.pos)
            return TK_ERR_OVERFLOW;
        size_t have = (w.pos + 7) / 8;
        memset(out + 1 + have, 0, total - 1 - have);
    }
    if (written)
        *written = total;
    return TK_OK;
}
