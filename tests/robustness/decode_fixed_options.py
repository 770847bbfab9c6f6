#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""`tracekit decode --fixed-options` (TK_TE_DEC_FIXED_OPTIONS) on the etrace-ref vectors.

For every vector whose trace has a trap packet with an address (thaddr=1), the first support
packet is damaged to announce implicit exceptions (payload.adoc F3SF3: ioptions bit 1; then a
trap's address is not sent, so the rest of the trace is read differently):
  - without the option the packet is believed: the decode differs from the clean one or fails;
  - with --fixed-options (the .ucf's options are the encoder's) the packet is reported at
    offset 0, packet 0, the exit status is 1 and every decoded PC equals the clean decode's;
  - the clean trace with --fixed-options decodes as without it, exit status 0, nothing on
    stderr;
and --fixed-options without --ucf or --regs is a usage error (status 2).
usage: decode_fixed_options.py TRACEKIT TESTDATA"""
import os
import subprocess
import sys
import tempfile

T, DATA = sys.argv[1], sys.argv[2]
REF = os.path.join(DATA, "etrace-ref")
if not os.path.isdir(REF):
    print("SKIP: %s not found" % REF)
    sys.exit(77)
IMPLICIT_EXCEPT = 0x2


def run(args):
    r = subprocess.run([T, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout, r.stderr.decode()


checked = 0
with tempfile.TemporaryDirectory() as tmp:
    for prog in sorted(os.listdir(REF)):
        pdir = os.path.join(REF, prog)
        if not os.path.isdir(pdir):
            continue
        for setting in sorted(os.listdir(pdir)):
            d = os.path.join(pdir, setting)
            raws = [f for f in os.listdir(d) if f.endswith(".te_inst_raw")] \
                if os.path.isdir(d) else []
            if not raws:
                continue
            base = raws[0][:-len(".te_inst_raw")]
            scf, ucf = os.path.join(d, base + ".scf"), os.path.join(d, base + ".decoder.ucf")
            rawpath = os.path.join(d, raws[0])
            if not os.path.exists(scf) or not os.path.exists(ucf):
                continue
            name = "%s/%s" % (prog, setting)
            rc, listing, err = run(["dump", "--scf", scf, "--ucf", ucf, rawpath])
            if rc != 0:
                sys.exit("%s: clean dump failed (%d): %s" % (name, rc, err))
            if b"F3.1 trap" not in listing or b"thaddr=1" not in listing:
                continue
            rc, clean, err = run(["decode", "--scf", scf, "--ucf", ucf, rawpath])
            if rc != 0 or not clean:
                sys.exit("%s: clean decode failed (%d): %s" % (name, rc, err))
            rc, fixed, err = run(["decode", "--fixed-options", "--scf", scf, "--ucf", ucf,
                                  rawpath])
            if rc != 0 or err or fixed != clean:
                sys.exit("%s: clean trace with --fixed-options: status %d, %s, %s" %
                         (name, rc, "same output" if fixed == clean else "other output", err))
            raw = bytearray(open(rawpath, "rb").read())
            n = raw[0] & 0x1F
            payload = int.from_bytes(raw[1:1 + n], "little")
            if payload & 0xF != 0xF:
                sys.exit("%s: does not start with a support packet" % name)
            v = payload | (IMPLICIT_EXCEPT << 8)
            p = v.to_bytes(max(n, (v.bit_length() + 7) // 8), "little")
            bad = bytes([(raw[0] & ~0x1F) | len(p)]) + p + bytes(raw[1 + n:])
            path = os.path.join(tmp, "damaged.te_inst_raw")
            with open(path, "wb") as f:
                f.write(bad)
            rc, believed, err = run(["decode", "--scf", scf, "--ucf", ucf, path])
            if rc == 0 and believed == clean:
                sys.exit("%s: the damaged support packet did not change the decode" % name)
            rc, fixed, err = run(["decode", "--fixed-options", "--scf", scf, "--ucf", ucf, path])
            if rc != 1:
                sys.exit("%s: damaged, --fixed-options: exit status %d, expected 1\n%s" %
                         (name, rc, err))
            if "offset 0 (packet 0)" not in err:
                sys.exit("%s: damaged, --fixed-options: the support packet is not reported:\n%s"
                         % (name, err))
            if fixed != clean:
                sys.exit("%s: damaged, --fixed-options: the decode differs from the clean one"
                         % name)
            checked += 1
    rc, _, err = run(["decode", "--fixed-options", "--scf", scf, rawpath])
    if rc != 2 or "--fixed-options" not in err:
        sys.exit("--fixed-options without --ucf: status %d, %s" % (rc, err))
if checked < 1:
    sys.exit("only %d vectors checked" % checked)
print("decode --fixed-options: %d damaged support packets reported and not applied, the "
      "decode equal to the clean one; believed without the option" % checked)
