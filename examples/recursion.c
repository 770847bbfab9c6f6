/* SPDX-License-Identifier: BSD-2-Clause */
/* Recursion: deep call/return chains (fib, Ackermann, Towers of Hanoi). */
#include "htif.h"

__attribute__((noinline)) static int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static unsigned ack(unsigned m, unsigned n)
{
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

__attribute__((noinline)) static void hanoi(int n, int from, int to, int via, long *moves)
{
    if (n == 0)
        return;
    hanoi(n - 1, from, via, to, moves);
    ++*moves;
    hanoi(n - 1, via, to, from, moves);
}

int main(void)
{
    long moves = 0;
    int f = fib(18);
    unsigned a = ack(2, 3);
    hanoi(10, 1, 3, 2, &moves);
    out_str("fib(18) = ");
    out_dec(f);
    out_str("\nack(2,3) = ");
    out_dec(a);
    out_str("\nhanoi(10) moves = ");
    out_dec(moves);
    out_char('\n');
    return (f == 2584 && a == 9 && moves == 1023) ? 0 : 1;
}
