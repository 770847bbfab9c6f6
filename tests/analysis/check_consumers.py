#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Feed tracekit's analysis outputs to the tools that read them, and check each file's
grammar and internal consistency.

usage: check_consumers.py CHECK PREFIX [ELF [MAX_MISMATCH%]]
  CHECK is one of genhtml, callgrind, llvm-sample, folded, json, autofdo, bolt, perf2bolt;
  PREFIX.{info,callgrind,llvm-sample,folded,json,autofdo,bolt} are the files; perf2bolt
  also needs the program's ELF.
Exit 0 on success, 1 on failure, 77 when the tool a check needs is not installed.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def need(tool):
    path = shutil.which(tool)
    if not path:
        print("SKIP: %s is not installed" % tool)
        sys.exit(SKIP)
    return path


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        fail("%s exited %d:\n%s" % (" ".join(cmd), p.returncode, p.stdout[-4000:]))
    return p.stdout


def json_total(prefix):
    """Instructions the profile attributed to known code (bad ranges are not per-insn)."""
    path = prefix + ".json"
    if not os.path.exists(path):
        return None
    with open(path) as f:
        j = json.load(f)
    return sum(fn["self"] for fn in j["functions"])


def check_genhtml(prefix):
    genhtml = need("genhtml")
    info = prefix + ".info"
    records = 0
    with open(info) as f:
        da = lh = lf = 0
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("DA:"):
                ln, cnt = line[3:].split(",")
                da += 1
                lh += int(cnt) > 0
            elif line.startswith("LF:"):
                lf = int(line[3:])
                if lf != da:
                    fail("%s:%d: LF %d but %d DA lines" % (info, n, lf, da))
            elif line.startswith("LH:"):
                if int(line[3:]) != lh:
                    fail("%s:%d: LH %s but %d lines hit" % (info, n, line[3:], lh))
            elif line == "end_of_record":
                records += 1
                da = lh = 0
            elif not re.match(r"^(TN|SF|FN|FNDA|FNF|FNH|BRDA|BRF|BRH):", line):
                fail("%s:%d: unknown record %r" % (info, n, line))
    if not records:
        fail("no records in " + info)
    with tempfile.TemporaryDirectory() as out:
        log = run([genhtml, "--branch-coverage", "-o", out, info])
        if not os.path.exists(os.path.join(out, "index.html")):
            fail("genhtml wrote no index.html:\n" + log)
    print("genhtml rendered %d source files" % records)


def check_callgrind(prefix):
    tool = need("callgrind_annotate")
    path = prefix + ".callgrind"
    summary = None
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                summary = int(line.split()[1])
    if summary is None:
        fail("no summary line in " + path)
    for args in ([], ["--inclusive=yes"]):
        out = run([tool] + args + [path])
        m = re.search(r"^\s*([\d,]+)(?: \([^)]*\))?\s+(?:\(100\.0%\)\s+)?PROGRAM TOTALS", out, re.M)
        if not m:
            fail("callgrind_annotate printed no PROGRAM TOTALS:\n" + out[-3000:])
        total = int(m.group(1).replace(",", ""))
        if total != summary:
            fail("callgrind_annotate total %d != summary %d" % (total, summary))
    expect = json_total(prefix)
    if expect is not None and expect != summary:
        fail("callgrind summary %d != JSON self sum %d" % (summary, expect))
    print("callgrind_annotate read %d Ir" % summary)


def find_llvm_tool(name):
    """NAME, /usr/lib/llvm-<version>/bin/NAME or NAME-<version>, newest first. The real
    name matters: perf2bolt is llvm-bolt looking at how it was called."""
    tool = shutil.which(name)
    for v in range(25, 10, -1):
        if tool:
            break
        path = "/usr/lib/llvm-%d/bin/%s" % (v, name)
        tool = path if os.access(path, os.X_OK) else shutil.which("%s-%d" % (name, v))
    if not tool:
        print("SKIP: %s is not installed" % name)
        sys.exit(SKIP)
    return tool


def check_llvm_sample(prefix):
    tool = find_llvm_tool("llvm-profdata")
    path = prefix + ".llvm-sample"
    heads = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith(" "):
                if not re.match(r"^ \d+(\.\d+)?: \d+( [^: ]+:\d+)*$", line):
                    fail("%s:%d: bad body line %r" % (path, n, line))
            else:
                m = re.match(r"^([^: ]+):(\d+):(\d+)$", line)
                if not m:
                    fail("%s:%d: bad header %r" % (path, n, line))
                heads[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    if not heads:
        fail("no functions in " + path)
    out = run([tool, "show", "--sample", "--all-functions", path])
    for name, (total, head) in heads.items():
        # llvm-profdata prints "Function: NAME: TOTAL, HEAD, N sampled lines".
        if not re.search(r"Function: %s: %d, %d," % (re.escape(name), total, head), out):
            fail("llvm-profdata does not show %s: %d, %d:\n%s" % (name, total, head, out[-3000:]))
    with tempfile.TemporaryDirectory() as d:
        run([tool, "merge", "--sample", "--binary", "-o", os.path.join(d, "p.prof"), path])
    print("llvm-profdata read %d functions" % len(heads))


def check_folded(prefix):
    path = prefix + ".folded"
    total = 0
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.match(r"^([^; \n]+(?:;[^; \n]+)*) (\d+)\n$", line)
            if not m:
                fail("%s:%d: not FlameGraph folded format: %r" % (path, n, line))
            total += int(m.group(2))
    expect = json_total(prefix)
    if expect is not None and expect != total:
        fail("folded stacks sum to %d, JSON self sum %d" % (total, expect))
    print("folded stacks: %d instructions" % total)


def check_json(prefix):
    with open(prefix + ".json") as f:
        j = json.load(f)
    t = j["totals"]
    self_sum = sum(fn["self"] for fn in j["functions"])
    if self_sum != t["instructions"]:
        fail("functions' self sum %d != total %d" % (self_sum, t["instructions"]))
    for fn in j["functions"]:
        if fn["inclusive"] < fn["self"] and fn["name"] != "[unknown]":
            fail("%s: inclusive %d < self %d" % (fn["name"], fn["inclusive"], fn["self"]))
    block_sum = sum(b["count"] * b["ninsn"] for b in j["blocks"])
    if block_sum != self_sum - 0 and t["bad_ranges"] == 0:
        fail("blocks cover %d instructions, functions %d" % (block_sum, self_sum))
    print("json: %d instructions, %d functions" % (t["instructions"], len(j["functions"])))


def check_autofdo(prefix):
    path = prefix + ".autofdo"
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f]
    i = 0
    for sep in ("-", "->"):
        if i >= len(lines) or not lines[i].isdigit():
            fail("%s:%d: expected a count" % (path, i + 1))
        n = int(lines[i])
        i += 1
        pat = re.compile(r"^[0-9a-f]+%s[0-9a-f]+:\d+$" % re.escape(sep))
        for k in range(n):
            if i >= len(lines) or not pat.match(lines[i]):
                fail("%s:%d: bad entry %r" % (path, i + 1, lines[i] if i < len(lines) else ""))
            i += 1
    if i != len(lines):
        fail("%s:%d: trailing data" % (path, i + 1))
    print("autofdo unsymbolized profile: %d lines" % len(lines))


def check_bolt(prefix):
    path = prefix + ".bolt"
    n = 0
    with open(path) as f:
        for k, line in enumerate(f, 1):
            if not re.match(r"^(B [0-9a-f]+ [0-9a-f]+ \d+ \d+|[Ff] [0-9a-f]+ [0-9a-f]+ \d+)\n$", line):
                fail("%s:%d: not BOLT pre-aggregated format: %r" % (path, k, line))
            n += 1
    if not n:
        fail("empty " + path)
    print("bolt pre-aggregated profile: %d records" % n)


def check_perf2bolt(prefix, elf, max_mismatch="100"):
    """BOLT's profile aggregator reads every record of the pre-aggregated file. BOLT cannot
    disassemble every RISC-V instruction and gives hand-written assembly without symbol
    sizes no CFG, so traces there "mismatch"; MAX_MISMATCH (percent) bounds the share of
    such traces for compiler-generated programs."""
    tool = find_llvm_tool("perf2bolt")
    path = prefix + ".bolt"
    with open(path) as f:
        records = sum(1 for _ in f)
    with tempfile.TemporaryDirectory() as d:
        out = run([tool, "--pa", "-p", path, "-o", os.path.join(d, "p.fdata"), elf])
        m = re.search(r"read (\d+) aggregated LBR entries", out)
        if not m or int(m.group(1)) != records:
            fail("perf2bolt did not read the %d records:\n%s" % (records, out[-3000:]))
        m = re.search(r"wrote (\d+) objects", out)
        if not m or int(m.group(1)) == 0:
            fail("perf2bolt wrote no profile:\n" + out[-3000:])
        m = re.search(r"traces mismatching disassembled function contents: \d+ \(([\d.]+)%\)", out)
        share = float(m.group(1)) if m else 0.0
        if share > float(max_mismatch):
            fail("perf2bolt: %.1f%% of the traces do not match the code:\n%s" % (share, out))
    print("perf2bolt read %d records, %.1f%% of the traces outside its CFGs" % (records, share))


CHECKS = {
    "genhtml": check_genhtml,
    "callgrind": check_callgrind,
    "llvm-sample": check_llvm_sample,
    "folded": check_folded,
    "json": check_json,
    "autofdo": check_autofdo,
    "bolt": check_bolt,
    "perf2bolt": check_perf2bolt,
}

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4, 5) or sys.argv[1] not in CHECKS:
        print(__doc__)
        sys.exit(2)
    CHECKS[sys.argv[1]](*sys.argv[2:])
