#!/bin/bash
# tracekit dump against a golden vector: one line per packet (count from stats.json), the
# --csv output identical to the reference .te_inst, and a truncated copy reported with its
# offset after every intact packet was printed.
set -u
tk=$1 data=$2 work=$3
dir=$data/etrace-ref/dhrystone/itype4_debug
if [ ! -d "$dir" ]; then
    echo "SKIP: $dir not found"
    exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$work"
out=$work/dump.out err=$work/dump.err

"$tk" dump --help | grep -q 'example:' || fail "--help has no example"
"$tk" dump "$dir/dhrystone.te_inst_raw" >/dev/null 2>&1
[ $? -eq 2 ] || fail "missing --scf must be a usage error"

"$tk" dump --scf "$dir/dhrystone.scf" --ucf "$dir/dhrystone.decoder.ucf" \
    "$dir/dhrystone.te_inst_raw" >"$out" 2>"$err" || fail "dump failed: $(cat "$err")"
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packets"])' "$dir/stats.json")
got=$(wc -l <"$out")
[ "$got" -eq "$want" ] || fail "$got lines, stats.json says $want packets"
head -1 "$out" | grep -q '^0 .*#0 .*F3.3 support ienable=1 .*ioptions=0x4' || fail "first line: $(head -1 "$out")"
[ -s "$err" ] && fail "unexpected stderr: $(cat "$err")"

# the CSV form equals the reference encoder's own CSV, byte for byte
"$tk" dump --csv --scf "$dir/dhrystone.scf" "$dir/dhrystone.te_inst_raw" >"$work/dump.csv" ||
    fail "dump --csv failed"
gzip -dc "$dir/dhrystone.te_inst.gz" | cmp -s - "$work/dump.csv" || fail "--csv differs from the reference .te_inst"

# truncated copy: cut the last byte (the final support packet keeps only its header)
size=$(stat -c %s "$dir/dhrystone.te_inst_raw")
head -c $((size - 1)) "$dir/dhrystone.te_inst_raw" >"$work/truncated.te_inst_raw"
last=$(tail -1 "$out" | awk '{print $1}')
"$tk" dump --scf "$dir/dhrystone.scf" "$work/truncated.te_inst_raw" >"$out" 2>"$err"
rc=$?
[ $rc -eq 1 ] || fail "truncated input: exit $rc, expected 1"
[ "$(wc -l <"$err")" -eq 1 ] || fail "expected one error line, got: $(cat "$err")"
grep -q "truncated.te_inst_raw: offset $last (packet $((want - 1)))" "$err" || fail "error line: $(cat "$err")"
[ "$(wc -l <"$out")" -eq $((want - 1)) ] || fail "packets before the damage were not all printed"

# a zero length byte after the first packet: reported, and --keep-going continues after it
first=$(( ($(head -c 1 "$dir/dhrystone.te_inst_raw" | od -An -tu1) & 31) + 1 ))
{ head -c $first "$dir/dhrystone.te_inst_raw"; printf '\x40'; tail -c +$((first + 1)) "$dir/dhrystone.te_inst_raw"; } >"$work/zero.te_inst_raw"
"$tk" dump --scf "$dir/dhrystone.scf" "$work/zero.te_inst_raw" >"$out" 2>"$err"
[ $? -eq 1 ] && [ "$(wc -l <"$out")" -eq 1 ] || fail "zero length byte: $(cat "$err")"
grep -q "offset $first (packet 1): header 0x40 has length 0" "$err" || fail "zero length message: $(cat "$err")"
"$tk" dump --keep-going --scf "$dir/dhrystone.scf" "$work/zero.te_inst_raw" >"$out" 2>"$err"
[ $? -eq 1 ] && [ "$(wc -l <"$out")" -eq "$want" ] || fail "--keep-going did not continue"
echo "OK: $want packets dumped; CSV identical; truncation and zero length reported with offsets"
