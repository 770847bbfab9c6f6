#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""`tracekit dump` and damaged support packets (F3SF3) in real traces (etrace-ref vectors).

A support packet states the run-time options the rest of the trace is read with; dump now
applies one only if the encoder can have sent it (tk_te_support_check, the decoder's rules).
For each damage below the listing must be the clean one, except the damaged packet's line,
followed by a '! not applied' note at its offset; stderr names the offset, packet and reason;
the exit status is 1 (damaged input). Damages:
  - the first support packet with encoder_mode 1 (the only mode defined is 0);
  - the first support packet announcing branch prediction / the jump target cache on an encoder
    whose .scf has no predictor / cache (bpred_size_p / cache_size_p 0);
  - with --fixed-options, the first support packet announcing implicit exceptions: without the
    option the packet is believed (a trace's first support packet may set the options) and the
    trap packet after it is read without its address, a different listing;
  - a packet after the sync turned into a support packet announcing implicit exceptions (format
    and subformat bits damaged): options cannot change while the flow is followed.
Packets are `(msg_type << 5) | length` headers then the payload (raw framing); a support
payload starts format(2) subformat(2) ienable(1) encoder_mode(1) qual_status(2) ioptions(5)
(payload.adoc F3SF3, LSB first).
usage: dump_support.py TRACEKIT TESTDATA"""
import os
import re
import subprocess
import sys
import tempfile

T, DATA = sys.argv[1], sys.argv[2]
REF = os.path.join(DATA, "etrace-ref")
if not os.path.isdir(REF):
    print("SKIP: %s not found" % REF)
    sys.exit(77)

IMPLICIT_EXCEPT, BRANCH_PREDICTION, JUMP_TARGET_CACHE = 0x2, 0x10, 0x8
checked = 0


def packets(raw):
    """(offset, header, payload) of every packet of a raw stream."""
    out, i = [], 0
    while i < len(raw):
        n = raw[i] & 0x1F
        out.append((i, raw[i], raw[i + 1:i + 1 + n]))
        i += 1 + n
    return out


def join(pkts):
    return b"".join(bytes([h]) + p for _, h, p in pkts)


def damaged(payload, set_bits):
    """A support payload with bits set (bit 5: encoder_mode, 8..12: ioptions)."""
    v = int.from_bytes(payload, "little") | set_bits
    return v.to_bytes(max(len(payload), (v.bit_length() + 7) // 8), "little")


def dump(scf, path, *extra):
    r = subprocess.run([T, "dump", "--scf", scf, "--ucf", ucf, *extra, path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout.splitlines(), r.stderr


def body(line):
    """A listing line without its byte offset (damage may change the packets' lengths)."""
    return line.split(None, 1)[1]


def check(name, scf, raw, at, extra=(), expect_reason=None):
    """raw: the clean stream's packets with packet number `at` replaced."""
    global checked
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "damaged.te_inst_raw")
        with open(path, "wb") as f:
            f.write(join(raw))
        rc, out, err = dump(scf, path, *extra)
    off = raw[at][0]
    if rc != 1:
        sys.exit("%s: exit status %d, expected 1\n%s" % (name, rc, err))
    note = [i for i, l in enumerate(out) if re.match(r"^\d+\s+! not applied: ", l)]
    if len(note) != 1 or not out[note[0]].startswith("%-9d ! not applied" % off) or \
            note[0] != at + 1:
        sys.exit("%s: expected one note after packet %d (offset %d):\n%s" %
                 (name, at, off, "\n".join(out[:at + 3])))
    if expect_reason and expect_reason not in out[note[0]]:
        sys.exit("%s: reason '%s' not in: %s" % (name, expect_reason, out[note[0]]))
    want = "offset %d (packet %d): support packet not applied" % (off, at)
    if want not in err:
        sys.exit("%s: stderr lacks '%s':\n%s" % (name, want, err))
    got = [body(l) for i, l in enumerate(out) if i not in (at, at + 1)]
    ref = [body(l) for i, l in enumerate(clean_out) if i != at]
    if got != ref:
        diff = next(i for i in range(min(len(got), len(ref)) + 1)
                    if i >= len(got) or i >= len(ref) or got[i] != ref[i])
        sys.exit("%s: the listing after the refused packet differs from the clean one at "
                 "line %d:\n  damaged: %s\n  clean:   %s" %
                 (name, diff, got[diff] if diff < len(got) else "(end)",
                  ref[diff] if diff < len(ref) else "(end)"))
    checked += 1


def scf_value(scf, key):
    for line in open(scf):
        m = re.match(r"\s*%s\s*=\s*(\w+)" % key, line)
        if m:
            return int(m.group(1), 0)
    return 0


for prog in sorted(os.listdir(REF)):
    pdir = os.path.join(REF, prog)
    if not os.path.isdir(pdir):
        continue
    for setting in sorted(os.listdir(pdir)):
        d = os.path.join(pdir, setting)
        raws = [f for f in os.listdir(d) if f.endswith(".te_inst_raw")] if os.path.isdir(d) else []
        scfs = [f for f in os.listdir(d) if f.endswith(".scf")] if raws else []
        if not raws or not scfs:
            continue
        scf, rawpath = os.path.join(d, scfs[0]), os.path.join(d, raws[0])
        # the options the trace starts with (the support packet that opens it states them)
        ucf = os.path.join(d, raws[0].replace(".te_inst_raw", ".decoder.ucf"))
        clean = packets(open(rawpath, "rb").read())
        rc, clean_out, err = dump(scf, rawpath)
        if rc != 0 or len(clean_out) != len(clean):
            sys.exit("%s/%s: clean dump failed (%d): %s" % (prog, setting, rc, err))
        if clean[0][2][0] & 0xF != 0xF or "F3.3 support" not in clean_out[0]:
            sys.exit("%s/%s: does not start with a support packet" % (prog, setting))
        name = "%s/%s" % (prog, setting)
        h = clean[0][1] & ~0x1F

        def first(payload):
            return [(0, h | len(payload), payload)] + clean[1:]

        s0 = clean[0][2]
        check(name + " encoder_mode 1", scf, first(damaged(s0, 1 << 5)), 0,
              expect_reason="encoder_mode")
        if scf_value(scf, "bpred_size_p") == 0:
            check(name + " branch prediction", scf, first(damaged(s0, BRANCH_PREDICTION << 8)), 0,
                  expect_reason="bpred_size_p is 0")
        if scf_value(scf, "cache_size_p") == 0:
            check(name + " jump target cache", scf, first(damaged(s0, JUMP_TARGET_CACHE << 8)), 0,
                  expect_reason="cache_size_p is 0")
        # a 2-byte packet after the sync (packet 1) damaged into a support packet
        k = next((i for i in range(2, len(clean) - 1) if len(clean[i][2]) == 2), None)
        if k is not None:
            p = damaged(s0, IMPLICIT_EXCEPT << 8)
            raw = clean[:k] + [(clean[k][0], clean[k][1], p)] + clean[k + 1:]
            check(name + " mid-flow", scf, raw, k, expect_reason="while the flow is being followed")
        # implicit exceptions announced by the first packet: matters where a trap has thaddr
        if any("F3.1 trap" in l and "thaddr=1" in l for l in clean_out):
            raw = first(damaged(s0, IMPLICIT_EXCEPT << 8))
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "believed.te_inst_raw")
                with open(path, "wb") as f:
                    f.write(join(raw))
                _, out, _ = dump(scf, path)
            if [body(l) for l in out[1:]] == [body(l) for l in clean_out[1:]]:
                sys.exit("%s: implicit exceptions believed but the listing did not change" % name)
            check(name + " --fixed-options", scf, raw, 0, extra=("--fixed-options",),
                  expect_reason="--fixed-options")

if checked < 50:
    sys.exit("only %d damaged support packets checked" % checked)
print("dump: %d damaged support packets in the etrace-ref vectors refused with a note, every "
      "other line as in the clean listing" % checked)
