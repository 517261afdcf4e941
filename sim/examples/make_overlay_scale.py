#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The overlay program at the scale of its issue (docs/overlay.md, "Scale"): a tables file in
BMv2 simple_switch_CLI syntax that fills the overlay program to the VPP study's scale, and a
capture of flows across it, both written to a directory.

| what | entries |
| --- | ---: |
| ENIs (eni_out, eni_in, eni attributes) | 1,024 each |
| policers (policer entries and their meters) | 1,024 |
| VNETs (vnet) | 1,024 |
| CA→PA mappings | 8,192 (8 per VNET) |
| route prefixes | 4,096 (16 per routing group, /0 to /32) |
| ACL rules | 3,000 per direction, with port ranges |

The topology: ENI e (0..1023) has the MAC 02:e0:00:00:HH:LL (e's two bytes), its VM is the
first CA of VNET e, and its host is that CA's PA, in host VNI 101 + e % 16 (the 16 VNIs the
direction table names outbound). VNET v owns 10.(v >> 8).(v & 255).0/24 and VNI 1000 + v;
its CAs .1 to .8 are mapped to PA 100.(64 + (v >> 8)).(v & 255).k with MAC 02:ca:HH:LL:00:k.
Routing group g (ENIs g, g + 256, ...) has 16 prefixes: twelve /24s to twelve VNETs, a /16
to a VNET (whose CAs outside the /24s have no mapping), a /32 host route to another VNET,
172.16.0.0/12 routed direct, and 0.0.0.0/0 dropped. The ACL rules of an
ENI overlap: outbound, TCP from ports 1024->65535 to port 80 and UDP to port 53 are
permitted above a deny of TCP to ports 0->1023; inbound, TCP to ports 80 and 443 is
permitted above a deny of UDP from port 53. Every 64th ENI's policer has no refill.

The flows (seeded, the same bytes every run): each picks an ENI and a peer CA its group
routes to, and is one of TCP to port 80 with its reply, DNS with its answer, TCP to port 22
(denied), an unsolicited inbound frame, a destination without a mapping, a host route, a
direct route, or a destination no prefix but the dropping ones covers.

usage: python sim/examples/make_overlay_scale.py OUT_DIR [FLOWS]
       (writes OUT_DIR/overlay_scale_tables.txt and OUT_DIR/overlay_scale.pcap)
"""

import ipaddress
import random
import sys
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw
from scapy.utils import wrpcap

SEED = 2026
ENIS = VNETS = POLICERS = 1024
CAS_PER_VNET = 8
GROUPS = 256
ACL_PER_DIRECTION = 3000
HOST_VNIS = 16
VIP = "10.1.1.1"
DUT_MAC, ROUTER_MAC = "02:aa:00:00:00:01", "02:bb:00:00:00:02"
FAKE_MAC = "aa:12:44:69:05:aa"
VXLAN_PORT = 4789
# Policers with no refill: every ENI whose index is a multiple of this.
STARVED = 64


def eni_mac(e):
    return f"02:e0:00:00:{e >> 8:02x}:{e & 255:02x}"


def ca(v, k):
    return f"10.{v >> 8}.{v & 255}.{k}"


def pa(v, k):
    return f"100.{64 + (v >> 8)}.{v & 255}.{k}"


def ca_mac(v, k):
    return f"02:ca:{v >> 8:02x}:{v & 255:02x}:00:{k:02x}"


def host_vni(e):
    return 101 + e % HOST_VNIS


def vnet_vni(v):
    return 1000 + v


def group(e):
    return e % GROUPS


def peers(g):
    """The twelve VNETs routing group g reaches by a /24 each."""
    return [(g * 4 + k * 85 + 1) % VNETS for k in range(12)]


def tables():
    """The tables file's lines."""
    t = ["# The overlay program at scale: sim/examples/make_overlay_scale.py wrote this file.",
         "table_add frame_class overlay 1 1 =>", "table_add frame_class drop 1 0 =>",
         f"table_add vip accept {VIP} =>"]
    t += [f"table_add direction outbound {101 + h} =>" for h in range(HOST_VNIS)]
    for e in range(ENIS):
        t.append(f"table_add eni_out set_eni {eni_mac(e)} => {e}")
        t.append(f"table_add eni_in set_eni {eni_mac(e)} => {e}")
        t.append(f"table_add eni set_eni_attrs {e} => {group(e)} {pa(e, 1)} {host_vni(e)} 0")
    # Underlay sources in 100.64.0.0/14 are decapsulated; VNETs 0..31 validate their PAs.
    for v in range(32):
        t.append(f"table_add inbound_routing decap_pa_validate 0&&&0 {vnet_vni(v)} "
                 f"100.64.0.0/14 => {v} 20")
        t += [f"table_add pa_validation permit {v} {pa(v, k)} =>" for k in range(1, CAS_PER_VNET + 1)]
    t.append("table_add inbound_routing decap 0&&&0 0&&&0 100.64.0.0/14 => 10")
    # Highest priority first: each rule then goes after those already loaded, and the
    # driver moves none of them to make room.
    t += sorted(acl("outbound") + acl("inbound"), key=lambda rule: -int(rule.rsplit(" ", 1)[1]))
    t += ["table_add verdict admit 1 0 =>", "table_add verdict admit 1 1 =>",
          "table_add verdict admit 1 2 =>", "table_add verdict admit 1 3 =>",
          "table_add verdict admit 0 1 =>", "table_add verdict to_host 0 3 =>"]
    for g in range(GROUPS):
        t += [f"table_add route route_vnet {g} {ca(v, 0)}/24 => {v}" for v in peers(g)]
        t.append(f"table_add route route_vnet {g} 10.{g % 4}.0.0/16 => {(g * 4) % VNETS}")
        t.append(f"table_add route route_vnet {g} {ca(peers(g)[0], 200)}/32 => {peers(g)[1]}")
        t.append(f"table_add route route_direct {g} 172.16.0.0/12 =>")
        t.append(f"table_add route drop {g} 0.0.0.0/0 =>")
    t.append("set_clock_hz 250000000")
    for e in range(POLICERS):
        t.append(f"table_add policer police {e} => {e}")
        rates = "0:600 0:1500" if e % STARVED == 0 else "125000000:20000 250000000:40000"
        t.append(f"meter_set_rates policers {e} {rates} trtcm")
    t += ["table_add colour drop_red 2 0 =>", "table_add colour drop_red 2 1 =>",
          "table_add colour mark 1 0 => 10", "table_add colour drop_yellow 1 1 =>"]
    for v in range(VNETS):
        t += [f"table_add mapping set_mapping {v} {ca(v, k)} => {pa(v, k)} {ca_mac(v, k)}"
              for k in range(1, CAS_PER_VNET + 1)]
        t.append(f"table_add vnet set_vni {v} => {vnet_vni(v)}")
    t.append("table_set_default encap vxlan_encap 02:aa:00:00:00:f1 02:bb:00:00:00:f2")
    return t


def acl(direction):
    """ACL_PER_DIRECTION rules, three templates dealt round the ENIs: the first two of each
    ENI permit, the third denies a wider set below them (priorities: higher wins)."""
    out = direction == "outbound"
    templates = ([("permit", "0&&&0", "10.0.0.0/8", 6, "1024->65535", "80->80", 30),
                  ("permit", "0&&&0", "0&&&0", 17, "0->65535", "53->53", 20),
                  ("deny", "0&&&0", "10.0.0.0/8", 6, "0->65535", "0->1023", 10)] if out else
                 [("permit", "10.0.0.0/8", "0&&&0", 6, "0->65535", "80->80", 30),
                  ("permit", "10.0.0.0/8", "0&&&0", 6, "0->65535", "443->443", 20),
                  ("deny", "0&&&0", "0&&&0", 17, "53->53", "0->65535", 10)])
    rules = []
    for i in range(ACL_PER_DIRECTION):
        e, (action, src, dst, proto, sport, dport, prio) = i % ENIS, templates[i // ENIS]
        rules.append(f"table_add acl {action} {int(out)} {e} {src} {dst} {proto} {sport} {dport} => {prio}")
    return rules


def one_route_tables(net, vnet, mapped):
    """Lines of a tables file for ENI 0's outbound path alone: UDP permitted, `net` routed
    to VNET `vnet`, and in it a mapping of each destination of `mapped` (addresses as
    integers) to a PA and MAC of VNET 7's; for the tests and benchmarks of one table."""
    t = ["table_add frame_class overlay 1 1 =>", f"table_add vip accept {VIP} =>",
         f"table_add direction outbound {host_vni(0)} =>",
         f"table_add eni_out set_eni {eni_mac(0)} => 0",
         f"table_add eni set_eni_attrs 0 => 0 {pa(0, 1)} {host_vni(0)} 0",
         "table_add acl permit 1 0 0&&&0 0&&&0 17 0->65535 0->65535 => 10",
         "table_add verdict admit 0 1 =>", "table_add verdict admit 1 1 =>",
         f"table_add route route_vnet 0 {net} => {vnet}",
         f"table_add vnet set_vni {vnet} => {vnet_vni(vnet)}"]
    t += [f"table_add mapping set_mapping {vnet} {ipaddress.ip_address(d)} => "
          f"{pa(7, 1 + k % 250)} {ca_mac(vnet, 1 + k % 250)}" for k, d in enumerate(mapped)]
    t.append("table_set_default encap vxlan_encap 02:aa:00:00:00:f1 02:bb:00:00:00:f2")
    return t


def underlay(inner, vni, outer_src, sport=49152):
    return (Ether(dst=DUT_MAC, src=ROUTER_MAC) / IP(src=outer_src, dst=VIP, ttl=63) /
            UDP(sport=sport, dport=VXLAN_PORT) / VXLAN(vni=vni) / inner)


def outbound(e, dst, l4, body):
    """ENI e's VM to CA `dst`, from its host."""
    return underlay(Ether(src=eni_mac(e), dst=FAKE_MAC) / IP(src=ca(e, 1), dst=dst) / l4 / body,
                    host_vni(e), pa(e, 1))


def inbound(v, k, e, l4, body):
    """CA k of VNET v to ENI e's VM, from the CA's host in the VNET's VNI."""
    return underlay(Ether(src=ca_mac(v, k), dst=eni_mac(e)) / IP(src=ca(v, k), dst=ca(e, 1)) /
                    l4 / body, vnet_vni(v), pa(v, k), sport=49153)


def frames(flows):
    """The capture's frames, flow after flow (see the module's description)."""
    rng = random.Random(SEED)
    body = lambda n: Raw(bytes(rng.getrandbits(8) for _ in range(n)))  # noqa: E731
    f = []
    for i in range(flows):
        e = rng.randrange(ENIS)
        v, k = rng.choice(peers(group(e))), rng.randrange(1, CAS_PER_VNET + 1)
        sport = 1024 + rng.randrange(60000)
        kind = rng.choice(("tcp80", "tcp80", "dns", "dns", "tcp22", "unsolicited", "unmapped",
                           "host_route", "direct", "dropped"))
        if kind == "tcp80":
            f.append(outbound(e, ca(v, k), TCP(sport=sport, dport=80, flags="S"), body(0)))
            f.append(inbound(v, k, e, TCP(sport=80, dport=sport, flags="SA"), body(0)))
            f.append(outbound(e, ca(v, k), TCP(sport=sport, dport=80, flags="PA"),
                              body(rng.randrange(1, 400))))
        elif kind == "dns":
            f.append(outbound(e, ca(v, k), UDP(sport=sport, dport=53), body(40)))
            f.append(inbound(v, k, e, UDP(sport=53, dport=sport), body(rng.randrange(40, 200))))
        elif kind == "tcp22":
            f.append(outbound(e, ca(v, k), TCP(sport=sport, dport=22, flags="S"), body(0)))
        elif kind == "unsolicited":
            f.append(inbound(v, k, e, TCP(sport=sport, dport=rng.choice((80, 443, 8080)),
                                          flags="S"), body(0)))
        elif kind == "unmapped":
            f.append(outbound(e, ca(v, 100 + k), TCP(sport=sport, dport=80, flags="S"), body(0)))
        elif kind == "host_route":
            f.append(outbound(e, ca(peers(group(e))[0], 200), UDP(sport=sport, dport=53), body(8)))
        elif kind == "direct":
            f.append(outbound(e, f"172.16.{rng.randrange(256)}.{rng.randrange(1, 255)}",
                              UDP(sport=sport, dport=53), body(8)))
        else:
            f.append(outbound(e, f"10.{4 + rng.randrange(200)}.{rng.randrange(256)}.1",
                              TCP(sport=sport, dport=80, flags="S"), body(0)))
    for i, frame in enumerate(f):
        frame.time = 1_700_000_000 + i * 0.0001
    return f


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.rsplit("usage: ", 1)[1])
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    flows = int(sys.argv[2]) if len(sys.argv) == 3 else 1000
    lines = tables()
    (out / "overlay_scale_tables.txt").write_text("\n".join(lines) + "\n")
    pkts = frames(flows)
    wrpcap(str(out / "overlay_scale.pcap"), pkts)
    print(f"{out}: {sum(not l.startswith('#') for l in lines)} table lines, {len(pkts)} frames")


if __name__ == "__main__":
    main()
