#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `tracekit decode --snapshot` with memory images that are not the traced program's: a copy of
# bugfix-exact-match whose memory dumps are loaded 4 bytes off must give a clear mismatch
# message and exit status 1; the snapshot itself decodes with status 0 and no message.
#   usage: etm4_wrong_memory.sh TRACEKIT TESTDATA
set -euo pipefail
T=$1
S=$2/opencsd/snapshots/bugfix-exact-match
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$T" decode --snapshot "$S" --id 0x12 --format ranges >"$tmp/clean" 2>"$tmp/clean.err"
[ ! -s "$tmp/clean.err" ] || { cat "$tmp/clean.err"; exit 1; }
[ -s "$tmp/clean" ]

# The copy: every file linked, the cores' .ini rewritten with each dump 4 bytes higher.
mkdir "$tmp/ss"
for f in "$S"/*; do ln -s "$f" "$tmp/ss/"; done
for f in "$S"/cpu_*.ini; do
    rm "$tmp/ss/$(basename "$f")"
    while IFS= read -r line; do
        line=${line%$'\r'}
        if [[ $line == address=* ]]; then
            printf 'address=0x%x\n' $((${line#address=} + 4))
        else
            printf '%s\n' "$line"
        fi
    done <"$f" >"$tmp/ss/$(basename "$f")"
done
grep -q "address=0x400204" "$tmp/ss/cpu_0.ini"

rc=0
"$T" decode --snapshot "$tmp/ss" --id 0x12 --format ranges >"$tmp/bad" 2>"$tmp/bad.err" || rc=$?
[ "$rc" -eq 1 ] || { echo "exit status $rc, expected 1"; exit 1; }
grep -q "places where the trace does not fit the memory images" "$tmp/bad.err" ||
    { echo "no mismatch summary:"; tail -3 "$tmp/bad.err"; exit 1; }
# each error located: [byte offset, address: status: message]
grep -Eq '^\[[0-9]+, 0x[0-9a-f]+: .*Trace Info' "$tmp/bad.err" ||
    { echo "no located mismatch error:"; head -3 "$tmp/bad.err"; exit 1; }
echo "shifted memory: exit status 1; $(grep -c '^\[' "$tmp/bad.err") located errors;" \
    "$(tail -2 "$tmp/bad.err" | head -1)"
