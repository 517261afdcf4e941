#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lookup benchmark of the match-table units: runs lookup_tb.py on every table unit found
in build/rtl/tables (a module with the table interface of docs/tables.md: `s_axil`,
`lookup_valid`/`lookup_payload`, `result_valid`) and writes a Markdown table (and the raw
JSON) of lookups per clock and latency in clocks, measured and declared. With --sweep DIR
it runs on the units of a table sweep instead (DIR/<name>/<unit>.v, as
matcha.table.TableSweep writes them; models built under build/sim/table-sweep/).

Exits non-zero if a unit fails: fewer results than keys, lookups per clock below 1, a
latency that varies or differs from the descriptor's, or a wrong answer. The Markdown is
written in any case, failed units marked FAIL.

usage: python bench/tables/run_lookups.py [--units matcha_exact_table,...] [--keys 2000]
                                          [--sweep build/bench/table-sweep/rtl]
                                          [--out build/bench/tables/units.md]
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from tb.common import cocotb_util, sim  # noqa: E402

CONFIG = "tables"
PORTS = ("s_axil_awaddr", "lookup_valid", "lookup_payload", "result_valid",
         "result_payload_hit", "result_payload_entryIndex")


def table_units(rtl_dir):
    """Top modules in `rtl_dir`/*.v that have the table interface and no memory port,
    sorted by name: a unit with entries in memory has the memory benchmarks of
    bench/scale (scale_table.md, scale_lpm.md)."""
    units = []
    for v in sorted(rtl_dir.glob("*.v")):
        text = v.read_text(errors="replace")
        m = re.search(r"^module\s+(\w+)\s*\((.*?)\);", text, re.S | re.M)
        if m and m.group(1) == v.stem and \
                all(re.search(rf"\b{p}\b", m.group(2)) for p in PORTS) and "m_axi_" not in m.group(2):
            units.append(v.stem)
    return units


def sweep_units(sweep_dir):
    """(name, unit) of every sweep directory holding one table unit, sorted by name."""
    out = []
    for d in sorted(p for p in sweep_dir.iterdir() if p.is_dir()):
        units = table_units(d)
        if len(units) == 1:
            out.append((d.name, units[0]))
    return out


def lat(phase):
    """A phase's latency: one number, or min..max when it varies."""
    if phase["latency_min"] is None:
        return "none"
    return str(phase["latency_min"]) if phase["latency_min"] == phase["latency_max"] else \
        f"{phase['latency_min']}..{phase['latency_max']}"


def commands(r):
    """WRITE / READ / CLEAR: clocks STATUS stays busy, '?' where not measured."""
    c = r.get("commands", {})
    return " / ".join("?" if c.get(k) is None else str(c[k]) for k in ("write", "read", "clear"))


def row(r):
    p, w = r["phases"]["idle"], r["phases"]["writes"]

    status = "ok" if not r["failures"] else "**FAIL**"
    return (f"| {r['name']} | {r['kind']} | {r['key_bits']} | {r['size']} "
            f"| {p['results_per_clock']:.4f} | {lat(p)} | {r['latency_declared']} "
            f"| {w['results_per_clock']:.4f} | {lat(w)} | {w['writes']} "
            f"| {p['hits'] + w['hits']} / {p['misses'] + w['misses']} | {commands(r)} "
            f"| {status} |")


def table(results):
    lines = [
        "| unit | kind | key bits | entries | lookups/clock | latency measured "
        "| latency declared | lookups/clock during WRITEs | latency during WRITEs "
        "| WRITEs during the stream | hits / misses | WRITE / READ / CLEAR clocks | |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| --- |",
    ]
    return "\n".join(lines + [row(r) for r in results])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", help="comma-separated unit names: top modules, or with --sweep "
                    "sweep directories (default: all found)")
    ap.add_argument("--keys", type=int, default=2000, help="keys per phase")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sweep", help="directory of a table sweep (instead of build/rtl/tables)")
    ap.add_argument("--out", help="Markdown table, the raw JSON next to it (default: "
                    "build/bench/tables/units.md, with --sweep build/bench/tables/sweep.md)")
    args = ap.parse_args()

    if args.sweep:
        # One "configuration" per sweep directory, models kept apart from the tests'.
        sim.RTL_DIR = Path(args.sweep).resolve()
        sim.SIM_DIR = REPO / "build" / "sim" / "table-sweep"
        jobs = [(name, name, unit) for name, unit in sweep_units(sim.RTL_DIR)]
        rtl_dir = sim.RTL_DIR
    else:
        rtl_dir = sim.RTL_DIR / CONFIG
        jobs = [(unit, CONFIG, unit) for unit in table_units(rtl_dir)]
    if args.units:
        jobs = [j for j in jobs if j[0] in args.units.split(",")]
    if not jobs:
        sys.exit(f"bench: no table unit in {rtl_dir}")
    # Absolute: the simulation runs in its own directory.
    out = Path(args.out or REPO / "build" / "bench" / "tables" /
               ("sweep.md" if args.sweep else "units.md")).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    results, failed = [], []
    for name, config, unit in jobs:
        raw = out.parent / f"lookups_{name}.json"
        raw.unlink(missing_ok=True)
        t0 = time.time()
        error = None
        try:
            sim.run(config, unit, "lookup_tb", run_name="lookup_bench", seed=args.seed,
                    env={"MATCHA_BENCH_OUT": raw, "MATCHA_BENCH_KEYS": args.keys},
                    pythonpath=[HERE], probed=cocotb_util.BusyMonitor.PROBED)
        except Exception as e:  # noqa: BLE001 - reported, the next unit still runs
            error = f"{type(e).__name__}: {e}" if not isinstance(e, AssertionError) else str(e)
        if raw.exists():
            r = json.loads(raw.read_text())
            r["name"] = name
            results.append(r)
            if r["failures"] and error is None:
                error = "; ".join(r["failures"])
        elif error is None:
            error = "no results written"
        if error:
            failed.append(name)
            print(f"bench: {name} FAILED: {error}", file=sys.stderr, flush=True)
        else:
            p = r["phases"]
            print(f"bench: {name} ok in {time.time() - t0:.0f} s: "
                  f"{p['idle']['results_per_clock']:.4f} lookups/clock, latency "
                  f"{p['idle']['latency_min']} (declared {r['latency_declared']}); "
                  f"with {p['writes']['writes']} WRITEs {p['writes']['results_per_clock']:.4f}",
                  flush=True)

    md = table(results)
    if failed:
        md += "\n\nFailed: " + ", ".join(failed) + (
            " (no results)" if len(results) < len(jobs) else "") + "."
    out.write_text(md + "\n")
    out.with_suffix(".json").write_text(json.dumps(results, indent=1))
    print(md)
    if failed:
        sys.exit(f"bench: lookup bench failed for {', '.join(failed)}")


if __name__ == "__main__":
    main()
