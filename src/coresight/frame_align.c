/* SPDX-License-Identifier: BSD-2-Clause */
/* Formatter frame alignment search (CoreSight Architecture Specification v3.0, §D4.2: 16-byte
 * frames, even bytes 0..14 either data with bit 0 moved to the auxiliary byte 15, or an ID
 * byte with bit 0 set). A memory buffer (ETB/ETR) has no FSYNC pattern between frames, so
 * after a lost or extra byte only the content can say where frames start: measured on real
 * buffers (tests/robustness/test_frame_alignment.c), the ID bytes reject every odd shift and
 * none of the even ones, while an ETMv4 A-Sync is found at the true alignment only. */
#include "frame_align.h"

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

tk_status tk_cs_frame_align(const uint8_t *buf, size_t len, size_t from, size_t window,
                            const bool ids[128], tk_cs_frames_check_fn check, void *ctx, size_t *at)
{
    window -= window % FRAME;
    if (!buf || !check || !at || window < FRAME || from > len || len - from < FRAME - 1 + window)
        return TK_ERR_INVALID;
    size_t found = 0;
    unsigned passed = 0;
    for (size_t s = 0; s < FRAME; s++) {
        const uint8_t *f = buf + from + s;
        if (ids && !ids_known(f, window, ids))
            continue;
        if (check(ctx, f, window)) {
            found = from + s;
            passed++;
        }
    }
    if (passed != 1)
        return TK_ERR_NO_SYNC;
    *at = found;
    return TK_OK;
}
