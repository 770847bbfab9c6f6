/* SPDX-License-Identifier: BSD-2-Clause */
/* The header walk (header_walk.h): several walks at once, joined where they meet.
 *
 * The stretch is split into CHAINS segments and a walk starts at the first byte of each,
 * reading it as a header whether it is one or not. The walks run interleaved, so the CPU
 * overlaps their loads; only the first one is the true walk. The next position depends on
 * nothing but the current one, so two walks that once stand on the same position go on
 * together for ever: when the true walk, having crossed into segment j, lands on a position
 * that walk j stood on, walk j's end is the true end of segment j and the headers it
 * counted from that position on are the true ones. Walk j remembers its first RECORD
 * positions for this. A true walk that meets none of them is walked on one header at a time
 * to the segment's end: exact either way, the joining only saves time. (On trace, where
 * headers are a few bytes apart, the walks meet soon: on dhrystone after 9 headers of the
 * true walk on average, and never past the records.) */
#include "header_walk.h"

enum {
    CHAINS = 4, /* spelled out below: walks w0 to w3 */
    RECORD = 64,
    /* below this per walk, starting and joining the walks costs more than the overlap gains */
    SEGMENT_MIN = 4096,
};
/* a header moves a walk at most 32 bytes on: the first RECORD steps stay inside a segment */
_Static_assert(32 * RECORD <= SEGMENT_MIN, "the recording steps would need bound checks");

/* One header at a time (the definition); *count gets the headers that are not padding. */
static size_t walk_serial(const uint8_t *buf, size_t pos, size_t limit, uint64_t *count)
{
    uint64_t c = *count;
    while (pos < limit) {
        const unsigned n = buf[pos] & 0x1fu;
        pos += 1 + n;
        c += n != 0;
    }
    *count = c;
    return pos;
}

/* A walk's first RECORD positions and the headers it had counted when it stood there. */
typedef struct record {
    size_t pos[RECORD];
    uint32_t count[RECORD];
} record;

/* The true walk stands at `at` in a segment, having counted *count headers; walk `w` started
 * at the segment's start and ended at w_end (the first position at or past end) with w_count
 * headers. Returns the true walk's first position at or past end, *count updated. */
static size_t join(const uint8_t *buf, size_t at, uint64_t *count, const record *w, size_t w_end,
                   uint64_t w_count, size_t end)
{
    size_t i = 0;
    while (at < end) {
        while (i < RECORD && w->pos[i] < at)
            i++;
        if (i == RECORD)
            break; /* past what w remembers: no landing to look for */
        if (w->pos[i] == at) {
            *count += w_count - w->count[i];
            return w_end;
        }
        const unsigned n = buf[at] & 0x1fu;
        at += 1 + n;
        *count += n != 0;
    }
    return walk_serial(buf, at, end, count);
}

/* One walk: where it stands, where its segment ends, the headers it counted. */
typedef struct walk {
    size_t p, end;
    uint64_t c;
} walk;

static inline void step(const uint8_t *buf, walk *w)
{
    const unsigned n = buf[w->p] & 0x1fu;
    w->p += 1 + n;
    w->c += n != 0;
}

static inline void step_recorded(const uint8_t *buf, walk *w, record *r, unsigned i)
{
    r->pos[i] = w->p;
    r->count[i] = (uint32_t)w->c;
    step(buf, w);
}

static inline size_t left(const walk *w)
{
    return w->p < w->end ? w->end - w->p : 0;
}

static inline size_t max2(size_t a, size_t b)
{
    return a > b ? a : b;
}

size_t tk_te_walk_headers(const uint8_t *buf, size_t pos, size_t limit, uint64_t *index)
{
    if (pos >= limit || limit - pos < (size_t)CHAINS * SEGMENT_MIN)
        return walk_serial(buf, pos, limit, index);
    /* The walks are four named locals, not an array, so that the compiler keeps them in
     * registers at -O2 too (an array stays in memory there, and every step then waits for
     * a store to be forwarded). */
    const size_t seg = (limit - pos) / CHAINS;
    walk w0 = {pos, pos + seg, 0}, w1 = {pos + seg, pos + 2 * seg, 0},
         w2 = {pos + 2 * seg, pos + 3 * seg, 0}, w3 = {pos + 3 * seg, limit, 0};
    record rec[CHAINS - 1]; /* of walks 1 to 3; walk 0 is the true one */
    for (unsigned i = 0; i < RECORD; i++) {
        step(buf, &w0);
        step_recorded(buf, &w1, &rec[0], i);
        step_recorded(buf, &w2, &rec[1], i);
        step_recorded(buf, &w3, &rec[2], i);
    }
    /* Rounds of one header per walk that has not reached its end, as many as the walk
     * furthest from its end needs at least; the checks are predicted until a walk ends. */
    for (;;) {
        const size_t most = max2(max2(left(&w0), left(&w1)), max2(left(&w2), left(&w3)));
        if (most == 0)
            break;
        for (size_t r = (most + 31) / 32; r > 0; r--) {
            if (w0.p < w0.end)
                step(buf, &w0);
            if (w1.p < w1.end)
                step(buf, &w1);
            if (w2.p < w2.end)
                step(buf, &w2);
            if (w3.p < w3.end)
                step(buf, &w3);
        }
    }
    const walk later[CHAINS - 1] = {w1, w2, w3};
    size_t at = w0.p;
    uint64_t count = w0.c;
    for (unsigned j = 0; j < CHAINS - 1; j++)
        at = join(buf, at, &count, &rec[j], later[j].p, later[j].c, later[j].end);
    *index += count;
    return at;
}
