/* SPDX-License-Identifier: BSD-2-Clause */
/* The reference raw framing (.te_inst_raw, encap.h tk_te_raw_*) feeding the te_inst codec.
 * Input: parameter selector, then the stream. Properties: iteration ends, each packet lies
 * inside the buffer in increasing offset order, and every error names a byte offset inside
 * the stream. The record scanner (tk_te_scan_*, packet_scan.c) over the same stream, in each
 * of its ways, gives the same packets, offsets and errors as the raw reader with the generic
 * codec. */
#include "fuzz_common.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"

/* the scanner's reference, shared with the unit tests, checked the fuzzer's way */
#define SCAN_REF_EQ(a, b) TK_FUZZ_CHECK((a) == (b))
#define SCAN_REF_TRUE(x) TK_FUZZ_CHECK(x)
#include "scan_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The scanner's ways: records with the implementation the CPU allows, records without BMI2,
 * whole structs. */
enum { WAY_RECORDS, WAY_PORTABLE, WAY_STRUCT, WAYS };

/* One way of the scanner over buf in batches of batch packets, each packet and error against
 * the reference want[0..nwant) (tests/scan_ref.h: the raw reader with the generic codec, as
 * tests/codec/test_packet_scan_paths.c compares it on generated streams). */
static void scan_against_reference(const tk_te_params *p, const uint8_t *buf, size_t n, int way,
                                   size_t batch, const scan_ref *want, size_t nwant)
{
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, n);
    if (way == WAY_PORTABLE)
        s.use_bmi2 = 0;
    tk_te_rec rec[64];
    tk_te_packet full[64];
    uint64_t off[64];
    size_t got = 0, i = 0;
    for (size_t k = 0;; k++) {
        tk_status st = TK_OK;
        tk_te_packet pk;
        uint64_t at;
        if (i == got) {
            got = way == WAY_STRUCT ? tk_te_scan_batch(&s, full, off, batch)
                                    : tk_te_scan_records(&s, rec, full, off, batch);
            i = 0;
            TK_FUZZ_CHECK(got <= batch);
        }
        if (i < got) {
            at = off[i];
            if (way == WAY_STRUCT)
                pk = full[i];
            else
                scan_rec_packet(&rec[i], &full[i], &pk);
            i++;
        } else {
            got = i = 0;
            tk_diag d;
            tk_diag_clear(&d);
            memset(&pk, 0, sizeof(pk));
            st = tk_te_scan_next(&s, &pk, &d);
            at = st == TK_OK ? s.offset : d.byte_offset;
            if (st != TK_OK && st != TK_END)
                memset(&pk, 0, sizeof(pk));
        }
        if (k == nwant) { /* the reference ended (not on a truncated packet) */
            TK_FUZZ_CHECK(st == TK_END);
            break;
        }
        TK_FUZZ_CHECK(st == want[k].st);
        TK_FUZZ_CHECK(at == want[k].offset);
        TK_FUZZ_CHECK(memcmp(&pk, &want[k].pkt, sizeof(pk)) == 0);
        if (st == TK_ERR_TRUNCATED)
            break;
    }
}

/* The stream in a buffer of its own size (a read past either end is an ASan report), with
 * batches of 1..64 packets chosen by the stream's length; the reference is read once. */
static void check_scanner(const tk_te_params *p, const uint8_t *data, size_t n)
{
    uint8_t *buf = malloc(n ? n : 1);
    TK_FUZZ_CHECK(buf != NULL);
    if (n)
        memcpy(buf, data, n);
    size_t nwant = 0;
    scan_ref *want = scan_reference(p, buf, n, &nwant);
    for (int way = 0; way < WAYS; way++)
        scan_against_reference(p, buf, n, way, 1 + n % 64, want, nwant);
    free(want);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tk_fuzz_in in = {data, size};
    tk_te_params p;
    if (!tk_fuzz_params_pick(&in, &p))
        return 0;
    tk_te_raw *r = NULL;
    if (tk_te_raw_from_buffer(in.p, in.n, &r) != TK_OK)
        return 0;
    TK_FUZZ_CHECK(tk_te_raw_size(r) == in.n);
    uint64_t last = 0;
    size_t calls = 0;
    for (;;) {
        TK_FUZZ_CHECK(calls++ <= in.n); /* at least one byte consumed per call */
        tk_te_raw_packet rp;
        tk_diag diag;
        tk_diag_clear(&diag);
        tk_status st = tk_te_raw_next(r, &rp, &diag);
        if (st == TK_END)
            break;
        if (st != TK_OK) {
            TK_FUZZ_CHECK(diag.byte_offset < in.n);
            if (st == TK_ERR_TRUNCATED)
                break;
            continue;
        }
        TK_FUZZ_CHECK(rp.offset < in.n && (calls == 1 || rp.offset >= last));
        TK_FUZZ_CHECK(rp.payload == in.p + rp.offset + 1 && rp.len >= 1 && rp.len <= 31);
        TK_FUZZ_CHECK(rp.offset + 1 + rp.len <= in.n);
        last = rp.offset;
        tk_te_packet pkt;
        if (rp.msg_type == TK_ENCAP_FLOW_TE_INST &&
            tk_te_packet_decode(&p, rp.payload, rp.len, &pkt, &diag) == TK_OK) {
            char text[512];
            tk_te_packet_format(&p, &pkt, text, sizeof(text));
        }
    }
    tk_te_raw_close(r);
    check_scanner(&p, in.p, in.n);
    return 0;
}
