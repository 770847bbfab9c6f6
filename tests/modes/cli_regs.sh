#!/usr/bin/env bash
# tracekit decode --regs: the golden vectors decoded with their parameters given as a Trace
# Control Interface register dump instead of .scf/.ucf give the reference decoder's PCs.
set -euo pipefail
tk=$1
data=$2
out=$3
[ -d "$data/etrace-ref" ] || { echo "SKIP: no shared test data at $data"; exit 77; }
mkdir -p "$out"
fail=0
for setting in dhrystone/itype4_basic dhrystone/itype4_debug towers/itype3_basic; do
    d=$data/etrace-ref/$setting
    p=${setting%%/*}
    regs=$out/${p}_${setting##*/}.regs
    {
        echo "# discovery parameters, from the .scf"
        grep -E '^[a-z_]+_p *=' "$d/$p.scf" | tr -d ' '
        # resync-max of the .ucf -> trTeInstSyncMax, counted in packets (trTeInstSyncMode 1)
        rmax=$(sed -n 's/^ *resync-max *= *\([0-9]*\).*/\1/p' "$d/$p.decoder.ucf")
        printf 'trTeControl=0x%08x\n' $(( 0x7 | (1 << 11) | (1 << 16) | (rmax << 20) ))
        full=$(grep -Eq '^ *full-address *= *true' "$d/$p.decoder.ucf" && echo 1 || echo 0)
        printf 'trTeInstFeatures=0x%x\n' "$full"
        echo "trTeImpl=0x00000101"
        echo "trRamControl=0x3   # other components' registers are accepted"
    } > "$regs"
    zcat "$d/$p.decoder.trace.gz" > "$out/want.trace"
    "$tk" decode --regs "$regs" --elf "$data/riscv-ref/$p.riscv" "$d/$p.te_inst_raw" \
        -o "$out/got.trace"
    if cmp -s "$out/want.trace" "$out/got.trace"; then
        echo "ok   $setting: $(wc -l < "$out/got.trace") PCs identical with --regs"
    else
        echo "FAIL $setting"; fail=1
    fi
done
# a bad dump is an error naming the line
printf 'iaddress_width_p=64\ntrTeControl=0x7\ntrTeBogus=1\n' > "$out/bad.regs"
if "$tk" decode --regs "$out/bad.regs" --elf "$data/riscv-ref/towers.riscv" \
    "$data/etrace-ref/towers/itype3_basic/towers.te_inst_raw" -o /dev/null 2> "$out/err.txt"; then
    echo "FAIL: bad register dump accepted"; fail=1
elif ! grep -q "line 3: unknown register 'trTeBogus'" "$out/err.txt"; then
    echo "FAIL: unexpected message: $(cat "$out/err.txt")"; fail=1
else
    echo "ok   bad dump: $(cat "$out/err.txt")"
fi
exit $fail
