/* SPDX-License-Identifier: BSD-2-Clause */
/* The deformatter's internals that tests and fuzz targets reach (deformat.c). */
#ifndef TK_CORESIGHT_DEFORMAT_INT_H
#define TK_CORESIGHT_DEFORMAT_INT_H

#include <stdbool.h>

#include "tracekit/coresight.h"

/* Whether joined runs are built with AVX2 (on by default where the CPU has it); off, the
 * portable loop, which the tests and fuzz_cs_deformat check against the other. */
void tk_cs_deformatter_use_avx2(tk_cs_deformatter *d, bool on);

#endif
