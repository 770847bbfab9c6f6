#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `--trace FILE` (bare trace file, registers and memory images from options) must give exactly
# what the snapshot gives when the options carry the snapshot's values. Run with the real
# `tracekit` binary, so that its routing of dump/decode to the CoreSight code is tested too.
#   usage: raw_trace.sh TRACEKIT TESTDATA
set -euo pipefail
D=$1
S=$2/opencsd/snapshots
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Unformatted ("source_data") trace: init-short-addr, device2.ini registers.
"$D" dump --snapshot "$S/init-short-addr" >"$tmp/a"
"$D" dump --trace "$S/init-short-addr/tracebuffer.bin" --trace-format raw --id 0 \
    --reg TRCCONFIGR=0x1 --reg TRCIDR0=0x08000CA1 --reg TRCIDR1=0x4200F440 \
    --reg TRCIDR2=0x20001088 >"$tmp/b"
cmp "$tmp/a" "$tmp/b"
[ -s "$tmp/a" ]

# Formatted trace with its memory images: bugfix-exact-match, etm_1.ini and cpu_1.ini values.
B=$S/bugfix-exact-match
"$D" decode --snapshot "$B" --format ranges >"$tmp/a"
"$D" decode --trace "$B/cstrace.bin" --id 0x12 --reg TRCCONFIGR=0x1 --reg TRCIDR1=0x4100F400 \
    --mem 0x4001d8:"$B/cc1.init_dump.bin" --mem 0x400200:"$B/cc1.text_dump.bin" \
    --mem 0x5ce9c0:"$B/cc1__libc_freeres_fn_dump.bin" \
    --mem 0x5cf610:"$B/cc1__libc_thread_freeres_fn_dump.bin" \
    --mem 0x5cf700:"$B/cc1.fini_dump.bin" --format ranges >"$tmp/b"
cmp "$tmp/a" "$tmp/b"
echo "raw trace files: $(wc -l <"$tmp/a") ranges identical to the snapshot's"

# --mem over a snapshot adds an image to its cores': the snapshot without its text dump, with
# the dump given by --mem, decodes as the whole snapshot.
mkdir "$tmp/partial"
cp "$B"/*.ini "$B/cstrace.bin" "$B/cc1.init_dump.bin" "$B/cc1.fini_dump.bin" \
    "$B/cc1__libc_freeres_fn_dump.bin" "$B/cc1__libc_thread_freeres_fn_dump.bin" "$tmp/partial"
"$D" decode --snapshot "$tmp/partial" --mem 0x400200:"$B/cc1.text_dump.bin" --format ranges \
    >"$tmp/b"
cmp "$tmp/a" "$tmp/b"
echo "--mem over a snapshot: $(wc -l <"$tmp/b") ranges identical to the whole snapshot's"

# Bad options are usage errors (exit status 2), not crashes.
usage_error() {
    local rc=0
    "$D" "$@" >/dev/null 2>"$tmp/err" || rc=$?
    [ "$rc" = 2 ] || { echo "exit status $rc, not 2: $*"; cat "$tmp/err"; exit 1; }
}
usage_error dump --trace "$B/cstrace.bin" --reg TRCFOO=1
usage_error dump --trace "$B/cstrace.bin" --trace-format raw
usage_error decode --trace "$B/cstrace.bin" --trace-format etrace
# A snapshot names its own trace files: --trace with --snapshot is refused, saying why.
for cmd in dump decode; do
    usage_error $cmd --snapshot "$B" --trace "$B/cstrace.bin"
    grep -q -- "--snapshot and --trace exclude each other" "$tmp/err"
done
# The CoreSight help is reached with --trace as with --snapshot.
"$D" decode --trace x --help | grep -q -- "--trace-format"
