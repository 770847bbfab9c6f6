#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `tracekit dump --snapshot` exit status: 0 and nothing on stderr for bugfix-exact-match; 1 for
# a copy whose buffer has 48 bytes overwritten at 300 000, with a last stderr line giving the
# number of bad packets and framing errors and the offset of the first one, which must be the
# count and the least offset of the error packets listed and the framing errors printed.
#   usage: etm4_dump_status.sh TRACEKIT TESTDATA
set -euo pipefail
T=$1
S=$2/opencsd/snapshots/bugfix-exact-match
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$T" dump --snapshot "$S" >"$tmp/clean" 2>"$tmp/clean.err"
[ ! -s "$tmp/clean.err" ] || { cat "$tmp/clean.err"; exit 1; }
[ -s "$tmp/clean" ]

mkdir "$tmp/ss"
for f in "$S"/*; do ln -s "$f" "$tmp/ss/"; done
rm "$tmp/ss/cstrace.bin"
{
    head -c 300000 "$S/cstrace.bin"
    for _ in $(seq 48); do printf '\x08'; done # 0x08: a reserved ETMv4 header (IHI0064 §6.4)
    tail -c +300049 "$S/cstrace.bin"
} >"$tmp/ss/cstrace.bin"
[ "$(stat -c %s "$tmp/ss/cstrace.bin")" -eq "$(stat -c %s "$S/cstrace.bin")" ]

rc=0
"$T" dump --snapshot "$tmp/ss" >"$tmp/bad" 2>"$tmp/bad.err" || rc=$?
[ "$rc" -eq 1 ] || { echo "exit status $rc, expected 1"; exit 1; }
line=$(tail -1 "$tmp/bad.err")
re='^tracekit dump: ([0-9]+) bad packets or framing errors, the first at byte offset ([0-9]+)$'
[[ $line =~ $re ]] || { echo "no summary line: $line"; exit 1; }
n=${BASH_REMATCH[1]} first=${BASH_REMATCH[2]}
# what the listing and the framing errors show
want=$( { awk -F'\t' '$3 ~ /^I_(INCOMPLETE_EOT|BAD_SEQUENCE|RESERVED|RESERVED_CFG)( |$)/ {print $1}' "$tmp/bad"
          sed -n 's/^\[\([0-9]*\): .*/\1/p' "$tmp/bad.err"; } | sort -n)
[ "$n" -eq "$(printf '%s\n' "$want" | grep -c .)" ] ||
    { echo "summary says $n errors, listed: $(printf '%s\n' "$want" | grep -c .)"; exit 1; }
[ "$first" -eq "$(printf '%s\n' "$want" | head -1)" ] ||
    { echo "summary says first at $first, listed first at $(printf '%s\n' "$want" | head -1)"; exit 1; }
[ "$n" -ge 1 ] && [ "$first" -ge 299000 ]
echo "damaged buffer: exit status 1; $line"
