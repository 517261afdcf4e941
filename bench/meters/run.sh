#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Meter benchmark, written to bench/results/meters.md (raw numbers in build/bench/meters/):
# the meter units of matcha.table.MeterSweep (generated here with Maven into
# build/bench/meter-sweep/rtl, outside build/rtl, which `make rtl` removes), each through
# the cocotb bench bench/meters/meter_bench_tb.py (operations per clock and latency with
# every request on one meter, command clocks) and Yosys synth_ecp5.
#   bash bench/meters/run.sh [--units meters_n256] [--no-synth]
#   (from the repository root, after `make setup`; not while another Maven build runs in
#   the same checkout). Extra arguments go to bench/meters/run_meters.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
set -a; . ./versions.env; set +a
export PATH="$PWD/build/venv/bin:$PATH"
sweep=build/bench/meter-sweep/rtl
rm -rf "$sweep"
nice -n 10 tools/mvn.sh compile exec:java -Dexec.mainClass=matcha.table.MeterSweep -Dexec.args="--out $PWD/$sweep"
nice -n 10 python bench/meters/run_meters.py --sweep "$sweep" "$@"
