/* SPDX-License-Identifier: BSD-2-Clause */
/* Test driver: runs the CoreSight subcommands directly (`cs_driver dump|decode ARGS`), so the
 * comparisons do not depend on how `tracekit dump/decode` route --snapshot. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "dump"))
        return tk_cmd_dump_snapshot(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "decode"))
        return tk_cmd_decode_snapshot(argc - 1, argv + 1);
    fprintf(stderr, "usage: cs_driver dump|decode --snapshot DIR ...\n");
    return 2;
}
