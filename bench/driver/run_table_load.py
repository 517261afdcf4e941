#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table-load cost of the C driver, and the table-load rate through the simulator.

1. Bus transactions per entry (reads and writes of 32-bit registers) for each table kind of
   the built-in program, counted on the driver's recording bus (tb/common/driver.py:
   answers from the program's self-describing block, STATUS never busy, so every command
   costs one STATUS read): exact adds into an emptying-to-full table (free slots first,
   cuckoo moves near the end), LPM adds of nested prefixes, ternary adds in priority order
   (appended, nothing moves) and in reverse (each shifts every entry already there), and a
   ternary rule with a port range expanded to prefixes.
2. Entries per second through the `sim:` path: a batch of N entries per table loaded by
   matcha-ctl into a socket-only matcha-sim (w64), and the socket transactions the
   simulator served (its summary.json; real STATUS polls included). The rate is timed on
   a batch of rounds of (the N entries, table_clear), less a batch of as many
   table_clears alone: opening the device (which adopts every table) costs more than one
   round of a fast batch, so one round's time would be lost in its noise.

Entries are random, seeded; the ones kept are those the driver places (checked on the
recording bus first, so the batch never stops on a full table).

usage: python bench/driver/run_table_load.py [--entries 64] [--seed 1] [--repeat 9] [--rounds 10]
                                             [--out bench/results/table_load.md]
"""

import argparse
import ipaddress
import json
import random
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import git_commit  # noqa: E402
from tb.common import driver as drv  # noqa: E402
from tb.common import sim  # noqa: E402
from tb.model.program import Program  # noqa: E402
from tb.pipeline.control import snapshot_for  # noqa: E402
from tb.sim import harness  # noqa: E402

CONFIG = "w64"


class CountingBus:
    """Counts the reads and writes the driver makes on a recording bus."""

    def __init__(self, program):
        self.bus = drv.RecordingBus(snapshot_for(program.desc))
        self.reads = self.writes = 0

    def read32(self, addr):
        self.reads += 1
        return self.bus.read32(addr)

    def write32(self, addr, value):
        self.writes += 1
        self.bus.write32(addr, value)

    def take(self):
        counts, self.reads, self.writes = (self.reads, self.writes), 0, 0
        self.bus.take()
        return counts


def mac(n):
    return ":".join(f"{b:02x}" for b in n.to_bytes(6, "big"))


# Candidate entries: (matcha-ctl line, driver call on a Device); routes of route-table
# lengths around a few networks, so that they nest.

def l2_candidates(rng, t):
    while True:
        key = 0x020000000000 | rng.getrandbits(40)
        port = rng.randrange(16)
        yield (f"table_add l2_fwd forward {mac(key)} => {port}",
               lambda d, k=key, p=port: d.exact_add(t.index, k, t.action_id("forward"),
                                                    t.data("forward", port=p)))


def route_candidates(rng, t):
    while True:
        shape = rng.random()
        if shape < 0.5:
            net, length = 10 << 24 | rng.randrange(4) << 16 | rng.randrange(256) << 8, 24
        elif shape < 0.75:
            net, length = 10 << 24 | rng.randrange(8) << 8 | rng.randrange(256), 32
        else:
            net, length = 172 << 24 | rng.randrange(256) << 16, 16
        port = rng.randrange(16)
        data = t.data("route", port=port, dmac=0x020000000000 | port, smac=0x020000000001)
        yield (f"table_add ipv4_lpm route {ipaddress.IPv4Address(net)}/{length} => {port} "
               f"{mac(0x020000000000 | port)} {mac(0x020000000001)}",
               lambda d, n=net, ln=length, x=data: d.lpm_add(t.index, n, ln,
                                                            t.action_id("route"), x))


def acl_candidates(rng, t, priorities):
    for priority in priorities:
        src = 10 << 24 | rng.randrange(1 << 16) << 8
        port = rng.randrange(1, 1 << 16)
        value = t.key(src=src, protocol=6, dstPort=port)
        mask = t.key(src=0xFFFFFF00, protocol=0xFF, dstPort=0xFFFF)
        yield (f"table_add acl deny {ipaddress.IPv4Address(src)}&&&0xffffff00 0&&&0 6&&&0xff "
               f"0&&&0 {port}&&&0xffff => {priority}",
               lambda d, v=value, m=mask, p=priority: d.ternary_add(t.index, v, m, p,
                                                                    t.action_id("deny"), 0))


def placed(program, candidates, n):
    """The first n candidates the driver places, each with its (reads, writes)."""
    bus = CountingBus(program)
    out = []
    with drv.Device(bus) as dev:
        bus.take()
        for line, call in candidates:
            if len(out) == n:
                break
            try:
                call(dev)
            except drv.MatchaError as e:
                if e.code in (drv.ENOSPC, drv.EEXIST):
                    bus.take()
                    continue
                raise
            out.append((line, bus.take()))
    if len(out) < n:
        sys.exit(f"bench: only {len(out)} of {n} entries placed")
    return out


def range_rule_cost(program, lo, hi):
    """(prefixes, reads, writes) of one ACL rule with dstPort lo->hi, as the driver adds
    it: one ternary entry per prefix of the range."""
    t = program["acl"]
    bus = CountingBus(program)
    with drv.Device(bus) as dev:
        bus.take()
        pairs = drv.range_to_prefixes(lo, hi, 16)
        for value, mask in pairs:
            dev.ternary_add(t.index, t.key(protocol=6, dstPort=value),
                            t.key(protocol=0xFF, dstPort=mask), 10, t.action_id("deny"), 0)
        reads, writes = bus.take()
    return len(pairs), reads, writes


def cost_row(name, costs):
    reads = [r for r, _ in costs]
    writes = [w for _, w in costs]
    total = [r + w for r, w in costs]
    return (f"| {name} | {len(costs)} | {statistics.mean(reads):.1f} | "
            f"{statistics.mean(writes):.1f} | {statistics.mean(total):.1f} | {max(total)} |")


# ------------------------------------------------------------------ through matcha-sim


def ctl_batch(ctl, layout, lines, work):
    """Loads a batch into a fresh socket-only simulator: (seconds, transactions, output)."""
    batch = work / "batch.txt"
    batch.write_text("".join(line + "\n" for line in lines) or "# empty\n")
    sock = work / "ctl.sock"
    with harness.Simulator(CONFIG, "--socket", sock, "--out", work / "out") as s:
        deadline = time.monotonic() + 30
        while not sock.exists():
            if not s.alive() or time.monotonic() > deadline:
                sys.exit(f"bench: matcha-sim did not serve {sock}: {s.finish()}")
            time.sleep(0.05)
        t0 = time.monotonic()
        r = subprocess.run([str(ctl), f"sim:{sock}", "--layout", str(layout), "-f", str(batch)],
                           capture_output=True, text=True)
        seconds = time.monotonic() - t0
        rc, out, err = s.stop()
    if r.returncode or rc:
        sys.exit(f"bench: batch failed (matcha-ctl {r.returncode}, matcha-sim {rc}):\n"
                 f"{r.stdout}{r.stderr}{err}")
    summary = json.loads((work / "out" / "summary.json").read_text())
    return seconds, summary["socket"]["transactions"], r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=64, help="entries per table (default 64)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=9,
                    help="runs of each timed batch; the fastest is kept (default 9)")
    ap.add_argument("--rounds", type=int, default=10,
                    help="rounds of (entries, table_clear) in a timed batch (default 10)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "table_load.md"))
    args = ap.parse_args()

    layout = sim.layout_file(CONFIG)
    if not layout.exists():
        sys.exit(f"bench: {layout} is missing: run `make rtl`")
    program = Program(json.loads(layout.read_text()))
    rng = random.Random(args.seed)
    n = args.entries
    acl = program["acl"]
    batches = {
        "l2_fwd (exact)": placed(program, l2_candidates(rng, program["l2_fwd"]), n),
        "ipv4_lpm (LPM)": placed(program, route_candidates(rng, program["ipv4_lpm"]), n),
        "acl (ternary), priorities descending": placed(
            program, acl_candidates(rng, acl, range(1000, 0, -1)), n),
        "acl (ternary), priorities ascending": placed(
            program, acl_candidates(rng, acl, range(1, 1001)), n),
    }
    tables = ["l2_fwd", "ipv4_lpm", "acl", "acl"]
    ranges = [(f"dstPort {lo}->{hi}", *range_rule_cost(program, lo, hi))
              for lo, hi in ((1024, 65535), (1, 65534))]

    ctl = harness.matcha_ctl()
    work = harness.short_dir()

    def fastest_run(lines):
        # The fastest of the runs: the one the machine's other work added least to.
        runs = [ctl_batch(ctl, layout, lines, work) for _ in range(args.repeat)]
        return min(s for s, _, _ in runs), runs[0][1], runs[0][2]

    base_s, base_tx, _ = ctl_batch(ctl, layout, [], work)
    rates = []
    for (name, entries), table in zip(batches.items(), tables):
        adds = [line for line, _ in entries]
        _, tx, out = ctl_batch(ctl, layout, adds, work)
        if f"{len(entries)} entries loaded" not in out:
            sys.exit(f"bench: {name}: matcha-ctl did not report {len(entries)} entries:\n{out}")
        clear = f"table_clear {table}"
        # Enough rounds for some 20000 transactions, at most --rounds: one round of a slow
        # batch is long enough alone.
        rounds = max(1, min(args.rounds, 20000 // max(1, tx - base_tx)))
        loaded_s, _, _ = fastest_run((adds + [clear]) * rounds)
        cleared_s, _, _ = fastest_run([clear] * rounds)
        load_s = (loaded_s - cleared_s) / rounds
        rates.append((name, len(entries), rounds, load_s, tx - base_tx))

    cmd = "python bench/driver/run_table_load.py" + "".join(
        f" {shlex.quote(a)}" for a in sys.argv[1:])
    lines = [
        "# Table load: bus transactions per entry and entries per second",
        "",
        f"Produced by `{cmd}` on commit {git_commit()}, {time.strftime('%Y-%m-%d')}, "
        f"seed {args.seed}, {n} entries per table of the built-in program ({CONFIG}; every "
        "table has 64 entries and per-entry counters).",
        "",
        "## Bus transactions per entry (recording bus)",
        "",
        "32-bit register reads and writes per add, counted on the driver's recording bus "
        "(STATUS is never busy there: one STATUS read per command). With per-entry counters "
        "a new entry costs a ZERO of its index before the WRITE, and a moved entry four "
        "commands (ZERO, WRITE the copy, WRITE the old index invalid, READ its counts).",
        "",
        "| adds | entries | reads | writes | total | max total |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [cost_row(name, [c for _, c in entries]) for name, entries in batches.items()]
    lines += [
        "",
        "Ascending priorities put every new rule first, so the k-th add shifts the k - 1 rules "
        "already there down by one (copy first, from the end); descending ones append.",
        "",
        "| ACL rule with a port range | ternary entries | reads | writes | total |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {name} | {k} | {r} | {w} | {r + w} |" for name, k, r, w in ranges]
    lines += [
        "",
        "## Entries per second through `sim:` (matcha-ctl batch into matcha-sim)",
        "",
        f"`matcha-ctl sim:SOCK --layout layout.json -f BATCH` against a socket-only "
        f"`matcha-sim` (w64), each run into a fresh simulator. Opening the device and "
        f"loading the layout (an empty batch; opening adopts the tables already there, "
        f"reading them back) took {base_s:.3f} s and {base_tx} transactions, subtracted "
        f"from the transactions below (the simulator's count, STATUS polls included). "
        f"*Load s* is the time of one round: the fastest of {args.repeat} runs of "
        f"*rounds* rounds of (the entries, `table_clear`), less the fastest of "
        f"{args.repeat} runs of as many `table_clear`s alone, divided by the rounds (as "
        f"many as make some 20000 transactions, at most {args.rounds}).",
        "",
        "| batch | entries | rounds | load s | entries/s | transactions/entry |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [f"| {name} | {k} | {r} | {ls:.4f} | {k / ls:.0f} | {tx / k:.1f} |"
              for name, k, r, ls, tx in rates]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
