/* SPDX-License-Identifier: BSD-2-Clause */
/* How fast can the ETMv4 packet boundaries be found at all? An experiment for the 1 GB/s aim
 * of the packet parser (docs/performance.md, session 15), not a parser.
 *
 * The batch parser's loop (src/coresight/etm4_batch.c, batch_run_body) steps from one
 * address packet to the next: a 16-byte mask gives the run of atoms, the header after it the
 * length of the address packet. Where the next step starts depends on both, so the steps form
 * a chain of dependent loads. This program takes the bytes one source's parser is given
 * (deformatted by the library), and times that walk alone (no records, no address history):
 *   - one walk, the address packet's length by branches on its header (as the parser does);
 *   - one walk, the length from a table (no branch on the kind, a load more on the chain);
 *   - two walks in one loop, the second from the first A-Sync after the middle (a packet
 *     boundary), each with branches or the table.
 * Every other header counts as one byte, the same for every variant, which keeps a walk on
 * the boundaries the serial walk finds through A-Syncs (eleven 0x00 bytes and 0x80). The two
 * walks must find as many steps as one: the program checks it.
 *
 *   usage: etm4_walk SNAPSHOT_DIR [TRACE_ID_HEX] [REPEAT]
 * Build: cc -O2 -std=c11 -D_GNU_SOURCE -I include -I src bench/etm4_walk.c
 *        BUILD/src/libtracekit.a $(pkg-config --libs libdw libelf) -lz -lpthread -lm */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coresight/etm4_atom_run.h"
#include "tracekit/coresight.h"
#include "tracekit/etm4.h"

typedef struct stream {
    uint8_t *data;
    size_t n, cap;
    int id;
    tk_status st;
} stream;

static tk_status on_stream(void *ctx, tk_etm4_stream_op op, uint8_t id, const uint8_t *data,
                           size_t n, uint64_t index)
{
    stream *s = ctx;
    (void)index;
    if (s->id >= 0 && id != s->id)
        return TK_OK;
    s->id = id; /* the first source with data, unless one was asked for */
    if (op != TK_ETM4_STREAM_DATA && op != TK_ETM4_STREAM_FRAMES)
        return TK_OK;
    if (s->n + n + 64 > s->cap) {
        size_t cap = (s->n + n + 64) * 2;
        uint8_t *p = realloc(s->data, cap);
        if (!p)
            return TK_ERR_NOMEM;
        memset(p + s->n, 0, cap - s->n); /* zero padding after the data: no packet */
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + s->n, data, n);
    s->n += n;
    return TK_OK;
}

static inline size_t len_branchy(const uint8_t *b)
{
    const unsigned h = b[0];
    if (h == 0x95 || h == 0x96)
        return 2 + (b[1] >> 7);
    if ((uint8_t)(h - 0x90) < 3)
        return 1;
    if ((uint8_t)(h - 0x9a) < 2)
        return 5;
    if ((uint8_t)(h - 0x9d) < 2)
        return 9;
    return 1;
}

typedef struct walker {
    uint8_t len[512]; /* by header * 2 + bit 7 of the next byte */
} walker;

static inline size_t step(const walker *w, const uint8_t *b, int table)
{
    return table ? w->len[b[0] * 2 + (b[1] >> 7)] : len_branchy(b);
}

/* Steps (address packets and others) from j to end. */
static __attribute__((noinline)) size_t walk_one(const walker *w, const uint8_t *b, size_t j,
                                                 size_t end, int table)
{
    size_t steps = 0;
    while (j < end) {
        const unsigned r = tk_etm4_atom_run(b + j);
        j += r;
        if (r == 16 || j >= end)
            continue;
        j += step(w, b + j, table);
        steps++;
    }
    return steps;
}

/* The same from 0 to mid and from mid to n, both walks in one loop. */
static __attribute__((noinline)) size_t walk_two(const walker *w, const uint8_t *b, size_t mid,
                                                 size_t n, int table)
{
    size_t j = 0, k = mid, steps = 0;
    while (j < mid && k < n) {
        const unsigned r = tk_etm4_atom_run(b + j), s = tk_etm4_atom_run(b + k);
        j += r;
        k += s;
        if (r != 16 && j < mid) {
            j += step(w, b + j, table);
            steps++;
        }
        if (s != 16 && k < n) {
            k += step(w, b + k, table);
            steps++;
        }
    }
    return steps + walk_one(w, b, j, mid, table) + walk_one(w, b, k, n, table);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The first position after an A-Sync (eleven 0x00 and 0x80) at or after from; 0: none. */
static size_t after_async(const uint8_t *b, size_t from, size_t n)
{
    for (size_t i = from; i + 12 <= n; i++) {
        size_t z = 0;
        while (z < 11 && b[i + z] == 0)
            z++;
        if (z == 11 && b[i + 11] == 0x80)
            return i + 12;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: etm4_walk SNAPSHOT_DIR [TRACE_ID_HEX] [REPEAT]\n");
        return 2;
    }
    stream s = {.id = argc > 2 ? (int)strtol(argv[2], NULL, 16) : -1};
    const int repeat = argc > 3 ? atoi(argv[3]) : 300;
    tk_cs_snapshot *ss = NULL;
    tk_diag diag;
    tk_diag_clear(&diag);
    tk_status st = tk_cs_snapshot_load(argv[1], &ss, &diag);
    if (!st) {
        tk_etm4_run_opts o = {.size = sizeof(o), .buffer = -1, .id = -1};
        o.no_parse = true;
        o.on_stream = on_stream;
        o.ctx = &s;
        st = tk_etm4_run_snapshot(ss, &o, &diag);
        tk_cs_snapshot_free(ss);
    }
    if (st || !s.n) {
        fprintf(stderr, "etm4_walk: %s: %s\n", st ? tk_strerror(st) : "no data",
                st ? diag.message : argv[1]);
        free(s.data);
        return 1;
    }
    walker w;
    for (unsigned h = 0; h < 256; h++)
        for (unsigned c = 0; c < 2; c++) {
            const uint8_t b[2] = {(uint8_t)h, (uint8_t)(c << 7)};
            w.len[h * 2 + c] = (uint8_t)len_branchy(b);
        }
    const size_t mid = after_async(s.data, s.n / 2, s.n);
    printf("etm4_walk: source 0x%02x, %zu bytes, second walk from %zu\n", s.id, s.n, mid);
    const char *names[4] = {"one walk, branches", "one walk, table", "two walks, branches",
                            "two walks, table"};
    size_t serial = 0;
    int rc = 0;
    for (int v = 0; v < 4; v++) {
        if (v >= 2 && !mid)
            break;
        double best = 1e30;
        size_t steps = 0;
        for (int r = 0; r < repeat; r++) {
            const double t0 = now();
            steps =
                v < 2 ? walk_one(&w, s.data, 0, s.n, v & 1) : walk_two(&w, s.data, mid, s.n, v & 1);
            const double t = now() - t0;
            best = t < best ? t : best;
        }
        if (v == 0)
            serial = steps;
        printf("  %-20s %7.1f MB/s %6.2f ns per step, %zu steps%s\n", names[v],
               (double)s.n / best / 1e6, best * 1e9 / (double)steps, steps,
               steps == serial ? "" : "  (DIFFERS from one walk)");
        if (steps != serial)
            rc = 1;
    }
    free(s.data);
    return rc;
}
