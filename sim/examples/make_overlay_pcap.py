#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build sim/examples/overlay.pcap: VXLAN traffic for the overlay program (docs/overlay.md)
with the tables of sim/examples/overlay_tables.txt, every frame as the underlay router hands
it to the appliance on port 0.

The topology is that of tb/overlay/overlay_tb.py (after DASH's PTF tests), with four VMs
instead of two. The appliance answers on the VIP 10.1.1.1. Each VM has a customer address
(CA), a MAC, an ENI and a host in the underlay (its PA); the host sends the VM's frames to
the VIP in a VNI of its own (101..104), which the direction table names outbound. Frames
between VNETs carry the VNET's VNI (1..4) and are inbound: the ENI is the inner
destination MAC's.

| VM | CA          | MAC               | ENI | host PA    | host VNI | VNET (VNI) |
| A  | 192.168.0.1 | 00:01:00:00:03:14 | 5   | 10.10.1.10 | 101      | 1          |
| B  | 192.168.1.1 | 00:02:00:00:04:15 | 7   | 10.10.2.10 | 102      | 2          |
| C  | 192.168.2.1 | 00:03:00:00:05:16 | 9   | 10.10.3.10 | 103      | 3          |
| D  | 192.168.3.1 | 00:04:00:00:06:17 | 11  | 10.10.4.10 | 104      | 4          |

The frames, in order (scenario() lists each with what the tables make of it):

- new flows and their replies: A opens TCP to B's port 80 (SYN out, the SYN-ACK back in
  from B's host, then ACK and data both ways) and a UDP query to C's port 53; B takes a
  TCP connection from A inbound (B's inbound ACL admits it, B's SYN-ACK goes out on the
  session); B queries C over UDP; C opens TCP to A's port 443. Replies pass on the session
  the first frame learned, whatever the ACL of their direction says;
- what the ACLs deny: A to B's port 22, C to B's port 3389; unsolicited inbound frames (to
  A from B's host, to B's port 22 from A's host); an ICMP echo the ACL sends to the host;
- D's policer, a meter with no refill (committed burst 600 bytes, peak burst 1500): a
  burst of eight 318-byte frames passes green, then yellow (outer DSCP 10), then red
  (dropped);
- misses: a frame to another VIP, an inner source MAC no ENI has, a destination no route
  covers, a routed destination with no mapping, an inbound frame from an address of the
  VNET's underlay range that is no known PA of it;
- a full session table: C probes UDP ports of B from source ports chosen so that the keys
  of its flows fill the four candidate slots of the last one's key (the hash is CRC-64,
  linear, so the ports come from solving its equations over GF(2)); five flows are learned
  and pass, the sixth finds no free way and is punted to the host;
- frames that are not the overlay's: an ARP request for the VIP (punted to the host) and a
  VXLAN frame carrying ARP (dropped).

Deterministic and seeded: rerunning this script rewrites the same bytes.

usage: python sim/examples/make_overlay_pcap.py [OUT.pcap]
"""

import random
import sys
from pathlib import Path

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw
from scapy.utils import wrpcap

SEED = 2024
VIP = "10.1.1.1"
DUT_MAC, ROUTER_MAC = "02:aa:00:00:00:01", "02:bb:00:00:00:02"
FAKE_MAC = "aa:12:44:69:05:aa"  # the inner destination a VM sends to (DASH: fake_mac)


class Vm:
    """A VM: its CA, MAC and ENI, its host's PA and VNI, its VNET's VNI."""

    def __init__(self, name, ca, mac, eni, pa, host_vni, vnet_vni):
        self.name, self.ca, self.mac, self.eni = name, ca, mac, eni
        self.pa, self.host_vni, self.vnet_vni = pa, host_vni, vnet_vni


A = Vm("A", "192.168.0.1", "00:01:00:00:03:14", 5, "10.10.1.10", 101, 1)
B = Vm("B", "192.168.1.1", "00:02:00:00:04:15", 7, "10.10.2.10", 102, 2)
C = Vm("C", "192.168.2.1", "00:03:00:00:05:16", 9, "10.10.3.10", 103, 3)
D = Vm("D", "192.168.3.1", "00:04:00:00:06:17", 11, "10.10.4.10", 104, 4)
MARK_DSCP = 10

# The session table of the 64-bit build (layout-overlay.json "sessions"): 1024 entries in
# 4 ways, a slot index of SLOT_BITS bits per way.
WAYS, SLOTS = 4, 256
SLOT_BITS = SLOTS.bit_length() - 1
UDP_PROTO = 17
VXLAN_PORT = 4789


def payload(rng, n):
    return Raw(bytes(rng.getrandbits(8) for _ in range(n)))


def underlay(inner, vni, outer_src, vip=VIP, sport=49152):
    """A frame of the underlay to the appliance: `inner` in VXLAN `vni` from `outer_src`."""
    return (Ether(dst=DUT_MAC, src=ROUTER_MAC) / IP(src=outer_src, dst=vip, ttl=63) /
            UDP(sport=sport, dport=VXLAN_PORT) / VXLAN(vni=vni) / inner)


def inner(src_mac, dst_mac, src, dst, l4, body):
    return Ether(src=src_mac, dst=dst_mac) / IP(src=src, dst=dst) / l4 / body


def out(vm, dst, l4, body, src_mac=None, vip=VIP, sport=49152):
    """VM `vm`'s frame to CA `dst`, from its host in the host's VNI (outbound)."""
    return underlay(inner(src_mac or vm.mac, FAKE_MAC, vm.ca, dst, l4, body), vm.host_vni,
                    vm.pa, vip, sport)


def back(peer, vm, l4, body, outer_src=None, sport=49153):
    """`peer`'s frame to VM `vm`, from the peer's host in the peer's VNET VNI (inbound)."""
    return underlay(inner(peer.mac, vm.mac, peer.ca, vm.ca, l4, body), peer.vnet_vni,
                    outer_src or peer.pa, sport=sport)


def drop(name):
    return ("drop", name)


def punt(name):
    return ("punt", name)


# ----------------------------------------------------------------- a full session table


def crc64_xz(data):
    """CRC-64/XZ, the exact-match hash of docs/tables.md."""
    crc = (1 << 64) - 1
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xC96C5795D7870F42 if crc & 1 else crc >> 1
    return crc ^ ((1 << 64) - 1)


def session_key(zone, proto, src, sport, dst, dport):
    """The canonical key of docs/sessions.md: zone, protocol, the lower (address, port)
    pair, the higher one."""
    low, high = sorted((src << 16 | sport, dst << 16 | dport))
    return ((zone << 8 | proto) << 48 | low) << 48 | high


def slots(key):
    """The key's candidate slot in each way: CRC bits 16w .. 16w + SLOT_BITS - 1."""
    crc = crc64_xz(key.to_bytes(16, "big"))
    return [(crc >> (16 * w)) & (SLOTS - 1) for w in range(WAYS)]


def ip_int(a):
    return int.from_bytes(bytes(int(x) for x in a.split(".")), "big")


def kernel(columns, ways):
    """A basis of the port changes (32-bit vectors: source port high, destination port low)
    that leave the slots of `ways` as they are. The CRC is linear in the key, so flipping a
    set of port bits flips the XOR of what each bit flips; `columns[i]` is what bit i
    flips, per way."""
    pivots = {}  # highest set bit -> (hash change, port change)
    basis = []
    for bit, change in enumerate(columns):
        v = 0
        for w in ways:
            v = v << SLOT_BITS | change[w]
        d = 1 << bit
        while v:
            top = v.bit_length() - 1
            if top not in pivots:
                pivots[top] = (v, d)
                break
            v ^= pivots[top][0]
            d ^= pivots[top][1]
        if not v:
            basis.append(d)
    return basis


def full_table_flows(rng):
    """Source and destination ports of C's UDP flows to B, in the order sent, such that the
    last one finds all four of its candidate slots taken by the ones before it. With E the
    last flow's key and e0..e3 its slots, each flow goes into the first free way among its
    own slots (d-left, no moves):

      Y0: shares e0                         -> way 0, e0
      Y1: shares e0, e1                     -> way 1, e1
      Y2: shares e0, e1, e2                 -> way 2, e2
      W:  shares e0, e1, e3, not e2         (its way-2 slot is a2)
      Y3: shares e0, e1 and W's a2          -> way 2, a2
      W                                     -> way 3, e3
      E:  e0, e1, e2, e3 all taken          -> no free way

    Every flow here shares at most three ways' slot bits with another, fewer than the 32
    port bits can fix."""
    src, dst = ip_int(C.ca), ip_int(B.ca)

    def key(ports):
        return session_key(C.eni, UDP_PROTO, src, ports >> 16, dst, ports & 0xFFFF)

    zero = slots(key(0))
    columns = [[a ^ b for a, b in zip(slots(key(1 << i)), zero)] for i in range(32)]

    def pick(basis):
        while True:
            d = 0
            for b in basis:
                if rng.getrandbits(1):
                    d ^= b
            if d:
                return d

    def usable(ports):
        return all(p not in (0, VXLAN_PORT) for p in (ports >> 16, ports & 0xFFFF))

    while True:
        e = rng.getrandbits(16) << 16 | rng.randrange(1024, 65536)
        w = e ^ pick(kernel(columns, (0, 1, 3)))
        flows = [e ^ pick(kernel(columns, (0,))), e ^ pick(kernel(columns, (0, 1))),
                 e ^ pick(kernel(columns, (0, 1, 2))), w ^ pick(kernel(columns, (0, 1, 2))),
                 w, e]
        if len(set(flows)) == len(flows) and all(map(usable, flows)):
            break
    # Check the construction as the table would take the flows.
    table = set()
    for i, ports in enumerate(flows):
        free = [(way, s) for way, s in enumerate(slots(key(ports))) if (way, s) not in table]
        if i < len(flows) - 1:
            table.add(free[0])
        else:
            assert not free, "the last flow must find every candidate slot taken"
    return [(ports >> 16, ports & 0xFFFF) for ports in flows]


# --------------------------------------------------------------------------- the frames


def scenario():
    """[(label, frame, expected)]: expected is ("pass", PA, VNI, outer DSCP) for a frame
    that leaves encapsulated to host PA in VNI, ("drop", reason) or ("punt", reason) with
    the reason named by what raises it: `<table>.<action>`, or `<session table>.full`."""
    rng = random.Random(SEED)
    s = []

    def add(label, frame, expected):
        s.append((label, frame, expected))

    def tcp(sport, dport, flags):
        return TCP(sport=sport, dport=dport, flags=flags, seq=rng.getrandbits(32))

    to_a, to_b = ("pass", A.pa, A.host_vni, 0), ("pass", B.pa, B.host_vni, 0)
    to_c = ("pass", C.pa, C.host_vni, 0)
    # Outbound frames routed to a VNET leave to the peer's host in the VNET's VNI.
    a_to_b, a_to_c = ("pass", B.pa, B.vnet_vni, 0), ("pass", C.pa, C.vnet_vni, 0)
    b_to_a, b_to_c = ("pass", A.pa, A.vnet_vni, 0), ("pass", C.pa, C.vnet_vni, 0)
    c_to_a, c_to_b = ("pass", A.pa, A.vnet_vni, 0), ("pass", B.pa, B.vnet_vni, 0)

    # A opens TCP to B:80; the replies come back inbound from B's host.
    add("A>B tcp 80 SYN", out(A, B.ca, tcp(40001, 80, "S"), payload(rng, 0)), a_to_b)
    add("B>A tcp 80 SYN-ACK", back(B, A, tcp(80, 40001, "SA"), payload(rng, 0)), to_a)
    add("A>B tcp 80 ACK", out(A, B.ca, tcp(40001, 80, "A"), payload(rng, 0)), a_to_b)
    add("A>B tcp 80 data", out(A, B.ca, tcp(40001, 80, "PA"), payload(rng, 120)), a_to_b)
    add("B>A tcp 80 data", back(B, A, tcp(80, 40001, "PA"), payload(rng, 400)), to_a)
    # A asks C's DNS server.
    add("A>C udp 53 query", out(A, C.ca, UDP(sport=40100, dport=53), payload(rng, 40)), a_to_c)
    add("C>A udp 53 answer", back(C, A, UDP(sport=53, dport=40100), payload(rng, 90)), to_a)
    # B takes a connection from A: inbound first, A's host validated as a PA of VNET 1.
    add("A>B tcp 80 SYN in", back(A, B, tcp(40200, 80, "S"), payload(rng, 0)), to_b)
    add("B>A tcp 80 SYN-ACK out", out(B, A.ca, tcp(80, 40200, "SA"), payload(rng, 0)), b_to_a)
    add("A>B tcp 80 ACK in", back(A, B, tcp(40200, 80, "A"), payload(rng, 0)), to_b)
    # B asks C's DNS server.
    add("B>C udp 53 query", out(B, C.ca, UDP(sport=40300, dport=53), payload(rng, 40)), b_to_c)
    add("C>B udp 53 answer", back(C, B, UDP(sport=53, dport=40300), payload(rng, 90)), to_b)
    # C opens TCP to A:443.
    add("C>A tcp 443 SYN", out(C, A.ca, tcp(40400, 443, "S"), payload(rng, 0)), c_to_a)
    add("A>C tcp 443 SYN-ACK", back(A, C, tcp(443, 40400, "SA"), payload(rng, 0)), to_c)
    add("C>A tcp 443 ACK", out(C, A.ca, tcp(40400, 443, "A"), payload(rng, 0)), c_to_a)

    # What the ACLs deny or send to the host.
    add("A>B tcp 22 denied", out(A, B.ca, tcp(40500, 22, "S"), payload(rng, 0)),
        drop("verdict.deny"))
    add("C>B tcp 3389 denied", out(C, B.ca, tcp(40600, 3389, "S"), payload(rng, 0)),
        drop("verdict.deny"))
    add("B>A unsolicited", back(B, A, tcp(80, 40999, "SA"), payload(rng, 0)),
        drop("verdict.deny"))
    add("A>B tcp 22 unsolicited in", back(A, B, tcp(40700, 22, "S"), payload(rng, 0)),
        drop("verdict.deny"))
    add("A>B icmp echo", out(A, B.ca, ICMP(type=8, id=7, seq=1), payload(rng, 56)),
        punt("verdict.to_host"))

    # D's policer: no refill, so the burst goes green, yellow (marked), red (dropped).
    d_to_b = ("pass", B.pa, B.vnet_vni, 0)
    colours = [d_to_b] + [("pass", B.pa, B.vnet_vni, MARK_DSCP)] * 3 + [drop("colour.drop_red")] * 4
    for i, expected in enumerate(colours):
        add(f"D>B udp 5001 burst {i + 1}",
            out(D, B.ca, UDP(sport=41000, dport=5001), payload(rng, 226)), expected)

    # Misses.
    add("wrong VIP", out(A, B.ca, tcp(40800, 80, "S"), payload(rng, 0), vip="10.1.1.2"),
        drop("vip.drop"))
    add("unknown ENI MAC", out(A, B.ca, tcp(40801, 80, "S"), payload(rng, 0),
                               src_mac="00:aa:00:aa:00:aa"), drop("eni_out.drop"))
    add("no route", out(A, "172.16.5.5", tcp(40802, 80, "S"), payload(rng, 0)),
        drop("route.miss"))
    add("no mapping", out(A, "192.168.1.200", tcp(40803, 80, "S"), payload(rng, 0)),
        drop("mapping.drop"))
    add("unknown PA", back(A, B, tcp(40804, 80, "S"), payload(rng, 0), outer_src="10.10.1.99"),
        drop("pa_validation.drop"))

    # C's probes fill the session table for the last one's key.
    flows = full_table_flows(rng)
    for i, (sport, dport) in enumerate(flows):
        last = i == len(flows) - 1
        add(f"C>B udp probe {i + 1}", out(C, B.ca, UDP(sport=sport, dport=dport),
                                          payload(rng, 20)),
            punt("sessions.full") if last else c_to_b)

    # Not the overlay's.
    add("ARP for the VIP", Ether(dst="ff:ff:ff:ff:ff:ff", src=ROUTER_MAC) /
        ARP(hwsrc=ROUTER_MAC, psrc="10.1.1.254", pdst=VIP) / Raw(bytes(18)),
        punt("frame_class.to_host"))
    add("VXLAN carrying ARP", underlay(Ether(src=A.mac, dst="ff:ff:ff:ff:ff:ff") /
                                       ARP(hwsrc=A.mac, psrc=A.ca, pdst=B.ca), A.host_vni, A.pa),
        drop("frame_class.drop"))
    return s


def packets():
    pkts = []
    for i, (_, frame, _) in enumerate(scenario()):
        frame.time = 1_700_000_000 + i * 0.001
        pkts.append(frame)
    return pkts


def main():
    dest = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("overlay.pcap")
    pkts = packets()
    wrpcap(str(dest), pkts)
    print(f"{dest}: {len(pkts)} packets")


if __name__ == "__main__":
    main()
