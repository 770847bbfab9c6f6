/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder fed from a stream in the general packet encapsulation (encap.h): the
 * te_inst packets of one source (srcID) of a trace funnel's output. */
#include <string.h>

#include "decoder_int.h"

/* Mapped pages already read are given back every this many bytes, as tk_te_decoder_run_raw
 * does: resident memory must not grow with the trace. */
#define RELEASE_STEP (8u << 20)

void tk_te_encap_stats_note(tk_te_encap_stats *st, uint16_t srcid)
{
    for (uint32_t i = 0; i < st->nsources && i < TK_TE_ENCAP_MAX_SOURCES; i++)
        if (st->sources[i] == srcid) {
            st->source_packets[i]++;
            return;
        }
    if (st->nsources < TK_TE_ENCAP_MAX_SOURCES) {
        st->sources[st->nsources] = srcid;
        st->source_packets[st->nsources] = 1;
    }
    st->nsources++;
}

tk_status tk_te_decoder_run_encap(tk_te_decoder *d, tk_te_raw *raw, const tk_encap_config *cfg,
                                  uint16_t srcid, tk_te_encap_stats *stats)
{
    if (!d || !raw || !cfg)
        return TK_ERR_INVALID;
    tk_te_encap_stats local = {0};
    tk_te_encap_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof(*st));
    st->size = sizeof(*st);
    tk_encap_reader *r = NULL;
    tk_status s = tk_encap_reader_alloc(&r, cfg, tk_te_raw_data(raw), (size_t)tk_te_raw_size(raw));
    if (s != TK_OK)
        return s;
    /* widths derived once; the options are read through &d->p, so support packets apply */
    tk_te_layout layout;
    tk_te_layout_init(&layout, &d->p);
    tk_status first = TK_OK;
    uint64_t released = 0;
    bool cut = false; /* a packet ran past the end of the stream */
    for (;;) {
        tk_encap_packet p;
        tk_diag diag;
        tk_diag_clear(&diag);
        s = tk_encap_reader_next(r, &p, &diag);
        if (s == TK_END) {
            s = TK_OK;
            break;
        }
        tk_status bad = TK_OK;
        uint64_t off = 0, index = 0;
        const bool cut_here = s == TK_ERR_TRUNCATED; /* by the reader: the stream ended */
        if (s != TK_OK) {
            bad = s;
            off = diag.byte_offset;
            index = diag.packet_index;
        } else {
            tk_te_encap_stats_note(st, p.srcid);
            /* Instruction trace is type 0 (e-trace-specifics.adoc; no type field: all of it).
             * flow only routes packets to sinks: the reference flow's raw files use it as
             * the message type, but this is the general encapsulation. */
            if (p.srcid != srcid || p.type != 0) {
                st->other_packets++; /* another hart's, or data trace */
                continue;
            }
            tk_te_packet pkt;
            if ((bad = tk_te_packet_decode_layout(&layout, p.payload, p.payload_len, &pkt,
                                                  &diag)) == TK_OK) {
                st->packets++;
                if ((s = tk_te_decoder_packet(d, &pkt, p.offset, p.index)) != TK_OK)
                    break;
            }
            off = p.offset;
            index = p.index;
        }
        if (cut_here && cut) {
            /* Bytes after a truncated packet, read again in case its header was a misread
             * byte: more packets cut by the end are the same damage, reported once. */
            if ((s = tk_encap_reader_sync_set(r, off + 1)) != TK_OK)
                break;
            continue;
        }
        cut |= cut_here;
        if (bad != TK_OK) {
            st->damaged++;
            if (first == TK_OK)
                first = bad;
            if ((s = tk_dec_damaged(d, bad, off, index, tk_dec_what_of(diag.message))) != TK_OK)
                break;
            /* Read on rather than skip to the next sync sequence: a damaged payload leaves the
             * framing right, and a misread framing realigns inside the next sync sequence
             * anyway, since no packet is longer than one (docs/robustness.md, encap-keep).
             * A truncated packet moved the reader to the end; its header may be a misread
             * byte in mid-stream. */
            if (cut_here && (s = tk_encap_reader_sync_set(r, off + 1)) != TK_OK)
                break;
        }
        if (off - released >= RELEASE_STEP) {
            tk_te_raw_release(raw, off);
            released = off;
        }
    }
    tk_encap_reader_free(r);
    if (s != TK_OK)
        return s;
    if (tk_dec_flush_blocks(d) != TK_OK)
        return d->stop;
    return first;
}
