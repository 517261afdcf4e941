# SPDX-License-Identifier: Apache-2.0
"""The CPU port's encapsulation of matcha-sim as a scapy layer, written from its table in
sim/README.md ("The CPU port"): an Ethernet header with EtherType 0x88B5, then type,
ingress port, egress port and reason, a byte each, then the frame. Frames read off the CPU
interface dissect as Ether / MatchaCpu / Ether / ...; packet_out() and to_egress() build what
a controller writes to it."""

from scapy.fields import ByteEnumField, ByteField, XByteField
from scapy.layers.l2 import Ether
from scapy.packet import Packet, bind_layers

ETHERTYPE = 0x88B5
PACKET_IN, PACKET_OUT, TO_EGRESS = 1, 2, 3
# The outer addresses of a packet-in; the simulator takes a packet-out whatever its own.
PACKET_IN_SRC = "02:00:00:00:00:00"
PACKET_IN_DST = "ff:ff:ff:ff:ff:ff"


class MatchaCpu(Packet):
    name = "MatchaCpu"
    fields_desc = [
        ByteEnumField("type", PACKET_IN, {PACKET_IN: "packet_in", PACKET_OUT: "packet_out",
                                          TO_EGRESS: "to_egress"}),
        ByteField("ingress_port", 0),
        ByteField("egress_port", 0),
        XByteField("reason", 0),
    ]


bind_layers(Ether, MatchaCpu, type=ETHERTYPE)
bind_layers(MatchaCpu, Ether)


def packet_in(frame, ingress_port, egress_port, reason):
    """What the simulator sends on the CPU interface for `frame` punted with `reason`."""
    return (Ether(dst=PACKET_IN_DST, src=PACKET_IN_SRC, type=ETHERTYPE)
            / MatchaCpu(type=PACKET_IN, ingress_port=ingress_port, egress_port=egress_port,
                        reason=reason)
            / frame)


def packet_out(frame, ingress_port, src="02:00:00:00:00:fe"):
    """`frame` to enter the pipeline on `ingress_port`, as written to the CPU interface."""
    return (Ether(dst=PACKET_IN_SRC, src=src, type=ETHERTYPE)
            / MatchaCpu(type=PACKET_OUT, ingress_port=ingress_port)
            / frame)


def to_egress(frame, egress_port, src="02:00:00:00:00:fe"):
    """`frame` to leave by `egress_port` as it is, as written to the CPU interface."""
    return (Ether(dst=PACKET_IN_SRC, src=src, type=ETHERTYPE)
            / MatchaCpu(type=TO_EGRESS, egress_port=egress_port)
            / frame)
