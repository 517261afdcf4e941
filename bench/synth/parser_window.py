# SPDX-License-Identifier: Apache-2.0
"""What the header window costs: Yosys synth_ecp5 of the parser alone (matcha_parser) at each
configuration's window, written to bench/results/parser_window.md (netlists and logs in
build/bench/parser-window/).

    python bench/synth/parser_window.py      (from the repository root, after `make rtl`)

The parser does not depend on the data width, so build/rtl/w64/matcha_parser.v (a 128-byte
window) and build/rtl/w512/matcha_parser.v (192 bytes) differ only in the window: the
generator's `headerBytes`. Exits non-zero if a synthesis fails.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from bench.provenance import read_resources, write_report, yosys_version  # noqa: E402

SYNTH = ROOT / "build/bench/parser-window"
CELLS = ["LUT4", "TRELLIS_FF", "DP16KD", "TRELLIS_DPR16X4", "CCU2C"]
CONFIGS = ["w64", "w512"]


def main():
    problems, rows = [], []
    for config in CONFIGS:
        layout = json.loads((ROOT / f"build/rtl/{config}/layout.json").read_text())
        start = time.time()
        r = subprocess.run(["tools/synth_ecp5.sh", config], cwd=ROOT,
                           env={**os.environ, "SYNTH_DIR": str(SYNTH),
                                "TOP": "matcha_parser"})
        seconds = round(time.time() - start)
        if r.returncode != 0:
            problems.append(f"synthesis of matcha_parser ({config}) failed")
        rows.append((config, layout["headerBytes"], layout["parser"]["latency"],
                     read_resources(SYNTH / config / "resources.txt"), seconds))
    md = ("# The header window's cost: the parser alone on ECP5\n\n"
          "`matcha_parser` of each configuration (the overlay parse graph: 15 header "
          "instances, QinQ and VXLAN with the inner stack), synthesized by "
          f"{yosys_version()} with `synth_ecp5` (no place and route); the window is the "
          "generator's `headerBytes`. Times are wall clock.\n\n"
          "| config | header window | parser latency (clocks) | " + " | ".join(CELLS) +
          " | synthesis time |\n| --- | ---: | ---: | " + " | ".join("---:" for _ in CELLS) +
          " | ---: |\n")
    for config, window, latency, res, seconds in rows:
        md += (f"| {config} | {window} B | {latency} | " +
               " | ".join(str(res.get(c, "?")) for c in CELLS) + f" | {seconds} s |\n")
    md += "\n"
    write_report(md, ROOT / "bench/results/parser_window.md",
                 "python bench/synth/parser_window.py", problems)


if __name__ == "__main__":
    main()
