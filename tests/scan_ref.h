/* SPDX-License-Identifier: BSD-2-Clause */
/* What the packet scanner (tk_te_scan_*) is compared with, shared by tests/codec/
 * test_packet_scan_paths.c and tests/speed/test_scan.c: every packet as the raw reader and the
 * generic bit-reader codec see it, and a scanner record turned back into a packet after
 * checking that it agrees with the whole packet the scanner gave beside it. Include after
 * testutil.h (cmocka), or define SCAN_REF_EQ(a, b) and SCAN_REF_TRUE(x) first (the fuzz
 * target fuzz_te_raw does, with its own check). */
#ifndef TK_TESTS_SCAN_REF_H
#define TK_TESTS_SCAN_REF_H

#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

#ifndef SCAN_REF_EQ
#define SCAN_REF_EQ(a, b) assert_int_equal(a, b)
#define SCAN_REF_TRUE(x) assert_true(x)
#endif

/* What the raw reader and the generic codec report for one packet (or error). */
typedef struct scan_ref {
    tk_status st;
    uint64_t offset, index;
    tk_te_packet pkt; /* all zero unless st is TK_OK */
} scan_ref;

/* Every packet and error of the raw stream buf, in order, up to a truncated last packet;
 * *n entries, to free(). */
static inline scan_ref *scan_reference(const tk_te_params *p, const uint8_t *buf, size_t len,
                                       size_t *n)
{
    size_t cap = 256, k = 0;
    scan_ref *v = malloc(cap * sizeof(*v));
    SCAN_REF_TRUE(v != NULL);
    tk_te_raw *r = NULL;
    SCAN_REF_EQ(tk_te_raw_from_buffer(buf, len, &r), TK_OK);
    tk_te_layout l;
    tk_te_layout_init(&l, p);
    l.fast = false; /* the bit-reader codec */
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag d;
        tk_diag_clear(&d);
        const tk_status st = tk_te_raw_next(r, &rp, &d);
        if (st == TK_END)
            break;
        if (k == cap) {
            v = realloc(v, (cap *= 2) * sizeof(*v));
            SCAN_REF_TRUE(v != NULL);
        }
        scan_ref *const e = &v[k++];
        memset(e, 0, sizeof(*e));
        if (st != TK_OK) {
            e->st = st;
            e->offset = d.byte_offset;
            e->index = d.packet_index;
            if (st == TK_ERR_TRUNCATED)
                break;
            continue;
        }
        e->offset = rp.offset;
        e->index = rp.index;
        e->st = rp.msg_type != TK_ENCAP_FLOW_TE_INST
                    ? TK_ERR_BAD_PACKET
                    : tk_te_packet_decode_layout(&l, rp.payload, rp.len, &e->pkt, &d);
        if (e->st != TK_OK)
            memset(&e->pkt, 0, sizeof(e->pkt));
    }
    tk_te_raw_close(r);
    *n = k;
    return v;
}

/* The packet of scanner record r (format 3: the whole packet full the scanner gave beside it,
 * with which the record's own fields must agree). */
static inline void scan_rec_packet(const tk_te_rec *r, const tk_te_packet *full, tk_te_packet *out)
{
    if (r->format == TK_TE_F3) {
        *out = *full;
        SCAN_REF_EQ(r->subformat, full->subformat);
        SCAN_REF_EQ(r->address, full->address);
        SCAN_REF_EQ((r->flags & TK_TE_REC_ADDRESS) != 0, full->has_address);
        SCAN_REF_EQ(r->irdepth, 0);
        SCAN_REF_EQ(r->branch_map, 0);
    } else {
        tk_te_rec_to_packet(r, out);
    }
}

#endif
