#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A million routes in a simulated program (docs/tables.md, "LPM levels in memory"): the
64-bit `overlay_mem` pipeline built with a route table of 2^20 prefixes whose two lowest
levels are in memory (matcha.program.ScaleBuild --routes), in matcha-sim with its memory
model, the full Internet routing table of sw/driver/tests/data (901,899 prefixes) and as
many more prefixes drawn with its lengths as fill the table loaded through matcha-ctl, and
outbound frames to the ends of sampled prefixes, just past them and to random addresses
(tb/sim/bgp_routes.py: a frame's VNI says which prefix the pipeline chose). Every output,
drop and punt is checked against the program model holding the same tables (its LPM looks
a key up at every length). Writes a Markdown report (default
bench/results/scale_routes.md): prefixes held, the load's time and bus transactions,
frames routed and missed, the prefix lengths and VNIs the frames reached, late lookups,
frames per clock and latency.

usage: python bench/scale/run_routes.py [--routes N] [--fill N] [--sampled N] [--random N]
                                        [--latency CLOCKS] [--seed S] [--out FILE]

--routes is the table's capacity (ScaleBuild --routes), --fill the prefixes loaded into it
(default: as many): the BGP table's first ones, then drawn ones.
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
ROUTES_DIR = REPO / "build" / "bench" / "scale_routes"
# This build's RTL and simulator, apart from `make rtl`'s and the scale bench's.
os.environ["MATCHA_RTL_DIR"] = str(ROUTES_DIR / "rtl")
os.environ["MATCHA_SIM_DIR"] = str(ROUTES_DIR / "sim")
sys.path.insert(0, str(REPO))

from scapy.layers.inet import UDP  # noqa: E402
from scapy.packet import Raw  # noqa: E402

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.flows import settle_clocks, simulate  # noqa: E402
from sim import build as sim_build  # noqa: E402
from tb.common.phv import Layout  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.sim import harness, tables_file  # noqa: E402
from tb.sim.bgp_routes import bgp_prefixes, probes, reach, scale, tables  # noqa: E402

PROGRAM = "overlay_mem"
ROUTES = 1 << 20
SAMPLED = 4000   # prefixes whose ends are probed (four frames each)
RANDOM = 2000    # frames to random destinations
LATENCY = 100    # the memory model's read latency, clocks
SEED = 2026


def filled(nets, total, rng):
    """`nets` and then drawn prefixes, `total` in all, each new: a length drawn from the
    lengths of `nets`, a random network of it."""
    seen = {(int(n.network_address), n.prefixlen) for n in nets}
    lengths = [n.prefixlen for n in nets]
    out = list(nets)
    while len(out) < total:
        length = rng.choice(lengths)
        address = rng.getrandbits(32) >> (32 - length) << (32 - length) if length else 0
        if (address, length) not in seen:
            seen.add((address, length))
            out.append(ipaddress.ip_network((address, length)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--routes", type=int, default=ROUTES, help="the route table's capacity")
    ap.add_argument("--fill", type=int, help="prefixes loaded (default: --routes)")
    ap.add_argument("--sampled", type=int, default=SAMPLED)
    ap.add_argument("--random", type=int, default=RANDOM)
    ap.add_argument("--latency", type=int, default=LATENCY)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_routes.md"))
    args = ap.parse_args()
    fill = args.fill or args.routes
    rng = random.Random(args.seed)
    print(f"bench: seed {args.seed}", flush=True)

    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.program.ScaleBuild",
                    f"-Dexec.args=--out {ROUTES_DIR / 'rtl'} --routes {args.routes}"], cwd=REPO, check=True)
    print(f"bench: {sim_build.build('w64', PROGRAM)}", flush=True)
    layout = sim_build.layout_path("w64", PROGRAM)
    program = Program(layout)
    assert program["route"].size == args.routes

    bgp = bgp_prefixes()
    nets = filled(bgp[:fill], fill, rng)
    destinations = probes(nets, rng, args.sampled, args.random)
    lines = tables(nets, destinations, program["vnet"].size)
    work = ROUTES_DIR / "run"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    (work / "tables.txt").write_text("\n".join(lines) + "\n")
    # The model keeps every session: so does the hardware, its UDP sessions never aging.
    (work / "ctl.txt").write_text("\n".join(["session_set_timeout sessions UDP 65535"] + lines) + "\n")
    frames = [bytes(scale.outbound(0, str(ipaddress.ip_address(d)), UDP(sport=1024 + k % 60000, dport=53 + k // 60000),
                                   Raw(b"q" * 16)))
              for k, d in enumerate(destinations)]
    inputs, sent = harness.write_captures(work, [(0, f) for f in frames])
    print(f"bench: {fill:,} prefixes ({min(fill, len(bgp)):,} of the BGP table), {len(frames):,} frames", flush=True)

    # The clear after reset runs before the socket opens: the load waits for no clear.
    settle = settle_clocks(json.loads(Path(layout).read_text()))
    t0 = time.time()
    load_seconds = simulate(work, "w64", PROGRAM, layout, inputs, args.latency, timeout=6 * 3600,
                            settle=settle)
    sim_seconds = time.time() - t0
    tables_file.load(program, work / "tables.txt")
    exp = harness.expected(program, sent, Layout(layout).header_bytes)
    got = harness.read_outputs(work / "out")
    problems = harness.compare(got, exp) + harness.summary_errors(got.summary, exp, program)
    held = len(program["route"].entries())
    if held != fill:
        problems.append(f"the model holds {held} prefixes, not {fill}")

    passed, vnis, lengths, drops = reach(program, exp)
    summary = got.summary
    punted = {v["name"]: v["frames"] for v in summary["punted"]["reasons"].values()}
    late = sum(n for name, n in punted.items() if name.endswith(".late"))
    route_ports = program["route"].desc["memory"]["ports"]
    route_reads = sum(m["traffic_read_beats"] for m in summary["memories"] if m["port"] in route_ports)
    result = {"routes": args.routes, "fill": fill, "frames": len(frames), "passed": len(passed),
              "drops": dict(drops), "punted": punted, "late": late, "vnis": len(vnis), "lengths": sorted(lengths.items()),
              "load_seconds": load_seconds, "sim_seconds": sim_seconds, "summary_seconds": summary["seconds"],
              "transactions": summary["socket"]["transactions"],
              "frames_per_clock": summary["frames_per_clock"], "latency": summary["latency"],
              "route_reads": route_reads, "problems": problems[:5]}
    print(f"bench: {json.dumps(result)}", flush=True)
    (ROUTES_DIR / "results.json").write_text(json.dumps(result, indent=1))

    extra = fill - min(fill, len(bgp))
    lpm = program["route"].desc["lpm"]
    md = [
        f"# {fill:,} routes of a real routing table in a simulated program",
        "",
        f"The 64-bit `overlay_mem` pipeline built with a route table of {args.routes:,} prefixes "
        f"(`matcha.program.ScaleBuild --routes`: {len(lpm['nodes'])} levels of "
        f"{lpm['fanout']}-slot nodes, {', '.join(f'{n:,}' for n in lpm['nodes'])} nodes, "
        f"{lpm['pointerBits']}-bit pointers; the lowest {lpm['memoryLevels']} in memory, each "
        f"level behind a port of its own, {', '.join(f'`{p}`' for p in route_ports)}), in "
        f"matcha-sim with its memory model answering every read {args.latency} clocks after its "
        f"address. Loaded by `matcha-ctl --cleared` through the simulator's control socket: "
        f"{min(fill, len(bgp)):,} prefixes of the full Internet routing table of "
        "sw/driver/tests/data (in its order, a covering prefix before what it covers)"
        + (f" and {extra:,} more drawn with its prefix lengths (seed {args.seed})" if extra else "")
        + ", every one under routing group 0 to a VNET of its number modulo the program's "
        f"{program['vnet'].size} VNETs, each VNET its own VNI; ENI 0's outbound path; and for each "
        "destination below that a prefix covers, a mapping in the VNET of its longest prefix "
        "(tb/sim/bgp_routes.py), so that a wrong choice is a mapping miss.",
        "",
        f"Traffic: an outbound UDP frame to each of the first and last address of {args.sampled:,} "
        f"sampled prefixes, the addresses just outside them and {args.random:,} random addresses "
        f"(seed {args.seed}), each once. Every output, drop and punt and the summary's counts are "
        "checked against the program model holding the same tables (its LPM looks a key up at "
        "every length; tb/model/test_program.py checks it against a search of every prefix).",
        "",
        "| prefixes held | frames | encapsulated | dropped `route.miss` | other drops | punted | late lookups "
        "| VNIs reached | prefix lengths reached | route reads from memory a frame | frames/clock "
        "| latency min / mean / max (clocks) | load (s) | bus transactions |",
        "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
        f"| {held:,} | {len(frames):,} | {len(passed):,} | {drops.get('route.miss', 0):,} "
        f"| {sum(drops.values()) - drops.get('route.miss', 0):,} "
        f"| {', '.join(f'{n:,} `{name}`' for name, n in sorted(punted.items())) or 0} | {late} | {len(vnis)} "
        f"| {len(lengths)} (/{min(lengths)} to /{max(lengths)}) | {result['route_reads'] / len(frames):.2f} "
        f"| {summary['frames_per_clock']:.4f} "
        f"| {summary['latency']['min']} / {summary['latency']['mean']:.1f} / {summary['latency']['max']} "
        f"| {load_seconds:.0f} | {result['transactions']:,} |",
        "",
        f"The simulator first runs {settle:,} clocks from reset (`--settle-clocks`: the clear of "
        "the tables in memory). Load: wall-clock seconds of matcha-ctl's whole batch (the session "
        f"setting, the {fill:,} prefixes, the ENI path and "
        f"{len(lines) - fill - 8 - program['vnet'].size - 1:,} mappings) over the socket, the "
        "simulator running the pipeline meanwhile: each register access is a socket round trip "
        "and simulated clocks, so it measures this set-up, not the driver on a card "
        "(bench/results/lpm_load.md has the driver's own time for a table of this size). The "
        "prefixes are one run of `table_add` lines into the empty table, which matcha-ctl loads "
        "at once (docs/tables.md, \"Loading an LPM table at once\"). Bus transactions: the "
        "simulator's count of the socket's register accesses. "
        "Route reads from memory: beats the route ports' memories answered from the first input "
        "beat to the last output, over the frames.",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
