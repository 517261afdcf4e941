# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_packet_path: AXI4-Stream in, parser + deparser, AXI4-Stream out.

Without a pipeline stage between them, every frame must come out exactly as it went
in, with tuser egress port = ingress port, unless the parser flags it: punted frames
come out with punt set and the reason, dropped frames pulse drop_valid with the reason.
The expected result of each frame is the reference model's parse + deparse.
"""

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from tb.common import cocotb_util, packets
from tb.common.axis import BeatCounter, DropMonitor, OutputChecker, in_tuser_bytes
from tb.common.sim import soak
from tb.model import (
    BAD_FRAME, ERROR_NAMES, NO_ERROR, OVERSIZE, TOO_DEEP, deparse, parse,
)


class PacketPathTb:
    def __init__(self, dut, rng):
        self.dut = dut
        self.rng = rng
        self.lay = cocotb_util.layout()
        self.lanes = self.lay.data_width // 8
        cocotb_util.quiet_cocotbext(dut)
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        self.drops = DropMonitor(dut)
        self.out = OutputChecker(dut, self.sink, self.drops, self.lanes, self.lay.port_width)

    async def start(self):
        await cocotb_util.start(self.dut)

    def gaps(self, in_busy=0.0, out_busy=0.0):
        self.src.set_pause_generator(cocotb_util.pause_pattern(self.rng, in_busy))
        self.sink.set_pause_generator(cocotb_util.pause_pattern(self.rng, out_busy))
        self.out.busy = max(in_busy, out_busy)

    def random_gaps(self):
        self.gaps(self.rng.choice([0.0, 0.1, 0.3, 0.6]), self.rng.choice([0.0, 0.1, 0.3, 0.6]))

    def parse(self, frame, port=0, bad=False):
        return parse(frame, ingress_port=port, bad_frame=bad, header_bytes=self.lay.header_bytes,
                     runt_bytes=self.lay.runt_bytes, max_frame=self.lay.max_frame)

    def expected(self, frame, port, bad):
        return deparse(frame, self.parse(frame, port, bad))

    async def send(self, name, frame, port=0, bad=False, tuser=None, expect_bad=None):
        """Queue `frame` with ingress `port` and bad_frame on its last beat (or the given
        per-byte `tuser`); `expect_bad` overrides what the model is told about bad_frame."""
        if tuser is None:
            tuser = in_tuser_bytes(len(frame), self.lanes, port, bad)
        exp = self.expected(frame, port, bad if expect_bad is None else expect_bad)
        self.out.expect(name, frame, exp)
        await self.src.send(AxiStreamFrame(frame, tuser=tuser))
        return exp

    async def check(self, timeout=None):
        return await self.out.check(timeout)


def passes(exp, port):
    out, tuser, drop = exp
    return tuser == {"punt": 0, "egressPort": port, "reason": 0}


def passing_frame(tb, lo, hi=None, port=0):
    """A random frame the parser accepts without error (no punt, no drop); exactly `lo`
    bytes long when `hi` is None."""
    rng = tb.rng
    while True:
        if hi is None:
            frame = packets.random_length_frame(rng, lo)
        else:
            frame = packets.random_frame(rng, lo, hi)
        if tb.parse(frame, port)["meta.parseError"] == NO_ERROR:
            return frame


@cocotb.test()
async def test_pass_through_random(dut):
    """Random well-formed frames 60..1518 bytes (a few up to 9000), random ports, random
    input gaps and output back-pressure: byte-exact, egress port = ingress port,
    punt 0."""
    await pass_through_random(dut, "pass_through_random", rounds=4,
                              jumbo=lambda rnd, k: k == 30 and rnd < 2)


@soak
@cocotb.test()
async def test_jumbo_flood_soak(dut):
    """test_pass_through_random for 40 rounds with every fifth frame a jumbo frame."""
    await pass_through_random(dut, "jumbo_flood_soak", rounds=40, jumbo=lambda rnd, k: k % 5 == 0)


async def pass_through_random(dut, name, rounds, jumbo):
    """`rounds` rounds of 60 frames; frame k of round rnd is a jumbo frame if jumbo(rnd, k)."""
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = PacketPathTb(dut, rng)
    await tb.start()
    for rnd in range(rounds):
        tb.random_gaps()
        for k in range(60):
            if jumbo(rnd, k):
                frame = passing_frame(tb, rng.randint(8000, 9000))
            else:
                frame = passing_frame(tb, 60, rng.choice([100, 300, 1518]))
            port = rng.randrange(16)
            exp = await tb.send(f"pass#{rnd}.{k}", frame, port)
            assert exp[0] == frame and passes(exp, port)
        await tb.check()


@cocotb.test()
async def test_every_length(dut):
    """Every frame length from 60 to 2 * 64 + 1 bytes (all tkeep patterns on both
    widths), then 1..59 (runts: punted whole)."""
    rng, _ = cocotb_util.test_rng(dut, "every_length")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.gaps(0.2, 0.2)
    for n in list(range(60, 130)) + list(range(1, 60)):
        await tb.send(f"len{n}", packets.random_length_frame(rng, n), rng.randrange(16))
    await tb.check()


@cocotb.test()
async def test_jumbo_and_oversize(dut):
    """9000-byte frames, exactly 9216 bytes (the maximum: passes), 9217 and 9300 bytes
    (OVERSIZE: dropped), each followed by a normal frame that must pass."""
    rng, _ = cocotb_util.test_rng(dut, "jumbo_and_oversize")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.gaps(0.1, 0.2)
    for n in (9000, 9216, 9217, 9000, 9300):
        frame = passing_frame(tb, n) if n <= 9216 else packets.random_length_frame(rng, n)
        exp = await tb.send(f"len{n}", frame, 5)
        assert (exp[2] == OVERSIZE) == (n > 9216)
        assert passes(await tb.send(f"after_len{n}", passing_frame(tb, 60, 200), 6), 6)
    await tb.check()


@cocotb.test()
async def test_malformed_then_next(dut):
    """Each malformed case (runt, truncated at each header, IHL < 5, IP version, too
    deep, bad_frame) gets its punt reason or drop reason, and the frame after it passes
    byte-exact."""
    rng, _ = cocotb_util.test_rng(dut, "malformed_then_next")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    seen = set()
    for name, (frame, kw) in packets.malformed_cases(rng).items():
        port = rng.randrange(16)
        exp = await tb.send(name, frame, port, bad=kw.get("bad_frame", False))
        seen.add(exp[2] if exp[0] is None else exp[1]["reason"])
        nxt = passing_frame(tb, 60, 300)
        assert passes(await tb.send(f"after_{name}", nxt, port ^ 1), port ^ 1)
    dut._log.info("reasons exercised: %s", sorted(ERROR_NAMES[r] for r in seen))
    assert {1, 2, 3, 4, 5, 6} <= seen
    await tb.check()


@cocotb.test()
async def test_ingress_port_from_first_beat(dut):
    """tuser port bits differ on later beats: the first beat's port is the one used."""
    rng, _ = cocotb_util.test_rng(dut, "ingress_port_from_first_beat")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    for k in range(40):
        frame = packets.random_frame(rng, tb.lanes + 1, 600)
        port = rng.randrange(16)
        other = (port + rng.randrange(1, 16)) % 16
        tuser = in_tuser_bytes(len(frame), tb.lanes, port, port_later=other)
        await tb.send(f"port{port}_later{other}#{k}", frame, port, tuser=tuser)
    await tb.check()


@cocotb.test()
async def test_bad_frame_only_counts_on_last_beat(dut):
    """bit 0 of tuser on beats other than the last must not drop the frame; on the last
    beat it must (BAD_FRAME)."""
    rng, _ = cocotb_util.test_rng(dut, "bad_frame_only_counts_on_last_beat")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.random_gaps()
    for k in range(30):
        frame = packets.random_frame(rng, 3 * tb.lanes + 1, 600)
        nbeats = (len(frame) + tb.lanes - 1) // tb.lanes
        early = set(rng.sample(range(nbeats - 1), rng.randint(1, nbeats - 1)))
        tuser = in_tuser_bytes(len(frame), tb.lanes, 2, bad_on_beats=early)
        await tb.send(f"bad_on_beats_{sorted(early)}#{k}", frame, 2, tuser=tuser,
                      expect_bad=False)
        tuser = in_tuser_bytes(len(frame), tb.lanes, 2, bad_on_beats=early | {nbeats - 1})
        exp = await tb.send(f"bad_on_last#{k}", frame, 2, tuser=tuser, expect_bad=True)
        assert exp[2] == BAD_FRAME
    await tb.check()


@cocotb.test()
async def test_back_to_back_no_gaps(dut):
    """Mixed sizes with no input gaps and no back-pressure: correctness only."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back_no_gaps")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.gaps()
    for k in range(200):
        await tb.send(f"b2b#{k}", packets.random_frame(rng, 60, rng.choice([64, 128, 700])),
                      k % 16)
    await tb.check()


@cocotb.test()
async def test_min_frames_at_line_rate(dut):
    """64-byte frames back to back, no gaps, no back-pressure: after the first output
    beat, the output carries a beat on every clock (one frame per clock on w512, eight
    beats per frame on w64) and the input is never stalled."""
    rng, _ = cocotb_util.test_rng(dut, "min_frames_at_line_rate")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.gaps()
    n = 300
    ins = BeatCounter(dut, "s_axis")
    outs = BeatCounter(dut, "m_axis")
    for k in range(n):
        frame = packets.frame_of(rng, ["eth", "ipv4", "udp"], 0, min_len=64, ipv4_options=0)
        assert len(frame) == 64
        await tb.send(f"line_rate#{k}", frame, k % 16)
    await tb.check()
    assert_bus_limited(dut, ins, outs, n, n * ((64 + tb.lanes - 1) // tb.lanes))


def assert_bus_limited(dut, ins, outs, frames, beats):
    """`frames` frames of `beats` beats in all went in and out with no idle clock between
    the first beat and the last on either side: the bus-limited rate, frames / beats frames
    per clock."""
    assert len(outs.beats) == beats
    in_span = ins.beats[-1] - ins.beats[0] + 1
    out_span = outs.beats[-1] - outs.beats[0] + 1
    dut._log.info("input: %d beats in %d clocks; output: %d beats in %d clocks "
                  "(%.3f frames/clock, bus-limited %.3f)", len(ins.beats), in_span,
                  len(outs.beats), out_span, frames / out_span, frames / beats)
    out_gaps = [(a, b) for a, b in zip(outs.beats, outs.beats[1:]) if b != a + 1]
    in_gaps = [(a, b) for a, b in zip(ins.beats, ins.beats[1:]) if b != a + 1]
    assert not in_gaps, f"input stalled {len(in_gaps)} times, first between clocks " \
                        f"{in_gaps[0]}"
    assert not out_gaps, f"{len(out_gaps)} output bubbles, first between clocks " \
                         f"{out_gaps[0]}; {len(outs.beats)} beats in {out_span} clocks"


@cocotb.test()
async def test_deep_frames_at_line_rate(dut):
    """VXLAN over IPv6 carrying IPv6 and TCP with 40 bytes of options, whose headers end at
    byte 184, all of one length (the seed's, 184 to 483 bytes), back to back with no gaps
    and no back-pressure. Where the header window holds them (w512, 192 bytes) the model
    parses them whole and they pass; where it does not (w64, 128 bytes) they are punted
    TOO_DEEP. Either way the input is never stalled and the output carries a beat on every
    clock: one frame per ceil(length / lanes) clocks. (One length, since with mixed lengths
    a frame longer than every one before it holds the output once, for the clocks by which
    its record, issued at its last beat, comes later: docs/packet-path.md.)"""
    rng, _ = cocotb_util.test_rng(dut, "deep_frames_at_line_rate")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    tb.gaps()
    ins = BeatCounter(dut, "s_axis")
    outs = BeatCounter(dut, "m_axis")
    whole = tb.lay.header_bytes >= packets.DEEP_IPV6_TUNNEL_HEADERS
    n, beats = 200, 0
    payload = rng.randrange(0, 300)
    dut._log.info("%d frames of %d bytes", n, packets.DEEP_IPV6_TUNNEL_HEADERS + payload)
    for k in range(n):
        frame = packets.deep_ipv6_tunnel(rng, payload)
        phv = tb.parse(frame)
        assert phv["meta.parseError"] == (NO_ERROR if whole else TOO_DEEP)
        assert phv["hdr.inner_tcp.valid"] == whole
        port = k % 16
        exp = await tb.send(f"deep#{k}", frame, port)
        assert passes(exp, port) == whole
        beats += (len(frame) + tb.lanes - 1) // tb.lanes
    await tb.check()
    assert_bus_limited(dut, ins, outs, n, beats)


@cocotb.test()
async def test_idle_outputs_quiet(dut):
    """After reset and with no input, nothing comes out and nothing is dropped."""
    rng, _ = cocotb_util.test_rng(dut, "idle_outputs_quiet")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    for _ in range(200):
        await RisingEdge(dut.clk)
        assert not int(dut.m_axis_tvalid.value), "m_axis_tvalid with no input"
        assert not int(dut.drop_valid.value), "drop_valid with no input"
    assert int(dut.s_axis_tready.value) in (0, 1)
    # Then one frame goes through.
    frame = packets.random_frame(rng, 60, 200)
    await tb.send("first_after_idle", frame, 7)
    await tb.check()
    await ClockCycles(dut.clk, 5)


@cocotb.test()
async def test_decision_per_frame_before_its_bytes(dut):
    """decision_valid pulses once per frame, in frame order, with payload 1 exactly for the
    frames the model drops (bad_frame, oversize, malformed ones it drops) and 0 for the
    rest; for every frame that comes out, its decision comes in an earlier clock than its
    first output beat, even with the output stalled for long stretches (what a wrapper
    carrying per-frame state beside the path relies on)."""
    rng, _ = cocotb_util.test_rng(dut, "decision_per_frame_before_its_bytes")
    tb = PacketPathTb(dut, rng)
    await tb.start()
    clock = {"now": 0}
    decisions, first_beats = [], []

    async def watch():
        in_frame = False
        while True:
            await RisingEdge(dut.clk)
            clock["now"] += 1
            if int(dut.decision_valid.value):
                decisions.append((clock["now"], int(dut.decision_payload.value)))
            if int(dut.m_axis_tvalid.value) and int(dut.m_axis_tready.value):
                if not in_frame:
                    first_beats.append(clock["now"])
                in_frame = not int(dut.m_axis_tlast.value)

    cocotb.start_soon(watch())
    dropped = []
    cases = list(packets.malformed_cases(rng).items())
    for rnd in range(3):
        tb.gaps(rng.choice([0.0, 0.3]), rng.choice([0.0, 0.5, 0.9]))
        for k in range(40):
            r = rng.random()
            if r < 0.2:
                name, (frame, kw) = rng.choice(cases)
                bad = kw.get("bad_frame", False)
            else:
                frame = packets.random_frame(rng, 60, rng.choice([100, 700, 3000]))
                name, bad = "frame", r < 0.35
            exp = await tb.send(f"r{rnd} #{k} {name}", frame, rng.randrange(16), bad=bad)
            dropped.append(exp[0] is None)
        await tb.check()
    assert [d for _, d in decisions] == [int(d) for d in dropped], \
        f"{len(decisions)} decisions for {len(dropped)} frames, or a payload differs"
    kept = [c for c, d in decisions if not d]
    assert len(kept) == len(first_beats)
    late = [(k, c, b) for k, (c, b) in enumerate(zip(kept, first_beats)) if c >= b]
    assert not late, f"{len(late)} frames left before their decision, first (frame, " \
                     f"decision clock, first beat clock) {late[0]}"
