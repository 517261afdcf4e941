# SPDX-License-Identifier: Apache-2.0
"""What scapy's own dissection says about a frame, in PHV terms.

Used to cross-check the reference model: scapy decodes every field, this module only
walks scapy's layers along the Matcha parse graph (docs/packet-path.md) and stops where
a header would not fit in the frame or the header window, or is not a valid IP header.
"""

import ipaddress

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Dot3, Ether
from scapy.layers.vxlan import VXLAN

from tb.model import INSTANCES, valid_instances


def mac_int(s):
    """A MAC address ("02:00:00:00:01:01") as an int."""
    return int(s.replace(":", ""), 16)


def _ip(s):
    return int(ipaddress.ip_address(s))


def _fields(layer):
    if isinstance(layer, Ether):
        return {"dst": mac_int(layer.dst), "src": mac_int(layer.src), "etherType": layer.type}
    if isinstance(layer, Dot3):
        return {"dst": mac_int(layer.dst), "src": mac_int(layer.src), "etherType": layer.len}
    if isinstance(layer, Dot1Q):
        return {"pcp": layer.prio, "dei": layer.dei, "vid": layer.vlan,
                "etherType": layer.type}
    if isinstance(layer, IP):
        return {"version": layer.version, "ihl": layer.ihl, "dscp": layer.tos >> 2,
                "ecn": layer.tos & 3, "totalLen": layer.len, "identification": layer.id,
                "flags": int(layer.flags), "fragOffset": layer.frag, "ttl": layer.ttl,
                "protocol": layer.proto, "hdrChecksum": layer.chksum,
                "src": _ip(layer.src), "dst": _ip(layer.dst)}
    if isinstance(layer, IPv6):
        return {"version": layer.version, "trafficClass": layer.tc, "flowLabel": layer.fl,
                "payloadLen": layer.plen, "nextHeader": layer.nh, "hopLimit": layer.hlim,
                "src": _ip(layer.src), "dst": _ip(layer.dst)}
    if isinstance(layer, UDP):
        return {"srcPort": layer.sport, "dstPort": layer.dport, "length": layer.len,
                "checksum": layer.chksum}
    if isinstance(layer, TCP):
        # scapy's flags field is 9 bits (NS included); the Matcha field is the low 8.
        return {"srcPort": layer.sport, "dstPort": layer.dport, "seqNo": layer.seq,
                "ackNo": layer.ack, "dataOffset": layer.dataofs,
                "flags": int(layer.flags) & 0xFF, "window": layer.window,
                "checksum": layer.chksum, "urgentPtr": layer.urgptr}
    if isinstance(layer, VXLAN):
        return {"flags": int(layer.flags), "vni": layer.vni}
    raise TypeError(type(layer).__name__)


def _size(layer):
    if isinstance(layer, (Ether, Dot3)):
        return 14
    if isinstance(layer, Dot1Q):
        return 4
    if isinstance(layer, IP):
        return 20
    if isinstance(layer, IPv6):
        return 40
    if isinstance(layer, UDP):
        return 8
    if isinstance(layer, TCP):
        return 20
    if isinstance(layer, VXLAN):
        return 8
    raise TypeError(type(layer).__name__)


def _next(inst, layer):
    """Next instance from scapy's choice of the next layer, restricted to the graph."""
    pre = "inner_" if inst.startswith("inner_") else ""
    base = inst[len(pre):]
    nxt = layer.payload
    if base == "eth" and isinstance(layer, Ether):
        # Dot1AD (0x88A8) is a Dot1Q in scapy.
        if isinstance(nxt, Dot1Q) and layer.type in (0x8100, 0x88A8):
            return pre + "vlan", nxt
        if isinstance(nxt, IP) and layer.type == 0x0800:
            return pre + "ipv4", nxt
        if isinstance(nxt, IPv6) and layer.type == 0x86DD:
            return pre + "ipv6", nxt
    if base == "vlan" and isinstance(nxt, Dot1Q) and layer.type == 0x8100:
        return pre + "vlan2", nxt
    if base in ("vlan", "vlan2"):
        if isinstance(nxt, IP) and layer.type == 0x0800:
            return pre + "ipv4", nxt
        if isinstance(nxt, IPv6) and layer.type == 0x86DD:
            return pre + "ipv6", nxt
    if base in ("ipv4", "ipv6"):
        if isinstance(nxt, UDP):
            return pre + "udp", nxt
        if isinstance(nxt, TCP):
            return pre + "tcp", nxt
    if inst == "udp" and isinstance(nxt, VXLAN) and layer.dport == 4789:
        return "vxlan", nxt
    if inst == "vxlan" and isinstance(nxt, (Ether, Dot3)):
        return "inner_eth", nxt
    return None, None


def scapy_headers(frame, header_bytes):
    """{instance: (offset, fields)} for the headers the parser should mark valid,
    according to scapy's dissection of `frame`."""
    pkt = Ether(bytes(frame)) if len(frame) >= 14 else None
    out = {}
    if pkt is None:
        return out
    limit = min(len(frame), header_bytes)
    inst, layer, offset = "eth", pkt, 0
    while inst is not None:
        size = _size(layer)
        if offset + size > limit:
            break
        fields = _fields(layer)
        if isinstance(layer, IP):
            if fields["version"] != 4 or fields["ihl"] < 5:
                break
            size = fields["ihl"] * 4
            if offset + size > limit:
                break
        if isinstance(layer, IPv6) and fields["version"] != 6:
            break
        if isinstance(layer, TCP):
            if fields["dataOffset"] < 5:
                break
            size = fields["dataOffset"] * 4
            if offset + size > limit:
                break
        out[inst] = (offset, fields)
        offset += size
        inst, layer = _next(inst, layer)
    return out


def assert_model_matches_scapy(frame, phv, header_bytes):
    """The model's PHV for `frame` marks valid the headers scapy finds, at scapy's offsets,
    with scapy's field values."""
    want = scapy_headers(frame, header_bytes)
    got = valid_instances(phv)
    assert got == [i for i, _ in INSTANCES if i in want], \
        f"valid headers: model {got}, scapy {list(want)}"
    for inst, (offset, fields) in want.items():
        assert phv[f"hdr.{inst}.offset"] == offset, f"{inst}.offset"
        for name, value in fields.items():
            assert phv[f"hdr.{inst}.{name}"] == value, \
                f"hdr.{inst}.{name}: model {phv[f'hdr.{inst}.{name}']:#x}, scapy {value:#x}"
