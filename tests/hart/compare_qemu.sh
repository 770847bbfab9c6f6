#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The hart model's PC sequence must equal QEMU's for one ELF.
# usage: compare_qemu.sh TRACEKIT ELF MACHINE(none|virt) MAX_INSNS(0 = whole run) WORKDIR
set -u
tk=$1 elf=$2 machine=$3 max=$4 work=$5
if [ ! -f "$elf" ]; then echo "SKIP: $elf not present"; exit 77; fi
xlen=64
if [ "$(od -An -tx1 -j4 -N1 "$elf" | tr -d ' ')" = "01" ]; then xlen=32; fi
if ! command -v "qemu-system-riscv$xlen" >/dev/null; then
    echo "SKIP: qemu-system-riscv$xlen not installed"; exit 77
fi
mkdir -p "$work"
name=$(basename "$elf")
clint=()
[ "$machine" = none ] && clint=(--no-clint)   # QEMU -M none has no timer
"$tk" sim "$elf" --quiet "${clint[@]}" --max-insns "$max" --pcs "$work/$name.hart.pcs" || true
python3 "$(dirname "$0")/qemu_trace.py" "$elf" "$work/$name.qemu.pcs" --machine "$machine" \
    --max "$max" || exit 1
h=$(wc -l < "$work/$name.hart.pcs") q=$(wc -l < "$work/$name.qemu.pcs")
if cmp -s "$work/$name.hart.pcs" "$work/$name.qemu.pcs"; then
    echo "PASS: $name: $h PCs identical (hart model vs QEMU, machine $machine, cap $max)"
    rm -f "$work/$name.hart.pcs" "$work/$name.qemu.pcs"
    exit 0
fi
echo "FAIL: $name: hart model $h PCs, QEMU $q PCs; first difference:"
diff "$work/$name.hart.pcs" "$work/$name.qemu.pcs" | head -5
exit 1
