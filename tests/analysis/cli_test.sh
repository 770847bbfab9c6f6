#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tracekit profile/coverage/report on a reference program and its executed-PC list: every
# format is written and read back by its consumer or grammar check, totals agree with the
# PC count, and usage errors and missing debug info are clear errors.
# usage: cli_test.sh TRACEKIT SRCDIR TESTDATA WORKDIR
set -uo pipefail
tk=$1 src=$2 data=$3 work=$4
[ -d "$data" ] || { echo "SKIP: shared test data not found at $data"; exit 77; }
mkdir -p "$work"
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect RC CMD... : run, check exit status
  local want=$1; shift
  "$@" >out.txt 2>err.txt
  local got=$?
  [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $(cat err.txt)"
}

for c in profile coverage report; do
  expect 0 "$tk" "$c" --help
  grep -q "example" out.txt || fail "$c --help shows no example"
done
expect 2 "$tk" profile --format nonsense --pc-trace x --elf y
grep -q "unknown format" err.txt || fail "no message for a bad format"
expect 2 "$tk" profile --format json
grep -q "no input" err.txt || fail "no message without input"

prog=median
elf=$data/riscv-ref/$prog.riscv
pcs=$data/etrace-ref/$prog/itype3_basic/$prog.decoder.trace.gz
n=$(zcat "$pcs" | wc -l)
in=(--elf "$elf" --pc-trace "$pcs" --quiet)

expect 1 "$tk" profile --elf "$elf" --pc-trace /nonexistent.pcs
grep -q "nonexistent" err.txt || fail "missing trace file not named: $(cat err.txt)"
printf '80000000\nzzz\n' > bad.pcs
expect 1 "$tk" report --elf "$elf" --pc-trace bad.pcs
grep -q "bad.pcs:2" err.txt || fail "bad PC line not located: $(cat err.txt)"

for f in callgrind folded json autofdo bolt; do
  expect 0 "$tk" profile --format "$f" -o "$prog.$f" "${in[@]}"
  # The profile fed range by range writes the same bytes as fed block batches (the default).
  expect 0 "$tk" profile --format "$f" -o "$prog.ranges.$f" --by-range "${in[@]}"
  cmp -s "$prog.$f" "$prog.ranges.$f" || fail "$f output differs with --by-range"
done
# Without DWARF: line-based outputs are refused with the reason.
expect 1 "$tk" profile --format llvm-sample -o x "${in[@]}"
grep -q "needs source lines" err.txt || fail "llvm-sample without DWARF: $(cat err.txt)"
expect 1 "$tk" coverage -o x "${in[@]}"
grep -qi "dwarf" err.txt || fail "coverage without DWARF: $(cat err.txt)"

total=$(python3 -c "import json,sys; print(json.load(open('$prog.json'))['totals']['instructions'])")
[ "$total" -eq "$n" ] || fail "JSON counts $total instructions, the PC list has $n"
grep -q "^summary: $n\$" "$prog.callgrind" || fail "callgrind summary is not $n"

expect 0 "$tk" report --top 5 "${in[@]}"
grep -q "Executed $n instructions" out.txt || fail "report total: $(head -3 out.txt)"
grep -q "main -> median" out.txt || fail "report has no main -> median call"

# The same profile from the E-Trace packets, decoded: identical functions, calls, branches
# and blocks.
dir=$data/etrace-ref/$prog/itype3_basic
tin=(--scf "$dir/$prog.scf" --ucf "$dir/$prog.decoder.ucf" "$dir/$prog.te_inst_raw" --quiet)
expect 0 "$tk" profile --format json -o "$prog.trace.json" "${tin[@]}"
python3 - "$prog.json" "$prog.trace.json" <<'PY' || fail "decoded and PC-list profiles differ"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
for key in ("functions", "calls", "branches", "blocks", "hot_paths"):
    # The decoded run also has spike's reset code at 0x1000 ([unknown]) and its call site.
    strip = lambda rows: [r for r in rows if "[unknown]" not in json.dumps(r)]
    if strip(a[key]) != strip(b[key]):
        print("differ in", key)
        sys.exit(1)
print("decoded trace and PC list give the same profile")
PY
expect 0 "$tk" report --top 3 "${tin[@]}"
grep -q "main -> median" out.txt || fail "report from the trace has no main -> median call"
# A damaged trace: errors are named with their offset, the rest is still counted.
# Cut inside the payload of the first packet from the middle on that has 3 bytes or more.
half=$(( $(stat -c %s "$dir/$prog.te_inst_raw") / 2 ))
off=$("$tk" dump --scf "$dir/$prog.scf" "$dir/$prog.te_inst_raw" | awk -v h="$half" '$1 > h && $3 >= 3 {print $1; exit}')
[ -n "$off" ] || fail "no packet to cut in"
head -c $((off + 2)) "$dir/$prog.te_inst_raw" > cut.te_inst_raw
expect 0 "$tk" report --scf "$dir/$prog.scf" --ucf "$dir/$prog.decoder.ucf" --elf "$elf" cut.te_inst_raw --quiet
grep -q "offset" err.txt || fail "truncated trace not reported: $(cat err.txt)"

# Progress: a line redrawn on a terminal (script(1) gives one), nothing when stderr is a file.
bench=$(dirname "$tk")/../examples/bench.elf
if command -v script >/dev/null && [ -f "$bench" ]; then
  script -qec "'$tk' report --top 1 --sim '$bench' -o /dev/null" /dev/null > tty.txt
  grep -aq $'\rtracekit report: [0-9]* instructions' tty.txt || fail "no progress line on a terminal"
  "$tk" report --top 1 --sim "$bench" -o /dev/null 2> notty.txt
  ! grep -aq "instructions $" notty.txt || fail "progress line written to a file"
fi

rc=0
for c in callgrind folded json autofdo bolt; do
  python3 "$src/check_consumers.py" "$c" "$prog" || { r=$?; [ $r -eq 77 ] || rc=1; }
done
python3 "$src/check_consumers.py" perf2bolt "$prog" "$elf" 5 || { r=$?; [ $r -eq 77 ] || rc=1; }
exit $rc
