#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes bench/results/synth_ecp5.md from what bench/synth/run.sh synthesized:
<synth dir>/<top>/<config>/resources.txt and seconds.

usage: python bench/synth/write_results.py --synth build/bench/synth --out FILE
"""

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.provenance import read_resources, write_report, yosys_version  # noqa: E402

RESOURCES = ("LUT4", "TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4", "CCU2C")
ROWS = (("matcha_l2l3", "w64"), ("matcha_l2l3", "w512"), ("mqnic_app_block", "corundum-w64"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--synth", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", default="bash bench/synth/run.sh")
    args = ap.parse_args()
    synth = Path(args.synth)

    lines = ["| top | config | " + " | ".join(RESOURCES) + " | synthesis time |",
             "| --- | --- | " + " | ".join(["---:"] * len(RESOURCES)) + " | ---: |"]
    got, problems = {}, []
    for top, config in ROWS:
        c = read_resources(synth / top / config / "resources.txt") or None
        got[top, config] = c
        seconds = synth / top / config / "seconds"
        secs = f"{seconds.read_text().strip()} s" if seconds.exists() else "?"
        if c is None:
            problems.append(f"{top} {config}: no synthesis result")
            lines.append(f"| `{top}` | {config} | " + " | ".join(["FAIL"] * len(RESOURCES))
                         + f" | {secs} |")
        else:
            lines.append(f"| `{top}` | {config} | " + " | ".join(str(c[k]) for k in RESOURCES)
                         + f" | {secs} |")
    app, pipeline = got["mqnic_app_block", "corundum-w64"], got["matcha_l2l3", "w64"]
    if app and pipeline:
        lines.append("| the block around the pipeline | corundum-w64 − w64 | " +
                     " | ".join(str(app[k] - pipeline[k]) for k in RESOURCES) + " | |")

    md = "\n".join([
        "# ECP5 synthesis of the pipeline and the Corundum block",
        "",
        "`matcha_l2l3` is the packet path (128-byte header window, 16 KiB packet buffer) with "
        "the built-in L2/L3 program (docs/pipeline.md: a 64-entry exact table on the "
        "destination MAC, a 64-prefix IPv4 LPM (a B+tree of 10-slot nodes) with its prefix "
        "store, a 64-entry ternary ACL on the 104-bit 5-tuple, per-entry counters on all "
        "three, the AXI4-Lite control block). `mqnic_app_block` (corundum-w64) is the "
        "Corundum application block of ip/corundum with that pipeline on 64-bit taps; its "
        "last row is what the block adds around the pipeline (the difference of the two "
        "rows). Synthesized by " + yosys_version() + " with `synth_ecp5` (no place and "
        "route, so no Fmax here); times are wall clock.",
        "",
        "\n".join(lines),
        "",
        "",
    ])
    write_report(md, args.out, args.command, problems)


if __name__ == "__main__":
    main()
