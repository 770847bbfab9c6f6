#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# CoreSight ETMv4 speed on bugfix-exact-match (1 MiB of formatted trace), side by side with
# OpenCSD's trc_pkt_lister in the same run.
#   usage: bench/coresight.sh [BUILD_DIR] [REPEAT]
# tracekit figures: best of PASSES passes over the buffer held in memory (`--stats`), CPU time
# of the pipeline only (PASSES: TK_CS_PASSES, default 40 REPEAT and at least 200; a pass takes
# about a millisecond: a best of 5 read 5-10% below a best of 300 taken in the same minutes).
#   packets: deformatter (joined frames) + packet parser in batch mode with atom runs, every
#   packet handed to the counting consumer (tk_etm4_pkt_lite batches: atom runs of up to 8
#   packets and addresses, which tk_etm4_lite_count_packets counts record by record);
#   tests/coresight/test_etm4_batch checks that these are exactly the packets of the complete
#   parser.
#   decode: the same plus the flow decoder, every range event handed to the consumer.
# trc_pkt_lister figures: user+sys CPU time of the whole process (it has no quiet mode: it
# formats every packet/element as text, written to /dev/null here).
set -euo pipefail
BUILD=${1:-build-bench}
REPEAT=${2:-20}
PASSES=${TK_CS_PASSES:-$((REPEAT * 40 > 200 ? REPEAT * 40 : 200))}
HERE=$(cd "$(dirname "$0")/.." && pwd)
SS=${TK_TESTDATA:-$HERE/../shared/testdata}/opencsd/snapshots/bugfix-exact-match
LISTER=${TRC_PKT_LISTER:-/usr/bin/trc_pkt_lister}

if [ ! -d "$SS" ]; then
    echo "coresight bench: snapshot $SS not found, skipped"
    exit 0
fi

# The CoreSight commands: `tracekit dump/decode --snapshot`, or the test driver when the
# tracekit front end of this build does not route --snapshot yet.
TK=()
for cand in "$BUILD/tools/tracekit" "$BUILD/tracekit"; do
    if [ -x "$cand" ] && "$cand" dump --snapshot "$SS" --stats 1 >/dev/null 2>&1; then
        TK=("$cand")
        break
    fi
done
if [ ${#TK[@]} -eq 0 ] && [ -x "$BUILD/tests/coresight/cs_driver" ]; then
    TK=("$BUILD/tests/coresight/cs_driver")
fi
if [ ${#TK[@]} -eq 0 ]; then
    echo "coresight bench: no tracekit binary with --snapshot support in $BUILD, skipped"
    exit 0
fi

field() { # field NAME LINE
    echo "$2" | awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}'
}

cpu_rss() { # run a command, print its user+sys CPU seconds and its peak RSS in KB
    local f
    f=$(mktemp)
    /usr/bin/time -f "%U %S %M" -o "$f" "$@" >/dev/null 2>&1 || true
    awk '{printf "%.3f %d\n", $1 + $2, $3}' "$f"
    rm -f "$f"
}

# Peak resident set of a tracekit run (the whole process: snapshot, memory images, trace).
peak_rss() { # peak_rss VAR command...: stdout into VAR's file, peak RSS KB printed
    local f
    f=$(mktemp)
    /usr/bin/time -f "%M" -o "$f" "${@:2}" > "$1" || true
    cat "$f"
    rm -f "$f"
}

BYTES=$(stat -c %s "$SS/cstrace.bin")
OUTP=$(mktemp) OUTD=$(mktemp)
RP=$(peak_rss "$OUTP" "${TK[@]}" dump --snapshot "$SS" --stats "$PASSES")
RD=$(peak_rss "$OUTD" "${TK[@]}" decode --snapshot "$SS" --stats "$PASSES")
P=$(cat "$OUTP") D=$(cat "$OUTD")
rm -f "$OUTP" "$OUTD"

echo "coresight: bugfix-exact-match, $BYTES bytes of trace ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)); tracekit: best of $PASSES passes"
printf "  %-8s %-14s %8s %10s %9s %s\n" "" "tool" "MB/s" "CPU s" "peak RSS" "items"
printf "  %-8s %-14s %8s %10s %6s KB %s packets\n" packets tracekit "$(field MB/s "$P")" \
    "$(field seconds "$P")" "$RP" "$(field packets "$P")"
printf "  %-8s %-14s %8s %10s %6s KB %s ranges, %s instructions (%s Minsn/s)\n" decode tracekit \
    "$(field MB/s "$D")" "$(field seconds "$D")" "$RD" "$(field ranges "$D")" \
    "$(field instructions "$D")" "$(field Minsn/s "$D")"

if [ -x "$LISTER" ] && [ -x /usr/bin/time ]; then
    read -r TP MP < <(cpu_rss "$LISTER" -ss_dir "$SS" -logfilename /dev/null)
    read -r TD MD < <(cpu_rss "$LISTER" -ss_dir "$SS" -decode_only -logfilename /dev/null)
    INS=$(field instructions "$D")
    awk -v b="$BYTES" -v tp="$TP" -v td="$TD" -v tkp="$(field seconds "$P")" \
        -v tkd="$(field seconds "$D")" -v ins="$INS" -v mp="$MP" -v md="$MD" 'BEGIN {
        printf "  %-8s %-14s %8.1f %10.3f %6d KB (%.0fx slower than tracekit)\n", "packets",
               "trc_pkt_lister", b / tp / 1e6, tp, mp, tp / tkp;
        printf "  %-8s %-14s %8.1f %10.3f %6d KB %.1f Minsn/s (%.0fx slower than tracekit)\n",
               "decode", "trc_pkt_lister", b / td / 1e6, td, md, ins / td / 1e6, td / tkd }'
    # The same listings as text, whole processes both (snapshot loading included), stdout to
    # /dev/null: tracekit's best of 5 runs (/usr/bin/time counts in 10 ms steps).
    if [ "${TK[0]##*/}" = tracekit ]; then
        best5() {
            local b=1e9 t _m
            for _ in 1 2 3 4 5; do
                read -r t _m < <(cpu_rss "$@")
                b=$(awk -v a="$b" -v c="$t" 'BEGIN { print (c < a ? c : a) }')
            done
            echo "$b"
        }
        LP=$(best5 "${TK[@]}" dump --snapshot "$SS")
        LD=$(best5 "${TK[@]}" decode --snapshot "$SS")
        awk -v lp="$LP" -v ld="$LD" -v tp="$TP" -v td="$TD" 'BEGIN {
            printf "  listing as text, whole process: dump %.2f s (trc_pkt_lister %.2f s, %.0fx), " \
                   "decode %.2f s (trc_pkt_lister -decode_only %.2f s, %.0fx)\n", lp, tp,
                   tp / (lp > 0 ? lp : 0.005), ld, td, td / (ld > 0 ? ld : 0.005) }'
    fi
else
    echo "  trc_pkt_lister (libopencsd-bin) or /usr/bin/time not installed: no comparison"
fi

# The bound the packet parser's serial step chain sets (bench/etm4_walk.c): the boundary walk
# alone, one walk and two interleaved walks, in MB/s of the source's deformatted bytes.
if [ -f "$BUILD/src/libtracekit.a" ] && command -v cc >/dev/null; then
    WALK=$BUILD/etm4_walk
    if cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -I"$HERE/include" -I"$HERE/src" \
        "$HERE/bench/etm4_walk.c" "$BUILD/src/libtracekit.a" $(pkg-config --libs libdw libelf) \
        -lz -lpthread -lm -o "$WALK"; then
        "$WALK" "$SS" 12 100 | sed 's/^/  /'
    fi
fi

# profile --jobs 2 (the second decode pass on one thread, the profile collector on another)
# against -j 1: wall time of the whole command (callgrind file), median of 5 alternated runs;
# the two files must be identical.
if [ "${TK[0]##*/}" = tracekit ] && [ -x /usr/bin/time ]; then
    P1=() P2=()
    O1=$(mktemp) O2=$(mktemp)
    for _ in 1 2 3 4 5; do
        f=$(mktemp)
        /usr/bin/time -f "%e" -o "$f" "${TK[@]}" profile --snapshot "$SS" -j 1 -o "$O1" 2>/dev/null
        P1+=("$(tail -n 1 "$f")")
        /usr/bin/time -f "%e" -o "$f" "${TK[@]}" profile --snapshot "$SS" -j 2 -o "$O2" 2>/dev/null
        P2+=("$(tail -n 1 "$f")")
        rm -f "$f"
    done
    same=identical
    cmp -s "$O1" "$O2" || same=DIFFERENT
    rm -f "$O1" "$O2"
    med5() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
    awk -v a="$(med5 "${P1[@]}")" -v b="$(med5 "${P2[@]}")" -v s="$same" 'BEGIN {
        printf "  profile (callgrind, %s): -j 1 %.2f s, -j 2 %.2f s wall: %.2fx\n", s, a, b, a / b }'
fi

# decode --jobs: 32 copies of the buffer as one bare trace (32 MiB, 55.7 M ranges listed with
# --format ranges), wall time of --jobs 1 and --jobs 2 alternated, median of 3 each, the
# listing written to /dev/null (1.4 GB of text: into a file, the file system's write-back
# took up to 3.6 s of system time per run on one machine, swamping the decode); then one run
# of each into files: the two listings must be identical.
COPIES=32
BIG="$BUILD/bench-data/cs-bugfix-x$COPIES.bin"
mkdir -p "$BUILD/bench-data"
if [ ! -s "$BIG" ]; then
    for _ in $(seq $COPIES); do cat "$SS/cstrace.bin"; done >"$BIG.tmp" && mv "$BIG.tmp" "$BIG"
fi
BARE=(--trace "$BIG" --id 0x12 --reg TRCCONFIGR=0x1 --reg TRCIDR1=0x4100F400
    --mem 0x4001d8:"$SS/cc1.init_dump.bin" --mem 0x400200:"$SS/cc1.text_dump.bin"
    --mem 0x5ce9c0:"$SS/cc1__libc_freeres_fn_dump.bin"
    --mem 0x5cf610:"$SS/cc1__libc_thread_freeres_fn_dump.bin"
    --mem 0x5cf700:"$SS/cc1.fini_dump.bin")
wall() { # wall OUT command...: elapsed seconds (stdout into OUT)
    local f
    f=$(mktemp)
    /usr/bin/time -f "%e %M" -o "$f" "${@:2}" >"$1" 2>/dev/null || true
    tail -n 1 "$f" # (after "Command exited with non-zero status": the copies' seams have errors)
    rm -f "$f"
}
if [ "${TK[0]##*/}" = tracekit ] && [ -x /usr/bin/time ]; then
    J1=() J2=()
    O1=$(mktemp) O2=$(mktemp)
    for _ in 1 2 3; do
        read -r t m1 < <(wall /dev/null "${TK[@]}" decode "${BARE[@]}" --format ranges --jobs 1)
        J1+=("$t")
        read -r t m2 < <(wall /dev/null "${TK[@]}" decode "${BARE[@]}" --format ranges --jobs 2)
        J2+=("$t")
    done
    wall "$O1" "${TK[@]}" decode "${BARE[@]}" --format ranges --jobs 1 >/dev/null
    wall "$O2" "${TK[@]}" decode "${BARE[@]}" --format ranges --jobs 2 >/dev/null
    same=identical
    cmp -s "$O1" "$O2" || same=DIFFERENT
    LINES=$(wc -l <"$O1")
    rm -f "$O1" "$O2"
    med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
    awk -v a="$(med "${J1[@]}")" -v b="$(med "${J2[@]}")" -v n="$LINES" -v s="$same" \
        -v m1="$m1" -v m2="$m2" 'BEGIN {
        printf "  decode --format ranges, %d copies (%d lines, %s): --jobs 1 %.2f s (%d KB), " \
               "--jobs 2 %.2f s (%d KB): %.2fx\n", '"$COPIES"', n, s, a, m1, b, m2, a / b }'
fi

# profile --jobs on the same 32 MiB: -j 1 against -j 2 (the first pass on two threads, then
# the collector beside the decoder on one thread, as with -j 1), wall time of the whole command (callgrind file), median
# of 3 alternated; the two files must be identical.
if [ "${TK[0]##*/}" = tracekit ] && [ -x /usr/bin/time ]; then
    P1=() P2=()
    O1=$(mktemp) O2=$(mktemp)
    for _ in 1 2 3; do
        read -r t m1 < <(wall /dev/null "${TK[@]}" profile "${BARE[@]}" -j 1 -o "$O1")
        P1+=("$t")
        read -r t m2 < <(wall /dev/null "${TK[@]}" profile "${BARE[@]}" -j 2 -o "$O2")
        P2+=("$t")
    done
    same=identical
    cmp -s "$O1" "$O2" || same=DIFFERENT
    rm -f "$O1" "$O2"
    awk -v a="$(med "${P1[@]}")" -v b="$(med "${P2[@]}")" -v s="$same" -v m1="$m1" \
        -v m2="$m2" 'BEGIN {
        printf "  profile (callgrind, %s), %d copies: -j 1 %.2f s (%d KB), -j 2 %.2f s " \
               "(%d KB): %.2fx\n", s, '"$COPIES"', a, m1, b, m2, a / b }'
fi
