#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Table benchmark, written to bench/results/tables.md (raw numbers in build/bench/tables/):
# - lookups: bench/tables/run_lookups.py on every table unit in build/rtl/tables, in
#   Verilator: lookups per clock (must be 1) and latency in clocks (must not vary, must
#   be the descriptor's), idle and with WRITE commands running;
# - a sweep of key widths and sizes (matcha.table.TableSweep, generated here with Maven
#   into build/bench/table-sweep/rtl, outside build/rtl, which `make rtl` removes): the same
#   lookup bench on every unit of it, and its resources by Yosys synth_ecp5.
#   bash bench/tables/run.sh      (from the repository root, after `make setup` and `make rtl`)
# Exits non-zero if a unit fails its lookup bench or a synthesis fails; the results file
# is written in any case, with the failures listed.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/../.."
set -a; . ./versions.env; set +a
export PATH="$PWD/build/venv/bin:$PATH"
raw=build/bench/tables
sweep=build/bench/table-sweep/rtl
synth=build/bench/table-sweep/synth
rm -rf "$raw"
mkdir -p "$raw"
status=0

python bench/tables/run_lookups.py --out "$raw/units.md" || status=1

rm -rf "$sweep"
tools/mvn.sh compile exec:java -Dexec.mainClass=matcha.table.TableSweep -Dexec.args="--out $PWD/$sweep"

python bench/tables/run_lookups.py --sweep "$sweep" --out "$raw/sweep.md" || status=1

rm -rf "$synth"
for dir in "$sweep"/*/; do
  name=$(basename "$dir")
  for v in "$dir"*.v; do
    RTL_DIR=$sweep SYNTH_DIR=$synth TOP=$(basename "$v" .v) tools/synth_ecp5.sh "$name" || status=1
  done
done

python bench/tables/write_results.py --units-json "$raw/units.json" --sweep-json "$raw/sweep.json" \
  --sweep "$sweep" --synth "$synth" --out bench/results/tables.md || status=1
exit $status
