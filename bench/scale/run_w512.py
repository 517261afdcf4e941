#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The overlay at the Corundum card's width with its mappings and sessions in memory: the
512-bit `overlay_mem` of `make rtl` (the card's scale, routes on chip; docs/overlay.md,
"Mappings, sessions and routes in memory") in matcha-sim with its memory model, beside the
512-bit `overlay` with every table on chip, under back-to-back outbound frames of 64 to 1518
bytes: each flow's first frame learns its session, its second hits it. Writes a Markdown
report (default bench/results/scale_w512.md): frames per clock against the input bus's
bound, clocks a frame once the pipeline is full, latency, sessions learned, refused and left
busy, and memory reads and writes a frame. Every frame's output is checked against the
program model holding the same tables; the frames the hardware left busy (its tracked
buckets all taken) are read from its punt log, and the model checks that each changed
nothing and left as it came.

usage: python bench/scale/run_w512.py [--runs PROGRAM:INNER_BYTES:LATENCY,...] [--flows N]
                                      [--out bench/results/scale_w512.md]
"""

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.flows import prepare, simulate  # noqa: E402
from sim import build as sim_build  # noqa: E402
from tb.common.phv import Layout  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.sim import harness, tables_file  # noqa: E402

CONFIG = "w512"
WORK = REPO / "build" / "bench" / "scale-w512"
# PROGRAM:INNER_BYTES:LATENCY (0: the program without memory)
RUNS = ("overlay:64:0,overlay_mem:64:100,overlay_mem:64:300,overlay:128:0,overlay_mem:128:100,"
        "overlay_mem:128:300,overlay_mem:512:300,overlay_mem:1518:300")
MAPPINGS = 8192  # the card's scale (docs/overlay.md, "Scale")
FLOWS = 16384
# A tick of 1 ms at 250 MHz (DASH's timeouts are in seconds). A hit writes its session's
# bucket only when a tick has begun since the session's last packet (docs/sessions.md, "A
# packet's path"): in these runs, for the flows whose two passes a tick boundary falls
# between.
TICK = 250_000
SEED = 2026


def one_run(work, program_name, inner_bytes, latency, flow_count, rng):
    layout = sim_build.layout_path(CONFIG, program_name)
    program = Program(layout)
    # The model keeps every session: so does the hardware, its UDP sessions never aging.
    settings = ["session_set_timeout sessions UDP 65535", f"session_set_tick sessions {TICK}"]
    inputs, sent = prepare(work, program, MAPPINGS, settings, inner_bytes, flow_count, 2, rng)
    simulate(work, CONFIG, program_name, layout, inputs, latency)
    tables_file.load(program, work / "tables.txt")
    got = harness.read_outputs(work / "out")
    busy = harness.busy_frames(program, got.punt_rows)
    exp = harness.expected(program, sent, Layout(layout).header_bytes, busy=busy)
    problems = harness.compare(got, exp) + harness.summary_errors(got.summary, exp, program)
    summary = got.summary
    memories = {m["port"]: m for m in summary["memories"]}
    reasons = summary["punted"]["reasons"].values()
    beats = -(-len(sent[0].frame) // (Layout(layout).data_width // 8))
    return {
        "program": program_name, "inner_bytes": inner_bytes, "latency": latency, "flows": flow_count,
        "frames": len(sent), "in_bytes": len(sent[0].frame), "beats": beats,
        "frames_per_clock": summary["frames_per_clock"], "traffic_clocks": summary["traffic_clocks"],
        "latency_min": summary["latency"]["min"], "latency_max": summary["latency"]["max"],
        "late": sum(v["frames"] for v in reasons if v["name"].endswith(".late")),
        "busy": len(busy),
        "sessions_full": sum(v["frames"] for v in reasons if v["name"] == "sessions.full"),
        "sessions_held": program.sessions["sessions"].table.occupancy,
        "mapping_reads": memories.get("m_axi_mapping", {}).get("traffic_read_beats"),
        "session_reads": memories.get("m_axi_sessions", {}).get("traffic_read_beats"),
        "session_writes": memories.get("m_axi_sessions", {}).get("traffic_write_beats"),
        "reads_out_max": max((m["reads_out_max"] for m in memories.values()), default=None),
        "problems": problems[:5], "checked": len(sent),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default=RUNS, help="PROGRAM:INNER_BYTES:LATENCY, comma-separated")
    ap.add_argument("--flows", type=int, default=FLOWS)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_w512.md"))
    args = ap.parse_args()
    runs = [(name, int(size), int(latency)) for name, size, latency in (r.split(":") for r in args.runs.split(","))]
    for name in sorted({r[0] for r in runs}):
        print(f"bench: {sim_build.build(CONFIG, name)}", flush=True)
    memory_program = Program(sim_build.layout_path(CONFIG, "overlay_mem"))
    stage = memory_program.sessions["sessions"]
    results, problems = [], []
    for name, size, latency in runs:
        work = WORK / f"{name}-{size}-{latency}"
        subprocess.run(["rm", "-rf", str(work)], check=True)
        work.mkdir(parents=True)
        t0 = time.time()
        r = one_run(work, name, size, latency, args.flows, random.Random(SEED))
        r["wall_seconds"] = time.time() - t0
        print(f"bench: {json.dumps(r)}", flush=True)
        results.append(r)
        problems += [f"{name} {size} bytes, latency {latency}: {p}" for p in r["problems"]]
    (WORK / "results.json").write_text(json.dumps(results, indent=1))

    layout = json.loads(sim_build.layout_path(CONFIG, "overlay_mem").read_text())
    mapping = memory_program["mapping"]
    md = [
        "# The overlay at 512 bits with its mappings and sessions in memory",
        "",
        f"The 512-bit `overlay_mem` of `make rtl` (`Programs.overlayMemCorundum`: the Corundum "
        f"card's scale, its {mapping.size:,}-entry mapping table and its {stage.table.size:,} "
        f"sessions in 64-byte buckets of three behind two AXI4 ports, its 32,768 routes on "
        f"chip; pipeline latency {layout['program']['latency']} clocks, packet buffer "
        f"{layout['bufferBytes'] // 1024} KiB) in matcha-sim with its memory model "
        "(`sim/axi_memory.h`: each read answered a fixed number of clocks after its address, "
        "a beat a clock), beside the 512-bit `overlay` with every table on chip. "
        f"{MAPPINGS:,} mappings of one VNET are loaded by `matcha-ctl --cleared`, the session "
        f"table's tick set to {TICK:,} clocks (1 ms at 250 MHz) and its UDP timeout to never "
        "(the model has no clock). Traffic: ENI 0's outbound UDP frames in the host's VXLAN "
        "(the inner frame's size in the row, the outer 50 bytes more), back to back, "
        f"{args.flows:,} flows to mapped destinations drawn at random (seed {SEED}) in two "
        "passes: the first in flow order, each frame a new flow that learns its session, the "
        "second the same flows shuffled, each frame a session hit.",
        "",
        "Every output, drop and punt and the summary's counts are checked against the program "
        "model holding the same tables. A frame whose session change found every tracked "
        "bucket taken (docs/sessions.md, \"Exact under reads in flight\") is punted as "
        "`sessions.busy`; when that happens depends on the memory's timing, which the model "
        "does not have, so those frames are taken from the simulator's punt log and the model "
        "checks that each left as it came and changed nothing.",
        "",
        "| program | inner frame (bytes) | memory latency (clocks) | frames | frames/clock "
        "| bound of the 512-bit input bus | clocks a frame, pipeline full | latency (clocks) "
        "| sessions learned | `sessions.busy` | `sessions.full` | late | mapping reads a frame "
        "| session reads, writes a frame | most reads out at once | frames checked |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    dash = "—"
    for r in results:
        mem = r["latency"] > 0
        full_rate = (r["traffic_clocks"] - r["latency_min"]) / r["frames"]
        lat = str(r["latency_min"]) if r["latency_min"] == r["latency_max"] else \
            f"{r['latency_min']} to {r['latency_max']}"
        md.append(
            f"| `{r['program']}` | {r['inner_bytes']} | {r['latency'] if mem else dash} | {r['frames']:,} "
            f"| {r['frames_per_clock']:.4f} | {1 / r['beats']:.4f} ({r['in_bytes']} bytes, {r['beats']} beats) "
            f"| {full_rate:.3f} | {lat} | {r['sessions_held']:,} | {r['busy']:,} | {r['sessions_full']:,} "
            f"| {r['late']} | {r['mapping_reads'] / r['frames']:.3f} |"
            if mem else
            f"| `{r['program']}` | {r['inner_bytes']} | {dash} | {r['frames']:,} "
            f"| {r['frames_per_clock']:.4f} | {1 / r['beats']:.4f} ({r['in_bytes']} bytes, {r['beats']} beats) "
            f"| {full_rate:.3f} | {lat} | {r['sessions_held']:,} | {dash} | {r['sessions_full']:,} "
            f"| {dash} | {dash} |")
        md[-1] += (f" {r['session_reads'] / r['frames']:.3f}, {r['session_writes'] / r['frames']:.3f} "
                   f"| {r['reads_out_max']} | {r['checked']:,} |" if mem else f" {dash} | {dash} | {r['checked']:,} |")
    md += [
        "",
        "Frames per clock: frames out over the clocks from the first input beat to the last "
        "output beat (matcha-sim's `traffic`), which include one pipeline latency; clocks a "
        "frame, pipeline full: those clocks less the first frame's latency, over the frames "
        "(the bus bound's reciprocal when the pipeline takes a frame in every bus slot). "
        "Reads and writes: beats of 64 bytes from the first input beat to the last output "
        "(`traffic_read_beats`, `traffic_write_beats`), the session table's aging scanner's "
        "reads included (a bucket every 16 clocks without a packet). A new session is a write; "
        "a hit writes its session's bucket when a tick has begun since the flow's first "
        "packet, so the writes a frame depend on where the tick boundaries fall in the run "
        "(a run of 16K flows lasts 65K to 820K clocks).",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
