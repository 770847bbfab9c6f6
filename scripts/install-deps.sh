#!/usr/bin/env bash
# Install the Debian 12 packages tracekit needs, only those that are missing.
set -euo pipefail
pkgs=(cmake make gcc pkg-config libelf-dev libdw-dev zlib1g-dev libcmocka-dev
      gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc
      libopencsd-bin lcov valgrind clang libclang-rt-14-dev llvm python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
