#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How full a table of sessions in buckets can get: the share of new flows refused because
every bucket they may use is full, once the table holds a given share of its slots, for
the overlay's memory-backed session table (six sessions a 128-byte bucket of two beats, one
bucket a key: docs/sessions.md, "Sessions in memory"), for the tested unit's buckets of
three (one 64-byte beat) and for two buckets of three a key, the emptier taken. Keys land in buckets uniformly
at random (what the session hash gives keys that differ in any bits, docs/sessions.md,
"Slots"); the table is filled without refusals counted, then probed with fresh keys. The
share depends on the load, not on the number of buckets, so a table of 2^15 buckets stands
for one of 2^24 to 2^26. Writes a Markdown report (default
bench/results/session_capacity.md), with the aging scanner's sweep time and read bandwidth.

usage: python bench/scale/session_capacity.py [--buckets 32768] [--probes 20000] [--seed 1]
           [--out bench/results/session_capacity.md]
"""

import argparse
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402

LAYOUTS = ((6, 1), (3, 1), (3, 2))  # (sessions a bucket, buckets a key)
LOADS = (0.16, 0.25, 0.32, 0.5, 0.64)
SESSIONS = 32 * 2**20
BUCKET_BYTES = 128  # two beats of a 512-bit port
BUCKET_SESSIONS = 6
CLOCK_HZ = 250_000_000  # Corundum's core clock


def refused_share(slots, choices, load, buckets, probes, rng):
    """Share of fresh keys refused once `load` of the slots are taken."""
    fill = [0] * buckets
    held, target = 0, int(load * slots * buckets)
    while held < target:
        b = min((rng.randrange(buckets) for _ in range(choices)), key=fill.__getitem__)
        if fill[b] < slots:
            fill[b] += 1
            held += 1
    refused = sum(all(fill[rng.randrange(buckets)] >= slots for _ in range(choices))
                  for _ in range(probes))
    return refused / probes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--buckets", type=int, default=1 << 15)
    ap.add_argument("--probes", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "session_capacity.md"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    md = [
        "# Sessions in buckets: new flows refused by load",
        "",
        f"A model of bucket filling (`bench/scale/session_capacity.py`, {args.buckets:,} buckets, "
        f"{args.probes:,} fresh keys probed per cell, seed {args.seed}): the share of new flows "
        "that find every bucket they may use full, when the table holds the given share of its "
        "slots. Six a bucket, one bucket a key is the overlay's layout (`overlay_mem`: 128-byte "
        "buckets, two beats of its 512-bit port); three a bucket is `matcha_mem_session_table`'s "
        "unit on one 64-byte beat.",
        "",
        "| sessions a bucket | buckets a key | " + " | ".join(f"{int(100 * x)} % full" for x in LOADS) + " |",
        "| ---: | ---: | " + " | ".join("---:" for _ in LOADS) + " |",
    ]
    for slots, choices in LAYOUTS:
        cells = [f"{100 * refused_share(slots, choices, x, args.buckets, args.probes, rng):.2f} %" for x in LOADS]
        md.append(f"| {slots} | {choices} | " + " | ".join(cells) + " |")
    md += [
        "",
        f"At {SESSIONS // 2**20}M sessions, buckets of {BUCKET_BYTES} bytes ({BUCKET_SESSIONS} sessions each) take:",
        "",
        "| buckets | memory | load at 32M sessions |",
        "| ---: | ---: | ---: |",
    ]
    for bits in (23, 24, 25):
        md.append(f"| 2^{bits} | {(1 << bits) * BUCKET_BYTES // 2**30} GiB | "
                  f"{100 * SESSIONS / (BUCKET_SESSIONS << bits):.0f} % |")
    md += [
        "",
        "The aging scanner's sweep (docs/sessions.md, \"Aging, CLEAR and reset\"): a bucket read every "
        "SCAN_INTERVAL of the memory's answers, so 1/SCAN_INTERVAL of the reads the memory serves: "
        f"a bucket every two clocks at {CLOCK_HZ // 10**6} MHz on a memory that keeps up (its two "
        "beats), a third of the clocks' on a DDR4 channel serving random reads (docs/tables.md, "
        "\"Memory bandwidth per lookup\": one lookup every 2 to 3 clocks; a bucket's two beats are "
        "two bursts of one row, one random access).",
        "",
        "| buckets | memory's reads per second | SCAN_INTERVAL | sweep (s) | bucket reads per second "
        "| read bandwidth |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keeps_up, ddr4 = CLOCK_HZ / 2, CLOCK_HZ / 3
    for bits, served, interval in ((23, keeps_up, 15), (25, keeps_up, 15), (25, keeps_up, 3),
                                   (25, ddr4, 15), (25, ddr4, 6)):
        reads = served / interval
        md.append(f"| 2^{bits} | {served / 1e6:.1f} M | {interval} | {(1 << bits) / reads:.2f} | "
                  f"{reads / 1e6:.1f} M | {reads * BUCKET_BYTES / 1e9:.2f} GB/s |")
    md.append("")
    write_report("\n".join(md) + "\n", args.out, invocation(), [])


if __name__ == "__main__":
    main()
