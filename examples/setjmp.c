/* SPDX-License-Identifier: BSD-2-Clause */
/* setjmp/longjmp: a recursive-descent expression evaluator that escapes from deep recursion
 * with longjmp on a syntax error or a division by zero. */
#include <setjmp.h>

#include "htif.h"

static jmp_buf on_error;
static const char *p;

static long expr(void);

static long primary(void)
{
    long v = 0;
    if (*p == '(') {
        p++;
        v = expr();
        if (*p++ != ')')
            longjmp(on_error, 1);
        return v;
    }
    if (*p < '0' || *p > '9')
        longjmp(on_error, 2);
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (*p++ - '0');
    return v;
}

static long term(void)
{
    long v = primary();
    while (*p == '*' || *p == '/') {
        char op = *p++;
        long r = primary();
        if (op == '/' && r == 0)
            longjmp(on_error, 3);
        v = op == '*' ? v * r : v / r;
    }
    return v;
}

static long expr(void)
{
    long v = term();
    while (*p == '+' || *p == '-') {
        char op = *p++;
        long r = term();
        v = op == '+' ? v + r : v - r;
    }
    return v;
}

int main(void)
{
    static const char *const inputs[] = {
        "1+2*3", "((((7))))*(8-2)", "10/(5-5)", "(1+2", "2*(3+4)*(5+6)-7", "12+x",
    };
    volatile long total = 0;
    volatile int errors = 0;
    for (unsigned i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        int err;
        p = inputs[i];
        out_str(inputs[i]);
        if ((err = setjmp(on_error)) != 0) {
            out_str(" -> error ");
            out_dec(err);
            errors++;
        } else {
            long v = expr();
            out_str(" = ");
            out_dec(v);
            total += v;
        }
        out_char('\n');
    }
    return (total == 7 + 42 + 147 && errors == 3) ? 0 : 1;
}
