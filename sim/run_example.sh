#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shipped examples (make run): matcha-sim on an example capture, its tables loaded over
# the control socket by matcha-ctl from the example's tables file, then the simulator's
# summary and the list of output captures.
#
# usage: [EXAMPLE=overlay|l2l3] sim/run_example.sh [OUT_DIR]        (default build/run)
#
#   overlay  (the default) the overlay program on sim/examples/overlay.pcap with
#            sim/examples/overlay_tables.txt
#   l2l3     the built-in L2/L3 program on sim/examples/l2l3.pcap with
#            sim/examples/l2l3_tables.txt
#
# The binaries must exist (make run builds them). Environment, for tests and other builds:
#   EXAMPLE        the example                    (default overlay)
#   MATCHA_SIM     the simulator                  (default build/sim/w64/<example>/matcha-sim)
#   MATCHA_CTL     the table loader               (default build/sw/matcha-ctl)
#   MATCHA_LAYOUT  the program's layout           (default build/rtl/w64/layout-overlay.json,
#                                                  build/rtl/w64/layout.json for l2l3)
#   MATCHA_SOCKET  the control socket             (default OUT_DIR/matcha.sock; at most 107 bytes)
#   RUN_TIMEOUT    seconds the simulator may take after the tables are loaded (default 120)
#
# Exit status: 0 when the tables loaded and the simulator ended cleanly; otherwise 1 with
# the reason on stderr. If the loader fails the simulator is killed rather than left
# waiting for a client.
set -uo pipefail

cd "$(dirname "$0")/.."
sim_pid= started=
# The simulator never outlives this script: stopped (and waited for) on every way out.
stop_sim() {
  if [[ -n $sim_pid ]]; then
    kill "$sim_pid" 2>/dev/null
    wait "$sim_pid" 2>/dev/null
    sim_pid=
  fi
}
trap 'stop_sim; rm -f "$started"' EXIT
fail() { stop_sim; echo "run_example: $*" >&2; exit 1; }

out=${1:-build/run}
example=${EXAMPLE:-overlay}
case $example in
  overlay) default_layout=build/rtl/w64/layout-overlay.json build='make sim PROGRAM=overlay' ;;
  l2l3) default_layout=build/rtl/w64/layout.json build='make sim' ;;
  *) fail "EXAMPLE must be overlay or l2l3, not '$example'" ;;
esac
sim=${MATCHA_SIM:-build/sim/w64/$example/matcha-sim}
ctl=${MATCHA_CTL:-build/sw/matcha-ctl}
layout=${MATCHA_LAYOUT:-$default_layout}
sock=${MATCHA_SOCKET:-$out/matcha.sock}
timeout=${RUN_TIMEOUT:-120}
capture=sim/examples/$example.pcap
tables=sim/examples/${example}_tables.txt

[[ -x $sim ]] || fail "$sim is missing: build it with '$build'"
[[ -x $ctl ]] || fail "$ctl is missing: build it with 'make -C sw/driver'"
[[ -f $layout ]] || fail "$layout is missing: generate it with 'make rtl'"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || fail "RUN_TIMEOUT must be a whole number of seconds, not '$timeout'"
mkdir -p "$out" || fail "cannot create $out"
# A socket file left by a killed run may be there already: wait for one not older than
# this (file times move in steps of a few milliseconds, so the simulator's socket can
# have the very time of the marker: "newer" alone missed it about one run in four).
started=$(mktemp) || fail "cannot create a temporary file"
"$sim" --socket "$sock" --wait-client --in "0=$capture" --out "$out" --layout "$layout" &
sim_pid=$!

# Until the simulator listens (it checks its input and the layout first): at most 30 s.
for ((i = 0; i < 300; i++)); do
  [[ -S $sock && ! $started -nt $sock ]] && break
  if ! kill -0 "$sim_pid" 2>/dev/null; then
    wait "$sim_pid"
    rc=$? sim_pid=
    fail "matcha-sim ended (exit $rc) before it served $sock"
  fi
  sleep 0.1
done
[[ -S $sock && ! $started -nt $sock ]] || fail "matcha-sim did not open $sock in 30 s"

# The loader's own bound: the driver gives up on a simulator silent for 60 s.
if ! "$ctl" "sim:$sock" --layout "$layout" -f "$tables"; then
  fail "matcha-ctl could not load $tables (above); matcha-sim stopped"
fi

for ((i = 0; i < timeout * 10; i++)); do
  kill -0 "$sim_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$sim_pid" 2>/dev/null; then
  fail "matcha-sim did not finish within $timeout s of the tables being loaded (RUN_TIMEOUT); stopped"
fi
wait "$sim_pid"
rc=$? sim_pid=
((rc == 0)) || fail "matcha-sim exit status $rc (summary above)"

echo "output captures in $out:"
for f in "$out"/*.pcap; do
  [[ -e $f ]] && echo "  $f"
done
