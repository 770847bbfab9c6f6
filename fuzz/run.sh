#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every libFuzzer target of a TK_FUZZ build for SECONDS each.
#   fuzz/run.sh BUILD_DIR SECONDS [TESTDATA] [target...]
# Seeds are extracted from TESTDATA into BUILD_DIR/seeds (once); each target's corpus grows
# in BUILD_DIR/corpus/<target> across runs; crashes land in BUILD_DIR/artifacts/. One line per
# run is appended to BUILD_DIR/fuzz-record.tsv (date, target, seconds the run took, executions
# as libFuzzer counted them, result), the figures docs/robustness.md is kept from. Exits 1 if
# any target found a crash.
set -u
build=${1:?build dir}
secs=${2:?seconds}
testdata=${3:-$(dirname "$0")/../../shared/testdata}
shift 3 2>/dev/null || shift $#
here=$(cd "$(dirname "$0")" && pwd)
if [ "$secs" -le 0 ]; then
    echo "run.sh: $secs seconds: no target run (libFuzzer would take 0 as no time limit)"
    exit 0
fi
if [ ! -d "$build/seeds" ]; then
    if [ -d "$testdata/etrace-ref" ]; then
        python3 "$here/gen_seeds.py" "$testdata" "$build/seeds" >/dev/null || exit 1
    else
        echo "run.sh: no test data at $testdata: fuzzing without seeds" >&2
        mkdir -p "$build/seeds"
    fi
fi
# The legacy formats have no traces in the test data: encode a few of its executed-PC traces
# with this build's own tracekit (nibble and run-length files, one selector byte in front).
if [ ! -d "$build/seeds/fuzz_legacy" ] && [ -x "$build/fuzz/fuzz_legacy" ] &&
    [ -d "$testdata/etrace-ref" ]; then
    mkdir -p "$build/seeds/fuzz_legacy"
    if cmake --build "$build" --target tracekit-cli >/dev/null 2>&1; then
        tk="$build/tools/tracekit"
        tmp="$build/seeds/fuzz_legacy.tmp"
        for prog in median towers vvadd; do
            in="$testdata/etrace-ref/$prog/$prog.spike_pc_trace.gz"
            [ -f "$in" ] || continue
            n=0
            for opts in "nibble" "nibble --emit pc,branch --buffer-words 256" \
                "nibble --emit pc --wrap --buffer-words 256" "rle" "rle --run-bits 4"; do
                n=$((n + 1))
                # shellcheck disable=SC2086
                "$tk" encode --trace-format $opts "$in" -o "$tmp" >/dev/null 2>&1 || continue
                case $opts in rle*) sel='\001' ;; *) sel='\002' ;; esac
                { printf "$sel"; cat "$tmp"; } >"$build/seeds/fuzz_legacy/$prog-$n"
            done
        done
        rm -f "$tmp"
    else
        echo "run.sh: tracekit-cli did not build: fuzz_legacy runs without seeds" >&2
    fi
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for t in "$build"/fuzz/fuzz_*; do
        [ -x "$t" ] && targets+=("$(basename "$t")")
    done
fi
mkdir -p "$build/artifacts" "$build/logs"
failed=0
printf '%-18s %6s %12s %8s  %s\n' target seconds executions exec/s result
for t in "${targets[@]}"; do
    mkdir -p "$build/corpus/$t" "$build/seeds/$t"
    log="$build/logs/$t.log"
    # -timeout: one input taking over 10 s is a hang; -rss_limit_mb: memory must stay bounded
    # FUZZ_EXTRA_ARGS (e.g. -seed=1 -runs=N) makes a run repeatable, as make check-asan wants.
    start=$SECONDS
    # shellcheck disable=SC2086
    "$build/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 ${FUZZ_EXTRA_ARGS:-} \
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
        "$build/corpus/$t" "$build/seeds/$t" >"$log" 2>&1
    rc=$?
    ran=$((SECONDS - start)) # the time the run took (a crash ends it early)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    result=ok
    if [ $rc -ne 0 ]; then
        result="CRASH (exit $rc, see $log)"
        failed=1
    fi
    printf '%-18s %6s %12s %8s  %s\n' "$t" "$ran" "${execs:-?}" "${rate:-?}" "$result"
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$ran" "${execs:-0}" "$result" \
        >>"$build/fuzz-record.tsv"
done
exit $failed
