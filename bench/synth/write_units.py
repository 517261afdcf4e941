#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes bench/results/overlay_resources.md from what bench/synth/units.sh synthesized:
<units dir>/<family>/<scale>/<unit>/stat.txt and seconds.

usage: python bench/synth/write_units.py --units build/bench/units --out FILE
"""

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import write_report, yosys_version  # noqa: E402

# Cell classes of each flow's `stat`, by cell-name pattern.
CLASSES = {
    "xcup": (("LUT", r"LUT[1-6]$"), ("FF", r"FD[A-Z]+$"), ("LUTRAM", r"RAM(32|64|128|256)[XM]"),
             ("SRL", r"SRL"), ("RAMB36", r"RAMB36"), ("RAMB18", r"RAMB18"), ("URAM288", r"URAM288$"),
             ("CARRY", r"CARRY[48]$"), ("DSP", r"DSP48")),
    "ecp5": (("LUT4", r"LUT4$"), ("TRELLIS_FF", r"TRELLIS_FF$"), ("DP16KD", r"DP16KD$"),
             ("TRELLIS_DPR16X4", r"TRELLIS_DPR16X4$"), ("CCU2C", r"CCU2C$"), ("MULT18X18D", r"MULT18X18D$")),
}
# Device capacities (vendors' data sheets): the Alveo U280's XCU280 and the Versa board's
# LFE5UM5G-45F; the percentages below are of these.
DEVICES = {
    "xcup": ("XCU280 (Alveo U280)", {"LUT": 1_303_680, "FF": 2_607_360, "RAMB36": 2_016, "URAM288": 960}),
    "ecp5": ("LFE5UM5G-45F (Versa)", {"LUT4": 43_848, "TRELLIS_FF": 43_848, "DP16KD": 108}),
}
SCALES = (("corundum", "xcup"), ("corundum", "ecp5"), ("board", "ecp5"))


def cells(stat):
    """{cell type: count} of the design total in a Yosys `stat` output."""
    counts = {}
    for line in stat.read_text().splitlines():
        m = re.match(r"\s+(\S+)\s+(\d+)$", line)
        if m and not m.group(1).startswith("$"):
            counts[m.group(1)] = int(m.group(2))
    return counts


def classify(family, counts):
    out = Counter()
    for cell, n in counts.items():
        for name, pattern in CLASSES[family]:
            if re.match(pattern, cell):
                out[name] += n
                break
    if family == "xcup":  # two RAMB18 make one RAMB36 site
        out["RAMB36"] += out.pop("RAMB18", 0) / 2
    return out


def fmt(v):
    return f"{v:g}" if isinstance(v, float) else str(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--units", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bash bench/synth/units.sh")
    args = ap.parse_args()
    root = Path(args.units)
    problems = []
    md = ["# Resources of the overlay program's tables",
          "",
          "Each table of the overlay program (docs/overlay.md) synthesized on its own as the "
          "pipeline builds it (`matcha.program.ProgramUnits`: the match unit, its control "
          "window and default action, its per-entry packet and byte counters where the "
          "program asks for them), and the session table and the policer array, at the "
          "program's two scales (`Overlay.Corundum` for the 512-bit Corundum build, "
          "`Overlay.Board` for 64-bit targets). Synthesized by " + yosys_version() +
          " (no place and route: no Fmax here): `synth_xilinx -family xcup -uram` for "
          "UltraScale+ and `synth_ecp5`. RAMB36 counts two RAMB18 as one. Every row "
          "includes a control bus of its own (AXI4-Lite slave, descriptor block, window), "
          "which the pipeline has once for all its tables: the `frame_class` row, a 4-entry "
          "direct table, is little more than that, so the sum overstates the tables by about "
          "as many times that row as there are units. A unit marked (-nolutram) was "
          "synthesized without LUT RAM, which Yosys 0.23 cannot map for UltraScale+ in some "
          "shapes: its memories went to flip-flops or block RAM instead. Percentages are of the " +
          " and the ".join(d[0] for d in DEVICES.values()) + ".",
          ""]
    for scale, family in SCALES:
        base = root / family / scale
        units = sorted(p.name for p in base.iterdir()) if base.exists() else []
        if not units:
            problems.append(f"{family} {scale}: no synthesized units in {base}")
            continue
        # Units the generator made for this scale that this run did not synthesize.
        unsynthesized = sorted({p.stem for p in (root / "rtl" / scale).glob("matcha_overlay_*.v")} -
                               set(units))
        names = [n for n, _ in CLASSES[family] if n != "RAMB18"]
        device, capacity = DEVICES[family]
        md += [f"## {scale} scale, {family}", "",
               "| unit | " + " | ".join(names) + " | synthesis s |",
               "| --- | " + " | ".join(["---:"] * len(names)) + " | ---: |"]
        total = Counter()
        for unit in units:
            stat, secs = base / unit / "stat.txt", base / unit / "seconds"
            if not stat.exists():
                problems.append(f"{family} {scale} {unit}: no synthesis result")
                md.append(f"| `{unit}` | " + " | ".join(["FAIL"] * len(names)) + " | |")
                continue
            c = classify(family, cells(stat))
            total.update(c)
            options = base / unit / "options"
            mark = f" ({options.read_text().strip()})" if options.exists() else ""
            md.append(f"| `{unit}`{mark} | " + " | ".join(fmt(c.get(n, 0)) for n in names) +
                      f" | {secs.read_text().strip() if secs.exists() else '?'} |")
        label = "the tables above" if unsynthesized else "all tables"
        md.append(f"| **{label}** | " + " | ".join(f"**{fmt(total.get(n, 0))}**" for n in names) + " | |")
        md.append("| % of " + device + " | " +
                  " | ".join(f"{100 * total.get(n, 0) / capacity[n]:.1f} %" if n in capacity else ""
                             for n in names) + " | |")
        if unsynthesized:
            md += ["", "Not synthesized in this run: " +
                   ", ".join(f"`{u}`" for u in unsynthesized) + "."]
        md.append("")
    write_report("\n".join(md) + "\n", args.out, args.command, problems)


if __name__ == "__main__":
    main()
