#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The legacy formats on the command line: encoding the reference flow's spike CSV (the
# decoded PCs must be the reference decoder's .decoder.trace), dump, the bandwidth table,
# --trace-format etrace on the E-Trace commands, and clear errors for bad input.
# usage: cli.sh TRACEKIT TESTDATA WORKDIR
set -u
tk=$1 data=$2 work=$3
d=$data/etrace-ref/towers
elf=$data/riscv-ref/towers.riscv
[ -f "$d/towers.spike_pc_trace.gz" ] && [ -f "$elf" ] || { echo "SKIP: $d absent"; exit 77; }
mkdir -p "$work"
w=$work/cli
fail() { echo "FAIL: $*"; exit 1; }

zcat "$d/itype3_basic/towers.decoder.trace.gz" > "$w.ref" || fail "reading the reference trace"
for f in "nibble --emit branch" "nibble --emit pc" "rle"; do
  read -r -a o <<< "--trace-format $f"
  "$tk" encode "${o[@]}" "$d/towers.spike_pc_trace.gz" -o "$w.trace" --stats 2> "$w.log" ||
    { cat "$w.log"; fail "encode $f"; }
  "$tk" decode "${o[@]:0:2}" --elf "$elf" "$w.trace" -o "$w.dec" || fail "decode $f"
  cmp -s "$w.ref" "$w.dec" || fail "$f: decoded PCs differ from towers.decoder.trace"
  echo "PASS: encode $f from the spike CSV: $(wc -l < "$w.dec") PCs = the reference decoder's"
done

# the listing of each format (whole blocks reach it batched) has the instruction lines of
# the E-Trace decode's listing of the same run
"$tk" decode --scf "$d/itype3_basic/towers.scf" --ucf "$d/itype3_basic/towers.decoder.ucf" \
    --format listing "$d/itype3_basic/towers.te_inst_raw" | grep -v '^\[' > "$w.lst.et" ||
  fail "E-Trace listing"
[ "$(wc -l < "$w.lst.et")" -gt 10000 ] || fail "E-Trace listing: $(wc -l < "$w.lst.et") lines"
for f in "nibble --emit branch" "nibble --emit pc" "rle"; do
  read -r -a o <<< "--trace-format $f"
  "$tk" encode "${o[@]}" "$d/towers.spike_pc_trace.gz" -o "$w.trace" 2> /dev/null || fail "encode $f"
  "$tk" decode "${o[@]:0:2}" --elf "$elf" --format listing "$w.trace" | grep -v '^\[' > "$w.lst" ||
    fail "listing $f"
  cmp -s "$w.lst.et" "$w.lst" || fail "$f: the listing differs from the E-Trace one"
done
echo "PASS: listings of the three formats = the E-Trace listing"

"$tk" encode --trace-format nibble --emit pc "$d/towers.spike_pc_trace.gz" -o "$w.nib" || fail encode
"$tk" dump --trace-format nibble "$w.nib" > "$w.dump" || fail dump
sed -n 2p "$w.dump" | grep -q '^00000000\* TraceEnabled version=0$' || fail "dump: $(sed -n 2p "$w.dump")"
sed -n 3p "$w.dump" | grep -q 'ChangeHart 0 (1 nibbles)' || fail "dump: $(sed -n 3p "$w.dump")"
sed -n 4p "$w.dump" | grep -q 'PC 0000000040000000 (16 nibbles)' || fail "dump: $(sed -n 4p "$w.dump")"
tail -n 1 "$w.dump" | grep -q TraceDisabled || fail "dump ends with $(tail -n 1 "$w.dump")"
"$tk" encode --trace-format rle "$d/towers.spike_pc_trace.gz" -o "$w.rle" || fail encode
"$tk" dump --trace-format rle "$w.rle" | sed -n 2p | grep -q '^0 addr 80000000 run 0$' || fail "rle dump"
echo "PASS: dump"

"$tk" formats --max-insns 20000 "$elf" > "$w.formats" || fail formats
awk '$1 == "towers" && NF >= 11 && $3 > 0 && $7 > 0 { ok = 1 } END { exit !ok }' "$w.formats" ||
  { cat "$w.formats"; fail "formats table"; }
echo "PASS: formats"

# --trace-format etrace is the E-Trace path
"$tk" decode --trace-format etrace --scf "$d/itype3_basic/towers.scf" \
    --ucf "$d/itype3_basic/towers.decoder.ucf" "$d/itype3_basic/towers.te_inst_raw" -o "$w.et" ||
  fail "decode --trace-format etrace"
cmp -s "$w.ref" "$w.et" || fail "decode --trace-format etrace differs"
echo "PASS: --trace-format etrace"

# bad input
# a cut file: the message, exit status 1, and the PCs of its whole words are still decoded
# (the first ones of the full decode)
head -c 100 "$w.nib" > "$w.cut"
"$tk" decode --trace-format nibble --elf "$elf" "$w.nib" -o "$w.full" || fail "decode the whole nibble file"
"$tk" decode --trace-format nibble --elf "$elf" "$w.cut" -o "$w.part" 2> "$w.err" && fail "a cut file decoded"
grep -q "truncated at byte 100" "$w.err" || { cat "$w.err"; fail "no truncation message"; }
[ -s "$w.part" ] || fail "nothing decoded from the cut file"
head -n "$(wc -l < "$w.part")" "$w.full" | cmp -s - "$w.part" || fail "cut file: PCs differ"
head -c 1000 "$w.rle" > "$w.rcut"
"$tk" decode --trace-format rle --elf "$elf" "$w.rle" -o "$w.rfull" || fail "decode rle"
"$tk" decode --trace-format rle --elf "$elf" "$w.rcut" -o "$w.rpart" 2> "$w.err" && fail "a cut rle decoded"
grep -q "truncated in pair" "$w.err" || { cat "$w.err"; fail "no rle truncation message"; }
[ -s "$w.rpart" ] || fail "nothing decoded from the cut rle file"
head -n "$(wc -l < "$w.rpart")" "$w.rfull" | cmp -s - "$w.rpart" || fail "cut rle file: PCs differ"
echo "PASS: cut files: $(wc -l < "$w.part") and $(wc -l < "$w.rpart") PCs decoded before the cut"
"$tk" decode --trace-format rle --elf "$elf" "$w.nib" -o /dev/null 2> "$w.err" && fail "wrong format decoded"
grep -q "not a tracekit RLE trace" "$w.err" || { cat "$w.err"; fail "no format message"; }
"$tk" decode --trace-format nibble --elf "$elf" "$w.rle" -o /dev/null 2> "$w.err" && fail "wrong format decoded"
grep -q "not a tracekit nibble trace" "$w.err" || { cat "$w.err"; fail "no format message"; }
"$tk" sim "$elf" --encode --trace-format nibble --emit bogus -o "$w.x" 2> /dev/null; [ $? -eq 2 ] || fail "bad --emit"
"$tk" sim "$elf" --encode --trace-format nibble --buffer-words 100 -o "$w.x" 2> /dev/null; [ $? -eq 2 ] || fail "bad --buffer-words"
echo "PASS: errors"
rm -f "$w".*
