#!/usr/bin/env bash
# tracekit encode/decode --regs: a register dump turning on implicit return, branch prediction
# and the jump target cache, with a filter restricting the trace to one function
# (comparator 0: iaddr >= start && iaddr < end), encodes a golden execution so that decoding
# with the same dump gives exactly the executed PCs inside the function; then the same
# without the filter under each spec layout gives every executed PC.
set -euo pipefail
tk=$1
data=$2
out=$3
[ -d "$data/etrace-ref" ] || { echo "SKIP: no shared test data at $data"; exit 77; }
mkdir -p "$out"
prog=dhrystone
elf=$data/riscv-ref/$prog.riscv
trace=$data/etrace-ref/$prog/$prog.spike_pc_trace.gz
read -r start size < <(nm -S "$elf" | awk '$4 == "Proc_1" { print $1, $2 }')
[ -n "$start" ] || { echo "FAIL: no Proc_1 in $elf"; exit 1; }
lo=$((16#$start))
hi=$((lo + 16#$size))
cat > "$out/hw.regs" <<REGS
# discovery parameters
iaddress_width_p=64
iaddress_lsb_p=1
itype_width_p=4
return_stack_size_p=3
bpred_size_p=8
cache_size_p=5
f0s_width_p=1
# active, enabled, tracing, trace-on/off triggers, sync every 2^(2+4) packets
trTeControl=0x$(printf '%x' $(( 0x7 | (1 << 11) | (1 << 16) | (2 << 20) )))
# implicit return (stack, full compare), branch prediction, jump target cache
trTeInstFeatures=0xf8
REGS
cp "$out/hw.regs" "$out/filtered.regs"
cat >> "$out/filtered.regs" <<REGS
trTeInstFilters=0x1
trTeFilter0Control=0x11          # enabled, comparator 0 must match
trTeComp0Control=0x1250          # P: iaddr >= PMatch, S: iaddr < SMatch, P && S
trTeComp0PMatchLow=$(printf '0x%x' $((lo & 0xffffffff)))
trTeComp0PMatchHigh=$(printf '0x%x' $((lo >> 32)))
trTeComp0SMatchLow=$(printf '0x%x' $((hi & 0xffffffff)))
trTeComp0SMatchHigh=$(printf '0x%x' $((hi >> 32)))
REGS
# expected: retired rows (not faulting ones), as lower-case hex
zcat "$trace" | awk -F, 'NR > 1 && ($5 == 0 || $3 == "73" || $3 == "100073") { print $2 }' \
    > "$out/all.pcs"
python3 -c '
import sys
lo, hi = int(sys.argv[1]), int(sys.argv[2])
for line in open(sys.argv[3]):
    if lo <= int(line, 16) < hi:
        sys.stdout.write(line)' "$lo" "$hi" "$out/all.pcs" > "$out/range.pcs"
"$tk" encode --regs "$out/filtered.regs" --input-format spike-csv "$trace" \
    -o "$out/range.te_inst_raw" --stats
"$tk" decode --regs "$out/filtered.regs" --elf "$elf" "$out/range.te_inst_raw" -o "$out/got.pcs"
if ! cmp -s "$out/range.pcs" "$out/got.pcs"; then
    echo "FAIL: filtered trace: $(wc -l < "$out/got.pcs") PCs, want $(wc -l < "$out/range.pcs")"
    exit 1
fi
echo "ok   Proc_1 only: $(wc -l < "$out/got.pcs") of $(wc -l < "$out/all.pcs") PCs, exact"
for spec in 2.0 0.29; do
    "$tk" encode --regs "$out/hw.regs" --spec "$spec" --input-format spike-csv "$trace" \
        -o "$out/all.te_inst_raw" --stats 2> "$out/stats.txt"
    "$tk" decode --regs "$out/hw.regs" --spec "$spec" --elf "$elf" "$out/all.te_inst_raw" \
        -o "$out/got.pcs"
    cmp -s "$out/all.pcs" "$out/got.pcs" || { echo "FAIL: spec $spec"; exit 1; }
    echo "ok   spec $spec, ir+bp+jtc: $(wc -l < "$out/got.pcs") PCs exact; $(cat "$out/stats.txt")"
done
# 0.026 has none of the optional modes: baseline only
printf 'iaddress_width_p=64\niaddress_lsb_p=1\nitype_width_p=4\ntrTeControl=0x10807\n' \
    > "$out/base.regs"
"$tk" encode --regs "$out/base.regs" --spec 0.26 --input-format spike-csv "$trace" \
    -o "$out/all.te_inst_raw"
"$tk" decode --regs "$out/base.regs" --spec 0.26 --elf "$elf" "$out/all.te_inst_raw" \
    -o "$out/got.pcs"
cmp -s "$out/all.pcs" "$out/got.pcs" || { echo "FAIL: spec 0.26"; exit 1; }
echo "ok   spec 0.26 baseline: exact"
# the same register dump on the hart model: sim --encode --regs
"$tk" sim "$elf" --quiet --encode --regs "$out/filtered.regs" -o "$out/sim.te_inst_raw" 2> /dev/null
"$tk" decode --regs "$out/filtered.regs" --elf "$elf" "$out/sim.te_inst_raw" -o "$out/got.pcs"
cmp -s "$out/range.pcs" "$out/got.pcs" || { echo "FAIL: sim --regs"; exit 1; }
echo "ok   sim --encode --regs, Proc_1 only: exact"
# Options travel in the trace: a decoder told only the discovery parameters (a .scf, no .ucf
# or feature register) learns implicit return, branch prediction and the jump target cache
# from the support packet and decodes exactly.
"$tk" encode --regs "$out/hw.regs" --input-format spike-csv "$trace" -o "$out/all.te_inst_raw"
grep '_p=' "$out/hw.regs" > "$out/discovery.scf"
"$tk" decode --scf "$out/discovery.scf" --elf "$elf" "$out/all.te_inst_raw" -o "$out/got.pcs"
cmp -s "$out/all.pcs" "$out/got.pcs" || { echo "FAIL: options from the support packet"; exit 1; }
echo "ok   --scf without --ucf, ir+bp+jtc from the support packet: exact"
# ... and without --elf there is nothing to decode against: a clear usage error
if "$tk" decode --scf "$out/discovery.scf" "$out/all.te_inst_raw" 2> "$out/err.txt"; then
    echo "FAIL: decode without --ucf and --elf succeeded"
    exit 1
fi
grep -q 'give the program with --elf' "$out/err.txt" || { cat "$out/err.txt"; exit 1; }
echo "ok   --scf alone: '$(cat "$out/err.txt")'"
# --max-predicted bounds what one branch-count packet may claim: a limit above every claim of
# this trace changes nothing; the smallest (31, what every such packet claims at least) makes
# each one an error with its offset, and decoding goes on at the next sync.
"$tk" decode --regs "$out/hw.regs" --elf "$elf" --max-predicted 100000000 "$out/all.te_inst_raw" \
    -o "$out/got.pcs"
cmp -s "$out/all.pcs" "$out/got.pcs" || { echo "FAIL: --max-predicted above every claim"; exit 1; }
# the default limit and 0 (none) are above every claim too
for lim in "" "--max-predicted 0"; do
    # shellcheck disable=SC2086
    "$tk" decode --regs "$out/hw.regs" --elf "$elf" $lim "$out/all.te_inst_raw" -o "$out/got.pcs"
    cmp -s "$out/all.pcs" "$out/got.pcs" || { echo "FAIL: decode ${lim:-with the default limit}"; exit 1; }
done
if "$tk" decode --regs "$out/hw.regs" --elf "$elf" --max-predicted -3 "$out/all.te_inst_raw" \
    > /dev/null 2>&1; then
    echo "FAIL: --max-predicted -3 accepted"
    exit 1
fi
if "$tk" decode --regs "$out/hw.regs" --elf "$elf" --max-predicted 31 "$out/all.te_inst_raw" \
    -o "$out/limited.pcs" 2> "$out/err.txt"; then
    echo "FAIL: --max-predicted 31 gave no error"
    exit 1
fi
grep -Eq 'offset [0-9]+ \(packet [0-9]+\): branch count packet claims [0-9]+ correctly predicted branches, more than the limit of 31' \
    "$out/err.txt" || { head -3 "$out/err.txt"; exit 1; }
[ -s "$out/limited.pcs" ] || { echo "FAIL: nothing decoded around the refused packets"; exit 1; }
echo "ok   --max-predicted 31: $(grep -c 'more than the limit' "$out/err.txt") packets refused, $(wc -l < "$out/limited.pcs") PCs decoded around them"
# the parallel decoder applies the limit in every piece: same PCs, same messages
"$tk" decode --regs "$out/hw.regs" --elf "$elf" --max-predicted 31 -j 2 --piece-size 1000 \
    "$out/all.te_inst_raw" -o "$out/limited-j2.pcs" 2> "$out/err-j2.txt" && exit 1
cmp -s "$out/limited.pcs" "$out/limited-j2.pcs" || { echo "FAIL: -j 2 PCs differ"; exit 1; }
cmp -s <(sed 's/^[^:]*: [^:]*: //' "$out/err.txt") <(sed 's/^[^:]*: [^:]*: //' "$out/err-j2.txt") ||
    { echo "FAIL: -j 2 messages differ"; exit 1; }
echo "ok   --max-predicted 31 -j 2: the same PCs and messages"
# the analysis commands take it too
"$tk" profile --scf "$out/discovery.scf" --elf "$elf" --max-predicted 31 --quiet \
    "$out/all.te_inst_raw" -o "$out/limited.callgrind" 2> "$out/err-prof.txt"
[ "$(grep -c 'more than the limit of 31' "$out/err-prof.txt")" = \
    "$(grep -c 'more than the limit of 31' "$out/err.txt")" ] ||
    { echo "FAIL: profile --max-predicted"; head -3 "$out/err-prof.txt"; exit 1; }
echo "ok   profile --max-predicted 31: the same packets refused"
