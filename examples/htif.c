/* SPDX-License-Identifier: BSD-2-Clause */
/* spike-style HTIF: an odd value in tohost exits with code value >> 1; an even value points
 * at a syscall block (number, arguments) that the host answers through fromhost. */
#include "htif.h"

volatile uint64_t tohost __attribute__((section(".tohost"), aligned(64)));
volatile uint64_t fromhost __attribute__((section(".tohost"), aligned(64)));

static char line[128];
static size_t line_len;

static void host_write(const char *buf, size_t len)
{
    static volatile uint64_t magic[8] __attribute__((aligned(64)));
    magic[0] = 64; /* write */
    magic[1] = 1;
    magic[2] = (uintptr_t)buf;
    magic[3] = len;
    __sync_synchronize();
    tohost = (uintptr_t)magic;
    while (fromhost == 0)
        ;
    fromhost = 0;
    __sync_synchronize();
}

void out_flush(void)
{
    if (line_len)
        host_write(line, line_len);
    line_len = 0;
}

void out_char(char c)
{
    line[line_len++] = c;
    if (c == '\n' || line_len == sizeof(line))
        out_flush();
}

void out_str(const char *s)
{
    while (*s)
        out_char(*s++);
}

void out_dec(int64_t v)
{
    char buf[24];
    int n = 0;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    if (v < 0)
        out_char('-');
    do {
        buf[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        out_char(buf[--n]);
}

void out_hex(uint64_t v)
{
    out_str("0x");
    for (int i = 60; i >= 0; i -= 4)
        out_char("0123456789abcdef"[(v >> i) & 15]);
}

void htif_exit(int code)
{
    out_flush();
    tohost = ((uint64_t)code << 1) | 1;
    for (;;)
        ;
}
