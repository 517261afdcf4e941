# SPDX-License-Identifier: Apache-2.0
"""The tables the live tests load into the built-in L2/L3 program (docs/pipeline.md) and
what they mean for a frame, written from that page: the matcha-ctl lines that load them,
and the frame a route makes of a frame (the route's MACs, TTL − 1, the header checksum
computed anew by scapy), found by a longest-prefix search over the routes here.

Both sides use it: the pytest entry loads `tables_text()` through matcha-ctl, the PTF
tests (ptftests/l2l3.py) build the frames they expect from the same entries.
"""

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from tb.model.program import Program

REPO = Path(__file__).resolve().parents[2]
# The layout of the simulator the tests run: tb/sim's w64 build of the built-in program.
LAYOUT = REPO / "build" / "rtl" / "w64" / "layout.json"

# Ingress and egress ports on veth pairs sim<N> (the simulator's end) / host<N> (the
# test's), and the CPU port on simcpu / hostcpu, PTF's port CPU (sim/netns.sh makes them).
PORTS = (0, 1, 2, 3)
CPU = 64

# Where the test's hosts send routed frames: no l2_fwd entry, so l2_fwd's default (no_op)
# leaves the egress port to the routes.
ROUTER_MAC = "00:00:5e:00:01:01"
HOST_MAC = "00:00:5e:00:02:02"


@dataclass(frozen=True)
class Route:
    prefix: str
    port: int
    dmac: str
    smac: str

    @property
    def network(self):
        return ipaddress.ip_network(self.prefix)


ROUTES = (
    Route("10.1.0.0/16", 2, "02:00:00:00:02:02", "02:00:00:00:02:01"),
    Route("10.1.2.0/24", 3, "02:00:00:00:03:03", "02:00:00:00:03:01"),  # inside the /16
)
# acl rules: source 10.9.0.0/16 to TCP port 22 denied; UDP to 10.1.0.53 port 53 to the host.
DENIED_SRC_NET = "10.9.0.0/16"
DENIED_TCP_PORT = 22
HOST_DNS = "10.1.0.53"


def tables_text():
    """The entries above as matcha-ctl commands (BMv2 simple_switch_CLI syntax)."""
    lines = [f"table_add ipv4_lpm route {r.prefix} => {r.port} {r.dmac} {r.smac}"
             for r in ROUTES]
    net = ipaddress.ip_network(DENIED_SRC_NET)
    lines.append(f"table_add acl deny {net.network_address}&&&{net.netmask} 0&&&0 6&&&0xff "
                 f"0&&&0 {DENIED_TCP_PORT}&&&0xffff => 10")
    lines.append(f"table_add acl to_host 0&&&0 {HOST_DNS}&&&0xffffffff 17&&&0xff 0&&&0 "
                 f"53&&&0xffff => 5")
    return "\n".join(lines) + "\n"


def route_for(dst):
    """The longest prefix of ROUTES covering `dst`, or None."""
    covering = [r for r in ROUTES if ipaddress.ip_address(dst) in r.network]
    return max(covering, key=lambda r: r.network.prefixlen, default=None)


def routed(frame, route):
    """`frame` (a scapy Ether / IP frame) as route() leaves it: Ethernet destination and
    source from the route, TTL one less, the IPv4 checksum over the new header."""
    out = frame.copy()
    out[Ether].dst = route.dmac
    out[Ether].src = route.smac
    out[IP].ttl -= 1
    del out[IP].chksum
    return Ether(bytes(out))


def counting(n):
    """n payload bytes counting up from 0, modulo 256."""
    return bytes(i % 256 for i in range(n))


def udp(dst, src="192.0.2.1", dport=4000, payload=64):
    """A UDP frame to the router, longer than the Ethernet minimum (no padding)."""
    return (Ether(dst=ROUTER_MAC, src=HOST_MAC) / IP(src=src, dst=dst, ttl=64)
            / UDP(sport=5000, dport=dport) / Raw(counting(payload)))


def tcp(dst, src="192.0.2.1", dport=80, payload=64):
    return (Ether(dst=ROUTER_MAC, src=HOST_MAC) / IP(src=src, dst=dst, ttl=64)
            / TCP(sport=5000, dport=dport, flags="S") / Raw(counting(payload)))


def reasons(layout=LAYOUT):
    """{"table.action": reason code} of the actions that drop or punt, from the layout's
    program (the generator's numbers)."""
    program = Program(str(layout))
    return {f"{t.name}.{a.name}": op.reason
            for t in program.tables for a in t.actions.values() for op in a.ops
            if op.reason is not None}
