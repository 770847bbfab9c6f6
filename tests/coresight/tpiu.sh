#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# TPIU captures (--trace-format tpiu, tpiu-hsync), made at test time from the formatter frames
# of bugfix-exact-match: FSYNCs between frames and HSYNC halfwords inside them must give the
# packets of the memory-aligned frames, and trc_pkt_lister -tpiu_hsync's packets and ranges
# on a snapshot of the capture (compare_opencsd.py).
#   usage: tpiu.sh TRACEKIT PYTHON LISTER TESTDATA
set -euo pipefail
T=$1 PY=$2 L=$3
B=$4/opencsd/snapshots/bugfix-exact-match
[ -d "$B" ] || { echo "SKIP: $B not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The first 4000 frames; an FSYNC before every 4th frame and, in tpiu-hsync.bin, an HSYNC in
# every 3rd frame at halfword k = f % 8 (so also first and last).
"$PY" - "$B/cstrace.bin" "$tmp" <<'END'
import sys
raw = open(sys.argv[1], "rb").read()[:4000 * 16]
out = {"framed.bin": bytearray(raw), "tpiu.bin": bytearray(), "tpiu-hsync.bin": bytearray()}
for f in range(len(raw) // 16):
    fr = raw[f * 16:f * 16 + 16]
    for name in ("tpiu.bin", "tpiu-hsync.bin"):
        if f % 4 == 0:
            out[name] += b"\xff\xff\xff\x7f"
    out["tpiu.bin"] += fr
    if f % 3 == 0:
        k = 2 * (f % 8)
        fr = fr[:k] + b"\xff\x7f" + fr[k:]
    out["tpiu-hsync.bin"] += fr
for name, data in out.items():
    open(sys.argv[2] + "/" + name, "wb").write(data)
END

R=(--id 0x12 --reg TRCCONFIGR=0x1 --reg TRCIDR1=0x4100F400)
"$T" dump --trace "$tmp/framed.bin" "${R[@]}" | cut -f2- >"$tmp/framed"
[ "$(wc -l <"$tmp/framed")" -gt 40000 ]
for fmt in tpiu tpiu-hsync; do
    "$T" dump --trace "$tmp/$fmt.bin" --trace-format $fmt "${R[@]}" | cut -f2- >"$tmp/out"
    cmp "$tmp/framed" "$tmp/out"
done
# Without HSYNC handling, an HSYNC is a framing error.
rc=0
"$T" dump --trace "$tmp/tpiu-hsync.bin" --trace-format tpiu "${R[@]}" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ]
grep -q "^\[4: malformed input: HSYNC inside a frame\]" "$tmp/err"
echo "tpiu, tpiu-hsync: $(wc -l <"$tmp/framed") packets identical to the memory-aligned frames'"

# The capture as a snapshot (its own .ini files; the code image of bugfix-exact-match).
S=$tmp/ss
mkdir "$S"
mv "$tmp/tpiu-hsync.bin" "$S/trace.bin"
img=$("$PY" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' \
    "$B/cc1.text_dump.bin" "$S")
printf '[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu.ini\ndevice1=etm.ini\n\n[trace]\nmetadata=trace.ini\n' >"$S/snapshot.ini"
printf '[device]\nname=cpu_1\nclass=core\ntype=Cortex-A53\n\n[dump1]\nfile=%s\naddress=0x400200\n' "$img" >"$S/cpu.ini"
printf '[device]\nname=etm_1\nclass=trace_source\ntype=ETM4\n\n[regs]\nTRCCONFIGR=0x1\nTRCTRACEIDR=0x12\nTRCIDR0=0x28000EA1\nTRCIDR1=0x4100F400\nTRCIDR2=0x488\nTRCIDR8=0\n' >"$S/etm.ini"
printf '[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=tpiu_0\nfile=trace.bin\nformat=coresight\n\n[source_buffers]\netm_1=tpiu_0\n\n[core_trace_sources]\ncpu_1=etm_1\n' >"$S/trace.ini"
"$PY" "$(dirname "$0")/compare_opencsd.py" --trace-format tpiu-hsync "$T" "$L" "$S"
