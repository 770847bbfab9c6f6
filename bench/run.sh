#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make bench`: tracekit's speed side by side with its peers, medians over repeated runs.
#   usage: bench/run.sh [BUILD_DIR]      (BUILD_DIR: a Release build, default build-bench)
# Environment:
#   TK_BENCH_RUNS=5        repetitions per measurement (medians are reported)
#   TK_BENCH_COPIES=300    copies of the dhrystone trace in the long input (203k instr. each)
#   TK_BENCH_BIG_MB=200    size of the trace for the --jobs and peak-memory runs (deleted afterwards)
#   TK_BENCH_JOBS_RUNS=3   repetitions of those (each takes seconds)
#   TK_BENCH_HUGE_GB=0     if > 0: peak memory of -j1/-j2 decodes of a trace this many GB long
#                          (built by concatenation, deleted afterwards; ~1.5 min per GB per run)
#   TK_REF_DECODER=.../referenceFlow/scripts/decoder_model.py   the Python reference decoder
#                          (skipped when unset); RISCV_TOOLCHAIN defaults to /usr for objdump
#   TK_TESTDATA            the shared test data (default ../shared/testdata)
# Inputs are built once and cached under BUILD_DIR/bench-data. The table goes to stdout and
# to bench/results/<date>-<host>.txt.
set -uo pipefail
BUILD=$(cd "${1:-build-bench}" 2>/dev/null && pwd) || { echo "bench: no build folder ${1:-build-bench}" >&2; exit 2; }
RUNS=${TK_BENCH_RUNS:-5}
COPIES=${TK_BENCH_COPIES:-300}
BIG_MB=${TK_BENCH_BIG_MB:-200}
JRUNS=${TK_BENCH_JOBS_RUNS:-3}
HERE=$(cd "$(dirname "$0")/.." && pwd)
DATA=$(cd "${TK_TESTDATA:-$HERE/../shared/testdata}" 2>/dev/null && pwd) || DATA=/nonexistent
V=$DATA/etrace-ref/dhrystone/itype3_basic
SCF=$V/dhrystone.scf
UCF=$V/dhrystone.decoder.ucf
ELF=$DATA/riscv-ref/dhrystone.riscv
TK=$BUILD/tools/tracekit
CACHE=$BUILD/bench-data
mkdir -p "$CACHE" "$HERE/bench/results"
OUT=$HERE/bench/results/$(date +%Y%m%d-%H%M%S)-$(hostname -s).txt

if [ ! -x "$TK" ] || [ ! -f "$BUILD/src/libtracekit.a" ]; then
    echo "bench: no build in $BUILD (run: make bench)" >&2
    exit 2
fi
if [ ! -d "$V" ]; then
    echo "bench: shared test data not found at $DATA" >&2
    exit 2
fi

# The benchmark driver links the library of this build.
TKB=$BUILD/tkbench
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -I"$HERE/include" -I"$HERE/src" \
    "$HERE/bench/tkbench.c" "$BUILD/src/libtracekit.a" $(pkg-config --libs libdw libelf) \
    -lz -lpthread -lm -o "$TKB" || exit 1

field() { awk -v k="$1" '$1 == k {print $2}' "$2"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {
    if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
    else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# run a command; prints "user+sys_seconds wall_seconds max_rss_kb"
timed() {
    local f
    f=$(mktemp)
    /usr/bin/time -f "%U %S %e %M" -o "$f" "$@" > /dev/null 2> "$CACHE/last.err"
    local rc=$?
    awk '{printf "%.3f %.3f %d\n", $1 + $2, $3, $4}' "$f"
    rm -f "$f"
    return $rc
}

exec > >(tee "$OUT") 2>&1
echo "tracekit bench, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "commit $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?'), $RUNS runs per figure (medians); CPU = user+sys seconds of one core"
echo

# ---- inputs --------------------------------------------------------------------------------
LONG=$CACHE/dhrystone-x$COPIES.te_inst_raw
if [ ! -s "$LONG" ]; then
    echo "building the long trace: $COPIES copies of dhrystone through the encoder ..."
    "$TKB" gen "$SCF" "$V/dhrystone.encoder.ucf" "$V/dhrystone.encoder_input.gz" "$COPIES" \
        "$LONG.tmp" "$V/dhrystone.te_inst_raw" > "$CACHE/gen.txt" && mv "$LONG.tmp" "$LONG"
    [ "$(field identical_to_golden "$CACHE/gen.txt")" = yes ] ||
        echo "WARNING: the encoder's first copy differs from the golden trace"
fi
BYTES=$(stat -c %s "$LONG")
INSNS=$((COPIES * 202888))
printf "long trace: %s, %.1f MB, %d instructions\n\n" "$(basename "$LONG")" \
    "$(echo "$BYTES / 1000000" | bc -l)" "$INSNS"

row() { printf "%-44s %14s %14s %8s %10s\n" "$@"; }
row "measurement" "tracekit" "peer" "ratio" "peak RSS"
row "-----------" "--------" "----" "-----" "--------"

# ---- E-Trace packet parsing ----------------------------------------------------------------
/usr/bin/time -f "%M" -o "$CACHE/parse.rss" "$TKB" parse "$SCF" "$UCF" "$LONG" "$RUNS" \
    > "$CACHE/parse.txt"
fast=$(field scan_MBps "$CACHE/parse.txt")
gen=$(field generic_MBps "$CACHE/parse.txt")
row "packet parsing, MB/s (peer: generic codec)" "$fast" "$gen" \
    "$(echo "$fast / $gen" | bc -l | xargs printf '%.1fx')" "$(cat "$CACHE/parse.rss") KB"
row "  (fastest of the runs), MB/s" "$(field scan_best_MBps "$CACHE/parse.txt")" "" "" ""
row "  ns per packet" "$(field scan_ns_per_packet "$CACHE/parse.txt")" \
    "$(field generic_ns_per_packet "$CACHE/parse.txt")" "" ""
row "  (records, without BMI2), MB/s" "$(field scan_portable_MBps "$CACHE/parse.txt")" "" "" ""
row "  (whole packet structs), MB/s" "$(field scan_struct_MBps "$CACHE/parse.txt")" "" "" ""
row "  (framing walk alone: the floor), MB/s" "$(field walk_MBps "$CACHE/parse.txt")" "" "" ""

# ---- flow decoding into sinks (serial, in-process) ------------------------------------------
/usr/bin/time -f "%M" -o "$CACHE/flow.rss" "$TKB" flow "$SCF" "$UCF" "$ELF" "$LONG" "$RUNS" \
    > "$CACHE/flow.txt"
for k in count profile profile_flat pcs; do
    row "flow decoding, $k sink, M instr/s" "$(field flow_${k}_Minstr_per_s "$CACHE/flow.txt")" \
        "" "" "$([ $k = count ] && echo "$(cat "$CACHE/flow.rss") KB")"
    row "  MB/s of trace" "$(field flow_${k}_MBps "$CACHE/flow.txt")" "" "" ""
done

# ---- the command line: serial against --jobs 2 ----------------------------------------------
declare -a c1 w1 c2 w2 m1 m2
for i in $(seq "$RUNS"); do
    r=$(timed "$TK" decode --scf "$SCF" --ucf "$UCF" --elf "$ELF" --format count -j 1 "$LONG")
    c1+=($(echo "$r" | cut -d' ' -f1)) w1+=($(echo "$r" | cut -d' ' -f2)) m1+=($(echo "$r" | cut -d' ' -f3))
    r=$(timed "$TK" decode --scf "$SCF" --ucf "$UCF" --elf "$ELF" --format count -j 2 "$LONG")
    c2+=($(echo "$r" | cut -d' ' -f1)) w2+=($(echo "$r" | cut -d' ' -f2)) m2+=($(echo "$r" | cut -d' ' -f3))
done
W1=$(echo "${w1[*]}" | median) W2=$(echo "${w2[*]}" | median)
C1=$(echo "${c1[*]}" | median) C2=$(echo "${c2[*]}" | median)
row "decode --format count -j1, M instr/s (CPU)" "$(echo "$INSNS / $C1 / 1000000" | bc -l | xargs printf '%.1f')" "" "" "$(echo "${m1[*]}" | median | xargs printf '%.0f KB')"
row "decode -j2 vs -j1, 10 MB trace, wall s" "$W2" "$W1" \
    "$(echo "$W1 / $W2" | bc -l | xargs printf '%.2fx')" "$(echo "${m2[*]}" | median | xargs printf '%.0f KB')"
row "  (CPU seconds, all threads)" "$C2" "$C1" "" ""

# profile --jobs 2: the decoder on one thread, the profile collector on another (the whole
# command: callgrind file written to /dev/null); the peer is the same command with -j 1
declare -a pc1 pw1 pc2 pw2 pm2
for i in $(seq "$RUNS"); do
    r=$(timed "$TK" profile --scf "$SCF" --ucf "$UCF" --elf "$ELF" -o /dev/null -j 1 "$LONG")
    pc1+=($(echo "$r" | cut -d' ' -f1)) pw1+=($(echo "$r" | cut -d' ' -f2))
    r=$(timed "$TK" profile --scf "$SCF" --ucf "$UCF" --elf "$ELF" -o /dev/null -j 2 "$LONG")
    pc2+=($(echo "$r" | cut -d' ' -f1)) pw2+=($(echo "$r" | cut -d' ' -f2)) pm2+=($(echo "$r" | cut -d' ' -f3))
done
PW1=$(echo "${pw1[*]}" | median) PW2=$(echo "${pw2[*]}" | median)
row "profile -j2 vs -j1, 10 MB trace, wall s" "$PW2" "$PW1" \
    "$(echo "$PW1 / $PW2" | bc -l | xargs printf '%.2fx')" "$(echo "${pm2[*]}" | median | xargs printf '%.0f KB')"
row "  M instr/s (wall)" "$(echo "$INSNS / $PW2 / 1000000" | bc -l | xargs printf '%.1f')" \
    "$(echo "$INSNS / $PW1 / 1000000" | bc -l | xargs printf '%.1f')" "" ""
row "  (CPU seconds, all threads)" "$(echo "${pc2[*]}" | median)" "$(echo "${pc1[*]}" | median)" "" ""

# ---- the Python reference decoder ---------------------------------------------------------
if [ -n "${TK_REF_DECODER:-}" ] && [ -f "$TK_REF_DECODER" ]; then
    R=$CACHE/refrun
    rm -rf "$R" && mkdir -p "$R"
    cp "$SCF" "$V/dhrystone.te_inst_raw" "$R/"
    sed "s|^object-files=.*|object-files=$ELF|" "$UCF" > "$R/d.ucf"
    declare -a pr tr
    for i in $(seq "$RUNS"); do
        r=$(cd "$R" && RISCV_TOOLCHAIN=${RISCV_TOOLCHAIN:-/usr} timed python3 "$TK_REF_DECODER" \
            -c dhrystone.scf -u d.ucf -i dhrystone.te_inst_raw)
        pr+=($(echo "$r" | cut -d' ' -f1)) pm=$(echo "$r" | cut -d' ' -f3)
        # tracekit takes milliseconds here: time 20 whole runs (start-up included, as for
        # the reference) and divide
        r=$(timed bash -c 'for i in $(seq 20); do "$0" decode --scf "$1" --ucf "$2" --elf "$3" \
            -o "$4" "$5" || exit 1; done' "$TK" "$SCF" "$UCF" "$ELF" "$R/tk.trace" \
            "$V/dhrystone.te_inst_raw")
        tr+=($(echo "$r" | awk '{printf "%.5f", $1 / 20}')) tm=$(echo "$r" | cut -d' ' -f3)
    done
    cmp -s "$R/dhrystone.decoder.trace" "$R/tk.trace" || echo "WARNING: PC lists differ"
    P=$(echo "${pr[*]}" | median) T=$(echo "${tr[*]}" | median)
    # process CPU time includes start-up (ELF, objdump for the reference)
    row "PC listing vs decoder_model.py, M instr/s" \
        "$(echo "202888 / $T / 1000000" | bc -l | xargs printf '%.1f')" \
        "$(echo "202888 / $P / 1000000" | bc -l | xargs printf '%.3f')" \
        "$(echo "$P / $T" | bc -l | xargs printf '%.0fx')" "$tm / $pm KB"
else
    row "PC listing vs decoder_model.py" "skipped (set TK_REF_DECODER)" "" "" ""
fi

# ---- encoder ------------------------------------------------------------------------------
declare -a enc enc1 encg encr
for i in $(seq "$RUNS"); do
    /usr/bin/time -f "%M" -o "$CACHE/enc.rss" \
        "$TKB" gen "$SCF" "$V/dhrystone.encoder.ucf" "$V/dhrystone.encoder_input.gz" 10 \
        "$CACHE/enc.tmp" > "$CACHE/enc.txt" && enc+=($(field encoder_Minstr_per_s "$CACHE/enc.txt")) &&
        enc1+=($(field encoder_push1_Minstr_per_s "$CACHE/enc.txt")) &&
        encg+=($(field encoder_grouped_Minstr_per_s "$CACHE/enc.txt")) &&
        encr+=($(field encoder_grouped_run_Minstr_per_s "$CACHE/enc.txt"))
done
rm -f "$CACHE/enc.tmp"
# peak RSS: the whole process of the last run (the ingress file inflated in memory, all four ways)
row "encoder, M instr/s (CPU), runs of rows" "$(echo "${enc[*]}" | median)" "" "" \
    "$(cat "$CACHE/enc.rss") KB"
row "  one push per row" "$(echo "${enc1[*]}" | median)" "" "" ""
row "  grouped ingress (8-wide, 2 blocks/cycle)" "$(echo "${encg[*]}" | median)" "" "" ""
row "  grouped ingress, blocks as runs" "$(echo "${encr[*]}" | median)" "" "" ""

# ---- hart model ---------------------------------------------------------------------------
if "$TK" sim --help > /dev/null 2>&1 && [ -f "$DATA/riscv-ref/coremark.riscv" ]; then
    declare -a mips
    for i in $(seq "$RUNS"); do
        /usr/bin/time -f "%M" -o "$CACHE/sim.rss" \
            "$TK" sim "$DATA/riscv-ref/coremark.riscv" --quiet --max-insns 50000000 \
            > /dev/null 2> "$CACHE/sim.txt"
        mips+=($(sed -n 's/.*(\([0-9.]*\) M instructions\/s).*/\1/p' "$CACHE/sim.txt"))
    done
    row "hart model (coremark, 50M instr), MIPS" "$(echo "${mips[*]}" | median)" "" "" \
        "$(cat "$CACHE/sim.rss") KB"
else
    row "hart model" "not present" "" "" ""
fi

# ---- peak memory on a long trace ------------------------------------------------------------
BIG=$CACHE/big.te_inst_raw
n=$(( (BIG_MB * 1000000 + BYTES - 1) / BYTES ))
for i in $(seq "$n"); do cat "$LONG"; done > "$BIG"
BB=$(stat -c %s "$BIG")
# --jobs on the long trace: short runs are at the mercy of this VM's noisy neighbours, so
# the speed-up is measured here, where each run takes seconds (runs interleaved)
declare -a bw1 bw2 bc1 bc2 bm1 bm2 bpw
for i in $(seq "$JRUNS"); do
    r=$(timed "$TK" decode --scf "$SCF" --ucf "$UCF" --elf "$ELF" --format count -j 1 "$BIG")
    bc1+=($(echo "$r" | cut -d' ' -f1)) bw1+=($(echo "$r" | cut -d' ' -f2)) bm1+=($(echo "$r" | cut -d' ' -f3))
    r=$(timed "$TK" decode --scf "$SCF" --ucf "$UCF" --elf "$ELF" --format count -j 2 "$BIG")
    bc2+=($(echo "$r" | cut -d' ' -f1)) bw2+=($(echo "$r" | cut -d' ' -f2)) bm2+=($(echo "$r" | cut -d' ' -f3))
    # the machine's own ceiling: two independent serial decodes side by side (on this VM two
    # busy vCPUs do not always give twice the work of one)
    r=$(timed bash -c '"$0" decode --scf "$1" --ucf "$2" --elf "$3" --format count "$4" & \
        "$0" decode --scf "$1" --ucf "$2" --elf "$3" --format count "$4"; wait' \
        "$TK" "$SCF" "$UCF" "$ELF" "$BIG")
    bpw+=($(echo "$r" | cut -d' ' -f2))
done
BW1=$(echo "${bw1[*]}" | median) BW2=$(echo "${bw2[*]}" | median)
BPW=$(echo "${bpw[*]}" | median)
row "decode -j2 vs -j1, $((BB / 1000000)) MB trace, wall s" "$BW2" "$BW1" \
    "$(echo "$BW1 / $BW2" | bc -l | xargs printf '%.2fx')" ""
row "  (CPU seconds, all threads)" "$(echo "${bc2[*]}" | median)" "$(echo "${bc1[*]}" | median)" "" ""
row "  ceiling: two -j1 side by side, wall s" "$BPW" "" \
    "$(echo "2 * $BW1 / $BPW" | bc -l | xargs printf '%.2fx')" ""
row "  -j1 M instr/s (wall)" "$(echo "$INSNS * $((BB / BYTES)) / $BW1 / 1000000" | bc -l | xargs printf '%.1f')" "" "" ""
row "peak RSS, $((BB / 1000000)) MB trace, count -j1 / -j2" \
    "$(echo "${bm1[*]}" | median | xargs printf '%.0f KB')" \
    "$(echo "${bm2[*]}" | median | xargs printf '%.0f KB')" "" ""
rm -f "$BIG"

# ---- a multi-GB trace (opt-in: TK_BENCH_HUGE_GB=2): memory must not grow with length -------
if [ "${TK_BENCH_HUGE_GB:-0}" -gt 0 ] 2>/dev/null; then
    HUGE=$CACHE/huge.te_inst_raw
    n=$(( (TK_BENCH_HUGE_GB * 1000000000 + BYTES - 1) / BYTES ))
    for i in $(seq "$n"); do cat "$LONG"; done > "$HUGE"
    HB=$(stat -c %s "$HUGE")
    for j in 1 2; do
        r=$(timed "$TK" decode --scf "$SCF" --ucf "$UCF" --elf "$ELF" --format count -j $j "$HUGE")
        row "peak RSS, $((HB / 1000000)) MB trace, count -j$j" \
            "$(echo "$r" | cut -d' ' -f3) KB" "" "" "$(echo "$r" | cut -d' ' -f2) s wall"
    done
    rm -f "$HUGE"
fi

# ---- CoreSight ETMv4 -------------------------------------------------------------------------
echo
if [ -f "$HERE/bench/coresight.sh" ]; then
    bash "$HERE/bench/coresight.sh" "$BUILD" "$RUNS" || echo "coresight bench failed"
fi
echo
echo "reproduce: make bench   (or: bash bench/run.sh $BUILD)"
echo "results: $OUT"
