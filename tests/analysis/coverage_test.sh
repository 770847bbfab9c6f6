#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# End to end on a program compiled here with -g: run it, collect its executed PCs, and check
# that `tracekit coverage` names exactly the source lines that never ran (check_never.py),
# that genhtml renders the coverage and the line-based profiles are read by their tools.
# The PCs come from QEMU (one instruction per translation block, exec log).
# usage: coverage_test.sh TRACEKIT SRCDIR WORKDIR        (exit 77: a tool is missing)
set -euo pipefail
tk=$1 src=$2 work=$3
for t in riscv64-unknown-elf-gcc qemu-system-riscv64 python3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
[ -f /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] || { echo "SKIP: picolibc not installed"; exit 77; }
mkdir -p "$work"
cd "$work"
cp "$src/cov_prog.c" .
# Bare metal on QEMU's virt machine: code at 0x80000000, semihosting for exit.
riscv64-unknown-elf-gcc -g -O0 -march=rv64imac -mabi=lp64 -mcmodel=medany \
  --specs=picolibc.specs --oslib=semihost --crt0=semihost \
  -Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x200000 \
  -Wl,--defsym=__ram=0x80200000 -Wl,--defsym=__ram_size=0x200000 \
  -o cov_prog.elf "$PWD/cov_prog.c"
rm -f qemu.log
timeout 60 qemu-system-riscv64 -M virt -nographic -bios none -kernel cov_prog.elf \
  -semihosting-config enable=on,target=native -singlestep -d exec,nochain -D qemu.log \
  </dev/null
# "Trace 0: 0xHOST [ASID/PC/FLAGS/...]" -> PC
sed -n 's|^Trace [0-9]*: 0x[0-9a-f]* \[[0-9a-f]*/\([0-9a-f]*\)/.*|\1|p' qemu.log > cov_prog.pcs
n=$(wc -l < cov_prog.pcs)
[ "$n" -gt 100 ] || { echo "FAIL: only $n PCs from QEMU"; exit 1; }
echo "QEMU executed $n instructions"

in=(--elf cov_prog.elf --pc-trace cov_prog.pcs --quiet)
"$tk" coverage -o cov_prog.info --test-name cov_prog "${in[@]}"
python3 "$src/check_never.py" cov_prog.c cov_prog.info
for f in callgrind llvm-sample folded json; do
  "$tk" profile --format "$f" -o "cov_prog.$f" "${in[@]}"
done
cp cov_prog.info cov_prog.info.keep
rc=0
for c in genhtml callgrind llvm-sample folded json; do
  python3 "$src/check_consumers.py" "$c" cov_prog || { r=$?; [ $r -eq 77 ] || rc=1; }
done
exit $rc
