#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A network namespace with veth pairs for matcha-sim's live mode (sim/README.md, "Live"):
#
#   sim/netns.sh add NAME [--mtu BYTES] PORT... [cpu]
#   sim/netns.sh del NAME
#
# `add` makes namespace NAME and in it, for each PORT, the pair sim<PORT> (the simulator's
# end) / host<PORT> (the end hosts, tests and PTF use), and with `cpu` the pair simcpu /
# hostcpu for the CPU port (matcha-p4rt or a test on hostcpu); both ends of every pair are in
# NAME and up, with an MTU of BYTES if given. IPv6 is off in NAME before any interface
# exists, so that the kernel sends no router solicitations or neighbour discovery of its own
# on the pairs: every frame on them is one a program sent. `del` removes NAME and its pairs.
# The tests make their namespaces with it (tb/common/netns.py).
#
# Needs root (CAP_NET_ADMIN) and iproute2. Exit status: 0 done; 2 bad arguments; 3 the
# machine does not allow a namespace or a veth pair (ip's message on stderr; nothing is
# left behind); 1 any other failure.
set -u

usage() {
    echo "usage: $0 add NAME [--mtu BYTES] PORT... [cpu] | $0 del NAME" >&2
    exit 2
}
fail() {  # status, message: what was made is removed first
    ip netns del "$name" 2>/dev/null
    echo "netns.sh: $2" >&2
    exit "$1"
}

[ $# -ge 2 ] || usage
cmd=$1 name=$2
shift 2
case $cmd in
del)
    [ $# -eq 0 ] || usage
    exec ip netns del "$name"
    ;;
add) ;;
*) usage ;;
esac

mtu=""
if [ "${1-}" = "--mtu" ]; then
    [ $# -ge 2 ] || usage
    mtu=$2
    shift 2
fi
ends=""
for p in "$@"; do
    case $p in
    cpu) ends="$ends cpu" ;;
    *[!0-9]* | "") usage ;;
    *) ends="$ends $p" ;;
    esac
done
[ -n "$ends" ] || usage

if ip netns list | grep -q "^$name\( \|$\)"; then
    echo "netns.sh: namespace $name exists (sim/netns.sh del $name removes it)" >&2
    exit 1
fi
out=$(ip netns add "$name" 2>&1) || {
    echo "netns.sh: this machine does not allow network namespaces (ip netns add: $out)" >&2
    exit 3
}
ip netns exec "$name" sh -c '
    conf=/proc/sys/net/ipv6/conf
    [ ! -d $conf ] || { echo 1 > $conf/all/disable_ipv6 && echo 1 > $conf/default/disable_ipv6; }' ||
    fail 1 "cannot turn IPv6 off in $name"
for e in $ends; do
    out=$(ip -n "$name" link add "sim$e" type veth peer name "host$e" 2>&1) ||
        fail 3 "this machine does not allow veth pairs (ip link add sim$e type veth: $out)"
    for end in "sim$e" "host$e"; do
        if [ -n "$mtu" ]; then
            out=$(ip -n "$name" link set "$end" mtu "$mtu" 2>&1) || fail 1 "$end: mtu $mtu: $out"
        fi
        out=$(ip -n "$name" link set "$end" up 2>&1) || fail 1 "$end: up: $out"
    done
done
