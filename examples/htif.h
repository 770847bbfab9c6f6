/* SPDX-License-Identifier: BSD-2-Clause */
/* Host interface of the tracekit examples: spike-style HTIF (tohost/fromhost). */
#ifndef TK_EXAMPLES_HTIF_H
#define TK_EXAMPLES_HTIF_H

#include <stddef.h>
#include <stdint.h>

void htif_exit(int code) __attribute__((noreturn));
/* Console output, buffered per line (one host call per line). */
void out_str(const char *s);
void out_char(char c);
void out_dec(int64_t v);
void out_hex(uint64_t v);
void out_flush(void);

#define read_csr(reg)                                                                              \
    ({                                                                                             \
        unsigned long v_;                                                                          \
        __asm__ volatile("csrr %0, " #reg : "=r"(v_));                                             \
        v_;                                                                                        \
    })
#define write_csr(reg, val) __asm__ volatile("csrw " #reg ", %0" ::"rK"(val))
#define set_csr(reg, val) __asm__ volatile("csrs " #reg ", %0" ::"rK"(val))
#define clear_csr(reg, val) __asm__ volatile("csrc " #reg ", %0" ::"rK"(val))

#endif
