#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Session table benchmark, written to bench/results/sessions.md (raw numbers in
# build/bench/sessions/): the units of matcha.table.SessionSweep (generated with Maven into
# build/bench/session-sweep/rtl), each under 100 % new flows in Verilator
# (bench/sessions/learn_tb.py) and through Yosys synth_ecp5.
#   bash bench/sessions/run.sh      (from the repository root, after `make setup`)
set -euo pipefail
cd "$(dirname "$0")/../.."
set -a; . ./versions.env; set +a
export PATH="$PWD/build/venv/bin:$PATH"
sweep=build/bench/session-sweep/rtl
synth=build/bench/session-sweep/synth
status=0

rm -rf "$sweep"
tools/mvn.sh compile exec:java -Dexec.mainClass=matcha.table.SessionSweep -Dexec.args="--out $PWD/$sweep"

rm -rf "$synth"
for dir in "$sweep"/*/; do
  RTL_DIR=$sweep SYNTH_DIR=$synth TOP=matcha_session_table tools/synth_ecp5.sh "$(basename "$dir")" || status=1
done

python bench/sessions/run_bench.py --sweep "$sweep" --synth "$synth" --out bench/results/sessions.md || status=1
exit $status
