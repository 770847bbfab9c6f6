#!/usr/bin/env bash
# make demo: run a built-in example on the hart model, encode its trace in-process, decode the
# packets with the ELF, check the decoded flow equals what was executed, and summarise.
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
tk="$top/$build/tools/tracekit"
elf="$top/$build/examples/${DEMO_PROGRAM:-recursion}.elf"
cfg="$top/scripts/demo"
out="$top/$build/demo"
mkdir -p "$out"
if [ ! -x "$tk" ] || [ ! -f "$elf" ]; then
  echo "demo: $tk or $elf is missing (did the build and the example programs build?)" >&2
  exit 1
fi

echo "== 1. run $(basename "$elf") on the hart model, encoding the trace in-process"
"$tk" sim "$elf" --pcs "$out/executed.pcs" --encode --scf "$cfg/demo.scf" --ucf "$cfg/demo.ucf" \
  -o "$out/demo.te_inst_raw"

echo "== 2. the first packets"
"$tk" dump --scf "$cfg/demo.scf" --ucf "$cfg/demo.ucf" "$out/demo.te_inst_raw" > "$out/packets.txt"
head -n 8 "$out/packets.txt"

echo "== 3. decode the packets with the ELF"
"$tk" decode --scf "$cfg/demo.scf" --ucf "$cfg/demo.ucf" --elf "$elf" "$out/demo.te_inst_raw" \
  -o "$out/decoded.pcs" --stats

echo "== 4. check: decoded flow == executed flow"
if cmp -s "$out/executed.pcs" "$out/decoded.pcs"; then
  n=$(wc -l < "$out/executed.pcs")
  bytes=$(stat -c %s "$out/demo.te_inst_raw")
  packets=$(wc -l < "$out/packets.txt")
  awk -v n="$n" -v b="$bytes" -v p="$packets" 'BEGIN {
    printf "OK: %d instructions decoded exactly; %d packets, %d bytes (%d payload), %.3f payload bits/instruction\n",
      n, p, b, b - p, ((b - p) * 8.0) / n }'
else
  echo "MISMATCH: decoded PCs differ from executed PCs:" >&2
  diff "$out/executed.pcs" "$out/decoded.pcs" | head -n 5 >&2
  exit 1
fi

echo "== 5. hottest functions"
"$tk" report --top 8 --scf "$cfg/demo.scf" --ucf "$cfg/demo.ucf" --elf "$elf" "$out/demo.te_inst_raw"
