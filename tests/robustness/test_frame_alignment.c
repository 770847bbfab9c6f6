/* SPDX-License-Identifier: BSD-2-Clause */
/* Can the formatter frame alignment of an ETB buffer be re-found after dropped bytes?
 * (docs/robustness.md, "ETB frame alignment".) A measurement on real buffers, kept as a test
 * so that the figures the page gives stay true.
 *
 * An ETB/ETR buffer is a sequence of 16-byte formatter frames (CoreSight Architecture
 * Specification v3.0, §D4.2) with no synchronisation pattern: after k dropped bytes every later
 * frame is read k bytes off. Seeded trials drop 1 to 15 bytes at a random place; the 16 frame
 * alignments that follow are then judged two ways over 1024 frames (16 KiB):
 *  - frame level: every ID byte (an even byte with bit 0 set) names a source of the snapshot
 *    or the null source 0. This is what a deformatter alone can check;
 *  - content level: deformatted with a fresh deformatter, each ETMv4 source's bytes are parsed
 *    from scratch and at least one of them finds an A-Sync (IHI0064 §6.4.2), with no error
 *    after it but a cut last packet.
 * Found: the frame-level check rejects every odd alignment and accepts the true one, but also
 * (nearly) every wrong even one: data bytes at even positions have bit 0 clear (it is moved to
 * the auxiliary byte), so a frame read 2, 4 .. 14 bytes off looks as well formed as the right
 * one and any choice among the eight is a guess. The content check accepts the true alignment
 * and no wrong one.
 *
 * test_realign then checks tk_cs_frame_align (src/coresight/frame_align.c), the search built
 * on that finding, on damaged copies of the buffers: 1-15 bytes dropped or inserted, the
 * search started anywhere after the damage; it must return the true alignment every time.
 * On a window without a sync (zeros) it must find nothing rather than guess. */
#include "testutil.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coresight/frame_align.h"
#include "tracekit/coresight.h"
#include "tracekit/etm4.h"

#define TRIALS 40
#define FRAMES 1024

/* The content check on frames f[0 .. FRAMES*16): the library's (tk_cs_etm4_probe_check, the
 * one tk_etm4_run_snapshot searches with). */
static bool content_ok(tk_cs_etm4_probe *x, const uint8_t *f)
{
    return tk_cs_etm4_probe_check(x, f, FRAMES * 16);
}

typedef struct judge {
    tk_cs_etm4_probe *x;
    const uint8_t *base; /* where shift 0 starts, for the per-shift counts */
    unsigned calls;
    unsigned pass[16];
} judge;

/* tk_cs_frames_check_fn: the content check on any window, counted per shift from base */
static bool content_check(void *ctx, const uint8_t *f, size_t n)
{
    judge *j = ctx;
    j->calls++;
    const bool ok = tk_cs_etm4_probe_check(j->x, f, n);
    if (ok && j->base && f >= j->base && f - j->base < 16)
        j->pass[f - j->base]++;
    return ok;
}

static bool frames_ok(const bool known[128], const uint8_t *f)
{
    for (size_t k = 0; k < FRAMES * 16; k += 2)
        if ((k & 15) != 15 && (f[k] & 1) && (f[k] >> 1) && !known[f[k] >> 1])
            return false;
    return true;
}

static void measure(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "opencsd/snapshots/%s", name);
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (!dir || tk_cs_snapshot_load(dir, &ss, &diag) != TK_OK) {
        print_message("%s: not found, skipped\n", name);
        free(dir);
        return;
    }
    const int b = tk_cs_snapshot_default_buffer(ss);
    assert_true(b >= 0);
    assert_int_equal(ss->buffers[b].format, TK_CS_FMT_FRAMED);
    size_t len = 0;
    uint8_t *buf = tk_test_read_file(ss->buffers[b].path, &len);
    assert_non_null(buf);
    assert_true(len > 4096 + 16 * FRAMES * 2 + 16);
    bool known[128];
    tk_cs_etm4_probe *x = NULL;
    assert_int_equal(tk_cs_etm4_probe_new(ss, b, known, &x), TK_OK);

    uint8_t *f = malloc(FRAMES * 16);
    assert_non_null(f);
    unsigned frame_pass[16] = {0}, content_pass[16] = {0};
    uint64_t rng = 0x853c49e6748fea9bull;
    for (unsigned t = 0; t < TRIALS; t++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const size_t pos = 4096 + (size_t)((rng >> 24) % (len - 4096 - 16 * FRAMES * 2));
        const size_t k = 1 + (size_t)((rng >> 8) % 15); /* bytes dropped at pos */
        /* the first whole frame after the damage starts at next in the buffer, next - k in the
         * damaged one (byte i of which is buf[i] before pos, buf[i + k] from pos on) */
        const size_t next = (pos / 16 + 1) * 16, at = next - k;
        for (unsigned s = 0; s < 16; s++) {
            /* alignment s: frames read from damaged index at + s (s = 0: the true one) */
            for (size_t j = 0; j < FRAMES * 16; j++)
                f[j] = buf[at + s + j + k];
            frame_pass[s] += frames_ok(known, f);
            content_pass[s] += content_ok(x, f);
        }
    }
    print_message("%s, %d trials of 1-15 dropped bytes, %d frames per alignment:\n"
                  "offset from the true alignment: frame-level check passed / content check "
                  "passed\n",
                  name, TRIALS, FRAMES);
    for (unsigned s = 0; s < 16; s++)
        print_message("  %2u: %2u / %2u\n", s, frame_pass[s], content_pass[s]);
    /* the true alignment passes both */
    assert_int_equal(frame_pass[0], TRIALS);
    assert_int_equal(content_pass[0], TRIALS);
    for (unsigned s = 1; s < 16; s++) {
        /* the content check never accepts a wrong alignment */
        assert_int_equal(content_pass[s], 0);
        /* the frame-level check rejects the odd ones, and cannot tell the even ones */
        if (s & 1)
            assert_int_equal(frame_pass[s], 0);
        else
            assert_true(frame_pass[s] >= TRIALS * 9 / 10);
    }
    free(f);
    free(buf);
    tk_cs_etm4_probe_free(x);
    tk_cs_snapshot_free(ss);
    free(dir);
}

/* The search on damaged copies of snapshot name's buffer. */
static void realign(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "opencsd/snapshots/%s", name);
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (!dir || tk_cs_snapshot_load(dir, &ss, &diag) != TK_OK) {
        free(dir);
        return;
    }
    const int b = tk_cs_snapshot_default_buffer(ss);
    size_t len = 0;
    uint8_t *buf = tk_test_read_file(ss->buffers[b].path, &len);
    assert_non_null(buf);
    bool known[128];
    judge j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(tk_cs_etm4_probe_new(ss, b, known, &j.x), TK_OK);
    uint8_t *dmg = malloc(len + 16);
    assert_non_null(dmg);
    uint64_t rng = 0x2545f4914f6cdd1dull;
    unsigned found = 0;
    for (unsigned t = 0; t < TRIALS; t++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const size_t pos = 4096 + (size_t)((rng >> 24) % (len - 4096 - 16 * FRAMES * 2));
        const size_t k = 1 + (size_t)((rng >> 8) % 15);
        const bool insert = (rng >> 40) & 1;
        /* damaged copy: k bytes dropped at pos, or k bytes of the trace repeated there */
        size_t dlen;
        memcpy(dmg, buf, pos);
        if (insert) {
            memcpy(dmg + pos, buf + pos - k, len - pos);
            dmg[pos] ^= 0x5a; /* not a plain repeat */
            dlen = len + k;
        } else {
            memcpy(dmg + pos, buf + pos + k, len - pos - k);
            dlen = len - k;
        }
        /* frames of the original from `next` on start at next - k (dropped) or next + k
         * (inserted) in the copy */
        const size_t next = (pos / 16 + 1) * 16, truth = insert ? next + k : next - k;
        /* the search may start anywhere after the damage */
        const size_t from = pos + 1 + (size_t)((rng >> 48) % 64);
        size_t at = 0;
        assert_int_equal(
            tk_cs_frame_align(dmg, dlen, from, FRAMES * 16, known, content_check, &j, &at), TK_OK);
        if (at < from || at - from >= 16 || (at - truth) % 16 != 0)
            fail_msg("%s: %zu bytes %s at %zu: alignment found at %zu, the frames start at "
                     "%zu + 16n",
                     name, k, insert ? "inserted" : "dropped", pos, at, truth);
        found++;
    }
    /* no content to decide by: nothing is guessed */
    memset(dmg, 0, FRAMES * 16 + 16);
    size_t at = 0;
    assert_int_equal(
        tk_cs_frame_align(dmg, FRAMES * 16 + 16, 0, FRAMES * 16, known, content_check, &j, &at),
        TK_ERR_NO_SYNC);
    print_message("%s: alignment re-found after %u damages (1-15 bytes dropped or inserted), "
                  "always the true one; %u windows parsed (odd shifts rejected by their ID "
                  "bytes first)\n",
                  name, found, j.calls);
    free(dmg);
    free(buf);
    tk_cs_etm4_probe_free(j.x);
    tk_cs_snapshot_free(ss);
    free(dir);
}

/* How small can the window be? At frame-aligned places of the clean buffer, the 16 positions
 * are judged as tk_cs_frame_align does (ID bytes, then the content check) over windows of
 * 128 B .. 16 KiB: a pass at a wrong position is a false positive (the search would then give
 * up, several passing, or worse pick it when the true one fails), a pass at the true one is a
 * chance to recover (an A-Sync in the window). */
#define WSIZES 8
static void window_sizes(const char *name, unsigned trials, unsigned long wrong[WSIZES],
                         unsigned long right[WSIZES], unsigned long *total)
{
    char rel[256];
    snprintf(rel, sizeof(rel), "opencsd/snapshots/%s", name);
    char *dir = tk_test_data_path(rel);
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    if (!dir || tk_cs_snapshot_load(dir, &ss, &diag) != TK_OK) {
        free(dir);
        return;
    }
    const int b = tk_cs_snapshot_default_buffer(ss);
    size_t len = 0;
    uint8_t *buf = tk_test_read_file(ss->buffers[b].path, &len);
    assert_non_null(buf);
    bool known[128];
    judge j;
    memset(&j, 0, sizeof(j));
    assert_int_equal(tk_cs_etm4_probe_new(ss, b, known, &j.x), TK_OK);
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    print_message("%s, %u frame-aligned places, 16 positions each: window / true position "
                  "passes / a wrong one passes\n",
                  name, trials);
    for (unsigned w = 0; w < WSIZES; w++) {
        const size_t window = (size_t)128 << w;
        unsigned long ok = 0, bad = 0;
        for (unsigned t = 0; t < trials; t++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            const size_t p = (size_t)((rng >> 24) % (len - window - 16)) / 16 * 16;
            memset(j.pass, 0, sizeof(j.pass));
            j.base = buf + p;
            size_t at;
            unsigned passed;
            (void)tk_cs_frame_align_n(buf, len, p, window, known, content_check, &j, &at, &passed);
            ok += j.pass[0];
            bool any = false;
            for (unsigned s = 1; s < 16; s++)
                any |= j.pass[s] != 0;
            bad += any;
        }
        print_message("  %6zu: %4lu / %4lu\n", window, ok, bad);
        /* no false positive from half the least window the pipeline searches with */
        if (window >= TK_CS_ALIGN_WINDOW_MIN / 2)
            assert_int_equal(bad, 0);
        /* the full window always holds an A-Sync and its Trace Info on these buffers */
        if (window == TK_CS_ALIGN_WINDOW)
            assert_int_equal(ok, trials);
        wrong[w] += bad;
        right[w] += ok;
    }
    *total += trials;
    free(buf);
    tk_cs_etm4_probe_free(j.x);
    tk_cs_snapshot_free(ss);
    free(dir);
}

static void test_window_sizes(void **state)
{
    (void)state;
    unsigned long wrong[WSIZES] = {0}, right[WSIZES] = {0}, total = 0;
#if defined(__SANITIZE_ADDRESS__)
    const unsigned trials = 50;
#else
    const unsigned trials = 400;
#endif
    window_sizes("bugfix-exact-match", trials, wrong, right, &total);
    window_sizes("juno_r1_1", trials, wrong, right, &total);
    if (!total)
        skip();
    print_message("both: window / places where the true position passes / where a wrong one "
                  "does, of %lu\n",
                  total);
    for (unsigned w = 0; w < WSIZES; w++)
        print_message("  %6u: %4lu / %lu\n", 128u << w, right[w], wrong[w]);
}

static void test_realign(void **state)
{
    (void)state;
    realign("bugfix-exact-match");
    realign("juno_r1_1");
}

static void test_frame_alignment(void **state)
{
    (void)state;
    measure("bugfix-exact-match"); /* six ETMv4 sources */
    measure("juno_r1_1");          /* ETMv4 sources of a Juno board, kernel trace */
}

int main(void)
{
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_window_sizes),
                                       cmocka_unit_test(test_frame_alignment),
                                       cmocka_unit_test(test_realign)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
