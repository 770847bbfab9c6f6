/* SPDX-License-Identifier: BSD-2-Clause */
/* The E-Trace reference vectors of the shared test data (etrace-ref/<program>/<setting>/:
 * <program>.scf, .decoder.ucf, .te_inst_raw, ...) as the tests walk and decode them. */
#ifndef TK_TEST_TE_REF_H
#define TK_TEST_TE_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/event.h"
#include "tracekit/image.h"
#include "tracekit/te_params.h"

/* The ten programs and four settings the reference flow produced. */
extern const char *const tk_test_ref_progs[];
extern const size_t tk_test_ref_nprogs;
extern const char *const tk_test_ref_settings[];
extern const size_t tk_test_ref_nsettings;

/* Calls fn for every program x setting whose folder is present; returns how many. */
size_t tk_test_ref_each(void (*fn)(const char *prog, const char *setting, void *ctx), void *ctx);

/* The vector's folder (malloc'd, into *dir) and its trace, DIR/PROG.te_inst_raw (malloc'd,
 * *len bytes): the test fails if it cannot be read. */
uint8_t *tk_test_ref_raw(const char *prog, const char *setting, char **dir, size_t *len);

/* Calls fn with the parameters (scf and decoder ucf) and the trace of every vector present;
 * returns how many. */
size_t tk_test_ref_each_raw(void (*fn)(const tk_te_params *p, const uint8_t *raw, size_t len,
                                       void *ctx),
                            void *ctx);

/* The program's ELF (riscv-ref/PROG.riscv), with spike's reset code at 0x1000 added when
 * reset_code is set (the reference traces start there). The test fails if it cannot load. */
tk_image *tk_test_ref_image(const char *prog, bool reset_code);

/* Reads DIR/PROG.scf and DIR/PROG.decoder.ucf into p (the test fails on an error). If elf is
 * not NULL, it receives the ucf's object file (malloc'd) or NULL. */
void tk_test_ref_params(const char *dir, const char *prog, tk_te_params *p, char **elf);

/* Decodes DIR/PROG.te_inst_raw with the vector's parameters, img and decoder flags
 * (TK_TE_DEC_*) into fn; the test fails unless every step returns TK_OK. */
void tk_test_ref_decode(const char *dir, const char *prog, tk_image *img, unsigned dec_flags,
                        tk_event_fn fn, void *ctx);

#endif
