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
#                                          UNIT e.g. matcha_overlay_acl: only those;
#                                          SCALES="board" for one scale only)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/build/venv/bin:$PATH"
root=build/bench/units
rtl=$root/rtl
status=0

rm -rf "$rtl"
tools/mvn.sh compile exec:java -Dexec.mainClass=matcha.program.ProgramUnits -Dexec.args="--out $PWD/$rtl"

# yosys_run <dir> <top> <script> <out>: one Yosys run of a unit, its `stat` in <out>.
yosys_run() {
  (cd "$1" && yosys -q -l "$4/yosys.log" -p "
      read_verilog $2.v
      $3
      tee -q -o $4/stat.txt stat") >"$4/yosys.stdout" 2>&1
}

# synth <family> <scale> <top>: one unit through one flow, its `stat` and wall time kept.
# Yosys 0.23 cannot map some LUT-RAM shapes for UltraScale+ (lutrams_xc5v_map.v: "invalid
# OPTION_ABITS/WIDTH combination"); such a unit is synthesized again with -nolutram, and
# its file `options` says so.
synth() {
  local family=$1 scale=$2 top=$3 out=$PWD/$root/$1/$2/$3
  rm -rf "$out" && mkdir -p "$out"
  local script
  case $family in
    xcup) script="synth_xilinx -family xcup -uram -noiopad -flatten -top $top" ;;
    ecp5) script="synth_ecp5 -top $top" ;;
  esac
  local start=$(date +%s)
  if yosys_run "$rtl/$scale" "$top" "$script" "$out" ||
     { [[ $family == xcup ]] && grep -q "invalid OPTION_ABITS/WIDTH" "$out/yosys.log" &&
       echo "-nolutram" >"$out/options" && yosys_run "$rtl/$scale" "$top" "$script -nolutram" "$out"; }; then
    echo $(( $(date +%s) - start )) >"$out/seconds"
    echo "units: $family $scale $top: $(cat "$out/seconds") s"
  else
    echo "units: $family $scale $top: FAIL (log $out/yosys.log)" >&2
    status=1
  fi
}

for scale_dir in "$rtl"/*/; do
  scale=$(basename "$scale_dir")
  [[ " ${SCALES:-corundum board} " == *" $scale "* ]] || continue
  for v in "$scale_dir"matcha_overlay_*.v; do
    top=$(basename "$v" .v)
    (( $# == 0 )) || [[ " $* " == *" $top "* ]] || continue
    [[ $scale == corundum ]] && synth xcup "$scale" "$top"
    synth ecp5 "$scale" "$top"
  done
done

python bench/synth/write_units.py --units "$root" --out bench/results/overlay_resources.md || status=1
exit $status
