#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The hart model's spike CSV and .encoder_input for a reference-flow program must be
# byte-identical to the reference flow's files (etrace-ref: spike trace and post-iss output).
# usage: check_reference.sh TRACEKIT TESTDATA TEST SUITE WORKDIR
set -u
tk=$1 data=$2 t=$3 suite=$4 work=$5
d=$data/etrace-ref/$t
elf=$data/riscv-ref/$t.riscv
if [ ! -d "$d/$suite" ] || [ ! -f "$elf" ]; then echo "SKIP: test data for $t absent"; exit 77; fi
mkdir -p "$work"
"$tk" sim "$elf" --quiet --spike-csv "$work/$t.csv" --scf "$d/$suite/$t.scf" \
    --ucf "$d/$suite/$t.encoder.ucf" --encoder-input "$work/$t.ei" || exit 1
zcat "$d/$t.spike_pc_trace.gz" | tr -d '\r' > "$work/$t.ref.csv"
zcat "$d/$suite/$t.encoder_input.gz" | tr -d '\r' > "$work/$t.ref.ei"
rc=0
for f in csv ei; do
    if cmp "$work/$t.$f" "$work/$t.ref.$f"; then
        echo "PASS: $t $f: $(wc -l < "$work/$t.$f") lines identical to the reference"
    else
        rc=1
    fi
done
[ $rc = 0 ] && rm -f "$work/$t".*
exit $rc
