# SPDX-License-Identifier: Apache-2.0
"""Header formats, instances and the parse graph of the Matcha packet path.

Written from the protocol definitions (IEEE 802.3 / 802.1Q, RFC 791, RFC 8200,
RFC 768, RFC 9293, RFC 7348) and docs/packet-path.md. Nothing here is read from the
generator's output: the testbenches use this as the independent description of the
headers and compare the generated hardware against it.
"""

# Header types: size in bytes (fixed part) and fields as (name, bit offset, width),
# bit offsets counted from the most significant bit of the first byte (network order).
HEADER_TYPES = {
    "ethernet": (14, [("dst", 0, 48), ("src", 48, 48), ("etherType", 96, 16)]),
    "vlan": (4, [("pcp", 0, 3), ("dei", 3, 1), ("vid", 4, 12), ("etherType", 16, 16)]),
    "ipv4": (20, [
        ("version", 0, 4), ("ihl", 4, 4), ("dscp", 8, 6), ("ecn", 14, 2),
        ("totalLen", 16, 16), ("identification", 32, 16), ("flags", 48, 3),
        ("fragOffset", 51, 13), ("ttl", 64, 8), ("protocol", 72, 8),
        ("hdrChecksum", 80, 16), ("src", 96, 32), ("dst", 128, 32),
    ]),
    "ipv6": (40, [
        ("version", 0, 4), ("trafficClass", 4, 8), ("flowLabel", 12, 20),
        ("payloadLen", 32, 16), ("nextHeader", 48, 8), ("hopLimit", 56, 8),
        ("src", 64, 128), ("dst", 192, 128),
    ]),
    "udp": (8, [("srcPort", 0, 16), ("dstPort", 16, 16), ("length", 32, 16),
                ("checksum", 48, 16)]),
    "tcp": (20, [
        ("srcPort", 0, 16), ("dstPort", 16, 16), ("seqNo", 32, 32), ("ackNo", 64, 32),
        ("dataOffset", 96, 4), ("flags", 104, 8), ("window", 112, 16),
        ("checksum", 128, 16), ("urgentPtr", 144, 16),
    ]),
    "vxlan": (8, [("flags", 0, 8), ("vni", 32, 24)]),
}

# Parsed header instances, in instance order (also the order they appear in a frame).
INSTANCES = [
    ("eth", "ethernet"),
    ("vlan", "vlan"),
    ("vlan2", "vlan"),
    ("ipv4", "ipv4"),
    ("ipv6", "ipv6"),
    ("udp", "udp"),
    ("tcp", "tcp"),
    ("vxlan", "vxlan"),
    ("inner_eth", "ethernet"),
    ("inner_vlan", "vlan"),
    ("inner_vlan2", "vlan"),
    ("inner_ipv4", "ipv4"),
    ("inner_ipv6", "ipv6"),
    ("inner_udp", "udp"),
    ("inner_tcp", "tcp"),
]
INSTANCE_TYPE = dict(INSTANCES)

# Outer headers a VXLAN decapsulation removes (everything before inner_eth).
OUTER_INSTANCES = ["eth", "vlan", "vlan2", "ipv4", "ipv6", "udp", "tcp", "vxlan"]

# Fields the deparser writes back into the frame, per header type.
WRITABLE = {
    "ethernet": ["dst", "src"],
    "vlan": ["pcp", "dei", "vid"],
    "ipv4": ["dscp", "ecn", "ttl"],
    "ipv6": ["trafficClass", "hopLimit"],
}

# Push headers, in emission order.
PUSH_HEADERS = [("eth", "ethernet"), ("ipv4", "ipv4"), ("udp", "udp"), ("vxlan", "vxlan")]

ETHERTYPE_VLAN = 0x8100
ETHERTYPE_QINQ = 0x88A8  # IEEE 802.1ad service tag
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
IPPROTO_TCP = 6
IPPROTO_UDP = 17
VXLAN_PORT = 4789

# meta.parseError / meta.reason codes.
NO_ERROR = 0
RUNT = 1
TRUNCATED = 2
IPV4_IHL = 3
BAD_FRAME = 4
TOO_DEEP = 5
IP_VERSION = 6
OVERSIZE = 7
EMPTY = 8
TCP_OFFSET = 9  # TCP data offset below 5 (RFC 9293 3.1)
PARSE_ERRORS = {
    "RUNT": RUNT, "TRUNCATED": TRUNCATED, "IPV4_IHL": IPV4_IHL, "BAD_FRAME": BAD_FRAME,
    "TOO_DEEP": TOO_DEEP, "IP_VERSION": IP_VERSION, "OVERSIZE": OVERSIZE, "EMPTY": EMPTY,
    "TCP_OFFSET": TCP_OFFSET,
}
# Forwarding checks of a routed IP header (docs/pipeline.md, "Forwarding checks"): reason
# codes of the packet path's own, after the parse errors.
IPV4_OPTIONS = 10
IPV4_CHECKSUM = 11
IP_LENGTH = 12
TTL_EXPIRED = 13
# In the order an action makes them: the checksum is verified over the fixed part only, so
# a header with options goes to the host before it.
CHECK_REASONS = {
    "IPV4_OPTIONS": IPV4_OPTIONS, "IPV4_CHECKSUM": IPV4_CHECKSUM, "IP_LENGTH": IP_LENGTH,
    "TTL_EXPIRED": TTL_EXPIRED,
}
ERROR_NAMES = {v: k for k, v in PARSE_ERRORS.items()}
ERROR_NAMES[NO_ERROR] = "NONE"
DROP_CODES = {BAD_FRAME, OVERSIZE, EMPTY}

# Parameters of both generated configurations.
RUNT_BYTES = 60
MAX_FRAME = 9216
PORT_WIDTH = 4

META_FIELDS = [
    ("ingressPort", PORT_WIDTH), ("egressPort", PORT_WIDTH), ("drop", 1), ("punt", 1),
    ("reason", 8), ("parseError", 8), ("frameLen", 16), ("payloadOffset", 8), ("color", 2),
    ("learn", 1), ("sessionHit", 1), ("sessionReply", 1), ("sessionState", 3),
    ("sessionLearned", 1), ("sessionFailed", 1),
]


def header_size(htype):
    return HEADER_TYPES[htype][0]


def field_width(htype, field):
    for name, _, width in HEADER_TYPES[htype][1]:
        if name == field:
            return width
    raise KeyError(f"{htype}.{field}")


def next_instance(inst, fields):
    """Transition of the parse graph: the instance that follows `inst`, or None (accept)."""
    if inst in ("eth", "inner_eth"):
        pre = "inner_" if inst == "inner_eth" else ""
        return {
            ETHERTYPE_VLAN: pre + "vlan",
            ETHERTYPE_QINQ: pre + "vlan",
            ETHERTYPE_IPV4: pre + "ipv4",
            ETHERTYPE_IPV6: pre + "ipv6",
        }.get(fields["etherType"])
    if inst in ("vlan", "inner_vlan"):
        # The first tag (802.1ad S-tag or 802.1Q); an 802.1Q tag behind it is the second.
        pre = "inner_" if inst == "inner_vlan" else ""
        return {ETHERTYPE_VLAN: pre + "vlan2", ETHERTYPE_IPV4: pre + "ipv4",
                ETHERTYPE_IPV6: pre + "ipv6"}.get(fields["etherType"])
    if inst in ("vlan2", "inner_vlan2"):
        # A third tag is not parsed.
        pre = "inner_" if inst == "inner_vlan2" else ""
        return {ETHERTYPE_IPV4: pre + "ipv4", ETHERTYPE_IPV6: pre + "ipv6"}.get(
            fields["etherType"])
    if inst in ("ipv4", "inner_ipv4"):
        pre = "inner_" if inst == "inner_ipv4" else ""
        if fields["fragOffset"] != 0:
            return None
        return {IPPROTO_UDP: pre + "udp", IPPROTO_TCP: pre + "tcp"}.get(fields["protocol"])
    if inst in ("ipv6", "inner_ipv6"):
        pre = "inner_" if inst == "inner_ipv6" else ""
        return {IPPROTO_UDP: pre + "udp", IPPROTO_TCP: pre + "tcp"}.get(fields["nextHeader"])
    if inst == "udp":
        return "vxlan" if fields["dstPort"] == VXLAN_PORT else None
    if inst == "vxlan":
        return "inner_eth"
    return None  # tcp, inner_udp, inner_tcp: accept


def all_field_names():
    """Every PHV field name the model knows, with its width (for checking a layout)."""
    names = {}
    for inst, htype in INSTANCES:
        names[f"hdr.{inst}.valid"] = 1
        names[f"hdr.{inst}.offset"] = 8
        for fname, _, width in HEADER_TYPES[htype][1]:
            names[f"hdr.{inst}.{fname}"] = width
        if htype == "ipv4":
            for fname in WRITABLE["ipv4"]:
                names[f"hdr.{inst}.{fname}Orig"] = field_width("ipv4", fname)
            names[f"hdr.{inst}.checksumOk"] = 1
        if htype in ("ipv4", "ipv6"):
            names[f"hdr.{inst}.lengthOk"] = 1
    for inst, htype in PUSH_HEADERS:
        names[f"push.{inst}.valid"] = 1
        for fname, _, width in HEADER_TYPES[htype][1]:
            names[f"push.{inst}.{fname}"] = width
    for fname, width in META_FIELDS:
        names[f"meta.{fname}"] = width
    return names
