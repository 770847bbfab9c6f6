#!/bin/bash
# CLI checks of `tracekit encode` and `tracekit convert` against reference golden vectors, and
# their error reports (one line naming file and line, non-zero exit).
# usage: cli_test.sh TRACEKIT TESTDATA
set -u
T=$1
DATA=$2/etrace-ref
if [ ! -d "$DATA" ]; then
    echo "SKIP: $DATA not found"
    exit 77
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail=0
check() { # description, command...
    local what=$1
    shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}
for v in towers/itype3_debug test_discon_branch_exception/itype4_basic vvadd/itype3_basic; do
    p=${v%%/*}
    d=$DATA/$v
    check "$v encode" "$T" encode --scf "$d/$p.scf" --ucf "$d/$p.encoder.ucf" \
        "$d/$p.encoder_input.gz" -o "$W/a.raw" --csv "$W/a.csv"
    check "$v raw identical" cmp -s "$W/a.raw" "$d/$p.te_inst_raw"
    check "$v csv identical" bash -c "gzip -dc '$d/$p.te_inst.gz' | cmp -s - '$W/a.csv'"
    check "$v convert" "$T" convert --scf "$d/$p.scf" "$DATA/$p/$p.spike_pc_trace.gz" -o "$W/b.ei"
    check "$v converted text identical to post-iss" \
        bash -c "gzip -dc '$d/$p.encoder_input.gz' | cmp -s - '$W/b.ei'"
    check "$v encode spike-csv" "$T" encode --scf "$d/$p.scf" --ucf "$d/$p.encoder.ucf" \
        --input-format spike-csv "$DATA/$p/$p.spike_pc_trace.gz" -o "$W/c.raw"
    check "$v spike raw identical" cmp -s "$W/c.raw" "$d/$p.te_inst_raw"
    check "$v encode --retire 4" "$T" encode --scf "$d/$p.scf" --ucf "$d/$p.encoder.ucf" \
        --retire 4 --blocks 2 "$d/$p.encoder_input.gz" -o "$W/m.raw"
    check "$v multiple retirement raw identical" cmp -s "$W/m.raw" "$d/$p.te_inst_raw"
done

# Spec-faithful mode with implicit return (return stack of 4): the project's decoder must
# rebuild the reference PC trace; 4-wide retirement must give the same bytes.
d=$DATA/towers/itype4_basic
sed -e 's/^return_stack_size_p=.*/return_stack_size_p=2/' "$d/towers.scf" > "$W/ir.scf"
sed -e 's/^implicit-return.*/implicit-return=true/' "$d/towers.encoder.ucf" > "$W/ir.encoder.ucf"
sed -e 's/^implicit-return.*/implicit-return=true/' "$d/towers.decoder.ucf" > "$W/ir.decoder.ucf"
check "spec-faithful implicit-return encode" "$T" encode --spec-faithful --scf "$W/ir.scf" \
    --ucf "$W/ir.encoder.ucf" "$d/towers.encoder_input.gz" -o "$W/ir.raw"
check "implicit return is smaller" test "$(stat -c %s "$W/ir.raw")" -lt "$(stat -c %s "$d/towers.te_inst_raw")"
check "implicit-return trace decodes to the reference PCs" bash -c \
    "'$T' decode --scf '$W/ir.scf' --ucf '$W/ir.decoder.ucf' --elf '$2/riscv-ref/towers.riscv' \
     '$W/ir.raw' -o '$W/ir.trace' && gzip -dc '$d/towers.decoder.trace.gz' | cmp -s - '$W/ir.trace'"
check "spec-faithful 4-wide retirement" "$T" encode --spec-faithful --retire 4 --blocks 3 \
    --scf "$W/ir.scf" --ucf "$W/ir.encoder.ucf" "$d/towers.encoder_input.gz" -o "$W/ir4.raw"
check "spec-faithful 4-wide retirement identical" cmp -s "$W/ir.raw" "$W/ir4.raw"

d=$DATA/towers/itype4_basic
expect_error() { # description, expected text, command...
    local what=$1 want=$2
    shift 2
    "$@" > "$W/out" 2> "$W/err"
    local rc=$?
    if [ $rc -ne 0 ] && [ "$(wc -l < "$W/err")" -eq 1 ] && grep -qF -- "$want" "$W/err"; then
        echo "ok: $what"
    else
        echo "FAIL: $what (rc $rc): $(cat "$W/err")"
        fail=1
    fi
}
printf 'itype_0,cause,tval,priv,iaddr_0,context,ctype,iretire_0,ilastsize_0\n0,0,0,3,80000000,0,0,1,0\n0,0,zz,3,80000002,0,0,1,0\n' > "$W/bad.ei"
expect_error "bad encoder_input row" "bad.ei:3:" \
    "$T" encode --scf "$d/towers.scf" --ucf "$d/towers.encoder.ucf" "$W/bad.ei" -o "$W/x.raw"
printf '1,1000,297,3,0,0,0,0\n1,1004,29q,3,0,0,0,0\n' > "$W/bad.spike"
expect_error "bad spike row" "bad.spike:2:" \
    "$T" convert --scf "$d/towers.scf" "$W/bad.spike" -o "$W/x.ei"
printf '1,1000,8082,3,1,2,0,0\n1,1004,8082,3,0,0,0,0\n' > "$W/abort.spike"
expect_error "row on which post-iss aborts" "abort.spike:2:" \
    "$T" convert --scf "$d/towers.scf" "$W/abort.spike" -o "$W/x.ei"
expect_error "missing input" "nonexistent.encoder_input" \
    "$T" encode --scf "$d/towers.scf" --ucf "$d/towers.encoder.ucf" "$W/nonexistent.encoder_input" -o "$W/x.raw"
# packets are framed into a buffer and written in large pieces: a failing write is still
# reported (one line, non-zero exit)
if [ -w /dev/full ]; then
    expect_error "write error" "/dev/full: write error" \
        "$T" encode --scf "$d/towers.scf" --ucf "$d/towers.encoder.ucf" \
        "$d/towers.encoder_input.gz" -o /dev/full
fi
# draft layouts through the buffered runs: grouping into cycles of several blocks (pushed
# between the runs) gives the bytes of single retirement
for s in 0.29 0.26; do
    "$T" encode --spec $s --scf "$d/towers.scf" --ucf "$d/towers.encoder.ucf" \
        "$d/towers.encoder_input.gz" -o "$W/s1.raw"
    "$T" encode --spec $s --retire 4 --blocks 3 --scf "$d/towers.scf" \
        --ucf "$d/towers.encoder.ucf" "$d/towers.encoder_input.gz" -o "$W/s4.raw"
    check "--spec $s 4-wide retirement identical" cmp -s "$W/s1.raw" "$W/s4.raw"
    check "--spec $s output not empty" test -s "$W/s1.raw"
done
check "encode --help" bash -c "'$T' encode --help | grep -q 'tracekit encode --scf'"
check "convert --help" bash -c "'$T' convert --help | grep -q 'tracekit convert --scf'"
exit $fail
