#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The CA->PA mapping table in memory at DPU scale: the overlay pipeline with its mappings
and sessions in memory (docs/overlay.md, "Mappings and sessions in memory") built with room
for 2^20 mappings
(matcha.program.ScaleBuild), in matcha-sim with its memory model, holding 1K, 64K and 1M
mappings loaded through matcha-ctl, under back-to-back outbound frames to mapped
destinations; memories answering in 100 and 300 clocks, a read beat every clock or every
few. Writes a Markdown report (default bench/results/scale.md): frames per clock against
the input bus's bound, latency, lookups that came back late, memory reads per frame, the
most reads out at once, and the time matcha-ctl took to load the mappings. Every frame's
output is checked against the program model holding the same tables.

usage: python bench/scale/run.py [--frames N] [--runs PROGRAM:MAPPINGS:LATENCY:INTERVAL[:FRAMES],...]
                                 [--sessions N] [--out bench/results/scale.md]

--sessions N gives the memory pipeline room for 1.5 N sessions (ScaleBuild --sessions), for
runs of more flows than its default 393,216 sessions hold.
"""

import argparse
import ipaddress
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SCALE_DIR = REPO / "build" / "bench" / "scale"
# The scale build's RTL and simulators, apart from `make rtl`'s (tb/common/sim.py reads these).
os.environ["MATCHA_RTL_DIR"] = str(SCALE_DIR / "rtl")
os.environ["MATCHA_SIM_DIR"] = str(SCALE_DIR / "sim")
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "sim" / "examples"))

import make_overlay_scale as scale  # noqa: E402  (addressing and frames of the scale example)
from scapy.layers.inet import UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from bench.provenance import invocation, write_report  # noqa: E402
from sim import build as sim_build  # noqa: E402
from tb.common.phv import Layout  # noqa: E402
from tb.model.hashing import exact_index  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.pipeline.control import descriptor_of  # noqa: E402
from tb.sim import harness, tables_file  # noqa: E402

PROGRAM = "overlay_mem"
# The on-chip mapping table of the 64-bit builds, the same traffic: what the memory costs.
ON_CHIP = "overlay"
VNET = 3
NET = ipaddress.ip_network("10.0.0.0/8")
INNER_BYTES = 128
RUNS = ("overlay:192:0:0,overlay_mem:1024:100:1,overlay_mem:65536:100:1,overlay_mem:1048576:100:1,"
        "overlay_mem:1048576:300:1,overlay_mem:1048576:300:4")
SEED = 2026


def destinations(program, count, rng):
    """`count` destinations of NET in VNET; in memory, none in a bucket whose entries are
    taken (the driver would refuse it): placed as the driver places them, from the key's
    CRC."""
    mapping = program["mapping"]
    if mapping.kind != "mem_exact":
        return [int(NET.network_address) + o for o in rng.sample(range(NET.num_addresses), count)]
    slots = descriptor_of(mapping.desc).geometry
    buckets = mapping.size // slots
    used = {}
    out = []
    for offset in rng.sample(range(NET.num_addresses), min(NET.num_addresses, count * 2)):
        d = int(NET.network_address) + offset
        b = exact_index(mapping.key(dstVnet=VNET, dst=d), mapping.key_width, 0, buckets)
        if used.get(b, 0) < slots:
            used[b] = used.get(b, 0) + 1
            out.append(d)
            if len(out) == count:
                return out
    raise SystemExit(f"bench: only {len(out)} of {count} destinations placed")


def one_run(work, name, mappings, latency, interval, frames, rng):
    program_layout = sim_build.layout_path("w64", name)
    program = Program(program_layout)
    mapped = destinations(program, mappings, rng)
    tables_path = work / "tables.txt"
    tables_path.write_text("\n".join(scale.one_route_tables(NET, VNET, mapped)) + "\n")
    # Each frame a flow of its own (its own UDP source port) to a mapped destination.
    payload = Raw(b"s" * (INNER_BYTES - 14 - 20 - 8))
    targets = rng.sample(mapped, min(frames, len(mapped))) if frames <= len(mapped) else \
        [rng.choice(mapped) for _ in range(frames)]
    sent_frames = [bytes(scale.outbound(0, str(ipaddress.ip_address(d)),
                                        UDP(sport=1024 + k % 60000, dport=53 + k // 60000), payload))
                   for k, d in enumerate(targets)]
    inputs, sent = harness.write_captures(work, [(0, f) for f in sent_frames])
    sock, out = work / "ctl.sock", work / "out"
    out.mkdir()
    with harness.Simulator("w64", "--socket", sock, "--wait-client", *inputs, "--out", out,
                           "--layout", program_layout, "--max-clocks", 200_000_000,
                           *(["--memory-latency", latency, "--memory-interval", interval] if latency else []),
                           program=name) as s:
        s.wait_socket(sock)
        t0 = time.time()
        ctl = subprocess.run([str(harness.matcha_ctl()), f"sim:{sock}", "--layout", str(program_layout),
                              "--cleared", "-f", str(tables_path)], capture_output=True, text=True,
                             timeout=36000)
        load_s = time.time() - t0
        if ctl.returncode:
            raise SystemExit(f"bench: matcha-ctl failed:\n{ctl.stdout}\n{ctl.stderr}")
        rc, stdout, stderr = s.finish(timeout=36000)
    if rc:
        raise SystemExit(f"bench: matcha-sim failed ({rc}):\n{stdout}\n{stderr}")
    tables_file.load(program, tables_path)
    exp = harness.expected(program, sent, Layout(program_layout).header_bytes)
    got = harness.read_outputs(out)
    problems = harness.compare(got, exp) + harness.summary_errors(got.summary, exp, program)
    summary = got.summary
    memories = {m["port"]: m for m in summary["memories"]}
    memory = memories.get("m_axi_mapping", {})
    beats = -(-len(sent_frames[0]) // 8)
    late = sum(v["frames"] for v in summary["punted"]["reasons"].values() if v["name"].endswith(".late"))
    full = sum(v["frames"] for v in summary["punted"]["reasons"].values() if v["name"] == "sessions.full")
    return {
        "program": name, "mappings": mappings, "latency": latency, "interval": interval, "frames": len(sent_frames),
        "in_bytes": len(sent_frames[0]), "beats": beats,
        "frames_per_clock": summary["frames_per_clock"], "ideal": 1 / beats,
        "out": sum(v["frames"] for v in summary["out"].values()), "late": late, "sessions_full": full,
        "latency_min": summary["latency"]["min"], "latency_mean": summary["latency"]["mean"],
        "latency_max": summary["latency"]["max"], "read_beats": memory.get("read_beats"),
        "session_read_beats": memories.get("m_axi_sessions", {}).get("read_beats"),
        "reads_out_max": memory.get("reads_out_max"),
        "load_seconds": load_s, "clocks": summary["clocks"], "sim_seconds": summary["seconds"],
        "problems": problems[:5], "checked": len(sent),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--runs", default=RUNS, help="PROGRAM:MAPPINGS:LATENCY:INTERVAL[:FRAMES], comma-separated "
                    "(latency 0: a program without memory; FRAMES: --frames unless given)")
    ap.add_argument("--sessions", type=int, help="room for 1.5 times this many sessions in memory "
                    "(ScaleBuild --sessions; default its 262,144)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale.md"))
    args = ap.parse_args()
    runs = []
    for r in args.runs.split(","):
        name, *numbers = r.split(":")
        numbers = [int(x) for x in numbers]
        runs.append((name, *numbers[:3], numbers[3] if len(numbers) > 3 else args.frames))

    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.program.ScaleBuild",
                    f"-Dexec.args=--out {SCALE_DIR / 'rtl'}" + (f" --sessions {args.sessions}" if args.sessions else "")],
                   cwd=REPO, check=True)
    for name in sorted({r[0] for r in runs}):
        print(f"bench: {sim_build.build('w64', name)}", flush=True)
    capacity = Program(sim_build.layout_path("w64", PROGRAM))["mapping"].size
    sessions = Program(sim_build.layout_path("w64", PROGRAM)).sessions["sessions"].table.size
    results, problems = [], []
    for name, mappings, latency, interval, frames in runs:
        work = SCALE_DIR / "runs" / f"{name}-{mappings}-{latency}-{interval}-{frames}"
        subprocess.run(["rm", "-rf", str(work)], check=True)
        work.mkdir(parents=True)
        t0 = time.time()
        r = one_run(work, name, mappings, latency, interval, frames, random.Random(SEED))
        r["wall_seconds"] = time.time() - t0
        print(f"bench: {json.dumps(r)}", flush=True)
        results.append(r)
        problems += [f"{name}, {mappings} mappings, latency {latency}, interval {interval}: {p}"
                     for p in r["problems"]]
    (SCALE_DIR / "results.json").write_text(json.dumps(results, indent=1))

    md = [
        "# The CA→PA mappings and the sessions in memory, at DPU scale",
        "",
        f"The 64-bit `overlay_mem` pipeline built with room for 2^20 mappings "
        f"(`matcha.program.ScaleBuild`: {capacity:,} entries in 64-byte buckets of three, "
        f"{capacity // 3 * 64 // 2**20} MiB of memory; its sessions in memory too, "
        f"{sessions:,} in buckets of three on a port of their own), in matcha-sim with its memory model "
        "(`sim/axi_memory.h`: every read of either port answered a fixed number of clocks after its "
        "address, a read beat every `interval` clocks at most). The mappings, all in one VNET, are loaded by `matcha-ctl --cleared` "
        "through the simulator's control socket; their destinations are spread over 10.0.0.0/8 "
        "and none is refused (the driver's placement: at most three a bucket). Traffic: "
        "outbound frames back to back (the number in each row), "
        f"{INNER_BYTES}-byte inner UDP frames "
        "in the host's VXLAN, each a flow of its own to a mapped destination drawn at random "
        f"(seed {SEED}), each learning a session; every frame is encapsulated toward its "
        "mapping's PA, or punted as `sessions.full` when its session's bucket is full. "
        "Every output, drop and punt and the summary's counts are checked "
        "against the program model holding the same tables." +
        (" The row of `overlay` is that program "
         "built with the same tables but its mapping on chip (a 4-way cuckoo table of 256 "
         "slots) and its 262,144 sessions on chip (four ways) under the same traffic, what "
         "the memory is compared with." if any(r["latency"] == 0 for r in results) else ""),
        "",
        "| program | mappings held | memory latency (clocks) | a read beat every | frames "
        "| frames/clock | bound of the 64-bit input bus | late lookups | punted `sessions.full` "
        "| latency min / mean / max (clocks) | mapping read beats | session read beats | most mapping reads out at once "
        "| load (s) | frames checked |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    dash = "—"
    for r in results:
        mem = r["latency"] > 0
        reads = f"{r['read_beats']:,}" if mem else dash
        session_reads = f"{r['session_read_beats']:,}" if r["session_read_beats"] is not None else dash
        md.append(f"| `{r['program']}` | {r['mappings']:,} | {r['latency'] if mem else dash} "
                  f"| {r['interval'] if mem else dash} | {r['frames']:,} "
                  f"| {r['frames_per_clock']:.4f} | {r['ideal']:.4f} ({r['in_bytes']} bytes, "
                  f"{r['beats']} beats) | {r['late']} | {r['sessions_full']:,} | {r['latency_min']} / "
                  f"{r['latency_mean']:.1f} / {r['latency_max']} "
                  f"| {reads} | {session_reads} "
                  f"| {r['reads_out_max'] if mem else dash} | {r['load_seconds']:.0f} | {r['checked']:,} |")
    md += [
        "",
        "Frames per clock: frames out over the clocks from the first input beat to the last "
        "output beat (matcha-sim's `traffic`). The source offers frames faster than the "
        "64-bit overlay pipeline takes them, on chip as in memory (the first row), so frames "
        "wait in the input buffer and the latency's mean and maximum are mostly that wait; the "
        "minimum is a frame that did not wait. Mapping read beats: the lookups' reads (one per "
        "frame) and nothing else, since `--cleared` reads no entry back; session read beats: "
        "one per frame and the aging scanner's, a bucket every 16 clocks without a frame. "
        "Late lookups: frames punted as `mapping.late` or `sessions.late`. Load: wall-clock "
        "seconds for matcha-ctl's whole batch over the socket, the simulator running the "
        "pipeline meanwhile (each register access is a socket round trip and simulated "
        "clocks); it measures this set-up, not the driver on a card.",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
