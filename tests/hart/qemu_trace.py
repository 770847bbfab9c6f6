#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run a RISC-V ELF under QEMU (system mode) and write its executed PC sequence.

QEMU 7.2's own HTIF cannot run these programs, so HTIF is served from outside: a write
watchpoint on `tohost` through QEMU's gdb stub stops the guest after each store, and this
script answers exits and console writes like spike's syscall proxy. The PC sequence comes
from `-singlestep -d exec,nochain` (one "Trace" line per executed instruction); a line that
QEMU follows with "Stopped execution of TB chain before" the same block did not run, and one
followed by "cpu_io_recompile: rewound execution" (a device access under -icount) runs again.

usage: qemu_trace.py ELF OUT.pcs [--max N] [--machine none|virt] [--console FILE]
Exit status: 0 when the program exited (its code is printed) or the cap was reached,
77 when QEMU is absent, 1 on errors."""
import argparse
import array
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time


def elf_info(path):
    """(xlen, entry, {symbol: address}) from an ELF file (standard library only)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise ValueError("%s: not an ELF file" % path)
    is64 = data[4] == 2
    if is64:
        (entry, _phoff, shoff) = struct.unpack_from("<QQQ", data, 24)
        (shentsize, shnum) = struct.unpack_from("<HH", data, 58)
    else:
        (entry, _phoff, shoff) = struct.unpack_from("<III", data, 24)
        (shentsize, shnum) = struct.unpack_from("<HH", data, 46)
    sections = []
    for i in range(shnum):
        off = shoff + i * shentsize
        if is64:
            (_n, stype, _fl, _ad, soff, size, link, _inf, _al, entsize) = struct.unpack_from(
                "<IIQQQQIIQQ", data, off)
        else:
            (_n, stype, _fl, _ad, soff, size, link, _inf, _al, entsize) = struct.unpack_from(
                "<IIIIIIIIII", data, off)
        sections.append((stype, soff, size, link, entsize))
    syms = {}
    for (stype, soff, size, link, entsize) in sections:
        if stype != 2 or entsize == 0:  # SHT_SYMTAB
            continue
        stroff = sections[link][1]
        for k in range(size // entsize):
            off = soff + k * entsize
            if is64:
                (name, _info, _oth, _shn, value, _sz) = struct.unpack_from("<IBBHQQ", data, off)
            else:
                (name, value, _sz, _info, _oth, _shn) = struct.unpack_from("<IIIBBH", data, off)
            end = data.index(b"\0", stroff + name)
            syms[data[stroff + name:end].decode("latin-1")] = value
    return (64 if is64 else 32, entry, syms)


class Rsp:
    """A minimal gdb remote serial protocol client."""

    def __init__(self, path, timeout=30.0):
        deadline = time.time() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        self.buf = b""

    def send(self, payload):
        data = payload.encode("latin-1")
        pkt = b"$" + data + b"#" + ("%02x" % (sum(data) & 0xFF)).encode()
        self.s.sendall(pkt)

    def _fill(self):
        chunk = self.s.recv(65536)
        if not chunk:
            raise EOFError("gdb stub closed the connection")
        self.buf += chunk

    def recv(self):
        """Next packet payload (acks are skipped and sent)."""
        while True:
            start = self.buf.find(b"$")
            if start >= 0:
                end = self.buf.find(b"#", start)
                if end >= 0 and len(self.buf) >= end + 3:
                    payload = self.buf[start + 1:end]
                    self.buf = self.buf[end + 3:]
                    self.s.sendall(b"+")
                    return payload.decode("latin-1")
            self._fill()

    def cmd(self, payload):
        self.send(payload)
        return self.recv()

    def read(self, addr, n):
        out = b""
        while n > 0:
            k = min(n, 1024)
            r = self.cmd("m%x,%x" % (addr, k))
            if r.startswith("E"):
                raise IOError("cannot read 0x%x" % addr)
            out += bytes.fromhex(r)
            addr += k
            n -= k
        return out

    def write(self, addr, data):
        r = self.cmd("M%x,%x:%s" % (addr, len(data), data.hex()))
        if r != "OK":
            raise IOError("cannot write 0x%x: %s" % (addr, r))


STOPPED = re.compile(rb"^Stopped execution of TB chain before 0x[0-9a-f]+ \[([0-9a-f]+)\]")
REWOUND = re.compile(rb"^cpu_io_recompile: rewound execution of TB to ([0-9a-f]+)")


class LogReader(threading.Thread):
    """Reads QEMU's exec log from a FIFO as it is written (no log file on disk) and keeps the
    PCs of the blocks that ran."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        self.pcs = array.array("Q")

    def run(self):
        pcs = self.pcs
        rest = b""
        with open(self.path, "rb", buffering=0) as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                for line in lines:
                    if line.startswith(b"Trace "):
                        pcs.append(int(line.split(b"/", 2)[1], 16))
                        continue
                    m = STOPPED.match(line) or REWOUND.match(line)
                    if m and pcs and pcs[-1] == int(m.group(1), 16):
                        pcs.pop()  # logged, then not run (or run again as an I/O block)


def drop_watch_repeats(pcs, stops):
    """A store that hit the watchpoint was logged once when it was abandoned and once when it
    ran: drop the first of each such pair."""
    out = array.array("Q")
    k = 0
    for pc in pcs:
        if k < len(stops) and pc == stops[k] and out and out[-1] == pc:
            k += 1
            continue
        out.append(pc)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("elf")
    ap.add_argument("out")
    ap.add_argument("--max", type=int, default=0, help="stop after this many instructions")
    ap.add_argument("--machine", default="none", choices=["none", "virt"])
    ap.add_argument("--console", help="write the program's console output here")
    ap.add_argument("--timeout", type=float, default=600.0)
    a = ap.parse_args()

    xlen, entry, syms = elf_info(a.elf)
    qemu = shutil.which("qemu-system-riscv%d" % xlen)
    if not qemu:
        print("qemu-system-riscv%d not found: skipping" % xlen)
        return 77
    tohost, fromhost = syms.get("tohost"), syms.get("fromhost")
    tmp = tempfile.mkdtemp(prefix="tk-qemu-")
    sock = os.path.join(tmp, "gdb.sock")
    log = os.path.join(tmp, "exec.fifo")
    os.mkfifo(log)
    reader = LogReader(log)
    reader.start()
    if a.machine == "none":
        # RAM from address 0 up to past 0x80000000 (+ room for stacks above the image)
        machine = ["-M", "none", "-m", "2100M" if xlen == 32 else "2304M"]
    else:
        machine = ["-M", "virt", "-m", "256M", "-bios", "none"]
    cmd = [qemu] + machine + [
        "-cpu", "rv%d" % xlen, "-display", "none", "-monitor", "none", "-serial", "none",
        "-nodefaults",
        "-device", "loader,file=%s,cpu-num=0" % os.path.abspath(a.elf),
        "-singlestep", "-d", "exec,nochain,int", "-D", log,
        "-icount", "shift=0,sleep=off",
        "-chardev", "socket,id=g0,path=%s,server=on,wait=off" % sock, "-gdb", "chardev:g0",
        "-S"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    console = bytearray()
    exit_code = None
    capped = False
    stops = []  # pc of every store that hit the watchpoint
    try:
        rsp = Rsp(sock)
        rsp.s.settimeout(30.0)
        rsp.cmd("qSupported")  # the stub attaches on the first queries
        rsp.cmd("?")
        rsp.s.settimeout(1.0)
        if tohost is not None:
            r = rsp.cmd("Z2,%x,8" % tohost)
            if r != "OK":
                raise RuntimeError("watchpoint on tohost refused: %r" % r)
        started = time.time()
        rsp.send("c")
        while True:
            try:
                reply = rsp.recv()
            except socket.timeout:
                if a.max and len(reader.pcs) >= a.max + 16:
                    capped = True
                    break
                if time.time() - started > a.timeout:
                    raise RuntimeError("QEMU did not finish within %.0f s" % a.timeout)
                continue
            if not (reply.startswith("T") or reply.startswith("S")):
                raise RuntimeError("unexpected stop reply %r" % reply)
            if tohost is None:
                raise RuntimeError("stopped without a tohost watchpoint: %r" % reply)
            # QEMU stops before the watched store: step over it without the watchpoint,
            # as gdb does, then look at tohost.
            rsp.s.settimeout(30.0)
            regs = rsp.cmd("g")  # x0..x31 then pc, xlen/4 hex digits each
            w = xlen // 4
            stops.append(int.from_bytes(bytes.fromhex(regs[32 * w:33 * w]), "little"))
            rsp.cmd("z2,%x,8" % tohost)
            rsp.cmd("s")
            rsp.cmd("Z2,%x,8" % tohost)
            rsp.s.settimeout(1.0)
            val = struct.unpack("<Q", rsp.read(tohost, 8))[0]
            if val:
                dev, cmd_, payload = val >> 56, (val >> 48) & 0xFF, val & ((1 << 48) - 1)
                if dev == 0 and cmd_ == 0 and payload & 1:
                    exit_code = payload >> 1
                    break
                rsp.write(tohost, bytes(8))
                if dev == 0 and cmd_ == 0:
                    magic = struct.unpack("<4Q", rsp.read(payload, 32))
                    ret = (1 << 64) - 38
                    if magic[0] == 93:
                        exit_code = magic[1]
                        break
                    if magic[0] == 64:
                        data = rsp.read(magic[2], magic[3]) if magic[3] else b""
                        if magic[1] in (1, 2):
                            console += data
                        ret = magic[3]
                    rsp.write(payload, struct.pack("<Q", ret))
                    rsp.write(fromhost, struct.pack("<Q", 1))
                elif dev == 1 and cmd_ == 1:
                    console.append(payload & 0xFF)
                    rsp.write(fromhost, struct.pack("<Q", (1 << 56) | (1 << 48)))
            rsp.send("c")
    finally:
        try:
            rsp.s.settimeout(5.0)
            rsp.send("k")
        except Exception:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(timeout=10)
    reader.join(timeout=60)
    pcs = drop_watch_repeats(reader.pcs, stops)
    if a.max:
        pcs = pcs[:a.max]
    with open(a.out, "w") as f:
        f.write("".join("%x\n" % pc for pc in pcs))
    if a.console:
        with open(a.console, "wb") as f:
            f.write(bytes(console))
    shutil.rmtree(tmp, ignore_errors=True)
    if exit_code is not None:
        print("qemu: exit code %d after %d instructions" % (exit_code, len(pcs)))
    elif capped:
        print("qemu: stopped at the cap of %d instructions" % a.max)
    else:
        print("qemu: ended without an exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
