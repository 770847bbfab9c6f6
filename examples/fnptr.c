/* SPDX-License-Identifier: BSD-2-Clause */
/* Indirect calls: an operation table called through function pointers, and qsort's
 * comparator callback. */
#include <stdlib.h>

#include "htif.h"

typedef long (*op_fn)(long, long);

__attribute__((noinline)) static long op_add(long a, long b)
{
    return a + b;
}
__attribute__((noinline)) static long op_sub(long a, long b)
{
    return a - b;
}
__attribute__((noinline)) static long op_mul(long a, long b)
{
    return a * b % 100003;
}
__attribute__((noinline)) static long op_xor(long a, long b)
{
    return a ^ b;
}
__attribute__((noinline)) static long op_max(long a, long b)
{
    return a > b ? a : b;
}

static op_fn const ops[] = {op_add, op_sub, op_mul, op_xor, op_max};

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static long v[200];
    long acc = 1;
    unsigned seed = 12345;
    for (int i = 0; i < 2000; i++) {
        seed = seed * 1103515245u + 12345u;
        acc = ops[(seed >> 16) % 5](acc, (long)(seed >> 8) & 0xffff);
    }
    for (int i = 0; i < 200; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (long)(seed >> 10) % 1000;
    }
    qsort(v, 200, sizeof(v[0]), cmp_long);
    for (int i = 1; i < 200; i++)
        if (v[i - 1] > v[i])
            return 1;
    out_str("acc = ");
    out_dec(acc);
    out_str("\nmin = ");
    out_dec(v[0]);
    out_str(" max = ");
    out_dec(v[199]);
    out_char('\n');
    return 0;
}
