/* SPDX-License-Identifier: BSD-2-Clause */
/* PLACEHOLDER until its owner lands it: to be replaced, never shipped. */
#include <stdio.h>

#include "commands.h"

int tk_cmd_dump_snapshot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracekit dump --snapshot: not built yet\n");
    return 2;
}

int tk_cmd_decode_snapshot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracekit decode --snapshot: not built yet\n");
    return 2;
}
