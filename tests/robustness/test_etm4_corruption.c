/* SPDX-License-Identifier: BSD-2-Clause */
/* Corrupted CoreSight traces, through the whole pipeline (deformatter, ETMv4 parser and flow
 * decoder, tk_etm4_run_snapshot) on the OpenCSD snapshot bugfix-exact-match (a 1 MiB ETB
 * buffer in formatter frames, six ETMv4 sources, memory dumps covering the code; the source
 * with the most instructions, 7.6 million, is followed). The buffer is damaged in seeded ways:
 * flipped bits, a zeroed or random stretch, dropped or duplicated bytes, a cut end.
 *
 * Checked for every mutation:
 *  - no crash or hang (the sanitizer build runs it too);
 *  - every error event carries a message and a byte offset inside the buffer, and so does
 *    every deformatter error;
 *  - damage in place (flipped bits, a zeroed or random stretch): the flow is the clean one
 *    again from RECOVERY_BYTES of trace after the damage on (ETMv4 resynchronises at A-Sync;
 *    measured: under 5 KiB). Damaged bytes that still parse may carry a wrong address for a
 *    while, and a deformatter error does not reset the ETMv4 decoder, so the point where the
 *    flows agree again is measured, not the decoder's restart;
 *  - a cut end is always reported;
 *  - dropped or duplicated bytes: the formatter frames (16 bytes at fixed positions, no sync
 *    pattern in an ETB buffer) no longer line up; the pipeline searches the alignment again
 *    after the first error or unknown trace ID (tk_cs_frame_align) and restarts there, so the
 *    same criterion as for damage in place holds: the flow is the clean one again from
 *    RECOVERY_BYTES of trace after the damage on (test_etb_realign checks it event by event).
 * Ranges are compared as emitted (no program image here: the memory comes from the snapshot). */
#include "robust_fixture.h"

#include <inttypes.h>

#include "tracekit/coresight.h"
#include "tracekit/etm4.h"

enum { K_FLIP, K_ZERO, K_RANDOM, K_TRUNC, K_DROP, K_DUP, K_TAIL, K_TWO, NK };
static const char *const knames[NK] = {"flipped bits",  "zero run",    "random",
                                       "truncated",     "dropped",     "duplicated",
                                       "tail drop/dup", "two drop/dup"};
/* mutations, spread over the kinds; fewer in the sanitizer build (about five times slower) */
#if defined(__SANITIZE_ADDRESS__)
#define MUTATIONS 32
#else
#define MUTATIONS 80
#endif
/* In-place damage: the flow must be the clean one again within this much trace after it. */
#define RECOVERY_BYTES 16384
/* Tail damage (dropped or duplicated bytes in the last 17 KiB): the search window shrinks to
 * what is left, so the flow must be the clean one again sooner (measured: the column
 * "distance"). */
#define RECOVERY_TAIL 8192

/* k bytes of buf (len bytes) dropped at pos, or repeated there (dup); the new length. */
static size_t drop_or_dup(uint8_t *buf, size_t len, size_t pos, size_t k, bool dup)
{
    if (dup) {
        memmove(buf + pos + k, buf + pos, len - pos);
        return len + k;
    }
    memmove(buf + pos, buf + pos + k, len - pos - k);
    return len - k;
}

static tk_status on_frame_error(void *c, tk_status st, uint64_t offset, const char *msg)
{
    rb_flow *f = c;
    (void)st;
    assert_non_null(msg);
    assert_true(msg[0] != '\0');
    assert_true(offset < f->stream_len);
    f->bad_packets++;
    rb_note_problem(f);
    return TK_OK;
}

/* Only the followed source's events go to the flow. */
typedef struct follow {
    rb_flow f;
    int id;
    uint64_t per_id[128];
    /* per range of the followed source: its byte offset and the instructions before it */
    uint64_t *off, *before;
    size_t n, cap;
} follow;

static void follow_free(follow *w)
{
    rb_flow_free(&w->f);
    free(w->off);
    free(w->before);
    w->off = w->before = NULL;
    w->n = w->cap = 0;
}

/* Instructions the flow emitted in ranges located at or after byte offset off. */
static uint64_t insns_from(const follow *w, uint64_t off)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (w->off[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->n ? w->f.ninsn - w->before[lo] : 0;
}

static tk_status on_event(void *c, const tk_event *ev)
{
    follow *w = c;
    if (ev->kind == TK_EV_RANGE && ev->trace_id < 128)
        w->per_id[ev->trace_id] += ev->ninsn;
    if (w->id >= 0 && ev->trace_id != (uint32_t)w->id)
        return TK_OK;
    if (ev->kind == TK_EV_RANGE) {
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 65536;
            w->off = realloc(w->off, w->cap * sizeof(*w->off));
            w->before = realloc(w->before, w->cap * sizeof(*w->before));
            assert_true(w->off && w->before);
        }
        w->off[w->n] = ev->byte_offset;
        w->before[w->n++] = w->f.ninsn;
    }
    return rb_on_event(&w->f, ev);
}

static tk_status on_frame_error_follow(void *c, tk_status st, uint64_t offset, const char *msg)
{
    return on_frame_error(&((follow *)c)->f, st, offset, msg);
}

static void run(const tk_cs_snapshot *ss, int buffer, int id, const uint8_t *buf, size_t len,
                follow *w)
{
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->f.stream_len = len;
    tk_etm4_run_opts o;
    memset(&o, 0, sizeof(o));
    o.size = sizeof(o);
    o.buffer = buffer;
    o.id = id;
    o.decode = true;
    o.on_event = on_event;
    o.on_frame_error = on_frame_error_follow;
    o.ctx = w;
    o.data = buf;
    o.data_len = len;
    tk_diag diag;
    tk_diag_clear(&diag);
    assert_int_equal(tk_etm4_run_snapshot(ss, &o, &diag), TK_OK);
}

static uint64_t rng_below(uint64_t *s, uint64_t n)
{
    return n ? tk_test_xorshift64star(s) % n : 0;
}

typedef struct kstats {
    unsigned long mutations, reported, recovered, no_restart, silent, harmless;
    uint64_t lost, lost_max, clean;
    uint64_t worst_distance; /* bytes from the damage to where the flows agree again */
} kstats;

static void test_etm4_corruption(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("opencsd/snapshots/bugfix-exact-match");
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (!dir || tk_cs_snapshot_load(dir, &ss, &diag) != TK_OK) {
        free(dir);
        skip();
        return;
    }
    const int buffer = tk_cs_snapshot_default_buffer(ss);
    assert_true(buffer >= 0);
    size_t len = 0;
    uint8_t *clean_buf = tk_test_read_file(ss->buffers[buffer].path, &len);
    assert_non_null(clean_buf);
    assert_true(len >= 4096);

    /* the source with the most instructions (trace ID 0x12) */
    follow *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    run(ss, buffer, -1, clean_buf, len, w);
    int id = 0;
    for (int i = 1; i < 128; i++)
        if (w->per_id[i] > w->per_id[id])
            id = i;
    follow_free(w);
    follow clean;
    run(ss, buffer, id, clean_buf, len, &clean);
    assert_int_equal(clean.f.errors, 0);
    assert_int_equal(clean.f.bad_packets, 0);
    const uint64_t n = clean.f.ninsn;
    assert_true(n > 1000);

    kstats ks[NK];
    memset(ks, 0, sizeof(ks));
    uint8_t *buf = malloc(len + 64);
    assert_non_null(buf);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    for (unsigned m = 0; m < MUTATIONS; m++) {
        const int kind = (int)(m % NK);
        memcpy(buf, clean_buf, len);
        size_t blen = len, pos = (size_t)rng_below(&rng, len), k = 1 + (size_t)rng_below(&rng, 16);
        size_t pos2 = 0, k2 = 0;
        if (pos + k > len)
            k = len - pos;
        switch (kind) {
        case K_FLIP:
            for (unsigned b = 1 + (unsigned)rng_below(&rng, 3); b; b--)
                buf[pos] ^= (uint8_t)(1u << rng_below(&rng, 8));
            break;
        case K_ZERO:
        case K_RANDOM:
            for (size_t i = 0; i < k; i++)
                buf[pos + i] = kind == K_ZERO ? 0 : (uint8_t)tk_test_xorshift64star(&rng);
            break;
        case K_TRUNC:
            blen = len - 1 - (size_t)rng_below(&rng, len / 4);
            pos = blen;
            break;
        case K_DROP:
        case K_DUP:
            blen = drop_or_dup(buf, len, pos, k, kind == K_DUP);
            break;
        case K_TAIL: /* the last 17 KiB, up to 64 bytes before the end */
            pos = len - 64 - (size_t)rng_below(&rng, 17408 - 64);
            blen = drop_or_dup(buf, len, pos, k, tk_test_xorshift64star(&rng) & 1);
            break;
        case K_TWO: /* a second damage 512 B .. 16 KiB after the first */
            pos = (size_t)rng_below(&rng, len - 40960);
            pos2 = pos + 512 + (size_t)rng_below(&rng, 16384 - 512);
            k2 = 1 + (size_t)rng_below(&rng, 16);
            blen = drop_or_dup(buf, len, pos, k, tk_test_xorshift64star(&rng) & 1);
            /* pos2 in the copy: the bytes after the first damage moved by blen - len */
            blen = drop_or_dup(buf, blen, pos2 + blen - len, k2, tk_test_xorshift64star(&rng) & 1);
            break;
        }
        follow bad;
        run(ss, buffer, id, buf, blen, &bad);
        const rb_flow *f = &bad.f;
        const uint64_t pre = rb_common_prefix(&clean.f, f), suf = rb_common_suffix(&clean.f, f);
        const uint64_t lost = pre + suf >= n ? 0 : n - pre - suf;
        kstats *s = &ks[kind];
        s->mutations++;
        s->clean += n;
        s->lost += lost;
        if (lost > s->lost_max)
            s->lost_max = lost;
        const bool reported = f->errors || f->lost || f->bad_packets;
        s->reported += reported;
        /* in place, or realigned (dropped/duplicated bytes) */
        const bool in_place = kind != K_TRUNC;
        /* Damaged bytes may still parse as packets (a short address packet updates only the
         * low bits of the address, so a damaged high part lasts until the next long address),
         * and a formatter-frame error does not reset the ETMv4 decoder: the criterion is that
         * the flow is the clean one again from RECOVERY_BYTES of trace after the damage on
         * (the decoder resynchronises at A-Sync; this buffer interleaves six sources). */
        const size_t last = kind == K_TWO ? pos2 + k2 : pos + k;
        const unsigned recovery = kind == K_TAIL ? RECOVERY_TAIL : RECOVERY_BYTES;
        const uint64_t need = insns_from(&clean, (uint64_t)last + recovery);
        if (in_place && suf < need)
            fail_msg("mutation %u (%s, bytes %zu..+%zu): the flow from %u bytes after the "
                     "damage has %" PRIu64 " instructions, only the last %" PRIu64
                     " match the damaged decode's end",
                     m, knames[kind], pos, k, recovery, need, suf);
        /* and before the damage nothing is lost (its frame's auxiliary byte may have moved:
         * from the frame before it) */
        const uint64_t before = n - insns_from(&clean, pos >= 32 ? pos / 16 * 16 - 16 : 0);
        if (in_place && pre < before)
            fail_msg("mutation %u (%s, bytes %zu..+%zu): the damaged decode shares %" PRIu64
                     " instructions with the clean one at its start, the clean one has %" PRIu64
                     " before the damage",
                     m, knames[kind], pos, k, pre, before);
        /* where in the trace the flows came together again */
        uint64_t conv = 0;
        if (suf < n) {
            size_t lo = 0, hi = clean.n;
            while (lo < hi) {
                const size_t mid = (lo + hi) / 2;
                if (n - clean.before[mid] > suf)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            conv = lo < clean.n ? clean.off[lo] : len;
        }
        if (in_place && conv > pos && conv - pos > s->worst_distance)
            s->worst_distance = conv - pos;
        if (kind == K_TRUNC)
            assert_true(reported);
        if (!lost)
            s->harmless++;
        else if (!reported)
            s->silent++;
        else if (suf > 0 && conv < len)
            s->recovered++;
        else
            s->no_restart++;
        follow_free(&bad);
    }
    print_message("bugfix-exact-match, trace ID 0x%x, %" PRIu64 " instructions\n", id, n);
    print_message("%-13s %5s %8s %9s %10s %6s %8s %10s %8s %9s\n", "damage", "count", "reported",
                  "recovered", "no-restart", "silent", "harmless", "insns lost", "worst",
                  "distance");
    for (int i = 0; i < NK; i++)
        print_message("%-13s %5lu %8lu %9lu %10lu %6lu %8lu %9.2f%% %8" PRIu64 " %9" PRIu64 "\n",
                      knames[i], ks[i].mutations, ks[i].reported, ks[i].recovered, ks[i].no_restart,
                      ks[i].silent, ks[i].harmless,
                      ks[i].clean ? 100.0 * (double)ks[i].lost / (double)ks[i].clean : 0.0,
                      ks[i].lost_max, ks[i].worst_distance);
    free(buf);
    free(clean_buf);
    follow_free(&clean);
    follow_free(w);
    free(w);
    tk_cs_snapshot_free(ss);
    free(dir);
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_etm4_corruption)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
