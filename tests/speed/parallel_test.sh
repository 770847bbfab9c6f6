#!/bin/bash
# tracekit decode --jobs N against the serial decode: for every golden vector, PC list,
# listing and totals are byte-identical for N = 1..4 with pieces small enough that every
# trace is cut many times (mid-trace F3 syncs, stitched by state comparison); the same for a
# long trace made of copies of one, and for damaged traces (errors reported identically).
set -u
tk=$1 data=$2 work=$3
if [ ! -d "$data/etrace-ref" ]; then
    echo "SKIP: shared test data not found at $data"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
fails=0 checked=0 stitched=0 redecoded=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# compare one decode with N threads to the serial one (stdout file and stderr)
same() { # name, args...
    local name=$1
    shift
    "$tk" decode "$@" -o "$work/serial.out" 2> "$work/serial.err"
    local rc1=$?
    for n in 2 3 4; do
        "$tk" decode "$@" --jobs $n --piece-size 300 --stats -o "$work/par.out" 2> "$work/par.err"
        local rc2=$?
        [ $rc1 = $rc2 ] || fail "$name -j$n: exit $rc2, serial $rc1"
        cmp -s "$work/serial.out" "$work/par.out" || fail "$name -j$n: output differs"
        grep -v -e ' pieces on ' -e ' packets, ' "$work/par.err" > "$work/par.err2"
        # (the walk memo's line: the serial decoder's own statistics)
        grep -v -e ' packets, ' -e ' replayed from the walk memo' "$work/serial.err" \
            > "$work/serial.err2"
        cmp -s "$work/serial.err2" "$work/par.err2" || fail "$name -j$n: messages differ"
        s=$(sed -n 's/.* \([0-9]*\) stitched.*/\1/p' "$work/par.err")
        stitched=$((stitched + ${s:-0}))
        s=$(sed -n 's/.* \([0-9]*\) decoded again.*/\1/p' "$work/par.err")
        redecoded=$((redecoded + ${s:-0}))
        checked=$((checked + 1))
    done
    "$tk" decode "$@" --jobs 1 -o "$work/one.out" 2> /dev/null
    cmp -s "$work/serial.out" "$work/one.out" || fail "$name -j1: output differs"
}

for v in "$data"/etrace-ref/*/*/; do
    prog=$(basename "$(dirname "$v")")
    base=$v$prog
    [ -f "$base.te_inst_raw" ] || continue
    args=(--scf "$base.scf" --ucf "$base.decoder.ucf" --stats)
    same "$prog/$(basename "$v") pcs" "${args[@]}" "$base.te_inst_raw"
    zcat "$base.decoder.trace.gz" | cmp -s - "$work/serial.out" ||
        fail "$prog/$(basename "$v"): serial PCs differ from the golden ones"
    same "$prog/$(basename "$v") count" "${args[@]}" --format count "$base.te_inst_raw"
done

# listing on one vector (slow to print, same stitching)
v=$data/etrace-ref/qsort/itype3_basic
same "qsort listing" --scf $v/qsort.scf --ucf $v/qsort.decoder.ucf --format listing \
    $v/qsort.te_inst_raw

# a long trace: 40 copies of dhrystone (each ends with a support packet, restarts)
v=$data/etrace-ref/dhrystone/itype3_basic
for i in $(seq 40); do cat $v/dhrystone.te_inst_raw; done > "$work/long.te_inst_raw"
same "long pcs" --scf $v/dhrystone.scf --ucf $v/dhrystone.decoder.ucf "$work/long.te_inst_raw"
[ "$(wc -l < "$work/serial.out")" = $((40 * 202888)) ] || fail "long trace: PC count"
same "long count" --scf $v/dhrystone.scf --ucf $v/dhrystone.decoder.ucf --format count \
    "$work/long.te_inst_raw"

# damaged: garbled headers and payload bytes, a truncated end
python3 - "$v/dhrystone.te_inst_raw" "$work" <<'PY'
import random, sys
src = open(sys.argv[1], 'rb').read()
for k in range(6):
    b = bytearray(src)
    r = random.Random(k)
    for _ in range(1 + k * 3):
        b[r.randrange(len(b))] ^= 1 << r.randrange(8)
    if k % 2:
        b = b[:len(b) - r.randrange(1, 30)]
    open(f"{sys.argv[2]}/bad{k}.te_inst_raw", 'wb').write(b)
PY
for k in 0 1 2 3 4 5; do
    same "damaged $k" --scf $v/dhrystone.scf --ucf $v/dhrystone.decoder.ucf "$work/bad$k.te_inst_raw"
done

[ $stitched -gt 1000 ] || fail "only $stitched seams stitched: the pieces were not cut"
# the damaged traces leave states that do not match at some seams: the serial fallback ran
[ $redecoded -gt 0 ] || fail "no piece was decoded again: the fallback was not exercised"
echo "parallel: $checked comparisons, $stitched seams stitched, $redecoded pieces decoded again"
[ $fails -eq 0 ] && echo "parallel: all checks passed"
exit $((fails > 0))
