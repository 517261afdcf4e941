#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long the driver takes to load a full Internet routing table at once into an LPM table
of 2^20 prefixes with its two lowest levels in memory: the C test `lpm_full_table_fills_a_million`
(sw/driver/tests/test_lpm.c; docs/tables.md, "LPM levels in memory"), built without the
sanitizers the test suite uses, run `--runs` times with seeds 1, 2, ... Each run adds the
901,899 real prefixes and 146,677 drawn ones in a random order between matcha_lpm_load_begin
and matcha_lpm_load_end against the tests' model of the hardware's registers and memories
(every register access a function call, no bus), so the figure is the driver's own work per
prefix: the tree and the node words it writes, not a card's bus. Writes a Markdown report (default bench/results/lpm_load.md).

usage: python bench/scale/lpm_load.py [--runs 3] [--out bench/results/lpm_load.md]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402

BUILD = REPO / "build" / "bench" / "sw"
LOADED = re.compile(r"(\d+) prefixes \((\d+) real\) loaded in ([0-9.]+) s with (\d+) register reads, "
                   r"(\d+) writes, (\d+) commands; (\d+) probes")


def c_test_runs(test, pattern, runs, env=None):
    """Runs the C test `test` of the driver's suite, built without its sanitizers (at -O2),
    with seeds 1 to `runs` (and `env`); returns the matches of `pattern` in the runs that
    passed, with their seeds, and a problem for each run that did not."""
    # The suite's own binary links the sanitizers; this one is the same sources at -O2.
    subprocess.run(["make", "-s", "-C", str(REPO / "sw" / "driver"), f"BUILD={BUILD}", "SAN=",
                    str(BUILD / "matcha_tests")], check=True)
    found, problems = [], []
    for seed in range(1, runs + 1):
        run = subprocess.run([str(BUILD / "matcha_tests"), test], capture_output=True, text=True,
                             env={**os.environ, **(env or {}), "MATCHA_SEED": str(seed)})
        m = pattern.search(run.stdout)
        if run.returncode or not m or "1 passed, 0 failed" not in run.stdout:
            problems.append(f"seed {seed}: the test failed:\n\n```\n{run.stdout[-2000:]}{run.stderr[-2000:]}\n```")
            continue
        found.append((seed, m))
    return found, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "lpm_load.md"))
    args = ap.parse_args()
    found, problems = c_test_runs("lpm_full_table", LOADED, args.runs)
    rows = []
    for seed, m in found:
        n, real, secs = int(m[1]), int(m[2]), float(m[3])
        reads, writes, commands, probes = (int(m[i]) for i in range(4, 8))
        rows.append((seed, n, real, secs, reads, writes, commands, probes))
    md = "# Loading a full routing table into the LPM\n\n"
    md += ("The driver loads a full Internet routing table (901,899 prefixes) and 146,677 more "
           "prefixes drawn with its prefix lengths into an LPM table of 2^20 prefixes, 9-slot "
           "nodes, 20-bit pointers, its two lowest levels in memory (docs/tables.md, \"LPM levels "
           "in memory\"), at once (added in a random order between `matcha_lpm_load_begin` and "
           "`matcha_lpm_load_end`, docs/tables.md \"Loading an LPM table at once\"): the C test "
           "`lpm_full_table_fills_a_million` (sw/driver/tests/test_lpm.c) built without the "
           "sanitizers the test suite uses, against the tests' model of the hardware's registers "
           "and memories. A register access there is a function call, so the time is the "
           "driver's own work (the tree and the node words it builds); on a card each access is "
           "a bus transaction, counted here.\n\n")
    if rows:
        md += ("| seed | prefixes | load time (s) | prefixes a second | register reads a prefix "
               "| register writes a prefix | commands a prefix | probes checked |\n")
        md += "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        for seed, n, real, secs, reads, writes, commands, probes in rows:
            md += (f"| {seed} | {n:,} | {secs:.1f} | {n / secs:,.0f} | {reads / n:.1f} | "
                   f"{writes / n:.1f} | {commands / n:.2f} | {probes:,} |\n")
        median = statistics.median(r[3] for r in rows)
        md += (f"\nMedian load time: {median:.1f} s for {rows[0][1]:,} prefixes. Every run's "
               "answers (both ends of 16,384 sampled prefixes, just past them and random keys, "
               "full, after a random tenth is deleted and after it is added back one by one) were "
               "the per-length oracle's. The same prefixes added one by one took 55.0 register "
               "writes and 3.72 commands a prefix and a median 5.8 s (this report as of commit "
               "5df036b).\n\n")
    write_report(md, args.out, invocation(), problems)


if __name__ == "__main__":
    main()
