#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# All benchmarks (make bench):
# - packet path: throughput and latency of matcha_packet_path in clocks for 64..9000-byte
#   frames on w64 and w512 -> bench/results/packet_path.md (raw numbers in build/bench/);
#   extra arguments go to bench/packet_path/run_bench.py (e.g. --configs w512 --sizes 64,1518);
# - tables: lookups per clock and latency of every table unit in build/rtl/tables, and of
#   a sweep of key widths and sizes the same plus ECP5 resources -> bench/results/tables.md
#   (bench/tables/run.sh);
# - sessions: sessions learned per clock under 100 % new flows, occupancy without moves,
#   latency and ECP5 resources of the session table units -> bench/results/sessions.md
#   (bench/sessions/run.sh);
# - meters: operations per clock, latency, command clocks and ECP5 resources of meter units
#   of 256 to 4096 meters -> bench/results/meters.md (bench/meters/run.sh);
# - simulator speed: clocks and frames per second of matcha-sim on w64 and w512
#   -> bench/results/sim.md (bench/sim/run_speed.py);
# - table load: the driver's bus transactions per entry per table kind, and entries per
#   second of matcha-ctl batches into matcha-sim -> bench/results/table_load.md
#   (bench/driver/run_table_load.py);
# - synthesis: Yosys ECP5 resources of matcha_l2l3 (w64, w512) and of the Corundum block
#   (corundum-w64) -> bench/results/synth_ecp5.md (bench/synth/run.sh);
# - overlay: frames per clock, sessions learned per clock and latency of matcha_overlay on
#   w512 -> bench/results/overlay.md (bench/overlay/run_bench.py);
# - scale: the overlay with its mappings and sessions in memory under 1K to 1M flows in
#   matcha-sim -> bench/results/scale.md (bench/scale/run.py, about an hour), the memory-backed
#   table alone at one lookup a clock on slower memories -> bench/results/scale_table.md
#   (bench/scale/run_table.py), the memory-backed session table under 100 % new flows
#   -> bench/results/scale_sessions.md (bench/scale/run_sessions.py), a model of how
#   full buckets of sessions get -> bench/results/session_capacity.md
#   (bench/scale/session_capacity.py), the driver loading 2^20 routes into an LPM
#   table with levels in memory -> bench/results/lpm_load.md (bench/scale/lpm_load.py),
#   and 2^20 mappings into a memory-backed exact table -> bench/results/mapping_load.md
#   (bench/scale/mapping_load.py),
#   and such a table's lookups against slower memories -> bench/results/scale_lpm.md
#   (bench/scale/run_lpm.py), the 512-bit overlay with its mappings and sessions in
#   memory against the on-chip one -> bench/results/scale_w512.md (bench/scale/run_w512.py),
#   and the overlay with a route table of 2^20 prefixes filled from a real routing table
#   through matcha-ctl, loaded at once -> bench/results/scale_routes.md
#   (bench/scale/run_routes.py, about half an hour).
# Runs all even if one fails; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
python bench/packet_path/run_bench.py "$@" || status=1
bash bench/tables/run.sh || status=1
bash bench/sessions/run.sh || status=1
python bench/sim/run_speed.py || status=1
python bench/driver/run_table_load.py || status=1
bash bench/meters/run.sh || status=1
bash bench/synth/run.sh || status=1
python bench/overlay/run_bench.py || status=1
python bench/scale/run_table.py || status=1
python bench/scale/run_sessions.py || status=1
python bench/scale/session_capacity.py || status=1
python bench/scale/lpm_load.py || status=1
python bench/scale/mapping_load.py || status=1
python bench/scale/run_lpm.py || status=1
python bench/scale/run.py || status=1
python bench/scale/run_w512.py || status=1
python bench/scale/run_routes.py || status=1
exit $status
