/* SPDX-License-Identifier: BSD-2-Clause */
/* The arrays the ETMv4 parser's batch mode with atom runs walks on (etm4_batch.c, runs_body).
 *
 * For the 16 nblk positions q of b (16 nblk + 17 bytes readable):
 *   - dist[q]: how far the first position at or after q that is not an atom header (0xc0-0xff)
 *     is; 16 nblk - q if there is none; 255 at most;
 *   - len[q]: the length of the address packet that would start at q, if it is one the walk
 *     takes (exact match 1, short 2 or 3, long 5 or 9), else 0;
 *   - rid[q]: its address rule, header [3:0] * 2 + bit 7 of b[q + 1] (where len[q] is not 0;
 *     defined for every q all the same).
 * With these the walk from one address packet to the next is two loads (a = r + dist[r],
 * r = a + len[a]) and no branch on the packet kinds. Every variant gives the same bytes
 * (tests/coresight/test_etm4_window.c). */
#ifndef TK_CORESIGHT_ETM4_WINDOW_H
#define TK_CORESIGHT_ETM4_WINDOW_H

#include <stdint.h>

typedef void (*tk_etm4_window_fn)(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len,
                                  uint8_t *rid);

/* A byte at a time: the definition. */
void tk_etm4_window_scalar(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len,
                           uint8_t *rid);
/* 16 bytes at a time (SSE2; the scalar one where not built for it). */
void tk_etm4_window_sse2(const uint8_t *b, unsigned nblk, uint8_t *dist, uint8_t *len,
                         uint8_t *rid);
/* 32 bytes at a time with AVX2, or NULL where the compiler or the CPU has no AVX2. */
tk_etm4_window_fn tk_etm4_window_avx2(void);
/* The fastest variant this CPU runs. */
tk_etm4_window_fn tk_etm4_window_best(void);

#endif
