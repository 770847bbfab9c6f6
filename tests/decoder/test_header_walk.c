/* SPDX-License-Identifier: BSD-2-Clause */
/* The header walk (src/etrace/header_walk.h) ends where following the headers one by one
 * ends, with the same count, and reads nothing at or past its limit: on random buffers of
 * every kind (bytes, short trace-like packets, padding, all lengths 0-31, stretches that end
 * inside a packet), on every reference trace, and on periodic buffers on which walks started
 * at different bytes never meet, so that every join falls back to walking on. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etrace/header_walk.h"
#include "testutil.h"

/* The definition: the loop the parallel cutter ran before. */
static size_t walk_ref(const uint8_t *buf, size_t pos, size_t limit, uint64_t *index)
{
    while (pos < limit) {
        const unsigned n = buf[pos] & 0x1fu;
        pos += 1 + n;
        *index += n != 0;
    }
    return pos;
}

/* Walks buf[pos, limit) both ways and compares; the walk gets a copy of exactly the bytes
 * below limit (under ASan a read at or past limit fails). Returns the end position. */
static size_t check_walk(const uint8_t *buf, size_t pos, size_t limit, const char *what)
{
    uint8_t *own = malloc(limit ? limit : 1);
    assert_non_null(own);
    if (limit)
        memcpy(own, buf, limit);
    uint64_t want_index = 1000, got_index = 1000; /* counts are added, not stored */
    const size_t want = walk_ref(buf, pos, limit, &want_index);
    const size_t got = tk_te_walk_headers(own, pos, limit, &got_index);
    free(own);
    if (want != got || want_index != got_index)
        fail_msg("%s: walk [%zu, %zu) ends at %zu with %llu headers, expected %zu with %llu", what,
                 pos, limit, got, (unsigned long long)(got_index - 1000), want,
                 (unsigned long long)(want_index - 1000));
    return want;
}

/* A header byte of the given kind: 0 any byte, 1 a short packet (lengths 1-8 as trace has),
 * 2 mostly padding, 3 a length of 0-31 drawn evenly over a random flow type. */
static uint8_t random_byte(uint64_t *s, unsigned kind)
{
    const uint64_t r = tk_test_xorshift64star(s);
    switch (kind) {
    case 1:
        return (uint8_t)((r >> 8) & 0xe0u) | (uint8_t)(1 + r % 8);
    case 2:
        return r % 4 ? (uint8_t)((r >> 8) & 0xe0u) : (uint8_t)(r >> 16);
    case 3:
        return (uint8_t)((r >> 8) & 0xe0u) | (uint8_t)(r % 32);
    default:
        return (uint8_t)(r >> 24);
    }
}

static void test_random_buffers(void **state)
{
    (void)state;
    enum { MAX_LEN = 70000 };
    uint8_t *buf = malloc(MAX_LEN);
    assert_non_null(buf);
    size_t long_walks = 0;
    for (uint64_t seed = 1; seed <= 600; seed++) {
        uint64_t s = seed * 0x9e3779b97f4a7c15ull;
        /* short buffers, and long ones that the walk splits (sizes around 4 x 4096 too) */
        const size_t len = seed % 3 == 0   ? tk_test_xorshift64star(&s) % 300
                           : seed % 3 == 1 ? 16000 + tk_test_xorshift64star(&s) % 800
                                           : tk_test_xorshift64star(&s) % MAX_LEN;
        const unsigned kind = (unsigned)(seed % 4);
        for (size_t i = 0; i < len; i++)
            buf[i] = random_byte(&s, kind);
        /* mixed kinds in one buffer: stretches of padding inside short packets */
        if (seed % 5 == 0)
            for (size_t i = 0; i + 1 < len; i += 1 + tk_test_xorshift64star(&s) % 4000) {
                const size_t n = tk_test_xorshift64star(&s) % 600;
                for (size_t k = i; k < len && k < i + n; k++)
                    buf[k] = random_byte(&s, 2);
            }
        char what[64];
        snprintf(what, sizeof(what), "seed %llu kind %u", (unsigned long long)seed, kind);
        for (int t = 0; t < 8; t++) {
            const size_t limit = t == 0 ? len : (size_t)(tk_test_xorshift64star(&s) % (len + 1));
            const size_t pos = t < 2 ? 0 : (size_t)(tk_test_xorshift64star(&s) % (limit + 40));
            const size_t end = check_walk(buf, pos, limit, what);
            if (limit > pos + 16384)
                long_walks++;
            /* the walk may end inside a packet past limit, or past len */
            assert_true(pos >= limit || end >= limit);
            assert_true(pos >= limit || end < limit + 32);
        }
        /* the cutter's use: the limit 31 bytes short of a piece end */
        if (len > 31)
            check_walk(buf, 0, len - 31, what);
    }
    free(buf);
    /* a good share took the split walk */
    assert_true(long_walks > 200);
}

/* Walks that never meet: every byte 0x01 (a packet every two bytes) puts a walk started at an
 * odd byte off the true walk for ever; every byte 0x1f (32 bytes a packet) does the same for
 * all starts not a multiple of 32 apart; 0x01 stretches then padding meet only after the
 * recorded positions. Each at many lengths, so that the segments start at both parities. */
static void test_walks_that_never_meet(void **state)
{
    (void)state;
    enum { LEN = 40000 };
    uint8_t *buf = malloc(LEN);
    assert_non_null(buf);
    static const uint8_t fills[] = {0x01, 0x1f, 0x5f, 0x02, 0x00, 0xe0};
    for (size_t f = 0; f < sizeof(fills); f++) {
        memset(buf, fills[f], LEN);
        for (size_t limit = 16384; limit <= LEN; limit += 997) {
            char what[64];
            snprintf(what, sizeof(what), "fill 0x%02x", fills[f]);
            for (size_t pos = 0; pos < 5; pos++)
                check_walk(buf, pos, limit - pos % 3, what);
        }
    }
    /* 2000 bytes of 0x01, 500 of padding, again and again: a walk started at the other
     * parity meets the true one only in the padding, long after its recorded positions */
    for (size_t i = 0; i < LEN; i++)
        buf[i] = i % 2500 < 2000 ? 0x01 : 0x00;
    for (size_t limit = 16384; limit <= LEN; limit += 1013)
        for (size_t pos = 0; pos < 4; pos++)
            check_walk(buf, pos, limit, "0x01 then padding");
    free(buf);
}

/* Every .te_inst_raw below dir (the reference traces), walked from several starts to several
 * limits. */
typedef struct traces {
    size_t files, walks;
} traces;

static void walk_trace_file(const char *path, traces *t)
{
    size_t len;
    uint8_t *buf = tk_test_read_file(path, &len);
    if (!buf)
        fail_msg("%s: cannot read", path);
    t->files++;
    uint64_t s = len;
    for (int k = 0; k < 12; k++) {
        const size_t limit = k == 0               ? len
                             : k == 1 && len > 31 ? len - 31
                                                  : tk_test_xorshift64star(&s) % (len + 1);
        /* from the first header, or from any byte (as the split walk starts) */
        const size_t pos = k < 4 ? 0 : tk_test_xorshift64star(&s) % (limit + 1);
        check_walk(buf, pos, limit, path);
        t->walks++;
    }
    free(buf);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void walk_traces_below(const char *dir, traces *t)
{
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    struct dirent *de;
    while ((de = readdir(dh))) {
        if (de->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        const size_t n = strlen(de->d_name), suffix = strlen(".te_inst_raw");
        if (is_dir(path))
            walk_traces_below(path, t);
        else if (n > suffix && strcmp(de->d_name + n - suffix, ".te_inst_raw") == 0)
            walk_trace_file(path, t);
    }
    closedir(dh);
}

static void test_reference_traces(void **state)
{
    (void)state;
    char *dir = tk_test_data_path("etrace-ref");
    if (!tk_test_data_present() || !is_dir(dir)) {
        print_message("skipped: no reference traces at %s\n", dir);
        free(dir);
        skip();
    }
    traces t = {0};
    walk_traces_below(dir, &t);
    free(dir);
    print_message("%zu reference traces, %zu walks\n", t.files, t.walks);
    assert_true(t.files >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_buffers),
        cmocka_unit_test(test_walks_that_never_meet),
        cmocka_unit_test(test_reference_traces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
