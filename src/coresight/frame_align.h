/* SPDX-License-Identifier: BSD-2-Clause */
/* Re-finding the formatter frame alignment of a buffer without FSYNC (ETB/ETR) after bytes
 * were dropped or inserted (docs/robustness.md, "ETB frame alignment"). Internal: used by
 * tk_etm4_run_snapshot and by the robustness tests that measure it. */
#ifndef TK_CORESIGHT_FRAME_ALIGN_H
#define TK_CORESIGHT_FRAME_ALIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/coresight.h"
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
 * TK_ERR_INVALID when buf does not hold window bytes after from + 15. *passed (may be NULL)
 * is the number of positions that passed. */
tk_status tk_cs_frame_align(const uint8_t *buf, size_t len, size_t from, size_t window,
                            const bool ids[128], tk_cs_frames_check_fn check, void *ctx,
                            size_t *at);
tk_status tk_cs_frame_align_n(const uint8_t *buf, size_t len, size_t from, size_t window,
                              const bool ids[128], tk_cs_frames_check_fn check, void *ctx,
                              size_t *at, unsigned *passed);

/* The windows tk_etm4_run_snapshot searches with: 16 KiB (1024 frames, the size first measured
 * in tests/robustness/test_frame_alignment.c) or what the buffer still holds, down to 512
 * bytes: with tk_cs_etm4_probe_check, no wrong position passed in 800 places x 15 positions
 * of the two measured buffers at 256 bytes or more (1 did at 128), so half of the least window
 * is still free of false positives there. */
#define TK_CS_ALIGN_WINDOW 16384
#define TK_CS_ALIGN_WINDOW_MIN 512

/* The search with a window that adapts to what follows from: the first window is max_window
 * bytes, or what the buffer holds after from + 15 when that is less; when no position passes,
 * the window is halved (a second damage inside it makes the true alignment fail, a shorter
 * window may end before it) as long as it stays at least min_window bytes, the least that
 * still tells the true alignment from the wrong ones (measured in
 * tests/robustness/test_frame_alignment.c). Stops at the first window where exactly one
 * position passes (TK_OK, *at, *window the bytes judged) or several do (TK_ERR_NO_SYNC).
 * TK_ERR_NO_SYNC too when the buffer holds less than min_window bytes after from + 15. */
tk_status tk_cs_frame_search(const uint8_t *buf, size_t len, size_t from, size_t max_window,
                             size_t min_window, const bool ids[128], tk_cs_frames_check_fn check,
                             void *ctx, size_t *at, size_t *window);

/* The ETMv4 content check: fresh parsers of every ETMv4 source of a snapshot's buffer (the
 * snapshot must outlive the probe) deformat the frames judged, and it passes when they find
 * an A-Sync (IHI0064 §6.4.2) followed by a Trace Info, or by 64 more packets of its source,
 * and no error packet (a cut last packet aside: the window ends anywhere). The A-Sync alone
 * let wrong alignments pass in 3 of 800 places at 1-4 KiB windows (a run of zeros reads as
 * zeros at every even shift); with the Trace Info, none from 256 bytes on. ids (may be NULL)
 * receives the trace IDs of every source of the buffer, for tk_cs_frame_align. */
typedef struct tk_cs_etm4_probe tk_cs_etm4_probe;
tk_status tk_cs_etm4_probe_new(const tk_cs_snapshot *ss, int buffer, bool ids[128],
                               tk_cs_etm4_probe **out);
void tk_cs_etm4_probe_free(tk_cs_etm4_probe *x);
/* A tk_cs_frames_check_fn (ctx: the probe). */
bool tk_cs_etm4_probe_check(void *ctx, const uint8_t *frames, size_t len);
/* What the last check saw: A-Syncs, error packets after the first A-Sync, windows judged. */
void tk_cs_etm4_probe_counts(const tk_cs_etm4_probe *x, unsigned long *asyncs,
                             unsigned long *errors, unsigned long *checks);

#endif
