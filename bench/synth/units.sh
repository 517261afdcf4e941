#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Resources of the overlay program's tables, one unit at a time (matcha.program.ProgramUnits:
# each table as the pipeline builds it, with its window, default action and per-entry
# counters; the session table; the policer array), at each of the program's scales, written
# to bench/results/overlay_resources.md (netlists and logs in build/bench/units/):
# - the Corundum scale through Yosys `synth_xilinx -family xcup -uram` (UltraScale+, the
#   Alveo cards Corundum runs on) and `synth_ecp5`;
# - the board scale through `synth_ecp5` (the Versa board's LFE5UM5G-45F).
#   bash bench/synth/units.sh [UNIT...]   (from the repository root, after `make setup`;
#                                          UNIT e.g. matcha_overlay_acl: only those)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/build/venv/bin:$PATH"
root=build/bench/units
rtl=$root/rtl
status=0

rm -rf "$rtl"
tools/mvn.sh compile exec:java -Dexec.mainClass=matcha.program.ProgramUnits -Dexec.args="--out $PWD/$rtl"

# synth <family> <scale> <top>: one unit through one flow, its `stat` and wall time kept.
synth() {
  local family=$1 scale=$2 top=$3 out=$root/$1/$2/$3
  mkdir -p "$out"
  local script
  case $family in
    xcup) script="synth_xilinx -family xcup -uram -noiopad -flatten -top $top" ;;
    ecp5) script="synth_ecp5 -top $top" ;;
  esac
  local start=$(date +%s)
  if (cd "$rtl/$scale" && yosys -q -l "$PWD/../../$family/$scale/$top/yosys.log" -p "
      read_verilog $top.v
      $script
      tee -q -o $PWD/../../$family/$scale/$top/stat.txt stat") >"$out/yosys.stdout" 2>&1; then
    echo $(( $(date +%s) - start )) >"$out/seconds"
    echo "units: $family $scale $top: $(cat "$out/seconds") s"
  else
    echo "units: $family $scale $top: FAIL (log $out/yosys.log)" >&2
    status=1
  fi
}

for scale_dir in "$rtl"/*/; do
  scale=$(basename "$scale_dir")
  for v in "$scale_dir"matcha_overlay_*.v; do
    top=$(basename "$v" .v)
    (( $# == 0 )) || [[ " $* " == *" $top "* ]] || continue
    [[ $scale == corundum ]] && synth xcup "$scale" "$top"
    synth ecp5 "$scale" "$top"
  done
done

python bench/synth/write_units.py --units "$root" --out bench/results/overlay_resources.md || status=1
exit $status
