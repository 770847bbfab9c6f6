/* SPDX-License-Identifier: BSD-2-Clause */
/* Formatter frame alignment search (CoreSight Architecture Specification v3.0, §D4.2: 16-byte
 * frames, even bytes 0..14 either data with bit 0 moved to the auxiliary byte 15, or an ID
 * byte with bit 0 set). A memory buffer (ETB/ETR) has no FSYNC pattern between frames, so
 * after a lost or extra byte only the content can say where frames start: measured on real
 * buffers (tests/robustness/test_frame_alignment.c), the ID bytes reject every odd shift and
 * none of the even ones, while an ETMv4 A-Sync is found at the true alignment only. */
#include "frame_align.h"

#include <stdlib.h>
#include <string.h>

#include "tracekit/etm4.h"

#define FRAME 16

/* Every ID byte of the frames in f[0, n) names a known source or the null source. */
static bool ids_known(const uint8_t *f, size_t n, const bool ids[128])
{
    for (size_t k = 0; k + FRAME <= n; k += FRAME)
        for (size_t e = 0; e < FRAME - 1; e += 2) {
            const uint8_t b = f[k + e];
            if ((b & 1) && (b >> 1) && !ids[b >> 1])
                return false;
        }
    return true;
}

tk_status tk_cs_frame_align_n(const uint8_t *buf, size_t len, size_t from, size_t window,
                              const bool ids[128], tk_cs_frames_check_fn check, void *ctx,
                              size_t *at, unsigned *passed)
{
    window -= window % FRAME;
    if (passed)
        *passed = 0;
    if (!buf || !check || !at || window < FRAME || from > len || len - from < FRAME - 1 + window)
        return TK_ERR_INVALID;
    size_t found = 0;
    unsigned n = 0;
    for (size_t s = 0; s < FRAME; s++) {
        const uint8_t *f = buf + from + s;
        if (ids && !ids_known(f, window, ids))
            continue;
        if (check(ctx, f, window)) {
            found = from + s;
            n++;
        }
    }
    if (passed)
        *passed = n;
    if (n != 1)
        return TK_ERR_NO_SYNC;
    *at = found;
    return TK_OK;
}

tk_status tk_cs_frame_align(const uint8_t *buf, size_t len, size_t from, size_t window,
                            const bool ids[128], tk_cs_frames_check_fn check, void *ctx, size_t *at)
{
    return tk_cs_frame_align_n(buf, len, from, window, ids, check, ctx, at, NULL);
}

tk_status tk_cs_frame_search(const uint8_t *buf, size_t len, size_t from, size_t max_window,
                             size_t min_window, const bool ids[128], tk_cs_frames_check_fn check,
                             void *ctx, size_t *at, size_t *window)
{
    if (!buf || !check || !at || !window || from > len)
        return TK_ERR_INVALID;
    /* window bytes are judged from each of from .. from + 15 */
    const size_t avail = len - from > FRAME - 1 ? len - from - (FRAME - 1) : 0;
    size_t w = avail < max_window ? avail : max_window;
    if (min_window < FRAME)
        min_window = FRAME;
    for (w -= w % FRAME; w >= min_window; w = w / 2 - w / 2 % FRAME) {
        unsigned passed = 0;
        tk_status st = tk_cs_frame_align_n(buf, len, from, w, ids, check, ctx, at, &passed);
        if (st != TK_ERR_NO_SYNC || passed > 1) {
            *window = w;
            return st;
        }
    }
    return TK_ERR_NO_SYNC;
}

/* ---- the ETMv4 content check --------------------------------------------------------------- */

/* Packets after an A-Sync not followed by its Trace Info before it counts. */
#define PROBE_LENIENT 64

struct tk_cs_etm4_probe {
    tk_etm4_parser *p[128];
    tk_cs_deformatter *d;
    unsigned long asyncs, errors, checks;
    uint8_t pending[128]; /* after an A-Sync of this source: 1, then packets since + 1 */
};

static tk_status probe_packet(void *ctx, const tk_etm4_packet *pkt)
{
    tk_cs_etm4_probe *x = ctx;
    uint8_t *pending = &x->pending[pkt->trace_id & 0x7f];
    /* An A-Sync counts when a Trace Info follows it, as every A-Sync of a trace stream is
     * (IHI0064 §6.4.2): a window read at a wrong alignment can show an A-Sync (a run of zeros
     * of one source reads as zeros at every even shift), hardly one with its Trace Info. One
     * followed by something else (juno_r1_1 has an atom in between once) counts after
     * PROBE_LENIENT more packets of its source (an error anywhere fails the window). */
    if (*pending && pkt->type != TK_ETM4_ASYNC) {
        if (*pending == 1 && pkt->type == TK_ETM4_TRACE_INFO)
            x->asyncs++, *pending = 0;
        else if (++*pending > PROBE_LENIENT + 1)
            x->asyncs++, *pending = 0;
    }
    if (pkt->type == TK_ETM4_ASYNC)
        *pending = 1;
    else if (tk_etm4_pkt_is_error(pkt) && pkt->type != TK_ETM4_INCOMPLETE_EOT)
        x->errors++;
    return TK_OK;
}

static tk_status probe_data(void *ctx, uint8_t id, const uint8_t *data, size_t n, uint64_t index)
{
    tk_cs_etm4_probe *x = ctx;
    return id < 128 && x->p[id] ? tk_etm4_parser_data(x->p[id], data, n, index) : TK_OK;
}

tk_status tk_cs_etm4_probe_new(const tk_cs_snapshot *ss, int buffer, bool ids[128],
                               tk_cs_etm4_probe **out)
{
    if (!ss || !out)
        return TK_ERR_INVALID;
    *out = NULL;
    tk_cs_etm4_probe *x = calloc(1, sizeof(*x));
    if (!x)
        return TK_ERR_NOMEM;
    if (ids)
        for (int id = 0; id < 128; id++)
            ids[id] = false;
    tk_status st = tk_cs_deformatter_new(0, probe_data, NULL, x, &x->d);
    for (size_t i = 0; i < ss->nsources && !st; i++) {
        const tk_cs_source *src = &ss->sources[i];
        if (src->buffer != buffer)
            continue;
        if (ids)
            ids[src->trace_id & 0x7f] = true;
        if (!tk_cs_protocol_is_etm4(src->protocol) || x->p[src->trace_id & 0x7f])
            continue;
        tk_etm4_config cfg;
        tk_etm4_config_from_source(&cfg, ss, src);
        st = tk_etm4_parser_new(&cfg, probe_packet, x, &x->p[src->trace_id & 0x7f]);
    }
    if (st) {
        tk_cs_etm4_probe_free(x);
        return st;
    }
    *out = x;
    return TK_OK;
}

void tk_cs_etm4_probe_free(tk_cs_etm4_probe *x)
{
    if (!x)
        return;
    for (int id = 0; id < 128; id++)
        tk_etm4_parser_free(x->p[id]);
    tk_cs_deformatter_free(x->d);
    free(x);
}

bool tk_cs_etm4_probe_check(void *ctx, const uint8_t *frames, size_t len)
{
    tk_cs_etm4_probe *x = ctx;
    x->asyncs = x->errors = 0;
    x->checks++;
    memset(x->pending, 0, sizeof(x->pending));
    for (int id = 0; id < 128; id++)
        if (x->p[id])
            tk_etm4_parser_reset(x->p[id]);
    tk_cs_deformatter_restart(x->d, 0);
    if (tk_cs_deformat(x->d, frames, len) || tk_cs_deformat_end(x->d))
        return false;
    for (int id = 0; id < 128; id++)
        if (x->p[id] && tk_etm4_parser_end(x->p[id]))
            return false;
    return x->asyncs > 0 && x->errors == 0;
}

void tk_cs_etm4_probe_counts(const tk_cs_etm4_probe *x, unsigned long *asyncs,
                             unsigned long *errors, unsigned long *checks)
{
    if (asyncs)
        *asyncs = x->asyncs;
    if (errors)
        *errors = x->errors;
    if (checks)
        *checks = x->checks;
}
