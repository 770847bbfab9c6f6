/* SPDX-License-Identifier: BSD-2-Clause */
/* The record scanner's implementations side by side (packet_scan.c): the portable loop, the
 * BMI2 loop (where the CPU has it) and the whole-struct batches are driven in lock step
 * over the same buffer with the same batch sizes, and must return the same counts,
 * records, format 3 packets, offsets and scanner state after every call, and the same
 * tk_te_scan_next results between batches; every packet must also equal what the raw
 * reader and the generic codec make of it. Streams: random parameters (with and without an
 * irdepth field) with many format 3 start packets and formats 1 and 2 of 9..16 bytes (all
 * decoded in the record loop), every truncation near the end of the buffer (the last
 * packets go through tk_te_scan_next), damaged copies, streams at the very start of a
 * buffer after an inaccessible page, and the golden vectors. */
#include "testutil.h"

#include "scan_ref.h"
#include "te_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The ways of scanning compared. */
enum { WAY_PORTABLE, WAY_BMI2, WAY_STRUCT, WAYS };

typedef struct run_stats {
    size_t batched;  /* packets that came from batches */
    size_t f3_start; /* of them, format 3 start packets */
} run_stats;

/* All ways in lock step over buf with batches of 1..max_batch packets. */
static run_stats lock_step(const tk_te_params *p, const uint8_t *buf, size_t len, size_t max_batch)
{
    size_t nref = 0, k = 0;
    scan_ref *want = scan_reference(p, buf, len, &nref);
    tk_te_scan s[WAYS];
    for (int w = 0; w < WAYS; w++)
        tk_te_scan_init(&s[w], p, buf, len);
    s[WAY_PORTABLE].use_bmi2 = 0;
    s[WAY_STRUCT].use_bmi2 = 0;
    run_stats rs = {0, 0};
    enum { CAP = 64 };
    for (;;) {
        const size_t batch = 1 + rnd() % max_batch;
        const bool with_offsets = rnd() & 1;
        tk_te_rec rec[WAYS][CAP];
        tk_te_packet full[WAYS][CAP];
        uint64_t off[WAYS][CAP];
        size_t got[WAYS];
        /* records and offsets past the count stay as they were */
        memset(rec, 0xa5, sizeof(rec));
        memset(off, 0xa5, sizeof(off));
        for (int w = 0; w < WAYS; w++)
            got[w] = w == WAY_STRUCT
                         ? tk_te_scan_batch(&s[w], full[w], with_offsets ? off[w] : NULL, batch)
                         : tk_te_scan_records(&s[w], rec[w], full[w], with_offsets ? off[w] : NULL,
                                              batch);
        for (int w = 1; w < WAYS; w++) {
            assert_int_equal(got[w], got[0]);
            assert_int_equal(s[w].pos, s[0].pos);
            assert_int_equal(s[w].offset, s[0].offset);
            assert_int_equal(s[w].index, s[0].index);
            assert_int_equal(s[w].next_index, s[0].next_index);
        }
        assert_true(got[0] <= batch);
        for (int w = 0; w < WAYS; w++)
            for (size_t i = got[0]; i < CAP; i++) {
                const uint8_t *const b = (const uint8_t *)&rec[w][i];
                for (size_t j = 0; j < sizeof(tk_te_rec); j++)
                    assert_int_equal(b[j], 0xa5);
                assert_int_equal(off[w][i], 0xa5a5a5a5a5a5a5a5ull);
            }
        for (size_t i = 0; i < got[0]; i++, k++) {
            assert_true(k < nref);
            assert_int_equal(want[k].st, TK_OK);
            tk_te_packet pk[WAYS];
            scan_rec_packet(&rec[WAY_PORTABLE][i], &full[WAY_PORTABLE][i], &pk[WAY_PORTABLE]);
            scan_rec_packet(&rec[WAY_BMI2][i], &full[WAY_BMI2][i], &pk[WAY_BMI2]);
            pk[WAY_STRUCT] = full[WAY_STRUCT][i];
            /* the two record loops give the very same bytes */
            assert_memory_equal(&rec[WAY_PORTABLE][i], &rec[WAY_BMI2][i], sizeof(tk_te_rec));
            for (int w = 0; w < WAYS; w++) {
                assert_memory_equal(&pk[w], &want[k].pkt, sizeof(tk_te_packet));
                if (with_offsets)
                    assert_int_equal(off[w][i], want[k].offset);
            }
            if (pk[0].format == TK_TE_F3 && pk[0].subformat == TK_TE_SF_START)
                rs.f3_start++;
            /* a batch ends after a support packet */
            if (pk[0].format == TK_TE_F3 && pk[0].subformat == TK_TE_SF_SUPPORT)
                assert_int_equal(i, got[0] - 1);
        }
        rs.batched += got[0];
        if (got[0] && got[0] == batch && rnd() % 4)
            continue;
        /* then one packet the careful way, the same for all */
        tk_status st[WAYS];
        tk_te_packet one[WAYS];
        tk_diag d[WAYS];
        for (int w = 0; w < WAYS; w++) {
            tk_diag_clear(&d[w]);
            memset(&one[w], 0, sizeof(one[w]));
            st[w] = tk_te_scan_next(&s[w], &one[w], &d[w]);
        }
        for (int w = 1; w < WAYS; w++) {
            assert_int_equal(st[w], st[0]);
            assert_memory_equal(&one[w], &one[0], sizeof(one[0]));
            assert_string_equal(d[w].message, d[0].message);
            assert_int_equal(s[w].pos, s[0].pos);
        }
        if (st[0] == TK_END)
            break;
        assert_true(k < nref);
        assert_int_equal(st[0], want[k].st);
        assert_int_equal(s[0].offset, want[k].offset);
        assert_int_equal(s[0].index, want[k].index);
        if (st[0] == TK_OK)
            assert_memory_equal(&one[0], &want[k].pkt, sizeof(one[0]));
        else
            assert_int_equal(d[0].byte_offset, want[k].offset);
        k++;
        if (st[0] == TK_ERR_TRUNCATED)
            break;
    }
    assert_int_equal(k, nref);
    free(want);
    return rs;
}

/* Random valid 2.0 parameters whose packets the in-line paths take. */
static void random_params(tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = rnd() % 2 ? 64 : 32 + (unsigned)(rnd() % 33);
    p->s.iaddress_lsb = (unsigned)(rnd() % 3);
    p->s.privilege_width = (unsigned)(rnd() % 3);
    p->s.notime = rnd() & 1;
    p->s.time_width = 1 + (unsigned)(rnd() % 40);
    p->s.nocontext = rnd() & 1;
    p->s.context_width = 1 + (unsigned)(rnd() % 40);
    p->s.ecause_width = 1 + (unsigned)(rnd() % 8);
    p->s.return_stack_size = (unsigned)(rnd() % 3);
    p->s.call_counter_size = (unsigned)(rnd() % 6);
    if (rnd() % 3 == 0) /* no irdepth field, as in the reference flow: its own loop copy */
        p->s.return_stack_size = p->s.call_counter_size = 0;
}

static uint64_t field(unsigned bits)
{
    /* values with few or many significant bits, positive or negative */
    const unsigned sig = (unsigned)(rnd() % (bits + 1));
    uint64_t v = sig >= 64 ? rnd() : rnd() & ((1ull << sig) - 1);
    if (rnd() & 1)
        v = ~v;
    return bits >= 64 ? v : v & ((1ull << bits) - 1);
}

/* A random packet: formats 1 and 2, format 3 start packets (about one in four), now and
 * then a trap or a support packet. */
static void random_packet(const tk_te_params *p, tk_te_packet *k)
{
    memset(k, 0, sizeof(*k));
    const unsigned kind = (unsigned)(rnd() % 32);
    if (kind < 8) {
        k->format = TK_TE_F3;
        k->subformat = TK_TE_SF_START;
        k->branch = (uint8_t)(rnd() & 1);
        k->privilege = (uint8_t)field(p->s.privilege_width);
        k->time = p->s.notime ? 0 : field(p->s.time_width);
        k->context = p->s.nocontext ? 0 : field(p->s.context_width);
        k->address = field(tk_te_addr_bits(p));
        k->has_address = true;
        return;
    }
    if (kind == 8) {
        k->format = TK_TE_F3;
        k->subformat = TK_TE_SF_SUPPORT;
        k->ienable = 1;
        k->qual_status = (uint8_t)(rnd() % 4);
        return;
    }
    if (kind == 9) {
        k->format = TK_TE_F3;
        k->subformat = TK_TE_SF_TRAP;
        k->ecause = (uint32_t)field(p->s.ecause_width);
        k->interrupt = (uint8_t)(rnd() & 1);
        k->address = field(tk_te_addr_bits(p));
        k->has_address = true;
        return;
    }
    if (kind < 22) {
        k->format = TK_TE_F1;
        k->branches = (uint8_t)(rnd() % 32);
        const unsigned mb = k->branches == 0    ? 31
                            : k->branches == 1  ? 1
                            : k->branches <= 3  ? 3
                            : k->branches <= 7  ? 7
                            : k->branches <= 15 ? 15
                                                : 31;
        k->branch_map = (uint32_t)field(mb);
        k->has_address = k->branches != 0;
    } else {
        k->format = TK_TE_F2;
        k->has_address = true;
    }
    if (k->has_address) {
        k->address = field(tk_te_addr_bits(p));
        k->notify = rnd() % 4 == 0;
        k->updiscon = rnd() % 4 == 0;
        k->irreport = rnd() % 4 == 0;
        k->irdepth = field(tk_te_irdepth_bits(p));
    }
}

/* A raw stream of encoded packets, about len bytes. */
static size_t random_stream(const tk_te_params *p, uint8_t *buf, size_t len)
{
    size_t at = 0;
    while (at + 1 + 31 < len) {
        tk_te_packet k;
        random_packet(p, &k);
        size_t n = 0;
        if (tk_te_packet_encode(p, &k, buf + at + 1, len - at - 1, &n) != TK_OK || n > 31)
            continue;
        buf[at] = (uint8_t)(TK_ENCAP_FLOW_TE_INST << 5 | n);
        at += 1 + n;
    }
    return at;
}

static void test_paths_random_streams(void **state)
{
    (void)state;
    enum { LEN = 8192 };
    uint8_t *buf = malloc(LEN);
    assert_non_null(buf);
    size_t batched = 0, f3 = 0, f3_high = 0, noflags = 0, flags = 0;
    for (int round = 0; round < 120; round++) {
        tk_te_params p;
        random_params(&p);
        const size_t len = random_stream(&p, buf, LEN);
        const run_stats rs = lock_step(&p, buf, len, 1 + rnd() % 64);
        batched += rs.batched;
        f3 += rs.f3_start;
        /* start packets whose address starts from bit 64 on (time and context wide): the
         * field extraction by kind, not the one formula of the usual layouts */
        tk_te_scan s;
        tk_te_scan_init(&s, &p, buf, len);
        if (!s.table.sbelow64)
            f3_high += rs.f3_start;
        /* the loop's copy without flag bits in short payloads (addresses of 62 bits or
         * more), and the one with them */
        if (s.table.noflags8)
            noflags += rs.batched;
        else
            flags += rs.batched;
    }
    free(buf);
    /* the batches carried tens of thousands of packets (about 98000 with this seed), a
     * fifth of them format 3 start packets: the in-line paths were compared */
    assert_true(batched > 50000);
    assert_true(f3 > batched / 8);
    /* (990 with this seed) */
    assert_true(f3_high > 500);
    /* (52,000 and 48,000 with this seed) */
    assert_true(noflags > 20000 && flags > 20000);
}

/* Every cut of a stream's last 48 bytes (a truncated last packet, packets within 16 bytes
 * of the end), and buffers shorter than one step of the loop. */
static void test_paths_end_of_buffer(void **state)
{
    (void)state;
    enum { LEN = 1024 };
    uint8_t buf[LEN];
    for (int round = 0; round < 6; round++) {
        tk_te_params p;
        random_params(&p);
        const size_t len = random_stream(&p, buf, LEN);
        for (size_t cut = len - 48; cut <= len; cut++)
            lock_step(&p, buf, cut, 64);
        for (size_t cut = 0; cut < 40; cut++)
            lock_step(&p, buf, cut, 1 + rnd() % 8);
    }
}

/* Damaged copies: flipped bits in headers and payloads (errors in either loop slot). */
static void test_paths_damaged(void **state)
{
    (void)state;
    enum { LEN = 4096 };
    uint8_t *buf = malloc(LEN), *copy = malloc(LEN);
    assert_non_null(buf);
    assert_non_null(copy);
    for (int round = 0; round < 60; round++) {
        tk_te_params p;
        random_params(&p);
        const size_t len = random_stream(&p, buf, LEN);
        for (int v = 0; v < 5; v++) {
            memcpy(copy, buf, len);
            for (int f = 1 + (int)(rnd() % 6); f > 0; f--)
                copy[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
            lock_step(&p, copy, len, 1 + rnd() % 64);
        }
    }
    free(buf);
    free(copy);
}

/* The in-line path loads the 8 bytes that end with a payload's last byte, up to 7 bytes
 * before its header, so the scanner must not take it for the first packets of a buffer.
 * Here the buffer starts right after an inaccessible page (a read before it faults) and
 * holds a stream cut at each of its first packet boundaries, whole and damaged in its
 * first bytes. */
static void test_paths_buffer_start(void **state)
{
    (void)state;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *const map =
        mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map, page, PROT_NONE), 0);
    uint8_t *const buf = map + page;
    uint8_t stream[1024];
    size_t runs = 0;
    for (int round = 0; round < 40; round++) {
        tk_te_params p;
        random_params(&p);
        const size_t len = random_stream(&p, stream, sizeof(stream));
        /* from each of the first eight packets on: every offset below 8 is a first packet's */
        for (size_t at = 0, b = 0; b < 8 && at < len; b++, at += 1u + (stream[at] & 0x1fu)) {
            memcpy(buf, stream + at, len - at);
            lock_step(&p, buf, len - at, 1 + rnd() % 64);
            buf[rnd() % 8] ^= (uint8_t)(1u << (rnd() % 8));
            lock_step(&p, buf, len - at, 1 + rnd() % 64);
            runs += 2;
        }
    }
    assert_int_equal(munmap(map, 2 * page), 0);
    assert_true(runs >= 40 * 8);
}

static void check_golden(const tk_te_params *p, const uint8_t *raw, size_t len, void *ctx)
{
    *(size_t *)ctx += lock_step(p, raw, len, 64).f3_start;
}

static void test_paths_golden(void **state)
{
    (void)state;
    size_t f3 = 0;
    assert_true(tk_test_ref_each_raw(check_golden, &f3) >= 25);
    assert_true(f3 > 0);
}

int main(void)
{
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_paths_random_streams),
        cmocka_unit_test(test_paths_end_of_buffer),
        cmocka_unit_test(test_paths_damaged),
        cmocka_unit_test(test_paths_buffer_start),
    };
    int rc = cmocka_run_group_tests(unit, NULL, NULL);
    if (!tk_test_data_present())
        return rc ? rc : TK_TEST_SKIP;
    const struct CMUnitTest data[] = {cmocka_unit_test(test_paths_golden)};
    return rc | cmocka_run_group_tests(data, NULL, NULL);
}
