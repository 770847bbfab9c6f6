#!/bin/bash
# tracekit decode end to end: golden PC list, listing, counting, and error reports for a
# truncated file, a garbled packet, the wrong ELF and an unreadable config.
set -u
tk=$1 data=$2 work=$3
if [ ! -d "$data/etrace-ref" ]; then
    echo "SKIP: shared test data not found at $data"
    exit 77
fi
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

v=$data/etrace-ref/towers/itype3_basic
args=(--scf $v/towers.scf --ucf $v/towers.decoder.ucf)
zcat $v/towers.decoder.trace.gz > "$work/want"

# 1. golden PC list, ELF named by the .ucf
"$tk" decode "${args[@]}" $v/towers.te_inst_raw -o "$work/got" || fail "decode exit $?"
cmp -s "$work/want" "$work/got" || fail "towers PCs differ: $(cmp "$work/want" "$work/got" 2>&1)"

# 1b. the same packets from the reference .te_inst CSV (gzipped)
"$tk" decode "${args[@]}" $v/towers.te_inst.gz -o "$work/got_csv" || fail "CSV decode exit $?"
cmp -s "$work/want" "$work/got_csv" || fail "towers PCs from the CSV differ"

# 2. counting mode prints the totals, the number of instructions among them
n=$("$tk" decode "${args[@]}" --format count $v/towers.te_inst_raw | awk '$1 == "instructions" {print $2}')
[ "$n" = "$(wc -l < "$work/want")" ] || fail "count $n != $(wc -l < "$work/want")"
# --stats: the totals, and the walks the decoder replayed from its memo (towers repeats most)
"$tk" decode "${args[@]}" --format count --stats $v/towers.te_inst_raw -o /dev/null \
    2> "$work/count.err" || fail "count --stats exit $?"
grep -q "374 packets, $n instructions" "$work/count.err" || fail "stats: $(cat "$work/count.err")"
w=$(sed -n 's/.*: \([0-9]*\) walks and .*/\1/p' "$work/count.err")
[ "${w:-0}" -gt 100 ] || fail "walks replayed: '$(cat "$work/count.err")'"

# 3. listing: one line per instruction plus bracketed events, with symbols
"$tk" decode "${args[@]}" --format listing $v/towers.te_inst_raw -o "$work/listing" ||
    fail "listing exit $?"
grep -q '<main+0x' "$work/listing" || fail "listing has no symbol+offset"
grep -q '^\[enabled at 0x80000000\]' "$work/listing" || fail "listing has no trace-on event"
[ "$(grep -vc '^\[' "$work/listing")" = "$(wc -l < "$work/want")" ] || fail "listing line count"

# 4. truncated file: error with offset and packet, everything before it written out
size=$(stat -c %s $v/towers.te_inst_raw)
head -c $((size - 1)) $v/towers.te_inst_raw > "$work/trunc.te_inst_raw"
"$tk" decode "${args[@]}" "$work/trunc.te_inst_raw" -o "$work/trunc" 2> "$work/trunc.err"
rc=$?
[ $rc -ne 0 ] || fail "truncated file: exit 0"
grep -Eq "^tracekit decode: .*trunc.te_inst_raw: offset [0-9]+ \(packet [0-9]+\): .*truncated" \
    "$work/trunc.err" || fail "truncated file: message '$(cat "$work/trunc.err")'"
lines=$(wc -l < "$work/trunc")
[ "$lines" -gt 1000 ] || fail "truncated file: only $lines lines written"
head -n "$lines" "$work/want" | cmp -s - "$work/trunc" || fail "truncated output is not a prefix"

# 5. garbled packet in the middle: reported, decoding resumes at the next sync
python3 - "$v/towers.te_inst_raw" "$work/garbled.te_inst_raw" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
# walk the framing to packet 100 and give it a header with a wrong message type
off = 0
for _ in range(100):
    off += 1 + (b[off] & 0x1f)
b[off] = (b[off] & 0x1f) | (3 << 5)
open(sys.argv[2], 'wb').write(b)
PY
"$tk" decode "${args[@]}" "$work/garbled.te_inst_raw" -o "$work/garbled" 2> "$work/garbled.err"
[ $? -ne 0 ] || fail "garbled packet: exit 0"
grep -q "(packet 100): bad packet header" "$work/garbled.err" ||
    fail "garbled packet: message '$(cat "$work/garbled.err")'"
glines=$(wc -l < "$work/garbled")
[ "$glines" -gt $((lines / 2)) ] || fail "garbled packet: decoding did not resume ($glines lines)"
tail -n 100 "$work/want" | cmp -s - <(tail -n 100 "$work/garbled") ||
    fail "garbled packet: the end of the flow differs after resynchronising"

# 6. wrong ELF: dhrystone's trace with qsort's program must be reported, not printed silently
d=$data/etrace-ref/dhrystone/itype3_basic
"$tk" decode --scf $d/dhrystone.scf --ucf $d/dhrystone.decoder.ucf \
    --elf $data/riscv-ref/qsort.riscv $d/dhrystone.te_inst_raw -o "$work/wrong" 2> "$work/wrong.err"
[ $? -ne 0 ] || fail "wrong ELF: exit 0"
grep -Eq "offset [0-9]+ \(packet [0-9]+\): " "$work/wrong.err" ||
    fail "wrong ELF: message '$(head -3 "$work/wrong.err")'"

# 7. unreadable config
"$tk" decode --scf "$work/none.scf" --ucf $v/towers.decoder.ucf $v/towers.te_inst_raw \
    -o "$work/x" 2> "$work/cfg.err"
[ $? -ne 0 ] || fail "missing .scf: exit 0"
grep -q "none.scf" "$work/cfg.err" || fail "missing .scf: message '$(cat "$work/cfg.err")'"

# 8. help
"$tk" decode --help | grep -q "example:" || fail "--help has no example"

[ $fails -eq 0 ] && echo "cli_decode: all checks passed"
exit $((fails > 0))
