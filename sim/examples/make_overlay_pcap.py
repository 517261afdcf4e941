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
- a full session table: C probes UDP ports of B from ports chosen so that the keys of its
  flows, with the sessions learned before them, fill the four candidate slots of the last
  one's key on chip (`overlay`) and the six of its bucket in memory (`overlay_mem`)
  (found by trying ports, full_table_flows()); every probe but the last is learned and
  passes, the last finds no free slot and is punted to the host;
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

# The reference model's session table (tb/model/session.py), which the hardware's equals
# frame by frame in every test, places the probes.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tb.model.session import MemSessionModel, Packet, SessionModel, canonical_key  # noqa: E402

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
VMS = (A, B, C, D)
MARK_DSCP = 10

# The session tables of the 64-bit builds ("sessions" of layout-overlay.json: 1024 entries
# in 4 ways of 256 slots; of layout-overlay_mem.json: 1536 in memory, 256 buckets of 6).
WAYS, SLOTS = 4, 256
MEM_BUCKETS, MEM_SLOTS = 256, 6
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


def ip_int(a):
    return int.from_bytes(bytes(int(x) for x in a.split(".")), "big")


# The reasons of this scenario raised after the session table (docs/overlay.md): their
# frames met it first.
AFTER_SESSIONS = {"colour.drop_red", "route.miss", "mapping.drop"}


def session_packet(frame, expected):
    """What the session table sees of a scenario frame that reaches it (one that passes, or
    is dropped by a stage after it): its zone is the ENI, the inner source MAC's outbound,
    the inner destination MAC's inbound. None for every other frame."""
    if expected[0] != "pass" and expected[1] not in AFTER_SESSIONS or VXLAN not in frame:
        return None
    vxlan = frame[VXLAN]
    eni = {vm.mac: vm.eni for vm in VMS}
    outbound = vxlan.vni in {vm.host_vni for vm in VMS}
    zone = eni[vxlan[Ether].src if outbound else vxlan[Ether].dst]
    ip = vxlan[IP]
    l4 = ip.payload
    ports = (l4.sport, l4.dport) if isinstance(l4, (TCP, UDP)) else (0, 0)
    flags = int(l4.flags) if isinstance(l4, TCP) else 0
    return Packet(zone, ip.proto, ip_int(ip.src), ip_int(ip.dst), *ports, flags)


def full_table_flows(rng, earlier):
    """Source and destination ports of C's UDP flows to B, in the order sent, such that the
    last one finds every slot it may take full in both programs' session tables (the
    models', after the `earlier` frames ([(frame, expected)])), and every other one
    learns in both. The slot hash is not linear, so each flow is found by trying random
    ports. In memory, the last flow's bucket is filled first, by flows of that bucket. On
    chip, to fill slot s of way w: a flow whose way-w slot is s, sent after flows that fill
    its slots in ways 0 .. w-1 (found the same way), takes way w; those flows keep out of
    the last flow's bucket in memory."""
    src, dst = ip_int(C.ca), ip_int(B.ca)
    table = SessionModel(WAYS * SLOTS, WAYS)
    memory = MemSessionModel(MEM_BUCKETS, MEM_SLOTS)
    for frame, expected in earlier:
        p = session_packet(frame, expected)
        if p is not None:
            table.packet(p, 0)
            memory.packet(p, 0)

    def probe(ports):
        return Packet(C.eni, UDP_PROTO, src, dst, ports >> 16, ports & 0xFFFF)

    def key(ports):
        return canonical_key(probe(ports))[0]

    def random_ports():
        while True:
            ports = rng.getrandbits(16) << 16 | rng.getrandbits(16)
            if all(p not in (0, VXLAN_PORT) for p in (ports >> 16, ports & 0xFFFF)):
                return ports

    flows = []

    def learn(ports):
        for t in (table, memory):
            r = t.packet(probe(ports), 0)
            assert r.learned, f"flow {ports:#x} did not learn in {type(t).__name__}"
        flows.append(ports)

    def fill(way, index):
        if index in table.entries:
            return
        while True:
            ports = random_ports()
            if ports not in flows and ports != last and table.candidates(key(ports))[way] == index \
                    and memory.bucket(key(ports)) != memory.bucket(key(last)):
                break
        for w, i in enumerate(table.candidates(key(ports))[:way]):
            fill(w, i)
        learn(ports)
        assert table.find(key(ports)) == index

    last = random_ports()
    while any(i not in memory.entries for i in memory.candidates(key(last))):
        ports = random_ports()
        if ports not in flows and ports != last and memory.bucket(key(ports)) == memory.bucket(key(last)):
            learn(ports)
    for way, index in enumerate(table.candidates(key(last))):
        fill(way, index)
    for t in (table, memory):
        assert t.packet(probe(last), 0).insert_failed, "the last flow must find every slot taken"
    flows.append(last)
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
    flows = full_table_flows(rng, [(frame, expected) for _, frame, expected in s])
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
