#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Sum the fuzzing record that fuzz/run.sh appends to (BUILD/fuzz-record.tsv: date, target,
seconds run, executions, result) into the per-target table of docs/robustness.md.

usage: record.py FUZZ-RECORD.TSV [...]
"""
import sys
from collections import OrderedDict


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    totals = OrderedDict()
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                cols = line.rstrip("\n").split("\t")
                if len(cols) < 5:
                    continue
                _, target, secs, execs, result = cols[:5]
                t = totals.setdefault(target, [0, 0, 0, 0])
                t[0] += int(secs)
                t[1] += int(execs or 0)
                t[2] += 1
                t[3] += 0 if result == "ok" else 1
    print("| target | runs | time run | executions | runs ending in a crash |")
    print("|---|---:|---:|---:|---:|")
    for target in sorted(totals):
        secs, execs, runs, crashes = totals[target]
        print("| %s | %d | %d min %02d s | %s | %d |" % (target, runs, secs // 60, secs % 60,
                                                       format(execs, ","), crashes))


if __name__ == "__main__":
    main()
