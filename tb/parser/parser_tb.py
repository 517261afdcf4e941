# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_parser: header record in, PHV out, fixed latency.

Every record's PHV is compared with the reference model (tb/model) on the valid bits,
every field of the headers the model marks valid, the push valid bits and meta.*.
"""

import random
from collections import Counter

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge

from scapy.layers.inet import IP, TCP, UDP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from tb.common import cocotb_util, packets
from tb.common.phv import compared_fields, diff
from tb.common.scapy_view import assert_model_matches_scapy
from tb.common.sim import soak
from tb.model import (ERROR_NAMES, HEADER_TYPES, INSTANCE_TYPE, INSTANCES, parse_record,
                      valid_instances)


class Record:
    """A header record: `data` is what the input stage would have read of the frame (the
    header window takes its first headerBytes bytes, zero past its end)."""

    def __init__(self, name, data, frame_len, port=0, bad=False, oversize=False):
        self.name = name
        self.data = bytes(data)
        self.frame_len = frame_len
        self.port = port
        self.bad = bool(bad)
        self.oversize = bool(oversize)

    @classmethod
    def of_frame(cls, name, frame, port=0, bad=False, oversize=None, max_frame=9216):
        if oversize is None:
            oversize = len(frame) > max_frame
        return cls(name, frame, len(frame) & 0xFFFF, port, bad, oversize)

    def window(self, header_bytes):
        return self.data[:header_bytes].ljust(header_bytes, b"\0")

    def expected(self, lay):
        return parse_record(self.window(lay.header_bytes), self.frame_len, self.port, self.bad,
                            self.oversize, header_bytes=lay.header_bytes,
                            runt_bytes=lay.runt_bytes)


class ParserTb:
    def __init__(self, dut):
        self.dut = dut
        self.lay = cocotb_util.layout()
        self.log = dut._log

    async def start(self):
        await cocotb_util.start(self.dut, inputs_low=(
            "in_valid", "in_payload_window", "in_payload_frameLen",
            "in_payload_ingressPort", "in_payload_badFrame", "in_payload_oversize"))

    def _drive(self, rec):
        d = self.dut
        if rec is None:
            d.in_valid.value = 0
            return
        d.in_valid.value = 1
        d.in_payload_window.value = int.from_bytes(rec.window(self.lay.header_bytes), "little")
        d.in_payload_frameLen.value = rec.frame_len
        d.in_payload_ingressPort.value = rec.port
        d.in_payload_badFrame.value = int(rec.bad)
        d.in_payload_oversize.value = int(rec.oversize)

    async def run(self, records, gaps=None):
        """Drive `records` one per clock (or with idle cycles from `gaps`), collect the
        outputs, check latency and count, compare each PHV with the model.

        Returns the list of mismatch descriptions (empty when everything matched).
        """
        d = self.dut
        latency = self.lay.parser_latency
        sent = []      # (edge at which in_valid was sampled, record)
        got = []       # (edge at which out_valid was sampled, payload)
        queue = list(records)
        edge = 0
        idle_after = 0
        # Keep running until every output had time to appear, plus a margin that
        # would reveal extra outputs.
        while queue or edge <= (sent[-1][0] if sent else 0) + latency + 8:
            await RisingEdge(d.clk)
            edge += 1
            # Sampled values at this edge.
            if int(d.out_valid.value):
                got.append((edge, int(d.out_payload.value)))
            if queue and idle_after == 0:
                rec = queue.pop(0)
                self._drive(rec)
                sent.append((edge + 1, rec))
                if gaps is not None:
                    idle_after = gaps()
            else:
                self._drive(None)
                idle_after = max(0, idle_after - 1)

        errors = []
        fields = Counter()
        if len(got) != len(sent):
            errors.append(f"{len(sent)} records in, {len(got)} PHVs out")
        for (e_in, rec), (e_out, payload) in zip(sent, got):
            if e_out - e_in != latency:
                errors.append(f"{rec.name}: latency {e_out - e_in} clocks, layout says "
                              f"{latency}")
            exp = rec.expected(self.lay)
            out = self.lay.unpack(payload)
            bad = diff(exp, out, compared_fields(exp))
            fields.update(b.split(":")[0] for b in bad)
            if bad:
                errors.append(
                    f"{rec.name} (frameLen {rec.frame_len}, port {rec.port}, bad "
                    f"{int(rec.bad)}, oversize {int(rec.oversize)}; model: valid "
                    f"{valid_instances(exp)}, parseError "
                    f"{ERROR_NAMES.get(exp['meta.parseError'])}): " + "; ".join(bad)
                    + f"\n    window {rec.window(self.lay.header_bytes)[:rec.frame_len].hex()}")
        for e in errors[:40]:
            self.log.error("%s", e)
        if fields:
            summary = ", ".join(f"{k} x{v}" for k, v in fields.most_common())
            self.log.error("PHV fields that differ (records): %s", summary)
            errors.insert(0, f"PHV fields that differ (records): {summary}")
        return errors


def _check(errors, what):
    assert not errors, f"{what}: {len(errors)} mismatches, first: {errors[0]}"


@cocotb.test()
async def test_header_combinations(dut):
    """Every header stack of the parse graph, several random instances each."""
    rng, _ = cocotb_util.test_rng(dut, "header_combinations")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for stack in packets.all_stacks():
        for k in range(4):
            frame = packets.frame_of(rng, stack, rng.randrange(0, 100))
            recs.append(Record.of_frame(f"{packets.stack_name(stack)}#{k}", frame,
                                        port=rng.randrange(16)))
    _check(await tb.run(recs), "header combinations")


@cocotb.test()
async def test_random_frames(dut):
    """Random well-formed frames, random lengths, back to back."""
    rng, _ = cocotb_util.test_rng(dut, "random_frames")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for k in range(400):
        frame = packets.random_frame(rng, 60, rng.choice([128, 300, 1518, 9000]))
        recs.append(Record.of_frame(f"random#{k}", frame, port=rng.randrange(16)))
    _check(await tb.run(recs), "random frames")


@cocotb.test()
async def test_fuzz_windows(dut):
    """Header windows of random bytes steered into the graph (etherTypes, protocols,
    ports, versions and IHLs chosen to reach deep), random frame lengths and flags."""
    rng, _ = cocotb_util.test_rng(dut, "fuzz_windows")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for k in range(800):
        frame = bytearray(packets.random_frame(rng, 60, 200))
        frame += packets.rand_bytes(rng, tb.lay.header_bytes)
        # Flip a few bytes in the header area to hit error paths.
        for _ in range(rng.choice([0, 1, 1, 2, 4])):
            i = rng.randrange(0, tb.lay.header_bytes)
            frame[i] = rng.choice([rng.randrange(256), 0x45, 0x4F, 0x40, 0x60, 0x81, 0x08,
                                   0x86, 0xDD, 0x11, 0x06, 0x12, 0xB5])
        flen = rng.choice([len(frame), rng.randrange(0, tb.lay.header_bytes + 12),
                           rng.randrange(0, 65536)])
        recs.append(Record(f"fuzz#{k}", frame[:flen], flen, rng.randrange(16), rng.random() < 0.05,
                           rng.random() < 0.05))
    _check(await tb.run(recs), "fuzz windows")


# Fields that choose the next header or size one: every bit of each is flipped in turn.
STEERING_FIELDS = {
    "ethernet": ["etherType"], "vlan": ["etherType"],
    "ipv4": ["version", "ihl", "totalLen", "fragOffset", "protocol"],
    "ipv6": ["version", "payloadLen", "nextHeader"],
    "udp": ["dstPort", "length"], "tcp": ["dataOffset"], "vxlan": ["flags"],
}

# The short mutation run's frames: the deepest stacks of each kind, IPv4 and TCP with
# options, the last one deeper than the w64 window (TOO_DEEP).
MUTATED_STACKS = [
    (["eth", "vlan", "vlan2", "ipv4", "tcp"], dict(ipv4_options=2, tcp_options=3)),
    (["eth", "vlan", "ipv6", "udp"], {}),
    (["eth", "ipv4", "udp", "vxlan", "inner_eth", "inner_vlan", "inner_ipv4", "inner_tcp"],
     dict(ipv4_options=0, inner=dict(ipv4_options=1, tcp_options=0))),
    (["eth", "ipv6", "udp", "vxlan", "inner_eth", "inner_ipv6", "inner_udp"], {}),
]


def _header_spans(phv):
    """(instance, offset, size) of each header the model parsed, in frame order."""
    spans = []
    for inst, htype in INSTANCES:
        if phv.get(f"hdr.{inst}.valid"):
            size = HEADER_TYPES[htype][0]
            if htype == "ipv4":
                size = phv[f"hdr.{inst}.ihl"] * 4
            elif htype == "tcp":
                size = phv[f"hdr.{inst}.dataOffset"] * 4
            spans.append((inst, phv[f"hdr.{inst}.offset"], size))
    return sorted(spans, key=lambda s: s[1])


def _where(spans, i):
    for inst, off, size in spans:
        if off <= i < off + size:
            return f"{inst}+{i - off}"
    return f"byte {i}"


def header_mutations(rng, name, frame, lay, port=0):
    """Records of `frame` broken at every offset of its header window: the frame cut there
    (and, with the rest of the frame still in the window, frameLen set there), a random
    byte and a random bit flip there, and every bit of each steering field of every header
    the model parses in it flipped in turn."""
    span = min(len(frame), lay.header_bytes)
    spans = _header_spans(Record.of_frame(name, frame).expected(lay))
    recs = []
    for i in range(span + 1):
        recs.append(Record.of_frame(f"{name}: cut at {_where(spans, i)}", frame[:i], port))
        recs.append(Record(f"{name}: frameLen {i}", frame, i, port))
    for i in range(span):
        b = bytearray(frame)
        b[i] = (b[i] + rng.randrange(1, 256)) & 0xFF
        recs.append(Record.of_frame(f"{name}: {_where(spans, i)} = {b[i]:#04x}", b, port))
        b = bytearray(frame)
        bit = rng.randrange(8)
        b[i] ^= 1 << bit
        recs.append(Record.of_frame(f"{name}: {_where(spans, i)} bit {bit} flipped", b, port))
    for inst, off, _ in spans:
        for field, bit_off, width in HEADER_TYPES[INSTANCE_TYPE[inst]][1]:
            if field not in STEERING_FIELDS[INSTANCE_TYPE[inst]]:
                continue
            for bit in range(width):
                pos = off * 8 + bit_off + bit
                b = bytearray(frame)
                b[pos // 8] ^= 0x80 >> (pos % 8)
                recs.append(Record.of_frame(f"{name}: {inst}.{field} bit {bit} flipped", b, port))
    return recs


@cocotb.test()
async def test_mutations_at_every_offset(dut):
    """Frames of the deepest header stacks (QinQ, IPv4 and TCP with options, IPv6, VXLAN
    over IPv4 and IPv6 with inner stacks) broken at every offset of the header window
    (header_mutations): every record's PHV is the model's."""
    rng, _ = cocotb_util.test_rng(dut, "mutations_at_every_offset")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for stack, opts in MUTATED_STACKS:
        frame = packets.frame_of(rng, stack, 8, **opts)
        recs += header_mutations(rng, packets.stack_name(stack), frame, tb.lay,
                                 port=rng.randrange(16))
    dut._log.info("%d mutated records of %d frames", len(recs), len(MUTATED_STACKS))
    _check(await tb.run(recs), "mutations at every offset")


@soak
@cocotb.test()
async def test_mutations_soak(dut):
    """header_mutations of 1,000 random frames of every known stack (random options and
    lengths) and 100 copies of each with 2 to 6 random bytes of its header window changed
    at once, half of them also cut at a random offset: every record's PHV is the model's.
    The frames come from the run's seed, a new one unless MATCHA_SEED gives it."""
    rng, _ = cocotb_util.test_rng(dut, "mutations_soak")
    tb = ParserTb(dut)
    await tb.start()
    total = 0
    for k in range(1000):
        frame = packets.random_frame(rng, 60, rng.choice([80, 160, 300]))
        recs = header_mutations(rng, f"frame#{k}", frame, tb.lay, port=rng.randrange(16))
        for j in range(100):
            b = bytearray(frame)
            for _ in range(rng.randrange(2, 7)):
                b[rng.randrange(min(len(b), tb.lay.header_bytes))] = rng.randrange(256)
            cut = rng.choice([len(b), rng.randrange(len(b) + 1)])
            recs.append(Record.of_frame(f"frame#{k}: bytes changed #{j}, cut at {cut}",
                                        b[:cut], rng.randrange(16)))
        total += len(recs)
        _check(await tb.run(recs), f"mutations of frame#{k}")
    dut._log.info("%d mutated records of 1,000 frames", total)


@cocotb.test()
async def test_malformed(dut):
    """Each named malformed case: runt, truncated at each header, IHL < 5, bad_frame,
    too deep, IP version, oversize, plus frames outside the graph that must not error."""
    rng, _ = cocotb_util.test_rng(dut, "malformed")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for name, (frame, kw) in packets.malformed_cases(rng).items():
        recs.append(Record.of_frame(name, frame, port=rng.randrange(16),
                                    bad=kw.get("bad_frame", False)))
    for name, frame in packets.fragment_frames(rng).items():
        recs.append(Record.of_frame(name, frame, port=3))
    udp4 = packets.frame_of(rng, ["eth", "ipv4", "udp"], 30)
    recs.append(Record.of_frame("oversize_flag", udp4, oversize=True))
    recs.append(Record.of_frame("oversize_and_bad_frame", udp4, bad=True, oversize=True))
    recs.append(Record.of_frame("oversize_runt", udp4[:30], oversize=True))
    recs.append(Record("frame_len_0", b"", 0))
    recs.append(Record("frame_len_65535", udp4, 65535))
    # Truncated exactly at every byte of a deep VXLAN stack.
    vx = packets.frame_of(rng, ["eth", "vlan", "ipv4", "udp", "vxlan", "inner_eth",
                                "inner_vlan", "inner_ipv4", "inner_udp"], 40)
    for n in range(0, min(len(vx), tb.lay.header_bytes + 2)):
        recs.append(Record.of_frame(f"vxlan_cut_at_{n}", vx[:n]))
    _check(await tb.run(recs), "malformed")


@cocotb.test()
async def test_qinq_and_deep_tunnel(dut):
    """Two VLAN tags, an 802.1ad S-tag (0x88A8) then an 802.1Q tag and two 802.1Q tags, in
    front of IPv4/UDP, IPv6/TCP and inside VXLAN: scapy's dissection finds both tags and
    what follows them where the model does (hdr.vlan and hdr.vlan2), and the parser gives
    the model's PHV. Then VXLAN over IPv6 carrying IPv6 and TCP with 40 bytes of options
    (headers to byte 184): the model, scapy and the parser parse it whole where the window
    holds it and stop with TOO_DEEP where it does not."""
    rng, _ = cocotb_util.test_rng(dut, "qinq_and_deep_tunnel")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for name, frame in packets.qinq_frames(rng).items():
        rec = Record.of_frame(name, frame, port=rng.randrange(16))
        phv = rec.expected(tb.lay)
        assert_model_matches_scapy(frame, phv, tb.lay.header_bytes)
        tagged = "inner_" if name.startswith("vxlan") else ""
        assert phv[f"hdr.{tagged}vlan.valid"] and phv[f"hdr.{tagged}vlan2.valid"], name
        assert phv["meta.parseError"] == 0, name
        recs.append(rec)
    whole = tb.lay.header_bytes >= packets.DEEP_IPV6_TUNNEL_HEADERS
    for k in range(8):
        frame = packets.deep_ipv6_tunnel(rng, rng.randrange(0, 100))
        rec = Record.of_frame(f"deep_ipv6_tunnel#{k}", frame)
        phv = rec.expected(tb.lay)
        assert_model_matches_scapy(frame, phv, tb.lay.header_bytes)
        assert phv["hdr.inner_tcp.valid"] == whole
        assert ERROR_NAMES[phv["meta.parseError"]] == ("NONE" if whole else "TOO_DEEP")
        recs.append(rec)
    _check(await tb.run(recs), "QinQ and a deep tunnel")


def _flip_checksum(frame, ip_offset):
    b = bytearray(frame)
    b[ip_offset + 10] ^= 0x40
    return bytes(b)


@cocotb.test()
async def test_forwarding_check_fields(dut):
    """hdr.*.checksumOk and hdr.*.lengthOk (docs/packet-path.md, "PHV") on named frames,
    outer and inner: a right and a wrong IPv4 header checksum (scapy's own verdict must be
    the model's), total length at, past and below the bounds RFC 1812 5.2.2 sets, IPv6
    payload length at and past the frame's end, and Ethernet padding after the datagram."""
    tb = ParserTb(dut)
    await tb.start()
    eth = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
    udp = UDP(sport=1, dport=2) / Raw(bytes(30))
    plain = bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2") / udp)
    room = len(plain) - 14
    v6 = eth / IPv6(src="2001:db8::1", dst="2001:db8::2") / udp
    inner = Ether() / IP(src="192.168.0.1", dst="192.168.0.2", ttl=9) / TCP() / Raw(bytes(8))
    tunnel = bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=9, dport=4789) /
                   VXLAN(vni=5) / inner)
    named = {
        "checksum right": (plain, {"hdr.ipv4.checksumOk": 1, "hdr.ipv4.lengthOk": 1}),
        "checksum wrong": (_flip_checksum(plain, 14), {"hdr.ipv4.checksumOk": 0}),
        "total length at the frame's end": (
            bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2", len=room) / udp),
            {"hdr.ipv4.lengthOk": 1}),
        "total length past the frame's end": (
            bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2", len=room + 1) / udp),
            {"hdr.ipv4.lengthOk": 0}),
        "total length 20": (bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2", len=20) / udp),
                            {"hdr.ipv4.lengthOk": 1}),
        "total length below the header": (
            bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2", len=19) / udp),
            {"hdr.ipv4.lengthOk": 0}),
        "total length below the header with options": (
            bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2", len=20,
                           options=[IPOption_NOP()] * 4) / udp), {"hdr.ipv4.lengthOk": 0}),
        "padded after the datagram": (
            bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2)) +
            bytes(30), {"hdr.ipv4.lengthOk": 1}),
        "IPv6 payload length at the frame's end": (bytes(v6), {"hdr.ipv6.lengthOk": 1}),
        "IPv6 payload length past the frame's end": (
            bytes(eth / IPv6(src="2001:db8::1", dst="2001:db8::2", plen=len(udp) + 1) / udp),
            {"hdr.ipv6.lengthOk": 0}),
        "inner checksum wrong": (_flip_checksum(tunnel, 14 + 20 + 8 + 8 + 14),
                                 {"hdr.ipv4.checksumOk": 1, "hdr.inner_ipv4.checksumOk": 0,
                                  "hdr.inner_ipv4.lengthOk": 1}),
    }
    recs = []
    for name, (frame, want) in named.items():
        rec = Record.of_frame(name, frame)
        got = {k: rec.expected(tb.lay)[k] for k in want}
        assert got == want, f"{name}: the model gives {got}, the RFC {want}"
        if "hdr.ipv4.checksumOk" in want:  # scapy's verdict: its checksum of the header
            pkt = Ether(frame)
            given = pkt[IP].chksum
            del pkt[IP].chksum
            assert (IP(bytes(pkt[IP])).chksum == given) == bool(want["hdr.ipv4.checksumOk"])
        recs.append(rec)
    _check(await tb.run(recs * 2), "forwarding check fields")


@cocotb.test()
async def test_garbage_past_frame_end(dut):
    """Bytes of the window past frameLen must not matter (the input stage zeroes them,
    but the parser must not depend on it): same PHV as with zeros."""
    rng, _ = cocotb_util.test_rng(dut, "garbage_past_frame_end")
    tb = ParserTb(dut)
    await tb.start()
    recs = []
    for k in range(200):
        frame = packets.random_frame(rng, 60, tb.lay.header_bytes - 1)
        cut = rng.randrange(1, len(frame) + 1)
        window = frame[:cut] + packets.rand_bytes(rng, tb.lay.header_bytes - cut)
        recs.append(Record(f"garbage#{k}_len{cut}", window, cut, rng.randrange(16)))
        # The model reads only bytes inside the frame, so its expectation is the same
        # as for a zero-filled window.
    _check(await tb.run(recs), "garbage past frame end")


@cocotb.test()
async def test_latency_with_gaps(dut):
    """Records with random idle cycles in between: the latency stays fixed and no
    output appears without an input."""
    rng, _ = cocotb_util.test_rng(dut, "latency_with_gaps")
    tb = ParserTb(dut)
    await tb.start()
    recs = [Record.of_frame(f"gap#{k}", packets.random_frame(rng, 60, 200),
                            port=k % 16) for k in range(200)]
    _check(await tb.run(recs, gaps=lambda: rng.choice([0, 0, 1, 2, 5, 13])),
           "latency with gaps")
    # Idle: nothing comes out.
    for _ in range(30):
        await RisingEdge(dut.clk)
        assert not int(dut.out_valid.value), "out_valid without an input"


@cocotb.test()
async def test_reset_clears_pipeline(dut):
    """Records in flight when reset is asserted do not come out after reset."""
    tb = ParserTb(dut)
    await tb.start()
    frame = packets.frame_of(random.Random(1), ["eth", "ipv4", "tcp"], 10)
    for _ in range(5):
        await RisingEdge(dut.clk)
        tb._drive(Record.of_frame("inflight", frame))
    await RisingEdge(dut.clk)
    tb._drive(None)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    for _ in range(tb.lay.parser_latency + 10):
        await RisingEdge(dut.clk)
        assert not int(dut.out_valid.value), "out_valid after reset for a pre-reset input"
