/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal helpers shared by the RISC-V decoder modules. */
#ifndef TK_ISA_RISCV_INTERNAL_H
#define TK_ISA_RISCV_INTERNAL_H

#include <stddef.h>

#include "tracekit/riscv.h"

/* Write the CSR's name (or 0x-hex number) into buf; returns snprintf's count. */
int tk_rv_csr_name(unsigned csr, char *buf, size_t cap);

#endif
