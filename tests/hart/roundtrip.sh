#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# decode(encode(run)) must reproduce the executed PCs, for several encoder settings and
# retirement widths.
# usage: roundtrip.sh TRACEKIT ELF SCF UCF_ENCODER UCF_DECODER WORKDIR MAX [RETIRES TAKEN]
set -u
tk=$1 elf=$2 scf=$3 ucfe=$4 ucfd=$5 work=$6 max=$7 retires=${8:-1} taken=${9:-1}
for f in "$elf" "$scf" "$ucfe" "$ucfd"; do
    [ -f "$f" ] || { echo "SKIP: $f absent"; exit 77; }
done
mkdir -p "$work"
n=$(basename "$elf").$(basename "$(dirname "$scf")").r$retires
"$tk" sim "$elf" --quiet --max-insns "$max" --pcs "$work/$n.pcs" --retired-only --encode --scf "$scf" \
    --ucf "$ucfe" -o "$work/$n.raw" --retires "$retires" --taken "$taken" || exit 1
"$tk" decode --scf "$scf" --ucf "$ucfd" --elf "$elf" --no-bootrom "$work/$n.raw" \
    -o "$work/$n.dec" || exit 1
if cmp "$work/$n.pcs" "$work/$n.dec"; then
    echo "PASS: $n: $(wc -l < "$work/$n.pcs") PCs decoded back exactly"
    rm -f "$work/$n".*
    exit 0
fi
exit 1
