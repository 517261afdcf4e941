#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The LPM table with its two lowest levels in memory against memories of DRAM's latency
and bandwidth: generates matcha.table.LpmMemSweep (512 IPv4 prefixes in 10-slot nodes, 4
levels, the lowest 2 each on a 512-bit port of its own, each level given 512 clocks for a
memory of up to 320; docs/tables.md, "LPM levels in memory"), runs
bench/scale/lpm_bench_tb.py on it and writes a Markdown report (default
bench/results/scale_lpm.md): lookups answered, late and memory reads per lookup for each
memory, at a lookup a clock.

usage: python bench/scale/run_lpm.py [--memories LATENCY:BUSY,...] [--out bench/results/scale_lpm.md]
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

SWEEP = REPO / "build" / "bench" / "lpm-mem-sweep"
TOPLEVEL = "matcha_lpm32_mem_bench"
MEMORIES = "100:0,300:0,300:0.25,300:0.5"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memories", default=MEMORIES)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "scale_lpm.md"))
    args = ap.parse_args()
    shutil.rmtree(SWEEP, ignore_errors=True)
    subprocess.run([str(REPO / "tools" / "mvn.sh"), "-q", "compile", "exec:java",
                    "-Dexec.mainClass=matcha.table.LpmMemSweep",
                    f"-Dexec.args=--out {SWEEP / 'rtl' / 'lpm'}"], cwd=REPO, check=True)
    raw = SWEEP / "results"
    raw.mkdir(parents=True)
    env = {"MATCHA_BENCH_OUT": str(raw), "MATCHA_BENCH_MEMORIES": args.memories}
    code = ("from tb.common import sim\n"
            f"sim.run('lpm', {TOPLEVEL!r}, 'lpm_bench_tb', run_name='bench', env={env!r}, "
            f"pythonpath=[{str(HERE)!r}])\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       env=dict(os.environ, MATCHA_RTL_DIR=str(SWEEP / "rtl"), MATCHA_SIM_DIR=str(SWEEP / "sim")))
    problems = [] if r.returncode == 0 else (r.stdout + r.stderr).strip().splitlines()[-5:]
    runs = json.loads((raw / "results.json").read_text()) if (raw / "results.json").exists() else []
    md = ["# An LPM table with levels in memory, against the memory's latency and bandwidth", ""]
    if runs:
        first = runs[0]
        md += [f"`{TOPLEVEL}` (`matcha.table.LpmMemSweep`: IPv4, 512 prefixes in 10-slot nodes, 4 levels, "
               "the lowest 2 in memory, each behind a 512-bit port of its own, each level given 512 clocks "
               f"for a memory of up to 320; docs/tables.md, \"LPM levels in memory\"), {first['prefixes']} "
               f"prefixes loaded through the C driver, {first['lookups']:,} lookups a run, one a clock, "
               "against a `tb/common/late_memory.py` on each port with the latency given and its read "
               "data held back in the share of clocks given (busy). Every result left "
               f"exactly {first['table_latency']:,} clocks after its key; every one not late was the "
               "brute-force oracle's; `LPM_WIN_LATE` counted the late ones. "
               f"Seed {first['seed']}.", "",
               "| memory latency (clocks) | busy | lookups a clock | answered | late | memory reads a lookup |",
               "| ---: | ---: | ---: | ---: | ---: | ---: |"]
        for x in runs:
            if x["late_counted"] != x["late"]:
                problems.append(f"{x['latency']}:{x['busy']}: LPM_WIN_LATE {x['late_counted']}, late {x['late']}")
            md.append(f"| {x['latency']} | {x['busy']:g} | {x['lookups'] / x['clocks']:.3f} | "
                      f"{x['answered'] / x['lookups']:.1%} | {x['late'] / x['lookups']:.1%} | "
                      f"{x['reads'] / x['lookups']:.2f} |")
        md.append("")
    write_report("\n".join(md) + "\n", args.out, invocation(), problems)


if __name__ == "__main__":
    main()
