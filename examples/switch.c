/* SPDX-License-Identifier: BSD-2-Clause */
/* Switch jump tables: a small stack-machine interpreter whose dense switch compiles to an
 * indirect jump through a table. */
#include "htif.h"

enum { PUSH, LOAD, STORE, ADD, SUB, MUL, MOD, LT, JZ, JMP, DUP, DROP, PRINT, HALT };

/* Sum of the primes below 300 by trial division. */
static const int prog[] = {
    PUSH,
    0,
    STORE,
    0, /* sum = 0 */
    PUSH,
    2,
    STORE,
    1, /* n = 2 */
    /* 8: loop over n */
    LOAD,
    1,
    PUSH,
    300,
    LT,
    JZ,
    64,
    PUSH,
    2,
    STORE,
    2, /* d = 2 */
    /* 19: loop over d while d*d <= n */
    LOAD,
    2,
    LOAD,
    2,
    MUL,
    LOAD,
    1,
    PUSH,
    1,
    ADD,
    LT,
    JZ,
    48,
    LOAD,
    1,
    LOAD,
    2,
    MOD,
    JZ,
    55, /* divisible: not prime */
    LOAD,
    2,
    PUSH,
    1,
    ADD,
    STORE,
    2,
    JMP,
    19,
    /* 48: prime: sum += n */
    LOAD,
    0,
    LOAD,
    1,
    ADD,
    STORE,
    0,
    /* 55: next n */
    LOAD,
    1,
    PUSH,
    1,
    ADD,
    STORE,
    1,
    JMP,
    8,
    /* 64 */
    LOAD,
    0,
    PRINT,
    HALT,
};

static long run(const int *code)
{
    long stack[32], vars[4] = {0};
    int sp = 0, pc = 0;
    for (;;) {
        int op = code[pc++];
        switch (op) {
        case PUSH:
            stack[sp++] = code[pc++];
            break;
        case LOAD:
            stack[sp++] = vars[code[pc++]];
            break;
        case STORE:
            vars[code[pc++]] = stack[--sp];
            break;
        case ADD:
            sp--;
            stack[sp - 1] += stack[sp];
            break;
        case SUB:
            sp--;
            stack[sp - 1] -= stack[sp];
            break;
        case MUL:
            sp--;
            stack[sp - 1] *= stack[sp];
            break;
        case MOD:
            sp--;
            stack[sp - 1] %= stack[sp];
            break;
        case LT:
            sp--;
            stack[sp - 1] = stack[sp - 1] < stack[sp];
            break;
        case JZ:
            pc = stack[--sp] ? pc + 1 : code[pc];
            break;
        case JMP:
            pc = code[pc];
            break;
        case DUP:
            stack[sp] = stack[sp - 1];
            sp++;
            break;
        case DROP:
            sp--;
            break;
        case PRINT:
            out_str("result = ");
            out_dec(stack[sp - 1]);
            out_char('\n');
            break;
        case HALT:
            return stack[sp - 1];
        default:
            return -1;
        }
    }
}

int main(void)
{
    return run(prog) == 8275 ? 0 : 1;
}
