/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder fed from a reference .te_inst_raw stream, and spike's reset code
 * that the reference flow's traces start in (VERSIONS.md C.4, C.6). */
#include <stdio.h>
#include <string.h>

#include "decoder_int.h"
#include "util/compiler.h"

/* The reader's messages read "[file: ]offset N (packet K): what"; events carry offset and
 * index themselves, so keep only "what". */
const char *tk_dec_what_of(const char *msg)
{
    const char *p = strstr(msg, "(packet ");
    if (p && (p = strstr(p, "): ")))
        return p + 3;
    return msg;
}

tk_status tk_dec_damaged(tk_te_decoder *d, tk_status status, uint64_t offset, uint64_t index,
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

/* The records' loop: formats 1 and 2 are nearly every packet. */
/* Packets per batch from the scanner: each batch costs the scanner's and this loop's set-up
 * (about 100 instructions); the arrays take 152 bytes a packet of the stack. */
enum { RUN_BATCH = 128 };

/* Resident memory must not grow with the trace: mapped pages already read are given back
 * every this many bytes (tk_te_raw_release). */
#define RELEASE_STEP (8u << 20)

/* The packets of s into d. Returns TK_OK at the end of the data, with the status of the
 * first damaged packet in *first, or the status that stopped decoding. */
static tk_status run_scan(tk_te_decoder *d, tk_te_scan *s, tk_te_raw *raw, uint64_t *packets,
                          tk_status *first)
{
    size_t released = s->pos;
    tk_te_packet pk[RUN_BATCH];
    tk_te_rec rec[RUN_BATCH];
    uint64_t off[RUN_BATCH];
    for (;;) {
        /* hot path: batches from the zero-copy scanner (packet_scan.c) */
        size_t n;
        for (;;) {
            if (d->p.o.branch_prediction || d->p.o.jump_target_cache) {
                /* format 0 packets are likely: whole structs */
                if ((n = tk_te_scan_batch(s, pk, off, RUN_BATCH)) == 0)
                    break;
                const uint64_t idx0 = s->next_index - n;
                *packets += n;
                for (size_t i = 0; i < n; i++) {
                    tk_status st = tk_te_decoder_packet(d, &pk[i], off[i], idx0 + i);
                    if (st != TK_OK)
                        return st;
                }
            } else {
                /* compact records: formats 1 and 2 go to the decoder as they are, format 3
                 * as the whole packet the scanner gives with them. Format 0 (a damaged
                 * trace, or options the decoder was not told about) is not in the records'
                 * contract: the scanner goes back to it and decodes it whole. */
                if ((n = tk_te_scan_records(s, rec, pk, off, RUN_BATCH)) == 0)
                    break;
                const uint64_t idx0 = s->next_index - n;
                for (size_t i = 0; i < n; i++) {
                    const unsigned f = rec[i].format;
                    tk_status st;
                    /* formats 1 and 2 (nearly every packet) with one test */
                    if (TK_LIKELY(f - TK_TE_F1 <= TK_TE_F2 - TK_TE_F1)) {
                        st = tk_dec_packet_rec(d, &rec[i], off[i], idx0 + i);
                    } else if (f == TK_TE_F3) {
                        /* the index hidden from the loop: otherwise a pointer into pk is
                         * kept and advanced for every packet, for one in 17 */
                        size_t k = i;
#if defined(__GNUC__)
                        __asm__("" : "+r"(k));
#endif
                        st = tk_te_decoder_packet(d, &pk[k], off[i], idx0 + i);
                    } else {
                        tk_te_scan_seek(s, (size_t)off[i], idx0 + i);
                        n = i;
                        break;
                    }
                    if (st != TK_OK) {
                        *packets += i + 1;
                        return st;
                    }
                }
                *packets += n;
            }
            if (n == 0)
                break; /* a format 0 packet at s->pos: tk_te_scan_next */
            if (raw && s->pos - released >= RELEASE_STEP) {
                tk_te_raw_release(raw, off[0]);
                released = off[0];
            }
        }
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status s1 = tk_te_scan_next(s, &pk[0], &diag);
        if (s1 == TK_END)
            return TK_OK;
        if (s1 == TK_OK) {
            ++*packets;
            if ((s1 = tk_te_decoder_packet(d, &pk[0], s->offset, s->index)) != TK_OK)
                return s1;
            continue;
        }
        tk_status st = tk_dec_damaged(d, s1, s->offset, s->index, tk_dec_what_of(diag.message));
        if (st != TK_OK)
            return st;
        if (*first == TK_OK)
            *first = s1;
        if (s1 == TK_ERR_TRUNCATED)
            return TK_OK; /* nothing follows a truncated packet */
    }
}

tk_status tk_dec_run_scan(tk_te_decoder *d, tk_te_scan *s, tk_te_raw *raw, uint64_t *packets)
{
    tk_status first = TK_OK;
    tk_status st = run_scan(d, s, raw, packets, &first);
    if (st != TK_OK)
        return st;
    /* the end of the data: the blocks collected go to the callback now */
    if (tk_dec_flush_blocks(d) != TK_OK)
        return d->stop;
    return first;
}

tk_status tk_te_decoder_run_raw(tk_te_decoder *d, tk_te_raw *raw)
{
    if (!d || !raw)
        return TK_ERR_INVALID;
    tk_te_scan s;
    tk_te_scan_init(&s, &d->p, tk_te_raw_data(raw), (size_t)tk_te_raw_size(raw));
    uint64_t packets = 0;
    return tk_dec_run_scan(d, &s, raw, &packets);
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
