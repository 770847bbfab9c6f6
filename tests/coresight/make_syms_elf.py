#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Write a minimal AArch64 ELF executable that holds only function symbols, as a symbol file
for a snapshot's memory dumps (what `objcopy --only-keep-debug` leaves of a real binary).
    usage: make_syms_elf.py OUT.elf NAME=ADDR:SIZE...   (ADDR and SIZE hex)
One loadable segment, R+X, covers all symbols; it has no bytes (NOBITS .text)."""
import struct
import sys

out, specs = sys.argv[1], sys.argv[2:]
syms = []
for spec in specs:
    name, rest = spec.split("=")
    addr, size = (int(v, 16) for v in rest.split(":"))
    syms.append((name, addr, size))
lo = min(a for _, a, _ in syms) & ~0xFFF
hi = max(a + s for _, a, s in syms)

strtab = b"\0"
name_off = []
for name, _, _ in syms:
    name_off.append(len(strtab))
    strtab += name.encode() + b"\0"
shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
sh_name = {n: shstrtab.index(n.encode() + b"\0") for n in (".text", ".symtab", ".strtab", ".shstrtab")}

STT_FUNC, STB_GLOBAL = 2, 1
symtab = b"\0" * 24  # the null symbol
for (name, addr, size), off in zip(syms, name_off):
    symtab += struct.pack("<IBBHQQ", off, (STB_GLOBAL << 4) | STT_FUNC, 0, 1, addr, size)

EHDR, PHDR, SHDR = 64, 56, 64
symtab_off = EHDR + PHDR
strtab_off = symtab_off + len(symtab)
shstrtab_off = strtab_off + len(strtab)
shoff = (shstrtab_off + len(shstrtab) + 7) & ~7

ehdr = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
ehdr += struct.pack("<HHIQQQIHHHHHH", 2, 183, 1, lo, EHDR, shoff, 0, EHDR, PHDR, 1, SHDR, 5, 4)
PF_X, PF_R = 1, 4
phdr = struct.pack("<IIQQQQQQ", 1, PF_R | PF_X, 0, lo, lo, 0, hi - lo, 0x1000)

SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 1, 2, 3, 8
SHF_ALLOC, SHF_EXECINSTR = 2, 4
shdrs = b"\0" * SHDR
shdrs += struct.pack("<IIQQQQIIQQ", sh_name[".text"], SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR,
                     lo, EHDR + PHDR, hi - lo, 0, 0, 4, 0)
shdrs += struct.pack("<IIQQQQIIQQ", sh_name[".symtab"], SHT_SYMTAB, 0, 0, symtab_off,
                     len(symtab), 3, 1, 8, 24)
shdrs += struct.pack("<IIQQQQIIQQ", sh_name[".strtab"], SHT_STRTAB, 0, 0, strtab_off,
                     len(strtab), 0, 0, 1, 0)
shdrs += struct.pack("<IIQQQQIIQQ", sh_name[".shstrtab"], SHT_STRTAB, 0, 0, shstrtab_off,
                     len(shstrtab), 0, 0, 1, 0)

data = ehdr + phdr + symtab + strtab + shstrtab
data += b"\0" * (shoff - len(data)) + shdrs
with open(out, "wb") as f:
    f.write(data)
