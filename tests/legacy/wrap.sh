#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A nibble trace buffer that wrapped decodes from the first sync point after its write
# pointer: the decoded PCs must be exactly the last ones executed, from an instruction at
# that sync point's resync to the end, and cover most of the buffer.
# usage: wrap.sh TRACEKIT ELF MAX_INSNS WORKDIR EMIT WORDS
set -u
tk=$1 elf=$2 max=$3 work=$4 emit=$5 words=$6
[ -f "$elf" ] || { echo "SKIP: $elf absent"; exit 77; }
mkdir -p "$work"
w="$work/$(basename "$elf").wrap.$emit"
"$tk" sim "$elf" --quiet --max-insns "$max" --encode --trace-format nibble --emit "$emit" \
    --wrap --buffer-words "$words" -o "$w.nib" --pcs "$w.pcs" 2> "$w.log" || { cat "$w.log"; exit 1; }
grep -q "buffer wrapped" "$w.log" || { echo "FAIL: the buffer did not wrap"; cat "$w.log"; exit 1; }
"$tk" dump --trace-format nibble "$w.nib" > "$w.dump" || exit 1
"$tk" decode --trace-format nibble --elf "$elf" "$w.nib" -o "$w.dec" --stats 2> "$w.dlog" || { cat "$w.dlog"; exit 1; }
python3 - "$w.pcs" "$w.dec" "$w.dlog" "$w.dump" "$words" <<'PY'
import re, sys
pcs = open(sys.argv[1]).read().split()
dec = open(sys.argv[2]).read().split()
log = open(sys.argv[3]).read()
dump = open(sys.argv[4]).read().splitlines()
words = int(sys.argv[5])
start = int(re.search(r"from nibble (\d+)", log).group(1))
if start % words:
    sys.exit(f"FAIL: decoding started at nibble {start}, not a sync point")
first = dump[1].split()
if not first[0].endswith("*") or first[1] != "TraceEnabled":
    sys.exit(f"FAIL: the first sequence after the write pointer is not a resync: {dump[1]}")
if not dec or len(dec) >= len(pcs) or pcs[-len(dec):] != dec:
    sys.exit(f"FAIL: {len(dec)} decoded PCs are not the last of the {len(pcs)} executed")
print(f"PASS: wrapped buffer of {words} words decoded from nibble {start}: the last "
      f"{len(dec)} of {len(pcs)} PCs exactly")
PY
rc=$?
[ $rc -eq 0 ] && rm -f "$w".*
exit $rc
