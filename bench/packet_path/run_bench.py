#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Packet-path benchmark: runs bench_tb.py on matcha_packet_path for each configuration
and writes a Markdown table (and the raw JSON) of throughput and latency in clocks.

usage: python bench/packet_path/run_bench.py [--configs w64,w512] [--sizes 64,128,...]
                                             [--out bench/results/packet_path.md]
"""

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import git_commit  # noqa: E402
from tb.common import sim  # noqa: E402


def table(results):
    lines = [
        "| config | frame bytes | frames/clock | ideal frames/clock | bus efficiency "
        "| bits/clock | latency first frame (clocks) | latency min / mean / max |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r['config']} | {r['size']} | {r['frames_per_clock']:.4f} "
            f"| {r['ideal_frames_per_clock']:.4f} | {100 * r['bus_efficiency']:.1f} % "
            f"| {r['bits_per_clock']:.1f} | {r['latency_first']} "
            f"| {r['latency_min']} / {r['latency_mean']:.1f} / {r['latency_max']} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--configs", default="w64,w512")
    ap.add_argument("--sizes", default="64,128,512,1518,9000")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "packet_path.md"))
    ap.add_argument("--raw-dir", default=str(REPO / "build" / "bench"))
    args = ap.parse_args()

    raw_dir = Path(args.raw_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for config in args.configs.split(","):
        missing = sim.rtl_missing(config, "matcha_packet_path")
        if missing:
            sys.exit(f"bench: {missing}")
        out = raw_dir / f"packet_path_{config}.json"
        t0 = time.time()
        try:
            sim.run(config, "matcha_packet_path", "bench_tb", run_name="bench",
                    env={"MATCHA_BENCH_OUT": out, "MATCHA_BENCH_SIZES": args.sizes},
                    pythonpath=[HERE])
        except AssertionError as e:
            sys.exit(f"bench: {config} failed: {e}")
        print(f"bench: {config} done in {time.time() - t0:.0f} s", flush=True)
        results += json.loads(out.read_text())

    cmd = "bash bench/run.sh" if len(sys.argv) == 1 else \
        "python bench/packet_path/run_bench.py " + " ".join(map(shlex.quote, sys.argv[1:]))
    md = "\n".join([
        "# Packet-path benchmark",
        "",
        "`matcha_packet_path` in Verilator, frames of one size offered back to back at "
        "full input rate, no output back-pressure. Frames per clock are measured between "
        "the ends of the first and the last output frame; the ideal is one frame per "
        "ceil(bytes / bus bytes) clocks. Latency is from a frame's first input beat to "
        "its first output beat.",
        "",
        table(results),
        "",
        f"Produced by `{cmd}` on commit {git_commit()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
    ])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(md)
    (raw_dir / "packet_path.md").write_text(md)
    (raw_dir / "packet_path.json").write_text(json.dumps(results, indent=1))
    print(md)


if __name__ == "__main__":
    main()
