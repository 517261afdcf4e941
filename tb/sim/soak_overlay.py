# SPDX-License-Identifier: Apache-2.0
"""The counting soak (tb/sim/soak.py) on the overlay program (docs/overlay.md): its base
tables, its frames and its churn.

Topology (after sim/examples/overlay_tables.txt, with six VMs and a churned VNET): VM k
(k = 0..5) has ENI 5 + 2k, CA 192.168.k.1, routing group 3 + k, VNET k + 1 (VNI k + 1),
its host at PA 10.10.<k+1>.10 sending the VM's frames to the VIP 10.1.1.1 in host VNI
101 + k (outbound). Every VM routes to the others' /24s, and 172.20.0.0/16 to the churn
VNET 20 (VNI 20), whose CAs 172.20.0.1..8 are mapped, re-mapped and unmapped through the
driver's entry API while frames flow (`mapping` entries of VNET 20: set_mapping to a PA of
10.20.0.1..4 and a MAC, or drop; the base maps 172.20.0.1..4). Replies come back from the
peer's host in the peer VNET's VNI (PA-validated) or from the churn VNET's hosts
10.20.0.0/16 in VNI 20 (decapsulated without validation).

ACL (default deny): any ENI may open TCP to port 80 and 443 and UDP to port 53; TCP to
port 8080 goes to the host; ENI 5 may not open TCP to 443; ENIs of even VMs take TCP to
port 22 from 192.168.0.0/16 inbound, ENI 7 UDP to port 5001 from anywhere. A frame of a
learned session passes both ways (`verdict`).

Policers: the `policer` table is left empty, so every frame is green and `colour` takes
its default (`pass`): the model cannot know the clock a frame meets its meter at, and a
meter of rate 0 would be exact but run dry in a chunk, leaving its ENI's flows red.

Frames (kinds as Counts.kinds counts them): `flow`, frames of VM-to-VM flows in both
directions (the opener's outbound frame, the reply inbound to it, and the same flow seen
from the peer: inbound to it, its outbound reply); `churn_flow`, flows to the churned CAs
and their replies; `overlay_miss`, VXLAN frames each table's miss or drop reason stops
(wrong VIP, unknown inner MACs, an ENI without attributes, an unknown VNI, an unknown PA,
a route miss and a dropping route, no mapping, a VNET without VNI, an inner TTL of 1, a bad
inner checksum, an ACL's `to_host` and its default deny, VXLAN carrying ARP); `non_overlay`, plain IPv4 frames (punted by
`frame_class`); `truncated`, overlay frames cut inside their headers; `malformed` and
`random` as for conntrack; `syn_flood`, TCP SYNs of new flows the ACL permits (port 80),
from every VM, filling the session table. Sizes: a VXLAN frame is its headers (outer 50
bytes, inner 54 or 42) plus random payload up to 9216 bytes in all, drawn as
soak.frame_size draws them (a size below the headers' takes the headers' size).
"""

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.layers.vxlan import VXLAN

from tb.common.scapy_view import mac_int
from tb.model.program import Program
from tb.model.session import ACK, FIN, RST, SYN
from tb.pipeline.traffic import ip_int
from tb.sim import soak, tables_file

VIP = "10.1.1.1"
FAKE_MAC = "aa:12:44:69:05:aa"  # the inner destination a VM sends to (DASH: fake_mac)
ROUTER_MAC, DUT_MAC = "02:bb:00:00:00:02", "02:aa:00:00:00:01"
PORTS = (0, 1, 2, 3)
TCP_PROTO = soak.TCP_PROTO
FLAG_MIXES = [SYN, SYN, SYN | ACK, ACK, ACK, FIN | ACK, RST, 0]
# (protocol, destination port) of the flows: most of them the outbound ACL permits.
SERVICES = [(6, 80), (6, 80), (6, 443), (6, 443), (17, 53), (17, 53), (6, 22), (17, 5001),
            (6, 8080), (17, 80)]
OUTER = 50  # outer Ethernet, IPv4, UDP, VXLAN


class Vm:
    def __init__(self, k):
        self.k = k
        self.eni = 5 + 2 * k
        self.mac = f"00:{k + 1:02x}:00:00:03:{0x14 + k:02x}"
        self.ca = f"192.168.{k}.1"
        self.group = 3 + k
        self.vnet = self.vnet_vni = k + 1
        self.pa = f"10.10.{k + 1}.10"
        self.host_vni = 101 + k


VMS = [Vm(k) for k in range(6)]
DOWN_ENI, DOWN_MAC = 31, "00:1f:00:00:00:31"  # eni_out and eni_in, no attributes
CHURN_VNET = CHURN_VNI = 20
CHURN_CAS = [f"172.20.0.{i}" for i in range(1, 9)]
CHURN_PAS = [f"10.20.0.{i}" for i in range(1, 5)]
CHURN_MACS = [f"00:20:00:00:00:{i:02x}" for i in range(1, 5)]
NO_VNI_VNET, NO_VNI_CA = 7, "192.168.100.1"  # routed and mapped, the VNET has no VNI


CHURN_CA_INTS = {ip_int(ca): ca for ca in CHURN_CAS}


def tables_text():
    """The base tables, in matcha-ctl's syntax (tb/sim/tables_file.py reads them)."""
    lines = ["table_add frame_class overlay 1 1 =>", "table_add frame_class drop 1 0 =>",
             f"table_add vip accept {VIP} =>"]
    add = lines.append
    for vm in VMS:
        add(f"table_add direction outbound {vm.host_vni} =>")
    for eni, mac in [(vm.eni, vm.mac) for vm in VMS] + [(DOWN_ENI, DOWN_MAC)]:
        add(f"table_add eni_out set_eni {mac} => {eni}")
        add(f"table_add eni_in set_eni {mac} => {eni}")
    for vm in VMS:
        add(f"table_add eni set_eni_attrs {vm.eni} => {vm.group} {vm.pa} {vm.host_vni} 0")
        net = vm.pa.rsplit(".", 1)[0] + ".0/24"
        add(f"table_add inbound_routing decap_pa_validate 0&&&0 {vm.vnet_vni} {net} => "
            f"{vm.vnet} 10")
        add(f"table_add pa_validation permit {vm.vnet} {vm.pa} =>")
    add(f"table_add inbound_routing decap 0&&&0 {CHURN_VNI} 10.20.0.0/16 => 10")
    # ACL: outbound = 1, ENI, src, dst, protocol, source port range, destination port range.
    any_ = "0&&&0 0&&&0"
    add(f"table_add acl permit 1 0&&&0 {any_} 6 0&&&0 80 => 10")
    add(f"table_add acl permit 1 0&&&0 {any_} 6 0&&&0 443 => 10")
    add(f"table_add acl permit 1 0&&&0 {any_} 17 0&&&0 53 => 10")
    add(f"table_add acl to_host 1 0&&&0 {any_} 6 0&&&0 8080 => 20")
    add(f"table_add acl deny 1 {VMS[0].eni} {any_} 6 0&&&0 443 => 30")
    for vm in VMS[::2]:
        add(f"table_add acl permit 0 {vm.eni} 192.168.0.0/16 0&&&0 6 0&&&0 22 => 10")
    add(f"table_add acl permit 0 {VMS[1].eni} {any_} 17 0&&&0 5001 => 10")
    for acl in range(4):
        add(f"table_add verdict admit 1 {acl} =>")
    add("table_add verdict admit 0 1 =>")
    add("table_add verdict to_host 0 3 =>")
    for vm in VMS:
        for peer in VMS:
            if peer is not vm:
                add(f"table_add route route_vnet {vm.group} 192.168.{peer.k}.0/24 => {peer.vnet}")
        add(f"table_add route route_vnet {vm.group} 172.20.0.0/16 => {CHURN_VNET}")
        add(f"table_add route route_vnet {vm.group} 192.168.100.0/24 => {NO_VNI_VNET}")
        add(f"table_add route drop {vm.group} 10.99.0.0/16 =>")
    add("table_add colour drop_red 2 0 =>")
    add("table_add colour drop_red 2 1 =>")
    add("table_add colour mark 1 0 => 10")
    add("table_add colour drop_yellow 1 1 =>")
    for vm in VMS:
        add(f"table_add mapping set_mapping {vm.vnet} {vm.ca} => {vm.pa} {vm.mac}")
        add(f"table_add vnet set_vni {vm.vnet} => {vm.vnet_vni}")
    add(f"table_add mapping set_mapping {NO_VNI_VNET} {NO_VNI_CA} => 10.30.0.1 02:30:00:00:00:01")
    for i, ca in enumerate(CHURN_CAS[:4]):
        add(f"table_add mapping set_mapping {CHURN_VNET} {ca} => {CHURN_PAS[i]} {CHURN_MACS[i]}")
    add(f"table_add vnet set_vni {CHURN_VNET} => {CHURN_VNI}")
    add("table_set_default encap vxlan_encap 02:aa:00:00:00:f1 02:bb:00:00:00:f2")
    return "\n".join(lines) + "\n"


TABLES = tables_text()


def base_program(layout):
    p = Program(layout)
    tables_file.load_text(p, TABLES, "soak_overlay.TABLES")
    return p


class OverlaySpec(soak.ProgramSpec):
    """The overlay program: `mapping` entries of the churned VNET."""
    name = "overlay"
    churn_table = "mapping"
    # A SYN-flood chunk: from a quarter of the frames on, three in four are SYNs.
    flood_start, flood_share = 0.25, 0.75

    def base_program(self, layout):
        return base_program(layout)

    def load_base(self, dev, program):
        return soak.load_program(dev, program, handles_of=self.churn_table)

    def maker(self, rng):
        return OverlayFrameMaker(rng)

    def choose_update(self, rng):
        key = (CHURN_VNET, ip_int(rng.choice(CHURN_CAS)))
        if rng.random() < 0.25:
            return key, "drop", ()
        return key, "set_mapping", (ip_int(rng.choice(CHURN_PAS)), mac_int(rng.choice(CHURN_MACS)))

    def churned(self, port, phv):
        return bool(phv.get("hdr.inner_ipv4.valid")) and \
            phv.get("hdr.inner_ipv4.dst") in CHURN_CA_INTS

    def reaches(self, port, phv, key):
        return phv.get("hdr.inner_ipv4.dst") == key[1]

    def egress(self, program, phv, port):
        return port  # an overlay frame leaves by the port it came in on

    def flood_frames(self, sessions):
        # Half again as many SYNs as the table has entries.
        return int(1.5 * sessions / ((1 - self.flood_start) * self.flood_share)) + 1


class OverlayFrameMaker(soak.FrameMaker):
    """Random frames for the overlay program; the plain frames (non-overlay, malformed,
    random) as soak.FrameMaker makes them."""

    def __init__(self, rng):
        super().__init__(rng)
        self.vx_flows = [self._vx_flow() for _ in range(60)]
        self.specials = {}

    def _vx_flow(self):
        rng = self.rng
        a = rng.choice(VMS)
        if rng.random() < 0.4:
            peer = rng.choice(CHURN_CAS)
        else:
            peer = rng.choice([v for v in VMS if v is not a])
        sport = rng.randrange(1024, 65536)
        while sport == 4789:
            sport = rng.randrange(1024, 65536)
        proto, dport = rng.choice(SERVICES)
        return a, peer, proto, sport, dport

    def vx_header(self, outer_src, vni, in_smac, in_dmac, src, dst, proto, sport, dport,
                  flags, vip=VIP, ttl=64):
        """The headers of a VXLAN frame, lengths and checksums not yet set (vx_sized sets
        them). scapy builds one per flow without its ports, which are written in: a scapy
        build per frame would take longer than simulating the frame."""
        key = (outer_src, vni, in_smac, in_dmac, src, dst, proto, flags, vip, ttl)
        h = self.headers.get(key)
        if h is None:
            l4 = TCP(flags=flags) if proto == TCP_PROTO else UDP()
            h = self.headers[key] = bytes(
                Ether(dst=DUT_MAC, src=ROUTER_MAC)
                / IP(src=outer_src, dst=vip, ttl=63) / UDP(sport=49152, dport=4789)
                / VXLAN(vni=vni) / Ether(src=in_smac, dst=in_dmac)
                / IP(src=src, dst=dst, ttl=ttl) / l4)
        l4 = OUTER + 14 + 20
        return h[:l4] + sport.to_bytes(2, "big") + dport.to_bytes(2, "big") + h[l4 + 4:]

    def vx_sized(self, header, size):
        """The VXLAN frame of `header` with random payload to `size` bytes (at least the
        header's), every length and checksum set for it (the outer UDP's checksum 0)."""
        f = bytearray(header + self.rng.randbytes(max(size, len(header)) - len(header)))
        soak.set_ipv4_lengths(f, 14)
        soak.set_ipv4_lengths(f, OUTER + 14)
        return bytes(f)

    def _peer(self, peer):
        """(CA, MAC, PA, VNI) the peer's frames come from."""
        if isinstance(peer, Vm):
            return peer.ca, peer.mac, peer.pa, peer.vnet_vni
        i = CHURN_CAS.index(peer) % len(CHURN_PAS)
        return peer, CHURN_MACS[i], CHURN_PAS[i], CHURN_VNI

    def vx_flow_frame(self):
        """(frame, kind): a frame of a random flow, in one of its directions."""
        rng = self.rng
        a, peer, proto, sport, dport = rng.choice(self.vx_flows)
        flags = rng.choice(FLAG_MIXES) if proto == TCP_PROTO else 0
        p_ca, p_mac, p_pa, p_vni = self._peer(peer)
        r = rng.random()
        if r < 0.45 or (r >= 0.8 and not isinstance(peer, Vm)):
            # The opener's frame, outbound.
            h = self.vx_header(a.pa, a.host_vni, a.mac, FAKE_MAC, a.ca, p_ca, proto, sport,
                               dport, flags)
        elif r < 0.8:
            # The reply, inbound to the opener from the peer's host.
            h = self.vx_header(p_pa, p_vni, p_mac, a.mac, p_ca, a.ca, proto, dport, sport,
                               flags)
        elif r < 0.9:
            # The flow seen from the peer VM: inbound to it from the opener's host ...
            h = self.vx_header(a.pa, a.vnet_vni, a.mac, peer.mac, a.ca, peer.ca, proto,
                               sport, dport, flags)
        else:
            # ... and its outbound reply.
            h = self.vx_header(peer.pa, peer.host_vni, peer.mac, FAKE_MAC, peer.ca, a.ca,
                               proto, dport, sport, flags)
        kind = "flow" if isinstance(peer, Vm) else "churn_flow"
        return self.vx_sized(h, soak.frame_size(rng)), kind

    def miss_frame(self):
        """A VXLAN frame one of the tables stops (a miss, a dropping action, a check)."""
        rng = self.rng
        a = rng.choice(VMS)
        b = rng.choice([v for v in VMS if v is not a])
        sport = rng.randrange(1024, 4789)
        case = rng.randrange(15)

        def out(dst, vip=VIP, smac=a.mac, ttl=64, dport=80):
            return self.vx_header(a.pa, a.host_vni, smac, FAKE_MAC, a.ca, dst, TCP_PROTO,
                                  sport, dport, SYN, vip=vip, ttl=ttl)

        if case == 0:
            h = out(b.ca, vip="10.1.1.2")                               # vip.drop
        elif case == 1:
            h = out(b.ca, smac="02:ee:00:00:00:01")                     # eni_out.drop
        elif case == 2:                                                  # eni_in.drop
            h = self.vx_header(b.pa, b.vnet_vni, b.mac, "02:ee:00:00:00:02", b.ca, a.ca,
                               TCP_PROTO, 80, sport, ACK)
        elif case == 3:
            h = out(b.ca, smac=DOWN_MAC)                                 # eni.admin_down
        elif case == 4:                                                  # inbound_routing.drop
            h = self.vx_header(b.pa, 999, b.mac, a.mac, b.ca, a.ca, TCP_PROTO, 80, sport, ACK)
        elif case == 5:                                                  # pa_validation.drop
            h = self.vx_header(f"10.10.{b.k + 1}.99", b.vnet_vni, b.mac, a.mac, b.ca, a.ca,
                               TCP_PROTO, 80, sport, ACK)
        elif case == 6:
            h = out("172.31.0.5")                                        # route.miss
        elif case == 7:
            h = out("10.99.1.1")                                         # route.drop
        elif case == 8:
            h = out(f"192.168.{b.k}.200")                                # mapping.drop
        elif case == 9:
            h = out(NO_VNI_CA)                                           # vnet.drop
        elif case == 10:
            h = out(b.ca, ttl=1)                                         # TTL_EXPIRED
        elif case == 11:                                                 # IPV4_CHECKSUM
            f = bytearray(self.vx_sized(out(b.ca), soak.frame_size(rng)))
            f[OUTER + 24] ^= 0x5A
            return bytes(f)
        elif case == 12:
            h = out(b.ca, dport=8080)                                    # acl to_host
        elif case == 13:
            h = out(b.ca, dport=25)                                      # verdict.deny
        else:                                                            # frame_class.drop
            arp = self.specials.get(("arp", a.k))
            if arp is None:
                arp = self.specials[("arp", a.k)] = bytes(
                    Ether(dst=DUT_MAC, src=ROUTER_MAC) / IP(src=a.pa, dst=VIP, ttl=63)
                    / UDP(sport=49152, dport=4789) / VXLAN(vni=a.host_vni)
                    / Ether(src=a.mac, dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=a.ca, pdst=b.ca))
            return arp
        return self.vx_sized(h, soak.frame_size(rng))

    def frame(self):
        """(port, frame, kind)."""
        rng = self.rng
        r = rng.random()
        port = rng.choice(PORTS)
        if r < 0.62:
            return (port, *self.vx_flow_frame())
        if r < 0.72:
            return port, self.miss_frame(), "overlay_miss"
        if r < 0.77:
            return (*self.flow_frame(port), "non_overlay")
        if r < 0.87:
            f, _ = self.vx_flow_frame()
            return port, f[:rng.randrange(1, min(len(f), OUTER + 54) + 1)], "truncated"
        if r < 0.94:
            return port, rng.choice(self.malformed)[0], "malformed"
        return rng.choice(PORTS + (soak.OTHER,)), rng.randbytes(soak.frame_size(rng)), "random"

    def syn_flood(self):
        """A TCP SYN of a new flow from a VM to port 80 of another's CA: permitted, a session
        to learn until the table is full."""
        rng = self.rng
        a = rng.choice(VMS)
        b = rng.choice([v for v in VMS if v is not a])
        host, sport = rng.randrange(1, 255), rng.randrange(1024, 65536)
        # The inner source host written in: one scapy header per pair of VMs.
        h = bytearray(self.vx_header(a.pa, a.host_vni, a.mac, FAKE_MAC, f"192.168.{a.k}.1",
                                     b.ca, TCP_PROTO, sport, 80, SYN))
        h[OUTER + 14 + 15] = host
        return rng.choice(PORTS), self.vx_sized(bytes(h), rng.randint(104, 170)), "syn_flood"
