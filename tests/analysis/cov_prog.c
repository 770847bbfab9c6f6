/* SPDX-License-Identifier: BSD-2-Clause */
/* A program whose unreached lines are known: every line with code that never runs carries
 * the marker NEVER, and coverage_test.sh checks that the lcov file from its trace lists
 * exactly those lines with count 0 (built with -O0 -g so that each line has its own code). */
static volatile int sink;

static int classify(int x)
{
    if (x > 100) {
        sink = 1;  /* NEVER */
        return -1; /* NEVER */
    }
    if (x & 1)
        return 1;
    return 0;
}

static void unused_helper(void)
{              /* NEVER: gcc puts the prologue on the opening brace's line */
    sink = 42; /* NEVER */
} /* NEVER */

int main(void)
{
    int odd = 0;
    for (int i = 0; i < 10; i++)
        odd += classify(i);
    if (odd != 5)
        unused_helper(); /* NEVER */
    sink = odd;
    return 0;
}
