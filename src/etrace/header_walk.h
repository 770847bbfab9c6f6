/* SPDX-License-Identifier: BSD-2-Clause */
/* Following encapsulation headers by their lengths alone, faster than one load at a time.
 *
 * A header's low five bits are the length of what follows it (0: a padding byte), so the
 * next header is at pos + 1 + (buf[pos] & 31). Walked one header after the other that is a
 * chain of dependent loads, a few cycles per header. The parallel cutter walks every header
 * of the trace this way before it looks for a sync to cut at; this walk gives the same
 * answer with several chains in flight at once. */
#ifndef TK_ETRACE_HEADER_WALK_H
#define TK_ETRACE_HEADER_WALK_H

#include <stddef.h>
#include <stdint.h>

/* Walks the headers of buf from the header at pos while the position is below limit, and
 * returns the first header position at or past limit (pos itself if pos >= limit). Adds to
 * *index the number of headers stepped over that were not padding. Reads only bytes of buf
 * below limit. Exactly the result of
 *
 *     while (pos < limit) { n = buf[pos] & 31; pos += 1 + n; *index += n != 0; }
 */
size_t tk_te_walk_headers(const uint8_t *buf, size_t pos, size_t limit, uint64_t *index);

#endif
