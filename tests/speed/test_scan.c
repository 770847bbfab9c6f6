/* SPDX-License-Identifier: BSD-2-Clause */
/* The fast packet paths against the generic ones: the specialised decoders (packet_fast.h)
 * give the same packet or the same verdict as the bit-reader codec for random payloads
 * under random parameters, and the zero-copy scanner (tk_te_scan_batch/next) yields exactly
 * the packets, offsets, indexes and errors of the raw reader plus generic codec, on every
 * golden vector and on damaged copies of one. */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/encap.h"
#include "tracekit/te_packet.h"
#include "tracekit/te_params.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Random but valid 2.0 parameters. */
static void random_params(tk_te_params *p)
{
    tk_te_params_init(p);
    p->s.iaddress_width = 32 + (unsigned)(rnd() % 33);
    p->s.iaddress_lsb = (unsigned)(rnd() % 3);
    p->s.privilege_width = (unsigned)(rnd() % 3);
    p->s.notime = rnd() & 1;
    p->s.time_width = 1 + (unsigned)(rnd() % 64);
    p->s.nocontext = rnd() & 1;
    p->s.context_width = 1 + (unsigned)(rnd() % 64);
    p->s.ecause_width = 1 + (unsigned)(rnd() % 8);
    p->s.return_stack_size = (unsigned)(rnd() % 4);
    p->s.call_counter_size = (unsigned)(rnd() % 10);
    p->o.implicit_except = rnd() & 1;
    p->o.branch_prediction = rnd() & 1;
}

static void test_fast_equals_generic(void **state)
{
    (void)state;
    unsigned long compared = 0, fast_ok = 0;
    for (int round = 0; round < 200; round++) {
        tk_te_params p;
        random_params(&p);
        tk_te_layout fast, slow;
        tk_te_layout_init(&fast, &p);
        tk_te_layout_init(&slow, &p);
        assert_true(fast.fast);
        slow.fast = false;
        for (int i = 0; i < 2000; i++) {
            uint8_t buf[16];
            const size_t len = 1 + rnd() % 16;
            for (size_t k = 0; k < len; k++)
                buf[k] = (uint8_t)rnd();
            tk_te_packet a, b;
            tk_diag d;
            tk_status sa = tk_te_packet_decode_layout(&fast, buf, len, &a, &d);
            tk_status sb = tk_te_packet_decode_layout(&slow, buf, len, &b, &d);
            assert_int_equal(sa, sb);
            if (sa == TK_OK) {
                assert_memory_equal(&a, &b, sizeof(a));
                fast_ok++;
            }
            compared++;
        }
    }
    /* random bytes mostly make valid short packets: the comparison is not vacuous */
    assert_true(fast_ok > compared / 4);
}

typedef struct seen {
    tk_status st;
    uint64_t offset, index;
    tk_te_packet pkt;
} seen;

/* Everything the raw reader and generic codec report, in order. */
static seen *reference_run(const tk_te_params *p, const uint8_t *buf, size_t len, size_t *n)
{
    size_t cap = 1024, k = 0;
    seen *v = malloc(cap * sizeof(*v));
    tk_te_raw *r = NULL;
    assert_int_equal(tk_te_raw_from_buffer(buf, len, &r), TK_OK);
    tk_te_layout l;
    tk_te_layout_init(&l, p);
    l.fast = false;
    for (;;) {
        tk_te_raw_packet rp;
        tk_diag d;
        tk_status st = tk_te_raw_next(r, &rp, &d);
        if (st == TK_END)
            break;
        if (k == cap)
            v = realloc(v, (cap *= 2) * sizeof(*v));
        memset(&v[k], 0, sizeof(v[k]));
        if (st != TK_OK) {
            v[k].offset = d.byte_offset;
            v[k].index = d.packet_index;
        } else {
            v[k].offset = rp.offset;
            v[k].index = rp.index;
            if (rp.msg_type != TK_ENCAP_FLOW_TE_INST)
                st = TK_ERR_BAD_PACKET;
            else
                st = tk_te_packet_decode_layout(&l, rp.payload, rp.len, &v[k].pkt, &d);
            if (st != TK_OK)
                memset(&v[k].pkt, 0, sizeof(v[k].pkt));
        }
        v[k++].st = st;
        if (st == TK_ERR_TRUNCATED)
            break;
    }
    tk_te_raw_close(r);
    *n = k;
    return v;
}

/* The scanner, batches first as a fast reader would use it. */
static void check_scan(const tk_te_params *p, const uint8_t *buf, size_t len, size_t batch)
{
    size_t n = 0;
    seen *want = reference_run(p, buf, len, &n);
    tk_te_scan s;
    tk_te_scan_init(&s, p, buf, len);
    size_t k = 0;
    tk_te_packet pk[64];
    uint64_t off[64];
    for (;;) {
        size_t got = tk_te_scan_batch(&s, pk, off, batch);
        for (size_t i = 0; i < got; i++, k++) {
            assert_true(k < n);
            assert_int_equal(want[k].st, TK_OK);
            assert_int_equal(off[i], want[k].offset);
            assert_memory_equal(&pk[i], &want[k].pkt, sizeof(pk[i]));
        }
        if (got) {
            assert_int_equal(s.index, want[k - 1].index);
            assert_int_equal(s.offset, want[k - 1].offset);
        }
        tk_diag d;
        tk_status st = tk_te_scan_next(&s, &pk[0], &d);
        if (st == TK_END)
            break;
        assert_true(k < n);
        assert_int_equal(st, want[k].st);
        assert_int_equal(s.offset, want[k].offset);
        assert_int_equal(s.index, want[k].index);
        if (st == TK_OK) {
            assert_memory_equal(&pk[0], &want[k].pkt, sizeof(pk[0]));
        } else {
            assert_int_equal(d.byte_offset, want[k].offset);
            assert_true(strstr(d.message, "offset") != NULL);
        }
        k++;
        if (st == TK_ERR_TRUNCATED)
            break;
    }
    assert_int_equal(k, n);
    free(want);
}

static int read_setting(const char *dir, const char *prog, tk_te_params *p, uint8_t **raw,
                        size_t *len)
{
    char path[1600];
    tk_diag d;
    tk_te_params_init(p);
    snprintf(path, sizeof(path), "%s/%s.scf", dir, prog);
    if (tk_te_params_read_scf(p, path, &d) != TK_OK)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.decoder.ucf", dir, prog);
    if (tk_te_params_read_ucf(p, path, NULL, &d) != TK_OK)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.te_inst_raw", dir, prog);
    *raw = tk_test_read_file(path, len);
    return *raw ? 0 : -1;
}

static void test_scan_golden(void **state)
{
    (void)state;
    char *root = tk_test_data_path("etrace-ref");
    DIR *progs = opendir(root);
    assert_non_null(progs);
    unsigned settings = 0;
    struct dirent *pe;
    while ((pe = readdir(progs))) {
        if (pe->d_name[0] == '.')
            continue;
        char pdir[1100];
        snprintf(pdir, sizeof(pdir), "%s/%s", root, pe->d_name);
        DIR *sets = opendir(pdir);
        if (!sets)
            continue;
        struct dirent *se;
        while ((se = readdir(sets))) {
            if (se->d_name[0] == '.')
                continue;
            char sdir[1400];
            snprintf(sdir, sizeof(sdir), "%s/%s", pdir, se->d_name);
            tk_te_params p;
            uint8_t *raw = NULL;
            size_t len = 0;
            if (read_setting(sdir, pe->d_name, &p, &raw, &len) != 0)
                continue;
            check_scan(&p, raw, len, 64);
            check_scan(&p, raw, len, 1);
            free(raw);
            settings++;
        }
        closedir(sets);
    }
    closedir(progs);
    free(root);
    assert_true(settings >= 25);
}

/* Damaged copies: flipped bytes (headers and payloads), every truncation near the end. */
static void test_scan_damaged(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("etrace-ref/qsort/itype3_basic");
    tk_te_params p;
    uint8_t *raw = NULL;
    size_t len = 0;
    assert_int_equal(read_setting(dir, "qsort", &p, &raw, &len), 0);
    uint8_t *copy = malloc(len);
    for (int round = 0; round < 300; round++) {
        memcpy(copy, raw, len);
        const int flips = 1 + (int)(rnd() % 8);
        for (int f = 0; f < flips; f++)
            copy[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
        check_scan(&p, copy, len, 64);
    }
    for (size_t cut = len > 40 ? len - 40 : 0; cut < len; cut++)
        check_scan(&p, raw, cut, 64);
    free(copy);
    free(raw);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest unit[] = {cmocka_unit_test(test_fast_equals_generic)};
    int rc = cmocka_run_group_tests(unit, NULL, NULL);
    if (!tk_test_data_present())
        return rc ? rc : TK_TEST_SKIP;
    const struct CMUnitTest data[] = {
        cmocka_unit_test(test_scan_golden),
        cmocka_unit_test(test_scan_damaged),
    };
    return rc | cmocka_run_group_tests(data, NULL, NULL);
}
