#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test step of `make test`, carries on past failures, then prints one summary.
#
# Called by the Makefile (`make test`) with MAKE set; each step is a make target, so a
# step can also be run alone (`make rtl-test`, `make tb-test`, `make synth-w64`, ...).
# Every step's output is shown and also kept in build/logs/<step>.log.
# Exit status: 0 if no step failed. The summary gives each step's wall time and the total;
# a total over RUN_BUDGET_S (CI's budget for `make test`) is reported loudly. The last line
# is "<N> passed, <M> failed" (steps).
set -uo pipefail

cd "$(dirname "$0")/.."
MAKE=${MAKE:-make}
RTL_STAMP=${RTL_STAMP:-build/rtl/.generated}
CONFIGS=${CONFIGS:-w64 w512}
RUN_BUDGET_S=${RUN_BUDGET_S:-1500}
LOGS=build/logs
run_start=$(date +%s)
mkdir -p "$LOGS"

# Under `make -n test` the sub-makes only print their commands.
dry=0
mflags=${MAKEFLAGS:-}
mflags=${mflags%% *}
[[ $mflags != -* && $mflags == *n* ]] && dry=1

names=() results=() details=() times=()

# step <name> <detail-function> <command...>
step() {
  local name=$1 detail_fn=$2; shift 2
  local log=$LOGS/$name.log start rc detail
  echo
  echo "==== $name: $* ===="
  start=$(date +%s)
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  detail=$($detail_fn "$log" "$rc" 2>/dev/null || true)
  names+=("$name"); times+=("$(( $(date +%s) - start ))s")
  if (( dry )); then results+=("dry-run")
  elif (( rc == 0 )); then results+=("passed")
  else results+=("FAILED"); detail="${detail:+$detail; }exit $rc, log $log"
  fi
  details+=("$detail")
}

skip() { names+=("$1"); results+=("skipped"); details+=("$2"); times+=("-"); }

# Detail extractors: <log> <rc> -> one short line.
d_rtl() {
  local ok fail
  ok=$(grep -c '^check_names: .*: ok' "$1"); fail=$(grep -c '^check_names: .*: FAIL' "$1")
  if (( ok + fail )); then echo "name check: $ok configs ok, $fail failed"
  elif (( $2 != 0 )); then echo "generator failed (before the name check)"
  elif grep -q 'Nothing to be done' "$1"; then echo "up to date"; fi
}
d_scalatest() {
  local s
  s=$(grep -Eo 'Tests: succeeded [0-9]+, failed [0-9]+' "$1" | tail -1)
  if grep -q 'Total number of tests run: 0' "$1"; then
    echo "no ScalaTest tests yet (0 run)"
  elif [[ -n $s ]]; then
    set -- $s; echo "${3%,} passed, $5 failed"
  fi
}
d_pytest() {
  local line
  if grep -q 'no tests ran' "$1"; then echo "no tests collected"; return; fi
  line=$(grep -E '[0-9]+ (passed|failed|errors?|skipped)' "$1" | grep -E ' in [0-9.]+s' | tail -1)
  [[ -n $line ]] && grep -Eo '[0-9]+ (passed|failed|errors?|skipped|xfailed|xpassed|deselected)' <<<"$line" | paste -sd, - | sed 's/,/, /g'
}
d_models() { grep -Eo '[0-9]+ models up to date in [0-9]+ s' "$1" | tail -1; }
# The synth step: the front-end check's count, the board's logic.
d_synth() {
  local board=build/bitstream-synth/utilization.txt out=()
  out+=("$(grep -m1 -o 'synth_check: [0-9]* tops ok, [0-9]* failed' "$1" || echo 'synth_check FAILED')")
  if [[ -s $board ]] && ! grep -q "bitstream: FAIL" "$1"; then
    out+=("board $(awk '$1 == "LUT4" { print $2 " LUT4" }' "$board") without the pipeline")
  else
    out+=("board FAILED")
  fi
  (IFS=','; echo "${out[*]}" | sed 's/,/, /g')
}
d_ctest() { grep -Eo '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1; }
d_spdx() { grep -m1 -o 'check_spdx: .*' "$1"; }

step spdx d_spdx tools/check_spdx.sh
step rtl d_rtl "$MAKE" --no-print-directory rtl
step rtl-test d_scalatest "$MAKE" --no-print-directory rtl-test
# Later steps use whatever `rtl` produced; -o keeps them from retrying a failed generation.
step tb-models d_models "$MAKE" --no-print-directory -o "$RTL_STAMP" tb-models
step tb-test d_pytest "$MAKE" --no-print-directory -o "$RTL_STAMP" -o tb-models tb-test
# Yosys' front end on every generated top level, two at a time, and the board's ECP5
# mapping with the pipeline as a black box. The built-in program's ECP5 mapping (w64 and
# w512) is make bench's (bench/synth/run.sh): at 5 to 6.5 minutes on one core it was
# about a fifth of this run (bench/results/test_budget.md).
step synth d_synth "$MAKE" --no-print-directory -o "$RTL_STAMP" -j2 synth-check synth-board
if [[ -f sw/driver/Makefile ]] && "$MAKE" -s -C sw/driver -n test >/dev/null 2>&1; then
  step sw-test d_ctest "$MAKE" --no-print-directory -j2 -C sw/driver test
else
  skip sw-test "sw/driver has no Makefile with a test target yet"
fi

pass=0 fail=0
echo
echo "==================== make test: summary ===================="
for i in "${!names[@]}"; do
  case ${results[$i]} in passed) pass=$((pass + 1)) ;; FAILED) fail=$((fail + 1)) ;; esac
  printf '%-12s %-8s %6s  %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}" "${details[$i]}"
done
total=$(( $(date +%s) - run_start ))
printf '%-12s %-8s %6s  %s\n' total "" "${total}s" "budget ${RUN_BUDGET_S}s"
echo "============================================================"
if (( !dry && total > RUN_BUDGET_S )); then
  echo "!!!! make test took ${total}s, over its budget of ${RUN_BUDGET_S}s (CI's limit is"
  echo "!!!! 25 minutes on 2 cores): see the step times above and tb/README.md, 'Time budget'"
fi
(( dry )) && echo "(dry run: nothing was executed)"
echo "$pass passed, $fail failed"
(( fail == 0 ))
