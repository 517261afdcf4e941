# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the program model (tb/model/program.py), pure Python, no simulator.

The program is the built-in L2/L3 program as docs/pipeline.md describes it
(tb/pipeline/l2l3.py), and, when build/rtl/w64/layout.json has a "program" section, the
generator's description too. Expected results are worked by hand or built independently
with scapy (the routed frame: new MACs, TTL - 1, the IPv4 checksum recomputed by scapy).
"""

import functools
import ipaddress
import json
import random

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

from tb.common import packets, seeds, sim
from tb import model
from tb.model import CHECK_REASONS, NO_ERROR, deparse, internet_checksum
from tb.model.program import (
    Program, ProgramError, TableFull, TernaryTable, compare, header_valid, load, program_section,
)
from tb.pipeline import l2l3
from tb.pipeline.l2l3 import (
    ACL_DENY, ACL_TO_HOST, L2_DROP, L3_DROP, NO_ROUTE, acl_rule, range_to_masks,
)
from tb.pipeline.traffic import ip_int, mac_str, routed_by_scapy

# No frame here has headers past the smaller configuration's header window.
parse = functools.partial(model.parse, header_bytes=128)
MAC_A, MAC_B = 0x020000000001, 0x020000000002
ROUTER, NEXT_HOP = 0x02AA00000001, 0x02BB00000002


def prog():
    return Program(l2l3.program())


def run(p, frame, port=0, trace=None):
    """(out, tuser, drop reason) of a frame through parse, the program, deparse."""
    return deparse(frame, p.apply(parse(frame, ingress_port=port), trace=trace))


def udp4(src="10.1.2.3", dst="10.9.8.7", sport=1234, dport=80, ttl=64, eth_dst=MAC_A,
         payload=40, **ip_kw):
    return bytes(Ether(dst=mac_str(eth_dst), src=mac_str(MAC_B))
                 / IP(src=src, dst=dst, ttl=ttl, **ip_kw) / UDP(sport=sport, dport=dport)
                 / Raw(bytes(payload)))


def tcp4(src="10.1.2.3", dst="10.9.8.7", sport=1234, dport=443, ttl=64, eth_dst=MAC_A,
         payload=40):
    return bytes(Ether(dst=mac_str(eth_dst), src=mac_str(MAC_B))
                 / IP(src=src, dst=dst, ttl=ttl) / TCP(sport=sport, dport=dport)
                 / Raw(bytes(payload)))


def arp(eth_dst=MAC_A):
    return bytes(Ether(dst=mac_str(eth_dst), src=mac_str(MAC_B)) / ARP() / Raw(bytes(20)))


def ipv6(eth_dst=MAC_A):
    return bytes(Ether(dst=mac_str(eth_dst), src=mac_str(MAC_B))
                 / IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=2)
                 / Raw(bytes(20)))


def ip_checksum_ok(frame, offset=14):
    ihl = (frame[offset] & 0xF) * 4
    return internet_checksum(frame[offset:offset + ihl]) == 0


# --------------------------------------------------------------------------- description


def test_docs_program_is_consistent():
    p = prog()
    assert p.check() == []
    assert [t.name for t in p.tables] == ["l2_fwd", "ipv4_lpm", "acl"]
    assert [t.kind for t in p.tables] == ["exact", "lpm", "ternary"]
    assert [t.key_width for t in p.tables] == [48, 32, 104]
    assert [t.data_width for t in p.tables] == [4, 100, 1]
    lpm = p["ipv4_lpm"]
    assert lpm.data("route", port=0xA, dmac=0x112233445566, smac=0x778899AABBCC) == \
        (0xA << 96) | (0x112233445566 << 48) | 0x778899AABBCC
    assert lpm.get_default() == (l2l3.NO_ROUTE_ACTION, 0)
    assert p["acl"].get_default() == (l2l3.PERMIT, 0)
    assert p["l2_fwd"].get_default() == (l2l3.L2_NO_OP, 0)


def test_check_finds_description_errors():
    bad = l2l3.program()
    route = bad["tables"][1]["actions"][0]
    route["params"][0]["offset"] = 0          # port not in the most significant bits
    bad["tables"][1]["dataWidth"] = 99
    bad["tables"][2]["actions"][1]["ops"][0]["reason"] = 3   # a parse-error code
    bad["tables"][2]["key"][0]["width"] = 31
    with pytest.raises(ProgramError) as e:
        Program(bad)
    msg = str(e.value)
    assert "parameter port at offset 0, the packing rule puts it at 96" in msg
    assert "dataWidth 99, the widest action takes 100" in msg
    assert "drop reason 3" in msg
    assert "key field hdr.ipv4.src is 32 bits, part says 31" in msg


def test_compare_names_contract_differences():
    want = l2l3.program()
    got = l2l3.program()
    got["tables"][1]["latency"] = 11          # the generator's choice: not compared
    got["tables"][0]["ways"] = 2
    assert compare(got, want) == []
    got["tables"][1]["actions"][2]["ops"][0]["reason"] = 0x21
    got["tables"][2]["default"] = {"action": 2, "data": 0}
    diffs = compare({"program": got}, want)
    assert any("action no_route: ops" in d for d in diffs), diffs
    assert any("default ('to_host', 0), expected ('permit', 0)" in d for d in diffs), diffs


def test_generated_layout_program_if_present():
    """build/rtl/w64/layout.json: when it has a program section, it loads, is consistent
    and agrees with docs/pipeline.md's built-in program."""
    path = sim.layout_file("w64")
    if not path.exists():
        pytest.skip(f"{path} not found")
    with open(path) as f:
        layout = json.load(f)
    if program_section(layout) is None:
        pytest.skip(f"{path} has no program section yet")
    p = load(path, strict=False)
    assert p.problems == [], f"{path}: {p.problems}"
    assert compare(layout, l2l3.PROGRAM) == []


# ----------------------------------------------------------------------------- L2


def test_l2_forward_drop_and_miss():
    p = prog()
    l2 = p["l2_fwd"]
    l2.add(MAC_A, "forward", l2.data("forward", port=9))
    l2.add(MAC_B, "drop")
    out, tuser, drop = run(p, arp(MAC_A), port=3)
    assert out == arp(MAC_A) and tuser == {"punt": 0, "egressPort": 9, "reason": 0}
    assert run(p, arp(MAC_B), port=3) == (None, None, L2_DROP)
    # A miss applies no_op: the egress port stays the ingress port.
    out, tuser, _ = run(p, arp(0x02CCCCCCCCCC), port=3)
    assert tuser == {"punt": 0, "egressPort": 3, "reason": 0}
    assert p.counters()["l2_fwd"] == (2, 1)
    # ARP is not IPv4: the L3 tables did nothing.
    assert p.counters()["ipv4_lpm"] == (0, 0) and p.counters()["acl"] == (0, 0)


def test_exact_duplicates_deletes_and_capacity():
    p = prog()
    l2 = p["l2_fwd"]
    l2.add(MAC_A, 1, 5)
    with pytest.raises(ProgramError):
        l2.add(MAC_A, 1, 6)
    with pytest.raises(ProgramError):
        l2.add(1 << 48, 1, 0)                 # key wider than 48 bits
    with pytest.raises(ProgramError):
        l2.add(MAC_B, 1, 16)                  # data wider than 4 bits
    with pytest.raises(ProgramError):
        l2.add(MAC_B, 7, 0)                   # no action 7
    l2.delete(MAC_A)
    assert l2.lookup(MAC_A) == (False, None, None, None)
    for k in range(64):
        l2.add(k, "no_op")
    with pytest.raises(TableFull):
        l2.add(1000, "no_op")


# ----------------------------------------------------------------------------- L3


def route(p, prefix, length, port, dmac=NEXT_HOP, smac=ROUTER):
    lpm = p["ipv4_lpm"]
    lpm.add(ip_int(prefix), length, "route", lpm.data("route", port=port, dmac=dmac, smac=smac))


def test_routed_frame_matches_scapy():
    p = prog()
    route(p, "10.9.0.0", 16, 7)
    frame = udp4(dst="10.9.8.7", ttl=64)
    out, tuser, drop = run(p, frame, port=2)
    assert drop is None
    assert tuser == {"punt": 0, "egressPort": 7, "reason": 0}
    assert out == routed_by_scapy(frame, NEXT_HOP, ROUTER)
    got = Ether(out)
    assert got[IP].ttl == 63 and got.dst == mac_str(NEXT_HOP) and got.src == mac_str(ROUTER)
    assert ip_checksum_ok(out)
    # scapy's own checksum of the output header agrees with the one in it.
    chk = got[IP].chksum
    del got[IP].chksum
    assert IP(bytes(got[IP]))[IP].chksum == chk


@pytest.mark.parametrize("ttl", [2, 64, 255])
def test_ttl_decrements(ttl):
    p = prog()
    route(p, "0.0.0.0", 0, 1)
    frame = tcp4(ttl=ttl)
    out, _, _ = run(p, frame)
    assert Ether(out)[IP].ttl == ttl - 1
    assert out == routed_by_scapy(frame, NEXT_HOP, ROUTER)
    assert ip_checksum_ok(out)


@pytest.mark.parametrize("ttl", [0, 1])
def test_ttl_that_would_reach_zero_is_punted_as_received(ttl):
    """RFC 1812 5.3.1: not forwarded with TTL 0 (nor wrapped to 255); the host, which
    sends the ICMP time exceeded, gets the frame as it came."""
    p = prog()
    route(p, "0.0.0.0", 0, 1)
    frame = tcp4(ttl=ttl)
    assert run(p, frame, port=6) == (
        frame, {"punt": 1, "egressPort": 6, "reason": CHECK_REASONS["TTL_EXPIRED"]}, None)


def test_routing_with_vlan_and_options_punted():
    p = prog()
    route(p, "10.0.0.0", 8, 4)
    for options in (0, 3):
        frame = packets.frame_of(random.Random(1), ["eth", "vlan", "ipv4", "tcp"], 30,
                                 ipv4_options=options)
        pkt = Ether(frame)
        pkt[IP].dst = "10.1.1.1"
        pkt[IP].ttl = 64
        del pkt[IP].chksum
        frame = bytes(pkt)
        out, tuser, _ = run(p, frame, port=2)
        if options:  # RFC 1812 5.2.4: the host processes options
            assert (out, tuser) == (frame, {"punt": 1, "egressPort": 2,
                                            "reason": CHECK_REASONS["IPV4_OPTIONS"]})
        else:
            assert tuser == {"punt": 0, "egressPort": 4, "reason": 0}
            assert out == routed_by_scapy(frame, NEXT_HOP, ROUTER)
            assert ip_checksum_ok(out, 18)


def test_checksum_and_length_checked_on_routed_frames_only():
    """RFC 1812 5.2.2: a routed frame whose header checksum is wrong, or whose total
    length is below its header or past the frame, is dropped; one no route covers is
    punted as before."""
    p = prog()
    route(p, "10.0.0.0", 8, 4)
    good = udp4(dst="10.1.1.1")
    bad_sum = bytearray(good)
    bad_sum[25] ^= 0x10
    room = len(good) - 14
    cases = [(bytes(bad_sum), "IPV4_CHECKSUM"), (udp4(dst="10.1.1.1", len=room + 1), "IP_LENGTH"),
             (udp4(dst="10.1.1.1", len=19), "IP_LENGTH")]
    for frame, check in cases:
        assert run(p, frame) == (None, None, CHECK_REASONS[check]), check
    assert run(p, udp4(dst="10.1.1.1", len=room))[1] == {"punt": 0, "egressPort": 4, "reason": 0}
    bad_sum[30:34] = bytes([11, 0, 0, 1])  # no route, checksum still wrong
    assert run(p, bytes(bad_sum), port=3)[1] == {"punt": 1, "egressPort": 3, "reason": NO_ROUTE}


def test_no_route_is_punted_untouched():
    p = prog()
    route(p, "192.168.0.0", 16, 1)
    frame = udp4(dst="10.9.8.7")
    assert run(p, frame, port=5) == (frame, {"punt": 1, "egressPort": 5, "reason": NO_ROUTE},
                                     None)
    # An L2 hit still sets the port; the punt goes to the host with it.
    p["l2_fwd"].add(MAC_A, "forward", 3)
    assert run(p, frame, port=5) == (frame, {"punt": 1, "egressPort": 3, "reason": NO_ROUTE},
                                     None)


def test_lpm_nesting_longest_prefix_wins():
    p = prog()
    lpm = p["ipv4_lpm"]
    chain = [("0.0.0.0", 0), ("10.0.0.0", 8), ("10.1.0.0", 16), ("10.1.2.0", 24),
             ("10.1.2.3", 32), ("10.1.2.0", 25), ("10.0.0.0", 15)]
    for n, (pfx, ln) in enumerate(chain):
        route(p, pfx, ln, n)
    cases = {"10.1.2.3": 4, "10.1.2.4": 5, "10.1.2.200": 3, "10.1.3.1": 2, "10.0.9.9": 6,
             "10.2.0.0": 1, "11.0.0.0": 0, "10.1.2.2": 5}
    for dst, port in cases.items():
        _, tuser, _ = run(p, udp4(dst=dst))
        assert tuser["egressPort"] == port, dst
    # Deleting a middle prefix falls back to the next shorter one.
    lpm.delete(ip_int("10.1.2.0"), 25)
    assert run(p, udp4(dst="10.1.2.4"))[1]["egressPort"] == 3
    lpm.delete(ip_int("0.0.0.0"), 0)
    assert run(p, udp4(dst="11.0.0.0"))[1] == {"punt": 1, "egressPort": 0,
                                               "reason": NO_ROUTE}
    with pytest.raises(ProgramError):
        lpm.add(ip_int("10.1.2.3"), 24, "drop")   # bits past the prefix length
    with pytest.raises(ProgramError):
        lpm.delete(ip_int("10.1.2.0"), 25)


def test_lpm_match_is_brute_force_longest(matcha_seed):
    """The model's longest-prefix match against a search of every prefix, on nested random
    prefixes and keys at, inside and next to their ends (seeded)."""
    rng = random.Random(matcha_seed)
    lpm = prog()["ipv4_lpm"]
    while len(lpm.entries()) < lpm.size:
        length = rng.choice([0, 1, 7, 8, 15, 16, 20, 23, 24, 25, 31, 32])
        value = rng.getrandbits(32) & ~((1 << (32 - length)) - 1) & 0xFFFFFFFF
        if (value, length) not in lpm.entries():
            lpm.add(value, length, "drop")
    prefixes = lpm.entries()
    keys = [rng.getrandbits(32) for _ in range(500)]
    for value, length in prefixes:
        end = value + (1 << (32 - length)) - 1
        keys += [k & 0xFFFFFFFF for k in (value - 1, value, end, end + 1)]
    for key in keys:
        covering = [(v, n) for v, n in prefixes if key >> (32 - n) == v >> (32 - n)]
        assert lpm.match(key) == max(covering, key=lambda p: p[1], default=None), hex(key)


def test_lpm_drop_action():
    p = prog()
    p["ipv4_lpm"].add(ip_int("10.9.0.0"), 16, "drop")
    assert run(p, udp4(dst="10.9.1.1")) == (None, None, L3_DROP)


# ------------------------------------------------------------------------------ ACL


def test_acl_priorities_and_ties():
    p = prog()
    acl = p["acl"]
    route(p, "0.0.0.0", 0, 1)
    frame = tcp4(src="10.1.2.3", dst="10.9.8.7", sport=1000, dport=22)
    anyhost = acl_rule(dst=(ip_int("10.9.0.0"), 16))
    ssh = acl_rule(protocol=6, dstPort=22)
    # Equal priority: the rule added first wins.
    acl.add(*anyhost, 10, "to_host")
    acl.add(*ssh, 10, "deny")
    assert run(p, frame)[1] == {"punt": 1, "egressPort": 1, "reason": ACL_TO_HOST}
    # Higher priority wins whatever the order.
    acl.add(*acl_rule(src=ip_int("10.1.2.3")), 20, "permit")
    assert run(p, frame)[1] == {"punt": 0, "egressPort": 1, "reason": 0}
    acl.delete(*acl_rule(src=ip_int("10.1.2.3")), 20)
    # Deleting the first of the tie hands the frame to the second.
    acl.delete(*anyhost, 10)
    assert run(p, frame) == (None, None, ACL_DENY)
    # Re-added, it goes after the rule now present at its priority.
    acl.add(*anyhost, 10, "to_host")
    assert run(p, frame) == (None, None, ACL_DENY)
    assert acl.entries() == [(*ssh, 10), (*anyhost, 10)]
    # A lower priority rule matching too changes nothing; a frame only it matches hits it.
    acl.add(*acl_rule(), 1, "to_host")
    assert run(p, frame) == (None, None, ACL_DENY)
    assert run(p, tcp4(dst="10.10.0.1", dport=80))[1]["reason"] == ACL_TO_HOST
    with pytest.raises(ProgramError):
        acl.add(1, 0, 5, "deny")              # value bit outside the mask
    with pytest.raises(ProgramError):
        acl.add(*ssh, 10, "permit")           # same value, mask and priority


def test_acl_overrides_routing_and_sees_routed_frame():
    """The ACL acts after the route: to_host punts the routed frame (TTL - 1, new MACs);
    deny drops it; after no_route's punt a deny still drops (drop wins)."""
    p = prog()
    acl = p["acl"]
    route(p, "10.9.0.0", 16, 6)
    frame = udp4(dst="10.9.8.7", dport=53)
    acl.add(*acl_rule(protocol=17, dstPort=53), 5, "to_host")
    out, tuser, _ = run(p, frame, port=1)
    assert tuser == {"punt": 1, "egressPort": 6, "reason": ACL_TO_HOST}
    assert out == routed_by_scapy(frame, NEXT_HOP, ROUTER)
    acl.add(*acl_rule(protocol=17, dstPort=53, src=ip_int("10.1.2.3")), 6, "deny")
    assert run(p, frame) == (None, None, ACL_DENY)
    assert run(p, udp4(dst="172.16.0.1", dport=53)) == (None, None, ACL_DENY)
    # L2 drop then a permit: still dropped with the L2 reason.
    p["l2_fwd"].add(MAC_A, "drop")
    assert run(p, udp4(dst="10.9.8.7", dport=54)) == (None, None, L2_DROP)


def test_acl_key_first_valid_ports():
    p = prog()
    acl = p["acl"]
    src, dst = ip_int("1.2.3.4"), ip_int("5.6.7.8")
    tcp_phv = parse(tcp4(src="1.2.3.4", dst="5.6.7.8", sport=111, dport=222))
    udp_phv = parse(udp4(src="1.2.3.4", dst="5.6.7.8", sport=333, dport=444))
    icmp_phv = parse(bytes(Ether(dst=mac_str(MAC_A), src=mac_str(MAC_B))
                           / IP(src="1.2.3.4", dst="5.6.7.8") / ICMP() / Raw(bytes(30))))
    frag_phv = parse(udp4(src="1.2.3.4", dst="5.6.7.8", frag=10, flags=0))
    assert acl.key_of(tcp_phv) == acl.key(src=src, dst=dst, protocol=6, srcPort=111,
                                          dstPort=222)
    assert acl.key_of(udp_phv) == acl.key(src=src, dst=dst, protocol=17, srcPort=333,
                                          dstPort=444)
    # No transport header: both port parts read 0.
    assert acl.key_of(icmp_phv) == acl.key(src=src, dst=dst, protocol=1)
    assert not frag_phv["hdr.udp.valid"]
    assert acl.key_of(frag_phv) == acl.key(src=src, dst=dst, protocol=17)
    # A stale field of an invalid header reads 0 all the same.
    stale = dict(icmp_phv, **{"hdr.tcp.srcPort": 7, "hdr.udp.dstPort": 9})
    assert acl.key_of(stale) == acl.key_of(icmp_phv)
    assert not header_valid(stale, "hdr.tcp.srcPort")


def test_acl_port_ranges():
    p = prog()
    acl = p["acl"]
    route(p, "0.0.0.0", 0, 2)
    lo, hi = 1000, 2047 + 7
    for v, m in range_to_masks(lo, hi):
        acl.add(*acl_rule(protocol=6, dstPort={"value": v, "mask": m}), 3, "deny")
    for port in (999, 1000, 1001, 1023, 1024, 2047, 2048, 2054, 2055, 65535, 0):
        out = run(p, tcp4(dport=port))
        assert (out == (None, None, ACL_DENY)) == (lo <= port <= hi), port


def test_range_to_masks_exact_cover():
    rng = random.Random(5)
    for width in (4, 6):
        for lo in range(1 << width):
            for hi in range(lo, 1 << width):
                pairs = range_to_masks(lo, hi, width)
                covered = {x for x in range(1 << width)
                           if any(x & m == v for v, m in pairs)}
                assert covered == set(range(lo, hi + 1)), (lo, hi, pairs)
    for _ in range(200):
        lo = rng.randrange(65536)
        hi = rng.randrange(lo, 65536)
        pairs = range_to_masks(lo, hi)
        assert len(pairs) <= 30
        for x in {lo, hi, lo - 1, hi + 1, rng.randrange(65536)}:
            if 0 <= x < 65536:
                assert any(x & m == v for v, m in pairs) == (lo <= x <= hi)
    assert range_to_masks(0, 65535) == [(0, 0)]


# ------------------------------------------------------------------ applyIf, errors


def test_non_ipv4_skips_l3_tables():
    p = prog()
    p["ipv4_lpm"].set_default("drop")
    p["acl"].add(*acl_rule(), 1, "deny")
    for frame in (arp(), ipv6()):
        trace = []
        out, tuser, drop = run(p, frame, port=4, trace=trace)
        assert out == frame and tuser == {"punt": 0, "egressPort": 4, "reason": 0}
        assert [str(t) for t in trace[1:]] == ["ipv4_lpm: skipped", "acl: skipped"]
    assert p.counters() == {"l2_fwd": (0, 2), "ipv4_lpm": (0, 0), "acl": (0, 0)}


def _gated_program():
    """`mark` keys on the destination MAC and sets the program's metadata meta.zone (3
    bits) and meta.marked; `gate` applies only to frames marked and not dropped."""
    def action(name, id, params=(), ops=()):
        offset, out = sum(w for _, w in params), []
        for n, w in params:
            offset -= w
            out.append({"name": n, "width": w, "offset": offset})
        return {"name": name, "id": id, "params": out, "ops": list(ops)}
    mark = {
        "name": "mark", "index": 0, "kind": "exact", "size": 16, "keyWidth": 48,
        "dataWidth": 3, "counters": False, "applyIf": [],
        "key": [{"fields": ["hdr.eth.dst"], "width": 48}],
        "actions": [action("none", 0),
                    action("mark", 1, [("zone", 3)],
                           [{"op": "set", "field": "meta.zone", "param": "zone"},
                            {"op": "setConst", "field": "meta.marked", "value": 1}]),
                    action("drop", 2, ops=[{"op": "drop", "reason": 0x30},
                                           {"op": "setConst", "field": "meta.marked", "value": 1}])],
        "default": {"action": "none", "data": 0}}
    gate = {
        "name": "gate", "index": 1, "kind": "exact", "size": 16, "keyWidth": 3,
        "dataWidth": 4, "counters": True, "applyIf": ["meta.marked", "!meta.drop"],
        "key": [{"fields": ["meta.zone"], "width": 3}],
        "actions": [action("none", 0),
                    action("forward", 1, [("port", 4)],
                           [{"op": "set", "field": "meta.egressPort", "param": "port"}])],
        "default": {"action": "none", "data": 0}}
    return Program({"name": "gated", "tables": [mark, gate],
                    "metadata": [{"name": "meta.zone", "width": 3},
                                 {"name": "meta.marked", "width": 1}]})


def test_metadata_and_conditions():
    """A program's own metadata starts at 0 and carries a value from one table's action to
    the next table's key; a condition of several terms, one negated, applies the table only
    when all hold: unmarked frames and marked-but-dropped frames skip `gate` (no lookup,
    no counter), marked ones look up the zone `mark` gave them."""
    p = _gated_program()
    assert p.problems == []
    p["mark"].add(MAC_A, "mark", p["mark"].data("mark", zone=5))
    p["mark"].add(MAC_B, "drop")
    p["gate"].add(5, "forward", p["gate"].data("forward", port=9))
    frames = {mac: bytes(Ether(dst=mac_str(mac), src="02:00:00:00:00:99") / IP() / UDP() / Raw(bytes(40)))
              for mac in (MAC_A, MAC_B, 0x020000000003)}
    trace = []
    out, tuser, _ = run(p, frames[MAC_A], port=1, trace=trace)
    assert tuser["egressPort"] == 9 and str(trace[1]).startswith("gate: key 0x5 hit"), trace
    for mac in (MAC_B, 0x020000000003):
        trace = []
        run(p, frames[mac], port=1, trace=trace)
        assert str(trace[1]) == "gate: skipped", (hex(mac), [str(t) for t in trace])
    assert p.counters()["gate"] == (1, 0)


def test_metadata_and_conditions_refused():
    """A condition on a field wider than one bit, and metadata named like a field every
    PHV has, are refused with the reason."""
    desc = _gated_program().desc
    desc["tables"][1]["applyIf"] = ["!meta.zone"]
    assert Program(desc, strict=False).problems == ["table gate: applyIf !meta.zone is not a 1-bit field"]
    desc["metadata"].append({"name": "meta.drop", "width": 1})
    with pytest.raises(ProgramError, match="meta.drop"):
        Program(desc)


def test_parse_error_frames_untouched(matcha_seed):
    """Every malformed case: with a catch-all route, a catch-all ACL rule and an L2 drop
    entry for its own destination, a frame with a parse error leaves the tables exactly
    as the parser made it, and counts nothing; error-free ones among the cases do not."""
    rng = random.Random(matcha_seed)
    p = prog()
    route(p, "0.0.0.0", 0, 9)
    p["acl"].add(*acl_rule(), 1, "to_host")
    bare = prog()
    errors = lookups = 0
    for name, (frame, kw) in packets.malformed_cases(rng).items():
        phv = parse(frame, ingress_port=3, **kw)
        p["l2_fwd"].table.clear()
        if phv["hdr.eth.valid"]:
            p["l2_fwd"].add(phv["hdr.eth.dst"], "drop")
        after = p.apply(phv)
        if phv["meta.parseError"] != NO_ERROR:
            errors += 1
            assert after == phv, name
            assert deparse(frame, after) == deparse(frame, bare.apply(phv)), name
        else:
            lookups += 1 + 2 * phv["hdr.ipv4.valid"]
            assert after["meta.drop"] == 1 and after["meta.reason"] == ACL_TO_HOST \
                if phv["hdr.ipv4.valid"] else after["meta.reason"] == L2_DROP, name
    assert errors > 20
    assert sum(h + m for h, m in p.counters().values()) == lookups


def test_counters_per_table_and_entry():
    p = prog()
    l2, lpm, acl = p["l2_fwd"], p["ipv4_lpm"], p["acl"]
    l2.add(MAC_A, "forward", 1)
    route(p, "10.0.0.0", 8, 2)
    route(p, "10.9.0.0", 16, 3)
    rule = acl_rule(protocol=17)
    acl.add(*rule, 1, "permit")
    frames = [udp4(dst="10.9.1.1", payload=20), udp4(dst="10.1.1.1", payload=100),
              udp4(dst="10.9.2.2", payload=1000), tcp4(dst="11.0.0.1", eth_dst=MAC_B),
              arp(MAC_A)]
    for f in frames:
        run(p, f)
    lens = [len(f) for f in frames]
    assert p.counters() == {"l2_fwd": (4, 1), "ipv4_lpm": (3, 1), "acl": (3, 1)}
    assert l2.entry_counters(MAC_A) == (4, lens[0] + lens[1] + lens[2] + lens[4])
    assert lpm.entry_counters((ip_int("10.9.0.0"), 16)) == (2, lens[0] + lens[2])
    assert lpm.entry_counters((ip_int("10.0.0.0"), 8)) == (1, lens[1])
    assert acl.entry_counters((*rule, 1)) == (3, lens[0] + lens[1] + lens[2])
    assert p.entry_counters()["l2_fwd"] == {MAC_A: (4, lens[0] + lens[1] + lens[2] + lens[4])}
    # answer() does not count.
    p.answer(parse(frames[0]))
    assert p.counters()["ipv4_lpm"] == (3, 1)
    # A deleted entry's counts go with it; re-added, it starts at zero.
    assert lpm.delete(ip_int("10.9.0.0"), 16) == (2, lens[0] + lens[2])
    route(p, "10.9.0.0", 16, 3)
    assert lpm.entry_counters((ip_int("10.9.0.0"), 16)) == (0, 0)
    # Reset of one entry's counts; CLEAR keeps the table's hit and miss counts.
    assert l2.reset_entry_counters(MAC_A)[0] == 4
    run(p, frames[0])
    assert l2.entry_counters(MAC_A) == (1, lens[0])
    acl.clear()
    assert acl.entries() == [] and p.entry_counters()["acl"] == {}
    assert p.counters()["acl"] == (4, 1)
    run(p, frames[0])
    assert p.counters()["acl"] == (4, 2)
    p.reset()
    assert p.counters() == {"l2_fwd": (0, 0), "ipv4_lpm": (0, 0), "acl": (0, 0)}
    assert len(lpm) == 0


def test_direct_table_key_is_the_index():
    """A direct table (docs/tables.md "Direct") keyed by the 8-bit TTL with 200 entries: a
    TTL with an entry at its index hits it, any other TTL (a free index, a deleted entry,
    200..255 where no entry can be) takes the default; a key from 200 up cannot be added."""
    by_ttl = {
        "name": "by_ttl", "index": 0, "kind": "direct", "size": 200,
        "keyWidth": 8, "dataWidth": 4, "latency": 2, "counters": True,
        "applyIf": ["hdr.ipv4.valid"],
        "key": [{"fields": ["hdr.ipv4.ttl"], "width": 8}],
        "actions": [
            {"name": "no_op", "id": 0, "params": [], "ops": []},
            {"name": "forward", "id": 1,
             "params": [{"name": "port", "width": 4, "offset": 0}],
             "ops": [{"op": "set", "field": "meta.egressPort", "param": "port"}]},
        ],
        "default": {"action": "no_op", "data": 0},
    }
    p = Program({"name": "direct", "tables": [by_ttl]})
    t = p["by_ttl"]
    for ttl, port in ((0, 1), (64, 2), (199, 3)):
        t.add(ttl, "forward", port)
    with pytest.raises(ProgramError, match="not an index of its 200 entries"):
        t.add(200, "forward", 4)
    with pytest.raises(ProgramError):
        t.add(64, "forward", 5)               # present
    with pytest.raises(ProgramError):
        t.add(256, "forward", 5)              # wider than the key

    def egress(ttl):
        return run(p, udp4(ttl=ttl), port=9)[1]["egressPort"]

    assert [egress(ttl) for ttl in (0, 64, 199, 1, 200, 255)] == [1, 2, 3, 9, 9, 9]
    assert t.lookup(64) == (True, 1, 2, 64) and t.lookup(200) == (False, None, None, None)
    t.modify(64, "forward", 7)
    assert egress(64) == 7
    assert t.delete(64) == (2, 2 * len(udp4(ttl=64)))
    assert egress(64) == 9
    assert p.counters()["by_ttl"] == (4, 4)
    assert sorted(t.entries()) == [0, 199]


def test_default_action_at_run_time():
    p = prog()
    lpm, l2, acl = p["ipv4_lpm"], p["l2_fwd"], p["acl"]
    frame = udp4(dst="10.9.8.7", ttl=9)
    assert run(p, frame, port=1)[1]["reason"] == NO_ROUTE
    lpm.set_default("drop")
    assert run(p, frame) == (None, None, L3_DROP)
    lpm.set_default("route", lpm.data("route", port=12, dmac=0xAB, smac=0xCD))
    assert lpm.get_default() == (l2l3.ROUTE, (12 << 96) | (0xAB << 48) | 0xCD)
    out, tuser, _ = run(p, frame)
    assert tuser == {"punt": 0, "egressPort": 12, "reason": 0}
    assert out == routed_by_scapy(frame, 0xAB, 0xCD)
    l2.set_default("forward", 5)
    assert run(p, arp())[1]["egressPort"] == 5
    acl.set_default("to_host")
    assert run(p, frame)[1] == {"punt": 1, "egressPort": 12, "reason": ACL_TO_HOST}
    with pytest.raises(ProgramError):
        l2.set_default("forward", 16)
    # A hit is not affected by the default; misses count as misses.
    assert p.counters()["ipv4_lpm"] == (0, 4)
    p.reset()
    assert lpm.get_default() == (l2l3.NO_ROUTE_ACTION, 0)


# ----------------------------------------------------------- other program shapes


def chained_program():
    """Two tables, the second keyed on what the first writes, plus setConst and a
    narrower parameter: checks order of application and the ops."""
    return {"name": "chain", "tables": [
        {"name": "a", "kind": "exact", "size": 8, "keyWidth": 4, "dataWidth": 4,
         "key": [{"fields": ["meta.ingressPort"], "width": 4}],
         "actions": [{"name": "set_port", "id": 3,
                      "params": [{"name": "p", "width": 4, "offset": 0}],
                      "ops": [{"op": "set", "field": "meta.egressPort", "param": "p"},
                              {"op": "setConst", "field": "hdr.ipv4.dscp", "value": 46},
                              {"op": "decrement", "field": "hdr.ipv4.ttl"},
                              {"op": "decrement", "field": "hdr.ipv4.ttl"}]}],
         "default": {"action": "set_port", "data": 15}},
        {"name": "b", "kind": "ternary", "size": 8, "keyWidth": 16, "dataWidth": 1,
         "key": [{"fields": ["meta.egressPort"], "width": 4},
                 {"fields": ["hdr.vlan.vid"], "width": 12}],
         "actions": [{"name": "punt", "id": 0, "params": [],
                      "ops": [{"op": "punt", "reason": 0x40}]},
                     {"name": "nothing", "id": 1, "params": [], "ops": []}],
         "default": {"action": "nothing", "data": 0}},
    ]}


def test_later_table_reads_what_earlier_wrote():
    p = Program(chained_program())
    p["a"].add(2, "set_port", 7)
    p["b"].add(7 << 12, 0xF << 12, 0, "punt")
    frame = udp4(ttl=1)
    phv = parse(frame, ingress_port=2)
    trace = []
    after = p.apply(phv, trace=trace)
    assert after["meta.egressPort"] == 7
    assert after["hdr.ipv4.dscp"] == 46 and after["hdr.ipv4.ttl"] == 255
    assert trace[1].key == 7 << 12 and trace[1].hit
    out, tuser, _ = deparse(frame, after)
    assert tuser == {"punt": 1, "egressPort": 7, "reason": 0x40}
    pkt = Ether(out)
    assert pkt[IP].tos >> 2 == 46 and pkt[IP].ttl == 255 and ip_checksum_ok(out)
    # Default of a: port 15, which b does not match.
    assert run(p, frame, port=3)[1] == {"punt": 0, "egressPort": 15, "reason": 0}
    # A VLAN frame: vid is part of b's key.
    vlan = bytes(Ether(dst=mac_str(MAC_A)) / Dot1Q(vlan=5) / IP() / UDP() / Raw(bytes(30)))
    assert run(p, vlan, port=2)[1]["punt"] == 1
    # A rule of higher priority for vid 5 wins over the punt rule.
    p["b"].add((7 << 12) | 5, 0xFFFF, 1, "nothing")
    assert run(p, vlan, port=2)[1]["punt"] == 0
    assert run(p, frame, port=2)[1]["punt"] == 1


def test_independent_random_cross_check(matcha_seed):
    """Random tables and frames through the model, against a straight-line version of
    the built-in program written with scapy and the ipaddress module."""
    rng = random.Random(f"{matcha_seed}:cross")
    p = prog()
    l2, lpm, acl = p["l2_fwd"], p["ipv4_lpm"], p["acl"]
    macs, routes, rules = {}, {}, []
    for _ in range(20):
        m = rng.getrandbits(48)
        if m not in macs:
            a = rng.choice(["no_op", "forward", "drop"])
            d = rng.randrange(16) if a == "forward" else 0
            l2.add(m, a, d)
            macs[m] = (a, d)
    for _ in range(30):
        ln = rng.choice([0, 4, 8, 12, 16, 20, 24, 28, 32])
        net = ipaddress.ip_network((rng.getrandbits(32), ln), strict=False)
        if net in routes:
            continue
        a = rng.choice(["route", "route", "route", "drop"])
        port, dmac, smac = rng.randrange(16), rng.getrandbits(48), rng.getrandbits(48)
        lpm.add(int(net.network_address), ln, a,
                lpm.data("route", port=port, dmac=dmac, smac=smac) if a == "route" else 0)
        routes[net] = (a, port, dmac, smac)
    for seq in range(25):
        parts = {}
        if rng.random() < 0.5:
            parts["src"] = (rng.getrandbits(32), rng.choice([8, 16, 24, 32]))
        if rng.random() < 0.5:
            parts["protocol"] = rng.choice([6, 17])
        if rng.random() < 0.5:
            lo = rng.randrange(65536)
            v, m = rng.choice(range_to_masks(lo, min(65535, lo + rng.randrange(3000))))
            parts[rng.choice(["srcPort", "dstPort"])] = {"value": v, "mask": m}
        value, mask = acl_rule(**parts)
        prio = rng.randrange(4)
        a = rng.choice(["permit", "deny", "to_host"])
        try:
            acl.add(value, mask, prio, a)
        except ProgramError:
            continue
        rules.append((prio, seq, value, mask, a))

    def straight_line(frame, port):
        pkt = Ether(frame)
        egress, punt, drop, reason = port, 0, 0, 0
        a, d = macs.get(int(pkt.dst.replace(":", ""), 16), ("no_op", 0))
        if a == "forward":
            egress = d
        elif a == "drop":
            drop, reason = 1, L2_DROP
        if IP in pkt:
            dst = ipaddress.IPv4Address(pkt[IP].dst)
            best = max((n for n in routes if dst in n), key=lambda n: n.prefixlen,
                       default=None)
            if best is None:
                punt, reason = 1, NO_ROUTE
            elif routes[best][0] == "drop":
                drop, reason = 1, L3_DROP
            elif pkt[IP].ihl != 5:  # RFC 1812 5.2.4: options are the host's
                punt, reason = 1, CHECK_REASONS["IPV4_OPTIONS"]
            elif internet_checksum(bytes(pkt[IP])[:20]) != 0:  # 5.2.2
                drop, reason = 1, CHECK_REASONS["IPV4_CHECKSUM"]
            elif not 20 <= pkt[IP].len <= len(frame) - (18 if Dot1Q in pkt else 14):
                drop, reason = 1, CHECK_REASONS["IP_LENGTH"]
            elif pkt[IP].ttl <= 1:  # 5.3.1
                punt, reason = 1, CHECK_REASONS["TTL_EXPIRED"]
            else:
                _, egress, dmac, smac = routes[best]
                pkt = Ether(routed_by_scapy(bytes(pkt), dmac, smac))
            l4 = pkt[IP].payload if pkt[IP].frag == 0 and pkt[IP].proto in (6, 17) else None
            sport = l4.sport if l4 is not None else 0
            dport = l4.dport if l4 is not None else 0
            key = acl.key(src=int(ipaddress.IPv4Address(pkt[IP].src)), dst=int(dst),
                          protocol=pkt[IP].proto, srcPort=sport, dstPort=dport)
            hit = [r for r in sorted(rules, key=lambda r: (-r[0], r[1]))
                   if key & r[3] == r[2]]
            act = hit[0][4] if hit else "permit"
            if act == "deny":
                drop, reason = 1, ACL_DENY
            elif act == "to_host":
                punt, reason = 1, ACL_TO_HOST
        if drop:
            return None, None, reason
        return bytes(pkt), {"punt": punt, "egressPort": egress, "reason": reason}, None

    mac_list, net_list = list(macs), list(routes)
    checked = 0
    for k in range(400):
        stack = rng.choice([["eth", "ipv4", "udp"], ["eth", "ipv4", "tcp"], ["eth", "ipv4"],
                            ["eth", "vlan", "ipv4", "udp"], ["eth"], ["eth", "ipv6", "tcp"]])
        pkt = packets.build_stack(rng, stack, rng.randrange(60), ipv4_options=0)
        fault = "none"
        if rng.random() < 0.7:
            pkt[Ether].dst = mac_str(rng.choice(mac_list))
        if IP in pkt:
            if rng.random() < 0.8:
                net = rng.choice(net_list)
                pkt[IP].dst = str(net.network_address + rng.randrange(net.num_addresses))
            pkt[IP].frag = 0 if rng.random() < 0.9 else rng.randrange(1, 100)
            # Now and then a header a router must not forward as it is.
            fault = rng.choice(["none"] * 6 + ["ttl", "length", "checksum", "options"])
            if fault == "ttl":
                pkt[IP].ttl = rng.choice([0, 1])
            elif fault == "length":
                pkt[IP].len = rng.choice([rng.randrange(20), len(pkt[IP]) + rng.randrange(1, 9)])
            elif fault == "options":
                pkt[IP].options = [IPOption_NOP()] * 4
                pkt[IP].len = None
            del pkt[IP].chksum
            if fault == "checksum":
                pkt[IP].chksum = IP(bytes(pkt[IP])).chksum ^ 0x8001
        frame = bytes(pkt)
        port = rng.randrange(16)
        if parse(frame)["meta.parseError"] != NO_ERROR:
            continue
        want = straight_line(frame, port)
        got = run(p, frame, port)
        assert got == want, f"frame {k}: {frame.hex()}"
        # A header that came with a wrong checksum leaves with it when the frame is bridged
        # (only a routed frame is checked); any other leaves with a right one.
        if got[0] is not None and IP in Ether(got[0]) and fault != "checksum":
            assert ip_checksum_ok(got[0], 18 if Dot1Q in Ether(got[0]) else 14)
        checked += 1
    assert checked > 350


# ------------------------------------------------------------------ the session stage

# A table on the ingress port whose `learn` action lets a frame create a session, then a
# session stage of 4 sessions in 4 ways: every key has the same 4 candidate slots (one
# slot per way), so the fifth flow finds no free way whatever the hash.
SESSION_REASON = 0x27


def session_program():
    port_part = {"fields": ["meta.ingressPort"], "width": 4}

    def part(*fields, width):
        return {"fields": list(fields), "width": width}

    return Program({"name": "s", "tables": [{
        "name": "gate", "index": 0, "kind": "exact", "size": 16, "keyWidth": 4,
        "dataWidth": 1, "counters": False, "applyIf": [], "key": [port_part],
        "actions": [{"name": "no_op", "id": 0, "params": [], "ops": []},
                    {"name": "learn", "id": 1, "params": [],
                     "ops": [{"op": "setConst", "field": "meta.learn", "value": 1}]}],
        "default": {"action": "no_op", "data": 0}}],
        "sessions": [{
            "name": "sessions", "index": 1, "size": 4, "ways": 4, "keyWidth": 128,
            "latency": 4, "after": "gate", "applyIf": ["hdr.ipv4.valid"],
            "learn": "meta.learn", "reason": SESSION_REASON,
            "fields": {"zone": part("hdr.vxlan.vni", width=24),
                       "protocol": part("hdr.ipv4.protocol", width=8),
                       "srcAddr": part("hdr.ipv4.src", width=32),
                       "dstAddr": part("hdr.ipv4.dst", width=32),
                       "srcPort": part("hdr.tcp.srcPort", "hdr.udp.srcPort", width=16),
                       "dstPort": part("hdr.tcp.dstPort", "hdr.udp.dstPort", width=16),
                       "tcpFlags": part("hdr.tcp.flags", width=8)},
            "result": {"hit": "meta.sessionHit", "reply": "meta.sessionReply",
                       "state": "meta.sessionState", "learned": "meta.sessionLearned",
                       "insertFailed": "meta.sessionFailed"}}]})


def session_fields(phv):
    return tuple(phv[f"meta.{n}"] for n in ("sessionHit", "sessionReply", "sessionState",
                                           "sessionLearned", "sessionFailed"))


def udp_frame(src, dst, sport, dport):
    return bytes(Ether(dst=mac_str(MAC_A), src=mac_str(MAC_B)) / IP(src=src, dst=dst) /
                 UDP(sport=sport, dport=dport) / Raw(bytes(30)))


def test_session_stage_learns_hits_and_refuses():
    """Port 1 may learn, port 0 may not: a UDP flow from port 1 is learned (state UDP), its
    reply from port 0 hits as a reply; a flow from port 0 is not learned; the fifth flow
    from port 1 finds no free way and is punted with the stage's reason, then dropped once
    the table's policy is drop; the live sessions stay."""
    p = session_program()
    p["gate"].add(1, "learn")
    table = p.sessions["sessions"].table
    first = p.apply(parse(udp_frame("10.0.0.1", "192.0.2.1", 1000, 53), ingress_port=1))
    assert session_fields(first) == (0, 0, 6, 1, 0) and first["meta.learn"] == 1
    reply = p.apply(parse(udp_frame("192.0.2.1", "10.0.0.1", 53, 1000), ingress_port=0))
    assert session_fields(reply) == (1, 1, 6, 0, 0)
    stranger = p.apply(parse(udp_frame("192.0.2.9", "10.0.0.1", 53, 1001), ingress_port=0))
    assert session_fields(stranger) == (0, 0, 0, 0, 0) and not stranger["meta.punt"]
    for i in range(3):
        p.apply(parse(udp_frame("10.0.0.1", "192.0.2.1", 2000 + i, 53), ingress_port=1))
    assert table.occupancy == 4
    full = p.apply(parse(udp_frame("10.0.0.2", "192.0.2.1", 3000, 53), ingress_port=1))
    assert session_fields(full) == (0, 0, 0, 0, 1)
    assert (full["meta.punt"], full["meta.drop"], full["meta.reason"]) == (1, 0, SESSION_REASON)
    table.drop_on_full = True
    full = p.apply(parse(udp_frame("10.0.0.2", "192.0.2.1", 3001, 53), ingress_port=1))
    assert (full["meta.punt"], full["meta.drop"], full["meta.reason"]) == (0, 1, SESSION_REASON)
    assert deparse(udp_frame("10.0.0.2", "192.0.2.1", 3001, 53), full)[2] == SESSION_REASON
    assert (table.learned, table.insert_failed, table.occupancy) == (4, 2, 4)
    again = p.apply(parse(udp_frame("10.0.0.1", "192.0.2.1", 1000, 53), ingress_port=1))
    assert session_fields(again) == (1, 0, 6, 0, 0)


def test_session_stage_in_memory_late_or_busy_changes_nothing():
    """A session table in memory (a "memory" member): a frame whose bucket came back late,
    or whose change found no tracked bucket free (busy), is punted with that reason, its
    session fields 0, and learns nothing; the same frame learns once neither holds."""
    desc = session_program().desc
    desc["sessions"][0]["memory"] = {"lateReason": 0x41, "busyReason": 0x42}
    desc["sessions"][0]["ways"] = 2
    p = Program(desc)
    p["gate"].add(1, "learn")
    stage = p.sessions["sessions"]
    frame = udp_frame("10.0.0.1", "192.0.2.1", 1000, 53)
    for flag, reason in (("late", 0x41), ("busy", 0x42)):
        setattr(stage, flag, True)
        out = p.apply(parse(frame, ingress_port=1))
        setattr(stage, flag, False)
        assert (out["meta.punt"], out["meta.reason"]) == (1, reason)
        assert session_fields(out) == (0, 0, 0, 0, 0) and stage.table.occupancy == 0
    out = p.apply(parse(frame, ingress_port=1))
    assert session_fields(out) == (0, 0, 6, 1, 0) and stage.table.occupancy == 1


def test_session_stage_skips_frames_it_does_not_apply_to():
    """A frame that is not IPv4 (applyIf) and a frame with a parse error pass the stage
    untouched and uncounted; answer() leaves the table as it was."""
    p = session_program()
    p["gate"].add(1, "learn")
    table = p.sessions["sessions"].table
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=mac_str(MAC_B)) / ARP() / Raw(bytes(20)))
    out = p.apply(parse(arp, ingress_port=1))
    assert session_fields(out) == (0, 0, 0, 0, 0)
    runt = udp_frame("10.0.0.1", "192.0.2.1", 1000, 53)[:40]
    out = p.apply(parse(runt, ingress_port=1))
    assert out["meta.parseError"] != NO_ERROR and session_fields(out) == (0, 0, 0, 0, 0)
    assert table.hits + table.misses == 0
    p.answer(parse(udp_frame("10.0.0.1", "192.0.2.1", 1000, 53), ingress_port=1))
    assert table.occupancy == 0


def test_session_stage_description_checked():
    """A learn bit wider than one bit, a zone field wider than the zone, a reason of the
    parse errors, and a stage after a table the program does not have are refused."""
    desc = session_program().desc
    bad = json.loads(json.dumps(desc))
    s = bad["sessions"][0]
    s["learn"] = "meta.reason"
    s["fields"]["zone"] = {"fields": ["hdr.eth.dst"], "width": 24}
    s["reason"] = 3
    problems = Program(bad, strict=False).problems
    assert any("meta.reason is not a 1-bit field" in m for m in problems), problems
    assert any("zone field hdr.eth.dst is wider than 24 bits" in m for m in problems), problems
    assert any("reason 3" in m for m in problems), problems
    s["after"] = "nope"
    with pytest.raises(ProgramError, match="follows a table"):
        Program(bad, strict=False)


# ------------------------------------------------------------------ ternary range fields


def range_table():
    """A ternary table on protocol (8 bits) and two 16-bit port range fields."""
    desc = {"name": "ports", "kind": "ternary", "size": 64, "keyWidth": 40, "dataWidth": 8,
            "key": [{"fields": ["hdr.ipv4.protocol"], "width": 8},
                    {"fields": ["hdr.tcp.srcPort"], "width": 16, "range": True},
                    {"fields": ["hdr.tcp.dstPort"], "width": 16, "range": True}],
            "actions": [{"name": "a", "id": 0, "params": [{"name": "v", "width": 8, "offset": 0}],
                         "ops": []}],
            "default": {"action": "a", "data": 0}}
    return TernaryTable(desc)


def test_range_fields_match_lo_to_hi():
    """A range field matches lo <= x <= hi (lo in the value's bits, hi in the mask's), the
    other fields value/mask, against a brute-force check of random rules and keys."""
    seed = seeds.choose_seed()
    seeds.announce(seed, "range_fields_match_lo_to_hi")
    rng = random.Random(seed)
    t = range_table()
    rules = []
    for i in range(40):
        proto, pm = rng.choice([(6, 0xFF), (17, 0xFF), (0, 0)])
        sport = rng.choice([(0, 65535), (80, 80), (0, 1023), (1024, 65535)])
        lo = rng.randrange(65536)
        dport = rng.choice([(lo, min(65535, lo + rng.randrange(3000))), (443, 443), (0, 65535)])
        value = proto << 32 | sport[0] << 16 | dport[0]
        mask = pm << 32 | sport[1] << 16 | dport[1]
        if (value, mask, 40 - i) in [r[:3] for r in rules]:
            continue
        t.add(value, mask, 40 - i, "a", i)
        rules.append((value, mask, 40 - i, proto, pm, sport, dport))
    for _ in range(3000):
        key = rng.choice([6, 17, 1]) << 32 | rng.choice([80, 1023, 1024, rng.randrange(65536)]) << 16 | \
            rng.choice([443, rng.randrange(65536)])
        want = next((r for r in rules if key >> 32 & r[4] == r[3]
                     and r[5][0] <= key >> 16 & 0xFFFF <= r[5][1] and r[6][0] <= key & 0xFFFF <= r[6][1]), None)
        got = t.match(key)
        assert (got.ident if got else None) == (want[:3] if want else None), hex(key)


def test_range_field_errors():
    t = range_table()
    with pytest.raises(ProgramError, match="lo > hi"):
        t.add(6 << 32 | 100, 0xFF << 32 | 99 | 0xFFFF << 16, 1, "a")
    with pytest.raises(ProgramError, match="outside mask"):
        t.add(7 << 32, 6 << 32 | 0xFFFFFFFF, 1, "a")
    # lo above hi in the bits is fine when lo <= hi: a value bit outside the mask there.
    t.add(0x7 << 16 | 0x7, 0xA << 16 | 0x9, 1, "a")
