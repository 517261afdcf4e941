#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How long the driver takes to load a million CA→PA mappings (and SONiC DASH's 8M) into a memory-backed exact
table shaped as the overlay's (docs/overlay.md, "Mappings in memory": 42-bit keys, 80 bits
of data, six 18-byte entries a 128-byte bucket, three in each 64-byte beat, as many buckets as
mappings, and the on-chip stash the overlay's generator gives it, 4 * max(4, buckets >> 14)
entries, for the keys of full buckets): the C
test `mem_exact_mappings_at_scale` (sw/driver/tests/test_mem_exact.c) with
MATCHA_MAPPINGS set to each of `--mappings`, built without the sanitizers the test suite
uses, run `--runs` times with seeds 1, 2, ... Each run adds distinct random keys in a random order against the
tests' model of the hardware's registers, memory and stash (every register access a function
call, no bus), then checks every key against the model's lookup, memory and stash, deletes a
random tenth and adds it back. The figure is the driver's own work per mapping, not a
card's bus. Writes a Markdown report (default bench/results/mapping_load.md).

usage: python bench/scale/mapping_load.py [--mappings 1048576,8388608] [--runs 3]
                                          [--out bench/results/mapping_load.md]
"""

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.lpm_load import c_test_runs  # noqa: E402

ADDED = re.compile(r"(\d+) mappings in (\d+) buckets added in ([0-9.]+) s with (\d+) register "
                   r"reads, (\d+) writes, (\d+) commands; (\d+) placed in the stash of (\d+) "
                   r"entries, (\d+) refused; (\d+) deleted and added again \(then (\d+) in the stash\)")


def uncommitted():
    """What of the measured code (the driver, its tests, this script) differs from HEAD, as
    `git status --porcelain` lists it; empty when all of it is committed."""
    try:
        return subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--", "sw/driver",
                               "bench/scale/mapping_load.py"], capture_output=True, text=True,
                              check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mappings", default=f"{1 << 20},{1 << 23}", help="table sizes, comma-separated")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "mapping_load.md"))
    args = ap.parse_args()
    sizes = [int(n) for n in args.mappings.split(",")]
    rows, problems = [], []
    for size in sizes:
        found, failed = c_test_runs("mem_exact_mappings_at_scale", ADDED, args.runs, {"MATCHA_MAPPINGS": str(size)})
        rows += [(seed, *(int(m[i]) for i in (1, 2)), float(m[3]), *(int(m[i]) for i in range(4, 12)))
                 for seed, m in found]
        problems += [f"{size:,} mappings, {p}" for p in failed]
    md = "# Loading millions of mappings into a memory-backed exact table\n\n"
    md += (f"The driver adds {' or '.join(f'{n:,}' for n in sizes)} CA→PA mappings (SONiC DASH asks a card "
           "for 8M) with distinct random keys, in a "
           "random order, to a memory-backed exact table shaped as the overlay's `mapping` "
           "(42-bit key of VNET and inner IPv4, 80 bits of underlay IPv4 and MAC, six 18-byte "
           "entries a 128-byte bucket, three in each 64-byte beat, as many buckets as mappings, and "
           "the on-chip stash the overlay's generator gives it: 4 × max(4, buckets / 2^14) entries, "
           "4 ways of an exact table): the C test "
           "`mem_exact_mappings_at_scale` (sw/driver/tests/test_mem_exact.c) built without the "
           "sanitizers the test suite uses, against the tests' model of the hardware's registers, "
           "memory and stash. A register access there is a function call, so the time is the driver's "
           "own work (the shadow it keeps and the entry words it writes); on a card each access "
           "is a bus transaction, counted here. A key whose bucket is full goes to the stash, placed "
           "as in an exact table (cuckoo moves, make-before-break), and is refused only when the "
           "stash has no room either (docs/tables.md, \"Load factor\", \"The stash\").\n\n")
    if rows:
        md += ("| seed | mappings | buckets | stash entries | load time (s) | mappings a second | "
               "register reads a mapping | register writes a mapping | commands a mapping | placed "
               "in the stash | refused | deleted and added again (then in the stash) |\n")
        md += "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
        for seed, n, buckets, secs, reads, writes, commands, stashed, stash, refused, again, then in rows:
            md += (f"| {seed} | {n:,} | {buckets:,} | {stash:,} | {secs:.2f} | {n / secs:,.0f} | "
                   f"{reads / n:.2f} | {writes / n:.2f} | {commands / n:.2f} | {stashed:,} "
                   f"({100 * stashed / n:.3f} %, {100 * stashed / stash:.0f} % of the stash) | "
                   f"{refused:,} | {again:,} ({then:,}) |\n")
        medians = "; ".join(f"{statistics.median(r[3] for r in rows if r[1] == n):.2f} s for {n:,} mappings"
                            for n in sizes if any(r[1] == n for r in rows))
        md += (f"\nMedian load time: {medians}. In every run "
               "each key was where the model's lookup finds it (its bucket, else the stash) with "
               "its action and data, each refused key's bucket full and its four stash slots "
               "taken, after the load and after the tenth was deleted and added back with new "
               "data.\n\n")
    changed = [line[3:] for line in uncommitted() if line.strip()]
    if changed:
        folders = {}
        for path in changed:
            folders.setdefault(str(Path(path).parent), []).append(path)
        md += ("The code measured is the working tree's: it has changes not committed on top "
               "of the commit named below, in " +
               ", ".join(f"`{paths[0]}`" if len(paths) == 1 else f"`{folder}/` ({len(paths)} files)"
                         for folder, paths in sorted(folders.items())) + ".\n\n")
    write_report(md, args.out, invocation(), problems)


if __name__ == "__main__":
    main()
