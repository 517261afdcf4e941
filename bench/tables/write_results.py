#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes bench/results/tables.md from what bench/tables/run.sh measured:

- the lookup bench of the units in build/rtl/tables (run_lookups.py's JSON);
- per unit of the table sweep: the lookup bench (JSON), the generator's latency
  (latency.tsv) and the Yosys ECP5 resources (<synth dir>/<name>/resources.txt).

usage: python bench/tables/write_results.py --units-json J --sweep-json J --sweep DIR
                                            --synth DIR --out FILE --command CMD
"""

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from bench.provenance import read_resources, write_report  # noqa: E402
from run_lookups import commands, lat, table  # noqa: E402

RESOURCES = ("LUT4", "TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4", "CCU2C")


def load(path):
    p = Path(path)
    return json.loads(p.read_text()) if p.exists() else []


def sweep_table(sweep_dir, synth_dir, lookups):
    by_name = {r["name"]: r for r in lookups}
    generated = {}
    tsv = sweep_dir / "latency.tsv"
    if tsv.exists():
        for line in tsv.read_text().splitlines():
            if line.strip():
                name, latency = line.split("\t")
                generated[name] = int(latency)
    lines = [
        "| unit | lookups/clock | lookups/clock during WRITEs | latency measured "
        "| latency declared | WRITE / READ / CLEAR clocks | " + " | ".join(RESOURCES) + " |",
        "| --- | ---: | ---: | ---: | ---: | ---: | " + " | ".join(["---:"] * len(RESOURCES))
        + " |",
    ]
    problems = [] if generated else [f"no sweep units ({tsv} not found or empty)"]
    for name in generated:  # the generator's order
        r = by_name.get(name)
        if r is None:
            rates, measured, declared = "no result", "no result", "?"
            problems.append(f"{name}: no lookup result")
        else:
            p, w = r["phases"]["idle"], r["phases"]["writes"]
            rates = f"{p['results_per_clock']:.4f} | {w['results_per_clock']:.4f}"
            measured = lat(p) if lat(p) == lat(w) else f"{lat(p)} / {lat(w)}"
            declared = str(r["latency_declared"])
            if r["failures"]:
                measured += " **FAIL**"
                problems.append(f"{name}: " + "; ".join(r["failures"]))
            if r["latency_declared"] != generated[name]:
                declared += f" (generator: {generated[name]})"
                problems.append(f"{name}: descriptor latency {r['latency_declared']}, "
                                f"generator {generated[name]}")
        if r is None:
            rates += " | no result"
        declared += " | " + ("no result" if r is None else commands(r))
        counts = read_resources(synth_dir / name / "resources.txt")
        if not counts:
            problems.append(f"{name}: no synthesis result")
        lines.append(f"| {name} | {rates} | {measured} | {declared} | " +
                     " | ".join(str(counts.get(k, "?")) for k in RESOURCES) + " |")
    return "\n".join(lines), problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units-json", required=True)
    ap.add_argument("--sweep-json", required=True)
    ap.add_argument("--sweep", required=True, help="the table sweep's RTL directory")
    ap.add_argument("--synth", required=True, help="its synthesis directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bash bench/tables/run.sh")
    args = ap.parse_args()

    units = load(args.units_json)
    unit_problems = [f"{r['name']}: " + "; ".join(r["failures"]) for r in units if r["failures"]]
    if not units:
        unit_problems.append("no lookup result of the units in build/rtl/tables")
    sweep, sweep_problems = sweep_table(Path(args.sweep), Path(args.synth), load(args.sweep_json))
    keys = units[0]["phases"]["idle"]["keys"] if units else 2000
    md = "\n".join([
        "# Match-table units: lookups per clock, latency, ECP5 resources",
        "",
        "Every table unit (the table, its AXI4-Lite control window and the self-describing "
        "block) is measured alone, in two ways:",
        "",
        "- lookups, in Verilator (`bench/tables/lookup_tb.py`): a few entries loaded through "
        "the control window, then a new key on `lookup_valid`/`lookup_payload` every clock "
        f"for {keys} clocks, hitting and missing keys mixed, every answer checked. "
        "*Lookups/clock* is results per clock between the first and the last result (1 when "
        "the unit takes a key every clock); *latency* is a key's result clock minus its "
        "key clock, the same for every key; *declared* is the latency word of the unit's "
        "descriptor (docs/tables.md). The stream is run twice: idle, and with WRITE "
        "commands back to back on the control window from its first quarter to its third "
        "(entries no key of the stream matches, so every answer stays checkable); then, on "
        "the idle unit, *WRITE / READ / CLEAR clocks*: how long one command of each keeps "
        "the table's part of STATUS busy;",
        "- resources, by Yosys `synth_ecp5` of the unit alone.",
        "",
        "## Units of the pipeline build (`build/rtl/tables`)",
        "",
        table(units) if units else "No result.",
        "",
        "## Sweep over key widths and sizes (`matcha.table.TableSweep`)",
        "",
        "A unit's name is its kind, then `k` key bits and `n` entries (for LPM: `f` slots a "
        "B+tree node and `r` prefixes); the generator's parameters are in "
        "`rtl/src/main/scala/matcha/table/TableSweep.scala`.",
        "",
        sweep,
        "",
        "",
    ])
    problems = unit_problems + sweep_problems
    write_report(md, args.out, args.command, problems)


if __name__ == "__main__":
    main()
