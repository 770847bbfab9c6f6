#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Round trips of the legacy trace formats on one program run on the hart model: for every
# option set, decode(encode(run)) must give back exactly the retired PCs, the exact events
# of the run (compare_events.py) and, for data trace, the accesses the options select.
# usage: roundtrip.sh TRACEKIT ELF MAX_INSNS WORKDIR
set -u
tk=$1 elf=$2 max=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$elf" ] || { echo "SKIP: $elf absent"; exit 77; }
mkdir -p "$work"
n=$(basename "$elf")
w="$work/$n"
fail=0

# name | format options
sets=(
  "nibble-pc|--trace-format nibble --emit pc"
  "nibble-branch|--trace-format nibble --emit branch"
  "nibble-pc-branch|--trace-format nibble --emit pc,branch --buffer-words 256"
  "nibble-branch-data|--trace-format nibble --emit branch,data,csr"
  "nibble-pc-data-ts|--trace-format nibble --emit pc,load-addr,store-data,timestamp --timestamp-period 500"
  "nibble-branch-region|--trace-format nibble --emit branch,data --region 0x80000000:0x80010000"
  "rle|--trace-format rle"
  "rle-throttled|--trace-format rle --depth 2 --retire-width 4 --trace-div 3 --run-bits 4"
)
for s in "${sets[@]}"; do
  name=${s%%|*}
  read -r -a opts <<< "${s#*|}"
  ref_events="$w.$name.ev"
  cmpopt=()
  case $name in rle*) cmpopt=(--no-causes) ;; esac
  if ! "$tk" sim "$elf" --quiet --max-insns "$max" --encode "${opts[@]}" -o "$w.$name.trace" \
      --pcs "$w.$name.pcs" --events "$ref_events" --accesses "$w.$name.acc" 2> "$w.$name.log"; then
    if [ $? -ge 2 ]; then echo "FAIL: $name: sim"; cat "$w.$name.log"; fail=1; continue; fi
  fi
  if ! "$tk" decode "${opts[@]:0:2}" --elf "$elf" "$w.$name.trace" -o "$w.$name.dec" \
      --accesses "$w.$name.dacc"; then
    echo "FAIL: $name: decode"; fail=1; continue
  fi
  if ! cmp -s "$w.$name.pcs" "$w.$name.dec"; then
    echo "FAIL: $name: decoded PCs differ from the retired PCs"
    diff "$w.$name.pcs" "$w.$name.dec" | head -n 5
    fail=1; continue
  fi
  "$tk" decode "${opts[@]:0:2}" --elf "$elf" "$w.$name.trace" --format events -o "$w.$name.dev" || { fail=1; continue; }
  if ! python3 "$here/compare_events.py" "${cmpopt[@]}" "$ref_events" "$w.$name.dev" > "$w.$name.cmp"; then
    echo "FAIL: $name: events"; cat "$w.$name.cmp"; fail=1; continue
  fi
  case $name in
  nibble-*data*|nibble-*region*)
    if ! cmp -s "$w.$name.acc" "$w.$name.dacc"; then
      echo "FAIL: $name: decoded accesses differ"; diff "$w.$name.acc" "$w.$name.dacc" | head -n 5
      fail=1; continue
    fi
    acc=", $(wc -l < "$w.$name.acc") accesses" ;;
  *) acc="" ;;
  esac
  echo "PASS: $n $name: $(wc -l < "$w.$name.pcs") PCs, $(cat "$w.$name.cmp")$acc; $(tail -n 1 "$w.$name.log")"
  rm -f "$w.$name".*
done
exit $fail
