#!/usr/bin/env bash
# Table benchmark: ECP5 resources of the exact, ternary and LPM units over a sweep of key
# widths and sizes (Yosys synth_ecp5), written to bench/results/tables.md.
#   bash bench/tables/run.sh      (from the repository root, after `make setup`)
set -euo pipefail
cd "$(dirname "$0")/../.."
set -a; . ./versions.env; set +a
sweep=build/rtl/table-sweep
rm -rf "$sweep"
(cd rtl && mvn -B -q -Dspinalhdl.version="$SPINALHDL_VERSION" -Dscala.version="$SCALA_VERSION" \
  -Dscala.binary.version="$SCALA_BINARY_VERSION" -Dscala-maven-plugin.version="$SCALA_MAVEN_PLUGIN_VERSION" \
  -Dexec-maven-plugin.version="$EXEC_MAVEN_PLUGIN_VERSION" -Dscalatest.version="$SCALATEST_VERSION" \
  -Dscalatest-maven-plugin.version="$SCALATEST_MAVEN_PLUGIN_VERSION" -Dsurefire.version="$SUREFIRE_VERSION" \
  compile exec:java -Dexec.mainClass=matcha.table.TableSweep -Dexec.args="--out ../$sweep")
out=bench/results/tables.md
{
  echo "# Match-table units on ECP5"
  echo
  echo "One table unit (the table, its AXI4-Lite control window and the self-describing block),"
  echo "synthesized alone by Yosys \`synth_ecp5\`. Every unit takes a key every clock (II = 1);"
  echo "latency is the unit's fixed lookup latency in clocks (exact 3, LPM levels + 2, ternary 7),"
  echo "as the cocotb tests in tb/exact_table, tb/lpm_table and tb/ternary_table check it clock for"
  echo "clock."
  echo
  echo "| unit | latency | LUT4 | TRELLIS_FF | DP16KD | TRELLIS_DPR16X4 | CCU2C |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$out"
for dir in "$sweep"/*/; do
  name=$(basename "$dir")
  top=$(basename "$(ls "$dir"/*.v)" .v)
  RTL_DIR=$sweep SYNTH_DIR=build/synth/table-sweep TOP=$top tools/synth_ecp5.sh "$name" >/dev/null
  latency=$(awk -v n="$name" '$1 == n { print $2 }' "$sweep/latency.tsv")
  res=build/synth/table-sweep/$name/resources.txt
  printf '| %s | %s | %s |\n' "$name" "$latency" "$(awk '{print $2}' "$res" | paste -sd'|' - | sed 's/|/ | /g')" >>"$out"
done
{
  echo
  echo "Produced by \`bash bench/tables/run.sh\` on commit $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d)."
} >>"$out"
cat "$out"
