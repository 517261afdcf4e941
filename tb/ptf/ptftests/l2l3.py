# SPDX-License-Identifier: Apache-2.0
"""PTF tests of the built-in L2/L3 program in matcha-sim, its ports on veth pairs and its
punt path on a CPU port (sim/README.md, "Live"), with the tables of tb/ptf/scenario.py
loaded. tb/ptf/test_ptf.py sets everything up and runs them; by hand, in the namespace where
the simulator runs:

    ptf --test-dir tb/ptf/ptftests --pypath . -i 0@host0 -i 1@host1 -i 2@host2 -i 3@host3 \\
        -i 64@hostcpu [--test-params "layout='build/rtl/w64/layout.json'"]

Every expected frame is built with scapy from what the entries mean (scenario.routed, the
CPU port's header from tb/common/cpu_header.py); reason codes come from the layout. The
simulator keeps frames in order, so a frame sent after one that must not come out shows it
did not: the next frame out of that port is the later one.
"""

import ptf
from ptf import testutils as tu
from ptf.base_tests import BaseTest
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from tb.common import cpu_header
from tb.ptf import scenario

# The kernel sends nothing on the test's pairs with IPv6 off (sim/netns.sh); should it,
# its IPv6 frames are not the pipeline's.
tu.add_filter(tu.not_ipv6_filter)


class L2l3Test(BaseTest):
    def setUp(self):
        super().setUp()
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        self.reason = scenario.reasons(tu.test_param_get("layout", scenario.LAYOUT))

    def next_frame(self, port):
        """The next frame out of `port`, whatever it is."""
        result = tu.dp_poll(self, port_number=port, timeout=ptf.ptfutils.default_timeout)
        self.assertIsInstance(result, self.dataplane.PollSuccess, f"no frame out of port {port}")
        return bytes(result.packet)


class RoutedFrames(L2l3Test):
    """Frames to two destinations, one covered by the /16 only, one by the /24 inside it,
    leave the port of their longest prefix with its MACs, TTL − 1 and the checksum updated."""

    def runTest(self):
        for dst in ("10.1.7.7", "10.1.2.9"):
            frame = scenario.udp(dst)
            route = scenario.route_for(dst)
            tu.send_packet(self, 0, frame)
            tu.verify_packet(self, scenario.routed(frame, route), route.port)
        tu.verify_no_other_packets(self)


class NoRoutePunted(L2l3Test):
    """A frame no route covers reaches the CPU port untouched, with ipv4_lpm.no_route, its
    ingress port and its egress port (the ingress port: the parser's, no table set one)."""

    def runTest(self):
        frame = scenario.udp("172.16.0.1")
        tu.send_packet(self, 1, frame)
        tu.verify_packet(self, cpu_header.packet_in(frame, 1, 1, self.reason["ipv4_lpm.no_route"]),
                         scenario.CPU)
        tu.verify_no_other_packets(self)


class AclToHostPunted(L2l3Test):
    """UDP to the host's DNS address: the route rewrites it, then the ACL punts it with
    acl.to_host; the CPU port gets the rewritten frame and the route's egress port."""

    def runTest(self):
        frame = scenario.udp(scenario.HOST_DNS, dport=53)
        route = scenario.route_for(scenario.HOST_DNS)
        tu.send_packet(self, 0, frame)
        tu.verify_packet(self, cpu_header.packet_in(scenario.routed(frame, route), 0, route.port,
                                                    self.reason["acl.to_host"]), scenario.CPU)
        tu.verify_no_other_packets(self)


class AclDenyDropped(L2l3Test):
    """TCP to port 22 from the denied network is dropped; the same flow to port 23, sent
    after it on the same route, is the next frame out."""

    def runTest(self):
        src, dst = "10.9.1.1", "10.1.7.7"
        route = scenario.route_for(dst)
        denied = scenario.tcp(dst, src=src, dport=scenario.DENIED_TCP_PORT)
        allowed = scenario.tcp(dst, src=src, dport=scenario.DENIED_TCP_PORT + 1)
        tu.send_packet(self, 0, denied)
        tu.send_packet(self, 0, allowed)
        self.assertEqual(self.next_frame(route.port), bytes(scenario.routed(allowed, route)))
        tu.verify_no_other_packets(self)


class PacketOutEntersPipeline(L2l3Test):
    """A packet-out enters the pipeline on the ingress port its header names: routed like a
    frame from that port, and punted with that port as its ingress port."""

    def runTest(self):
        frame = scenario.udp("10.1.7.7")
        route = scenario.route_for("10.1.7.7")
        tu.send_packet(self, scenario.CPU, cpu_header.packet_out(frame, 3))
        tu.verify_packet(self, scenario.routed(frame, route), route.port)
        lost = scenario.udp("172.16.0.2")
        tu.send_packet(self, scenario.CPU, cpu_header.packet_out(lost, 2))
        tu.verify_packet(self, cpu_header.packet_in(lost, 2, 2, self.reason["ipv4_lpm.no_route"]),
                         scenario.CPU)
        tu.verify_no_other_packets(self)


class PacketOutToEgress(L2l3Test):
    """A packet-out to an egress port leaves by that port as it is, whatever the tables
    would make of it: a frame no route covers (which the pipeline punts) out of port 3
    untouched, a 42-byte frame out of port 1 padded to 60 as a MAC sends it. One for port 16
    (beyond the pipeline's) and one for port 5 (no interface) leave nowhere: a packet-out
    sent after them is the next frame out."""

    def runTest(self):
        unrouted = scenario.udp("172.16.0.3")
        tu.send_packet(self, scenario.CPU, cpu_header.to_egress(unrouted, 3))
        tu.verify_packet(self, unrouted, 3)
        short = Ether(dst=scenario.HOST_MAC, src=scenario.ROUTER_MAC, type=0x9000) / Raw(bytes(28))
        tu.send_packet(self, scenario.CPU, cpu_header.to_egress(short, 1))
        tu.verify_packet(self, Ether(bytes(short) + bytes(60 - len(short))), 1)
        for port in (16, 5):
            tu.send_packet(self, scenario.CPU, cpu_header.to_egress(scenario.udp("10.1.7.11"), port))
        last = scenario.udp("10.1.7.12")
        tu.send_packet(self, scenario.CPU, cpu_header.to_egress(last, 2))
        self.assertEqual(self.next_frame(2), bytes(last))
        tu.verify_no_other_packets(self)


class CpuPortIgnoresOtherFrames(L2l3Test):
    """Frames on the CPU interface that are no packet-out (another EtherType, a header cut
    short, a packet-in, an ingress port beyond the pipeline's 16) do not enter; a packet-out
    sent after them is the next frame out."""

    def runTest(self):
        frame = scenario.udp("10.1.7.7")
        route = scenario.route_for("10.1.7.7")
        not_matcha = scenario.udp("10.1.7.8")
        short = Ether(dst=cpu_header.PACKET_IN_SRC, type=cpu_header.ETHERTYPE) / bytes([2, 0])
        packet_in = cpu_header.packet_in(scenario.udp("10.1.7.9"), 0, 0, 0)
        bad_port = cpu_header.packet_out(scenario.udp("10.1.7.10"), 16)
        for f in (not_matcha, short, packet_in, bad_port, cpu_header.packet_out(frame, 0)):
            tu.send_packet(self, scenario.CPU, f)
        self.assertEqual(self.next_frame(route.port), bytes(scenario.routed(frame, route)))
        tu.verify_no_other_packets(self)
