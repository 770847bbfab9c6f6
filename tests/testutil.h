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

#endif
