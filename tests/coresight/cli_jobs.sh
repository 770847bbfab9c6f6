#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `tracekit decode --snapshot ... --jobs N`: the output must be byte for byte the serial one, and
# so must the error lines and the exit status, whatever the piece size (small pieces: many
# seams), on clean, damaged and speculative trace, with a return stack, and when the buffer has
# several sources (then the decode runs on one thread, with a note).
#   usage: cli_jobs.sh TRACEKIT TESTDATA
set -euo pipefail
D=$1
S=$2/opencsd/snapshots
E=$2/opencsd/snapshots-ete
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# same ARGS...: serial and parallel runs agree (stdout, sorted stderr lines, exit status).
same() {
    local rc1=0 rc2
    "$D" decode "$@" >"$tmp/s.out" 2>"$tmp/s.err" || rc1=$?
    for j in 2 3; do
        for piece in 2048 65536; do
            rc2=0
            "$D" decode "$@" --jobs $j --piece-size $piece >"$tmp/p.out" 2>"$tmp/p.err" || rc2=$?
            cmp -s "$tmp/s.out" "$tmp/p.out" ||
                fail "decode $* --jobs $j --piece-size $piece: output differs"
            [ "$rc1" = "$rc2" ] || fail "decode $* --jobs $j: exit status $rc2, serial $rc1"
            # the same lines; framing errors come after the decode errors, not among them
            { grep -v -- '--jobs' "$tmp/p.err" || true; } | sort >"$tmp/p.sorted"
            sort "$tmp/s.err" >"$tmp/s.sorted"
            cmp -s "$tmp/s.sorted" "$tmp/p.sorted" || {
                diff "$tmp/s.sorted" "$tmp/p.sorted" | head -5
                fail "decode $* --jobs $j --piece-size $piece: messages differ"
            }
        done
    done
    echo "$*: $(wc -l <"$tmp/s.out") lines, exit $rc1, as serial"
}

B=$S/bugfix-exact-match
same --snapshot "$B" --id 0x12 --format ranges
same --snapshot "$B" --id 0x12
same --snapshot "$S/juno_r1_1" --id 0x10 --format ranges # missing code: error events
# return stack (TRCCONFIGR.RS); its kernel code is not in the snapshot: error events only
same --snapshot "$S/juno-ret-stck" --id 0x10 --format ranges
same --snapshot "$S/a55-test-tpiu" # DSTREAM capture: bad packets, resynchronisation
if [ -d "$E" ]; then
    same --snapshot "$E/maxspec78_commopt0" --format ranges # speculation, commits in CC packets
    same --snapshot "$E/ete_spec_1" --format ranges
fi

# A damaged bare trace: bad packets and lost frame alignment, reported as serially.
R="--id 0x12 --reg TRCCONFIGR=0x1 --reg TRCIDR1=0x4100F400"
cp "$B/cstrace.bin" "$tmp/damaged.bin"
printf '\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff' |
    dd of="$tmp/damaged.bin" bs=1 seek=300000 conv=notrunc 2>/dev/null
printf '\x00' | dd of="$tmp/damaged.bin" bs=1 seek=600001 conv=notrunc 2>/dev/null
# shellcheck disable=SC2086
same --trace "$tmp/damaged.bin" $R --mem 0x400200:"$B/cc1.text_dump.bin" --format ranges

# Several sources and no --id: one thread, said once, the same output.
"$D" decode --snapshot "$B" --format ranges >"$tmp/s.out"
"$D" decode --snapshot "$B" --format ranges --jobs 2 >"$tmp/p.out" 2>"$tmp/p.err"
cmp -s "$tmp/s.out" "$tmp/p.out" || fail "several sources: output differs"
grep -q -- '--jobs: buffer etr_0 has 6 ETMv4 sources.*one thread' "$tmp/p.err" ||
    fail "several sources: no note"

# Bad values are usage errors.
for bad in "--jobs 0" "--jobs x" "--piece-size 0"; do
    rc=0
    # shellcheck disable=SC2086
    "$D" decode --snapshot "$B" $bad >/dev/null 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "$bad: exit $rc"
done
echo "several sources and bad values: as expected"
