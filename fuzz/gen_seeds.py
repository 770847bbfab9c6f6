#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Extract seed corpora for the fuzz targets from the shared test data.

usage: gen_seeds.py TESTDATA OUTDIR

Writes OUTDIR/<target>/seed-*: nothing is copied into the repository. Each seed starts with
the selector bytes its target reads first (see the target's header comment), so the seeds
exercise the parameter sets, framings and snapshots that the real data was made with.
Seeds are kept small (a few KiB) so that libFuzzer's default -max_len stays useful; the
target that needs whole files (fuzz_elf) gets them whole.
"""
import glob
import gzip
import hashlib
import os
import re
import sys

# Selector of fuzz_common.h tk_fuzz_params_fixed for each golden-vector setting.
SETTING_SEL = {"itype3_basic": 0, "itype4_basic": 1, "itype3_debug": 2, "itype4_debug": 3}
# fuzz_cs_snapshot.c snapshot_names, in order.
CS_SNAPSHOTS = ["juno-ret-stck", "a55-test-tpiu", "armv8_1m_branches", "init-short-addr",
                "a57_single_step"]
MAX_SEED = 4096


def put(outdir, target, data):
    d = os.path.join(outdir, target)
    os.makedirs(d, exist_ok=True)
    name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read()


def head_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[:n])


def raw_packets(raw):
    """Split a reference .te_inst_raw stream into (header, payload) pairs."""
    off = 0
    while off < len(raw):
        n = raw[off] & 0x1F
        if n == 0 or off + 1 + n > len(raw):
            return
        yield raw[off], raw[off + 1:off + 1 + n]
        off += 1 + n


def encap(payload, srcid_bits, ts_bytes, type_bits, srcid, extend, ts, typ):
    """One packet of the general encapsulation (encap.h layout), flow 2."""
    tbits = 8 * ts_bytes if extend else 0
    bits = srcid_bits % 8 + type_bits + 8 * len(payload)
    length = (bits + 7) // 8
    total = 1 + srcid_bits // 8 + tbits // 8 + length
    value, pos = 0, 0
    for v, w in [(srcid, srcid_bits), (ts, tbits), (typ, type_bits)]:
        value |= (v & ((1 << w) - 1)) << pos
        pos += w
    for b in payload:
        value |= b << pos
        pos += 8
    body = value.to_bytes(total - 1, "little")
    return bytes([length | (2 << 5) | (0x80 if extend else 0)]) + body


def encap_selector(srcid_bits, ts_bytes, type_bits, demux):
    """The two bytes fuzz_encap.c decodes into this configuration."""
    for w in range(256):
        for w2 in range(256):
            if (w % 17 == srcid_bits and (w >> 5) + (w2 & 1) == ts_bytes
                    and ((w2 >> 1) % 9) == type_bits and ((w2 >> 5) & 1) == 0
                    and ((w2 >> 6) & 1) == demux):
                return bytes([w, w2])
    raise ValueError("no selector")


def etrace_seeds(testdata, out):
    for raw_path in sorted(glob.glob(os.path.join(testdata, "etrace-ref/*/*/*.te_inst_raw"))):
        setting = os.path.basename(os.path.dirname(raw_path))
        sel = bytes([SETTING_SEL.get(setting, 0)])
        raw = read(raw_path)
        put(out, "fuzz_te_raw", sel + raw[:MAX_SEED])
        if os.path.basename(raw_path).startswith("dhrystone."):
            # fuzz_te_decoder decodes against dhrystone: its traces, cut at packet ends
            cut, off = 0, 0
            for _, payload in raw_packets(raw):
                if off + 1 + len(payload) > MAX_SEED:
                    break
                off += 1 + len(payload)
                cut = off
            put(out, "fuzz_te_decoder", sel + raw[:cut])
            # fuzz_te_parallel: the same, after its configuration byte (threads, block
            # events, piece size: see the target), small pieces so that there are seams
            for conf in (0x01 | 0x04, 0x02 | 0x08, 0x01 | 0x04 | 0x10, 0x00 | 0x04):
                put(out, "fuzz_te_parallel", sel + bytes([conf]) + raw[:cut])
            # fuzz_te_encap: the same packets as srcID 3 of an 8-bit srcID encapsulation,
            # a sync sequence (32 null.idle, one null.alignment) every 16 packets
            enc, n = bytearray(), 0
            for _, payload in raw_packets(raw[:cut]):
                if n % 16 == 0:
                    enc += bytes(32) + bytes([0x80])
                enc += bytes([0x40 | len(payload), 3]) + payload
                n += 1
            put(out, "fuzz_te_encap", b"srcid-bits=8\n" + bytes([3]) + sel + bytes(enc))
            put(out, "fuzz_te_encap", b"srcid-bits=8,timestamp-bytes=2\n" + bytes([3]) + sel +
                bytes(enc[:len(enc) // 2]))
            # and slices starting at format 3 start packets further into the trace
            starts, off = [], 0
            for _, payload in raw_packets(raw):
                if payload[0] & 0x0F == 0x03:
                    starts.append(off)
                off += 1 + len(payload)
            for s in starts[len(starts) // 9::max(1, len(starts) // 9)][:8]:
                end = s
                for _, payload in raw_packets(raw[s:s + MAX_SEED]):
                    end += 1 + len(payload)
                put(out, "fuzz_te_decoder", sel + raw[s:end])
        pkts = list(raw_packets(raw))
        seen = set()
        for _, payload in pkts:
            # one seed per distinct format/subformat/length: enough variety, small corpus
            key = (payload[0] & 0x0F, len(payload))
            if key not in seen:
                seen.add(key)
                put(out, "fuzz_te_packet", sel + payload)
        # general encapsulation, byte-aligned and unaligned field layouts, with a sync run
        for sb, tb, yb, demux in [(8, 0, 0, 0), (16, 2, 0, 1), (5, 1, 3, 0), (0, 8, 1, 1)]:
            stream = bytearray(encap_selector(sb, tb, yb, demux) + sel)
            stream += bytes(31 + tb + sb // 8) + b"\x80"  # N null.idle + null.alignment
            for i, (_, payload) in enumerate(pkts[:150]):
                extend = tb > 0 and i % 3 == 0
                stream += encap(payload, sb, tb, yb, i & 3, extend, i * 977, i & 1)
            put(out, "fuzz_encap", bytes(stream[:MAX_SEED]))
        base = raw_path[:-len(".te_inst_raw")]
        csv = read(base + ".te_inst.gz")
        put(out, "fuzz_te_csv", sel + head_lines(csv, 60))
        enc = read(base + ".encoder_input.gz")
        put(out, "fuzz_ingress_csv", head_lines(enc, 80))
        if setting == "itype3_basic":
            put(out, "fuzz_ingress_csv", gzip.compress(head_lines(enc, 400)))
        put(out, "fuzz_params", b"\x00" + read(base + ".scf"))
        put(out, "fuzz_params", b"\x01" + read(base + ".decoder.ucf"))
    for spike in sorted(glob.glob(os.path.join(testdata, "etrace-ref/*/*.spike_pc_trace.gz"))):
        text = read(spike)
        put(out, "fuzz_spike_csv", b"\x00\x01" + head_lines(text, 120))
        put(out, "fuzz_spike_csv", b"\x08\x02" + head_lines(text, 40))


def elf_seeds(testdata, out):
    for elf in sorted(glob.glob(os.path.join(testdata, "riscv-ref/*.riscv"))):
        data = read(elf)
        if len(data) <= 256 * 1024:
            put(out, "fuzz_elf", data)


def ini_values(path):
    vals, section = {}, ""
    for line in read(path).decode("latin-1").splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line:
            k, v = line.split("=", 1)
            vals[(section, re.sub(r"\(.*\)", "", k.strip()))] = v.strip()
    return vals



def etm4_headers(d):
    """fuzz_etm4's input header for each ETMv4 source of snapshot d: registers, trace ID,
    M-profile flag, the first memory dump's address and (up to 1020 bytes of) its code."""
    heads = []
    for ini in glob.glob(os.path.join(d, "*.ini")):
        v = ini_values(ini)
        if v.get(("device", "class")) != "trace_source":
            continue
        regs = [int(v.get(("regs", r), "0"), 0) for r in
                ["TRCCONFIGR", "TRCIDR0", "TRCIDR1", "TRCIDR2", "TRCIDR8"]]
        tid = int(v.get(("regs", "TRCTRACEIDR"), "0"), 0) & 0x7F
        cortex_m = 0
        code, addr = b"", 0
        for cini in glob.glob(os.path.join(d, "*.ini")):
            c = ini_values(cini)
            if c.get(("device", "class")) != "core":
                continue
            cortex_m = 0x80 if "-M" in c.get(("device", "type"), "") else 0
            dumps = sorted(s for (s, k) in c if s.startswith("dump") and k == "file")
            path = os.path.join(d, c[(dumps[0], "file")]) if dumps else ""
            if os.path.isfile(path):  # some snapshots name dumps they lack
                code = read(path)
                addr = int(c.get((dumps[0], "address"), "0"), 0)
        code = code[:255 * 4]
        seed = b"".join(r.to_bytes(4, "little") for r in regs)
        seed += bytes([tid | cortex_m]) + (addr & 0xFFFFFFFF).to_bytes(4, "little")
        seed += bytes([0, len(code) // 4]) + code[:len(code) // 4 * 4]
        heads.append(seed)
    return heads

def coresight_seeds(testdata, out):
    snaps = os.path.join(testdata, "opencsd/snapshots")
    for ini in sorted(glob.glob(os.path.join(snaps, "*/*.ini")))[:60]:
        put(out, "fuzz_cs_ini", read(ini)[:MAX_SEED])
    for i, name in enumerate(CS_SNAPSHOTS):
        d = os.path.join(snaps, name)
        trace = ini_values(os.path.join(d, "trace.ini"))
        files = [v for (s, k), v in trace.items() if k == "file"]
        fmt = [v for (s, k), v in trace.items() if k == "format"]
        if not files:
            continue
        buf = read(os.path.join(d, files[0]))
        put(out, "fuzz_cs_snapshot", bytes([i]) + buf[:MAX_SEED])
        if fmt and fmt[0] != "source_data":
            flags = 1 if fmt[0] == "dstream_coresight" else 0
            put(out, "fuzz_cs_deformat", bytes([flags, 15]) + buf[:MAX_SEED])
            put(out, "fuzz_cs_deformat", bytes([flags, 255]) + buf[:MAX_SEED])
            if flags == 0:  # formatter frames, one seed per source: its trace ID and code
                for seed in etm4_headers(d):
                    put(out, "fuzz_etm4_parallel", seed + bytes([1, 1, 0, 1]) + buf[:MAX_SEED])
            continue
        # unformatted: the buffer is one ETMv4 stream; give fuzz_etm4 its registers and code
        for seed in etm4_headers(d):
            put(out, "fuzz_etm4", seed + buf[:MAX_SEED])
            # fuzz_etm4_parallel: raw framing, 256-byte pieces, 2 threads
            put(out, "fuzz_etm4_parallel", seed + bytes([0, 0, 192, 1]) + buf[:MAX_SEED])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    testdata, out = sys.argv[1], sys.argv[2]
    if not os.path.isdir(os.path.join(testdata, "etrace-ref")):
        sys.exit("gen_seeds.py: no test data at %s" % testdata)
    etrace_seeds(testdata, out)
    elf_seeds(testdata, out)
    coresight_seeds(testdata, out)
    for t in sorted(os.listdir(out)):
        print("%-20s %4d seeds" % (t, len(os.listdir(os.path.join(out, t)))))


if __name__ == "__main__":
    main()
