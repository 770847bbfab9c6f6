#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Seed 001's second use case: with PC values in the trace, the instruction stream is
# reconstructed without the program. The program is built without the C extension, so the
# trace carries PC bits XLEN-1:2 (--no-compressed) and every instruction is 4 bytes: the
# decoder, given no ELF, must print exactly the retired PCs.
# usage: no_binary.sh TRACEKIT ELF WORKDIR
set -u
tk=$1 elf=$2 work=$3
[ -f "$elf" ] || { echo "SKIP: $elf absent"; exit 77; }
mkdir -p "$work"
w="$work/$(basename "$elf").nobin"
for emit in pc pc,data; do
  "$tk" sim "$elf" --quiet --encode --trace-format nibble --emit "$emit" --no-compressed \
      -o "$w.nib" --pcs "$w.pcs" --accesses "$w.acc" 2> "$w.log" || { cat "$w.log"; exit 1; }
  "$tk" decode --trace-format nibble "$w.nib" -o "$w.dec" --accesses "$w.dacc" || exit 1
  cmp "$w.pcs" "$w.dec" || { echo "FAIL: $emit: PCs decoded without the program differ"; exit 1; }
  cmp "$w.acc" "$w.dacc" || { echo "FAIL: $emit: accesses differ"; exit 1; }
  echo "PASS: $emit: $(wc -l < "$w.pcs") PCs and $(wc -l < "$w.acc") accesses without the program"
done
# the compressed-PC trace of the same program needs the ELF for instruction lengths
"$tk" sim "$elf" --quiet --encode --trace-format nibble --emit pc -o "$w.nib" 2> /dev/null || exit 1
if "$tk" decode --trace-format nibble "$w.nib" -o "$w.dec" 2> "$w.err"; then
  echo "FAIL: decoding compressed PCs without the program should ask for --elf"; exit 1
fi
grep -q -- "--elf" "$w.err" || { cat "$w.err"; exit 1; }
rm -f "$w".*
