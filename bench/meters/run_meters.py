#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Meter benchmark: for every meter unit of a sweep (DIR/<name>/<name>.v, as
matcha.table.MeterSweep writes them), the cocotb bench bench/meters/meter_bench_tb.py in
Verilator (operations per clock and latency with every request on one meter, command
clocks) and Yosys synth_ecp5 (tools/synth_ecp5.sh); writes a Markdown report.

Exits non-zero if a unit fails (a wrong colour, fewer than one operation per clock, a
latency that varies or differs from the descriptor's, a synthesis that fails); the report
is written in any case, failed units marked.

usage: python bench/meters/run_meters.py [--sweep build/bench/meter-sweep/rtl]
           [--units meters_n256,...] [--requests 4000] [--out bench/results/meters.md]
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import git_commit  # noqa: E402
from tb.common import cocotb_util, sim  # noqa: E402

RESOURCES = ("LUT4", "TRELLIS_FF", "DP16KD", "MULT18X18D", "CCU2C")
COMMAND = "bash bench/meters/run.sh"


def problems(r):
    """What is wrong with a unit's bench numbers (empty if nothing)."""
    out = []
    for name, s in r["streams"].items():
        if s["ops_per_clock"] < 1:
            out.append(f"{name}: {s['ops_per_clock']:.4f} operations per clock")
        if s["latency"] != [r["latency_declared"]]:
            out.append(f"{name}: latency {s['latency']}, declared {r['latency_declared']}")
    c = r["commands"]
    if c["half_load_latency"] != [r["latency_declared"]]:
        out.append(f"half load: latency {c['half_load_latency']}")
    return out


def synthesize(sweep, synth, name):
    env = dict(os.environ, RTL_DIR=str(sweep), SYNTH_DIR=str(synth), TOP=name)
    rc = subprocess.run(["nice", "-n", "10", "tools/synth_ecp5.sh", name], cwd=REPO,
                        env=env).returncode
    stat = synth / name / "stat.txt"
    if rc or not stat.exists():
        return None
    # `stat` lists cell counts per module and the design's totals last; the last count of
    # each cell type is the total (as tools/synth_ecp5.sh reads it).
    counts = {}
    for line in stat.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return {k: counts.get(k, 0) for k in RESOURCES}


def span(values):
    return str(values[0]) if len(values) == 1 else f"{values[0]}..{values[-1]}"


def report(rows, failed, commit):
    lines = [
        "# Meter units",
        "",
        "One meter unit (`MeterTableUnit`: the meters, their control window and the "
        "self-describing block; rates 32 bits, bursts and levels 40 bits, a 32-bit time base "
        "ticking every clock), in Verilator and synthesized alone by Yosys `synth_ecp5`. "
        "docs/tables.md, \"Meters\", describes the unit.",
        "",
        "- **ops/clock**: with a request every clock, all on one meter (so every request "
        "reads the update of the one before it), results between the first and the last "
        "result per clock; every colour checked against the RFC model (tb/model/meter.py).",
        "- **latency**: clocks from a request to its colour, for every request.",
        "- **WRITE, READ, CLEAR**: clocks STATUS.busy stays set, on an idle unit; under half "
        "load (a request every other clock on one meter, WRITEs to another meter back to "
        "back) the WRITEs and the requests' operations per clock.",
        "",
        "| unit | meters | ops/clock (trTCM blind, srTCM aware) | latency | WRITE | READ "
        "| CLEAR | WRITE at half load | ops/clock at half load | "
        + " | ".join(RESOURCES) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
        + " | ".join(["---:"] * len(RESOURCES)) + " |",
    ]
    for r in rows:
        streams = list(r["streams"].values())
        c = r["commands"]
        res = r.get("resources")
        lines.append(
            f"| {r['name']} | {r['meters']} | "
            + " / ".join(f"{s['ops_per_clock']:.4f}" for s in streams)
            + f" | {span(sorted({x for s in streams for x in s['latency']}))} "
            f"| {span(c['write_idle'])} | {span(c['read_idle'])} | {c['clear_idle']} "
            f"| {span(c['write_under_half_load'])} | {c['half_load_ops_per_clock']:.4f} | "
            + " | ".join(str(res[k]) if res else "FAIL" for k in RESOURCES) + " |")
    if rows:
        lines += ["", "Colours of the one-meter streams (green / yellow / red): " + "; ".join(
            f"{r['name']} " + ", ".join(
                f"{name} {s['colours']['green']} / {s['colours']['yellow']} / {s['colours']['red']}"
                for name, s in r["streams"].items()) for r in rows) + "."]
    if failed:
        lines += ["", "Failed: " + "; ".join(failed) + "."]
    lines += ["", f"Produced by `{COMMAND}` (from the repository root, after `make setup`), "
              f"{datetime.date.today().isoformat()}, with the RTL of commit {commit}; "
              f"{rows[0]['requests'] if rows else 0} requests per stream, seed "
              f"{rows[0]['seed'] if rows else 0}."]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", default=str(REPO / "build/bench/meter-sweep/rtl"))
    ap.add_argument("--units", help="comma-separated sweep names (default: all)")
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-synth", action="store_true", help="skip Yosys")
    ap.add_argument("--out", default=str(REPO / "bench/results/meters.md"))
    args = ap.parse_args()

    sweep = Path(args.sweep).resolve()
    raw = REPO / "build/bench/meters"
    synth = REPO / "build/bench/meter-sweep/synth"
    raw.mkdir(parents=True, exist_ok=True)
    sim.RTL_DIR = sweep
    sim.SIM_DIR = REPO / "build/sim/meter-sweep"
    names = sorted((d.name for d in sweep.iterdir() if (d / f"{d.name}.v").exists()),
                   key=lambda n: (len(n), n))
    if args.units:
        names = [n for n in names if n in args.units.split(",")]
    if not names:
        sys.exit(f"bench: no meter unit in {sweep}")
    rows, failed = [], []
    for name in names:
        out = raw / f"{name}.json"
        out.unlink(missing_ok=True)
        try:
            sim.run(name, name, "meter_bench_tb", run_name="meter_bench", seed=args.seed,
                    env={"MATCHA_BENCH_OUT": out, "MATCHA_BENCH_REQUESTS": args.requests},
                    pythonpath=[HERE], probed=cocotb_util.BusyMonitor.PROBED)
        except AssertionError as e:
            failed.append(f"{name}: {str(e).splitlines()[-1]}")
        if not out.exists():
            failed.append(f"{name}: no bench results")
            continue
        r = json.loads(out.read_text())
        r["name"] = name
        failed += [f"{name}: {p}" for p in problems(r)]
        if not args.no_synth:
            r["resources"] = synthesize(sweep, synth, name)
            if r["resources"] is None:
                failed.append(f"{name}: synthesis failed")
        out.write_text(json.dumps(r, indent=1))
        rows.append(r)
        print(f"bench: {name}: {json.dumps({k: r[k] for k in ('streams', 'commands')})}",
              flush=True)
    text = report(rows, failed, git_commit())
    Path(args.out).write_text(text)
    print(text)
    if failed:
        sys.exit("bench: " + "; ".join(failed))


if __name__ == "__main__":
    main()
