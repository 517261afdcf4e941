# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_deparser: PHV stream + frame stream in, frames and drops out.

PHVs come from the reference model's parse of each frame, optionally edited the way a
pipeline stage would (rewrites, VXLAN encap/decap, drop, punt). The expected output of
every (frame, PHV) is the model's deparse; encap/decap outputs are also checked with
scapy (lengths, IPv4 header checksum rebuilt from scratch).
"""

import cocotb
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource
from cocotbext.axi.stream import define_stream
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

from tb.common import cocotb_util, packets
from tb.common.axis import DropMonitor, OutputChecker
from tb.model import (
    INSTANCES, deparse, parse, set_field, valid_instances, vxlan_decap,
    vxlan_encap,
)

PhvBus, PhvTransaction, PhvSource, PhvSink, PhvMonitor = define_stream(
    "Phv", signals=["valid", "ready", "payload"])


class DeparserTb:
    def __init__(self, dut, rng):
        self.dut = dut
        self.rng = rng
        self.lay = cocotb_util.layout()
        self.lanes = self.lay.data_width // 8
        cocotb_util.quiet_cocotbext(dut)
        self.phv_src = PhvSource(PhvBus.from_prefix(dut, "s_phv"), dut.clk, dut.rst)
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk,
                                   dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        self.drops = DropMonitor(dut)
        self.out = OutputChecker(dut, self.sink, self.drops, self.lanes,
                                 self.lay.port_width)

    async def start(self):
        await cocotb_util.start(self.dut)

    def gaps(self, phv_busy=0.0, in_busy=0.0, out_busy=0.0):
        self.phv_src.set_pause_generator(cocotb_util.pause_pattern(self.rng, phv_busy))
        self.src.set_pause_generator(cocotb_util.pause_pattern(self.rng, in_busy))
        self.sink.set_pause_generator(cocotb_util.pause_pattern(self.rng, out_busy))
        self.out.busy = max(phv_busy, in_busy, out_busy)

    def random_gaps(self):
        self.gaps(*(self.rng.choice([0.0, 0.0, 0.2, 0.5, 0.8]) for _ in range(3)))

    async def send(self, name, frame, phv):
        self.out.expect(name, frame, deparse(frame, phv))
        await self.phv_src.send(PhvTransaction(payload=self.lay.pack(phv)))
        await self.src.send(AxiStreamFrame(frame))

    async def check(self, timeout=None):
        return await self.out.check(timeout)

    def parse(self, frame, **kw):
        return parse(frame, header_bytes=self.lay.header_bytes, **kw)


def ip_checksum_ok(ip_bytes):
    """scapy: rebuild the IPv4 header with chksum=None and compare with the received."""
    p = IP(ip_bytes)
    received = p.chksum
    p.chksum = None
    return IP(bytes(p)).chksum == received


def random_rewrite(rng, phv):
    """Change random writable fields of valid headers (what an L3 router stage does)."""
    new = dict(phv)
    for inst, htype in INSTANCES:
        if not phv.get(f"hdr.{inst}.valid") or rng.random() < 0.3:
            continue
        if htype == "ethernet":
            new[f"hdr.{inst}.dst"] = rng.getrandbits(48)
            new[f"hdr.{inst}.src"] = rng.getrandbits(48)
        elif htype == "vlan":
            new[f"hdr.{inst}.pcp"] = rng.randrange(8)
            new[f"hdr.{inst}.dei"] = rng.randrange(2)
            new[f"hdr.{inst}.vid"] = rng.randrange(4096)
        elif htype == "ipv4":
            which = rng.choice(["ttl", "dscp", "ecn", "all", "ttl-1"])
            if which == "ttl-1":
                new[f"hdr.{inst}.ttl"] = (phv[f"hdr.{inst}.ttl"] - 1) & 0xFF
            if which in ("ttl", "all"):
                new[f"hdr.{inst}.ttl"] = rng.randrange(256)
            if which in ("dscp", "all"):
                new[f"hdr.{inst}.dscp"] = rng.randrange(64)
            if which in ("ecn", "all"):
                new[f"hdr.{inst}.ecn"] = rng.randrange(4)
        elif htype == "ipv6":
            new[f"hdr.{inst}.trafficClass"] = rng.randrange(256)
            new[f"hdr.{inst}.hopLimit"] = rng.randrange(256)
    new["meta.egressPort"] = rng.randrange(16)
    return new


def random_encap(rng, phv):
    return vxlan_encap(phv, eth_dst=rng.getrandbits(48), eth_src=rng.getrandbits(48),
                       ip_src=rng.getrandbits(32), ip_dst=rng.getrandbits(32),
                       vni=rng.getrandbits(24), udp_src=rng.randrange(49152, 65536),
                       ttl=rng.randrange(1, 256), dscp=rng.randrange(64),
                       ecn=rng.randrange(4), identification=rng.randrange(65536),
                       ip_flags=rng.choice([0, 2]), egress_port=rng.randrange(16))


def check_encap_with_scapy(out, inner):
    p = Ether(out)
    assert p.type == 0x0800, "outer etherType"
    assert IP in p and UDP in p and VXLAN in p, p.summary()
    assert ip_checksum_ok(out[14:]), "outer IPv4 checksum"
    assert p[IP].len == len(out) - 14, f"outer totalLen {p[IP].len} != {len(out) - 14}"
    assert p[IP].ihl == 5 and p[IP].version == 4 and p[IP].proto == 17
    assert p[UDP].len == len(out) - 34, f"udp length {p[UDP].len} != {len(out) - 34}"
    assert p[UDP].chksum == 0 and p[UDP].dport == 4789
    assert out[50:] == inner, "inner frame not carried unchanged"


def vxlan_frame(tb, rng, max_payload=300, **kw):
    stacks = [s for s in packets.all_stacks() if "vxlan" in s]
    while True:
        stack = rng.choice(stacks)
        frame = packets.frame_of(rng, stack, rng.randrange(0, max_payload), **kw)
        phv = tb.parse(frame)
        if phv["hdr.inner_eth.valid"]:
            return stack, frame, phv


@cocotb.test()
async def test_identity(dut):
    """Unmodified PHVs: every frame comes out byte for byte, random gaps and
    back-pressure."""
    rng, _ = cocotb_util.test_rng(dut, "identity")
    tb = DeparserTb(dut, rng)
    await tb.start()
    for rnd in range(3):
        tb.random_gaps()
        for k in range(60):
            frame = packets.random_frame(rng, 60, rng.choice([128, 256, 1518]))
            await tb.send(f"identity#{rnd}.{k}", frame, tb.parse(frame, ingress_port=k % 16))
        await tb.check()


@cocotb.test()
async def test_rewrites(dut):
    """Changed MACs, VLAN fields, TTL/DSCP/ECN, IPv6 traffic class and hop limit, egress
    port: the model's output, and every IPv4 header checksum still verifies."""
    rng, _ = cocotb_util.test_rng(dut, "rewrites")
    tb = DeparserTb(dut, rng)
    await tb.start()
    sent = []
    for rnd in range(3):
        tb.random_gaps()
        for k in range(70):
            frame = packets.random_frame(rng, 60, 600)
            phv = random_rewrite(rng, tb.parse(frame))
            sent.append(phv)
            await tb.send(f"rewrite#{rnd}.{k}", frame, phv)
        outs = await tb.check()
        for phv, out in zip(sent, outs):
            for inst in ("ipv4", "inner_ipv4"):
                if phv[f"hdr.{inst}.valid"]:
                    o = phv[f"hdr.{inst}.offset"]
                    assert ip_checksum_ok(out[o:]), f"{inst} checksum after rewrite"
        sent = []


@cocotb.test()
async def test_ttl_checksum_corner_cases(dut):
    """IPv4 checksum update corner cases: TTL 0 <-> 255, checksum 0x0000 / 0xFFFF after
    the update, fields changed and changed back (no update), a wrong received checksum
    (kept wrong by the same amount)."""
    rng, _ = cocotb_util.test_rng(dut, "ttl_checksum_corner_cases")
    tb = DeparserTb(dut, rng)
    await tb.start()
    n = 0
    hits = set()
    while n < 300:
        frame = packets.frame_of(rng, ["eth", "ipv4", "udp"], 20, ipv4_options=0,
                                 bad_ip_checksum=rng.random() < 0.2)
        phv = tb.parse(frame)
        new = dict(phv)
        case = rng.choice(["wrap_down", "wrap_up", "same", "search", "zero"])
        if case == "zero":
            ttl = rng.randrange(256)
            frame = packets.ipv4_checksum_zero_after_ttl(rng, ttl)
            phv = tb.parse(frame)
            new = dict(phv)
            new["hdr.ipv4.ttl"] = ttl
            assert deparse(frame, new)[0][24:26] == b"\x00\x00"
            hits.add(b"\x00\x00")
        elif case == "wrap_down":
            new["hdr.ipv4.ttl"] = (phv["hdr.ipv4.ttl"] - 1) & 0xFF
        elif case == "wrap_up":
            new["hdr.ipv4.ttl"] = (phv["hdr.ipv4.ttl"] + 1) & 0xFF
        elif case == "same":
            new["hdr.ipv4.ttl"] = phv["hdr.ipv4.ttlOrig"]
        else:
            # Look for a TTL whose updated checksum is 0x0000 or 0xFFFF.
            for ttl in range(256):
                new["hdr.ipv4.ttl"] = ttl
                out = deparse(frame, new)[0]
                if out[24:26] in (b"\x00\x00", b"\xff\xff"):
                    hits.add(out[24:26])
                    break
        await tb.send(f"checksum#{n}:{case}", frame, new)
        n += 1
        if n % 100 == 0:
            await tb.check()
    dut._log.info("checksum extremes hit: %s", sorted(h.hex() for h in hits))


@cocotb.test()
async def test_vxlan_encap(dut):
    """Push outer Ethernet/IPv4/UDP/VXLAN: lengths and checksum filled, inner unchanged."""
    rng, _ = cocotb_util.test_rng(dut, "vxlan_encap")
    tb = DeparserTb(dut, rng)
    await tb.start()
    for rnd in range(2):
        tb.random_gaps()
        frames = []
        for k in range(60):
            frame = packets.random_frame(rng, 60, rng.choice([200, 1500]))
            phv = random_encap(rng, tb.parse(frame))
            if rng.random() < 0.5:
                phv = random_rewrite(rng, phv)
            frames.append(deparse(frame, phv)[0][50:])
            await tb.send(f"encap#{rnd}.{k}", frame, phv)
        outs = await tb.check()
        for out, inner in zip(outs, frames):
            check_encap_with_scapy(out, inner)


@cocotb.test()
async def test_vxlan_decap(dut):
    """Invalidate eth .. vxlan: the inner frame comes out, with inner rewrites."""
    rng, _ = cocotb_util.test_rng(dut, "vxlan_decap")
    tb = DeparserTb(dut, rng)
    await tb.start()
    for rnd in range(2):
        tb.random_gaps()
        expect_inner = []
        for k in range(60):
            stack, frame, phv = vxlan_frame(tb, rng)
            dec = vxlan_decap(phv)
            if rng.random() < 0.5:
                dec = random_rewrite(rng, dec)  # only valid (inner) headers change
            expect_inner.append((phv, dec))
            await tb.send(f"decap#{rnd}.{k}:{packets.stack_name(stack)}", frame, dec)
        outs = await tb.check()
        for (phv, dec), out in zip(expect_inner, outs):
            p = Ether(out)
            assert p.dst == ":".join(
                f"{(dec['hdr.inner_eth.dst'] >> (40 - 8 * i)) & 0xFF:02x}" for i in range(6))
            if dec["hdr.inner_ipv4.valid"]:
                o = dec["hdr.inner_ipv4.offset"] - dec["hdr.inner_eth.offset"]
                assert ip_checksum_ok(out[o:]), "inner IPv4 checksum after decap"


@cocotb.test()
async def test_vxlan_decap_encap(dut):
    """Decap then encap with new outer headers (a VTEP re-encapsulating)."""
    rng, _ = cocotb_util.test_rng(dut, "vxlan_decap_encap")
    tb = DeparserTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    inners = []
    for k in range(60):
        stack, frame, phv = vxlan_frame(tb, rng)
        both = random_encap(rng, vxlan_decap(phv))
        inners.append(frame[phv["hdr.inner_eth.offset"]:])
        await tb.send(f"reencap#{k}:{packets.stack_name(stack)}", frame, both)
    outs = await tb.check()
    for out, inner in zip(outs, inners):
        check_encap_with_scapy(out, inner)


@cocotb.test()
async def test_push_subsets(dut):
    """Any subset of the push headers, every push field random (including the ones the
    deparser must fill: ipv4 version, ihl, totalLen, hdrChecksum, udp length and
    checksum), combined with popping a leading run of parsed headers."""
    rng, _ = cocotb_util.test_rng(dut, "push_subsets")
    tb = DeparserTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    lay = tb.lay
    push_names = [n for n in lay.fields if n.startswith("push.")]
    checks = []
    for k in range(120):
        frame = packets.random_frame(rng, 60, 400)
        phv = tb.parse(frame)
        valid = valid_instances(phv)
        for inst in valid[:rng.randrange(0, len(valid) + 1)]:
            phv[f"hdr.{inst}.valid"] = 0
        for name in push_names:
            phv[name] = rng.getrandbits(lay.fields[name][1])
        subset = []
        for hdr in ("eth", "ipv4", "udp", "vxlan"):
            on = rng.random() < 0.5
            phv[f"push.{hdr}.valid"] = int(on)
            if on:
                subset.append(hdr)
        exp = deparse(frame, phv)
        checks.append((subset, exp[0]))
        await tb.send(f"push_{'+'.join(subset) or 'none'}#{k}", frame, phv)
    outs = await tb.check()
    emitted = [(subset, exp) for subset, exp in checks if exp is not None]  # drops leave no output
    assert len(emitted) == len(outs)
    for (subset, exp), out in zip(emitted, outs):
        if "ipv4" in subset:
            o = 14 if "eth" in subset else 0
            assert ip_checksum_ok(out[o:]), f"pushed IPv4 checksum ({subset})"
            assert IP(out[o:]).len == len(out) - o


@cocotb.test()
async def test_drop_punt_empty(dut):
    """Drops (any reason), punts, and EMPTY (everything popped, nothing pushed) mixed
    with normal frames; the frames after each pass unchanged."""
    rng, _ = cocotb_util.test_rng(dut, "drop_punt_empty")
    tb = DeparserTb(dut, rng)
    await tb.start()
    for rnd in range(2):
        tb.random_gaps()
        for k in range(120):
            frame = packets.random_frame(rng, 60, 400)
            phv = tb.parse(frame, ingress_port=rng.randrange(16))
            kind = rng.choice(["pass", "pass", "drop", "punt", "empty", "empty_pushed"])
            if kind == "drop":
                phv = set_field(set_field(phv, "meta.drop", 1), "meta.reason",
                                rng.randrange(1, 256))
            elif kind == "punt":
                phv = set_field(set_field(phv, "meta.punt", 1), "meta.reason",
                                rng.randrange(256))
            elif kind in ("empty", "empty_pushed"):
                # Headers only, all popped: no bytes left.
                end = phv["meta.payloadOffset"]
                if end == 0:
                    continue
                frame = frame[:end]
                phv = tb.parse(frame, ingress_port=phv["meta.ingressPort"], runt_bytes=0)
                for inst, _ in INSTANCES:
                    phv[f"hdr.{inst}.valid"] = 0
                if kind == "empty_pushed":
                    phv = random_encap(rng, phv)
            await tb.send(f"{kind}#{rnd}.{k}", frame, phv)
        await tb.check()


@cocotb.test()
async def test_pop_rules(dut):
    """Invalidating a leading run pops it; invalidating a header after a valid one does
    not change the bytes; nothing valid pops up to meta.payloadOffset."""
    rng, _ = cocotb_util.test_rng(dut, "pop_rules")
    tb = DeparserTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    for k in range(150):
        frame = packets.random_frame(rng, 60, 300)
        phv = tb.parse(frame)
        valid = valid_instances(phv)
        kind = rng.choice(["leading", "middle", "none"])
        new = dict(phv)
        if kind == "leading":
            for inst in valid[:rng.randrange(1, len(valid) + 1)]:
                new[f"hdr.{inst}.valid"] = 0
        elif kind == "middle" and len(valid) > 1:
            new[f"hdr.{rng.choice(valid[1:])}.valid"] = 0
        else:
            for inst in valid:
                new[f"hdr.{inst}.valid"] = 0
        await tb.send(f"pop_{kind}#{k}:{'/'.join(valid)}", frame, new)
    await tb.check()


@cocotb.test()
async def test_jumbo(dut):
    """A handful of 9000-byte frames: identity, encap, decap, rewrite."""
    rng, _ = cocotb_util.test_rng(dut, "jumbo")
    tb = DeparserTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    for k in range(2):
        frame = packets.random_length_frame(rng, 9000)
        await tb.send(f"jumbo_identity#{k}", frame, tb.parse(frame))
    frame = packets.random_length_frame(rng, 9000)
    await tb.send("jumbo_encap", frame, random_encap(rng, tb.parse(frame)))
    _, frame, phv = vxlan_frame(tb, rng, ipv4_options=0)
    frame = frame + packets.rand_bytes(rng, 9000 - len(frame))
    phv = tb.parse(frame)
    await tb.send("jumbo_decap", frame, random_rewrite(rng, vxlan_decap(phv)))
    await tb.check()


@cocotb.test()
async def test_phv_and_frame_skew(dut):
    """PHVs far ahead of their frames, and frames far ahead of their PHVs."""
    rng, _ = cocotb_util.test_rng(dut, "phv_and_frame_skew")
    tb = DeparserTb(dut, rng)
    await tb.start()
    for ahead in ("phv", "frame"):
        tb.gaps(out_busy=0.3)
        held = tb.src if ahead == "phv" else tb.phv_src
        held.set_pause_generator(None)
        held.pause = True
        for k in range(20):
            frame = packets.random_frame(rng, 60, 200)
            tb.out.expect(f"{ahead}_ahead#{k}", frame, deparse(frame, tb.parse(frame)))
            tb.phv_src.send_nowait(PhvTransaction(payload=tb.lay.pack(tb.parse(frame))))
            tb.src.send_nowait(AxiStreamFrame(frame))
        await ClockCycles(dut.clk, 300)
        held.pause = False
        await tb.check()


@cocotb.test()
async def test_back_to_back_min_frames(dut):
    """60- and 64-byte frames with no gaps and no back-pressure (functional check)."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back_min_frames")
    tb = DeparserTb(dut, rng)
    await tb.start()
    tb.gaps()
    for k in range(200):
        frame = packets.random_length_frame(rng, rng.choice([60, 64]))
        await tb.send(f"min#{k}", frame, tb.parse(frame))
    await tb.check()
