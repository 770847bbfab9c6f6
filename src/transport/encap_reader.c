/* SPDX-License-Identifier: BSD-2-Clause */
/* Zero-copy reader of the RISC-V trace packet encapsulation (spec/encap, chapter 2). */
#include "tracekit/encap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/bitbuf.h"

struct tk_encap_reader {
    tk_encap_config cfg;
    const uint8_t *buf;
    size_t len;
    size_t pos;
    uint64_t index;
    bool after_idle; /* the last packet read was a null.idle (cfg.unframed's check) */
    uint8_t scratch[TK_ENCAP_MAX_LENGTH + 1]; /* realigned payloads */
};

void tk_encap_config_init(tk_encap_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->size = sizeof(*cfg);
}

tk_status tk_encap_config_validate(const tk_encap_config *cfg, tk_diag *diag)
{
    if (!cfg)
        return tk_diag_set(diag, TK_ERR_INVALID, "encapsulation config is NULL");
    if (cfg->srcid_bits > 16)
        return tk_diag_set(diag, TK_ERR_CONFIG, "srcID of %u bits exceeds 16", cfg->srcid_bits);
    if (cfg->timestamp_bytes > 8)
        return tk_diag_set(diag, TK_ERR_CONFIG, "timestamp of %u bytes exceeds 8",
                           cfg->timestamp_bytes);
    if (cfg->type_bits > 8)
        return tk_diag_set(diag, TK_ERR_CONFIG, "type field of %u bits exceeds 8", cfg->type_bits);
    return TK_OK;
}

uint32_t tk_encap_sync_run(const tk_encap_config *cfg)
{
    return TK_ENCAP_MAX_LENGTH + cfg->timestamp_bytes + cfg->srcid_bits / 8;
}

tk_status tk_encap_reader_alloc(tk_encap_reader **out, const tk_encap_config *cfg,
                                const uint8_t *buf, size_t len)
{
    if (!out || !cfg || (!buf && len))
        return TK_ERR_INVALID;
    *out = NULL;
    if (tk_encap_config_validate(cfg, NULL) != TK_OK)
        return TK_ERR_CONFIG;
    tk_encap_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return TK_ERR_NOMEM;
    r->cfg = *cfg;
    r->buf = buf;
    r->len = len;
    *out = r;
    return TK_OK;
}

void tk_encap_reader_free(tk_encap_reader *r)
{
    free(r);
}

uint64_t tk_encap_reader_get_offset(const tk_encap_reader *r)
{
    return r ? r->pos : 0;
}

tk_status tk_encap_reader_sync_set(tk_encap_reader *r, uint64_t offset)
{
    if (!r || offset > r->len)
        return TK_ERR_INVALID;
    r->pos = (size_t)offset;
    r->after_idle = false;
    return TK_OK;
}

tk_status tk_encap_reader_sync_forward(tk_encap_reader *r)
{
    if (!r)
        return TK_ERR_INVALID;
    uint32_t need = tk_encap_sync_run(&r->cfg);
    uint32_t run = 0;
    for (size_t i = r->pos; i < r->len; i++) {
        if ((r->buf[i] & 0x1f) == 0) {
            run++;
        } else if (run >= need) {
            r->pos = i;
            r->after_idle = false;
            return TK_OK;
        } else {
            run = 0;
        }
    }
    r->pos = r->len;
    return TK_END;
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static tk_status
fail(tk_diag *diag, tk_status st, size_t off, uint64_t index, const char *fmt, ...)
{
    if (!diag)
        return st;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    tk_diag_set(diag, st, "offset %zu (packet %llu): %s", off, (unsigned long long)index, what);
    diag->byte_offset = off;
    diag->packet_index = index;
    return st;
}

tk_status tk_encap_reader_next(tk_encap_reader *r, tk_encap_packet *pkt, tk_diag *diag)
{
    if (!r || !pkt)
        return TK_ERR_INVALID;
    for (;;) {
        if (r->pos >= r->len)
            return TK_END;
        size_t off = r->pos;
        uint8_t h = r->buf[off];
        memset(pkt, 0, sizeof(*pkt));
        pkt->offset = off;
        pkt->index = r->index;
        pkt->length = h & 0x1f;
        pkt->flow = (h >> 5) & 3;
        pkt->extend = h >> 7;
        if (pkt->length == 0) { /* null.idle / null.alignment */
            r->pos++;
            r->after_idle = !pkt->extend;
            if (!r->cfg.report_nulls)
                continue;
            pkt->is_null = true;
            pkt->total_len = 1;
            return TK_OK;
        }
        size_t s_bytes = r->cfg.srcid_bits / 8;
        if (r->after_idle && r->cfg.unframed) {
            /* Not what an unframed stream's sender writes: the nulls are most likely bytes
             * zeroed or lost in the middle of packets, and this "header" a byte inside one.
             * Skipped as its length says; the next sync sequence realigns in any case. */
            r->after_idle = false;
            size_t skip = 1 + s_bytes + (pkt->extend ? r->cfg.timestamp_bytes : 0) + pkt->length;
            r->pos = skip > r->len - off ? r->len : off + skip;
            r->index++;
            return fail(diag, TK_ERR_BAD_PACKET, off, pkt->index,
                        "header 0x%02x follows a null.idle, but an unframed stream ends its "
                        "nulls with a null.alignment: zeroed or lost bytes? (skipped %zu bytes)",
                        h, (size_t)(r->pos - off));
        }
        r->after_idle = false;
        if (pkt->extend && r->cfg.timestamp_bytes == 0) {
            /* encapsulation.adoc: extend must be 0 if the timestamp width is 0 */
            r->pos = off + 1 + s_bytes + pkt->length;
            r->index++;
            if (r->pos > r->len)
                r->pos = r->len;
            return fail(diag, TK_ERR_BAD_PACKET, off, pkt->index,
                        "header 0x%02x has extend set but the stream has no timestamps "
                        "(skipped %zu bytes)",
                        h, 1 + s_bytes + pkt->length);
        }
        size_t t_bytes = pkt->extend ? r->cfg.timestamp_bytes : 0;
        size_t total = 1 + s_bytes + t_bytes + pkt->length;
        if (total > r->len - off) {
            r->pos = r->len;
            r->index++;
            return fail(diag, TK_ERR_TRUNCATED, off, pkt->index,
                        "header 0x%02x announces a %zu-byte packet but only %zu bytes remain "
                        "(truncated)",
                        h, total, r->len - off);
        }
        const uint8_t *p = r->buf + off;
        pkt->total_len = total;
        r->pos = off + total;
        r->index++;
        if (r->cfg.srcid_bits % 8 == 0 && r->cfg.type_bits == 0) {
            /* byte-aligned fast path: the reference raw format and most sinks (no srcID, or
             * the 8-bit one the spec recommends); fields little-endian, as tk_bitr reads them */
            uint16_t src = 0;
            for (size_t i = 0; i < s_bytes; i++)
                src |= (uint16_t)(p[1 + i] << (8 * i));
            uint64_t ts = 0;
            for (size_t i = 0; i < t_bytes; i++)
                ts |= (uint64_t)p[1 + s_bytes + i] << (8 * i);
            pkt->srcid = src;
            pkt->timestamp = ts;
            pkt->payload = p + 1 + s_bytes + t_bytes;
            pkt->payload_len = pkt->length;
            return TK_OK;
        }
        tk_bitr br;
        tk_bitr_init(&br, p, total);
        br.pos = 8;
        pkt->srcid = (uint16_t)tk_bitr_get(&br, r->cfg.srcid_bits);
        pkt->timestamp = tk_bitr_get(&br, (unsigned)(8 * t_bytes));
        pkt->type = (uint32_t)tk_bitr_get(&br, r->cfg.type_bits);
        size_t start = br.pos;
        /* a length too short for the srcID remainder and type leaves no payload */
        size_t nbytes = 8 * total > start ? (8 * total - start) / 8 : 0;
        if (nbytes == 0)
            return fail(diag, TK_ERR_BAD_PACKET, off, pkt->index,
                        "header 0x%02x: length %u leaves no payload byte after the %u-bit type", h,
                        pkt->length, r->cfg.type_bits);
        pkt->payload_len = nbytes;
        if (start % 8 == 0) {
            pkt->payload = p + start / 8;
        } else {
            for (size_t i = 0; i < nbytes; i++)
                r->scratch[i] = (uint8_t)tk_bitr_get(&br, 8);
            pkt->payload = r->scratch;
        }
        return TK_OK;
    }
}
