#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The sources with SIMD builds chosen at run time (x86 intrinsics, __builtin_cpu_supports)
# must also compile where those builds are left out: each is compiled (syntax and warnings
# only, -Werror) for RISC-V with the cross compiler the test programs use. A source that only
# compiled on x86 because an x86 header brought in a declaration was found this way (NULL
# without stddef.h, session 17). Every such source is checked: the list is found, not kept.
#   usage: portable_sources.sh SOURCE_DIR
set -euo pipefail
SRC=$1
CC=riscv64-unknown-elf-gcc
if ! command -v "$CC" >/dev/null; then
    echo "portable_sources: $CC not installed (scripts/install-deps.sh), skipped"
    exit 77
fi
mapfile -t files < <(grep -rlE 'immintrin|emmintrin|__builtin_cpu_supports' "$SRC/src" --include='*.c' | sort)
if [ ${#files[@]} -eq 0 ]; then
    echo "portable_sources: no source with SIMD builds found under $SRC/src" >&2
    exit 1
fi
fail=0
for f in "${files[@]}"; do
    if ! "$CC" --specs=picolibc.specs -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsyntax-only \
        -I"$SRC/include" -I"$SRC/src" "$f"; then
        echo "portable_sources: ${f#$SRC/} does not compile without its SIMD builds" >&2
        fail=1
    fi
done
echo "portable_sources: ${#files[@]} sources compiled for RISC-V"
exit $fail
