/* SPDX-License-Identifier: BSD-2-Clause */
/* E-Trace flow decoder fed from a stream in the general packet encapsulation (encap.h): the
 * te_inst packets of one source (srcID) of a trace funnel's output. */
#include <string.h>

#include "decoder_int.h"

/* Mapped pages already read are given back every this many bytes, as tk_te_decoder_run_raw
 * does: resident memory must not grow with the trace. */
#define RELEASE_STEP (8u << 20)

static void note_source(tk_te_encap_stats *st, uint16_t srcid)
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

tk_status tk_te_encap_next(tk_encap_reader *r, uint32_t srcid, tk_te_encap_stats *st,
                           tk_encap_packet *pkt, tk_diag *diag)
{
    if (!r || !st || !pkt || !diag || (srcid > 0xffff && srcid != TK_TE_ENCAP_ALL_SOURCES))
        return TK_ERR_INVALID;
    for (;;) {
        tk_status s = tk_encap_reader_next(r, pkt, diag);
        if (s == TK_ERR_TRUNCATED) {
            /* The reader moved to the end; the header may be a misread byte in mid-stream,
             * so the bytes after it are read again. Packets those cut too are the same
             * damage, reported once. */
            if (tk_encap_reader_sync_set(r, diag->byte_offset + 1) != TK_OK)
                return TK_ERR_INVALID;
            if (st->truncated++)
                continue;
        }
        if (s != TK_OK)
            return s;
        note_source(st, pkt->srcid);
        if (srcid == TK_TE_ENCAP_ALL_SOURCES || pkt->srcid == srcid)
            return TK_OK;
        st->other_packets++; /* another hart's */
    }
}

tk_status tk_te_decoder_run_encap(tk_te_decoder *d, tk_te_raw *raw, const tk_encap_config *cfg,
                                  uint32_t srcid, tk_te_encap_stats *stats)
{
    if (!d || !raw || !cfg || srcid > 0xffff)
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
    for (;;) {
        tk_encap_packet p;
        tk_diag diag;
        tk_diag_clear(&diag);
        s = tk_te_encap_next(r, srcid, st, &p, &diag);
        if (s == TK_END) {
            s = TK_OK;
            break;
        }
        tk_status bad = s;
        uint64_t off = diag.byte_offset, index = diag.packet_index;
        if (s == TK_OK) {
            /* Instruction trace is type 0 (e-trace-specifics.adoc; no type field: all of it).
             * flow only routes packets to sinks: the reference flow's raw files use it as
             * the message type, but this is the general encapsulation. */
            if (p.type != 0) {
                st->other_packets++; /* data trace */
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
        if (bad != TK_OK) {
            /* Read on rather than skip to the next sync sequence: a damaged payload leaves the
             * framing right, and a misread framing realigns inside the next sync sequence
             * anyway, since no packet is longer than one (docs/robustness.md, encap-keep). */
            st->damaged++;
            if (first == TK_OK)
                first = bad;
            if ((s = tk_dec_damaged(d, bad, off, index, tk_dec_what_of(diag.message))) != TK_OK)
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
