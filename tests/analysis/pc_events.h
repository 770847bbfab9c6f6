/* SPDX-License-Identifier: BSD-2-Clause */
/* Test helpers for the analysis sinks: turn an executed PC sequence into the events an exact
 * decoder emits, and count functions, instructions and branches straight from the PC
 * sequence, independently of the sinks, to compare with what they computed. */
#ifndef TK_TEST_PC_EVENTS_H
#define TK_TEST_PC_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/analysis.h"
#include "tracekit/event.h"

/* How an instruction leaves a range (TK_END_NONE if it falls through) and, for a direct
 * branch, its target. */
typedef tk_status (*pcev_classify)(void *ctx, uint64_t pc, unsigned *len, uint8_t *end,
                                   uint64_t *target);

/* Emit range events for pcs[0..n): a range ends at every control-flow instruction and
 * wherever the next PC is not the fall-through (then a trap, as an interrupt would be). A
 * branch followed by neither its target nor its fall-through was interrupted by a trap: its
 * outcome is not stated. */
static inline tk_status pcev_emit(const uint64_t *pcs, size_t n, pcev_classify cls, void *cctx,
                                  tk_event_fn fn, void *ctx)
{
    size_t i = 0;
    while (i < n) {
        tk_event ev;
        memset(&ev, 0, sizeof(ev));
        ev.kind = TK_EV_RANGE;
        ev.first = pcs[i];
        for (;;) {
            unsigned len = 0;
            uint8_t end = TK_END_NONE;
            uint64_t target = 0;
            tk_status st = cls(cctx, pcs[i], &len, &end, &target);
            if (st != TK_OK)
                return st;
            ev.ninsn++;
            bool at_end = i + 1 == n;
            uint64_t next = at_end ? 0 : pcs[i + 1];
            if (end == TK_END_NONE && !at_end && next == pcs[i] + len) {
                i++;
                continue;
            }
            ev.last = pcs[i];
            ev.next = next;
            ev.end = end;
            if (end == TK_END_BRANCH) {
                if (at_end || (next != pcs[i] + len && next != target))
                    end = ev.end = TK_END_NONE; /* outcome not shown by the trace */
                else
                    ev.taken = next != pcs[i] + len;
            }
            if ((st = fn(ctx, &ev)) != TK_OK)
                return st;
            i++;
            if (!at_end && (end == TK_END_TRAP || (end == TK_END_NONE && next != ev.last + len))) {
                tk_event tr;
                memset(&tr, 0, sizeof(tr));
                tr.kind = TK_EV_TRAP;
                tr.interrupt = end != TK_END_TRAP;
                tr.first = end == TK_END_TRAP ? ev.last : ev.last + len;
                tr.next = next;
                if ((st = fn(ctx, &tr)) != TK_OK)
                    return st;
            }
            break;
        }
    }
    return TK_OK;
}

/* Direct counts from a PC sequence. */
typedef struct pcref_count {
    uint64_t key;
    uint64_t a, b, c;
} pcref_count;

typedef struct pcref_table {
    pcref_count *v;
    size_t n, cap;
} pcref_table;

static inline pcref_count *pcref_get(pcref_table *t, uint64_t key)
{
    /* Small tables in tests: sorted insert keeps lookups logarithmic. */
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n && t->v[lo].key == key)
        return &t->v[lo];
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = realloc(t->v, t->cap * sizeof(*t->v));
        if (!t->v)
            abort();
    }
    memmove(&t->v[lo + 1], &t->v[lo], (t->n - lo) * sizeof(*t->v));
    t->n++;
    t->v[lo] = (pcref_count){.key = key};
    return &t->v[lo];
}

static inline const pcref_count *pcref_find(const pcref_table *t, uint64_t key)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->v[lo].key == key ? &t->v[lo] : NULL;
}

#endif
