#!/usr/bin/env bash
# All benchmarks (make bench):
# - packet path: throughput and latency of matcha_packet_path in clocks for 64..9000-byte
#   frames on w64 and w512 -> bench/results/packet_path.md (raw numbers in build/bench/);
#   extra arguments go to bench/packet_path/run_bench.py (e.g. --configs w512 --sizes 64,1518);
# - tables: lookups per clock and latency of every table unit in build/rtl/tables, and of
#   a sweep of key widths and sizes the same plus ECP5 resources -> bench/results/tables.md
#   (bench/tables/run.sh);
# - sessions: sessions learned per clock under 100 % new flows, occupancy without moves,
#   latency and ECP5 resources of the session table units -> bench/results/sessions.md
#   (bench/sessions/run.sh).
# Runs all of them even if one fails; exits non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
python bench/packet_path/run_bench.py "$@" || status=1
bash bench/tables/run.sh || status=1
bash bench/sessions/run.sh || status=1
exit $status
