#!/usr/bin/env bash
# All benchmarks (make bench):
# - packet path: throughput and latency of matcha_packet_path in clocks for 64..9000-byte
#   frames on w64 and w512 -> bench/results/packet_path.md (raw numbers in build/bench/);
#   extra arguments go to bench/packet_path/run_bench.py (e.g. --configs w512 --sizes 64,1518);
# - tables: ECP5 resources of the exact and LPM units over a sweep -> bench/results/tables.md.
set -euo pipefail
cd "$(dirname "$0")/.."
python bench/packet_path/run_bench.py "$@"
bash bench/tables/run.sh
