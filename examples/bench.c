/* SPDX-License-Identifier: BSD-2-Clause */
/* A long-running benchmark-style mix: CRC-32 over a buffer, a prime sieve, an integer matrix
 * product and a floating-point n-body style loop, repeated. */
#include "htif.h"

#define N 24
static uint8_t buf[16384];
static uint8_t sieve[60000];
static int32_t ma[N][N], mb[N][N], mc[N][N];

static uint32_t crc32(const uint8_t *p, unsigned n)
{
    uint32_t c = 0xffffffffu;
    for (unsigned i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & -(c & 1u));
    }
    return ~c;
}

static unsigned primes(unsigned n)
{
    unsigned count = 0;
    for (unsigned i = 2; i < n; i++)
        sieve[i] = 1;
    for (unsigned i = 2; i * i < n; i++)
        if (sieve[i])
            for (unsigned j = i * i; j < n; j += i)
                sieve[j] = 0;
    for (unsigned i = 2; i < n; i++)
        count += sieve[i];
    return count;
}

static int64_t matmul(void)
{
    int64_t tr = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int32_t s = 0;
            for (int k = 0; k < N; k++)
                s += ma[i][k] * mb[k][j];
            mc[i][j] = s;
        }
    for (int i = 0; i < N; i++)
        tr += mc[i][i];
    return tr;
}

static double bodies(int steps)
{
    double x[4] = {0, 1, 0, -1}, y[4] = {1, 0, -1, 0}, vx[4] = {0.5, 0, -0.5, 0},
           vy[4] = {0, 0.5, 0, -0.5}, e = 0;
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double dx, dy, d2;
                if (i == j)
                    continue;
                dx = x[j] - x[i];
                dy = y[j] - y[i];
                d2 = dx * dx + dy * dy + 0.01;
                vx[i] += 0.001 * dx / d2;
                vy[i] += 0.001 * dy / d2;
            }
        for (int i = 0; i < 4; i++) {
            x[i] += 0.01 * vx[i];
            y[i] += 0.01 * vy[i];
        }
    }
    for (int i = 0; i < 4; i++)
        e += vx[i] * vx[i] + vy[i] * vy[i];
    return e;
}

int main(void)
{
    uint32_t crc = 0;
    unsigned np = 0;
    int64_t tr = 0;
    double e = 0;
    for (unsigned i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            ma[i][j] = i - j;
            mb[i][j] = i + 2 * j;
        }
    for (int round = 0; round < 4; round++) {
        buf[round] ^= 0x5a;
        crc ^= crc32(buf, sizeof(buf));
        np += primes(sizeof(sieve));
        tr += matmul();
        e += bodies(300);
    }
    out_str("crc ");
    out_hex(crc);
    out_str(" primes ");
    out_dec(np);
    out_str(" trace ");
    out_dec(tr);
    out_str(" energy*1e6 ");
    out_dec((int64_t)(e * 1e6));
    out_char('\n');
    return np == 4 * 6057 ? 0 : 1;
}
