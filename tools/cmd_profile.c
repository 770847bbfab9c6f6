/* SPDX-License-Identifier: BSD-2-Clause */
/* PLACEHOLDER until its owner lands it: to be replaced, never shipped. */
#include <stdio.h>

#include "commands.h"

int tk_cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracekit profile: not built yet\n");
    return 2;
}
