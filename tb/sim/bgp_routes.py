# SPDX-License-Identifier: Apache-2.0
"""A real Internet routing table in the overlay's route table, and the traffic that checks
which prefix the hardware chose (tb/sim/test_overlay_bgp.py, bench/scale/run_routes.py).

Every prefix goes under routing group 0 and routes to a VNET of its own number modulo the
program's VNETs, each VNET with its own VNI, so every frame that leaves says by its VNI
which prefix the pipeline chose; a destination gets a mapping only in the VNET its longest
prefix routes to, so a wrong choice is a mapping miss."""

import ipaddress
import lzma
import sys
from collections import Counter

from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

from tb.sim import harness

sys.path.insert(0, str(harness.REPO / "sim" / "examples"))
import make_overlay_scale as scale  # noqa: E402  (the scale example's addressing and frames)

BGP = harness.REPO / "sw" / "driver" / "tests" / "data" / "bgp-ipv4-full.txt.xz"
GROUP_BITS = 16


def bgp_prefixes(count=None):
    """The first `count` prefixes of the full table (all of them without `count`), in its
    order (sw/driver/tests/data/README.md)."""
    with lzma.open(BGP, "rt") as f:
        nets = [ipaddress.ip_network(line.strip()) for line in f if line.strip()]
    return nets[:count]


def prefix_index(nets):
    """{(network as an int, length): the prefix's index}, what `longest` searches."""
    return {(int(n.network_address), n.prefixlen): i for i, n in enumerate(nets)}


def longest(index, address):
    """The index of the longest prefix of `index` (prefix_index) covering `address`, or
    None: a lookup per length, the scripts' own, so that they can place the mappings."""
    for length in range(32, -1, -1):
        i = index.get((address >> (32 - length) << (32 - length), length))
        if i is not None:
            return i
    return None


def probes(nets, rng, sampled, random_count):
    """Destinations: the first and last address of `sampled` prefixes and the ones just
    outside them, and `random_count` random ones, each once."""
    out = []
    for net in rng.sample(nets, sampled):
        first, last = int(net.network_address), int(net.broadcast_address)
        out += [first, last, (first - 1) & 0xFFFFFFFF, (last + 1) & 0xFFFFFFFF]
    out += [rng.getrandbits(32) for _ in range(random_count)]
    return list(dict.fromkeys(out))


def tables(nets, destinations, vnets):
    """The tables file's lines: ENI 0's outbound path, `nets` in routing group 0, a VNI per
    VNET, and for each destination a prefix covers, a mapping in that prefix's VNET."""
    index = prefix_index(nets)
    t = ["table_add frame_class overlay 1 1 =>", f"table_add vip accept {scale.VIP} =>",
         f"table_add direction outbound {scale.host_vni(0)} =>",
         f"table_add eni_out set_eni {scale.eni_mac(0)} => 0",
         f"table_add eni set_eni_attrs 0 => 0 {scale.pa(0, 1)} {scale.host_vni(0)} 0",
         "table_add acl permit 1 0 0&&&0 0&&&0 17 0->65535 0->65535 => 10",
         "table_add verdict admit 0 1 =>", "table_add verdict admit 1 1 =>"]
    t += [f"table_add route route_vnet 0 {n} => {i % vnets}" for i, n in enumerate(nets)]
    t += [f"table_add vnet set_vni {v} => {scale.vnet_vni(v)}" for v in range(vnets)]
    for k, d in enumerate(destinations):
        i = longest(index, d)
        if i is not None:
            t.append(f"table_add mapping set_mapping {i % vnets} {ipaddress.ip_address(d)} => "
                     f"{scale.pa(k >> 8, k & 255)} {scale.ca_mac(0, k & 255)}")
    t.append("table_set_default encap vxlan_encap 02:aa:00:00:00:f1 02:bb:00:00:00:f2")
    return t


def reach(program, exp):
    """How far the expected outputs `exp` (harness.expected) reach across the route table:
    the frames encapsulated, {VNI: frames}, {prefix length: frames} of the prefixes that
    routed them, and {drop reason's name: frames}."""
    passed = [Ether(f) for fs in exp.ports.values() for f in fs]
    vnis = Counter(p[VXLAN].vni for p in passed if VXLAN in p)
    lengths = Counter(program["route"].match(int(ipaddress.ip_address(p[VXLAN].payload[IP].dst)))[1] - GROUP_BITS
                      for p in passed if VXLAN in p)
    names = harness.reason_names(program)
    return passed, vnis, lengths, Counter(names[r] for *_, r in exp.drops)
