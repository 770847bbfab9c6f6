/* SPDX-License-Identifier: BSD-2-Clause */
/* Frame deformatter (CoreSight Architecture v3.0 §D4.2): hand-built frames, FSYNC handling,
 * errors with offsets, and streaming in small pieces on real captures. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/coresight.h"

typedef struct run {
    uint8_t id;
    uint64_t index;
    uint8_t data[16];
    size_t n;
} run;

typedef struct sink {
    run runs[4096];
    size_t nruns;
    uint8_t *bytes[128];  /* per-ID concatenation, for the streaming test */
    uint64_t *where[128]; /* per-ID index of each byte (index + k) */
    size_t nbytes[128];
    uint64_t err_off[16];
    tk_status err[16];
    size_t nerr;
} sink;

static tk_status on_data(void *ctx, uint8_t id, const uint8_t *d, size_t n, uint64_t index)
{
    sink *s = ctx;
    if (s->nruns < 4096) {
        run *r = &s->runs[s->nruns++];
        r->id = id;
        r->index = index;
        r->n = n;
        memcpy(r->data, d, n);
    }
    s->bytes[id] = realloc(s->bytes[id], s->nbytes[id] + n);
    s->where[id] = realloc(s->where[id], (s->nbytes[id] + n) * sizeof(uint64_t));
    memcpy(s->bytes[id] + s->nbytes[id], d, n);
    for (size_t k = 0; k < n; k++)
        s->where[id][s->nbytes[id] + k] = index + k;
    s->nbytes[id] += n;
    return TK_OK;
}

static tk_status on_error(void *ctx, tk_status st, uint64_t off, const char *msg)
{
    sink *s = ctx;
    (void)msg;
    if (s->nerr < 16) {
        s->err[s->nerr] = st;
        s->err_off[s->nerr++] = off;
    }
    return TK_OK;
}

static sink *run_frames(unsigned flags, const uint8_t *buf, size_t len, size_t chunk)
{
    sink *s = calloc(1, sizeof(*s));
    tk_cs_deformatter *d;
    assert_int_equal(tk_cs_deformatter_new(flags, on_data, on_error, s, &d), TK_OK);
    for (size_t off = 0; off < len; off += chunk)
        assert_int_equal(tk_cs_deformat(d, buf + off, len - off < chunk ? len - off : chunk),
                         TK_OK);
    assert_int_equal(tk_cs_deformat_end(d), TK_OK);
    tk_cs_deformatter_free(d);
    return s;
}

static void free_sink(sink *s)
{
    for (int i = 0; i < 128; i++) {
        free(s->bytes[i]);
        free(s->where[i]);
    }
    free(s);
}

/* ID 0x10 at byte 0, then data; the auxiliary byte supplies bit 0 of even data bytes. */
static void test_single_id(void **state)
{
    (void)state;
    uint8_t f[16] = {0x21, 0xa1, 0x02, 0xa3, 0x04, 0xa5, 0x06, 0xa7,
                     0x08, 0xa9, 0x0a, 0xab, 0x0c, 0xad, 0x0e, 0x00};
    f[15] = 0x02 | 0x80; /* byte 2 -> 0x03, byte 14 -> 0x0f */
    sink *s = run_frames(0, f, 16, 16);
    assert_int_equal(s->nruns, 1);
    assert_int_equal(s->runs[0].id, 0x10);
    assert_int_equal(s->runs[0].index, 0);
    assert_int_equal(s->runs[0].n, 14);
    const uint8_t want[14] = {0xa1, 0x03, 0xa3, 0x04, 0xa5, 0x06, 0xa7,
                              0x08, 0xa9, 0x0a, 0xab, 0x0c, 0xad, 0x0f};
    assert_memory_equal(s->runs[0].data, want, 14);
    free_sink(s);
}

/* Frames without an ID byte (the deformatter's whole-frame path): every auxiliary byte value,
 * so each of its 8 bits must land in bit 0 of even byte 2k (§D4.2), the odd bytes pass
 * unchanged and each frame is one run attributed to the frame start. */
static void test_data_frames_aux(void **state)
{
    (void)state;
    enum { NF = 1 + 256 };
    uint8_t *buf = malloc(NF * 16);
    uint8_t want[256][15];
    uint32_t x = 12345;
    memset(buf, 0, 16);
    buf[0] = 0x21; /* ID 0x10, then 14 zero data bytes (aux bits clear) */
    for (int j = 0; j < 256; j++) {
        uint8_t *f = buf + 16 * (j + 1);
        for (int k = 0; k < 15; k++) {
            x = x * 1103515245u + 12345u;
            uint8_t v = (uint8_t)(x >> 16);
            f[k] = (k & 1) ? v : (uint8_t)(v & 0xfe);
            want[j][k] = (k & 1) ? f[k] : (uint8_t)(f[k] | ((j >> (k / 2)) & 1));
        }
        f[15] = (uint8_t)j;
    }
    sink *s = run_frames(0, buf, NF * 16, NF * 16);
    assert_int_equal(s->nruns, NF);
    for (int j = 0; j < 256; j++) {
        const run *r = &s->runs[j + 1];
        assert_int_equal(r->id, 0x10);
        assert_int_equal(r->index, 16 * (j + 1));
        assert_int_equal(r->n, 15);
        assert_memory_equal(r->data, want[j], 15);
    }
    free_sink(s);
    free(buf);
}

/* An ID change whose auxiliary bit is set leaves the next byte to the previous ID; the new
 * run is attributed to the ID byte's position. */
static void test_id_change(void **state)
{
    (void)state;
    uint8_t f[32] = {0x21, 0x11, 0x12, 0x13, 0x25, 0x14, 0x22, 0x23,
                     0x23, 0x15, 0x24, 0x25, 0x26, 0x27, 0x23, 0x00};
    f[15] = 1 << 2; /* ID byte at 4 (ID 0x12): next byte 0x14 still belongs to ID 0x10 */
    /* byte 8: ID 0x11 with aux bit clear: byte 9 belongs to 0x11; byte 14: ID 0x11 again. */
    /* second frame: no ID byte, data continues for ID 0x11 */
    const uint8_t f2[16] = {0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
                            0x38, 0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x00};
    memcpy(f + 16, f2, 16);
    sink *s = run_frames(0, f, 32, 32);
    assert_int_equal(s->nruns, 4);
    assert_int_equal(s->runs[0].id, 0x10);
    assert_int_equal(s->runs[0].n, 4); /* 11 12 13 14 */
    assert_int_equal(s->runs[0].data[3], 0x14);
    assert_int_equal(s->runs[1].id, 0x12);
    assert_int_equal(s->runs[1].index, 4);
    assert_int_equal(s->runs[1].n, 2); /* 22 23 */
    assert_int_equal(s->runs[2].id, 0x11);
    assert_int_equal(s->runs[2].index, 8);
    assert_int_equal(s->runs[2].n, 5); /* 15 24 25 26 27 */
    assert_int_equal(s->runs[3].id, 0x11);
    assert_int_equal(s->runs[3].index, 16);
    assert_int_equal(s->runs[3].n, 15);
    free_sink(s);
}

/* A frame whose only ID byte restates the current source (formatters repeat it every few
 * frames): the ID byte is dropped wherever it is, its auxiliary bit ignored, the 14 other
 * bytes (even ones with their auxiliary bit) are one run at the frame start. */
static void test_restated_id(void **state)
{
    (void)state;
    enum { NF = 1 + 8 * 4 };
    uint8_t *buf = calloc(NF, 16);
    uint8_t want[NF][14];
    uint32_t x = 777;
    buf[0] = 0x21; /* ID 0x10 */
    for (int j = 1; j < NF; j++) {
        uint8_t *f = buf + 16 * j;
        int idpos = 2 * ((j - 1) % 8);
        x = x * 1103515245u + 12345u;
        f[15] = (uint8_t)(x >> 16);
        int n = 0;
        for (int k = 0; k < 15; k++) {
            x = x * 1103515245u + 12345u;
            uint8_t v = (uint8_t)(x >> 16);
            if (k == idpos) {
                f[k] = 0x21;
                continue;
            }
            f[k] = (k & 1) ? v : (uint8_t)(v & 0xfe);
            want[j][n++] = (k & 1) ? f[k] : (uint8_t)(f[k] | ((f[15] >> (k / 2)) & 1));
        }
    }
    sink *s = run_frames(0, buf, NF * 16, NF * 16);
    assert_int_equal(s->nruns, NF);
    for (int j = 1; j < NF; j++) {
        const run *r = &s->runs[j];
        assert_int_equal(r->id, 0x10);
        assert_int_equal(r->index, 16 * j);
        assert_int_equal(r->n, 14);
        assert_memory_equal(r->data, want[j], 14);
    }
    free_sink(s);
    free(buf);
}

static void test_truncated(void **state)
{
    (void)state;
    uint8_t f[40];
    memset(f, 0, sizeof(f));
    f[0] = 0x21;
    f[16] = 0x21;
    sink *s = run_frames(0, f, 40, 40); /* 2 frames + 8 bytes */
    assert_int_equal(s->nerr, 1);
    assert_int_equal(s->err[0], TK_ERR_TRUNCATED);
    assert_int_equal(s->err_off[0], 32);
    assert_int_equal(s->nbytes[0x10], 28);
    free_sink(s);
}

/* DSTREAM: bytes before the first FSYNC are skipped, FSYNCs between frames are dropped, an
 * FSYNC start inside a frame is an error at its offset and framing resumes at the next FSYNC. */
static void test_fsync(void **state)
{
    (void)state;
    uint8_t b[128];
    size_t n = 0;
    b[n++] = 0x55; /* junk */
    b[n++] = 0x66;
    const uint8_t fs[4] = {0xff, 0xff, 0xff, 0x7f};
    memcpy(b + n, fs, 4), n += 4;
    for (int i = 0; i < 16; i++)
        b[n++] = i == 0 ? 0x21 : (i == 15 ? 0 : 0x40 + i * 2);
    memcpy(b + n, fs, 4), n += 4;
    memcpy(b + n, fs, 4), n += 4;
    size_t bad_frame = n;
    for (int i = 0; i < 16; i++)
        b[n++] = i == 6 || i == 7 ? 0xff : 0x10; /* 0xffff pair at frame offset 6 */
    memcpy(b + n, fs, 4), n += 4;
    size_t good = n;
    for (int i = 0; i < 16; i++)
        b[n++] = i == 0 ? 0x23 : (i == 15 ? 0 : 0x50);
    sink *s = run_frames(TK_CS_DEFMT_FSYNC, b, n, n);
    assert_int_equal(s->nerr, 1);
    assert_int_equal(s->err_off[0], bad_frame + 6);
    assert_int_equal(s->nbytes[0x10], 14);
    assert_int_equal(s->nbytes[0x11], 14);
    assert_int_equal(s->runs[0].index, 6);
    assert_int_equal(s->runs[s->nruns - 1].index, good);
    free_sink(s);
}

/* Two runs gave the same bytes at the same indices and the same errors. */
static void same_sink(const sink *a, const sink *b)
{
    for (int id = 0; id < 128; id++) {
        assert_int_equal(a->nbytes[id], b->nbytes[id]);
        if (a->nbytes[id]) {
            assert_memory_equal(a->bytes[id], b->bytes[id], a->nbytes[id]);
            assert_memory_equal(a->where[id], b->where[id], a->nbytes[id] * sizeof(uint64_t));
        }
    }
    assert_int_equal(a->nerr, b->nerr);
    for (size_t e = 0; e < a->nerr && e < 16; e++)
        assert_int_equal(a->err_off[e], b->err_off[e]);
}

/* DSTREAM capture files: the 8-byte footer of each 512-byte block is not trace. The bytes of
 * each source are those of the trace without footers, each byte's index is its file offset,
 * errors give file offsets, and any split of the input gives the same result. */
static void test_dstream_blocks(void **state)
{
    (void)state;
    enum { NFRAMES = 150 };
    static uint8_t t[NFRAMES * 20];
    size_t n = 0;
    for (int f = 0; f < NFRAMES; f++) {
        static const uint8_t fs[4] = {0xff, 0xff, 0xff, 0x7f};
        if (f % 3 == 0) /* FSYNCs every few frames, so frames also sit back to back */
            memcpy(t + n, fs, 4), n += 4;
        for (int i = 0; i < 16; i++) /* ID 0x10 or 0x11 at byte 0, then data */
            t[n++] = i == 0 ? (uint8_t)(0x21 + (f & 1) * 2)
                            : (i == 15 ? 0 : (uint8_t)((f * 16 + i) << 1));
    }
    size_t len;
    uint8_t *file = tk_test_dstream_file(t, n, &len);
    assert_true(len > 5 * 512);
    sink *ref = run_frames(TK_CS_DEFMT_FSYNC, t, n, n);
    assert_int_equal(ref->nerr, 0);
    const unsigned flags = TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_DSTREAM_BLOCKS;
    /* Without dropping the footers, they are framing errors. */
    sink *bad = run_frames(TK_CS_DEFMT_FSYNC, file, len, len);
    assert_true(bad->nerr > 0);
    free_sink(bad);
    for (size_t chunk = 1; chunk <= len; chunk = chunk * 3 + 2) {
        sink *s = run_frames(flags, file, len, chunk);
        assert_int_equal(s->nerr, 0);
        for (int id = 0x10; id <= 0x11; id++) {
            assert_int_equal(s->nbytes[id], ref->nbytes[id]);
            assert_memory_equal(s->bytes[id], ref->bytes[id], s->nbytes[id]);
            for (size_t k = 0; k < s->nbytes[id]; k++)
                assert_int_equal(s->where[id][k], tk_test_dstream_offset(ref->where[id][k]));
        }
        free_sink(s);
    }
    free_sink(ref);

    /* A last partial block is trace up to its 504th byte: cut in the footer, the file reads
     * as if cut before it; cut after 100 bytes of a block, those are the trace's next 100.
     * The cuts are made in the file's last whole block, so that they stay inside the file
     * (its own last block may be shorter than 100 bytes). */
    size_t last = (len / 512 - 1) * 512;
    sink *a = run_frames(flags, file, last - 8, 100), *b = run_frames(flags, file, last - 3, 100);
    same_sink(a, b);
    free_sink(a);
    free_sink(b);
    /* a cut about 100 bytes into the block, moved on until it falls inside a frame */
    size_t cut = 100;
    for (;; cut++) {
        b = run_frames(TK_CS_DEFMT_FSYNC, t, last / 512 * 504 + cut, 100);
        if (b->nerr == 1)
            break;
        free_sink(b);
    }
    assert_true(cut < 504);
    a = run_frames(flags, file, last + cut, 100);
    assert_int_equal(a->nerr, 1); /* cut inside a frame */
    assert_int_equal(a->err_off[0], tk_test_dstream_offset(b->err_off[0]));
    for (size_t k = 0; k < b->nbytes[0x10]; k++)
        assert_int_equal(a->where[0x10][k], tk_test_dstream_offset(b->where[0x10][k]));
    assert_int_equal(a->nbytes[0x10], b->nbytes[0x10]);
    free_sink(a);
    free_sink(b);

    /* An error after a footer is reported at its offset in the file. */
    size_t at = 2 * 504 + 40; /* in the third block of the trace */
    while (t[at] == 0xff || t[at + 1] == 0xff || (at & 1))
        at++;
    t[at] = t[at + 1] = 0xff;
    free(file);
    file = tk_test_dstream_file(t, n, &len);
    sink *s = run_frames(flags, file, len, 7);
    assert_int_equal(s->nerr, 1);
    assert_int_equal(s->err_off[0], tk_test_dstream_offset(at));
    assert_int_equal(s->err_off[0], at + 16);
    free_sink(s);
    free(file);
}

/* Feeding a real capture in small pieces gives the same per-ID streams, at the same indices,
 * as in one piece. */
static void stream_same(const char *rel, unsigned flags)
{
    char *path = tk_test_data_path(rel);
    size_t len;
    uint8_t *buf = tk_test_read_file(path, &len);
    free(path);
    assert_non_null(buf);
    sink *whole = run_frames(flags, buf, len, len);
    size_t total = 0;
    for (size_t chunk = 1; chunk <= 23; chunk += 11) {
        sink *s = run_frames(flags, buf, len, chunk);
        same_sink(s, whole);
        for (int id = 0; id < 128; id++)
            total += s->nbytes[id];
        free_sink(s);
    }
    assert_true(total > 0);
    free_sink(whole);
    free(buf);
}

static void test_streaming(void **state)
{
    (void)state;
    stream_same("opencsd/snapshots/juno_r1_1/cstrace.bin", 0);
    stream_same("opencsd/snapshots/a55-test-tpiu/DSTREAM_0.bin",
                TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_DSTREAM_BLOCKS);
}

/* a55-test-tpiu, a DSTREAM capture of 96 blocks: with the footers dropped, the only framing
 * error is the frame cut by the end of the capture (at 49132, in the last block; OpenCSD
 * reports nothing there). Read as plain FSYNC framing, the footers give errors in nearly
 * every block. */
static void test_dstream_capture(void **state)
{
    (void)state;
    char *path = tk_test_data_path("opencsd/snapshots/a55-test-tpiu/DSTREAM_0.bin");
    size_t len;
    uint8_t *buf = tk_test_read_file(path, &len);
    free(path);
    assert_non_null(buf);
    assert_int_equal(len, 96 * 512);
    sink *s = run_frames(TK_CS_DEFMT_FSYNC | TK_CS_DEFMT_DSTREAM_BLOCKS, buf, len, len);
    assert_int_equal(s->nerr, 1);
    assert_int_equal(s->err[0], TK_ERR_TRUNCATED);
    assert_int_equal(s->err_off[0], 49132);
    for (size_t r = 0; r < s->nruns; r++) /* no run spans a footer */
        assert_true(s->runs[r].index % 512 + s->runs[r].n <= 504);
    free_sink(s);
    s = run_frames(TK_CS_DEFMT_FSYNC, buf, len, len);
    assert_int_equal(s->nerr, 16); /* as many as the sink keeps */
    free_sink(s);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_id),       cmocka_unit_test(test_data_frames_aux),
        cmocka_unit_test(test_id_change),       cmocka_unit_test(test_restated_id),
        cmocka_unit_test(test_truncated),       cmocka_unit_test(test_fsync),
        cmocka_unit_test(test_streaming),       cmocka_unit_test(test_dstream_blocks),
        cmocka_unit_test(test_dstream_capture),
    };
    if (!tk_test_data_present())
        return TK_TEST_SKIP;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
