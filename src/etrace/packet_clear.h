/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal: clearing a whole tk_te_packet, for code that builds one per packet (the scanner,
 * the encoder). */
#ifndef TK_ETRACE_PACKET_CLEAR_H
#define TK_ETRACE_PACKET_CLEAR_H

#include <string.h>

#include "tracekit/te_packet.h"
#include "util/compiler.h"

#if defined(__GNUC__)
/* Clear a packet with plain vector stores: at -O2 a memset of this size becomes "rep stosq",
 * whose start-up cost was most of the time of a whole packet. */
static TK_ALWAYS_INLINE void tk_te_packet_clear(tk_te_packet *out)
{
    typedef uint64_t chunk __attribute__((vector_size(16), aligned(1), may_alias));
    _Static_assert(sizeof(tk_te_packet) == 120, "tk_te_packet_clear: update the store list");
    unsigned char *o = (unsigned char *)out;
    const chunk z = {0, 0};
    /* straight-line stores: a loop here is turned back into the memset */
    *(chunk *)(o + 0) = z;
    *(chunk *)(o + 16) = z;
    *(chunk *)(o + 32) = z;
    *(chunk *)(o + 48) = z;
    *(chunk *)(o + 64) = z;
    *(chunk *)(o + 80) = z;
    *(chunk *)(o + 96) = z;
    *(chunk *)(o + 104) = z; /* overlaps: 120 bytes */
}
#else
static inline void tk_te_packet_clear(tk_te_packet *out)
{
    memset(out, 0, sizeof(*out));
}
#endif

#endif
