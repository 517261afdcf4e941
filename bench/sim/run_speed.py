#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Simulator speed: how many clocks and frames per second matcha-sim simulates, per
configuration and frame size, and writes a Markdown table (and the raw JSON).

For each configuration the harness of the l2l3 program is built (sim/build.py, skipped
when up to date); for each frame size a capture of IPv4/UDP frames is made, one route
(10.0.0.0/8 to port 1) is loaded over the control socket by the C driver, and the frames
run back to back without back-pressure. The numbers are the simulator's own summary
(summary.json): clocks and frames per second of wall time spent simulating (the table
load's wait for the client is not counted), and frames per clock of the pipeline.

usage: python bench/sim/run_speed.py [--configs w64,w512] [--sizes 64,512,1518]
                                     [--frames 20000,8000,3000] [--out bench/results/sim.md]
"""

import argparse
import ipaddress
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import git_commit, invocation  # noqa: E402
from tb.common import driver as drv  # noqa: E402
from tb.common import sim  # noqa: E402
from tb.common.sim_socket import SocketBus  # noqa: E402
from tb.model.program import Program  # noqa: E402

# The program measured, and the route its ipv4_lpm table gets.
PROGRAM = "l2l3"
ROUTE = (int(ipaddress.IPv4Address("10.0.0.0")), 8)


def build(config):
    # -O2: the simulator's speed as a user who builds for speed gets it (sim/build.py).
    r = subprocess.run([sys.executable, str(REPO / "sim" / "build.py"), "--config", config,
                        "--program", PROGRAM], capture_output=True, text=True,
                       env={**os.environ, "MATCHA_SIM_OPT": "-O2"})
    if r.returncode:
        sys.exit(f"bench: building matcha-sim for {config} failed:\n{r.stdout}{r.stderr}")
    return r.stdout.strip().splitlines()[-1]


def capture(path, size, count):
    """`count` IPv4/UDP frames of `size` bytes to addresses inside the route."""
    pkts = []
    for i in range(count):
        p = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
             / IP(src="192.0.2.1", dst=f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}")
             / UDP(sport=1000 + i % 1000, dport=2000))
        p = p / Raw(bytes(size - len(p)))
        p.time = 1_700_000_000 + i * 1e-6
        pkts.append(p)
    wrpcap(str(path), pkts)


def load_route(sock, config):
    program = Program(sim.layout_file(config))
    lpm = program["ipv4_lpm"]
    data = lpm.data("route", port=1, dmac=0x020000000003, smac=0x020000000002)
    with SocketBus(sock) as bus, drv.Device(bus) as dev:
        dev.lpm_add(lpm.index, *ROUTE, lpm.action_id("route"), data)


def measure(binary, config, size, count, work):
    cap = work / f"{config}_{size}.pcap"
    capture(cap, size, count)
    out = work / f"{config}_{size}"
    sock = work / "ctl.sock"
    proc = subprocess.Popen([binary, "--in", f"0={cap}", "--out", str(out), "--socket",
                             str(sock), "--wait-client"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        load_route(sock, config)
        stdout, stderr = proc.communicate(timeout=3600)
    finally:
        if proc.poll() is None:
            proc.kill()
    if proc.returncode:
        sys.exit(f"bench: matcha-sim {config}, {size}-byte frames failed "
                 f"(exit {proc.returncode}):\n{stdout}\n{stderr}")
    s = json.loads((out / "summary.json").read_text())
    frames = sum(c["frames"] for c in s["out"].values())
    if frames != count:
        sys.exit(f"bench: {config}, {size}-byte frames: {frames} of {count} frames routed")
    return {"config": config, "size": size, "frames": count, "clocks": s["clocks"],
            "seconds": s["seconds"], "clocks_per_second": s["clocks"] / s["seconds"],
            "frames_per_second": count / s["seconds"],
            "frames_per_clock": s["frames_per_clock"], "latency": s["latency"]}


def table(results):
    lines = ["| config | frame bytes | frames | clocks | seconds | clocks/s | frames/s "
             "| pipeline frames/clock |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {r['config']} | {r['size']} | {r['frames']} | {r['clocks']} "
                     f"| {r['seconds']:.2f} | {r['clocks_per_second']:.0f} "
                     f"| {r['frames_per_second']:.0f} | {r['frames_per_clock']:.4f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default="w64,w512")
    ap.add_argument("--sizes", default="64,512,1518")
    ap.add_argument("--frames", default="20000,8000,3000",
                    help="frames per run, one number per size")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "sim.md"))
    ap.add_argument("--raw-dir", default=str(REPO / "build" / "bench"))
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    counts = [int(n) for n in args.frames.split(",")]
    if len(counts) != len(sizes) or min(sizes) < 64:
        sys.exit("bench: one --frames count per size; sizes of at least 64 bytes")

    work = Path(tempfile.mkdtemp(prefix="msim-bench-"))
    results = []
    try:
        for config in args.configs.split(","):
            missing = sim.rtl_missing(config, "matcha_l2l3")
            if missing:
                sys.exit(f"bench: {missing}")
            binary = build(config)
            for size, count in zip(sizes, counts):
                t0 = time.time()
                r = measure(binary, config, size, count, work)
                print(f"bench: {config} {size} B: {r['clocks_per_second']:.0f} clocks/s, "
                      f"{r['frames_per_second']:.0f} frames/s ({time.time() - t0:.0f} s)",
                      flush=True)
                results.append(r)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    raw = Path(args.raw_dir) / "sim_speed.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps(results, indent=1))
    cmd = invocation()
    load = os.getloadavg()[0]
    md = "\n".join([
        "# Simulator speed",
        "",
        "`matcha-sim` (sim/README.md) running `matcha_l2l3` built with Verilator -O2 and no "
        "tracing, single-threaded: IPv4/UDP frames of one size back to back, no "
        "back-pressure, one route loaded over the control socket so every frame is routed. "
        "Clocks and frames per second of wall time spent simulating, as the simulator's "
        "summary reports them; the pipeline's frames per clock for comparison with "
        "`packet_path.md`.",
        "",
        table(results),
        "",
        f"Produced by `{cmd}` on commit {git_commit()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, on {os.cpu_count()} cores "
        f"shared with other jobs (load average {load:.1f} at the end, niceness "
        f"{os.nice(0)}).",
        "",
    ])
    Path(args.out).write_text(md)
    print(f"bench: wrote {args.out}")


if __name__ == "__main__":
    main()
