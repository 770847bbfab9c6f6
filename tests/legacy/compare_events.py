#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare a decoder's events (tracekit decode --format events) with the exact events of the
execution (tracekit sim --events / --events-pcs-only, made by tk_pc_flow from the hart's
PCs and traps).

Decoded timestamps are left out (the reference has none). With --no-causes, traps are
compared by address only (a run-length trace carries no cause).

One difference is accepted, where the reference is the less exact side: tk_pc_flow_trap()
reports a jump or xRET whose target then faults as ending with no transfer ("none"), while
the trace says which transfer it was (the E-Trace decoder keeps it too); and the last range
of the run, whose outcome the reference cannot know (no PC follows it) while the encoder was
told where the hart went next."""
import sys

JUMPS = {"jump", "call", "return", "swap", "other", "trap-return"}


def main():
    args = sys.argv[1:]
    no_causes = "--no-causes" in args
    args = [a for a in args if a != "--no-causes"]
    if len(args) != 2:
        print("usage: compare_events.py [--no-causes] REFERENCE DECODED", file=sys.stderr)
        return 2
    with open(args[0]) as f:
        ref = f.read().splitlines()
    with open(args[1]) as f:
        dec = [e for e in f.read().splitlines() if not e.startswith("timestamp ")]
    if no_causes:
        ref = [" ".join(e.split()[:2]) if e.startswith("trap ") else e for e in ref]
        dec = [" ".join(e.split()[:2]) if e.startswith("trap ") else e for e in dec]
    if len(ref) != len(dec):
        print(f"{len(ref)} reference events, {len(dec)} decoded")
    for i, (a, b) in enumerate(zip(ref, dec)):
        if a == b:
            continue
        ra, rb = a.split(), b.split()
        follows_trap = i + 1 < len(ref) and ref[i + 1].startswith("trap ")
        if (len(ra) == 5 and len(rb) >= 5 and ra[:4] == rb[:4] and ra[4] == "none"
                and ((rb[4] in JUMPS and follows_trap) or i + 1 == len(ref))):
            continue
        print(f"event {i + 1} differs:\n  reference: {a}\n  decoded:   {b}")
        return 1
    if len(ref) != len(dec):
        return 1
    print(f"{len(ref)} events equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
