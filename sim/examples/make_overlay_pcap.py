#!/usr/bin/env python3
"""Build sim/examples/overlay.pcap: a small mixed capture for `make run`.

Plain IPv4/IPv6 TCP and UDP, 802.1Q-tagged traffic, VXLAN-encapsulated tenant traffic
(inner IPv4/IPv6, TCP/UDP, tagged and untagged), an IPv4 fragment, and a few malformed
frames the parser punts (runt, IPv4 IHL < 5, wrong IP version, truncated header, a
header stack deeper than the 128-byte header window). Deterministic: rerunning this
script rewrites the same bytes.

usage: python sim/examples/make_overlay_pcap.py [OUT.pcap]
"""

import sys
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw
from scapy.utils import wrpcap

HOST_A = "02:00:00:00:0a:01"
HOST_B = "02:00:00:00:0b:01"
VTEP_1 = "02:00:00:00:01:01"
VTEP_2 = "02:00:00:00:02:01"
TENANT_A = "02:00:00:aa:00:01"
TENANT_B = "02:00:00:bb:00:01"


def payload(n, seed):
    return Raw(bytes((seed * 31 + i * 7) & 0xFF for i in range(n)))


def vxlan(inner, vni, sport):
    return (Ether(dst=VTEP_2, src=VTEP_1) / IP(src="198.51.100.1", dst="198.51.100.2",
                                               ttl=64, flags="DF", id=sport & 0xFFFF)
            / UDP(sport=sport, dport=4789) / VXLAN(flags=0x08, vni=vni) / inner)


def packets():
    out = []
    # Plain IPv4 / IPv6, TCP and UDP
    out.append(Ether(dst=HOST_B, src=HOST_A) / IP(src="192.0.2.1", dst="192.0.2.2", ttl=64)
               / TCP(sport=40000, dport=443, flags="S", seq=1000) / payload(20, 1))
    out.append(Ether(dst=HOST_A, src=HOST_B) / IP(src="192.0.2.2", dst="192.0.2.1", ttl=63)
               / TCP(sport=443, dport=40000, flags="SA", seq=5000, ack=1001)
               / payload(20, 2))
    out.append(Ether(dst=HOST_B, src=HOST_A) / IP(src="192.0.2.1", dst="192.0.2.53", tos=0xB8)
               / UDP(sport=5353, dport=53) / payload(40, 3))
    out.append(Ether(dst=HOST_B, src=HOST_A) / IPv6(src="2001:db8::1", dst="2001:db8::2",
                                                    hlim=64, tc=0x20)
               / TCP(sport=50000, dport=22, flags="PA", seq=7, ack=9) / payload(100, 4))
    out.append(Ether(dst=HOST_B, src=HOST_A) / IPv6(src="2001:db8::1", dst="2001:db8::3")
               / UDP(sport=123, dport=123) / payload(48, 5))
    out.append(Ether(dst=HOST_B, src=HOST_A) / Dot1Q(vlan=100, prio=5)
               / IP(src="10.1.0.1", dst="10.1.0.2") / UDP(sport=1000, dport=2000)
               / payload(200, 6))
    out.append(Ether(dst=HOST_B, src=HOST_A) / Dot1Q(vlan=200)
               / IPv6(src="2001:db8:1::1", dst="2001:db8:1::2") / TCP(sport=1, dport=2)
               / payload(1200, 7))
    out.append(Ether(dst=HOST_B, src=HOST_A)
               / IP(src="192.0.2.1", dst="192.0.2.2", options=b"\x01\x01\x01\x00")
               / TCP(sport=3, dport=4) / payload(30, 8))
    # A full-size frame and an IPv4 fragment (offset > 0: no L4 header parsed)
    out.append(Ether(dst=HOST_B, src=HOST_A) / IP(src="192.0.2.1", dst="192.0.2.2")
               / UDP(sport=9, dport=9) / payload(1472, 9))
    out.append(Ether(dst=HOST_B, src=HOST_A)
               / IP(src="192.0.2.1", dst="192.0.2.2", proto=17, flags="MF", frag=185)
               / payload(200, 10))
    # VXLAN overlay traffic
    out.append(vxlan(Ether(dst=TENANT_B, src=TENANT_A) / IP(src="172.16.0.1", dst="172.16.0.2")
                     / TCP(sport=33000, dport=80, flags="S") / payload(10, 11), 1001, 49152))
    out.append(vxlan(Ether(dst=TENANT_A, src=TENANT_B) / IP(src="172.16.0.2", dst="172.16.0.1")
                     / TCP(sport=80, dport=33000, flags="SA") / payload(500, 12), 1001, 49153))
    out.append(vxlan(Ether(dst=TENANT_B, src=TENANT_A) / Dot1Q(vlan=10)
                     / IP(src="172.16.1.1", dst="172.16.1.2") / UDP(sport=7, dport=7)
                     / payload(64, 13), 1002, 49154))
    out.append(vxlan(Ether(dst=TENANT_B, src=TENANT_A)
                     / IPv6(src="fd00::1", dst="fd00::2") / UDP(sport=546, dport=547)
                     / payload(80, 14), 1003, 49155))
    out.append(vxlan(Ether(dst=TENANT_B, src=TENANT_A)
                     / IPv6(src="fd00::1", dst="fd00::2") / TCP(sport=5, dport=6)
                     / payload(1000, 15), 1003, 49156))
    out.append(vxlan(Ether(dst="ff:ff:ff:ff:ff:ff", src=TENANT_A, type=0x0806)
                     / payload(28, 16), 1001, 49157))
    # Malformed: the parser punts these to the host
    runt = Ether(dst=HOST_B, src=HOST_A) / IP(src="192.0.2.1", dst="192.0.2.2") / UDP()
    out.append(Ether(bytes(runt)[:50]))                                         # RUNT
    bad_ihl = bytearray(bytes(out[0]))
    bad_ihl[14] = 0x43
    out.append(Ether(bytes(bad_ihl)))                                           # IPV4_IHL
    bad_ver = bytearray(bytes(out[2]))
    bad_ver[14] = 0x65
    out.append(Ether(bytes(bad_ver)))                                           # IP_VERSION
    out.append(Ether(bytes(out[3])[:70]))                                       # TRUNCATED
    deep = (Ether(dst=VTEP_2, src=VTEP_1) / Dot1Q(vlan=5)
            / IPv6(src="2001:db8::a", dst="2001:db8::b") / UDP(sport=49200, dport=4789)
            / VXLAN(flags=0x08, vni=7) / Ether(dst=TENANT_B, src=TENANT_A) / Dot1Q(vlan=6)
            / IPv6(src="fd00::a", dst="fd00::b") / TCP(sport=1, dport=2) / payload(20, 17))
    out.append(deep)                                                            # TOO_DEEP
    # And normal traffic again
    out.append(Ether(dst=HOST_B, src=HOST_A) / IP(src="192.0.2.1", dst="192.0.2.2")
               / TCP(sport=40000, dport=443, flags="A", seq=1001, ack=5001) / payload(6, 18))
    for i, p in enumerate(out):
        p.time = 1_700_000_000 + i * 0.001
    return out


def main():
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("overlay.pcap")
    pkts = packets()
    wrpcap(str(dest), pkts)
    print(f"{dest}: {len(pkts)} packets")


if __name__ == "__main__":
    main()
