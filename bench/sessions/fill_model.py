#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How full the session table gets when every frame is a new flow, from the reference
model's table (tb/model/session.py: the hardware's hash, ways and first-free placement),
for two sets of keys, and for the first also with the exact tables' CRC index in place of
the session hash (what the session table used before it, docs/sessions.md "Slots"):

- `sequential`: the overlay benchmark's flows (bench/overlay/overlay_bench_tb.py): flow n
  from the VM 192.168.0.1 of ENI 5 to 192.168.1.(n mod 16 + 1) port 80, source port
  10,000 + n div 16, as a traffic generator counts them up;
- `random`: random zones, addresses and ports.

For each it gives the sessions held after each batch of SYNs and each way's occupancy, and
how many slots of each way the offered keys hash to at all (a way whose index bits, as
functions of the bits the keys vary in, are not independent reaches fewer than all its
slots). The table size and ways are the Corundum-scale overlay's (layout.json).

usage: python bench/sessions/fill_model.py [--flows 73024] [--first 1024] [--batch 4000] [--seed 1]
                                           [--out bench/results/session_fill_model.md]
"""

import argparse
import random
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import git_commit  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.model.hashing import exact_index  # noqa: E402
from tb.model.session import SYN, TCP, Packet, SessionModel, canonical_key  # noqa: E402
from tb.pipeline.traffic import ip_int  # noqa: E402

LAYOUT = REPO / "build" / "rtl" / "w512" / "layout-overlay.json"


class CrcIndexedSessions(SessionModel):
    """The model's table with the exact tables' index: the CRC's bits themselves."""

    def candidates(self, key):
        return [w * self.slots + exact_index(key, self.key_bits, w, self.slots)
                for w in range(self.ways)]


def sequential_flows(n):
    src = ip_int("192.168.0.1")
    for k in range(n):
        yield Packet(5, TCP, src, ip_int(f"192.168.1.{k % 16 + 1}"), 10000 + k // 16, 80, SYN)


def random_flows(n, rng):
    for _ in range(n):
        yield Packet(rng.getrandbits(10), TCP, rng.getrandbits(32), rng.getrandbits(32),
                     rng.randrange(1024, 65536), rng.randrange(1, 65536), SYN)


def fill(table, flows, first, batch):
    """[(flows offered, sessions held, learned of the batch, batch)] after a first batch of
    `first` flows and then every `batch`, and the slots each way's hash reaches."""
    rows, learned, reached, size, end = [], 0, [set() for _ in range(table.ways)], first, first
    for k, p in enumerate(flows, 1):
        key = canonical_key(p, table.addr_bits)[0]
        for w, slot in enumerate(table.candidates(key)):
            reached[w].add(slot)
        learned += table.packet(p, 0).learned
        if k == end:
            rows.append((k, table.occupancy, learned, size))
            learned, size, end = 0, batch, end + batch
    return rows, [len(s) for s in reached]


def section(name, table, rows, reached):
    slots = table.size // table.ways
    per_way = [sum(1 for i in table.entries if i // slots == w) for w in range(table.ways)]
    return [
        f"## {name}",
        "",
        "| flows offered | sessions held | learned of the last batch |",
        "| ---: | ---: | ---: |",
        *[f"| {k:,} | {held:,} | {100 * got / n:.1f} % |" for k, held, got, n in rows],
        "",
        f"- Sessions per way at the end: {', '.join(f'{n:,}' for n in per_way)} "
        f"(of {slots:,} each).",
        f"- Slots of each way the offered keys hash to: "
        f"{', '.join(f'{n:,}' for n in reached)}.",
        "",
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # The overlay benchmark's batches (bench/results/session_fill.md): 1,024 flows, then
    # 4,000 at a time.
    ap.add_argument("--flows", type=int, default=73024)
    ap.add_argument("--first", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="write the Markdown here")
    args = ap.parse_args(argv)
    stage = Program(LAYOUT).sessions["sessions"]
    desc = stage.table
    lines = [
        "# The session table's fill under new flows, from the model",
        "",
        f"{desc.size:,} sessions in {desc.ways} ways (the Corundum-scale overlay), each "
        "SYN of a new flow learned in the first free way of its key's slots, none moved "
        "(docs/sessions.md). Computed by the reference model, whose table the hardware's "
        "equals frame by frame in every test.",
        "",
    ]
    for name, model, flows in (
            ("sequential, the session hash", SessionModel, sequential_flows(args.flows)),
            ("sequential, the CRC index", CrcIndexedSessions, sequential_flows(args.flows)),
            ("random, the session hash", SessionModel,
             random_flows(args.flows, random.Random(args.seed)))):
        table = model(desc.size, desc.ways, desc.addr_bits, stage.inputs["zone"][1])
        rows, reached = fill(table, flows, args.first, args.batch)
        lines += section(name, table, rows, reached)
    lines += ["    python " + shlex.join(["bench/sessions/fill_model.py", *(argv or sys.argv[1:])])
              + f"    # commit {git_commit()}", ""]
    text = "\n".join(lines)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
