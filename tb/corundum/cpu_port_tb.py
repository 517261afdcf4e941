# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of the CPU port of `mqnic_app_block` (CONTROL bit 1, ip/corundum/README.md,
"The CPU port on a card"): punted frames reach the host behind matcha-sim's 18-byte CPU
header, and host frames behind it are packet-outs, taken off their header and sent into
the pipeline (type 2) or to the port's MAC (type 3), or refused.

The harness and the oracle are corundum_tb.py's: CorundumTb.expect() reads each host frame's
header with the scapy layer written from sim/README.md (tb/common/cpu_header.py), runs the
program model on what enters the pipeline and frames every punted output as a packet-in;
check() compares every frame byte for byte with its timestamp or tag, one completion per
host frame, and the counters. One interface (IF_COUNT=1): port 0.
"""

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from scapy.layers.l2 import Ether

from tb.common import cpu_header
from tb.common.axis import wait_for
from tb.common.sim import soak
from tb.corundum.corundum_tb import MAC_A, NO_ROUTE, fates, fixed_tables, ipv4, load_random_tables, setup
from tb.pipeline import traffic
from tb.pipeline.l2l3 import ACL_TO_HOST
from tb.pipeline.traffic import mac_str

HEADER = 18


def to_egress(frame, egress_port=0):
    return bytes(cpu_header.to_egress(frame, egress_port))


def packet_out(frame, ingress_port):
    return bytes(cpu_header.packet_out(frame, ingress_port))


def edge_lengths(lanes):
    """Frame lengths around the beat boundaries the 18-byte shift crosses."""
    around = {1, 2, 14, 46, 60, 61}
    for beats in (1, 2, 3):
        for d in (-1, 0, 1):
            around |= {beats * lanes - HEADER + d, beats * lanes + d}
    return sorted(n for n in around if n >= 1)


@cocotb.test()
async def test_packet_in(dut):
    """CONTROL bit 1 set: every frame the pipeline punts reaches the host behind the CPU
    header (type 1, the frame's meta.ingressPort: 0 from the MAC, hostPortBase from the
    host; the pipeline's egress port and reason), the frames from the MAC with their
    timestamps; what is not punted comes out unchanged; under random back-pressure. One
    punted frame is also read back with scapy field by field."""
    tb = await setup(dut, "packet_in")
    await fixed_tables(tb)
    await tb.tx_through_pipeline(True)
    await tb.cpu_port_on(True)
    tb.gaps()
    frame = ipv4(tb, "192.0.2.7")
    for send, port in ((tb.send_rx, 0), (tb.send_tx, tb.host_port_base)):
        await send("no route", frame)
        await wait_for(lambda: tb.host_frames, dut.clk, 5000, "the punted frame")
        got = Ether(tb.host_frames[0][0])
        cpu = got[cpu_header.MatchaCpu]
        assert got.type == cpu_header.ETHERTYPE and got.dst == cpu_header.PACKET_IN_DST \
            and got.src == cpu_header.PACKET_IN_SRC, got.summary()
        assert (cpu.type, cpu.ingress_port, cpu.reason) == (cpu_header.PACKET_IN, port, NO_ROUTE), cpu.summary()
        assert bytes(cpu.payload) == frame, "the punted frame behind the header is not the frame sent"
        await tb.check()
    for rnd in range(3):
        tb.random_gaps()
        for name, frame, reason in fates(tb):
            f = await tb.send_rx(f"r{rnd} rx {name}", frame)
            assert f.punt == (reason in (NO_ROUTE, ACL_TO_HOST)), f.name
            if name != "l2 forward":   # EtherType 0x88B5: from the host, a packet-out
                await tb.send_tx(f"r{rnd} tx {name}", frame)
        await tb.check()


@cocotb.test()
async def test_cpu_port_clear_and_set(dut):
    """CONTROL bit 1 clear (after reset): a host frame with the CPU header reaches the MAC
    as it is, header and all, and a punted frame reaches the host without one; set: the
    same frames lose and gain the header; clear again: as at first."""
    tb = await setup(dut, "cpu_port_clear_and_set")
    await fixed_tables(tb)
    payload = ipv4(tb, "10.1.1.1")
    punted = ipv4(tb, "192.0.2.7")
    for on in (False, True, False):
        await tb.cpu_port_on(on)
        tb.random_gaps()
        f = await tb.send_tx(f"type 3 (bit 1 {int(on)})", to_egress(payload))
        assert f.out == (payload if on else to_egress(payload))
        f = await tb.send_rx(f"punted (bit 1 {int(on)})", punted)
        assert f.punt and f.out.endswith(punted) and len(f.out) == len(punted) + HEADER * on
        await tb.check()


@cocotb.test()
async def test_packet_out_to_egress(dut):
    """Type 3 with egress port 0, the port whose tap it comes from: the header comes off
    and the frame reaches the MAC byte for byte (not padded: the MAC pads), with the MAC's
    completion, whatever CONTROL bit 0 says; every length around the beat boundaries the
    shift crosses, and longer ones, back to back and under random back-pressure; counted in
    PACKET_OUTS (and TX_BYPASS: it passes the pipeline)."""
    tb = await setup(dut, "packet_out_to_egress")
    await fixed_tables(tb)
    await tb.cpu_port_on(True)
    lengths = edge_lengths(tb.lanes) + [300, 1514]
    for rnd, via in enumerate((False, True, False)):
        await tb.tx_through_pipeline(via)
        tb.gaps() if rnd == 0 else tb.random_gaps()
        for n in lengths:
            payload = bytes(tb.rng.getrandbits(8) for _ in range(n))
            f = await tb.send_tx(f"r{rnd} {n} bytes", to_egress(payload))
            assert f.packet_out and f.out == payload and not f.via_pipeline
        await tb.check()


@cocotb.test()
async def test_packet_out_to_pipeline(dut):
    """Type 2: the header comes off and the frame enters the pipeline with the header's
    ingress port as meta.ingressPort, also with CONTROL bit 0 clear; what the model makes
    of it comes out (to the MAC, or to the host as a packet-in naming that ingress port),
    the host frames' completions as for any host frame through the pipeline; lengths around
    the shift's beat boundaries (short ones padded to 60 bytes after the header is off)."""
    tb = await setup(dut, "packet_out_to_pipeline")
    await fixed_tables(tb)
    await tb.cpu_port_on(True)
    for rnd in range(3):
        tb.random_gaps()
        for ingress in (0, 1, 3, tb.host_port_base, (1 << tb.lay.port_width) - 1):
            for name, frame, reason in fates(tb):
                f = await tb.send_tx(f"r{rnd} in {ingress} {name}", packet_out(frame, ingress))
                assert f.packet_out and f.via_pipeline
                if f.punt:
                    assert Ether(f.out)[cpu_header.MatchaCpu].ingress_port == ingress
        for n in edge_lengths(tb.lanes):
            frame = bytes(Ether(dst=mac_str(MAC_A), type=0x88B6) / bytes(max(0, n - 14)))[:n]
            await tb.send_tx(f"r{rnd} {n} bytes", packet_out(frame, 2))
        await tb.check()


@cocotb.test()
async def test_packet_out_refused(dut):
    """Packet-outs the block cannot carry out are dropped whole, counted by why, and still
    get their TX completion (timestamp 0): no frame behind the header (14 to 18 bytes),
    types other than 2 and 3 (PACKET_OUT_MALFORMED); type 3 to another port than the tap's,
    type 2 with an ingress port beyond meta.ingressPort's 16 (PACKET_OUT_WRONG_PORT).
    Good packet-outs and plain host frames between them pass; the TX engine takes
    completions slowly."""
    tb = await setup(dut, "packet_out_refused")
    await fixed_tables(tb)
    await tb.cpu_port_on(True)
    payload = ipv4(tb, "10.1.1.1")
    good = to_egress(payload)
    refused = [
        ("header only", good[:HEADER], "malformed"),
        *((f"{n} bytes", good[:n], "malformed") for n in (14, 15, 16, 17)),
        *((f"type {t}", good[:14] + bytes([t]) + good[15:], "malformed") for t in (0, 1, 4, 0xFF)),
        *((f"egress {p}", to_egress(payload, p), "wrong_port") for p in (1, 3, 0xFF)),
        *((f"ingress {p}", packet_out(payload, p), "wrong_port") for p in (1 << tb.lay.port_width, 0xFF)),
    ]
    for rnd in range(3):
        tb.random_gaps()
        tb.cpl_busy = 0.8
        for name, frame, why in refused:
            f = await tb.send_tx(f"r{rnd} {name}", frame)
            assert f.refused == why, f"{name}: {f.refused}"
            await tb.send_tx(f"r{rnd} good after {name}", good)
            await tb.send_tx(f"r{rnd} plain after {name}", payload)
        await tb.check()


@cocotb.test()
async def test_cpu_port_rate(dut):
    """Back to back with nothing held: plain host frames leave for the MAC at one beat per
    clock with at most one clock between frames (the header look-ahead takes the next
    frame's header in while a frame leaves), as fast with CONTROL bit 1 set as clear; and
    the host's tap takes packet-outs of type 3 at one beat per clock but the one clock a
    frame's tail may take after the shift."""
    tb = await setup(dut, "cpu_port_rate")
    tb.gaps()
    clock = {"now": 0}
    taken, sent = [], []

    async def count():
        while True:
            await RisingEdge(dut.clk)
            clock["now"] += 1
            if int(dut.s_axis_sync_tx_tvalid.value) & 1 and int(dut.s_axis_sync_tx_tready.value) & 1:
                taken.append(clock["now"])
            if int(dut.m_axis_sync_tx_tvalid.value) & 1 and int(dut.m_axis_sync_tx_tready.value) & 1:
                sent.append(clock["now"])
    cocotb.start_soon(count())

    async def burst(frames):
        taken.clear()
        sent.clear()
        tb.wire.pause = True
        for k, frame in enumerate(frames):
            await tb.send_tx(f"#{k}", frame)
        await ClockCycles(dut.clk, 50)
        taken.clear()
        tb.wire.pause = False
        await tb.check()
        return sent[-1] - sent[0] + 1, len(sent)

    frames = [ipv4(tb, "10.1.1.1", length=60 + k % 5) for k in range(40)]
    clear = await burst(frames)
    await tb.cpu_port_on(True)
    on = await burst(frames)
    dut._log.info("plain host frames: %d beats in %d clocks with bit 1 clear, %d in %d set",
                  clear[1], clear[0], on[1], on[0])
    assert clear[0] <= clear[1] + len(frames), f"{clear[1]} beats in {clear[0]} clocks"
    assert on[1] == clear[1] and on[0] <= clear[0], f"bit 1 slows plain frames: {on} vs {clear}"

    outs = [to_egress(bytes(tb.rng.getrandbits(8) for _ in range(60 + k % 9))) for k in range(40)]
    beats = sum((len(f) + tb.lanes - 1) // tb.lanes for f in outs)
    taken.clear()
    for k, frame in enumerate(outs):
        await tb.send_tx(f"out #{k}", frame)
    await tb.check()
    clocks = taken[-1] - taken[0] + 1
    dut._log.info("packet-outs: %d beats taken in %d clocks", beats, clocks)
    assert len(taken) == beats and clocks <= beats + len(outs), f"{beats} beats in {clocks} clocks"


@cocotb.test()
async def test_cpu_port_random(dut):
    """Random tables, random frames on both taps (test_random_traffic's), a third of the
    host frames as packet-outs of type 2 or 3 around a random frame, some refused, under
    random gaps and back-pressure, CONTROL bit 0 changing between rounds."""
    await cpu_port_random(dut, "cpu_port_random", rounds=3)


@soak
@cocotb.test()
async def test_cpu_port_random_soak(dut):
    """test_cpu_port_random for 30 rounds (3,600 frames)."""
    await cpu_port_random(dut, "cpu_port_random_soak", rounds=30)


async def cpu_port_random(dut, name, rounds):
    tb = await setup(dut, name)
    rng = tb.rng
    await load_random_tables(tb)
    await tb.cpu_port_on(True)
    maker = traffic.FrameMaker(rng, tb.model)
    for rnd in range(rounds):
        await tb.tx_through_pipeline(rnd % 3 != 1)
        tb.random_gaps()
        for _ in range(120):
            kind, frame, _, bad = maker.frame()
            if rng.random() < 0.5:
                await tb.send_rx(f"r{rnd} rx {kind}", frame, bad)
                continue
            pick = rng.random()
            if pick < 0.15:
                frame = to_egress(frame, 0 if rng.random() < 0.9 else rng.randrange(1, 256))
            elif pick < 0.3:
                frame = packet_out(frame, rng.randrange(1 << tb.lay.port_width) if rng.random() < 0.9
                                   else rng.randrange(1 << tb.lay.port_width, 256))
            elif pick < 0.33:
                frame = to_egress(frame)[:rng.randrange(14, HEADER + 1)]
            await tb.send_tx(f"r{rnd} tx {kind}", frame, bad and pick >= 0.33)
        await tb.check()
