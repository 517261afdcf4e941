# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the reference model (pure Python, no simulator).

Parse results are cross-checked against scapy's own dissection; deparse results against
scapy's rebuild of checksums and lengths, and against hand-computed cases from the RFCs.
"""

import functools
import random

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from tb.common import packets
from tb.common.scapy_view import assert_model_matches_scapy
from tb import model
from tb.model import (
    BAD_FRAME, EMPTY, HEADER_TYPES, INSTANCES, IP_VERSION, IPV4_IHL, NO_ERROR, OVERSIZE,
    RUNT, TOO_DEEP, TRUNCATED, all_field_names, checksum_update, deparse,
    ones_add, ones_sum, pop_len, set_field, valid_instances,
    vxlan_decap, vxlan_encap,
)

STACKS = packets.all_stacks()
# The header window these tests parse with (the w64 configuration's); tests of a window
# of their own pass header_bytes.
WINDOW = 128
parse = functools.partial(model.parse, header_bytes=WINDOW)
parse_record = functools.partial(model.parse_record, header_bytes=WINDOW)


def assert_matches_scapy(frame, phv):
    assert_model_matches_scapy(frame, phv, WINDOW)


# ---------------------------------------------------------------------------------------
# Parse vs scapy


@pytest.mark.parametrize("stack", STACKS, ids=packets.stack_name)
def test_parse_matches_scapy_every_stack(stack, matcha_seed):
    rng = random.Random(f"{matcha_seed}:{packets.stack_name(stack)}")
    for _ in range(8):
        frame = packets.frame_of(rng, stack, rng.randrange(0, 200))
        phv = parse(frame)
        assert_matches_scapy(frame, phv)
        end = max(phv[f"hdr.{i}.offset"] + (phv[f"hdr.{i}.ihl"] * 4 if t == "ipv4" else
                                             phv[f"hdr.{i}.dataOffset"] * 4 if t == "tcp"
                                             else HEADER_TYPES[t][0])
                  for i, t in INSTANCES if phv[f"hdr.{i}.valid"])
        assert phv["meta.payloadOffset"] == end
        if valid_instances(phv)[-1] == stack[-1]:
            assert phv["meta.parseError"] == NO_ERROR
            assert phv["meta.punt"] == 0 and phv["meta.drop"] == 0
        else:
            # A deep stack whose last headers cross the window.
            assert phv["meta.parseError"] == TOO_DEEP, packets.stack_name(stack)
            missing = stack[len(valid_instances(phv))]
            min_size = HEADER_TYPES[dict(INSTANCES)[missing]][0]
            # (or the options of a header that has them)
            assert end + min_size > WINDOW or missing.endswith(("ipv4", "tcp"))
            assert len(frame) >= end + min_size


def test_parse_random_frames_match_scapy(matcha_seed):
    rng = random.Random(matcha_seed)
    for _ in range(400):
        frame = packets.random_frame(rng, 60, 300)
        assert_matches_scapy(frame, parse(frame))


@pytest.mark.parametrize("name", sorted(packets.fragment_frames(random.Random(0))))
def test_parse_fragments(name, matcha_seed):
    frame = packets.fragment_frames(random.Random(matcha_seed))[name]
    phv = parse(frame)
    assert_matches_scapy(frame, phv)
    expect = {
        "ipv4_first_fragment_udp": ["eth", "ipv4", "udp"],
        "ipv4_later_fragment": ["eth", "ipv4"],
        "ipv4_last_fragment_tcp_proto": ["eth", "ipv4"],
        "ipv6_fragment_ext": ["eth", "ipv6"],
        "vxlan_inner_ipv4_fragment": ["eth", "ipv4", "udp", "vxlan", "inner_eth",
                                      "inner_ipv4"],
    }[name]
    assert valid_instances(phv) == expect
    assert phv["meta.parseError"] == NO_ERROR


def test_parse_field_values_hand_checked():
    frame = bytes(
        Ether(dst="01:02:03:04:05:06", src="0a:0b:0c:0d:0e:0f")
        / Dot1Q(prio=6, dei=1, vlan=0xABC)
        / IP(tos=0xB9, id=0x1234, flags=2, ttl=17, src="192.0.2.1", dst="198.51.100.2")
        / UDP(sport=0xBEEF, dport=4789)
        / VXLAN(flags=0x08, vni=0x123456)
        / Ether(dst="aa:bb:cc:dd:ee:ff", src="11:22:33:44:55:66")
        / IPv6(tc=0xA5, fl=0xFEDCB, hlim=3, src="2001:db8::1", dst="2001:db8::2")
        / TCP(sport=1, dport=2, seq=0xDEADBEEF, ack=0xCAFEF00D, flags=0xFF, window=7,
              urgptr=9)
        / Raw(b"x" * 4))
    phv = parse(frame, ingress_port=9)
    assert phv["hdr.eth.dst"] == 0x010203040506
    assert phv["hdr.eth.src"] == 0x0A0B0C0D0E0F
    assert phv["hdr.eth.etherType"] == 0x8100
    assert (phv["hdr.vlan.pcp"], phv["hdr.vlan.dei"], phv["hdr.vlan.vid"]) == (6, 1, 0xABC)
    assert phv["hdr.vlan.offset"] == 14 and phv["hdr.ipv4.offset"] == 18
    assert (phv["hdr.ipv4.dscp"], phv["hdr.ipv4.ecn"]) == (0xB9 >> 2, 1)
    assert phv["hdr.ipv4.dscpOrig"] == 0xB9 >> 2 and phv["hdr.ipv4.ttlOrig"] == 17
    assert phv["hdr.ipv4.flags"] == 2 and phv["hdr.ipv4.fragOffset"] == 0
    assert phv["hdr.ipv4.src"] == 0xC0000201 and phv["hdr.ipv4.dst"] == 0xC6336402
    assert phv["hdr.udp.offset"] == 38 and phv["hdr.udp.dstPort"] == 4789
    assert phv["hdr.vxlan.offset"] == 46 and phv["hdr.vxlan.vni"] == 0x123456
    assert phv["hdr.vxlan.flags"] == 0x08
    assert phv["hdr.inner_eth.offset"] == 54 and phv["hdr.inner_ipv6.offset"] == 68
    assert phv["hdr.inner_ipv6.trafficClass"] == 0xA5
    assert phv["hdr.inner_ipv6.flowLabel"] == 0xFEDCB
    assert phv["hdr.inner_ipv6.src"] == 0x20010DB8 << 96 | 1
    assert phv["hdr.inner_tcp.offset"] == 108
    assert phv["hdr.inner_tcp.seqNo"] == 0xDEADBEEF
    assert phv["hdr.inner_tcp.flags"] == 0xFF and phv["hdr.inner_tcp.dataOffset"] == 5
    assert phv["meta.payloadOffset"] == 128
    assert phv["meta.ingressPort"] == 9 and phv["meta.egressPort"] == 9
    assert phv["meta.frameLen"] == len(frame) == 132
    assert phv["meta.parseError"] == NO_ERROR


# ---------------------------------------------------------------------------------------
# Parse errors (expected values from docs/packet-path.md, table "Parse errors")


def _udp4(rng=None):
    return packets.frame_of(rng or random.Random(1), ["eth", "ipv4", "udp"], 30)


def test_error_runt_keeps_headers_valid():
    frame = _udp4()[:59]
    phv = parse(frame)
    assert phv["meta.parseError"] == RUNT and phv["meta.punt"] == 1
    assert phv["meta.reason"] == RUNT and phv["meta.drop"] == 0
    assert valid_instances(phv) == ["eth", "ipv4", "udp"]
    assert parse(_udp4()[:60])["meta.parseError"] == NO_ERROR


def test_error_runt_has_priority_over_truncated():
    phv = parse(_udp4()[:30])
    assert phv["meta.parseError"] == RUNT
    assert valid_instances(phv) == ["eth"]
    phv = parse(_udp4()[:5])
    assert phv["meta.parseError"] == RUNT and valid_instances(phv) == []
    assert phv["meta.payloadOffset"] == 0


def test_error_truncated_at_each_header():
    rng = random.Random(2)
    vx = packets.frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_ipv4",
                                "inner_tcp"], 100, ipv4_options=0,
                          inner={"ipv4_options": 0, "tcp_options": 0})
    ends = [("eth", 14), ("ipv4", 34), ("udp", 42), ("vxlan", 50), ("inner_eth", 64),
            ("inner_ipv4", 84), ("inner_tcp", 104)]
    for k, (inst, end) in enumerate(ends):
        cut = vx[:end - 1]
        phv = parse(cut, runt_bytes=0)
        assert phv["meta.parseError"] == TRUNCATED, inst
        assert valid_instances(phv) == [i for i, _ in ends[:k]]
        whole = parse(vx[:end], runt_bytes=0)
        assert valid_instances(whole) == [i for i, _ in ends[:k + 1]]
        want = NO_ERROR if inst in ("inner_tcp",) else TRUNCATED
        assert whole["meta.parseError"] == want, inst


def test_error_ipv4_options_past_frame_end_and_window():
    frame = packets.with_byte(_udp4()[:72], 14, 0x4F)  # ihl 15 needs 74 bytes
    phv = parse(frame)
    assert phv["meta.parseError"] == TRUNCATED and valid_instances(phv) == ["eth"]
    big = packets.with_byte(_udp4() + bytes(200), 14, 0x4F)
    phv = parse(big, header_bytes=70)
    assert phv["meta.parseError"] == TOO_DEEP and valid_instances(phv) == ["eth"]


@pytest.mark.parametrize("ihl", range(5))
def test_error_ipv4_ihl(ihl):
    phv = parse(packets.with_byte(_udp4(), 14, 0x40 | ihl))
    assert phv["meta.parseError"] == IPV4_IHL and phv["meta.punt"] == 1
    assert valid_instances(phv) == ["eth"]
    assert phv["meta.payloadOffset"] == 14


def test_error_version_before_ihl():
    phv = parse(packets.with_byte(_udp4(), 14, 0x63))
    assert phv["meta.parseError"] == IP_VERSION


@pytest.mark.parametrize("version", [0, 5, 6, 15])
def test_error_ipv4_version(version):
    phv = parse(packets.with_byte(_udp4(), 14, (version << 4) | 5))
    assert phv["meta.parseError"] == IP_VERSION and valid_instances(phv) == ["eth"]


@pytest.mark.parametrize("version", [0, 4, 7, 15])
def test_error_ipv6_version(version):
    f = packets.frame_of(random.Random(3), ["eth", "ipv6", "udp"], 10)
    phv = parse(packets.with_byte(f, 14, (version << 4) | (f[14] & 15)))
    assert phv["meta.parseError"] == IP_VERSION and valid_instances(phv) == ["eth"]


def test_error_ipv6_truncated_before_version():
    f = packets.frame_of(random.Random(3), ["eth", "ipv6", "udp"], 10)
    phv = parse(packets.with_byte(f, 14, 0x45)[:53], runt_bytes=0)
    assert phv["meta.parseError"] == TRUNCATED


def test_error_bad_frame_drops_and_keeps_headers():
    phv = parse(_udp4(), bad_frame=True)
    assert phv["meta.parseError"] == BAD_FRAME and phv["meta.drop"] == 1
    assert phv["meta.punt"] == 0 and phv["meta.reason"] == BAD_FRAME
    assert valid_instances(phv) == ["eth", "ipv4", "udp"]
    # bad_frame first, then oversize, then runt
    assert parse(_udp4()[:20], bad_frame=True)["meta.parseError"] == BAD_FRAME
    assert parse(_udp4() + bytes(9216), bad_frame=True)["meta.parseError"] == BAD_FRAME


def test_error_oversize():
    frame = _udp4() + bytes(9216 - len(_udp4()))
    assert parse(frame)["meta.parseError"] == NO_ERROR
    phv = parse(frame + b"\x00")
    assert phv["meta.parseError"] == OVERSIZE and phv["meta.drop"] == 1
    assert valid_instances(phv) == ["eth", "ipv4", "udp"]
    assert parse_record(frame[:128], 100, oversize=True)["meta.parseError"] == OVERSIZE


def test_error_first_header_error_wins():
    # outer ipv4 fine, inner ipv4 version 6 -> IP_VERSION with everything before valid
    rng = random.Random(4)
    vx = packets.frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_ipv4",
                                "inner_tcp"], 30, ipv4_options=0)
    phv = parse(packets.with_byte(vx, 64, 0x65))
    assert phv["meta.parseError"] == IP_VERSION
    assert valid_instances(phv) == ["eth", "ipv4", "udp", "vxlan", "inner_eth"]


def test_too_deep_vs_exact_window_fit():
    rng = random.Random(5)
    exact = packets.frame_of(rng, ["eth", "ipv4", "udp", "vxlan", "inner_eth",
                                   "inner_vlan", "inner_ipv6", "inner_tcp"], 40,
                             ipv4_options=0, inner={"tcp_options": 0})
    phv = parse(exact)
    assert phv["meta.parseError"] == NO_ERROR and phv["hdr.inner_tcp.valid"] == 1
    assert phv["meta.payloadOffset"] == WINDOW
    deep = packets.frame_of(rng, ["eth", "vlan", "ipv4", "udp", "vxlan", "inner_eth",
                                  "inner_vlan", "inner_ipv6", "inner_tcp"], 40,
                            ipv4_options=0)
    phv = parse(deep)
    assert phv["meta.parseError"] == TOO_DEEP and phv["hdr.inner_tcp.valid"] == 0
    assert phv["hdr.inner_ipv6.valid"] == 1
    # Truncation is checked before the window: a short frame is TRUNCATED, not TOO_DEEP
    phv = parse(deep[:130])
    assert phv["meta.parseError"] == TRUNCATED


@pytest.mark.parametrize("name", sorted(packets.qinq_frames(random.Random(0))))
def test_qinq_both_tags_like_scapy(name, matcha_seed):
    """802.1ad + 802.1Q and 802.1Q + 802.1Q, outer and inside VXLAN: both tags valid, what
    follows them parsed, as scapy dissects it."""
    frame = packets.qinq_frames(random.Random(matcha_seed))[name]
    phv = parse(frame)
    assert_matches_scapy(frame, phv)
    tags = "inner_" if name.startswith("vxlan") else ""
    assert phv[f"hdr.{tags}vlan.valid"] == phv[f"hdr.{tags}vlan2.valid"] == 1
    assert phv["meta.parseError"] == NO_ERROR


def test_deep_ipv6_tunnel_needs_184_bytes(matcha_seed):
    """VXLAN over IPv6 carrying IPv6 and TCP with 40 bytes of options: whole in a 184-byte
    window (and the w512 configuration's 192); TOO_DEEP at the inner TCP header, whose
    options a 182-byte window cuts and whose fixed part w64's 128 bytes cut; as scapy sees
    it in each."""
    rng = random.Random(matcha_seed)
    frame = packets.deep_ipv6_tunnel(rng, 64)
    for window in (128, 182, 184, 192):
        phv = parse(frame, header_bytes=window)
        assert_model_matches_scapy(frame, phv, window)
        whole = window >= packets.DEEP_IPV6_TUNNEL_HEADERS
        assert phv["meta.parseError"] == (NO_ERROR if whole else TOO_DEEP), window
        assert phv["hdr.inner_tcp.valid"] == whole, window
    assert parse(frame, header_bytes=192)["meta.payloadOffset"] == 184
    for window in (128, 182):
        assert valid_instances(parse(frame, header_bytes=window))[-1] == "inner_ipv6"


@pytest.mark.parametrize("name", sorted(packets.malformed_cases(random.Random(0))))
def test_malformed_cases_parse_like_scapy(name, matcha_seed):
    frame, kw = packets.malformed_cases(random.Random(matcha_seed))[name]
    phv = parse(frame, **kw)
    assert_matches_scapy(frame, phv)


def test_not_in_graph_stops_without_error():
    cases = packets.malformed_cases(random.Random(6))
    expect = {
        "third_tag_stops_at_vlan2": ["eth", "vlan", "vlan2"],
        "qinq_s_tag_inside_stops_at_vlan": ["eth", "vlan"],
        "udp_srcport_4789_not_vxlan": ["eth", "ipv4", "udp"],
        "udp_dstport_8472_not_vxlan": ["eth", "ipv4", "udp"],
        "vxlan_port_in_inner_udp_not_parsed": ["eth", "ipv4", "udp", "vxlan", "inner_eth",
                                               "inner_ipv4", "inner_udp"],
    }
    for name, want in expect.items():
        phv = parse(cases[name][0])
        assert valid_instances(phv) == want, name
        assert phv["meta.parseError"] == NO_ERROR, name


def test_meta_ports_and_frame_len():
    frame = _udp4()
    for port in range(16):
        phv = parse(frame, ingress_port=port)
        assert phv["meta.ingressPort"] == port == phv["meta.egressPort"]
    assert parse(frame)["meta.frameLen"] == len(frame)


def test_field_names_cover_docs():
    names = all_field_names()
    assert "hdr.ipv4.ttlOrig" in names and "hdr.inner_ipv4.dscpOrig" in names
    assert "hdr.ipv6.ttlOrig" not in names
    assert names["push.ipv4.src"] == 32 and names["push.vxlan.vni"] == 24
    assert names["meta.frameLen"] == 16 and names["meta.payloadOffset"] == 8
    phv = parse(_udp4())
    assert set(phv) <= set(names)


# ---------------------------------------------------------------------------------------
# Deparse


def test_checksum_update_rfc1624_example():
    # RFC 1624 section 4: m = 0x5555 -> 0x3285, other words sum to 0xCD7A.
    hc = ~ones_add(0xCD7A, 0x5555) & 0xFFFF
    assert hc == 0xDD2F
    assert checksum_update(0xDD2F, [0x5555], [0x3285]) == 0x0000


@pytest.mark.parametrize("stack", STACKS, ids=packets.stack_name)
def test_deparse_identity(stack, matcha_seed):
    rng = random.Random(f"{matcha_seed}:{packets.stack_name(stack)}")
    for _ in range(4):
        frame = packets.frame_of(rng, stack, rng.randrange(0, 300))
        port = rng.randrange(16)
        phv = parse(frame, ingress_port=port)
        out, tuser, drop = deparse(frame, phv)
        assert out == frame and drop is None
        assert tuser == {"punt": phv["meta.punt"], "egressPort": port,
                         "reason": phv["meta.reason"]}


def test_deparse_identity_random_and_malformed(matcha_seed):
    rng = random.Random(matcha_seed)
    for _ in range(200):
        frame = packets.random_frame(rng, 60, 2000)
        assert deparse(frame, parse(frame))[0] == frame
    for name, (frame, kw) in packets.malformed_cases(rng).items():
        phv = parse(frame, **kw)
        out, tuser, drop = deparse(frame, phv)
        if kw.get("bad_frame"):
            assert out is None and drop == BAD_FRAME, name
        else:
            assert out == frame, name
            assert tuser["punt"] == int(phv["meta.parseError"] != 0), name
            assert tuser["reason"] == phv["meta.parseError"], name


def _ip_ok(ip_bytes):
    """scapy: rebuild the IPv4 header with chksum=None and compare with the received."""
    p = IP(ip_bytes)
    received = p.chksum
    p.chksum = None
    return IP(bytes(p)).chksum == received


def test_deparse_ttl_dscp_ecn_rewrite_fixes_checksum(matcha_seed):
    rng = random.Random(matcha_seed)
    for _ in range(300):
        stack = rng.choice([s for s in STACKS if "ipv4" in s])
        frame = packets.frame_of(rng, stack, rng.randrange(0, 100))
        phv = parse(frame)
        if not phv["hdr.ipv4.valid"]:
            continue
        new = dict(phv)
        new["hdr.ipv4.ttl"] = rng.randrange(256)
        new["hdr.ipv4.dscp"] = rng.randrange(64)
        new["hdr.ipv4.ecn"] = rng.randrange(4)
        out, _, _ = deparse(frame, new)
        o = phv["hdr.ipv4.offset"]
        ip = IP(out[o:])
        assert ip.ttl == new["hdr.ipv4.ttl"]
        assert ip.tos == (new["hdr.ipv4.dscp"] << 2) | new["hdr.ipv4.ecn"]
        assert _ip_ok(out[o:]), (frame.hex(), new["hdr.ipv4.ttl"])
        # Nothing else changed
        diff = [i for i in range(len(frame)) if frame[i] != out[i]]
        assert all(i in (o + 1, o + 8, o + 10, o + 11) for i in diff)


def test_deparse_checksum_only_when_changed():
    frame = packets.frame_of(random.Random(7), ["eth", "ipv4", "udp"], 30,
                             bad_ip_checksum=True)
    phv = parse(frame)
    # No writable field changed: even a wrong checksum is emitted as received.
    same = set_field(phv, "hdr.ipv4.ttl", phv["hdr.ipv4.ttlOrig"])
    assert deparse(frame, same)[0] == frame
    # Changed: the received error is carried over (incremental update, not recomputed).
    new = set_field(phv, "hdr.ipv4.ttl", (phv["hdr.ipv4.ttl"] + 1) & 0xFF)
    out = deparse(frame, new)[0]
    assert ones_sum(out[14:34]) == ones_sum(frame[14:34]) or \
        {ones_sum(out[14:34]), ones_sum(frame[14:34])} == {0, 0xFFFF}


def test_deparse_mac_and_vlan_and_ipv6_writeback(matcha_seed):
    rng = random.Random(matcha_seed)
    frame = packets.frame_of(rng, ["eth", "vlan", "ipv6", "udp", "vxlan", "inner_eth",
                                   "inner_ipv4", "inner_udp"], 20, inner={"ipv4_options": 0})
    phv = parse(frame)
    new = dict(phv)
    new.update({"hdr.eth.dst": 0x020000000001, "hdr.eth.src": 0x020000000002,
                "hdr.vlan.pcp": 7, "hdr.vlan.dei": 0, "hdr.vlan.vid": 0x123,
                "hdr.ipv6.trafficClass": 0x5A, "hdr.ipv6.hopLimit": 1,
                "hdr.inner_eth.dst": 0x0A0B0C0D0E0F, "hdr.inner_ipv4.ttl": 0})
    out = deparse(frame, new)[0]
    p = Ether(out)
    assert p.dst == "02:00:00:00:00:01" and p.src == "02:00:00:00:00:02"
    assert (p[Dot1Q].prio, p[Dot1Q].dei, p[Dot1Q].vlan) == (7, 0, 0x123)
    assert p[IPv6].tc == 0x5A and p[IPv6].hlim == 1
    assert p[VXLAN].payload.dst == "0a:0b:0c:0d:0e:0f"
    assert p[VXLAN].payload[IP].ttl == 0
    assert _ip_ok(out[phv["hdr.inner_ipv4.offset"]:])
    # Non-writable field changed in the PHV: not written back.
    other = set_field(phv, "hdr.ipv6.flowLabel", phv["hdr.ipv6.flowLabel"] ^ 1)
    assert deparse(frame, other)[0] == frame


def test_vxlan_encap_output_parses_in_scapy(matcha_seed):
    rng = random.Random(matcha_seed)
    for _ in range(50):
        frame = packets.random_frame(rng, 60, 1500)
        phv = parse(frame, ingress_port=3)
        enc = vxlan_encap(phv, eth_dst="02:aa:bb:cc:dd:ee", eth_src="02:11:22:33:44:55",
                          ip_src="10.0.0.1", ip_dst="10.0.0.2", vni=0xABCDE,
                          udp_src=50000, ttl=33, dscp=10, egress_port=5)
        out, tuser, drop = deparse(frame, enc)
        assert tuser["egressPort"] == 5
        assert len(out) == len(frame) + 50
        p = Ether(out)
        assert p.type == 0x0800 and p.dst == "02:aa:bb:cc:dd:ee"
        assert p[IP].len == len(frame) + 36 and p[IP].ihl == 5 and p[IP].version == 4
        assert p[IP].ttl == 33 and p[IP].tos == 40 and p[IP].proto == 17
        assert _ip_ok(out[14:])
        assert p[UDP].len == len(frame) + 16 and p[UDP].chksum == 0
        assert p[UDP].dport == 4789 and p[UDP].sport == 50000
        assert p[VXLAN].vni == 0xABCDE and int(p[VXLAN].flags) == 0x08
        assert out[50:] == frame


def test_vxlan_decap_output_is_inner_frame(matcha_seed):
    rng = random.Random(matcha_seed)
    vx_stacks = [s for s in STACKS if "vxlan" in s]
    for _ in range(50):
        stack = rng.choice(vx_stacks)
        frame = packets.frame_of(rng, stack, rng.randrange(0, 200))
        phv = parse(frame)
        if not phv["hdr.inner_eth.valid"]:
            continue
        dec = vxlan_decap(phv)
        assert pop_len(dec) == phv["hdr.inner_eth.offset"]
        out, _, _ = deparse(frame, dec)
        assert out == frame[phv["hdr.inner_eth.offset"]:]
        if phv["hdr.inner_ipv4.valid"]:
            dec["hdr.inner_ipv4.ttl"] = (dec["hdr.inner_ipv4.ttl"] - 1) & 0xFF
            out, _, _ = deparse(frame, dec)
            o = phv["hdr.inner_ipv4.offset"] - phv["hdr.inner_eth.offset"]
            assert _ip_ok(out[o:]) == _ip_ok(frame[phv["hdr.inner_ipv4.offset"]:])
            assert Ether(out)[IP].ttl == dec["hdr.inner_ipv4.ttl"]


def test_vxlan_decap_then_encap(matcha_seed):
    rng = random.Random(matcha_seed)
    frame = packets.frame_of(rng, ["eth", "vlan", "ipv4", "udp", "vxlan", "inner_eth",
                                   "inner_ipv6", "inner_tcp"], 100, ipv4_options=2)
    phv = parse(frame)
    both = vxlan_encap(vxlan_decap(phv), eth_dst=1, eth_src=2, ip_src=3, ip_dst=4, vni=99)
    out, _, _ = deparse(frame, both)
    inner = frame[phv["hdr.inner_eth.offset"]:]
    assert out[50:] == inner
    p = Ether(out)
    assert p[IP].len == len(inner) + 36 and _ip_ok(out[14:])
    assert p[VXLAN].vni == 99
    assert Ether(out[50:])[TCP].seq == Ether(inner)[TCP].seq


def test_pop_rules():
    frame = packets.frame_of(random.Random(8), ["eth", "ipv4", "udp", "vxlan", "inner_eth",
                                                "inner_ipv4", "inner_udp"], 20,
                             ipv4_options=0)
    phv = parse(frame)
    # Invalidating a header after a valid one has no effect on the bytes.
    mid = set_field(phv, "hdr.udp.valid", 0)
    assert deparse(frame, mid)[0] == frame
    # Invalidating the leading eth only: pop 14 bytes.
    lead = set_field(phv, "hdr.eth.valid", 0)
    assert deparse(frame, lead)[0] == frame[14:]
    # Nothing valid: pop up to meta.payloadOffset.
    none = dict(phv)
    for inst, _ in INSTANCES:
        none[f"hdr.{inst}.valid"] = 0
    assert deparse(frame, none)[0] == frame[phv["meta.payloadOffset"]:]


def test_deparse_drop_and_empty():
    frame = _udp4()
    phv = parse(frame, bad_frame=True)
    assert deparse(frame, phv) == (None, None, BAD_FRAME)
    phv = parse(frame)
    dropped = set_field(set_field(phv, "meta.drop", 1), "meta.reason", 0x42)
    assert deparse(frame, dropped) == (None, None, 0x42)
    # Everything popped and nothing pushed: EMPTY.
    hdr_only = frame[:42]
    phv = parse(hdr_only, runt_bytes=0)
    none = dict(phv)
    for inst, _ in INSTANCES:
        none[f"hdr.{inst}.valid"] = 0
    assert deparse(hdr_only, none) == (None, None, EMPTY)
    # ...but a push of the empty rest is not empty.
    enc = vxlan_encap(none, eth_dst=1, eth_src=2, ip_src=3, ip_dst=4, vni=5)
    out, _, _ = deparse(hdr_only, enc)
    assert len(out) == 50 and IP(out[14:]).len == 36


def test_deparse_punt_sets_tuser():
    frame = _udp4()
    phv = set_field(set_field(parse(frame), "meta.punt", 1), "meta.reason", 0x80)
    out, tuser, drop = deparse(frame, phv)
    assert out == frame and tuser == {"punt": 1, "egressPort": 0, "reason": 0x80}


def test_push_subsets_fill_lengths_and_checksum(matcha_seed):
    rng = random.Random(matcha_seed)
    push = {n: w for n, w in all_field_names().items() if n.startswith("push.")}
    for _ in range(200):
        frame = packets.random_frame(rng, 60, 300)
        phv = parse(frame)
        for n, w in push.items():
            phv[n] = rng.getrandbits(w)
        subset = [h for h in ("eth", "ipv4", "udp", "vxlan") if phv[f"push.{h}.valid"]]
        out, _, _ = deparse(frame, phv)
        sizes = {"eth": 14, "ipv4": 20, "udp": 8, "vxlan": 8}
        assert len(out) == len(frame) + sum(sizes[h] for h in subset)
        pos = 0
        for h in subset:
            if h == "ipv4":
                ip = IP(out[pos:])
                assert (ip.version, ip.ihl, ip.len) == (4, 5, len(out) - pos)
                assert _ip_ok(out[pos:])
            if h == "udp":
                u = UDP(out[pos:pos + 8])
                assert u.len == len(out) - pos and u.chksum == 0
            pos += sizes[h]
        assert out[pos:] == frame


def test_checksum_update_to_zero(matcha_seed):
    """An update whose result is 0x0000 (RFC 1624 eqn. 3 gives 0x0000, as a checksum
    computed from scratch does; eqn. 2 would give 0xFFFF)."""
    rng = random.Random(matcha_seed)
    for _ in range(20):
        ttl = rng.randrange(256)
        frame = packets.ipv4_checksum_zero_after_ttl(rng, ttl)
        assert _ip_ok(frame[14:])
        phv = parse(frame)
        assert phv["hdr.ipv4.ttl"] != ttl
        out = deparse(frame, set_field(phv, "hdr.ipv4.ttl", ttl))[0]
        assert out[24:26] == b"\x00\x00"
        assert _ip_ok(out[14:])
