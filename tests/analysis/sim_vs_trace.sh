#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The profile counted directly from the hart model's retirements (profile --sim) must equal
# the profile of the same run encoded to E-Trace packets and decoded back (sim --encode, then
# profile from the trace): same instructions, functions (self, inclusive, entries), call
# edges, branches and blocks. Each profile is also made with --by-range (the flow handed to
# the profile range by range instead of in block batches): the files must be identical.
# usage: sim_vs_trace.sh TRACEKIT ELF SCF UCF_ENCODER UCF_DECODER WORKDIR MAX
set -uo pipefail
tk=$1 elf=$2 scf=$3 ucfe=$4 ucfd=$5 work=$6 max=$7
for f in "$elf" "$scf" "$ucfe" "$ucfd"; do
  [ -f "$f" ] || { echo "SKIP: $f absent"; exit 77; }
done
mkdir -p "$work"
n=$work/$(basename "$elf" .elf).$(basename "$(dirname "$scf")")
"$tk" profile --format json -o "$n.sim.json" --sim "$elf" --max-insns "$max" --quiet 2>/dev/null ||
  { echo "FAIL: profile --sim"; exit 1; }
"$tk" sim "$elf" --quiet --max-insns "$max" --retired-only --encode --scf "$scf" --ucf "$ucfe" \
  -o "$n.raw" >/dev/null 2>&1
"$tk" profile --format json -o "$n.trace.json" --scf "$scf" --ucf "$ucfd" --elf "$elf" \
  --no-bootrom "$n.raw" --quiet || { echo "FAIL: profile of the decoded trace"; exit 1; }
for f in json autofdo bolt folded; do
  "$tk" profile --format $f -o "$n.sim.$f.blocks" --sim "$elf" --max-insns "$max" --quiet \
    2>/dev/null && "$tk" profile --format $f -o "$n.sim.$f.ranges" --by-range --sim "$elf" \
    --max-insns "$max" --quiet 2>/dev/null || { echo "FAIL: profile --sim --format $f"; exit 1; }
  cmp -s "$n.sim.$f.blocks" "$n.sim.$f.ranges" || { echo "FAIL: $f differs with --by-range"; exit 1; }
done
cmp -s "$n.sim.json" "$n.sim.json.blocks" || { echo "FAIL: json differs from run to run"; exit 1; }
"$tk" profile --format json -o "$n.trace.ranges.json" --scf "$scf" --ucf "$ucfd" --elf "$elf" \
  --no-bootrom "$n.raw" --quiet --by-range || { echo "FAIL: profile --by-range of the trace"; exit 1; }
cmp -s "$n.trace.json" "$n.trace.ranges.json" ||
  { echo "FAIL: the decoded trace's json differs with --by-range"; exit 1; }
# Coverage collects the flat profile (TK_PROFILE_FLAT): its lcov file must equal the full
# profile's (--full-profile), from the hart model and from the decoded trace. Only programs
# with DWARF lines (the examples) make a coverage file.
if "$tk" coverage -o "$n.sim.info" --sim "$elf" --max-insns "$max" --quiet --all-files \
  2>/dev/null; then
  "$tk" coverage -o "$n.sim.full.info" --full-profile --sim "$elf" --max-insns "$max" --quiet \
    --all-files 2>/dev/null || { echo "FAIL: coverage --full-profile --sim"; exit 1; }
  "$tk" coverage -o "$n.trace.info" --scf "$scf" --ucf "$ucfd" --elf "$elf" --no-bootrom \
    "$n.raw" --quiet --all-files || { echo "FAIL: coverage of the decoded trace"; exit 1; }
  "$tk" coverage -o "$n.trace.full.info" --full-profile --scf "$scf" --ucf "$ucfd" --elf "$elf" \
    --no-bootrom "$n.raw" --quiet --all-files ||
    { echo "FAIL: coverage --full-profile of the decoded trace"; exit 1; }
  grep -q '^DA:' "$n.sim.info" || { echo "FAIL: coverage without lines"; exit 1; }
  cmp -s "$n.sim.info" "$n.sim.full.info" ||
    { echo "FAIL: flat and full coverage differ (hart model)"; exit 1; }
  cmp -s "$n.trace.info" "$n.trace.full.info" ||
    { echo "FAIL: flat and full coverage differ (decoded trace)"; exit 1; }
  echo "flat and full coverage identical ($(grep -c '^DA:' "$n.sim.info") lines)"
fi
python3 - "$n.sim.json" "$n.trace.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
ta, tb = a["totals"], b["totals"]
if ta["instructions"] != tb["instructions"]:
    sys.exit("FAIL: %d instructions from the hart, %d decoded" % (ta["instructions"], tb["instructions"]))
for key in ("functions", "calls", "branches", "blocks"):
    if a[key] != b[key]:
        da = [r for r in a[key] if r not in b[key]][:3]
        db = [r for r in b[key] if r not in a[key]][:3]
        sys.exit("FAIL: %s differ: hart %s / decoded %s" % (key, da, db))
print("PASS: %s: %d instructions, %d functions, %d calls, %d branches, %d blocks, %d traps "
      "equal from the hart and from the decoded trace"
      % (sys.argv[1].split("/")[-1].replace(".sim.json", ""), ta["instructions"],
         len(a["functions"]), len(a["calls"]), len(a["branches"]), len(a["blocks"]), ta["traps"]))
PY
