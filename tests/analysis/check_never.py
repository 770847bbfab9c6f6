#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""check_never.py SOURCE INFO: the lines of SOURCE that the lcov tracefile INFO reports with
count 0 must be exactly the lines marked NEVER, and every other line it lists must have run.
Also checks the function and branch records that follow from the program's structure."""
import os
import sys


def main(src, info):
    never = set()
    with open(src) as f:
        for n, line in enumerate(f, 1):
            if "NEVER" in line and not line.lstrip().startswith(("/*", "*")):
                never.add(n)
    name = os.path.basename(src)
    da, fnda, brda = {}, {}, {}
    cur = None
    with open(info) as f:
        for line in f:
            line = line.strip()
            if line.startswith("SF:"):
                cur = os.path.basename(line[3:])
            elif cur != name:
                continue
            elif line.startswith("DA:"):
                ln, cnt = line[3:].split(",")[:2]
                da[int(ln)] = int(cnt)
            elif line.startswith("FNDA:"):
                cnt, fn = line[5:].split(",", 1)
                fnda[fn] = int(cnt)
            elif line.startswith("BRDA:"):
                ln, blk, br, taken = line[5:].split(",")
                brda[(int(ln), int(blk), int(br))] = taken
    if not da:
        sys.exit("FAIL: %s has no DA records for %s" % (info, name))
    zero = {ln for ln, c in da.items() if c == 0}
    if zero != never:
        sys.exit("FAIL: lines with count 0 %s, lines marked NEVER %s (missing %s, extra %s)"
                 % (sorted(zero), sorted(never), sorted(never - zero), sorted(zero - never)))
    unlisted = never - set(da)
    if unlisted:
        sys.exit("FAIL: NEVER lines without code in the line table: %s" % sorted(unlisted))
    # classify() runs 10 times, unused_helper() never; main once.
    expect_fn = {"classify": 10, "unused_helper": 0, "main": 1}
    for fn, cnt in expect_fn.items():
        if fnda.get(fn) != cnt:
            sys.exit("FAIL: FNDA for %s is %s, expected %d" % (fn, fnda.get(fn), cnt))
    # "if (x > 100)" never taken (branch into the block, i.e. the compare falls through to
    # it) and "if (odd != 5)": every executed branch record has a number, the branches of
    # lines that never ran are "-".
    for (ln, blk, br), taken in brda.items():
        if ln in never and taken != "-":
            sys.exit("FAIL: branch on never-run line %d has count %s" % (ln, taken))
        if ln not in never and taken == "-":
            sys.exit("FAIL: branch on line %d that ran is reported as never executed" % ln)
    print("%d lines with code, %d never ran, exactly the NEVER lines %s; %d branch records"
          % (len(da), len(zero), sorted(never), len(brda)))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
