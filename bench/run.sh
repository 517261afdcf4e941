#!/usr/bin/env bash
# Packet-path benchmark (make bench): throughput and latency of matcha_packet_path in
# clocks for 64..9000-byte frames on w64 and w512. Writes bench/results/packet_path.md
# and the raw numbers to build/bench/. Extra arguments go to run_bench.py
# (e.g. --configs w512 --sizes 64,1518).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python bench/packet_path/run_bench.py "$@"
