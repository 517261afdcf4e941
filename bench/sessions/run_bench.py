#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Session table benchmark: runs bench/sessions/learn_tb.py on every session unit of the
sweep (DIR/<name>/matcha_session_table.v, as matcha.table.SessionSweep writes them) and
writes a Markdown results file with sessions learned per clock under 100 % new flows,
occupancy reached without moves, latency in clocks and, where tools/synth_ecp5.sh left
them, the Yosys ECP5 resources.

usage: python bench/sessions/run_bench.py --sweep build/bench/session-sweep/rtl
           --synth build/bench/session-sweep/synth --out bench/results/sessions.md
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

TOPLEVEL = "matcha_session_table"


def run_unit(sweep, name, raw):
    """One unit's bench in its own process (the sim module reads MATCHA_RTL_DIR at import)."""
    out = raw / f"{name}.json"
    size = int(name.rsplit("_n", 1)[1])
    code = (
        "from tb.common import sim\n"
        f"sim.run({name!r}, {TOPLEVEL!r}, 'bench.sessions.learn_tb', run_name='bench', "
        f"env={{'MATCHA_BENCH_SIZE': {size}, 'MATCHA_BENCH_OUT': {str(out)!r}}})\n")
    env = dict(os.environ, MATCHA_RTL_DIR=str(sweep.resolve()),
               MATCHA_SIM_DIR=str(REPO / "build" / "sim" / "session-sweep"))
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                       text=True)
    if r.returncode:
        print(r.stdout[-3000:], r.stderr[-3000:], file=sys.stderr)
        return None
    return json.loads(out.read_text())


def resources(synth, name):
    f = synth / name / "resources.txt"
    if not f.exists():
        return None
    return dict(line.split() for line in f.read_text().splitlines() if line.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", type=Path, required=True)
    ap.add_argument("--synth", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    raw = REPO / "build" / "bench" / "sessions"
    raw.mkdir(parents=True, exist_ok=True)
    names = sorted(d.name for d in args.sweep.iterdir() if (d / f"{TOPLEVEL}.v").exists())
    rows, status = [], 0
    for name in names:
        m = run_unit(args.sweep, name, raw)
        res = resources(args.synth, name)
        if m is None:
            status = 1
        rows.append((name, m, res))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                            capture_output=True, text=True).stdout.strip()
    kinds = ("LUT4", "TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4", "CCU2C")
    lines = [
        "# Session table units",
        "",
        "`matcha_session_table` (IPv4 5-tuple + 24-bit zone, 128-bit canonical key, 4 ways) "
        "with its AXI4-Lite control window, under 100 % new flows: a TCP SYN of a new random "
        "flow every clock, 4 × size flows in all (seed "
        + ", ".join(sorted({str(m["seed"]) for _, m, _ in rows if m})) + "), every result checked against the reference "
        "model (tb/model/session.py). Insertion is d-left without moves "
        "(docs/sessions.md).",
        "",
        "| unit | latency | learned per clock | occupancy at the first failure | "
        "after 1 × size | after 2 × size | after 4 × size | "
        + " | ".join(kinds) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in kinds)
        + " |",
    ]
    for name, m, res in rows:
        if m is None:
            lines.append(f"| {name} | FAIL | | | | | | " + " | ".join("" for _ in kinds) + " |")
            continue
        lat = ",".join(str(x) for x in m["latency"])
        cells = [name, lat, f"{m['learned_per_clock']:.2f}",
                 f"{100 * m['occupancy_at_first_failure']:.1f} %",
                 f"{100 * m['after_1x']:.1f} %", f"{100 * m['after_2x']:.1f} %",
                 f"{100 * m['after_4x']:.1f} %"]
        cells += [res.get(k, "0") if res else "—" for k in kinds]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Learned per clock: sessions learned per clock from the first SYN to the first insert "
        "failure (every SYN before it learned, one per clock). Occupancy: sessions in the "
        "table as a share of its entries, when the first key finds all four of its ways "
        "taken, and after 1, 2 and 4 × size new flows were offered (the others found no free "
        "way: punted or dropped, never overwriting a session). Latency: clocks from a "
        "packet to its result, the same for every packet. Resources: Yosys "
        "`synth_ecp5` of the unit alone.",
        "",
        f"Produced by `bash bench/sessions/run.sh` with the session table RTL of commit {commit}.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print(args.out.read_text())
    return status


if __name__ == "__main__":
    sys.exit(main())
