#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sessions learned and aged on a memory that keeps up with only a share of the clocks: the
128-tracked unit of matcha.table.MemSessionSweep (2^14 buckets of three sessions in 64-byte
buckets on a 512-bit port, results 512 clocks after the packet), bench_aging of
bench/scale/session_bench_tb.py for each memory latency and memory share: established UDP
sessions, then a flood of new TCP flows while the UDP sessions pass their timeout and the
aging scanner removes them. Writes a Markdown report (default
bench/results/scale_session_aging.md): the flood's sessions learned per clock, late, busy
and refused; when the last UDP session could age and when they had all aged, against a
sweep's nominal time; the memory's reads and writes per clock.

usage: python bench/scale/run_session_aging.py [--latencies 100,300] [--shares 1,0.5,0.33]
           [--scan 4] [--udp-flows 4096] [--syn-flows 8192] [--udp-timeout 24]
           [--out bench/results/scale_session_aging.md]
"""

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from bench.scale.run_sessions import BUCKETS, SWEEP, build_units, run_unit  # noqa: E402

UNIT = "mem_session_t128"
TICK = 1024  # session_bench_tb.TICK: the bench's tick, in clocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--latencies", default="100,300")
    ap.add_argument("--shares", default="1,0.5,0.33")
    ap.add_argument("--scan", type=int, default=4, help="SCAN_INTERVAL: the memory's answers between the scanner's reads")
    ap.add_argument("--udp-flows", type=int, default=4096)
    ap.add_argument("--syn-flows", type=int, default=8192)
    ap.add_argument("--udp-timeout", type=int, default=24, help="the UDP timeout, in ticks of 1,024 clocks")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_session_aging.md"))
    args = ap.parse_args()
    if UNIT not in build_units():
        raise SystemExit(f"bench: MemSessionSweep builds no {UNIT}")
    runs, problems = run_unit(UNIT, SWEEP / "aging", "bench_aging", {
        "MATCHA_BENCH_LATENCIES": args.latencies, "MATCHA_BENCH_SHARES": args.shares,
        "MATCHA_BENCH_SCAN": str(args.scan), "MATCHA_BENCH_UDP_TIMEOUT": str(args.udp_timeout),
        "MATCHA_BENCH_UDP_FLOWS": str(args.udp_flows), "MATCHA_BENCH_SYN_FLOWS": str(args.syn_flows)})
    runs = runs or []
    sweep = BUCKETS * args.scan
    seeds = sorted({str(r["seed"]) for r in runs})
    md = [
        "# Sessions learned and aged on a memory that keeps up with a share of the clocks",
        "",
        f"`matcha_mem_session_table` with 128 buckets tracked on chip (`matcha.table.MemSessionSweep`: "
        f"{BUCKETS:,} buckets of three sessions, one 64-byte bucket a beat of a 512-bit port, results 512 "
        "clocks after the packet, dimensioned for a memory latency of 320), in Verilator, cocotb bench "
        "`bench_aging` of `bench/scale/session_bench_tb.py`. The memory (`tb/common/late_memory.py`, "
        "`snapshot`) answers each read a fixed latency after its address, with the bucket as it was then; "
        "of a memory share s, it answers a read beat and takes a write beat in a clock with probability s "
        "each (rvalid and wready held back at random the rest of the time), so it serves at most s reads "
        "and s writes a clock: s = 1 keeps up with the table, 0.5 and 0.33 are about the random 64-byte "
        "reads a DDR4 channel serves a clock at 250 MHz (docs/tables.md, \"Memory bandwidth per lookup\"). "
        f"A tick is {TICK:,} clocks; the aging scanner reads a bucket in a clock without a packet, every "
        f"{args.scan} of the memory's answers (SCAN_INTERVAL {args.scan}, counted in the clocks between "
        "answers the table has learned: docs/sessions.md, \"Aging, CLEAR and reset\"), so that it takes "
        f"1/{args.scan} of what the memory serves; a sweep of the table takes {sweep:,} clocks on a memory "
        "that keeps up.",
        "",
        "Each run, on an emptied table (seed " + ", ".join(seeds) + "):",
        f"1. {args.udp_flows:,} UDP sessions of new random flows, one every 5 clocks, each result checked "
        "against the reference model (tb/model/session.py, MemSessionModel); their timeout is "
        f"{args.udp_timeout} ticks ({args.udp_timeout * TICK:,} clocks);",
        f"2. at once, {args.syn_flows:,} TCP SYNs of other new random flows, one every 5 clocks, while "
        "the UDP sessions pass their timeout and the scanner removes them (the SYNs' sessions never "
        "reach theirs);",
        "3. until SESSION_AGED counts every UDP session learned (read every 256 clocks).",
        "",
        "Then the memory must hold exactly the sessions of the SYNs whose result said learned, and no "
        "UDP session.",
        "",
        "| memory latency | memory share | UDP learned | SYNs offered per clock | SYNs learned | learned per clock "
        "| late | busy | refused | last UDP session agable (clock) | all aged by (clock) | beyond the last agable "
        "| reads per clock | writes per clock |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in runs:
        beyond = r["aged_by"] - r["udp_eligible_by"]
        md.append(f"| {r['latency']} | {r['share']:.2f} | {r['udp_learned']:,} | {r['syn_offered_per_clock']:.2f} "
                  f"| {r['learned']:,} | {r['learned_per_clock']:.3f} | {r['late']:,} | {r['busy']:,} "
                  f"| {r['refused']:,} | {r['udp_eligible_by']:,} | {r['aged_by']:,} "
                  f"| {beyond:,} ({beyond / sweep:.2f} sweeps) | {r['reads'] / r['clocks']:.3f} "
                  f"| {r['writes'] / r['clocks']:.3f} |")
    md += [
        "",
        "Clocks count from the run's first UDP packet. Learned per clock: the SYNs' sessions learned "
        "over the clocks from the first SYN to one offered interval past the last. Late: SYNs whose "
        "bucket did not come back within the result's time, or whose read the table did not issue "
        "because the memory's pace was already taken (docs/tables.md, \"The pace of reads\"); busy: "
        "SYNs whose new session found no tracked bucket free; refused: the bucket held three sessions. "
        "Late, busy and refused SYNs learn nothing and are counted; the pipeline punts them. Last UDP "
        "session agable: its last packet's clock plus its timeout and a tick (a session ages once its "
        "age in whole ticks is above its timeout); beyond it: when the last UDP session had been "
        "removed, in clocks past that and in sweeps of a memory that keeps up. Reads and writes per clock: the memory's, "
        "over the run (the packets', the scanner's and the removals').",
        "",
    ]
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
