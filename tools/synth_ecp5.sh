#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Synthesise one generated configuration for ECP5 with Yosys and report its resources.
#
#   tools/synth_ecp5.sh <config>            e.g. tools/synth_ecp5.sh w64
#
# Reads  $RTL_DIR/<config>/$TOP.v            (default build/rtl/w64/matcha_packet_path.v)
# Writes $SYNTH_DIR/<config>/$TOP.json       netlist (input for nextpnr-ecp5)
#        $SYNTH_DIR/<config>/yosys.log       full Yosys log
#        $SYNTH_DIR/<config>/stat.txt        `stat` of the synthesised design
#        $SYNTH_DIR/<config>/resources.txt   LUT4, TRELLIS_FF, DP16KD, TRELLIS_DPR16X4, CCU2C
# Fails if the input is missing, Yosys reports an error, or the netlist is not written.
# Environment: RTL_DIR, SYNTH_DIR, TOP, YOSYS (default: Debian's `yosys`).
set -euo pipefail

cfg=${1:?usage: $0 <config>   (e.g. w64)}
root=$(cd "$(dirname "$0")/.." && pwd)
RTL_DIR=${RTL_DIR:-$root/build/rtl}
SYNTH_DIR=${SYNTH_DIR:-$root/build/synth}
TOP=${TOP:-matcha_packet_path}
YOSYS=${YOSYS:-yosys}

src=$RTL_DIR/$cfg/$TOP.v
if [[ ! -f $src ]]; then
  echo "synth $cfg: FAIL: $src not found (run 'make rtl' first)" >&2
  exit 1
fi
src_dir=$(cd "$RTL_DIR/$cfg" && pwd)
out=$(mkdir -p "$SYNTH_DIR/$cfg" && cd "$SYNTH_DIR/$cfg" && pwd)
rm -f "$out/$TOP.json" "$out/stat.txt" "$out/resources.txt"

echo "synth $cfg: yosys synth_ecp5 -top $TOP ($($YOSYS -V | head -1)), log: $out/yosys.log"
start=$(date +%s)
# Run from the source directory: SpinalHDL's $readmem* initialisation files are
# referenced relative to it.
set +e
# synth_ecp5 up to its `check` step, then that step without `autoname`: renaming the
# flattened netlist's objects changes no cell and was about a quarter of its time
# (bench/results/test_budget.md, "The synth step without autoname").
(cd "$src_dir" && "$YOSYS" -q -l "$out/yosys.log" -p "
  read_verilog $TOP.v
  synth_ecp5 -top $TOP -run :check
  hierarchy -check
  check -noinit
  blackbox =A:whitebox
  write_json $out/$TOP.json
  tee -q -o $out/stat.txt stat
") >"$out/yosys.stdout" 2>&1
rc=$?
set -e
secs=$(( $(date +%s) - start ))

if (( rc != 0 )) || grep -q '^ERROR' "$out/yosys.log" || [[ ! -s $out/$TOP.json || ! -s $out/stat.txt ]]; then
  echo "synth $cfg: FAIL (yosys exit $rc after ${secs}s)" >&2
  grep -h -A3 '^ERROR' "$out/yosys.log" "$out/yosys.stdout" 2>/dev/null | head -20 >&2 || true
  tail -5 "$out/yosys.stdout" >&2 || true
  exit 1
fi

# `stat` lists per-module cell counts and, for a hierarchical design, the totals
# last; the last count seen for each cell type is the design total.
awk '
  BEGIN { n = split("LUT4 TRELLIS_FF DP16KD TRELLIS_DPR16X4 CCU2C", k, " ") }
  $2 ~ /^[0-9]+$/ { v[$1] = $2 }
  END { for (i = 1; i <= n; i++) printf "%-16s %s\n", k[i], (k[i] in v ? v[k[i]] : 0) }
' "$out/stat.txt" >"$out/resources.txt"

warnings=$(grep -c '^Warning' "$out/yosys.log" || true)
echo "synth $cfg: ok in ${secs}s, $warnings warnings; resources ($out/resources.txt):"
sed 's/^/  /' "$out/resources.txt"
