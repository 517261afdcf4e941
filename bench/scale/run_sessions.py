#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The memory-backed session table under 100 % new flows: builds the units of
matcha.table.MemSessionSweep (2^14 buckets of three sessions in 64-byte buckets on a
512-bit port, results 512 clocks after the packet, 16, 64 or 128 buckets tracked on chip)
into build/bench/mem-session-sweep/rtl, runs bench/scale/session_bench_tb.py on each, and
writes a Markdown report (default bench/results/scale_sessions.md) of sessions learned per
clock, packets left busy, and memory reads and writes per new session, for each memory
latency and offered rate.

usage: python bench/scale/run_sessions.py [--latencies 100,300] [--rates 1,0.25,0.1]
           [--flows 4096] [--out bench/results/scale_sessions.md]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402

TOPLEVEL = "matcha_mem_session_table"
SWEEP = REPO / "build" / "bench" / "mem-session-sweep"
BUCKETS = 1 << 14


def build_units():
    """The units of MemSessionSweep, their RTL in SWEEP/rtl."""
    shutil.rmtree(SWEEP, ignore_errors=True)
    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.table.MemSessionSweep",
                    f"-Dexec.args=--out {SWEEP / 'rtl'}"], cwd=REPO, check=True)
    return sorted((d.name for d in (SWEEP / "rtl").iterdir()), key=lambda n: int(n.rsplit("_t", 1)[1]))


def run_unit(name, raw, bench, env):
    """One cocotb bench of session_bench_tb on one unit, in its own process (the sim module
    reads MATCHA_RTL_DIR at import), with `env` besides MATCHA_BENCH_OUT and
    MATCHA_BENCH_BUCKETS. Returns (its results.json, the last line of its error or [])."""
    out = raw / name
    out.mkdir(parents=True)
    env = {"MATCHA_BENCH_OUT": str(out), "MATCHA_BENCH_BUCKETS": str(BUCKETS), **env}
    code = ("from tb.common import sim\n"
            f"sim.run({name!r}, {TOPLEVEL!r}, 'session_bench_tb', {bench!r}, run_name={bench!r}, "
            f"env={env!r}, pythonpath=[{str(HERE)!r}])\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       env=dict(os.environ, MATCHA_RTL_DIR=str(SWEEP / "rtl"),
                                MATCHA_SIM_DIR=str(SWEEP / "sim")))
    if r.returncode:
        return None, (r.stdout + r.stderr).strip().splitlines()[-1:]
    return json.loads((out / "results.json").read_text()), []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latencies", default="100,300")
    ap.add_argument("--rates", default="1,0.25,0.1")
    ap.add_argument("--flows", type=int, default=4096)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_sessions.md"))
    args = ap.parse_args()
    names = build_units()
    raw = SWEEP / "results"
    rows, problems = [], []
    for name in names:
        runs, errors = run_unit(name, raw, "bench_learning", {
            "MATCHA_BENCH_FLOWS": str(args.flows), "MATCHA_BENCH_LATENCIES": args.latencies,
            "MATCHA_BENCH_RATES": args.rates})
        problems += [f"{name}: {e}" for e in errors]
        rows += [(name, r) for r in runs or []]
    seeds = sorted({str(r["seed"]) for _, r in rows})
    md = [
        "# Sessions learned in memory under 100 % new flows",
        "",
        f"`matcha_mem_session_table` (docs/sessions.md, \"Sessions in memory\": {BUCKETS:,} "
        f"buckets of three sessions, {3 * BUCKETS:,} in all, one 64-byte bucket a beat of a "
        "512-bit port, results 512 clocks after the packet, dimensioned for a memory latency of "
        "320) built with 16, 64 and 128 buckets tracked on chip (`matcha.table.MemSessionSweep`), "
        "in Verilator, cocotb bench `bench/scale/session_bench_tb.py`: for each memory latency "
        f"and offered rate, {args.flows:,} TCP SYNs of new random flows (seed {', '.join(seeds)}), "
        "one every 1/rate clocks, on an empty table, its aging scanner off. The memory "
        "(`tb/common/late_memory.py`, `snapshot`) answers each read a fixed latency after its "
        "address with the bucket as it was then, so a read misses every write that lands while "
        "it is out; its writes are answered within a few clocks. Every result is checked "
        "against the reference model (tb/model/session.py, MemSessionModel).",
        "",
        "| tracked | memory latency | offered per clock | learned | learned per clock | busy "
        "| refused (bucket full) | late | reads per new session | writes per new session |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, r in rows:
        md.append(f"| {name.rsplit('_t', 1)[1]} | {r['latency']} | {r['offered_per_clock']:.2f} "
                  f"| {r['learned']:,} | {r['learned_per_clock']:.3f} | {r['busy']:,} | {r['refused']:,} "
                  f"| {r['late']:,} | {r['reads'] / max(r['learned'], 1):.2f} "
                  f"| {r['writes'] / max(r['learned'], 1):.2f} |")
        if r["late"]:
            problems.append(f"{name}, latency {r['latency']}: {r['late']} late results")
    md += [
        "",
        "Learned per clock: sessions learned over the clocks from the first SYN to one "
        "offered interval past the last. Busy: SYNs whose new session found no tracked "
        "bucket free to hold its write (all were taken by writes a read still out might not "
        "have seen): they leave `busy`, change nothing and are counted (`MEMS_WIN_BUSY`); "
        "the stage punts them. A write stays tracked from its decision until it is answered "
        "and every read out at that moment is back, about one memory latency here, so a "
        "table sustains about tracked ÷ latency new sessions a clock; a memory whose writes "
        "take as long as its reads doubles the time. Refused: the SYN's bucket held three "
        "sessions. Reads and writes per new session: the memory's, over the sessions "
        "learned (a busy or refused SYN costs a read too).",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
