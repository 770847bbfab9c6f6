#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# E-Trace in the general packet encapsulation through the command line: two harts' traces
# (dhrystone as srcID 3 with sync sequences, towers as srcID 5) interleaved packet by packet as
# a trace funnel would send them; `decode|dump|profile --encap --srcid` must give exactly what
# the raw framing gives for each hart, and `dump --srcid all` every hart's lines of its own dump
# (also with a hart whose support packets set other options, and in a damaged stream). Then the damage cases: a wrong --srcid or layout (told,
# exit 1), a packet cut at the end (error with its offset, everything before it decoded),
# a stretch of bytes overwritten (errors with offsets, the flow resumes), a stretch zeroed
# (reported by the unframed stream's alignment rule), and --regs with a source field.
#   usage: cli_encap.sh TRACEKIT TESTDATA WORKDIR
set -u
TK=$1 DATA=$2 W=$3
R=$DATA/etrace-ref
if [ ! -d "$R/dhrystone/itype3_basic" ] || [ ! -d "$R/towers/itype3_basic" ]; then
    echo "SKIP: etrace-ref vectors not found under $DATA"
    exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
rm -rf "$W" && mkdir -p "$W"
fail() { echo "FAIL: $*"; exit 1; }
L=srcid-bits=8,timestamp-bytes=2
D=$R/dhrystone/itype3_basic T=$R/towers/itype3_basic
args_d=(--scf "$D/dhrystone.scf" --ucf "$D/dhrystone.decoder.ucf")
args_t=(--scf "$T/towers.scf" --ucf "$T/towers.decoder.ucf")

# each hart alone: raw framing, and the encapsulation
"$TK" encode --scf "$D/dhrystone.scf" --ucf "$D/dhrystone.encoder.ucf" \
    "$D/dhrystone.encoder_input.gz" -o "$W/d.raw" || fail "encode dhrystone"
"$TK" encode --scf "$D/dhrystone.scf" --ucf "$D/dhrystone.encoder.ucf" \
    "$D/dhrystone.encoder_input.gz" -o "$W/d.enc" --encap $L --srcid 3 --encap-sync 16 ||
    fail "encode dhrystone --encap"
cmp -s "$W/d.raw" "$D/dhrystone.te_inst_raw" || fail "dhrystone raw differs from the golden trace"
"$TK" encode --scf "$T/towers.scf" --ucf "$T/towers.encoder.ucf" \
    "$T/towers.encoder_input.gz" -o "$W/t.enc" --encap $L --srcid 5 || fail "encode towers --encap"
"$TK" encode --scf "$T/towers.scf" --ucf "$T/towers.encoder.ucf" \
    "$T/towers.encoder_input.gz" -o "$W/t.raw" || fail "encode towers"

# interleave two streams of layout $L packet by packet; a sync sequence (null packets) stays
# whole, in front of the packet it precedes, as a funnel sends it. With TS=1 the second
# stream's packets get a timestamp (extend, 2 bytes: 16 times their number).
interleave() {
    TS=${TS:-0} python3 - "$1" "$2" "$3" <<'PY'
import os, sys
def packets(path, ts):
    b = open(path, 'rb').read()
    i, start, out = 0, 0, []
    while i < len(b):
        h = b[i]
        if h & 0x1f == 0:
            i += 1
            continue
        i += 1 + 1 + (2 if h >> 7 else 0) + (h & 0x1f)
        p = b[start:i]
        if ts and not h >> 7:
            t = 16 * len(out)
            p = bytes([h | 0x80, p[1], t & 0xff, t >> 8 & 0xff]) + p[2:]
        out.append(p)
        start = i
    return out
a, t = packets(sys.argv[1], 0), packets(sys.argv[2], os.environ['TS'] == '1')
with open(sys.argv[3], 'wb') as f:
    for k in range(max(len(a), len(t))):
        if k < len(a): f.write(a[k])
        if k < len(t): f.write(t[k])
PY
}
interleave "$W/d.enc" "$W/t.enc" "$W/both.enc" || fail "interleave"

"$TK" decode "${args_d[@]}" "$W/d.raw" -o "$W/d.pcs" || fail "decode dhrystone raw"
"$TK" decode "${args_t[@]}" "$W/t.raw" -o "$W/t.pcs" || fail "decode towers raw"
"$TK" decode "${args_d[@]}" --encap $L --srcid 3 "$W/both.enc" -o "$W/d3.pcs" --stats \
    2>"$W/d3.err" || fail "decode --srcid 3: $(cat "$W/d3.err")"
cmp -s "$W/d.pcs" "$W/d3.pcs" || fail "srcID 3 of the interleaved stream differs from dhrystone"
grep -q "srcID 3: 8742 te_inst packets" "$W/d3.err" || fail "stats: $(cat "$W/d3.err")"
"$TK" decode "${args_t[@]}" --encap $L --srcid 5 "$W/both.enc" -o "$W/t5.pcs" ||
    fail "decode --srcid 5"
cmp -s "$W/t.pcs" "$W/t5.pcs" || fail "srcID 5 of the interleaved stream differs from towers"
# -j 2 falls back to one thread, same output
"$TK" decode "${args_d[@]}" --encap $L --srcid 3 -j 2 "$W/both.enc" -o "$W/d3j.pcs" \
    2>"$W/d3j.err" || fail "decode -j 2 --encap"
cmp -s "$W/d.pcs" "$W/d3j.pcs" || fail "-j 2 --encap differs"
grep -q "one thread" "$W/d3j.err" || fail "-j 2 --encap: no note"

# dump: the source's packets, as the raw listing (offsets aside)
"$TK" dump "${args_d[@]}" "$W/d.raw" | cut -c11- >"$W/d.dump" || fail "dump raw"
"$TK" dump "${args_d[@]}" --encap $L --srcid 3 "$W/both.enc" | cut -c11- |
    sed 's/^#[0-9]* */#/' >"$W/d3.dump" || fail "dump --encap"
sed 's/^#[0-9]* */#/' "$W/d.dump" | cmp -s - "$W/d3.dump" || fail "dump --encap differs"

# dump --srcid all: every source's packets in stream order, each line tagged src=N (before any
# ts=); a source's lines without the tag are exactly its own dump (--srcid N), for every
# source the summary on stderr names (in a damaged stream, also those of misread packets).
# $1: the stream, $2: a name for the files, then options for every dump (--keep-going).
# Sets rc_all to dump --srcid all's exit status.
check_all() {
    local in=$1 n=$2
    shift 2
    "$TK" dump "${args_d[@]}" "$@" --encap $L --srcid all "$in" >"$W/$n.all" 2>"$W/$n.all.err"
    rc_all=$?
    : >"$W/$n.each.err"
    local lines=0 s
    for s in $(sed -n 's/.*: srcID \([0-9]*\): [0-9]* te_inst packets.*/\1/p' "$W/$n.all.err"); do
        "$TK" dump "${args_d[@]}" "$@" --encap $L --srcid $s "$in" >"$W/$n.$s" 2>>"$W/$n.each.err"
        grep " src=$s " "$W/$n.all" | sed "s/ src=$s / /" | cmp -s - "$W/$n.$s" ||
            fail "$n: dump --srcid all's srcID $s lines differ from dump --srcid $s"
        lines=$((lines + $(wc -l <"$W/$n.$s")))
    done
    [ "$lines" -gt 0 ] && [ "$(wc -l <"$W/$n.all")" -eq "$lines" ] ||
        fail "$n: dump --srcid all has $(wc -l <"$W/$n.all") lines, the sources $lines"
    # offsets never go back (a '! not applied' line repeats its packet's)
    awk '$1 + 0 < prev {exit 1} {prev = $1 + 0}' prev=0 "$W/$n.all" ||
        fail "$n: dump --srcid all is not in stream order"
    # the same errors at the same offsets (a reader's error is every source's)
    grep offset "$W/$n.all.err" | sed 's/): srcID [0-9]*: /): /' | sort -u >"$W/$n.all.off"
    grep offset "$W/$n.each.err" | sort -u | cmp -s - "$W/$n.all.off" ||
        fail "$n: dump --srcid all's errors differ: $(cat "$W/$n.all.err")"
}
check_all "$W/both.enc" both
[ $rc_all -eq 0 ] || fail "dump --srcid all: $(cat "$W/both.all.err")"
grep -q "srcID 3: 8742 te_inst packets, 0 of other types, 0 damaged" "$W/both.all.err" &&
    grep -q "srcID 5: 374 te_inst packets, 0 of other types, 0 damaged" "$W/both.all.err" &&
    grep -q "2 sources: 9116 te_inst packets, 0 of other types, 0 damaged (0 of no known \
source), 0 cut by the end of the stream" "$W/both.all.err" ||
    fail "dump --srcid all summary: $(cat "$W/both.all.err")"
# each source has its own codec state: towers encoded with full-address (support packet
# ioptions 0x4, addresses read whole) and with timestamps, next to dhrystone (0x0, addresses
# differential). One state for both would refuse towers' support packet (options changed
# after a sync) and read its addresses as differences.
sed 's/^full-address=false/full-address=true/' "$T/towers.encoder.ucf" >"$W/tfa.ucf"
"$TK" encode --scf "$T/towers.scf" --ucf "$W/tfa.ucf" "$T/towers.encoder_input.gz" \
    -o "$W/tfa.enc" --encap $L --srcid 5 || fail "encode towers full-address"
TS=1 interleave "$W/d.enc" "$W/tfa.enc" "$W/mixed.enc" || fail "interleave mixed"
check_all "$W/mixed.enc" mixed
[ $rc_all -eq 0 ] || fail "mixed options: $(cat "$W/mixed.all.err")"
grep -q "#1 .* src=5 ts=0x0 F3.3 support .*ioptions=0x4" "$W/mixed.all" &&
    grep -q "src=5 ts=0x20 F1 branches=4 map=TNTT addr=0x100003178" "$W/mixed.all" &&
    grep -q "src=3 F1 branches=4 map=TNTT daddr=" "$W/mixed.all" ||
    fail "mixed options: $(head -5 "$W/mixed.all")"
grep -q "not applied" "$W/mixed.all" && fail "mixed options: a support packet refused"
# damaged: 40 bytes overwritten, then a cut end; every error at its offset as for one source
python3 -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[30000:30040] = bytes((i * 37 + 11) & 0xff for i in range(40))
open(sys.argv[2], 'wb').write(b[:-1])" "$W/both.enc" "$W/bothbad.enc"
check_all "$W/bothbad.enc" bothbad --keep-going
[ $rc_all -eq 1 ] || fail "damaged --srcid all: exit $rc_all"
grep -q "offset 3[0-9][0-9][0-9][0-9] (packet" "$W/bothbad.all.err" &&
    grep -q "offset [0-9]* (packet [0-9]*): .*trunc" "$W/bothbad.all.err" &&
    grep -q "damaged (.*), 1 cut by the end of the stream" "$W/bothbad.all.err" ||
    fail "damaged --srcid all: $(cat "$W/bothbad.all.err")"
# without --keep-going the listing stops at the first error, as for one source
"$TK" dump "${args_d[@]}" --encap $L --srcid all "$W/bothbad.enc" >"$W/stop.all" 2>"$W/stop.err" &&
    fail "damaged --srcid all without --keep-going: exit 0"
first=$(grep -m1 -o "offset [0-9]* (packet [0-9]*)" "$W/bothbad.all.err")
grep -q "$first" "$W/stop.err" || fail "first error: $(cat "$W/stop.err")"
cmp -s "$W/stop.all" <(head -n "$(wc -l <"$W/stop.all")" "$W/bothbad.all") ||
    fail "without --keep-going: not a prefix of the --keep-going listing"
# one source only elsewhere, and no source column in the reference CSV
"$TK" decode "${args_d[@]}" --encap $L --srcid all "$W/both.enc" 2>"$W/alldec.err"
[ $? -eq 2 ] && grep -q "only 'tracekit dump' lists every source" "$W/alldec.err" ||
    fail "decode --srcid all: $(cat "$W/alldec.err")"
"$TK" profile "${args_d[@]}" --encap $L --srcid all "$W/both.enc" 2>/dev/null
[ $? -eq 2 ] || fail "profile --srcid all: not a usage error"
"$TK" dump "${args_d[@]}" --csv --encap $L --srcid all "$W/both.enc" 2>/dev/null
[ $? -eq 2 ] || fail "dump --csv --srcid all: not a usage error"

# profile: the same report as from the raw file
"$TK" profile "${args_d[@]}" "$W/d.raw" >"$W/d.prof" || fail "profile raw"
"$TK" profile "${args_d[@]}" --encap $L --srcid 3 "$W/both.enc" >"$W/d3.prof" ||
    fail "profile --encap"
cmp -s "$W/d.prof" "$W/d3.prof" || fail "profile --encap differs"

# a source that is not there, a layout that does not fit the stream
"$TK" decode "${args_d[@]}" --encap $L --srcid 4 "$W/both.enc" --format count >/dev/null \
    2>"$W/none.err" && fail "srcID 4: exit 0"
grep -q "no te_inst packet of srcID 4; the stream has srcID 3 (8742 packets), 5 (374 packets)" \
    "$W/none.err" || fail "srcID 4: $(cat "$W/none.err")"
"$TK" decode "${args_d[@]}" --encap typo=1 "$W/both.enc" 2>"$W/typo.err" && fail "bad layout"
grep -q "unknown key 'typo'" "$W/typo.err" || fail "bad layout: $(cat "$W/typo.err")"
"$TK" decode "${args_d[@]}" --encap srcid-bits=4 --srcid 20 "$W/both.enc" 2>/dev/null
[ $? -eq 2 ] || fail "--srcid 20 with 4 bits: not a usage error"

# cut inside the last packet: reported at its offset, the rest decoded
size=$(stat -c %s "$W/d.enc")
head -c $((size - 1)) "$W/d.enc" >"$W/cut.enc"
"$TK" decode "${args_d[@]}" --encap $L --srcid 3 "$W/cut.enc" -o "$W/cut.pcs" 2>"$W/cut.err" &&
    fail "truncated: exit 0"
grep -q "offset [0-9]* (packet 8741): .*trunc" "$W/cut.err" || fail "truncated: $(cat "$W/cut.err")"
n=$(wc -l <"$W/cut.pcs")
[ "$n" -gt 202000 ] || fail "truncated: only $n instructions decoded"
head -n "$n" "$W/d.pcs" | cmp -s - "$W/cut.pcs" || fail "truncated: not a prefix of the clean flow"

# 40 bytes overwritten in the middle: errors with offsets, the flow resumes at a later sync
python3 -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[30000:30040] = bytes((i * 37 + 11) & 0xff for i in range(40))
open(sys.argv[2], 'wb').write(b)" "$W/d.enc" "$W/bad.enc"
"$TK" decode "${args_d[@]}" --encap $L --srcid 3 "$W/bad.enc" -o "$W/bad.pcs" 2>"$W/bad.err" &&
    fail "damaged: exit 0"
grep -q "offset 3[0-9][0-9][0-9][0-9] (packet" "$W/bad.err" || fail "damaged: $(cat "$W/bad.err")"
tail -n 50000 "$W/d.pcs" >"$W/tail.clean"
tail -n 50000 "$W/bad.pcs" | cmp -s - "$W/tail.clean" || fail "damaged: the end differs"
# 20 bytes zeroed: read as idle nulls, but an unframed stream ends its nulls with a
# null.alignment, so the packet after them is reported; with framed=1 the check is off
python3 -c "
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[30000:30020] = bytes(20)
open(sys.argv[2], 'wb').write(b)" "$W/d.enc" "$W/zero.enc"
"$TK" decode "${args_d[@]}" --encap $L --srcid 3 "$W/zero.enc" -o /dev/null 2>"$W/zero.err" &&
    fail "zeroed: exit 0"
grep -q "offset 300[0-9][0-9] (packet [0-9]*): header 0x.. follows a null.idle" "$W/zero.err" ||
    fail "zeroed: $(cat "$W/zero.err")"
"$TK" decode "${args_d[@]}" --encap $L,framed=1 --srcid 3 "$W/zero.enc" -o /dev/null \
    2>"$W/zerof.err"
grep -q "follows a null.idle" "$W/zerof.err" && fail "framed=1: alignment still checked"
# dump --srcid all: the packet the reader rejects has no known source, and is counted so
"$TK" dump "${args_d[@]}" --encap $L --srcid all --keep-going "$W/zero.enc" >/dev/null \
    2>"$W/zeroall.err" && fail "zeroed --srcid all: exit 0"
grep -q "offset 300[0-9][0-9] (packet [0-9]*): header 0x.. follows a null.idle" "$W/zeroall.err" &&
    grep -q "damaged (1 of no known source)" "$W/zeroall.err" ||
    fail "zeroed --srcid all: $(cat "$W/zeroall.err")"

# a type field (type-bits=1): data trace packets (type 1) of the same source among the
# instruction trace are skipped, and flow is not looked at (the inserted ones have flow 0)
"$TK" encode --scf "$D/dhrystone.scf" --ucf "$D/dhrystone.encoder.ucf" \
    "$D/dhrystone.encoder_input.gz" -o "$W/ty.enc" --encap srcid-bits=8,type-bits=1 --srcid 3 ||
    fail "encode type-bits=1"
python3 - "$W/ty.enc" "$W/tyd.enc" <<'PY' || fail "insert data packets"
import sys
b = open(sys.argv[1], 'rb').read()
out, i, n = bytearray(), 0, 0
while i < len(b):
    h = b[i]
    size = 1 if h & 0x1f == 0 else 2 + (h & 0x1f)
    if h & 0x1f and n % 10 == 0:
        out += bytes([0x02, 3, 0x01 | 0x5a << 1, 0x77])  # flow 0, srcID 3, type 1, data
    n += h & 0x1f != 0
    out += b[i:i + size]
    i += size
open(sys.argv[2], 'wb').write(out)
PY
"$TK" decode "${args_d[@]}" --encap srcid-bits=8,type-bits=1 --srcid 3 "$W/tyd.enc" \
    -o "$W/ty.pcs" --stats 2>"$W/ty.err" || fail "type-bits=1: $(cat "$W/ty.err")"
cmp -s "$W/d.pcs" "$W/ty.pcs" || fail "type-bits=1 with data packets: flow differs"
grep -q "8742 te_inst packets, 875 packets of other sources or types" "$W/ty.err" ||
    fail "type-bits=1 stats: $(cat "$W/ty.err")"
"$TK" dump "${args_d[@]}" --encap srcid-bits=8,type-bits=1 --srcid 3 "$W/tyd.enc" |
    grep -c "type 1 (data trace, skipped)" | grep -qx 875 || fail "dump: data packets not listed"
"$TK" dump "${args_d[@]}" --encap srcid-bits=8,type-bits=1 --srcid all "$W/tyd.enc" \
    2>"$W/tyall.err" | grep -c "src=3 type 1 (data trace, skipped)" | grep -qx 875 ||
    fail "dump --srcid all: data packets not listed"
grep -q "srcID 3: 8742 te_inst packets, 875 of other types, 0 damaged" "$W/tyall.err" ||
    fail "dump --srcid all: data packets not counted: $(cat "$W/tyall.err")"

# a register dump with a source field (trTeSrcBits 8, trTeSrcID 3): encode writes the
# encapsulation and decode --regs reads it, with no --encap; the same dump without the field
# gives the raw framing and the same flow
elf=$DATA/riscv-ref/dhrystone.riscv
spike=$R/dhrystone/dhrystone.spike_pc_trace.gz
base="iaddress_width_p=64
iaddress_lsb_p=1
itype_width_p=4
trTeControl=0x$(printf '%x' $((0x7 | (1 << 16) | (4 << 20))))"
printf '%s\ntrTeInstFeatures=0x0\n' "$base" >"$W/raw.regs"
printf '%s\ntrTeInstFeatures=0x%x\n' "$base" $(((8 << 28) | (3 << 16))) >"$W/src.regs"
printf '%s\ntrTeInstFeatures=0x%x\n' "$base" $(((8 << 28) | (300 << 16))) >"$W/wide.regs"
for k in raw src; do
    "$TK" encode --regs "$W/$k.regs" --input-format spike-csv "$spike" -o "$W/$k.te" ||
        fail "encode --regs $k.regs"
    "$TK" decode --regs "$W/$k.regs" --elf "$elf" "$W/$k.te" -o "$W/$k-regs.pcs" ||
        fail "decode --regs $k.regs"
done
cmp -s "$W/raw-regs.pcs" "$W/src-regs.pcs" || fail "--regs with trTeSrcBits: flow differs"
cmp -s "$W/raw.te" "$W/src.te" && fail "--regs with trTeSrcBits: not encapsulated"
"$TK" dump --scf "$D/dhrystone.scf" --encap srcid-bits=8 --srcid 3 "$W/src.te" >/dev/null ||
    fail "the --regs trace is not srcID 3 in srcid-bits=8"
"$TK" decode --regs "$W/src.regs" --elf "$elf" --srcid 4 "$W/src.te" --format count \
    >/dev/null 2>"$W/regs4.err" && fail "--regs --srcid 4: exit 0"
grep -q "no te_inst packet of srcID 4; the stream has srcID 3" "$W/regs4.err" ||
    fail "--regs --srcid 4: $(cat "$W/regs4.err")"
"$TK" decode --regs "$W/wide.regs" --elf "$elf" "$W/src.te" 2>"$W/wide.err"
[ $? -eq 2 ] && grep -q "trTeSrcID 0x12c does not fit trTeSrcBits 8" "$W/wide.err" ||
    fail "trTeSrcID wider than trTeSrcBits: $(cat "$W/wide.err")"
echo "PASS: encapsulated E-Trace through decode, dump (one source and all), profile and --regs"
