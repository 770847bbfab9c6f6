/* SPDX-License-Identifier: BSD-2-Clause */
/* Zero-copy scanner of the reference raw framing (VERSIONS.md C.6) with the te_inst codec
 * folded in. Away from the end of the buffer a packet costs one header test, two unaligned
 * loads and the specialised decoder of packet_fast.h; everything else (errors, the last 16
 * bytes, format 0, long payloads) takes the careful path, which gives the same results. */
#include "tracekit/te_packet.h"

#include <string.h>

#include "etrace/packet_fast.h"
#include "tracekit/encap.h"

void tk_te_scan_init(tk_te_scan *s, const tk_te_params *p, const uint8_t *buf, size_t len)
{
    memset(s, 0, sizeof(*s));
    tk_te_layout_init(&s->layout, p);
    s->buf = buf;
    s->len = buf ? len : 0;
}

void tk_te_scan_seek(tk_te_scan *s, size_t offset, uint64_t index)
{
    s->pos = offset < s->len ? offset : s->len;
    s->next_index = index;
}

static tk_status damaged(tk_te_scan *s, tk_diag *diag, tk_status st, size_t off, uint64_t index)
{
    s->offset = off;
    s->index = index;
    if (diag) {
        diag->byte_offset = off;
        diag->packet_index = index;
    }
    return st;
}

/* Framing errors are worded like the raw file reader's (te_raw.c, encap_reader.c). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static tk_status
slow_next(tk_te_scan *s, tk_te_packet *out, tk_diag *diag)
{
    const size_t off = s->pos;
    const uint64_t index = s->next_index;
    const uint8_t h = s->buf[off];
    const unsigned n = h & 0x1fu;
    if (n == 0) {
        /* the reference writes at least one payload byte; the packet index does not move */
        s->pos = off + 1;
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): header 0x%02x has length 0 (skipped 1 byte)", off,
                    (unsigned long long)index, h);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    s->next_index = index + 1;
    if (h & 0x80) {
        /* encapsulation.adoc: extend must be 0 when the stream has no timestamps */
        s->pos = off + 1 + n <= s->len ? off + 1 + n : s->len;
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): header 0x%02x has extend set but the stream has no "
                    "timestamps (skipped %u bytes)",
                    off, (unsigned long long)index, h, 1 + n);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    if (1 + n > s->len - off) {
        s->pos = s->len;
        tk_diag_set(diag, TK_ERR_TRUNCATED,
                    "offset %zu (packet %llu): header 0x%02x announces a %u-byte packet but only "
                    "%zu bytes remain (truncated)",
                    off, (unsigned long long)index, h, 1 + n, s->len - off);
        return damaged(s, diag, TK_ERR_TRUNCATED, off, index);
    }
    s->pos = off + 1 + n;
    s->offset = off;
    s->index = index;
    const unsigned msg_type = (h >> 5) & 3u;
    if (msg_type != TK_ENCAP_FLOW_TE_INST) {
        tk_diag_set(diag, TK_ERR_BAD_PACKET,
                    "offset %zu (packet %llu): bad packet header: message type %u, not te_inst "
                    "(2)",
                    off, (unsigned long long)index, msg_type);
        return damaged(s, diag, TK_ERR_BAD_PACKET, off, index);
    }
    tk_diag local;
    tk_diag_clear(&local);
    tk_status st = tk_te_packet_decode_layout(&s->layout, s->buf + off + 1, n, out, &local);
    if (st != TK_OK) {
        tk_diag_set(diag, st, "offset %zu (packet %llu): %s", off, (unsigned long long)index,
                    local.message[0] ? local.message : tk_strerror(st));
        return damaged(s, diag, st, off, index);
    }
    return TK_OK;
}

size_t tk_te_scan_batch(tk_te_scan *s, tk_te_packet *out, uint64_t *offsets, size_t max)
{
    if (!s->layout.fast)
        return 0;
    const uint8_t *const buf = s->buf;
    size_t pos = s->pos;
    /* every packet decoded here has 17 readable bytes from its header */
    const size_t end = s->len > TK_TE_FAST_MAX_LEN ? s->len - TK_TE_FAST_MAX_LEN : 0;
    size_t k = 0, last = pos;
    while (k < max && pos < end) {
        const uint8_t h = buf[pos];
        const unsigned n = h & 0x1fu;
        if ((h & 0xe0u) != (TK_ENCAP_FLOW_TE_INST << 5) || n - 1u >= TK_TE_FAST_MAX_LEN)
            break;
        const uint64_t lo = tk_te_fast_ld64(buf + pos + 1);
        int r;
        if (n <= 8 && ((unsigned)lo & 3u) - 1u < 2u) {
            /* the common case: format 1 or 2 in one register */
            const unsigned sh = 64 - 8 * n;
            r = tk_te_fast_f12_64(&s->layout, (int64_t)(lo << sh) >> sh, n, &out[k]);
        } else {
            r = tk_te_fast_decode(&s->layout, tk_te_fast_words_overread(buf + pos + 1, n), n,
                                  &out[k]);
        }
        if (r != TK_TE_FAST_OK)
            break;
        if (offsets)
            offsets[k] = pos;
        k++;
        last = pos;
        pos += 1 + n;
        /* A support packet can change the run-time options the codec reads (implicit
         * exception, F0 subformat inference): the caller applies it before the next. */
        if (out[k - 1].format == TK_TE_F3 && out[k - 1].subformat == TK_TE_SF_SUPPORT)
            break;
    }
    if (k) {
        s->offset = last;
        s->index = s->next_index + k - 1;
        s->next_index += k;
        s->pos = pos;
    }
    return k;
}

tk_status tk_te_scan_next(tk_te_scan *s, tk_te_packet *out, tk_diag *diag)
{
    const size_t pos = s->pos;
    if (pos >= s->len)
        return TK_END;
    /* 17 bytes readable from the header: the payload's two words can be loaded whole */
    if (s->layout.fast && s->len - pos >= 1 + TK_TE_FAST_MAX_LEN) {
        const uint8_t h = s->buf[pos];
        const unsigned n = h & 0x1fu;
        /* te_inst (flow 2, extend 0) with 1..16 payload bytes */
        if ((h & 0xe0u) == (TK_ENCAP_FLOW_TE_INST << 5) && n - 1u < TK_TE_FAST_MAX_LEN) {
            const tk_te_fast_word w = tk_te_fast_words_overread(s->buf + pos + 1, n);
            if (tk_te_fast_decode(&s->layout, w, n, out) == TK_TE_FAST_OK) {
                s->offset = pos;
                s->index = s->next_index++;
                s->pos = pos + 1 + n;
                return TK_OK;
            }
        }
    }
    return slow_next(s, out, diag);
}
