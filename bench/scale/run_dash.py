#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SONiC DASH's scale built (matcha.program.ScaleBuild --dash: the 64-bit `overlay_mem` with
room for 32M sessions and 8M CA→PA mappings a sixth full, and 1M routes with their two lowest
levels in memory, in one 33-bit port's 8 GiB): what its layout.json says each table holds and
where it sits in memory, checked against the regions' arithmetic (each table's buckets inside
its region, the regions apart and inside the port), and the matcha-sim build of it run from
reset for --clocks clocks with its memory model: the write beats each memory port took (the
CLEAR after reset writes every bucket and node empty, a beat a clock) and the simulator's clocks
a second. Then, unless --flows is 0, a run of traffic on it (bench/scale/run.py's, checked
against the program model): the simulator first runs the whole clear (--settle-clocks), then
matcha-ctl loads --mappings mappings, and --flows new flows pass twice, learning their
sessions and then hitting them. Writes a Markdown report (default
bench/results/scale_dash.md).

usage: python bench/scale/run_dash.py [--clocks 300000] [--mappings 4096] [--flows 4096]
                                      [--out bench/results/scale_dash.md]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DASH_DIR = REPO / "build" / "bench" / "dash"
os.environ["MATCHA_RTL_DIR"] = str(DASH_DIR / "rtl")
os.environ["MATCHA_SIM_DIR"] = str(DASH_DIR / "sim")
sys.path.insert(0, str(REPO))

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.flows import regions, settle_clocks  # noqa: E402
from bench.scale.run import INNER_BYTES, SEED, Run, one_run  # noqa: E402
from sim import build as sim_build  # noqa: E402
from tb.sim import harness  # noqa: E402

PROGRAM = "overlay_mem"
CLOCK_HZ = 250_000_000
LATENCY = 300


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clocks", type=int, default=300_000)
    ap.add_argument("--mappings", type=int, default=4096)
    ap.add_argument("--flows", type=int, default=4096)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_dash.md"))
    args = ap.parse_args()
    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.program.ScaleBuild",
                    f"-Dexec.args=--out {DASH_DIR / 'rtl'} --dash"], cwd=REPO, check=True)
    print(f"bench: {sim_build.build('w64', PROGRAM)}", flush=True)
    layout_path = sim_build.layout_path("w64", PROGRAM)
    layout = json.loads(Path(layout_path).read_text())
    rows = regions(layout)
    problems = []
    for a, b in zip(rows, rows[1:]):
        if a[4] > b[3]:
            problems.append(f"{a[0]}'s region ends at {a[4]:#x}, past {b[0]}'s start {b[3]:#x}")
    for name, _, _, _, end, bits, _ in rows:
        if end > 1 << bits:
            problems.append(f"{name}'s region ends at {end:#x}, past its {bits}-bit port")

    with tempfile.TemporaryDirectory() as work:
        # No table is loaded: the run is the clear after reset, with one frame waiting at the
        # input (which takes no frame until the tables are clear) to keep the simulator going.
        inputs, _ = harness.write_captures(work, [(0, bytes(Ether() / IP() / UDP()))])
        out = Path(work) / "out"
        with harness.Simulator("w64", *inputs, "--out", out, "--layout", layout_path,
                               "--memory-latency", LATENCY, "--max-clocks", args.clocks, program=PROGRAM) as s:
            rc, stdout, stderr = s.finish(timeout=3600)
        # Its exit status is 1: the frame never entered before the clock limit.
        if "clock limit reached" not in stdout + stderr or not (out / "summary.json").exists():
            raise SystemExit(f"bench: matcha-sim failed ({rc}):\n{stdout}\n{stderr}")
        summary = json.loads((out / "summary.json").read_text())
    writes = {m["port"]: m["write_beats"] for m in summary["memories"]}
    rate = summary["clocks"] / summary["seconds"]

    md = [
        "# SONiC DASH's scale, built",
        "",
        "The 64-bit `overlay_mem` pipeline built by `matcha.program.ScaleBuild --dash` (docs/tables.md, "
        "\"Capacity at DPU scale\"): room for 32M sessions and 8M CA→PA mappings at a sixth of their "
        "slots, and 1M routes with the two lowest levels of the tree in memory, one table after another "
        "in the 8 GiB of a 33-bit port (an Alveo U280's HBM, Corundum's `AXI_HBM_ADDR_WIDTH` 33; a DDR4 "
        "channel's `AXI_DDR_ADDR_WIDTH` is 34). What its layout.json gives each table in memory, in "
        "64-byte beats of its port:",
        "",
        "| table | entries | bytes a bucket or node | beats in memory | region | bytes | port's address bits |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    for name, entries, ports, start, end, bits, unit in rows:
        md.append(f"| `{name}` | {entries:,} | {unit} | {sum(b for _, b in ports):,} | {start:#x} to {end:#x} "
                  f"| {(end - start) / 2**30:.3f} GiB | {bits} |")
    md += [
        "",
        "Every region is inside the port and apart from the others." if not problems else
        "The regions do not fit: see the problems below.",
        "",
        f"matcha-sim of this build (its memory model answering reads {LATENCY} clocks late), run from reset "
        f"for {summary['clocks']:,} clocks with no table loaded and one frame waiting at the input: the clear after reset writes "
        "every bucket and node of each table in memory empty, a beat a clock on each port. Write beats each "
        "port took, and the clocks the whole clear takes (the largest table's beats):",
        "",
        "| port | table | write beats | of the table's beats | clear at 250 MHz |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for name, _, ports, *_ in rows:
        for port, beats in ports:
            md.append(f"| `{port}` | `{name}` | {writes.get(port, 0):,} | {beats:,} | "
                      f"{beats / CLOCK_HZ * 1000:.1f} ms |")
    largest = max(beats for r in rows for _, beats in r[2])
    md += [
        "",
        f"matcha-sim ran {rate:,.0f} clocks a second here, so the clear of the session table alone, "
        f"{largest:,} clocks, takes about {largest / rate / 60:.0f} minutes of simulation before the first "
        "table can be loaded.",
        "",
    ]
    if args.flows:
        settle = settle_clocks(layout)
        work = DASH_DIR / "run"
        subprocess.run(["rm", "-rf", str(work)], check=True)
        work.mkdir(parents=True)
        run = Run(PROGRAM, args.mappings, args.flows, 2, LATENCY, 1)
        r = one_run(work, run, random.Random(SEED), settle=settle)
        print(f"bench: {json.dumps(r)}", flush=True)
        problems += r["problems"]
        md += [
            "## Traffic at this scale",
            "",
            f"The same simulator, its memory model answering reads {LATENCY} clocks late, runs "
            f"{settle:,} clocks from reset (`--settle-clocks`: the whole clear), then `matcha-ctl "
            f"--cleared` loads {args.mappings:,} mappings and the settings of bench/scale/run.py, and "
            f"{args.flows:,} flows of {INNER_BYTES}-byte inner UDP frames pass twice (bench/scale/run.py's "
            f"traffic, seed {SEED}): the first pass learns a session a frame in the 2^25 buckets of six, the "
            "second finds them. Every frame's output, drop and punt and the summary's counts are "
            "checked against the program model holding the same tables.",
            "",
            "| frames | encapsulated | late lookups | sessions held | punted `sessions.full` | frames/clock "
            "| latency min / mean / max (clocks) | mapping reads | session reads | session writes "
            "| simulated clocks | simulation (s) | frames checked |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            f"| {r['frames']:,} | {r['out']:,} | {r['late']:,} | {r['sessions_held']:,} | {r['sessions_full']:,} "
            f"| {r['frames_per_clock']:.4f} | {r['latency_min']} / {r['latency_mean']:.1f} / {r['latency_max']} "
            f"| {r['mapping_reads']:,} | {r['session_reads']:,} | {r['session_writes']:,} | {r['clocks']:,} "
            f"| {r['sim_seconds']:.0f} | {r['checked']:,} |",
            "",
            "Mapping and session reads and writes: beats the memory answered from the first input beat to "
            "the last output.",
            "",
        ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
