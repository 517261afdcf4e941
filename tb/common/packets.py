# SPDX-License-Identifier: Apache-2.0
"""Frame generators for the Matcha testbenches (built with scapy).

Every generator takes a `random.Random` so that a run is reproduced by its seed.
"""

from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP, IPOption_EOL
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

# UDP ports scapy dissects as VXLAN; random ports avoid them so that scapy's
# dissection agrees with the Matcha parse graph (which uses dstPort 4789 only).
SCAPY_VXLAN_PORTS = {4789, 4790, 6633, 8472, 48879}

# etherTypes / IP protocols outside the parse graph, used to end a stack.
OTHER_ETHERTYPES = [0x0806, 0x88B5, 0x88CC, 0x8847, 0x9000, 0x0600, 0xFFFF]
OTHER_IP_PROTOS = [1, 2, 47, 50, 89, 132, 253, 255, 0]
OTHER_IP6_NH = [58, 59, 132, 253]
VXLAN_DPORT = 4789

# Layer sequences the parse graph knows; the last layer is followed by the payload.
OUTER_STACKS = [
    ["eth"],
    ["eth", "vlan"],
    ["eth", "ipv4"],
    ["eth", "ipv4", "udp"],
    ["eth", "ipv4", "tcp"],
    ["eth", "vlan", "ipv4"],
    ["eth", "vlan", "ipv4", "udp"],
    ["eth", "vlan", "ipv4", "tcp"],
    ["eth", "ipv6"],
    ["eth", "ipv6", "udp"],
    ["eth", "ipv6", "tcp"],
    ["eth", "vlan", "ipv6"],
    ["eth", "vlan", "ipv6", "udp"],
    ["eth", "vlan", "ipv6", "tcp"],
    ["eth", "vlan", "vlan2"],
    ["eth", "vlan", "vlan2", "ipv4", "udp"],
    ["eth", "vlan", "vlan2", "ipv4", "tcp"],
    ["eth", "vlan", "vlan2", "ipv6", "udp"],
    ["eth", "vlan", "vlan2", "ipv6", "tcp"],
]
VXLAN_OUTER = [
    ["eth", "ipv4", "udp", "vxlan"],
    ["eth", "vlan", "ipv4", "udp", "vxlan"],
    ["eth", "ipv6", "udp", "vxlan"],
    ["eth", "vlan", "ipv6", "udp", "vxlan"],
    ["eth", "vlan", "vlan2", "ipv4", "udp", "vxlan"],
]
INNER_STACKS = [
    ["eth"],
    ["eth", "vlan"],
    ["eth", "ipv4"],
    ["eth", "ipv4", "udp"],
    ["eth", "ipv4", "tcp"],
    ["eth", "vlan", "ipv4", "tcp"],
    ["eth", "vlan", "ipv4", "udp"],
    ["eth", "ipv6"],
    ["eth", "ipv6", "udp"],
    ["eth", "ipv6", "tcp"],
    ["eth", "vlan", "ipv6", "udp"],
    ["eth", "vlan", "ipv6", "tcp"],
    ["eth", "vlan", "vlan2", "ipv4", "tcp"],
    ["eth", "vlan", "vlan2", "ipv6", "udp"],
]


def all_stacks():
    """Every header combination: plain stacks, then VXLAN outer x inner stacks."""
    stacks = [list(s) for s in OUTER_STACKS]
    for outer in VXLAN_OUTER:
        for inner in INNER_STACKS:
            stacks.append(outer + ["inner_" + h for h in inner])
    return stacks


def stack_name(stack):
    return "/".join(stack)


def rand_mac(rng):
    b = bytearray(rng.getrandbits(8) for _ in range(6))
    return ":".join(f"{x:02x}" for x in b)


def rand_ip4(rng):
    return ".".join(str(rng.randrange(256)) for _ in range(4))


def rand_ip6(rng):
    v = rng.getrandbits(128)
    return ":".join(f"{(v >> (112 - 16 * i)) & 0xFFFF:x}" for i in range(8))


def rand_port(rng):
    while True:
        p = rng.randrange(65536)
        if p not in SCAPY_VXLAN_PORTS:
            return p


def rand_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n)) if n < 64 else rng.randbytes(n)


def _layer(rng, kind, nxt, opts):
    """One scapy layer of type `kind` (without the inner_ prefix), followed by `nxt`."""
    if kind == "eth":
        kw = dict(dst=rand_mac(rng), src=rand_mac(rng))
        if nxt is None:
            kw["type"] = rng.choice(OTHER_ETHERTYPES)
        return Ether(**kw)
    if kind in ("vlan", "vlan2"):
        kw = dict(prio=rng.randrange(8), dei=rng.randrange(2), vlan=rng.randrange(4096))
        if nxt is None:
            kw["type"] = rng.choice(OTHER_ETHERTYPES)
        # The outer tag of a QinQ stack: an 802.1ad S-tag or, as some networks do, 802.1Q.
        if nxt == "vlan2" and rng.random() < 0.5:
            return Dot1AD(**kw)
        return Dot1Q(**kw)
    if kind == "ipv4":
        nopts = opts.get("ipv4_options")
        if nopts is None:
            nopts = rng.choice([0, 0, 0, 1, 2, 10]) if rng.random() < 0.5 else 0
        options = []
        if nopts:
            options = [IPOption_NOP()] * (4 * nopts - 1) + [IPOption_EOL()]
        frag = opts.get("frag", 0)
        flags = opts.get("ip_flags", rng.choice([0, 0, 2, 2, 1, 4, 3]))
        kw = dict(tos=rng.randrange(256), id=rng.randrange(65536), flags=flags, frag=frag,
                  ttl=rng.randrange(256), src=rand_ip4(rng), dst=rand_ip4(rng),
                  options=options)
        if nxt is None:
            kw["proto"] = rng.choice(OTHER_IP_PROTOS)
        if opts.get("bad_ip_checksum"):
            kw["chksum"] = rng.randrange(65536)
        return IP(**kw)
    if kind == "ipv6":
        kw = dict(tc=rng.randrange(256), fl=rng.randrange(1 << 20), hlim=rng.randrange(256),
                  src=rand_ip6(rng), dst=rand_ip6(rng))
        if nxt is None:
            kw["nh"] = rng.choice(OTHER_IP6_NH)
        return IPv6(**kw)
    if kind == "udp":
        kw = dict(sport=rand_port(rng), dport=VXLAN_DPORT if nxt == "vxlan" else rand_port(rng))
        if nxt == "vxlan":
            kw["sport"] = rng.choice([49152 + rng.randrange(16384), rand_port(rng)])
        return UDP(**kw)
    if kind == "tcp":
        nopt = opts.get("tcp_options")
        if nopt is None:
            nopt = rng.choice([0, 0, 0, 3, 10])
        return TCP(sport=rand_port(rng), dport=rand_port(rng), seq=rng.getrandbits(32),
                   ack=rng.getrandbits(32), flags=rng.randrange(256),
                   window=rng.randrange(65536), urgptr=rng.randrange(65536),
                   options=[("NOP", None)] * (4 * nopt))
    if kind == "vxlan":
        flags = rng.choice([0x08, 0x08, 0x08, 0x00, 0x48, 0x0A])
        return VXLAN(flags=flags, vni=rng.randrange(1 << 24))
    raise ValueError(kind)


def _eth():
    # Explicit addresses: scapy would otherwise resolve (and send) to find a dst MAC.
    return Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")


def _ip(**kw):
    return IP(src="192.0.2.1", dst="192.0.2.2", **kw)


def build_stack(rng, stack, payload_len=0, min_len=60, **opts):
    """scapy packet for a header stack (names as in all_stacks()), with `payload_len`
    random payload bytes, padded with payload to at least `min_len` bytes."""
    kinds = [h[6:] if h.startswith("inner_") else h for h in stack]
    pkt = None
    for i, kind in enumerate(kinds):
        nxt = kinds[i + 1] if i + 1 < len(kinds) else None
        layer = _layer(rng, kind, nxt, opts if not stack[i].startswith("inner_")
                       else opts.get("inner", {}))
        pkt = layer if pkt is None else pkt / layer
    hdr_len = len(pkt)
    payload_len = max(payload_len, min_len - hdr_len)
    if payload_len > 0:
        pkt = pkt / Raw(rand_bytes(rng, payload_len))
    return pkt


def frame_of(rng, stack, payload_len=0, min_len=60, **opts):
    return bytes(build_stack(rng, stack, payload_len, min_len, **opts))


def random_frame(rng, min_len=60, max_len=1518, stacks=None):
    """A random frame with a random known header stack and a length in [min_len, max_len]
    where the headers allow it (headers longer than max_len are kept whole)."""
    stacks = stacks or all_stacks()
    stack = rng.choice(stacks)
    target = rng.randint(min_len, max_len)
    hdr = bytes(build_stack(rng, stack, 0, 0))
    pad = max(0, target - len(hdr))
    return frame_of(rng, stack, pad, min_len)


def random_length_frame(rng, length, stacks=None):
    """A frame of exactly `length` bytes (headers cut if they do not fit)."""
    stacks = stacks or all_stacks()
    stack = rng.choice(stacks)
    f = frame_of(rng, stack, 0, length)
    return f[:length] if len(f) > length else f + rand_bytes(rng, length - len(f))


# ---------------------------------------------------------------------------------------
# Malformed frames: name -> (frame, parse kwargs). Each has a named reason in the docs.


# VXLAN over IPv6 with an inner IPv6 and a TCP header of 60 bytes: where its headers end.
DEEP_IPV6_TUNNEL_HEADERS = 14 + 40 + 8 + 8 + 14 + 40 + 60


def deep_ipv6_tunnel(rng, payload_len):
    """VXLAN over IPv6 carrying IPv6 and TCP with 40 bytes of options (the most a TCP header
    holds: MSS, SACK permitted, window scale, timestamps and two SACK blocks), then
    `payload_len` random bytes."""
    blocks = tuple(rng.getrandbits(32) for _ in range(4))
    options = [("MSS", 1460), ("SAckOK", b""), ("WScale", 7), ("NOP", None),
               ("Timestamp", (rng.getrandbits(32), rng.getrandbits(32))), ("NOP", None),
               ("NOP", None), ("SAck", blocks)]
    inner = (Ether(dst=rand_mac(rng), src=rand_mac(rng))
             / IPv6(src=rand_ip6(rng), dst=rand_ip6(rng), hlim=64)
             / TCP(sport=rand_port(rng), dport=rand_port(rng), seq=rng.getrandbits(32),
                   ack=rng.getrandbits(32), flags="PA", options=options))
    pkt = (Ether(dst=rand_mac(rng), src=rand_mac(rng))
           / IPv6(src=rand_ip6(rng), dst=rand_ip6(rng), hlim=64)
           / UDP(sport=49152 + rng.randrange(16384), dport=VXLAN_DPORT)
           / VXLAN(flags=0x08, vni=rng.randrange(1 << 24)) / inner)
    assert len(pkt) == DEEP_IPV6_TUNNEL_HEADERS
    return bytes(pkt / Raw(rand_bytes(rng, payload_len)))


def qinq_frames(rng):
    """Named frames with two VLAN tags (an 802.1ad S-tag then an 802.1Q tag, and two
    802.1Q tags) in front of IPv4/UDP, IPv6/TCP, and inside VXLAN."""
    tags = {"8021ad_8021q": lambda: Dot1AD(prio=5, vlan=100) / Dot1Q(prio=2, dei=1, vlan=7),
            "8021q_8021q": lambda: Dot1Q(vlan=200) / Dot1Q(prio=7, vlan=4095)}
    frames = {}
    for name, tag in tags.items():
        frames[f"{name}_ipv4_udp"] = bytes(
            _eth() / tag() / _ip() / UDP(sport=rand_port(rng), dport=53) / Raw(bytes(30)))
        frames[f"{name}_ipv6_tcp"] = bytes(
            _eth() / tag() / IPv6(src=rand_ip6(rng), dst=rand_ip6(rng))
            / TCP(sport=rand_port(rng), dport=443) / Raw(bytes(30)))
        frames[f"vxlan_inner_{name}"] = bytes(
            _eth() / _ip() / UDP(sport=rand_port(rng), dport=VXLAN_DPORT) / VXLAN(vni=9)
            / _eth() / tag() / _ip() / TCP(sport=1, dport=2) / Raw(bytes(10)))
    return frames


def fragment_frames(rng):
    """IPv4 fragments (first and later) and an IPv6 fragment extension header."""
    out = {}
    out["ipv4_first_fragment_udp"] = frame_of(
        rng, ["eth", "ipv4", "udp"], 100, ip_flags=1, frag=0)
    out["ipv4_later_fragment"] = bytes(
        Ether(dst=rand_mac(rng), src=rand_mac(rng))
        / IP(flags=1, frag=185, proto=17, src=rand_ip4(rng), dst=rand_ip4(rng))
        / Raw(rand_bytes(rng, 80)))
    out["ipv4_last_fragment_tcp_proto"] = bytes(
        _eth() / _ip(flags=0, frag=1, proto=6) / Raw(rand_bytes(rng, 60)))
    out["ipv6_fragment_ext"] = bytes(
        _eth() / IPv6(src=rand_ip6(rng), dst=rand_ip6(rng)) / IPv6ExtHdrFragment(nh=17)
        / UDP(sport=1000, dport=2000) / Raw(rand_bytes(rng, 40)))
    out["vxlan_inner_ipv4_fragment"] = frame_of(
        rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_ipv4"], 40,
        ipv4_options=0, inner={"frag": 100, "ip_flags": 1, "ipv4_options": 0})
    return out


def with_byte(frame, index, value):
    b = bytearray(frame)
    b[index] = value
    return bytes(b)


def malformed_cases(rng):
    """Named adversarial frames: name -> (frame, dict(bad_frame=..)).

    The expected result of each comes from the reference model; the names say what is
    wrong with the frame.
    """
    cases = {}
    udp4 = frame_of(rng, ["eth", "ipv4", "udp"], 30)
    tcp6 = frame_of(rng, ["eth", "ipv6", "tcp"], 30, tcp_options=0)
    vx = frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_ipv4",
                        "inner_tcp"], 30, ipv4_options=0, inner={"tcp_options": 0})

    cases["runt_59"] = (udp4[:59], {})
    cases["runt_1_byte"] = (udp4[:1], {})
    cases["runt_13_bytes"] = (udp4[:13], {})
    cases["runt_14_bytes_eth_only"] = (udp4[:14], {})
    cases["exactly_60_bytes"] = (udp4[:60], {})
    # Truncated at each header of the VXLAN stack: cut one byte short of its end.
    ends = {"eth": 14, "ipv4": 34, "udp": 42, "vxlan": 50, "inner_eth": 64,
            "inner_ipv4": 84, "inner_tcp": 104}
    for name, end in ends.items():
        cases[f"truncated_in_{name}"] = (vx[:end - 1], {})
        cases[f"cut_after_{name}"] = (vx[:end], {})
    # IPv6 + TCP: truncated in the TCP header with a frame >= 60 bytes.
    cases["truncated_in_tcp_after_ipv6"] = (tcp6[:73], {})
    cases["truncated_in_ipv6"] = (tcp6[:53], {})
    # IPv4 options running past the frame end.
    opt = frame_of(rng, ["eth", "ipv4", "tcp"], 0, ipv4_options=10)
    cases["truncated_in_ipv4_options"] = (opt[:14 + 60 - 1] + b"", {})
    cases["ipv4_ihl_15_past_frame_end"] = (with_byte(udp4[:72], 14, 0x4F), {})
    # TCP options running past the frame end, and data offsets below the fixed part.
    topt = frame_of(rng, ["eth", "ipv4", "tcp"], 0, ipv4_options=0, tcp_options=10)
    cases["truncated_in_tcp_options"] = (topt[:14 + 20 + 60 - 1], {})
    for data_offset in (0, 4):
        cases[f"tcp_data_offset_{data_offset}"] = (
            with_byte(tcp6, 14 + 40 + 12, data_offset << 4 | (tcp6[14 + 40 + 12] & 0x0F)), {})
    for ihl in range(5):
        cases[f"ipv4_ihl_{ihl}"] = (with_byte(udp4, 14, 0x40 | ihl), {})
    cases["ipv4_ihl_4_version_6"] = (with_byte(udp4, 14, 0x64), {})
    for version in (0, 5, 6, 15):
        cases[f"ipv4_version_{version}"] = (with_byte(udp4, 14, (version << 4) | 5), {})
    for version in (0, 4, 7, 15):
        cases[f"ipv6_version_{version}"] = (
            with_byte(tcp6, 14, (version << 4) | (tcp6[14] & 0x0F)), {})
    cases["inner_ipv4_version_6"] = (with_byte(vx, 64, 0x65), {})
    cases["inner_ipv4_ihl_3"] = (with_byte(vx, 64, 0x43), {})
    cases["bad_frame"] = (udp4, {"bad_frame": True})
    cases["bad_frame_runt"] = (udp4[:20], {"bad_frame": True})
    # Too deep: a header the graph reaches crosses the 128-byte window.
    deep6 = frame_of(rng, ["eth", "vlan", "ipv6", "udp", "vxlan", "inner_eth", "inner_vlan",
                           "inner_ipv6", "inner_tcp"], 40)
    cases["too_deep_inner_ipv6"] = (deep6, {})
    deep4 = frame_of(rng, ["eth", "vlan", "ipv6", "udp", "vxlan", "inner_eth", "inner_vlan",
                           "inner_ipv4", "inner_tcp"], 40, inner={"ipv4_options": 10})
    cases["too_deep_inner_ipv4_options"] = (deep4, {})
    exact = frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_vlan",
                           "inner_ipv6", "inner_tcp"], 40, ipv4_options=0,
                     inner={"tcp_options": 0})
    cases["headers_end_exactly_at_window"] = (exact, {})
    past = frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_vlan",
                          "inner_ipv6", "inner_tcp"], 40, ipv4_options=0,
                    inner={"tcp_options": 1})
    cases["too_deep_in_inner_tcp_options"] = (past, {})
    deep_tcp = frame_of(rng, ["eth", "vlan", "ipv4", "udp", "vxlan", "inner_eth",
                              "inner_vlan", "inner_ipv4", "inner_tcp"], 40,
                        ipv4_options=5, inner={"ipv4_options": 0})
    cases["too_deep_inner_tcp"] = (deep_tcp, {})
    # Too deep for the 192-byte window of the 512-bit builds too: its inner TCP header ends
    # at byte 212.
    deepest = frame_of(rng, ["eth", "vlan", "ipv6", "udp", "vxlan", "inner_eth", "inner_vlan",
                             "inner_ipv4", "inner_tcp"], 40,
                       inner={"ipv4_options": 10, "tcp_options": 10})
    cases["too_deep_past_192_bytes"] = (deepest, {})
    # Not in the parse graph: these must simply stop parsing (accept), no error.
    cases["third_tag_stops_at_vlan2"] = (bytes(
        _eth() / Dot1AD(vlan=10) / Dot1Q(vlan=20) / Dot1Q(vlan=30) / _ip() / UDP()
        / Raw(bytes(40))), {})
    cases["qinq_s_tag_inside_stops_at_vlan"] = (bytes(
        _eth() / Dot1Q(vlan=10) / Dot1AD(vlan=20) / _ip() / UDP() / Raw(bytes(40))), {})
    cases["udp_srcport_4789_not_vxlan"] = (bytes(
        _eth() / _ip() / UDP(sport=4789, dport=1234) / Raw(bytes(40))), {})
    cases["udp_dstport_8472_not_vxlan"] = (bytes(
        _eth() / _ip() / UDP(sport=1, dport=8472) / Raw(bytes(40))), {})
    cases["vxlan_port_in_inner_udp_not_parsed"] = (bytes(
        _eth() / _ip() / UDP(sport=1, dport=4789) / VXLAN(flags=0x08, vni=7) / _eth()
        / _ip() / UDP(sport=2, dport=4789) / VXLAN(flags=0x08, vni=8) / Raw(bytes(30))), {})
    cases["vxlan_only_inner_eth_truncated"] = (bytes(
        _eth() / _ip() / UDP(sport=1, dport=4789) / VXLAN(flags=0x08, vni=7)
        / Raw(bytes(10))), {})
    cases["ipv4_later_fragment_no_l4"] = (fragment_frames(rng)["ipv4_later_fragment"], {})
    return cases


def ipv4_checksum_zero_after_ttl(rng, new_ttl):
    """An eth/ipv4/udp frame whose IPv4 header checksum becomes 0x0000 when its TTL is
    changed to `new_ttl` (the identification field is chosen to make it so). Returns
    the frame; its received checksum is correct."""
    from tb.model import internet_checksum, ones_sum
    frame = bytearray(frame_of(rng, ["eth", "ipv4", "udp"], 20, ipv4_options=0))
    hdr = bytearray(frame[14:34])
    old_ttl = hdr[8]
    if old_ttl == new_ttl:
        old_ttl = (new_ttl + 1) & 0xFF
    hdr[8] = new_ttl
    hdr[4:6] = b"\x00\x00"
    hdr[10:12] = b"\x00\x00"
    ident = 0xFFFF - ones_sum(hdr)          # other words + ident sum to 0xFFFF
    hdr[4:6] = ident.to_bytes(2, "big")
    hdr[8] = old_ttl
    hdr[10:12] = internet_checksum(hdr).to_bytes(2, "big")
    frame[14:34] = hdr
    return bytes(frame)
