/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared helpers for tracekit's unit and integration tests. */
#ifndef TK_TESTUTIL_H
#define TK_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

/* Exit code that CTest reports as "skipped". */
#define TK_TEST_SKIP 77

/* Path of a file under ../shared/testdata (static buffer per call site is not used: the
 * result is malloc'd and owned by the caller). */
char *tk_test_data_path(const char *rel);
/* True if the shared test data folder exists; otherwise prints why tests skip. */
int tk_test_data_present(void);
/* Read a whole file, transparently gunzipping .gz files. Returns malloc'd data or NULL. */
uint8_t *tk_test_read_file(const char *path, size_t *len);
/* DSTREAM capture files: 512-byte blocks of 504 trace bytes and an 8-byte footer. The file
 * offset of offset s of the trace, and the trace t (n bytes) as a file (malloc'd, length in
 * *len) with footers of 0xff, which read as trace would be an FSYNC start inside a frame. */
uint64_t tk_test_dstream_offset(uint64_t s);
uint8_t *tk_test_dstream_file(const uint8_t *t, size_t n, size_t *len);

/* xorshift64: a fixed, seeded generator (s not 0), so every run draws the same values. */
static inline uint64_t tk_test_xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* xorshift64* (Vigna): the same with a multiplied output, for tests that draw from its
 * better low bits; seeded alike. */
static inline uint64_t tk_test_xorshift64star(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

#endif
