#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The overlay with its CA->PA mappings and its sessions in memory at DPU scale
(docs/overlay.md, "Mappings, sessions and routes in memory"): the 64-bit pipeline built with
room for 2^20 mappings and 6M sessions (matcha.program.ScaleBuild), in matcha-sim with its
memory model, holding up to 1M mappings loaded through matcha-ctl, under back-to-back
outbound frames of 1K, 64K and 1M flows, each flow's first frame learning its session and
its later ones hitting it; memories answering in 100 and 300 clocks, a read beat every
clock or every few. Writes a Markdown report (default bench/results/scale.md): frames per
clock against the input bus's bound, latency, lookups that came back late, sessions held
and refused, the most reads out at once, the time matcha-ctl took to load the mappings, and
the memory traffic of a new and of an established flow's packet (rows with the aging
scanner stopped) and of the scanner. Every frame's output is checked against the program
model holding the same tables.

usage: python bench/scale/run.py [--runs PROGRAM:MAPPINGS:FLOWS:PASSES:LATENCY:INTERVAL[:SCAN],...]
                                 [--sessions N] [--out bench/results/scale.md]

--sessions N gives the memory pipeline room for 1.5 N sessions (ScaleBuild --sessions;
default 2^22, so that a million flows fill a sixth of the slots).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import asdict, astuple, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCALE_DIR = REPO / "build" / "bench" / "scale"
# The scale build's RTL and simulators, apart from `make rtl`'s (tb/common/sim.py reads these).
# A caller that imports one_run for a build of its own (run_dash.py) sets them first.
os.environ.setdefault("MATCHA_RTL_DIR", str(SCALE_DIR / "rtl"))
os.environ.setdefault("MATCHA_SIM_DIR", str(SCALE_DIR / "sim"))
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.flows import prepare, simulate  # noqa: E402
from sim import build as sim_build  # noqa: E402
from tb.common.phv import Layout  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.sim import harness, tables_file  # noqa: E402

PROGRAM = "overlay_mem"
# The on-chip mapping table of the 64-bit builds, the same traffic: what the memory costs.
ON_CHIP = "overlay"
INNER_BYTES = 128
# PROGRAM:MAPPINGS:FLOWS:PASSES:LATENCY:INTERVAL[:SCAN]. The first five: flows from 1K to
# 1M against the on-chip program; the last two: the scanner stopped, to tell the packets'
# own memory traffic from the sweep's (the 64K row above them is the same traffic with it).
RUNS = ("overlay:192:1024:2:0:0,overlay_mem:1024:1024:2:100:1,overlay_mem:65536:65536:2:100:1,"
        "overlay_mem:1048576:1048576:2:100:1,overlay_mem:65536:65536:2:300:4,"
        "overlay_mem:65536:65536:1:100:1:0,overlay_mem:65536:65536:2:100:1:0")
SESSIONS = 1 << 22  # ScaleBuild --sessions: 1.5 times this in memory, 2^20 buckets of six
SEED = 2026
SCAN_DEFAULT = None  # a run that leaves SCAN_INTERVAL at its reset value
BEAT_BYTES = 64  # a beat of the 512-bit port


@dataclass
class Run:
    program: str
    mappings: int
    flows: int
    passes: int
    latency: int
    interval: int
    scan: int = SCAN_DEFAULT

    @classmethod
    def parse(cls, text):
        name, *numbers = text.split(":")
        return cls(name, *(int(x) for x in numbers))

    def name(self):
        return "-".join(str(v) for v in astuple(self) if v is not None)


def one_run(work, run, rng, settle=0):
    program_layout = sim_build.layout_path("w64", run.program)
    program = Program(program_layout)
    in_memory = program.sessions["sessions"].late_reason is not None
    # The model keeps every session: so does the hardware, its UDP sessions never aging.
    settings = ["session_set_timeout sessions UDP 65535"]
    if run.scan is not None:
        settings.append(f"session_set_scan_interval sessions {run.scan}")
    inputs, sent = prepare(work, program, run.mappings, settings, INNER_BYTES, run.flows, run.passes, rng)
    load_s = simulate(work, "w64", run.program, program_layout, inputs, run.latency, run.interval, timeout=36000,
                      settle=settle)
    tables_file.load(program, work / "tables.txt")
    exp = harness.expected(program, sent, Layout(program_layout).header_bytes)
    got = harness.read_outputs(work / "out")
    problems = harness.compare(got, exp) + harness.summary_errors(got.summary, exp, program)
    summary = got.summary
    memories = {m["port"]: m for m in summary["memories"]}
    mapping, sessions = memories.get("m_axi_mapping", {}), memories.get("m_axi_sessions", {})
    reasons = summary["punted"]["reasons"].values()
    return {
        **asdict(run), "in_memory": in_memory, "frames": len(sent), "in_bytes": len(sent[0].frame),
        "beats": -(-len(sent[0].frame) // 8),
        "frames_per_clock": summary["frames_per_clock"],
        "out": sum(v["frames"] for v in summary["out"].values()),
        "late": sum(v["frames"] for v in reasons if v["name"].endswith(".late")),
        "sessions_full": sum(v["frames"] for v in reasons if v["name"] == "sessions.full"),
        "sessions_held": program.sessions["sessions"].table.occupancy,
        "latency_min": summary["latency"]["min"], "latency_mean": summary["latency"]["mean"],
        "latency_max": summary["latency"]["max"],
        "mapping_reads": mapping.get("traffic_read_beats"), "mapping_writes": mapping.get("traffic_write_beats"),
        "session_reads": sessions.get("traffic_read_beats"), "session_writes": sessions.get("traffic_write_beats"),
        "reads_out_max": mapping.get("reads_out_max"),
        "load_seconds": load_s, "clocks": summary["clocks"], "traffic_clocks": summary["traffic_clocks"],
        "sim_seconds": summary["seconds"], "problems": problems[:5], "checked": len(sent),
    }


def bandwidth_rows(results):
    """The memory traffic of a packet, from the rows with the scanner stopped: the first
    pass's (new flows) alone, and a second pass's (the same flows again: hits) as the
    two-pass row less the one-pass row; and the scanner's reads a clock, from the two-pass
    row with it at its reset interval less the same row without. Returns [(what, mapping
    reads, session reads, session writes)] a frame, and the scanner's reads a clock (or
    None)."""
    def find(passes, scan):
        return [r for r in results if r["in_memory"] and r["passes"] == passes and r["scan"] == scan]
    rows, sweep = [], None
    for one in find(1, 0):
        same = lambda r: all(r[k] == one[k] for k in ("mappings", "flows", "latency", "interval"))  # noqa: E731
        rows.append((f"new flow ({one['flows']:,} flows)", one["mapping_reads"] / one["frames"],
                     one["session_reads"] / one["frames"], one["session_writes"] / one["frames"]))
        for two in filter(same, find(2, 0)):
            n = two["frames"] - one["frames"]
            rows.append((f"established flow, {two['flows']:,} flows later",
                         (two["mapping_reads"] - one["mapping_reads"]) / n,
                         (two["session_reads"] - one["session_reads"]) / n,
                         (two["session_writes"] - one["session_writes"]) / n))
            for scanned in filter(same, find(2, SCAN_DEFAULT)):
                sweep = (scanned["session_reads"] - two["session_reads"]) / scanned["traffic_clocks"]
    return rows, sweep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default=RUNS, help="PROGRAM:MAPPINGS:FLOWS:PASSES:LATENCY:INTERVAL[:SCAN], "
                    "comma-separated (latency 0: a program without memory; SCAN: the session table's "
                    "SCAN_INTERVAL, its reset value unless given)")
    ap.add_argument("--sessions", type=int, default=SESSIONS,
                    help="room for 1.5 times this many sessions in memory (ScaleBuild --sessions)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale.md"))
    args = ap.parse_args()
    runs = [Run.parse(r) for r in args.runs.split(",")]

    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.program.ScaleBuild",
                    f"-Dexec.args=--out {os.environ['MATCHA_RTL_DIR']} --sessions {args.sessions}"],
                   cwd=REPO, check=True)
    for name in sorted({r.program for r in runs}):
        print(f"bench: {sim_build.build('w64', name)}", flush=True)
    memory_program = Program(sim_build.layout_path("w64", PROGRAM))
    capacity = memory_program["mapping"].size
    sessions = memory_program.sessions["sessions"].table.size
    layout = json.loads(sim_build.layout_path("w64", PROGRAM).read_text())
    geometry = {o.get("name"): o.get("geometry") for o in layout["objects"]}  # entries a bucket
    bucket = {t["name"]: t["memory"]["bucketBytes"] for t in layout["program"]["tables"] + layout["program"]["sessions"]
              if "memory" in t}
    results, problems = [], []
    for run in runs:
        work = SCALE_DIR / "runs" / run.name()
        subprocess.run(["rm", "-rf", str(work)], check=True)
        work.mkdir(parents=True)
        t0 = time.time()
        r = one_run(work, run, random.Random(SEED))
        r["wall_seconds"] = time.time() - t0
        print(f"bench: {json.dumps(r)}", flush=True)
        results.append(r)
        problems += [f"{run.name()}: {p}" for p in r["problems"]]
    (SCALE_DIR / "results.json").write_text(json.dumps(results, indent=1))

    beat = BEAT_BYTES
    slots = geometry["mapping"], geometry["sessions"]
    md = [
        "# The overlay with its mappings and sessions in memory, at DPU scale",
        "",
        f"The 64-bit `overlay_mem` pipeline built with room for 2^20 mappings "
        f"(`matcha.program.ScaleBuild`: {capacity:,} entries in {bucket['mapping']}-byte buckets of "
        f"{slots[0]}, {capacity // slots[0] * bucket['mapping'] // 2**20} MiB of memory) and for {sessions:,} "
        f"sessions ({sessions // slots[1]:,} buckets of {slots[1]}, "
        f"{sessions // slots[1] * bucket['sessions'] // 2**20} MiB, on a port of "
        "their own), in matcha-sim with its memory model (`sim/axi_memory.h`: every read of "
        "either port answered a fixed number of clocks after its address, a read beat every "
        "`interval` clocks at most). The mappings, all in one VNET, are loaded by "
        "`matcha-ctl --cleared` through the simulator's control socket; their destinations are "
        f"spread over 10.0.0.0/8 and none is refused (the driver's placement: at most {slots[0]} a "
        "bucket). The session table's UDP timeout is set to never (the model has no clock), "
        "and its aging scanner runs at its reset interval unless the row says otherwise.",
        "",
        f"Traffic: outbound {INNER_BYTES}-byte inner UDP frames in the host's VXLAN, back to "
        "back, in `flows` flows (each its own UDP ports) to mapped destinations drawn at "
        f"random (seed {SEED}), sent in `passes` passes: the first in flow order, each frame a "
        "new flow that learns its session; each later pass the same flows shuffled, each frame "
        "a session hit. Every frame is encapsulated toward its mapping's PA, or punted as "
        "`sessions.full` when its session's bucket is full (and again in each later pass). "
        "Every output, drop and punt and the summary's counts are checked against the "
        "program model holding the same tables." +
        (" The row of `overlay` is that program built with the same tables but its mapping on "
         "chip (a 4-way cuckoo table of 256 slots) and its 262,144 sessions on chip (four "
         "ways), what the memory is compared with." if any(not r["in_memory"] for r in results) else ""),
        "",
        "| program | mappings held | flows | passes | frames | memory latency (clocks) "
        "| a read beat every | scanner interval | frames/clock | bound of the 64-bit input bus "
        "| late lookups | sessions held | punted `sessions.full` | latency min / mean / max (clocks) "
        "| most mapping reads out at once | load (s) | frames checked |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| --- | ---: | ---: | ---: |",
    ]
    dash = "—"
    for r in results:
        mem = r["in_memory"]
        scan = dash if not mem else f"{r['scan']} (stopped)" if r["scan"] == 0 else \
            str(r["scan"]) if r["scan"] is not None else "16 (reset)"
        md.append(f"| `{r['program']}` | {r['mappings']:,} | {r['flows']:,} | {r['passes']} | {r['frames']:,} "
                  f"| {r['latency'] if mem else dash} | {r['interval'] if mem else dash} | {scan} "
                  f"| {r['frames_per_clock']:.4f} | {1 / r['beats']:.4f} ({r['in_bytes']} bytes, "
                  f"{r['beats']} beats) | {r['late']} | {r['sessions_held']:,} | {r['sessions_full']:,} "
                  f"| {r['latency_min']} / {r['latency_mean']:.1f} / {r['latency_max']} "
                  f"| {r['reads_out_max'] if mem else dash} | {r['load_seconds']:.0f} | {r['checked']:,} |")
    md += [
        "",
        "Frames per clock: frames out over the clocks from the first input beat to the last "
        "output beat (matcha-sim's `traffic`). The source offers frames faster than the "
        "64-bit overlay pipeline takes them, on chip as in memory, so frames wait in the "
        "input buffer and the latency's mean and maximum are mostly that wait; the minimum is "
        "a frame that did not wait. Late lookups: frames punted as `mapping.late` or "
        "`sessions.late`. Sessions held: the model's, which every frame's fate agrees with. "
        "Load: wall-clock seconds for matcha-ctl's whole batch over the socket, the simulator "
        "running the pipeline meanwhile (each register access is a socket round trip and "
        "simulated clocks); it measures this set-up, not the driver on a card.",
        "",
    ]
    rows, sweep = bandwidth_rows(results)
    if rows:
        md += [
            "## Memory traffic a packet",
            "",
            f"Beats of {beat} bytes the memory answered between the first input beat and the "
            "last output (matcha-sim's `traffic_read_beats`, `traffic_write_beats`), a frame, in "
            "the rows with the scanner stopped: the one-pass row's for a new flow; the two-pass "
            "row's less the one-pass row's, over the second pass's frames, for an established "
            "one. A packet writes its session's bucket when it learns it, moves its state or "
            "finds its timestamp older than the current tick (TICK's reset value, 65,536 clocks, "
            "here; 1 ms at 250 MHz with DASH's settings): a second-pass packet comes a pass "
            "after its flow's first, so it writes when a tick began in between, at 64K flows "
            "(a pass of about 2M clocks) always, the costly case. Frames a second: what one channel carries "
            "at that cost, at its peak bandwidth (DDR4-2400, 64 bits: 19.2 GB/s; an HBM2 "
            "pseudo-channel of an Alveo U280: 14.4 GB/s; docs/tables.md, \"Memory bandwidth per "
            "lookup\", which also gives the lower bounds random accesses meet), against the "
            "512-bit pipeline's one frame a clock at 250 MHz, 250 M frames a second.",
            "",
            "| frame | mapping reads | session reads | session writes | bytes | frames/s, one DDR4-2400 channel "
            "| frames/s, one HBM2 pseudo-channel |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for what, mr, sr, sw in rows:
            b = (mr + sr + sw) * beat
            md.append(f"| {what} | {mr:.3f} | {sr:.3f} | {sw:.3f} | {b:.0f} | {19.2e9 / b / 1e6:.0f} M "
                      f"| {14.4e9 / b / 1e6:.0f} M |")
        if sweep is not None:
            md += ["", f"The aging scanner at its reset interval (a bucket every 16 memory answers without a "
                   f"packet) read {sweep:.4f} beats a clock in the same traffic (the two-pass row "
                   f"with it, less the row without, over its clocks): {sweep * beat * 250e6 / 1e9:.2f} "
                   "GB/s at 250 MHz. Its rate is the driver's to set "
                   "(`matcha_session_set_scan_interval`, `matcha-ctl session_set_scan_interval`): "
                   "docs/sessions.md, \"Aging, CLEAR and reset\", budgets it against DASH's idle "
                   "timeout."]
        md.append("")
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
