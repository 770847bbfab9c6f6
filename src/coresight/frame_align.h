/* SPDX-License-Identifier: BSD-2-Clause */
/* Re-finding the formatter frame alignment of a buffer without FSYNC (ETB/ETR) after bytes
 * were dropped or inserted (docs/robustness.md, "ETB frame alignment"). */
#ifndef TK_CORESIGHT_FRAME_ALIGN_H
#define TK_CORESIGHT_FRAME_ALIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/status.h"

/* Judges len bytes of whole frames starting at a candidate alignment (e.g. deformats them and
 * looks for a protocol's synchronisation packet in the sources' streams). */
typedef bool (*tk_cs_frames_check_fn)(void *ctx, const uint8_t *frames, size_t len);

/* Try the 16 frame positions from, from + 1, .., from + 15 of buf. At each, window bytes of
 * whole frames are judged, first by their ID bytes when ids is given (every even byte with bit
 * 0 set must name a source with ids[id] true, or the null source 0), then by check. The ID
 * bytes alone only tell the parity of a shift (an even byte of a frame read 2, 4 .. 14 bytes
 * off is still an even byte), so check must look at the content. TK_OK with *at when exactly
 * one position passes; TK_ERR_NO_SYNC when none does, or several do (nothing is guessed);
 * TK_ERR_INVALID when buf does not hold window bytes after from + 15. */
tk_status tk_cs_frame_align(const uint8_t *buf, size_t len, size_t from, size_t window,
                            const bool ids[128], tk_cs_frames_check_fn check, void *ctx,
                            size_t *at);

#endif
