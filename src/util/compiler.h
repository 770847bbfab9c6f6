/* SPDX-License-Identifier: BSD-2-Clause */
/* Hints for the hot paths, one spelling for the whole project: GCC and Clang get their
 * builtins and attributes; any other compiler gets plain code that means the same. The
 * hints change speed only, never results (the benchmarks in docs/performance.md measured
 * each where it is used). */
#ifndef TK_UTIL_COMPILER_H
#define TK_UTIL_COMPILER_H

#if defined(__GNUC__) || defined(__clang__)
#define TK_LIKELY(x) __builtin_expect(!!(x), 1)
#define TK_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Keep a rare path out of its caller, so the caller needs no stack frame or spills. */
#define TK_NOINLINE __attribute__((noinline))
#define TK_COLD __attribute__((cold))
/* Inline where the compiler's heuristics would not (a helper of an unrolled loop). */
#define TK_ALWAYS_INLINE inline __attribute__((always_inline))
/* A hint to start loading addr (an integer or a pointer: a prefetch never faults). */
#define TK_PREFETCH(addr) __builtin_prefetch((const void *)(addr))
#else
#define TK_LIKELY(x) (x)
#define TK_UNLIKELY(x) (x)
#define TK_NOINLINE
#define TK_COLD
#define TK_ALWAYS_INLINE inline
#define TK_PREFETCH(addr) ((void)(addr))
#endif

#endif
