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

# record <name> <detail-function> <log> <exit status> <seconds>: a finished step's line of
# the summary.
record() {
  local name=$1 detail_fn=$2 log=$3 rc=$4 detail
  detail=$($detail_fn "$log" "$rc" 2>/dev/null || true)
  names+=("$name"); times+=("${5}s")
  if (( dry )); then results+=("dry-run")
  elif (( rc == 0 )); then results+=("passed")
  else results+=("FAILED"); detail="${detail:+$detail; }exit $rc, log $log"
  fi
  details+=("$detail")
}

# step <name> <detail-function> <command...>
step() {
  local name=$1 detail_fn=$2; shift 2
  local log=$LOGS/$name.log start rc
  echo
  echo "==== $name: $* ===="
  start=$(date +%s)
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  record "$name" "$detail_fn" "$log" "$rc" "$(( $(date +%s) - start ))"
}

skip() { names+=("$1"); results+=("skipped"); details+=("$2"); times+=("-"); }

# beside <name> <detail-function> <command...>: starts a step in the background, its output
# in its log only; finish_beside shows that log and records the step once it has ended.
beside_pid="" beside_args=()
beside() {
  local name=$1
  beside_args=("$@")
  echo
  echo "==== $name (beside the next step): ${*:3} ===="
  (
    start=$(date +%s)
    "${@:3}" >"$LOGS/$name.log" 2>&1
    rc=$?
    echo "$rc $(( $(date +%s) - start ))" >"$LOGS/$name.status"
  ) &
  beside_pid=$!
}
finish_beside() {
  local name=${beside_args[0]} rc secs
  wait "$beside_pid"
  read -r rc secs <"$LOGS/$name.status" || { rc=1 secs=0; }
  echo
  echo "==== $name (ran beside the step before): ${beside_args[*]:2} ===="
  cat "$LOGS/$name.log"
  record "$name" "${beside_args[1]}" "$LOGS/$name.log" "$rc" "$secs"
}

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
# The synth step: w64's resources, the front-end check's count, the board's logic.
d_synth() {
  local f=build/synth/w64/resources.txt board=build/bitstream-synth/utilization.txt out=()
  if [[ -s $f ]] && ! grep -q "synth w64: FAIL" "$1"; then
    out+=("w64 $(awk '$1 == "LUT4" { print $2 " LUT4" }' "$f")")
  else
    out+=("w64 FAILED")
  fi
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
# Yosys runs on one core: the built-in program's ECP5 mapping (w64, the board's) on one, the
# front-end check of every other top level and the board's own logic on the other. The
# 512-bit mapping is make bench's (bench/synth/run.sh). The C tests run beside it, one
# process: the ECP5 mapping is one Yosys process for minutes, longer than the rest of the
# step, so they take the second core's idle time (bench/results/test_budget.md).
have_sw_test=0
if [[ -f sw/driver/Makefile ]] && "$MAKE" -s -C sw/driver -n test >/dev/null 2>&1; then
  have_sw_test=1
  beside sw-test d_ctest "$MAKE" --no-print-directory -C sw/driver test TEST_JOBS=1
fi
step synth d_synth "$MAKE" --no-print-directory -o "$RTL_STAMP" -j2 synth-w64 synth-check synth-board
if (( have_sw_test )); then
  finish_beside
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
