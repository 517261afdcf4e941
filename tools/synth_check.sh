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
#                                         corundum-overlay
#
# The overlay's Corundum block is checked twice: as Corundum elaborates it by default (its
# on-chip core) and with DDR_ENABLE and an Alveo DDR4 channel's widths (its memory core;
# ip/corundum/README.md, "Tables in the card's memory").
#
# Not here: the board's tops, which instantiate ECP5 primitives that only synth_ecp5's cell
# library defines (`make synth-board` synthesizes them), and the Corundum scale's (BENCH_ONLY
# below) unless SYNTH_CHECK_ALL=1.
# Writes build/synth/check/<config>/<top>.log; exits non-zero if any top fails. Checks
# SYNTH_CHECK_JOBS tops at once (default: one a core).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
RTL_DIR=${RTL_DIR:-$root/build/rtl}
OUT=${OUT:-$root/build/synth/check}
YOSYS=${YOSYS:-yosys}
(( $# )) || set -- w64 w512 tables corundum corundum-w64 corundum-overlay-w64 corundum-overlay

# The Corundum-scale tops, checked by `make bench` (bench/synth/run.sh, SYNTH_CHECK_ALL=1)
# and not by `make test`: the 512-bit overlay and its ACL unit are the same generator code
# as the 64-bit overlay and the test ACL units checked here, at the card's sizes, and
# took a third of this check's time (bench/results/test_budget.md); the 512-bit overlay
# block's shell is the 64-bit one's code.
BENCH_ONLY=" w512/matcha_overlay w512/matcha_overlay_mem tables/matcha_ternary_acl_table corundum-overlay/mqnic_app_block "
# The pipelines inside a Corundum block are checked in their own configurations (the same
# generator and configuration make them); in the block they are black boxes, so that its
# check is the shell's and the core's own logic.
PIPELINES="matcha_l2l3 matcha_overlay mem_matcha_overlay_mem"

# Parameter sets a top is checked with, one line each ("" for its defaults).
variants() {
  echo ""
  [[ $1/$2 == corundum-overlay*/mqnic_app_block ]] &&
    echo "-chparam DDR_ENABLE 1 -chparam AXI_DDR_DATA_WIDTH 512 -chparam AXI_DDR_ADDR_WIDTH 34"
  return 0
}

# Every (config, top, parameters) to check, the largest Verilog first, so that the two
# longest do not end up last on one core; JOBS at a time (default: one a core).
JOBS=${SYNTH_CHECK_JOBS:-$(nproc)}
tasks=() failed=0
for cfg in "$@"; do
  for src in "$RTL_DIR/$cfg"/*.v; do
    [[ -f $src ]] || { echo "synth_check: FAIL: no Verilog in $RTL_DIR/$cfg (run 'make rtl')" >&2; failed=$((failed + 1)); continue; }
    top=$(basename "$src" .v)
    [[ ${SYNTH_CHECK_ALL:-0} == 1 || $BENCH_ONLY != *" $cfg/$top "* ]] || continue
    n=0
    while IFS= read -r params; do
      tasks+=("$(stat -c %s "$src")|$cfg|$top|$OUT/$cfg/$top${params:+-$n}.log|$params")
      n=$((n + 1))
    done < <(variants "$cfg" "$top")
  done
done

# check <config> <top> <log> <parameters>: writes <log>.ok when the top passes.
check() {
  local cfg=$1 top=$2 log=$3 params=$4 boxes=""
  mkdir -p "$(dirname "$log")"
  rm -f "$log.ok"
  if [[ $top == mqnic_app_block ]]; then
    for m in $PIPELINES; do grep -q "^module $m " "$RTL_DIR/$cfg/$top.v" && boxes+=" $m"; done
  fi
  # From the source directory: $readmem* files are named relative to it.
  (cd "$RTL_DIR/$cfg" && "$YOSYS" -q -l "$log" -p "
     read_verilog $top.v
     ${boxes:+blackbox$boxes}
     hierarchy -check -top $top $params
     proc
     opt_clean
     check -assert") >/dev/null 2>&1 && touch "$log.ok"
}

mapfile -t tasks < <(printf '%s\n' "${tasks[@]}" | sort -t'|' -k1,1nr)
for t in "${tasks[@]}"; do
  IFS='|' read -r _ cfg top log params <<<"$t"
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n; done
  check "$cfg" "$top" "$log" "$params" &
done
wait

ok=0
for t in "${tasks[@]}"; do
  IFS='|' read -r _ cfg top log params <<<"$t"
  if [[ -f $log.ok ]]; then
    ok=$((ok + 1))
  else
    failed=$((failed + 1))
    echo "synth_check: FAIL: $cfg/$top ${params:+($params) }(log $log):" >&2
    grep -h -m5 -B2 '^ERROR' "$log" >&2
  fi
done
echo "synth_check: $ok tops ok, $failed failed"
(( failed == 0 ))
