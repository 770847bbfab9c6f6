#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# profile/coverage/report --jobs N: the producer (decoder, hart model, PC list reader) on one
# thread and the profile on another give byte for byte the files, messages and exit status of
# the one-thread run, for every input kind, clean and damaged (E-Trace errors, CoreSight
# frame errors in order with the decoder's), and every output format.
#   usage: cli_jobs.sh TRACEKIT TESTDATA EXAMPLES_DIR
set -uo pipefail
tk=$1 data=$2 ex=$3
[ -d "$data" ] || { echo "SKIP: shared test data not found at $data"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
n=0

same() { # same CMD ARGS...: the command with -j 1, -j 2 and -j 3 gives the same everything
    local rc1 rc
    "$tk" "$@" -j 1 -o "$tmp/o1" 2>"$tmp/e1"
    rc1=$?
    for j in 2 3; do
        "$tk" "$@" -j "$j" -o "$tmp/o$j" 2>"$tmp/e$j"
        rc=$?
        [ "$rc" = "$rc1" ] || fail "$* -j $j: exit $rc, -j 1 $rc1: $(cat "$tmp/e$j")"
        cmp -s "$tmp/o1" "$tmp/o$j" || fail "$* -j $j: output differs"
        cmp -s "$tmp/e1" "$tmp/e$j" || fail "$* -j $j: messages differ: $(diff "$tmp/e1" "$tmp/e$j" | head -5)"
    done
    n=$((n + 1))
}

# Usage.
"$tk" profile -j 0 --sim x >/dev/null 2>"$tmp/err" && fail "-j 0 accepted"
grep -q -- '--jobs needs a number' "$tmp/err" || fail "-j 0: $(cat "$tmp/err")"
"$tk" profile --piece-size 0 --sim x >/dev/null 2>"$tmp/err" && fail "--piece-size 0 accepted"
grep -q -- '--piece-size needs' "$tmp/err" || fail "--piece-size 0: $(cat "$tmp/err")"

# E-Trace: every format, block batches and --by-range.
prog=dhrystone
dir=$data/etrace-ref/$prog/itype3_basic
elf=$data/riscv-ref/$prog.riscv
tin=(--scf "$dir/$prog.scf" --ucf "$dir/$prog.decoder.ucf" --elf "$elf" --quiet)
for f in callgrind folded json autofdo bolt llvm-sample; do
    same profile --format "$f" "${tin[@]}" "$dir/$prog.te_inst_raw"
done
same profile --format json --by-range "${tin[@]}" "$dir/$prog.te_inst_raw"
same coverage "${tin[@]}" "$dir/$prog.te_inst_raw"
same report --top 5 "${tin[@]}" "$dir/$prog.te_inst_raw"

# Damaged E-Trace: bytes overwritten in several places, errors printed as they come.
cp "$dir/$prog.te_inst_raw" "$tmp/bad.te_inst_raw"
size=$(stat -c %s "$tmp/bad.te_inst_raw")
for k in 1 3 5 7; do
    printf '\xff\x00\xff\x13\x37' | dd of="$tmp/bad.te_inst_raw" bs=1 seek=$((size * k / 9)) \
        conv=notrunc 2>/dev/null
done
same report "${tin[@]}" "$tmp/bad.te_inst_raw"
grep -q 'offset' "$tmp/e1" || fail "damaged E-Trace: no error lines"
same profile --format json "${tin[@]}" "$tmp/bad.te_inst_raw"
# ... and truncated in a packet.
head -c $((size / 2 + 1)) "$dir/$prog.te_inst_raw" >"$tmp/cut.te_inst_raw"
same profile --format callgrind "${tin[@]}" "$tmp/cut.te_inst_raw"

# A PC list and the hart model.
pcs=$data/etrace-ref/median/itype3_basic/median.decoder.trace.gz
same profile --format json --elf "$data/riscv-ref/median.riscv" --pc-trace "$pcs" --quiet
for p in recursion traps setjmp; do
    [ -f "$ex/$p.elf" ] || continue
    same profile --format json --sim "$ex/$p.elf" --quiet
done
[ -f "$ex/bench.elf" ] && same report --sim "$ex/bench.elf" --max-insns 3000000 --quiet

# CoreSight: a clean snapshot, one with decode errors, and one with a framing error
# (the framing's notes must come out between the decoder's error lines as without --jobs).
# The first pass, which finds the functions, decodes pieces of the trace on N threads:
# small pieces put many cuts among the calls.
S=$data/opencsd/snapshots
pieces() { # pieces CMD ARGS...: as same, and with pieces of 2 KiB and 20000 bytes
    same "$@"
    for p in 2048 20000; do
        for j in 2 3; do
            "$tk" "$@" -j "$j" --piece-size "$p" -o "$tmp/p$j" 2>"$tmp/pe$j"
            cmp -s "$tmp/o1" "$tmp/p$j" || fail "$* -j $j --piece-size $p: output differs"
            cmp -s "$tmp/e1" "$tmp/pe$j" || fail "$* -j $j --piece-size $p: messages differ"
        done
    done
}
if [ -d "$S" ]; then
    B=$S/bugfix-exact-match
    pieces report --snapshot "$B"
    pieces profile --format callgrind --snapshot "$B"
    pieces profile --format json --snapshot "$B" --id 0x12
    # four copies of the buffer as one bare trace: the seams break the flow
    for _ in 1 2 3 4; do cat "$B/cstrace.bin"; done >"$tmp/x4.bin"
    pieces profile --format folded --trace "$tmp/x4.bin" --id 0x12 --reg TRCCONFIGR=0x1 \
        --reg TRCIDR1=0x4100F400 --mem 0x400200:"$B/cc1.text_dump.bin"
    pieces report --snapshot "$S/juno_r1_1" --id 0x10
    grep -q 'offset' "$tmp/e1" || fail "juno_r1_1: no error lines"
    # A byte dropped from the ETB buffer: a bad packet, then the frame alignment is lost
    # and found again (a framing note).
    mkdir "$tmp/ss"
    for f in "$B"/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$tmp/ss/"; done
    rm "$tmp/ss/cstrace.bin"
    (head -c 300000 "$B/cstrace.bin" && tail -c +300002 "$B/cstrace.bin") >"$tmp/ss/cstrace.bin"
    pieces report --snapshot "$tmp/ss" --id 0x12
    grep -q 'frame alignment lost' "$tmp/e1" || fail "no framing note: $(cat "$tmp/e1")"
    pieces report --snapshot "$tmp/ss"
fi
echo "$n runs: -j 2 (and -j 3) give what -j 1 gives"
