#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Yosys' front end on every generated top level: each must read, elaborate (`hierarchy
# -check`), turn its processes into logic (`proc`) and pass `check -assert` (no multiple
# drivers, no combinational loops, nothing undriven that is used) in every module. Module
# by module, not flattened: SpinalHDL refuses a combinational loop through the hierarchy
# when it generates, and flattening was most of the 512-bit overlay's check
# (bench/results/test_budget.md, "The synth step without autoname"). This is what "every block synthesizes" asks of the RTL, in seconds for most
# modules; the full ECP5 mapping of the built-in program runs in `make synth-w64`, the
# board's in `make synth-board`, every configuration in `make bench` (bench/synth/).
#
#   tools/synth_check.sh [config ...]     default: w64 w512 tables corundum corundum-w64 corundum-overlay-w64
#
# The overlay's Corundum block is checked twice: as Corundum elaborates it by default (its
# on-chip core) and with DDR_ENABLE and an Alveo DDR4 channel's widths (its memory core;
# ip/corundum/README.md, "Tables in the card's memory").
#
# Not here: the board's tops, which instantiate ECP5 primitives that only synth_ecp5's cell
# library defines (`make synth-board` synthesizes them). The Corundum scale's tops (the 512-bit
# overlay, its ACL unit matcha_ternary_acl_table) are checked too, the overlay the longest.
# Writes build/synth/check/<config>/<top>.log; exits non-zero if any top fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
RTL_DIR=${RTL_DIR:-$root/build/rtl}
OUT=${OUT:-$root/build/synth/check}
YOSYS=${YOSYS:-yosys}
(( $# )) || set -- w64 w512 tables corundum corundum-w64 corundum-overlay-w64

# Parameter sets a top is checked with, one line each ("" for its defaults).
variants() {
  echo ""
  [[ $1/$2 == corundum-overlay-w64/mqnic_app_block ]] &&
    echo "-chparam DDR_ENABLE 1 -chparam AXI_DDR_DATA_WIDTH 512 -chparam AXI_DDR_ADDR_WIDTH 34"
  return 0
}

ok=0 failed=0
for cfg in "$@"; do
  for src in "$RTL_DIR/$cfg"/*.v; do
    [[ -f $src ]] || { echo "synth_check: FAIL: no Verilog in $RTL_DIR/$cfg (run 'make rtl')" >&2; failed=$((failed + 1)); continue; }
    top=$(basename "$src" .v)
    mkdir -p "$OUT/$cfg"
    n=0
    while IFS= read -r params; do
      log=$OUT/$cfg/$top${params:+-$n}.log
      n=$((n + 1))
      # From the source directory: $readmem* files are named relative to it.
      if (cd "$RTL_DIR/$cfg" && "$YOSYS" -q -l "$log" -p "
           read_verilog $top.v
           hierarchy -check -top $top $params
           proc
           opt_clean
           check -assert") >/dev/null 2>&1; then
        ok=$((ok + 1))
      else
        failed=$((failed + 1))
        echo "synth_check: FAIL: $cfg/$top ${params:+($params) }(log $log):" >&2
        grep -h -m5 -B2 '^ERROR' "$log" >&2
      fi
    done < <(variants "$cfg" "$top")
  done
done
echo "synth_check: $ok tops ok, $failed failed"
(( failed == 0 ))
