#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# End to end on a program compiled here with -g (cov_prog.c): run it, and check that
# `tracekit coverage` names exactly the source lines that never ran (check_never.py), that
# genhtml renders the coverage and that the line-based profiles are read by their tools.
# Two executors: tracekit's hart model (--sim, with the examples' start-up code and HTIF
# exit), and QEMU (executed PCs from its exec log, one instruction per translation block)
# when it is installed.
# usage: coverage_test.sh TRACEKIT SRCDIR EXAMPLES_DIR WORKDIR     (exit 77: no compiler)
set -euo pipefail
tk=$1 src=$2 ex=$3 work=$4
for t in riscv64-unknown-elf-gcc python3; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
[ -f "$(riscv64-unknown-elf-gcc -print-file-name=picolibc.specs)" ] ||
  { echo "SKIP: picolibc not installed"; exit 77; }
mkdir -p "$work"
cd "$work"
cp "$src/cov_prog.c" .

# --- on the hart model ---
riscv64-unknown-elf-gcc -O0 -g -march=rv64gc -mabi=lp64d -mcmodel=medany -ffreestanding \
  --specs=picolibc.specs -nostartfiles -T "$ex/link.ld" -Wl,--no-warn-rwx-segments \
  -o cov_sim.elf "$ex/crt0.S" "$ex/trap.S" "$ex/htif.c" "$PWD/cov_prog.c"
"$tk" coverage -o cov_sim.info --test-name cov_prog --sim cov_sim.elf --quiet
python3 "$src/check_never.py" cov_prog.c cov_sim.info
# coverage collects the flat profile; the full one (--full-profile) must give the same file
"$tk" coverage -o cov_sim.full.info --full-profile --test-name cov_prog --sim cov_sim.elf --quiet
cmp cov_sim.info cov_sim.full.info || { echo "FAIL: flat and full coverage differ"; exit 1; }
for f in callgrind llvm-sample folded json bolt; do
  "$tk" profile --format "$f" -o "cov_sim.$f" --sim cov_sim.elf --quiet
done
cp cov_sim.info cov_sim.info.keep
rc=0
for c in genhtml callgrind llvm-sample folded json bolt "perf2bolt cov_sim cov_sim.elf"; do
  set -- $c
  [ $# -gt 1 ] || set -- "$c" cov_sim
  python3 "$src/check_consumers.py" "$@" || { r=$?; [ $r -eq 77 ] || rc=1; }
done

# --- on QEMU, from its executed PCs ---
if ! command -v qemu-system-riscv64 >/dev/null; then
  echo "qemu-system-riscv64 not installed: QEMU part skipped"
  exit $rc
fi
# Bare metal on QEMU's virt machine: code at 0x80000000, semihosting for exit.
riscv64-unknown-elf-gcc -g -O0 -march=rv64imac -mabi=lp64 -mcmodel=medany \
  --specs=picolibc.specs --oslib=semihost --crt0=semihost \
  -Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x200000 \
  -Wl,--defsym=__ram=0x80200000 -Wl,--defsym=__ram_size=0x200000 \
  -o cov_qemu.elf "$PWD/cov_prog.c"
rm -f qemu.log
timeout 60 qemu-system-riscv64 -M virt -nographic -bios none -kernel cov_qemu.elf \
  -semihosting-config enable=on,target=native -singlestep -d exec,nochain -D qemu.log \
  </dev/null
# "Trace 0: 0xHOST [ASID/PC/FLAGS/...]" -> PC
sed -n 's|^Trace [0-9]*: 0x[0-9a-f]* \[[0-9a-f]*/\([0-9a-f]*\)/.*|\1|p' qemu.log > cov_qemu.pcs
n=$(wc -l < cov_qemu.pcs)
[ "$n" -gt 100 ] || { echo "FAIL: only $n PCs from QEMU"; exit 1; }
echo "QEMU executed $n instructions"
# QEMU's reset code at 0x1000 is not in the ELF: reported once as a trace error.
"$tk" coverage -o cov_qemu.info --test-name cov_prog --elf cov_qemu.elf --pc-trace cov_qemu.pcs \
  --quiet 2>/dev/null
python3 "$src/check_never.py" cov_prog.c cov_qemu.info
"$tk" coverage -o cov_qemu.full.info --full-profile --test-name cov_prog --elf cov_qemu.elf \
  --pc-trace cov_qemu.pcs --quiet 2>/dev/null
cmp cov_qemu.info cov_qemu.full.info || { echo "FAIL: flat and full coverage differ (QEMU)"; exit 1; }
"$tk" profile --format llvm-sample -o cov_qemu.llvm-sample --elf cov_qemu.elf \
  --pc-trace cov_qemu.pcs --quiet 2>/dev/null
python3 "$src/check_consumers.py" llvm-sample cov_qemu || { r=$?; [ $r -eq 77 ] || rc=1; }
exit $rc
