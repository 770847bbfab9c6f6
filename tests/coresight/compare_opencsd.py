#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Compare tracekit's ETMv4 packets or instruction ranges with OpenCSD's trc_pkt_lister.

usage: compare_opencsd.py [--trace-format tpiu|tpiu-hsync] DRIVER LISTER SNAPSHOT [RANGES_SNAPSHOT]

--trace-format reads the buffer as a TPIU capture (FSYNCs; with HSYNCs): tracekit's
--trace-format, trc_pkt_lister's -tpiu or -tpiu_hsync.

With RANGES_SNAPSHOT, the ranges are compared with OpenCSD's ranges for that other snapshot
(the same execution traced differently, where OpenCSD's decode is known to be right).

One `trc_pkt_lister -decode` run prints both the packets and the decoded elements; both are
compared.

Packets: same packets, same order, same byte index and the same values for every field
trc_pkt_lister prints (after an error packet, again from tracekit's next A-Sync).
Ranges: the same (trace id, first, last, count) sequence per trace ID.
Exit 0 = identical, 1 = differences (listed), 77 = skipped (tool or data missing)."""
import os
import re
import subprocess
import sys
import tempfile

# OpenCSD names of the A-profile exception types (ETMv4 §6.4.7 table), indexed by type.
EXC_NAMES = ["PE Reset", "Debug Halt", "Call", "Trap", "System Error", "Reserved",
             "Inst Debug", "Data Debug", "Reserved", "Reserved", "Alignment", "Inst Fault",
             "Data Fault", "Reserved", "IRQ", "FIQ"]

OCSD_RANGE = re.compile(r'^Idx:\d+; ID:([0-9a-fA-F]+); OCSD_GEN_TRC_ELEM_INSTR_RANGE\(exec '
                        r'range=0x([0-9a-f]+):\[0x([0-9a-f]+)\] num_i\((\d+)\) last_sz\((\d+)\)')
# Ranges trc_pkt_lister 1.3.3 prints that are wrong, by snapshot: (trace id, first, last, count).
KNOWN_OPENCSD_ERRORS = {
    # ete_ip, packets 281-284: the atom at 281 ends a range with a taken `ret` (indirect, and
    # no return stack: TRCCONFIGR.RS = 0), so the next instruction address is unknown until an
    # address packet. The Exception packet at 282 is followed only by its preferred return
    # address 0x1b37f4. OpenCSD nevertheless resumes at 0x1aa948, the instruction after the
    # `ret`, and reports 9131 instructions executed from there to 0x1b37f4 straight through
    # the ret's and branches in between (0x1aa948 is not a branch target of anything traced).
    # tracekit reports no range there: the exception follows code whose address is unknown.
    "ete_ip": [(0x2, 0x1aa948, 0x1b37f0, 9131)],
    # q_elem, packets 694-702: the Q element at 694 leaves execution at 0x26ffc; the Exception
    # at 700 has preferred return address 0x26ff8, which is *behind* 0x26ffc. OpenCSD walks
    # forward from 0x26ffc looking for 0x26ff8, runs through 9329 "instructions" to the end of
    # the memory image (its next element is ADDR_NACC 0x301c0). No instruction can be known to
    # have executed there; tracekit reports none. Packets 719-727 repeat the pattern (Q to
    # 0x270e0, exception returning to 0x270dc): 9272 instructions up to 0x301bc.
    "q_elem": [(0x1, 0x26ffc, 0x301bc, 9329), (0x1, 0x270e0, 0x301bc, 9272)],
}

ERROR_TYPES = {"I_BAD_SEQUENCE", "I_RESERVED", "I_RESERVED_CFG", "I_INCOMPLETE_EOT"}


def ctx_fields(text, f):
    if "Ctxt: Same" in text:
        f["ctx"] = "same"
        return
    m = re.search(r'Ctxt: (AArch64|AArch32), ?EL(\d), (NS|S);', text)
    if m:
        f["ctx"] = "el=%s %s %s" % (m.group(2), m.group(3).lower(),
                                    "aarch64" if m.group(1) == "AArch64" else "aarch32")
    m = re.search(r'CID=0x([0-9a-fA-F]+)', text)
    if m:
        f["cid"] = int(m.group(1), 16)
    m = re.search(r'VMID=0x([0-9a-fA-F]+)', text)
    if m:
        f["vmid"] = int(m.group(1), 16)


def parse_ocsd(line):
    tab = line.find("\tI_")
    if tab < 0 or not line.startswith("Idx:"):
        return None
    head = line[4:tab].split(";")
    idx, pid = int(head[0]), int(head[1][4:], 16)
    typ, _, rest = line[tab + 1:].partition(" : ")
    typ = typ.replace("I_SCR_", "I_SRC_")  # OpenCSD 1.3.3 misspells I_SRC_ADDR_L_32IS0
    if typ.startswith("I_ATOM"):  # the bulk of the packets: keep this path short
        return (idx, pid, typ, {"atoms": rest[rest.index(";") + 2:].strip()})
    f = {}
    m2 = re.search(r'Addr=0x([0-9A-Fa-f]+)', rest)
    if m2:
        f["addr"] = int(m2.group(1), 16)
    if typ.startswith("I_ADDR_CTXT") or typ == "I_CTXT":
        ctx_fields(rest, f)
    if typ == "I_ADDR_MATCH":
        f["match"] = int(re.search(r'\[(\d+)\]', rest).group(1))
    if typ == "I_TRACE_INFO":
        f["info"] = int(re.search(r'INFO=0x([0-9a-f]+)', rest).group(1), 16)
        m2 = re.search(r'CC_THRESHOLD=0x([0-9a-f]+)', rest)
        if m2:
            f["cc_threshold"] = int(m2.group(1), 16)
    if typ == "I_TIMESTAMP":
        f["ts"] = int(re.search(r'Updated val = 0x([0-9a-f]+)', rest).group(1), 16)
        m2 = re.search(r'CC=0x([0-9a-f]+)', rest)
        if m2:
            f["cc"] = int(m2.group(1), 16)
    if typ.startswith("I_CCNT"):
        f["count"] = int(re.search(r'Count=0x([0-9a-f]+)', rest).group(1), 16)
    if typ == "I_EXCEPT":
        body = rest.split(";", 1)[1]
        f["exc"] = body.split(";")[0].strip()
        f["ret"] = 2 if "Match Prev" in body else (1 if "Ret Addr Follows" in body else 0)
    if typ in ERROR_TYPES:
        # The packet type a bad header was taken for: trc_pkt_lister prints it for
        # I_RESERVED_CFG, I_BAD_SEQUENCE and I_INCOMPLETE_EOT, not for I_RESERVED (tracekit
        # gives it there too, e.g. err=I_Q for a Q header when TRCIDR0 says no Q elements).
        m2 = re.search(r'\[(I_\w+)\]', rest)
        if m2:
            f["err"] = m2.group(1)
    return (idx, pid, typ, f)


def parse_mine(line):
    parts = line.rstrip("\n").split("\t")
    if len(parts) != 3:
        return None
    idx, pid = int(parts[0]), int(parts[1], 16)
    words = parts[2].split(" ")
    typ, f = words[0], {}
    kv = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    if "atoms" in kv:
        f["atoms"] = kv["atoms"]
    if "addr" in kv:
        f["addr"] = int(kv["addr"], 16)
    if typ.startswith("I_ADDR_CTXT") or typ == "I_CTXT":
        if kv.get("ctx") == "same":
            f["ctx"] = "same"
        else:
            rest = parts[2]
            m = re.search(r'el=(\d) (ns|s) (aarch64|aarch32)', rest)
            f["ctx"] = "el=%s %s %s" % m.groups()
        if "cid" in kv:
            f["cid"] = int(kv["cid"], 16)
        if "vmid" in kv:
            f["vmid"] = int(kv["vmid"], 16)
    if "match" in kv:
        f["match"] = int(kv["match"])
    for k in ("info", "cc_threshold", "ts", "cc", "count"):
        if k in kv:
            f[k] = int(kv[k], 16)
    if typ == "I_EXCEPT":
        t = int(kv["type"], 16)
        f["exc"] = EXC_NAMES[t] if t < 16 else "Reserved"
        f["ret"] = int(kv["addr_interp"])
    if "err" in kv:
        f["err"] = kv["err"]
    return (idx, pid, typ, f)


def run(cmd):
    # In a scratch directory: trc_pkt_lister may drop a trc_pkt_lister.ppl log in its cwd.
    with tempfile.TemporaryDirectory() as tmp:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              errors="replace", cwd=tmp).stdout.splitlines()


def by_id(items, key):
    out = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out


def dstream_blocks(ss):
    """True when the snapshot's buffer is a DSTREAM capture (format=dstream_coresight)."""
    try:
        with open(os.path.join(ss, "trace.ini"), errors="replace") as f:
            return any(re.match(r'\s*format\s*=\s*dstream_coresight\s*$', line, re.I)
                       for line in f)
    except OSError:
        return False


def file_index(idx):
    """File offset of OpenCSD's index in a DSTREAM capture. trc_pkt_lister -dstream_format
    reads 504 bytes of each 512-byte block and skips the 8-byte footer, and counts only the
    bytes it hands to the decoder: its Idx is an offset in the trace without footers. tracekit
    gives offsets in the file (what a hex dump of the file shows)."""
    return idx + idx // 504 * 8


def compare_packets(driver, ocsd_lines, ss, tk_args=()):
    theirs = [p for p in map(parse_ocsd, ocsd_lines) if p]
    if dstream_blocks(ss) and not tk_args:
        theirs = [(file_index(p[0]),) + p[1:] for p in theirs]
    mine = [p for p in map(parse_mine, run([driver, "dump", "--snapshot", ss] + list(tk_args)))
            if p]
    if not theirs:
        print("SKIP: trc_pkt_lister printed no ETMv4 packets for %s" % ss)
        return 77
    t_ids, m_ids = by_id(theirs, lambda p: p[1]), by_id(mine, lambda p: p[1])
    if len(t_ids) == 1 and len(m_ids) == 1 and set(t_ids) != set(m_ids):
        # An unformatted buffer carries no ID: trc_pkt_lister labels its packets 0, tracekit
        # with the source's TRCTRACEIDR.
        m_ids = {next(iter(t_ids)): next(iter(m_ids.values()))}
    # With -decode, trc_pkt_lister prints one I_NOT_SYNC line per chunk of unsynchronised bytes
    # it dumps; the packet stream itself has one NOT_SYNC per unsynchronised stretch.
    for pid, tl in t_ids.items():
        t_ids[pid] = [p for i, p in enumerate(tl)
                      if not (p[2] == "I_NOT_SYNC" and i and tl[i - 1][2] == "I_NOT_SYNC")]
    bad = 0
    total = 0
    for pid, tl in sorted(t_ids.items()):
        ml = m_ids.get(pid, [])
        # After an error packet OpenCSD carries on parsing from the next byte while tracekit
        # drops bytes until the next A-Sync (the stream is known to be corrupt there): the
        # comparison resumes at tracekit's next A-Sync, which OpenCSD must list at the same
        # index. Packets of OpenCSD in between are not compared.
        ti = mi = 0
        while ti < len(tl) and mi < len(ml):
            t, m = tl[ti], ml[mi]
            mf = {k: v for k, v in m[3].items() if k in t[3]}
            if (t[0], t[2], t[3]) != (m[0], m[2], mf):
                print("ID 0x%x packet %d differs:\n  opencsd:  %s\n  tracekit: %s" %
                      (pid, ti, t, m))
                bad += 1
                break
            total += 1
            ti += 1
            mi += 1
            if t[2] not in ERROR_TYPES:
                continue
            mi = next((j for j in range(mi, len(ml)) if ml[j][2] == "I_ASYNC"), len(ml))
            if mi == len(ml):
                ti = len(tl)  # no A-Sync after the error: nothing more to compare
                break
            at = ml[mi][0]
            ti = next((j for j in range(ti, len(tl)) if tl[j][0] >= at), len(tl))
            if ti == len(tl) or tl[ti][:3] != (at, pid, "I_ASYNC"):
                print("ID 0x%x: tracekit resumes at the A-Sync at %d, opencsd has %s there" %
                      (pid, at, tl[ti] if ti < len(tl) else "nothing"))
                bad += 1
                break
        else:
            if ti < len(tl):
                print("ID 0x%x: tracekit has %d packets, opencsd %d more from index %d" %
                      (pid, len(ml), len(tl) - ti, tl[ti][0]))
                bad += 1
    print("%s: %d packets on %d trace IDs compared, %d differences" %
          (os.path.basename(ss), total, len(t_ids), bad))
    return 1 if bad else 0


def compare_ranges(driver, ocsd_lines, ss, ref_ss=None, tk_args=()):
    theirs = []
    for line in ocsd_lines:
        if "INSTR_RANGE" not in line:
            continue
        m = OCSD_RANGE.match(line)
        if m:
            pid, a, b, n, sz = (int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16),
                                int(m.group(4)), int(m.group(5)))
            theirs.append((pid, a, b - sz, n))
    for bad_range in KNOWN_OPENCSD_ERRORS.get(os.path.basename(ss.rstrip("/")), []):
        theirs.remove(bad_range)
    mine = []
    for line in run([driver, "decode", "--snapshot", ss, "--format", "ranges"] + list(tk_args)):
        w = line.split()
        if len(w) == 4:
            mine.append((int(w[0], 16), int(w[1], 16), int(w[2], 16), int(w[3])))
    t_ids, m_ids = by_id(theirs, lambda r: r[0]), by_id(mine, lambda r: r[0])
    bad = 0
    for pid in sorted(set(t_ids) | set(m_ids)):
        tl, ml = t_ids.get(pid, []), m_ids.get(pid, [])
        for i in range(min(len(tl), len(ml))):
            if tl[i] != ml[i]:
                print("ID 0x%x range %d differs: opencsd %s tracekit %s" %
                      (pid, i, [hex(x) for x in tl[i]], [hex(x) for x in ml[i]]))
                bad += 1
                break
        if len(tl) != len(ml):
            print("ID 0x%x: opencsd %d ranges, tracekit %d" % (pid, len(tl), len(ml)))
            bad += 1
    print("%s: %d ranges (opencsd%s) vs %d (tracekit), %d differences" %
          (os.path.basename(ss), len(theirs), " on " + os.path.basename(ref_ss) if ref_ss else "",
           len(mine), bad))
    return 1 if bad else 0


def main():
    args = sys.argv[1:]
    tk_args, fmt = [], []
    if args[:1] == ["--trace-format"]:
        tk_args = args[:2]
        fmt = {"tpiu": ["-tpiu"], "tpiu-hsync": ["-tpiu_hsync"]}[args[1]]
        args = args[2:]
    driver, lister, ss = (os.path.abspath(a) for a in args[:3])
    ref_ss = os.path.abspath(args[3]) if len(args) > 3 else None
    if not os.path.exists(lister):
        print("SKIP: %s not installed" % lister)
        return 77
    if not os.path.isdir(ss):
        print("SKIP: snapshot %s not found" % ss)
        return 77
    # A DSTREAM capture needs -dstream_format: without it trc_pkt_lister reads the block
    # footers as trace and stops at the first (byte 516 of a55-test-tpiu).
    if not fmt and dstream_blocks(ss):
        fmt = ["-dstream_format"]
    lines = run([lister, "-ss_dir", ss, "-decode", "-logstdout"] + fmt)
    if any("Failed to create decoder" in line for line in lines):
        # e.g. armv8_1m_branches: OpenCSD 1.3.3 does not know the Cortex-M55 core.
        print("SKIP: trc_pkt_lister cannot decode %s:" % ss)
        print("\n".join(line for line in lines if "ss2_dcdtree" in line))
        return 77
    r1 = compare_packets(driver, lines, ss, tk_args)
    if r1 == 77:
        return 77
    if ref_ss:
        lines = run([lister, "-ss_dir", ref_ss, "-decode_only", "-logstdout"])
    r2 = compare_ranges(driver, lines, ss, ref_ss, tk_args)
    return 1 if (r1 or r2) else 0


if __name__ == "__main__":
    sys.exit(main())
