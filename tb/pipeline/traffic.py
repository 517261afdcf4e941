# SPDX-License-Identifier: Apache-2.0
"""Random tables and frames for the built-in L2/L3 program.

Tables are generated as lists of intended changes (the driver may refuse some, e.g. an LPM
table already holding `size` prefixes; the caller skips those). Frames are biased towards the tables:
destination MACs of L2 entries, IPv4 destinations inside routed prefixes, 5-tuples inside
ACL rules, with a share of frames that miss everything, non-IPv4 frames, VLAN and VXLAN
stacks, IPv4 fragments and options, TTLs 0, 1 and 255, malformed frames and bad_frame.
Everything takes a random.Random so a run repeats from its seed.
"""

import ipaddress

from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP, IPOption_EOL
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from tb.common import packets
from tb.pipeline.l2l3 import ACL_PARTS, acl_rule, range_to_masks


def mac_str(v):
    return ":".join(f"{(v >> (40 - 8 * i)) & 0xFF:02x}" for i in range(6))


def routed_by_scapy(frame, dmac, smac):
    """The frame routed as scapy builds it: MACs, TTL - 1 (mod 256), checksum recomputed."""
    pkt = Ether(frame)
    pkt[Ether].dst = mac_str(dmac)
    pkt[Ether].src = mac_str(smac)
    pkt[IP].ttl = (pkt[IP].ttl - 1) % 256
    del pkt[IP].chksum
    return bytes(pkt)


def ip_str(v):
    return str(ipaddress.IPv4Address(v))


def ip_int(s):
    return int(ipaddress.IPv4Address(s))


def truncate(value, length, width=32):
    return value >> (width - length) << (width - length) if length < width else value


def split_key(key):
    """ACL key -> {part: value}."""
    out = {}
    shift = sum(w for _, w in ACL_PARTS)
    for name, width in ACL_PARTS:
        shift -= width
        out[name] = (key >> shift) & ((1 << width) - 1)
    return out


# ---------------------------------------------------------------------------- tables


def random_route_data(rng, lpm):
    return lpm.data("route", port=rng.randrange(16), dmac=rng.getrandbits(48),
                    smac=rng.getrandbits(48))


def random_l2(rng, l2, n):
    """[(key,), action, data] for n distinct random MACs."""
    out, seen = [], set()
    while len(out) < n:
        mac = rng.getrandbits(48)
        if mac in seen:
            continue
        seen.add(mac)
        action = rng.choices(["forward", "drop", "no_op"], [6, 2, 2])[0]
        data = l2.data("forward", port=rng.randrange(16)) if action == "forward" else 0
        out.append(((mac,), action, data))
    return out


def random_prefixes(rng, n, default_route=True):
    """n distinct (prefix, length): some roots, nested children inside them, a few
    unrelated ones; /0 with probability 1/2 when `default_route`."""
    out = []
    seen = set()

    def add(p, ln):
        p = truncate(p, ln)
        if (p, ln) not in seen:
            seen.add((p, ln))
            out.append((p, ln))

    if default_route and rng.random() < 0.5:
        add(0, 0)
    roots = [(rng.getrandbits(32), rng.choice([8, 12, 16])) for _ in range(max(1, n // 6))]
    for p, ln in roots:
        add(p, ln)
    while len(out) < n:
        r = rng.random()
        if r < 0.75:
            base, bl = rng.choice(out)
            ln = min(32, bl + rng.choice([1, 4, 8, 8, 9, 16, 24]))
            add(base | (rng.getrandbits(32) & ((1 << (32 - bl)) - 1) if bl < 32 else 0), ln)
        else:
            add(rng.getrandbits(32), rng.choice([1, 7, 20, 24, 31, 32]))
    return out


def random_routes(rng, lpm, n, default_route=True):
    out = []
    for p, ln in random_prefixes(rng, n, default_route):
        action = rng.choices(["route", "drop", "no_route"], [8, 1, 1])[0]
        data = random_route_data(rng, lpm) if action == "route" else 0
        out.append(((p, ln), action, data))
    return out


def random_acl(rng, acl, max_entries, prefixes=(), ranges=range_to_masks):
    """Rules [(value, mask, priority), action, 0] of random shapes: source and/or
    destination prefixes (often routed ones), a protocol, a port range expanded into
    value/mask pairs (`ranges(lo, hi)`), priorities 0..7 with ties. At most max_entries."""
    out, seen = [], set()
    attempts = 0
    while len(out) < max_entries and attempts < 10 * max_entries:
        attempts += 1
        parts = {}
        if rng.random() < 0.5:
            if prefixes and rng.random() < 0.6:
                p, ln = rng.choice(list(prefixes))
                parts["dst"] = (p, ln)
            else:
                parts["dst"] = (rng.getrandbits(32), rng.choice([8, 16, 24, 32]))
        if rng.random() < 0.4:
            parts["src"] = (rng.getrandbits(32), rng.choice([0, 8, 16, 24, 32]))
        proto = rng.choice([None, 6, 17, 17, 1])
        if proto is not None:
            parts["protocol"] = proto
        port_field = rng.choice(["srcPort", "dstPort"])
        pairs = [None]
        if proto in (6, 17) and rng.random() < 0.6:
            lo = rng.choice([0, 22, 53, 80, 443, 1000, 1024, rng.randrange(65536)])
            hi = min(65535, lo + rng.choice([0, 0, 1, 7, 100, 1023, 5000]))
            pairs = ranges(lo, hi)
        if len(out) + len(pairs) > max_entries:
            continue
        priority = rng.randrange(8)
        action = rng.choices(["permit", "deny", "to_host"], [3, 3, 2])[0]
        for pair in pairs:
            if pair is not None:
                parts[port_field] = {"value": pair[0], "mask": pair[1]}
            value, mask = acl_rule(**parts)
            if (value, mask, priority) in seen:
                continue
            seen.add((value, mask, priority))
            out.append(((value, mask, priority), action, 0))
    return out


# ---------------------------------------------------------------------------- frames


def build_ipv4(rng, *, eth_dst, src, dst, proto, sport=None, dport=None, ttl=None,
               vlan=False, options=None, frag=0, length=None, eth_src=None):
    """An Ethernet (+ VLAN) + IPv4 frame; TCP or UDP when proto is 6 or 17 and the frame
    is not a later fragment, else a raw payload. Checksums as scapy computes them."""
    if ttl is None:
        ttl = rng.choice([0, 1, 2, 64, 128, 255, rng.randrange(256)])
    if options is None:
        options = rng.choice([0, 0, 0, 0, 1, 3])
    opts = [IPOption_NOP()] * (4 * options - 1) + [IPOption_EOL()] if options else []
    eth = Ether(dst=mac_str(eth_dst), src=mac_str(eth_src if eth_src is not None
                                                  else rng.getrandbits(48)))
    pkt = eth / Dot1Q(vlan=rng.randrange(4096), prio=rng.randrange(8)) if vlan else eth
    ip = IP(src=ip_str(src), dst=ip_str(dst), proto=proto, ttl=ttl, id=rng.randrange(65536),
            tos=rng.randrange(256), flags=0 if frag else rng.choice([0, 2]), frag=frag,
            options=opts)
    pkt = pkt / ip
    if frag == 0 and proto == 6:
        pkt = pkt / TCP(sport=sport if sport is not None else packets.rand_port(rng),
                        dport=dport if dport is not None else packets.rand_port(rng),
                        flags=rng.randrange(256))
    elif frag == 0 and proto == 17:
        sp = sport if sport is not None else packets.rand_port(rng)
        dp = dport if dport is not None else packets.rand_port(rng)
        pkt = pkt / UDP(sport=sp, dport=dp)
    hdr = len(pkt)
    if length is None:
        length = rng.choice([60, 64, rng.randint(60, 200), rng.randint(60, 600),
                             rng.randint(60, 1518)])
    pkt = pkt / Raw(packets.rand_bytes(rng, max(0, length - hdr)))
    return bytes(pkt)


class FrameMaker:
    """Random frames biased towards the entries of a Program's tables (l2_fwd, ipv4_lpm,
    acl), read when each frame is made."""

    def __init__(self, rng, program, malformed=True):
        self.rng = rng
        self.p = program
        self.malformed = list(packets.malformed_cases(rng).items()) if malformed else []
        self.n = 0

    def _mac(self):
        rng = self.rng
        keys = self.p["l2_fwd"].entries()
        if keys and rng.random() < 0.6:
            return rng.choice(keys)
        return rng.choice([rng.getrandbits(48), 0xFFFFFFFFFFFF])

    def _dst(self):
        rng = self.rng
        prefixes = self.p["ipv4_lpm"].entries()
        if prefixes and rng.random() < 0.8:
            p, ln = rng.choice(prefixes)
            return p | (rng.getrandbits(32) & ((1 << (32 - ln)) - 1))
        return rng.getrandbits(32)

    def _tuple(self):
        """(src, dst, proto, sport, dport) inside a random ACL rule, or random."""
        rng = self.rng
        rules = self.p["acl"].entries()
        dst = self._dst()
        if rules and rng.random() < 0.5:
            value, mask, _ = rng.choice(rules)
            rand = split_key(rng.getrandbits(104))
            rand["dst"] = dst
            rand["protocol"] = rng.choice([6, 17, 6, 17, 1, 47])
            rand_key = 0
            for name, width in ACL_PARTS:
                rand_key = (rand_key << width) | rand[name]
            k = split_key(value | (rand_key & ~mask))
            return k["src"], k["dst"], k["protocol"], k["srcPort"], k["dstPort"]
        return (rng.getrandbits(32), dst, rng.choice([6, 17, 6, 17, 1, 50]),
                packets.rand_port(rng), packets.rand_port(rng))

    def ipv4(self, **kw):
        rng = self.rng
        src, dst, proto, sport, dport = self._tuple()
        frag = rng.randrange(1, 200) if rng.random() < 0.05 else 0
        args = dict(eth_dst=self._mac(), src=src, dst=dst, proto=proto, sport=sport,
                    dport=dport, vlan=rng.random() < 0.2, frag=frag)
        args.update(kw)
        return build_ipv4(rng, **args)

    def other(self):
        """A frame the L3 tables must skip: IPv6, non-IP, VXLAN over IPv6."""
        rng = self.rng
        stack = rng.choice([["eth"], ["eth", "vlan"], ["eth", "ipv6", "udp"],
                            ["eth", "ipv6", "tcp"], ["eth", "vlan", "ipv6"],
                            ["eth", "ipv6", "udp", "vxlan", "inner_eth", "inner_ipv4"]])
        pkt = packets.build_stack(rng, stack, rng.randrange(0, 300))
        pkt[Ether].dst = mac_str(self._mac())
        return bytes(pkt)

    def vxlan4(self):
        rng = self.rng
        pkt = packets.build_stack(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth",
                                        "inner_ipv4", "inner_tcp"], rng.randrange(0, 100),
                                  ipv4_options=0)
        pkt[Ether].dst = mac_str(self._mac())
        pkt[IP].dst = ip_str(self._dst())
        del pkt[IP].chksum
        return bytes(pkt)

    def frame(self):
        """(name, frame, ingress port, bad_frame)."""
        rng = self.rng
        self.n += 1
        port = rng.randrange(16)
        r = rng.random()
        if self.malformed and r < 0.04:
            name, (frame, kw) = rng.choice(self.malformed)
            return f"#{self.n} {name}", frame, port, kw.get("bad_frame", False)
        if r < 0.05:
            return f"#{self.n} bad_frame", self.ipv4(), port, True
        if r < 0.20:
            return f"#{self.n} other", self.other(), port, False
        if r < 0.25:
            return f"#{self.n} vxlan", self.vxlan4(), port, False
        return f"#{self.n} ipv4", self.ipv4(), port, False


def ipv6_frame(rng, eth_dst, length=100):
    pkt = (Ether(dst=mac_str(eth_dst), src=mac_str(rng.getrandbits(48)))
           / IPv6(src=packets.rand_ip6(rng), dst=packets.rand_ip6(rng))
           / UDP(sport=packets.rand_port(rng), dport=packets.rand_port(rng)))
    return bytes(pkt / Raw(packets.rand_bytes(rng, max(0, length - len(pkt)))))


def vxlan_over_ipv6(rng, eth_dst):
    pkt = (Ether(dst=mac_str(eth_dst)) / IPv6(src="2001:db8::1", dst="2001:db8::2")
           / UDP(sport=5000, dport=4789) / VXLAN(vni=7) / Ether() / IP() / UDP()
           / Raw(bytes(20)))
    return bytes(pkt)
