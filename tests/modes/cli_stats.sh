#!/usr/bin/env bash
# tracekit stats: every row of a small matrix round-trips exactly (--check), the numbers add
# up (the "all" row is the sum of the programs), and bad input is a clear error.
set -euo pipefail
tk=$1
data=$2
out=$3
[ -d "$data/etrace-ref" ] || { echo "SKIP: no shared test data at $data"; exit 77; }
mkdir -p "$out"
r=$data/riscv-ref
e=$data/etrace-ref
"$tk" stats --check --config base --config full,group=4 --config "$STATS_MODES" \
    "$r/towers.riscv:$e/towers/towers.spike_pc_trace.gz" \
    "$r/vvadd.riscv:$e/vvadd/vvadd.spike_pc_trace.gz" > "$out/stats.txt"
cat "$out/stats.txt"
# 3 configurations x (2 programs + all) rows, all exact
[ "$(grep -c ' exact$' "$out/stats.txt")" -eq 9 ] || { echo "FAIL: not all rows exact"; exit 1; }
# the instructions of "all" are the sum over the programs (columns: program modes instr ...)
awk '$1 != "program" && $1 != "all" && $2 == "base" { s += $3 }
     $1 == "all" && $2 == "base" { a = $3 }
     END { if (s != a || s == 0) { print "FAIL: all row " a " != " s; exit 1 } }' "$out/stats.txt"
if "$tk" stats --config nonsense "$r/towers.riscv:$e/towers/towers.spike_pc_trace.gz" \
    2> "$out/err.txt"; then
    echo "FAIL: bad --config accepted"; exit 1
fi
grep -q "bad --config 'nonsense'" "$out/err.txt"
if "$tk" stats "$out/absent.elf" 2> "$out/err.txt" > /dev/null; then
    echo "FAIL: missing program accepted"; exit 1
fi
grep -q "absent.elf" "$out/err.txt"
# a program alone runs on the hart model (its first instructions), exact in every mode
"$tk" stats --check --max-insns 5000 --config base --config "$STATS_MODES" "$r/median.riscv" \
    > "$out/hart.txt"
cat "$out/hart.txt"
[ "$(grep -c ' exact$' "$out/hart.txt")" -eq 2 ] || { echo "FAIL: hart rows not exact"; exit 1; }
grep -q "^median .* 5000 " "$out/hart.txt"
echo "ok"
