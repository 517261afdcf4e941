#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build sim/examples/l2l3.pcap: frames for the built-in L2/L3 program with the tables of
sim/examples/l2l3_tables.txt, one or more for every outcome:

- layer 2: IPv6 and ARP frames (the L3 tables skip them) to MACs l2_fwd forwards to
  ports 3 and 4, to the MAC it drops, and a broadcast it does not know (out of the port
  it came in on);
- routing: IPv4 to 10.1.0.0/16 (port 2), to the longer 10.1.2.0/24 (port 5, also
  VLAN-tagged), to 0.0.0.0/1 (port 6), with TTL 1 (routed, TTL 0), to the dropped
  10.66.0.0/16, and to 192.0.2.1, which has no route (punted, no_route);
- the ACL: TCP port 22 from 10.9.0.0/16 (routed, then denied), the same to port 80
  (permitted), DNS to 10.1.0.53 (to_host) and other UDP to it (permitted);
- a UDP frame of 46 bytes, captured as its sender handed it to the NIC, before the
  MAC padded it: matcha-sim pads it to 60 bytes (with --no-pad the parser punts it as
  a runt).

Deterministic: rerunning this script rewrites the same bytes.

usage: python sim/examples/make_l2l3_pcap.py [OUT.pcap]
"""

import sys
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import wrpcap

FWD_3 = "00:11:22:33:44:55"
FWD_4 = "00:11:22:33:44:66"
L2_DROP = "00:11:22:33:44:77"
ROUTER = "02:00:00:00:00:01"
HOST = "02:00:00:00:0a:01"


def payload(n, seed):
    return Raw(bytes((seed * 37 + i * 11) & 0xFF for i in range(n)))


def ipv4(dst, l4, seed, src="10.200.0.1", ttl=64, size=40, vlan=None):
    eth = Ether(dst=ROUTER, src=HOST)
    if vlan is not None:
        eth = eth / Dot1Q(vlan=vlan)
    return eth / IP(src=src, dst=dst, ttl=ttl, id=seed) / l4 / payload(size, seed)


def packets():
    out = [
        # Layer 2
        Ether(dst=FWD_3, src=HOST) / IPv6(src="2001:db8::1", dst="2001:db8::3")
        / UDP(sport=5000, dport=5001) / payload(60, 1),
        Ether(dst=FWD_4, src=HOST) / IPv6(src="2001:db8::1", dst="2001:db8::4")
        / TCP(sport=5000, dport=80, flags="S") / payload(20, 2),
        Ether(dst=L2_DROP, src=HOST) / IPv6(src="2001:db8::1", dst="2001:db8::7")
        / UDP(sport=1, dport=2) / payload(30, 3),
        Ether(dst="ff:ff:ff:ff:ff:ff", src=HOST) / ARP(psrc="10.200.0.1", pdst="10.200.0.2")
        / Raw(bytes(18)),  # padded to the 60-byte minimum
        # Routing
        ipv4("10.1.0.7", UDP(sport=4000, dport=4001), 5),
        ipv4("10.1.2.9", TCP(sport=4000, dport=443, flags="S"), 6, size=200),
        ipv4("10.1.2.3", UDP(sport=7, dport=7), 7, vlan=100),
        ipv4("10.20.0.1", UDP(sport=8, dport=8), 8),
        ipv4("10.1.0.7", UDP(sport=9, dport=9), 9, ttl=1),
        ipv4("10.66.1.1", UDP(sport=10, dport=10), 10),
        ipv4("192.0.2.1", TCP(sport=11, dport=11, flags="S"), 11),
        # The ACL
        ipv4("10.1.0.9", TCP(sport=40000, dport=22, flags="S"), 12, src="10.9.1.1"),
        ipv4("10.1.0.9", TCP(sport=40001, dport=80, flags="S"), 13, src="10.9.1.1"),
        ipv4("10.1.0.53", UDP(sport=33000, dport=53), 14, size=30),
        ipv4("10.1.0.53", UDP(sport=33000, dport=5353), 15, size=30),
        # Captured unpadded (46 bytes): padded to 60 on the way in, routed to port 2
        ipv4("10.1.0.7", UDP(sport=16, dport=16), 16, size=4),
        # A large frame routed at the end
        ipv4("10.1.2.200", UDP(sport=17, dport=17), 17, size=1400),
    ]
    for i, p in enumerate(out):
        p.time = 1_700_000_000 + i * 0.001
    return out


def main():
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("l2l3.pcap")
    pkts = packets()
    wrpcap(str(dest), pkts)
    print(f"{dest}: {len(pkts)} packets")


if __name__ == "__main__":
    main()
