/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted traces: every golden .te_inst_raw of etrace-ref, damaged in thousands of seeded
 * ways (truncated final packet, flipped bits, dropped, duplicated, zeroed and random bytes),
 * goes through the raw reader, the codec and the decoder with its ELF.
 *
 * Checked for every mutation:
 *  - no crash, no hang (each reader call consumes input; ASan/UBSan in the sanitizer build);
 *  - every error is located inside the stream (rb_on_event);
 *  - the decoder comes back: once the framing is aligned again after the damage, the flow
 *    from the next format 3 sync on equals the clean decode's flow from that point. A damage
 *    the decoder cannot see (a flipped branch-map bit is still a valid path) is found by the
 *    sync packet itself, and the decoder then needs the following sync: resynchronisation at
 *    the first or second sync after the damage is accepted, never later. This holds for every
 *    mutation, including those that turn bytes into a support packet with other options: the
 *    decoder refuses such a packet after the first sync (decoder.c, support_refusal). The one
 *    exception, explained in run_vector, is a damaged first support packet announcing options
 *    the encoder could have: that decode is checked again with TK_TE_DEC_FIXED_OPTIONS.
 * Reported: per kind of damage, the instructions lost (clean flow minus the common start and
 * end of the damaged flow) and at which sync the decoder came back. */
#include "robust_fixture.h"

#include <inttypes.h>

enum { KIND_TRUNC, KIND_FLIP, KIND_DROP, KIND_DUP, KIND_ZERO, KIND_RANDOM, NKINDS };
static const char *const kind_names[NKINDS] = {"truncated end", "flipped bits", "dropped bytes",
                                               "duplicated",    "zero run",     "random bytes"};

/* Mutations per vector, split evenly over the kinds. 25 vectors -> 4050 mutations; half as
 * many in the sanitizer build (-DTK_SANITIZE=ON), which is there to catch memory errors and
 * runs about five times slower. */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATIONS_PER_VECTOR 84
#else
#define MUTATIONS_PER_VECTOR 162
#endif
/* Resynchronisation must happen at the first or second sync after the damage. */
#define MAX_SYNC_SKIPPED 1

typedef struct kind_stats {
    unsigned long mutations;
    unsigned long with_error; /* the damage was reported (error or loss event) */
    unsigned long recovered_at[MAX_SYNC_SKIPPED + 1];
    unsigned long no_sync_after; /* reported, but no sync follows the damage */
    unsigned long silent;        /* flow differs, nothing reported: the damage left valid packets */
    unsigned long harmless;      /* flow identical (e.g. a flipped sign-extension bit) */
    unsigned long options_refused;  /* the decoder refused a support packet's options */
    unsigned long options_believed; /* it took them (trace start only; see run_vector) */
    uint64_t lost, lost_max;
    uint64_t clean_insns;
} kind_stats;

typedef struct run_ctx {
    kind_stats k[NKINDS];
    unsigned vectors;
} run_ctx;

/* xorshift64*: a fixed, seeded generator so every run damages the same bytes. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? rng_next(s) % n : 0;
}

static uint64_t seed_of(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = a; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    for (const char *p = b; *p; p++)
        h = (h ^ (uint8_t)*p) * 1099511628211ull;
    return h ? h : 1;
}

/* The damaged copy: out (cap >= len + 64) gets the stream; [*dstart, *dend) is the damaged
 * stretch in the copy's offsets and *delta the copy's length minus the clean length. */
static size_t mutate(int kind, uint64_t *rng, const uint8_t *in, size_t len, size_t last_pkt,
                     uint8_t *out, size_t *dstart, size_t *dend, long *delta)
{
    size_t pos = rng_below(rng, len), k;
    memcpy(out, in, len);
    switch (kind) {
    case KIND_TRUNC: /* cut inside the final packet, after its header */
        k = 1 + rng_below(rng, len - last_pkt - 1);
        *dstart = *dend = len - k;
        *delta = -(long)k;
        return len - k;
    case KIND_FLIP:
        for (k = 1 + rng_below(rng, 3); k; k--)
            out[pos] ^= (uint8_t)(1u << rng_below(rng, 8));
        *dstart = pos;
        *dend = pos + 1;
        *delta = 0;
        return len;
    case KIND_DROP:
        k = 1 + rng_below(rng, 8);
        if (pos + k > len)
            k = len - pos;
        memmove(out + pos, in + pos + k, len - pos - k);
        *dstart = *dend = pos;
        *delta = -(long)k;
        return len - k;
    case KIND_DUP:
        k = 1 + rng_below(rng, 8);
        if (pos + k > len)
            k = len - pos;
        memcpy(out + pos + k, in + pos, len - pos);
        *dstart = pos;
        *dend = pos + 2 * k;
        *delta = (long)k;
        return len + k;
    case KIND_ZERO:
    case KIND_RANDOM:
        k = 1 + rng_below(rng, kind == KIND_ZERO ? 64 : 16);
        if (pos + k > len)
            k = len - pos;
        for (size_t i = 0; i < k; i++)
            out[pos + i] = kind == KIND_ZERO ? 0 : (uint8_t)rng_next(rng);
        *dstart = pos;
        *dend = pos + k;
        *delta = 0;
        return len;
    }
    return len;
}

static bool fed_at(const rb_flow *f, uint64_t off)
{
    size_t lo = 0, hi = f->npkts;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (f->pkt_off[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->npkts && f->pkt_off[lo] == off;
}

/* Keep the damaged stream of a failure for `tracekit decode` (in the test's folder). */
static void save_failure(const char *prog, const char *setting, unsigned m, const uint8_t *buf,
                         size_t len)
{
    char path[256];
    snprintf(path, sizeof(path), "corrupt-%.64s-%.64s-%u.te_inst_raw", prog, setting, m);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
        printf("damaged stream written to %s\n", path);
    }
}

static void run_vector(const char *prog, const char *setting, void *vctx)
{
    run_ctx *rc = vctx;
    rb_vector v;
    if (!rb_vector_load(&v, prog, setting, NULL))
        return;
    rc->vectors++;
    rb_flow clean;
    rb_decode(&v, v.raw, v.raw_len, &clean);
    if (clean.errors || clean.bad_packets)
        fail_msg("%s/%s: the clean trace does not decode cleanly", prog, setting);
    const uint64_t n = clean.ninsn;
    assert_true(clean.npkts > 0);
    const size_t last_pkt = clean.pkt_off[clean.npkts - 1];
    size_t first_sync = 0;
    while (first_sync < clean.npkts && !clean.pkt_sync[first_sync])
        first_sync++;
    assert_true(first_sync < clean.npkts);
    first_sync = clean.pkt_off[first_sync];
    uint8_t *buf = malloc(v.raw_len + 64);
    assert_non_null(buf);
    uint64_t rng = seed_of(prog, setting);
    for (unsigned m = 0; m < MUTATIONS_PER_VECTOR; m++) {
        const int kind = (int)(m % NKINDS);
        kind_stats *ks = &rc->k[kind];
        size_t ds, de;
        long delta;
        size_t len = mutate(kind, &rng, v.raw, v.raw_len, last_pkt, buf, &ds, &de, &delta);
        rb_flow bad;
        rb_decode(&v, buf, len, &bad);
        if (bad.options_refused)
            ks->options_refused++;
        if (bad.options_changed && (bad.ninsn != n || rb_common_prefix(&clean, &bad) != n)) {
            /* The decoder believed a damaged support packet's options. It does so only
             * where a support packet may announce new options (decoder.c, support_refusal):
             * before the first sync or after a trace's clean end. In the golden traces that
             * is the first packet (the closing support packet has nothing after it), so the
             * damage must be before the first sync; the flow is then decoded with the wrong
             * options throughout, and no check can tell a flipped full-address bit from a
             * real announcement. A decoder told the options are fixed (as a tool that
             * programmed the encoder knows them) refuses the packet and recovers: that decode
             * is the one checked below. */
            ks->options_believed++;
            if (ds >= first_sync) {
                save_failure(prog, setting, m, buf, len);
                fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu): the decoder took a damaged "
                         "support packet's options after the first sync (offset %zu)",
                         prog, setting, m, kind_names[kind], ds, de, first_sync);
            }
            rb_flow_free(&bad);
            rb_decode_flags(&v, buf, len, TK_TE_DEC_FIXED_OPTIONS, &bad);
            assert_false(bad.options_changed);
        }
        const uint64_t pre = rb_common_prefix(&clean, &bad);
        const uint64_t suf = rb_common_suffix(&clean, &bad);
        const uint64_t lost = pre + suf >= n ? 0 : n - pre - suf;
        ks->mutations++;
        ks->clean_insns += n;
        ks->lost += lost;
        if (lost > ks->lost_max)
            ks->lost_max = lost;
        const bool reported = bad.errors || bad.lost || bad.bad_packets;
        if (reported)
            ks->with_error++;

        /* Damage the decoder saw makes it restart at a later sync (TK_EV_TRACE_ON): the
         * flow from that restart to the end must be the clean flow's end. Count the syncs
         * after the damage, where the framing is aligned again, that it let pass first. */
        const bool restarted_after = bad.resynced && bad.restart_off >= ds;
        const uint64_t tail = bad.ninsn - bad.restart_insn, restart_off = bad.restart_off;
        unsigned skipped = 0;
        bool aligned_sync = false; /* a sync after the damage is read on its boundary */
        const uint64_t dend_clean = (uint64_t)((long)de - delta);
        /* the restart happened at the last aligned sync at or before restart_off */
        for (size_t i = 0; i < clean.npkts; i++) {
            if (!clean.pkt_sync[i] || clean.pkt_off[i] < dend_clean ||
                !fed_at(&bad, (uint64_t)((long)clean.pkt_off[i] + delta)))
                continue;
            if (restarted_after && bad.restart_off >= de &&
                clean.pkt_off[i] <= (uint64_t)((long)bad.restart_off - delta) && aligned_sync)
                skipped++;
            aligned_sync = true;
        }
        rb_flow_free(&bad);
        if (!restarted_after) {
            if (reported && aligned_sync) {
                save_failure(prog, setting, m, buf, len);
                fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu of %zu, length change %ld): "
                         "damage reported, but the decoder did not restart at a later sync",
                         prog, setting, m, kind_names[kind], ds, de, len, delta);
            }
            if (reported)
                ks->no_sync_after++;
            else if (pre + suf < n)
                ks->silent++; /* a wrong flow no check could tell from a right one */
            else
                ks->harmless++;
            continue;
        }
        if (suf < tail || skipped > MAX_SYNC_SKIPPED) {
            save_failure(prog, setting, m, buf, len);
            fail_msg("%s/%s mutation %u (%s, bytes %zu..%zu of %zu, length change %ld): after "
                     "the restart at offset %" PRIu64 " (%u aligned syncs after the damage "
                     "passed first), %" PRIu64 " instructions decoded, of which only %" PRIu64
                     " match the clean flow's end",
                     prog, setting, m, kind_names[kind], ds, de, len, delta, restart_off, skipped,
                     tail, suf);
        }
        ks->recovered_at[skipped]++;
    }
    free(buf);
    rb_flow_free(&clean);
    rb_vector_free(&v);
}

static void test_corruption_golden(void **state)
{
    (void)state;
    run_ctx rc;
    memset(&rc, 0, sizeof(rc));
    rb_for_each_vector(run_vector, &rc);
    assert_true(rc.vectors >= 20);
    unsigned long total = 0;
    printf("corruption: %u golden vectors, %d mutations each\n", rc.vectors, MUTATIONS_PER_VECTOR);
    printf("%-14s %9s %9s %7s %7s %8s %7s %8s %8s %8s %11s %9s\n", "damage", "mutations",
           "reported", "sync+0", "sync+1", "no-sync", "silent", "harmless", "refused", "believed",
           "insns lost", "worst");
    for (int k = 0; k < NKINDS; k++) {
        const kind_stats *ks = &rc.k[k];
        total += ks->mutations;
        printf("%-14s %9lu %9lu %7lu %7lu %8lu %7lu %8lu %8lu %8lu %10.2f%% %9" PRIu64 "\n",
               kind_names[k], ks->mutations, ks->with_error, ks->recovered_at[0],
               ks->recovered_at[1], ks->no_sync_after, ks->silent, ks->harmless,
               ks->options_refused, ks->options_believed,
               ks->clean_insns ? 100.0 * ks->lost / ks->clean_insns : 0.0, ks->lost_max);
        /* a truncated final packet is always noticed by the reader */
        if (k == KIND_TRUNC)
            assert_int_equal(ks->with_error, ks->mutations);
    }
    assert_true(total >= 2000);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_corruption_golden)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
