#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ECP5 synthesis benchmark: Yosys synth_ecp5 of the built-in pipeline (matcha_l2l3, w64 and
# w512) and of the Corundum application block around it (mqnic_app_block, corundum-w64),
# written to bench/results/synth_ecp5.md (netlists and logs in build/bench/synth/); and
# tools/synth_check.sh on every 512-bit and table unit top, the Corundum scale's among them.
#   bash bench/synth/run.sh      (from the repository root, after `make setup` and `make rtl`)
# Exits non-zero if a synthesis fails; the results file is written in any case.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/build/venv/bin:$PATH"
synth=build/bench/synth
rm -rf "$synth"
status=0
for target in matcha_l2l3:w64 matcha_l2l3:w512 mqnic_app_block:corundum-w64; do
  top=${target%%:*} config=${target#*:}
  start=$(date +%s)
  mkdir -p "$synth/$top/$config"
  SYNTH_DIR=$synth/$top TOP=$top tools/synth_ecp5.sh "$config" || status=1
  echo $(( $(date +%s) - start )) > "$synth/$top/$config/seconds"
done
python bench/synth/write_results.py --synth "$synth" --out bench/results/synth_ecp5.md || status=1
# Yosys' front end on the Corundum-scale tops too, which make test's check leaves out.
SYNTH_CHECK_ALL=1 tools/synth_check.sh w512 tables || status=1
exit $status
