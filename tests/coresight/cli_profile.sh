#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `tracekit profile|report|coverage --snapshot`: the analysis commands over ETMv4 trace. The
# profile must count exactly the flow `tracekit decode --format ranges` prints (instructions,
# ranges, per-address counts), on A64 and on T32 (Cortex-M) code, clean and damaged; functions
# are inferred from call targets when there are no symbols.
#   usage: cli_profile.sh TRACEKIT TESTDATA
set -euo pipefail
D=$1
S=$2/opencsd/snapshots
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Totals of a range listing: "<instructions> <ranges>".
range_totals() { awk '{n += $4; r++} END {print n + 0, r + 0}' "$1"; }
# Totals a report states: "Executed N instructions in R ranges".
report_totals() { sed -n 's/^Executed \([0-9]*\) instructions in \([0-9]*\) ranges.*/\1 \2/p' "$1"; }

check_totals() { # SNAPSHOT [OPTIONS...]
    local ss=$1
    shift
    "$D" decode --snapshot "$ss" --format ranges "$@" >"$tmp/ranges" 2>/dev/null || true
    "$D" report --snapshot "$ss" "$@" >"$tmp/report" 2>"$tmp/report.err" ||
        fail "report $ss: $(cat "$tmp/report.err")"
    local want got
    want=$(range_totals "$tmp/ranges")
    got=$(report_totals "$tmp/report")
    [ "$want" = "$got" ] || fail "$ss $*: report says '$got', decode ranges '$want'"
    [ "${want%% *}" -gt 0 ] || fail "$ss: no instructions"
    echo "$(basename "$ss") $*: $want instructions and ranges, as decode"
}

B=$S/bugfix-exact-match
check_totals "$B"
check_totals "$S/juno_r1_1" --id 0x10
check_totals "$S/armv8_1m_branches" # T32, Cortex-M

# Folded stacks add up to every instruction; every frame is an inferred function (or the
# profile's [unknown] callee of a call whose target the trace never showed: one in this run,
# at 0x57492c, the last thing before trace stopped).
"$D" profile --snapshot "$B" --format folded >"$tmp/folded"
n=$(awk '{s += $NF} END {print s}' "$tmp/folded")
[ "$n" = 7581461 ] || fail "folded stacks count $n instructions, not 7581461"
if awk '{sub(/ [0-9]+$/, ""); n = split($0, f, ";"); for (i = 1; i <= n; i++) print f[i]}' \
    "$tmp/folded" | grep -v -e '^sub_[0-9a-f]*$' -e '^\[unknown\]$' | head -1 | grep -q .; then
    fail "a frame that is not an inferred function"
fi

# Per-address counts: the callgrind profile's instruction counts ("0xADDR LINE COUNT" lines,
# self cost; the line after a calls= line is the call's inclusive cost) equal the decoded
# ranges (one execution each) expanded address by address (A64: 4 bytes each).
"$D" decode --snapshot "$B" --format ranges >"$tmp/ranges"
"$D" profile --snapshot "$B" --format callgrind >"$tmp/cg"
python3 - "$tmp/ranges" "$tmp/cg" <<'PY'
import collections, re, sys
want = collections.Counter()
for line in open(sys.argv[1]):
    _, first, last, _ = line.split()
    for a in range(int(first, 16), int(last, 16) + 1, 4):
        want[a] += 1
got = collections.Counter()
after_calls = False
for line in open(sys.argv[2]):
    m = re.match(r"0x([0-9a-f]+) \d+ (\d+)$", line)
    if m and not after_calls:
        got[int(m.group(1), 16)] += int(m.group(2))
    after_calls = line.startswith("calls=")
if want != got:
    bad = sorted(set(want) ^ set(got) | {a for a in want if want[a] != got.get(a)})
    sys.exit("FAIL: per-address counts differ, first at 0x%x: %d vs %d"
             % (bad[0], want.get(bad[0], 0), got.get(bad[0], 0)))
print("per-address counts: %d addresses as the decoded ranges" % len(got))
PY

# The call graph: the hottest path of this cc1 run is 7 deep.
"$D" report --snapshot "$B" >"$tmp/report"
grep -q '^ *543921  sub_406450;sub_41a6e0;sub_435208;sub_4e8788;sub_4e7150;sub_4e4458;sub_4eaae0$' \
    "$tmp/report" || fail "hottest call path"

# Symbols from an ELF (--elf, here one that has only symbols, made for the test) name their
# functions; the call graph is the same (the symbol has the extent the inferred function had).
python3 "$(dirname "$0")/make_syms_elf.py" "$tmp/syms.elf" compile_file=435208:2148
"$D" report --snapshot "$B" --elf "$tmp/syms.elf" >"$tmp/report.elf"
grep -q '^ *2193532 *3  sub_41a6e0 -> sub_435208 ' "$tmp/report" || fail "call edge without --elf"
grep -q '^ *2193532 *3  sub_41a6e0 -> compile_file ' "$tmp/report.elf" ||
    fail "call edge with --elf"
grep -q 'sub_435208' "$tmp/report.elf" && fail "an inferred function inside an ELF symbol"

# Several sources with trace: one at a time (usage error without --id).
rc=0
"$D" report --snapshot "$S/juno_r1_1" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] && grep -q -- '--id' "$tmp/err" || fail "juno_r1_1 without --id: exit $rc"

# No ELF: no source lines, said so (coverage and llvm-sample need them).
rc=0
"$D" coverage --snapshot "$B" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'no source lines' "$tmp/err" || fail "coverage without --elf: exit $rc"
# One input only.
rc=0
"$D" profile --snapshot "$B" --pc-trace x --elf y >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "two inputs: exit $rc"

# A damaged trace: errors with their offsets, and the profile counts exactly what decode
# still decodes from it.
R="--id 0x12 --reg TRCCONFIGR=0x1 --reg TRCIDR1=0x4100F400"
M="--mem 0x400200:$B/cc1.text_dump.bin"
cp "$B/cstrace.bin" "$tmp/damaged.bin"
printf '\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' |
    dd of="$tmp/damaged.bin" bs=1 seek=300000 conv=notrunc 2>/dev/null
# shellcheck disable=SC2086
"$D" decode --trace "$tmp/damaged.bin" $R $M --format ranges >"$tmp/ranges" 2>/dev/null || true
# shellcheck disable=SC2086
"$D" report --trace "$tmp/damaged.bin" $R $M >"$tmp/report" 2>"$tmp/err" || fail "damaged report"
grep -q 'damaged.bin: offset [0-9]* (packet [0-9]*): ' "$tmp/err" || fail "no offset in errors"
grep -q 'warning: [0-9]* trace errors' "$tmp/err" || fail "no error count"
[ "$(range_totals "$tmp/ranges")" = "$(report_totals "$tmp/report")" ] ||
    fail "damaged: report $(report_totals "$tmp/report"), decode $(range_totals "$tmp/ranges")"
echo "damaged trace: $(report_totals "$tmp/report") instructions and ranges, as decode"
