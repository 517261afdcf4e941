#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The memory-backed exact table at one lookup a clock against memories of DRAM's and HBM's
latency and bandwidth: runs bench/scale/table_bench_tb.py on matcha_mem_exact_table
(docs/tables.md, "Memory-backed exact tables": 1024 buckets of 4 entries, results 512
clocks after the key, tests' unit) and writes a Markdown report (default
bench/results/scale_table.md) of results per clock, lookups answered per clock and late
lookups for each memory.

usage: python bench/scale/run_table.py [--memories LATENCY:BUSY,...] [--out bench/results/scale_table.md]
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from tb.common import sim  # noqa: E402

MEMORIES = "100:0,300:0,100:0.5,300:0.5,300:0.67"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", default=MEMORIES)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_table.md"))
    args = ap.parse_args()
    raw = REPO / "build" / "bench" / "scale_table"
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    problems = []
    try:
        sim.run("tables", "matcha_mem_exact_table", "table_bench_tb", run_name="bench",
                env={"MATCHA_BENCH_OUT": raw, "MATCHA_BENCH_MEMORIES": args.memories}, pythonpath=[HERE])
    except AssertionError as e:
        problems.append(str(e).splitlines()[0])
    runs = json.loads((raw / "results.json").read_text()) if (raw / "results.json").exists() else []
    if not runs:
        problems.append("no results")
    md = [
        "# The memory-backed exact table at one lookup a clock",
        "",
        "`matcha_mem_exact_table` (docs/tables.md, \"Memory-backed exact tables\": 32-bit keys, "
        "1024 buckets of 4 entries on a 256-bit port, results 512 clocks after the key, "
        "dimensioned for a memory latency of 320) in Verilator, cocotb bench "
        "`bench/scale/table_bench_tb.py`: the table filled to its load factor (30 %), then "
        "for each memory a run of lookups one a clock, back to back, half of present keys. "
        "The memory (`tb/common/late_memory.py`) answers each read a fixed latency after its "
        "address and holds its answers back in a random share of the clocks (`busy`), so it "
        "serves at most 1 − busy reads a clock: 0.5 is about a DDR4-2400 channel's random "
        "64-byte reads at 250 MHz and 0.67 the slower end of them (docs/tables.md, \"Memory "
        "bandwidth per lookup\"). Every result not flagged late is checked against the "
        "oracle; late results are counted by the table (`MEMX_WIN_LATE`) and here.",
        "",
        "| memory latency (clocks) | busy | lookups | results per clock | answered per clock "
        "| answered per clock, second half | late | late, counted by the table | memory reads |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in runs:
        md.append(f"| {r['latency']} | {r['busy']} | {r['lookups']:,} | {r['results_per_clock']:.3f} "
                  f"| {r['answered_per_clock']:.3f} | {r['answered_second_half']:.3f} | {r['late']:,} "
                  f"| {r['late_counted']:,} "
                  f"| {r['reads']:,} |")
        if r["late"] != r["late_counted"]:
            problems.append(f"latency {r['latency']}, busy {r['busy']}: {r['late']} late results, "
                            f"the table counted {r['late_counted']}")
    md += [
        "",
        "Results per clock: every lookup leaves exactly 512 clocks after its key, answered or "
        "late, so results come one a clock whatever the memory does. Answered per clock: the "
        "results that are not late, over the same clocks. Memory reads: the reads the table "
        "issued in the run (those answered after their lookup's result was due are dropped). "
        "The table issues a read while the reads out before it could be back in time at the "
        "pace it has learned the memory answers at (docs/tables.md, \"The pace of reads\"): "
        "it starts at one answer a clock, and the runs follow one another in one simulation, "
        "so each starts at the pace the one before left. On a memory slower than the lookups "
        "the first late answers come a table latency after the first reads that could not be "
        "served, and the queue issued until then drains late, so the second half of a run "
        "shows the settled share: the memory's rate is at most 1 − busy reads a clock. "
        "The lookups the memory cannot serve leave late; the table is to be fed at no more "
        "lookups a clock than its memory serves reads to answer them all: a DDR4 channel's "
        "table one lookup every two or three clocks (the 64-bit pipeline sends one every 30, "
        "bench/results/scale.md), or a copy or a share of the buckets per channel.",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
