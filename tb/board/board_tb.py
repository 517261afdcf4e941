# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_board: two RGMII ports (cocotbext-eth RgmiiSource/RgmiiSink as
the PHYs), the pipeline between them, and its control bus on the UART bridge.

The oracle is the specification, not the DUT: Ethernet framing and the FCS are what
cocotbext-eth builds and checks, a frame's fate is what docs/pipeline.md says the built-in
program does with the entries the test loads (through the C driver, over the UART), the
self-describing block is what docs/tables.md makes of layout.json's program, and the
bridge's answers are those of docs/sim-socket.md.
"""

import contextlib
import ipaddress
import json
import logging
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Timer, with_timeout
from cocotbext.eth import GmiiFrame, RgmiiSink, RgmiiSource
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.vxlan import VXLAN
from scapy.layers.l2 import Ether

from tb.board.uart import Bridge, Uart
from tb.common import cocotb_util
from tb.common.scapy_view import mac_int
from tb.common.sim import soak
from tb.common import contract
from tb.common import driver as drv
from tb.model.program import Program
from tb.pipeline.control import snapshot_for

CLK_NS = 24        # pipeline clock: 41.67 MHz, below the Versa top's 44.64 MHz
RGMII_NS = 8       # 125 MHz: transmit clock and both PHYs' receive clocks
BIT_NS = 8 * CLK_NS  # matcha_board's UART: 8 clocks per bit

PORT_COUNTERS = ("rx_good", "rx_fcs_error", "rx_overflow", "tx_frames")

# Not IP, so only l2_fwd decides where these go (docs/pipeline.md).
ETHERTYPE_LOCAL = 0x88B5
MAC_TO_PORT1 = "02:00:00:00:01:01"
MAC_TO_PORT0 = "02:00:00:00:00:00"
MAC_UNKNOWN = "02:00:00:00:0f:0f"
MAC_SRC = "02:00:00:00:aa:aa"


def layout():
    with open(os.environ["MATCHA_TB_LAYOUT"]) as f:
        return json.load(f)


class Board:
    def __init__(self, dut):
        self.dut = dut
        self.sources = [RgmiiSource(getattr(dut, f"eth{i}_rxd"), getattr(dut, f"eth{i}_rx_ctl"),
                                    getattr(dut, f"eth{i}_rxc")) for i in range(2)]
        self.sinks = [RgmiiSink(getattr(dut, f"eth{i}_txd"), getattr(dut, f"eth{i}_tx_ctl"),
                                getattr(dut, f"eth{i}_txc")) for i in range(2)]
        self.bridge = Bridge(Uart(dut.uart_rxd, dut.uart_txd, BIT_NS))
        for name in ("cocotb.matcha_board.eth0_rxd", "cocotb.matcha_board.eth1_rxd",
                     "cocotb.matcha_board.eth0_txd", "cocotb.matcha_board.eth1_txd"):
            logging.getLogger(name).setLevel(logging.WARNING)

    async def start(self):
        dut = self.dut
        Clock(dut.clk, CLK_NS, unit="ns").start()
        await self._start_phy_clocks()
        dut.rst.value = 1
        await ClockCycles(dut.clk, 20)
        dut.rst.value = 0
        await ClockCycles(dut.clk, 20)

    async def _start_phy_clocks(self):
        """tx_clk, then each PHY's receive clock with a phase of its own; tx_clk90 a quarter
        period after tx_clk."""
        dut = self.dut
        self.phy_clocks = []
        for signal in (dut.tx_clk, dut.eth0_rxc, dut.tx_clk90, dut.eth1_rxc):
            clock = Clock(signal, RGMII_NS, unit="ns")
            clock.start()
            self.phy_clocks.append(clock)
            await Timer(1, "ns")

    @contextlib.asynccontextmanager
    async def phys_held(self):
        """The 125 MHz clocks stopped while only the UART and the pipeline clock have work:
        the PHY models wake at every edge of them, which makes a table load over the UART
        take minutes instead of seconds. Nothing may be on the wire when it is used."""
        for clock in self.phy_clocks:
            clock.stop()
        try:
            yield
        finally:
            await self._start_phy_clocks()

    async def counters(self):
        """The status block's counters, read once the wire is quiet."""
        out = {}
        async with self.phys_held():
            for p in range(2):
                for name in PORT_COUNTERS:
                    out[(p, name)] = await self.bridge.read32(
                        contract.BOARD_BASE + contract.BOARD_PORT_BASE + contract.BOARD_PORT_STRIDE * p
                        + getattr(contract, "BOARD_PORT_" + name.upper()))
            out["pipeline_drops"] = await self.bridge.read32(contract.BOARD_BASE + contract.BOARD_PIPELINE_DROPS)
            out["not_forwarded"] = await self.bridge.read32(contract.BOARD_BASE + contract.BOARD_NOT_FORWARDED)
        return out

    async def load(self, fill, hold_phys=True):
        """Calls fill(dev, program) with a C driver device and the program model of
        layout.json, then replays the bus transactions it made over the UART bridge, with
        the PHY clocks held (phys_held) unless `hold_phys` is false."""
        lay = layout()
        # The block as docs/tables.md makes it of the layout (test_self_describing_block
        # checks the hardware's is the same), without reading it over the slow UART.
        rec = drv.RecordingBus(snapshot_for(lay["program"], lay["buildId"]))
        dev = drv.Device(rec)
        try:
            fill(dev, Program(lay))
        finally:
            dev.close()
        async with (self.phys_held() if hold_phys else contextlib.nullcontext()):
            await drv.replay(rec.take(), self.bridge.write32, self.bridge.read32)

    async def load_l2(self, entries, hold_phys=True):
        """l2_fwd entries {mac: port} with the forward action."""
        def fill(dev, program):
            table = program["l2_fwd"]
            for mac, port in entries.items():
                dev.exact_add(table.index, mac_int(mac), table.action_id("forward"),
                              table.data("forward", port=port))
        await self.load(fill, hold_phys)

    async def expect(self, port, frames, timeout_us=2000):
        """The next frames sent on `port` are `frames` (bytes without FCS, padded as the
        MAC pads), each with a correct FCS."""
        for i, want in enumerate(frames):
            got = await with_timeout(self.sinks[port].recv(), timeout_us, "us")
            assert got.check_fcs(), f"port {port} frame {i}: bad FCS"
            assert not any(got.error or []), f"port {port} frame {i}: GMII error"
            assert got.get_payload() == want, (
                f"port {port} frame {i}: {len(got.get_payload())} bytes, expected {len(want)}")

    async def quiet(self, us=20):
        await Timer(us, "us")
        for p in range(2):
            assert self.sinks[p].empty(), f"port {p} sent a frame nothing should have caused"


def l2_frame(dst, length, seed=0):
    """A non-IP frame of `length` bytes (without FCS) to `dst`."""
    head = bytes(Ether(dst=dst, src=MAC_SRC, type=ETHERTYPE_LOCAL))
    body = bytes((seed + i * 7) & 0xFF for i in range(length - len(head)))
    return head + body


async def started(dut):
    board = Board(dut)
    await board.start()
    return board


@cocotb.test()
async def test_self_describing_block(dut):
    """The pipeline's self-describing block, read over the UART, is the one docs/tables.md
    makes of layout.json's program; the board's status block answers above it."""
    board = await started(dut)
    lay = layout()
    async with board.phys_held():
        snap = await drv.read_info_block(board.bridge.read32)
        assert snap == snapshot_for(lay["program"], lay["buildId"])
        assert await board.bridge.read32(contract.BOARD_BASE) == contract.BOARD_MAGIC_VALUE
        assert await board.bridge.read32(contract.BOARD_BASE + contract.BOARD_PORTS) == 2


@cocotb.test()
async def test_bridge_bad_requests(dut):
    """Answers of docs/sim-socket.md for requests that cannot run, and the frame boundary
    found again after a partial request."""
    board = await started(dut)
    async with board.phys_held():
        b = board.bridge
        assert (await b.transact("R", 0x2))[0] == 0xFF, "unaligned address"
        assert (await b.transact("X", 0x0))[0] == 0xFF, "unknown op"
        assert (await b.transact("R", 0x01000000))[0] == 3, "beyond the 24-bit bus"
        assert (await b.transact("R", 0x20))[0] == 2, "unmapped pipeline register: SLVERR"
        assert (await b.transact("W", 0x20, 5))[0] == 2, "unmapped pipeline register: SLVERR"
        # A lost byte: 5 bytes of a request, then silence longer than 64 character times.
        await b.uart.send(b"R\0\0\0\0")
        await Timer(64 * 10 * BIT_NS + 20 * BIT_NS, "ns")
        assert await b.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE


@cocotb.test()
async def test_bump_in_the_wire(dut):
    """Frames from port 0 go where l2_fwd says (port 1), frames from port 1 to port 0:
    back-to-back on both ports at once (minimum size to 1514 bytes), then a jumbo frame
    each way; a frame for an unknown address stays on its ingress port (the parser's
    default egress)."""
    board = await started(dut)
    rng, _ = cocotb_util.test_rng(dut, "test_bump_in_the_wire")
    await board.load_l2({MAC_TO_PORT1: 1, MAC_TO_PORT0: 0})

    lengths = [60, 61, 64, 1514] + [rng.randint(60, 1514) for _ in range(6)]
    to1 = [l2_frame(MAC_TO_PORT1, n, seed=i) for i, n in enumerate(lengths)]
    to0 = [l2_frame(MAC_TO_PORT0, n, seed=100 + i) for i, n in enumerate(reversed(lengths))]
    for f in to1:
        await board.sources[0].send(GmiiFrame.from_payload(f))
    for f in to0:
        await board.sources[1].send(GmiiFrame.from_payload(f))
    await board.expect(1, to1)
    await board.expect(0, to0)

    jumbo1 = l2_frame(MAC_TO_PORT1, 9014, seed=50)
    await board.sources[0].send(GmiiFrame.from_payload(jumbo1))
    await board.expect(1, [jumbo1])
    jumbo0 = l2_frame(MAC_TO_PORT0, 9014, seed=51)
    await board.sources[1].send(GmiiFrame.from_payload(jumbo0))
    await board.expect(0, [jumbo0])

    hairpin = l2_frame(MAC_UNKNOWN, 100, seed=7)
    await board.sources[0].send(GmiiFrame.from_payload(hairpin))
    await board.expect(0, [hairpin])
    await board.quiet()

    c = await board.counters()
    assert c[(0, "rx_good")] == len(to1) + 2 and c[(1, "rx_good")] == len(to0) + 1
    assert c[(1, "tx_frames")] == len(to1) + 1 and c[(0, "tx_frames")] == len(to0) + 2
    assert c[(0, "rx_fcs_error")] == c[(1, "rx_fcs_error")] == 0
    assert c[(0, "rx_overflow")] == c[(1, "rx_overflow")] == 0
    assert c["pipeline_drops"] == 0 and c["not_forwarded"] == 0


@cocotb.test()
async def test_fcs_errors_dropped_and_counted(dut):
    """A frame with a wrong FCS, one with a GMII receive error and one cut short inside
    its FCS never leave; each is counted on its port and dropped by the pipeline as a bad
    frame; good frames around them pass."""
    board = await started(dut)
    await board.load_l2({MAC_TO_PORT1: 1})
    good = [l2_frame(MAC_TO_PORT1, 80, seed=s) for s in range(3)]

    bad_fcs = GmiiFrame.from_payload(l2_frame(MAC_TO_PORT1, 90, seed=9))
    bad_fcs.data[-1] ^= 0x01
    rx_error = GmiiFrame.from_payload(l2_frame(MAC_TO_PORT1, 90, seed=10))
    rx_error.normalize()
    rx_error.error[40] = 1
    short = GmiiFrame.from_payload(l2_frame(MAC_TO_PORT1, 90, seed=11))
    short.data = short.data[:-2]

    for f in (GmiiFrame.from_payload(good[0]), bad_fcs, GmiiFrame.from_payload(good[1]), rx_error,
              short, GmiiFrame.from_payload(good[2])):
        await board.sources[0].send(f)
    await board.expect(1, good)
    await board.quiet()
    c = await board.counters()
    assert c[(0, "rx_fcs_error")] == 3
    assert c[(0, "rx_good")] == 3 and c[(1, "tx_frames")] == 3
    assert c["pipeline_drops"] == 3


@cocotb.test()
async def test_punted_frames_discarded(dut):
    """The board has no host port: an IPv4 frame without a route is punted by ipv4_lpm
    (docs/pipeline.md) and discarded, counted as not forwarded."""
    board = await started(dut)
    frame = bytes(Ether(dst=MAC_UNKNOWN, src=MAC_SRC) / IP(src="10.0.0.1", dst="10.9.9.9")
                  / UDP(sport=1000, dport=2000) / bytes(40))
    await board.sources[1].send(GmiiFrame.from_payload(frame))
    await board.quiet(40)
    c = await board.counters()
    assert c[(1, "rx_good")] == 1 and c["not_forwarded"] == 1
    assert c[(0, "tx_frames")] == c[(1, "tx_frames")] == 0


@cocotb.test()
async def test_routed_ipv4_rewritten(dut):
    """ipv4_lpm routes IPv4 frames from port 0 to port 1: each leaves with the route's MAC
    addresses, its TTL one less and its header checksum updated, as scapy rebuilds it; for
    a VXLAN frame only the outer headers change (the board's parser stops at UDP)."""
    board = await started(dut)
    dmac, smac = "02:00:00:00:01:fe", "02:00:00:00:01:01"

    def fill(dev, program):
        table = program["ipv4_lpm"]
        dev.lpm_add(table.index, int(ipaddress.IPv4Address("10.1.0.0")), 16, table.action_id("route"),
                    table.data("route", port=1, dmac=mac_int(dmac), smac=mac_int(smac)))
    await board.load(fill)

    outer = Ether(dst=MAC_UNKNOWN, src=MAC_SRC)
    sent = [
        outer / IP(src="10.0.0.1", dst="10.1.2.3", ttl=64) / UDP(sport=1000, dport=2000) / bytes(30),
        outer / IP(src="10.0.0.2", dst="10.1.200.7", ttl=2, tos=0x28) / TCP(sport=5, dport=80, flags="S")
        / bytes(range(50)),
        outer / IP(src="10.0.0.3", dst="10.1.9.9", ttl=17) / UDP(sport=49152, dport=4789) / VXLAN(vni=42)
        / Ether(dst="02:00:00:00:09:09", src="02:00:00:00:08:08") / IP(src="192.168.0.1", dst="192.168.0.2", ttl=9)
        / TCP(sport=1234, dport=22) / bytes(20),
    ]
    sent = [Ether(bytes(f)) for f in sent]
    want = []
    for f in sent:
        w = f.copy()
        w[Ether].dst, w[Ether].src = dmac, smac
        w[IP].ttl -= 1
        del w[IP].chksum
        want.append(bytes(w))
    for f in sent:
        await board.sources[0].send(GmiiFrame.from_payload(bytes(f)))
    await board.expect(1, want)
    await board.quiet()
    c = await board.counters()
    assert c[(0, "rx_good")] == len(sent) and c[(1, "tx_frames")] == len(sent)
    assert c["pipeline_drops"] == 0 and c["not_forwarded"] == 0


@cocotb.test()
async def test_rx_overflow_counted(dut):
    """Jumbo frames on both ports at once (README, "Known limit"): the pipeline takes port
    0's, which started first, as it arrives; port 1's fills its receive FIFO, so the rest of
    it is discarded, what was passed on ends as a bad frame the pipeline drops, and
    rx_overflow counts it. The frames after it on both ports pass whole."""
    board = await started(dut)
    await board.load_l2({MAC_TO_PORT1: 1, MAC_TO_PORT0: 0})
    jumbo_to1 = l2_frame(MAC_TO_PORT1, 9014, seed=60)
    jumbo_to0 = l2_frame(MAC_TO_PORT0, 9014, seed=61)
    after_to1 = l2_frame(MAC_TO_PORT1, 200, seed=62)
    after_to0 = l2_frame(MAC_TO_PORT0, 200, seed=63)

    await board.sources[0].send(GmiiFrame.from_payload(jumbo_to1))
    await Timer(2, "us")
    await board.sources[1].send(GmiiFrame.from_payload(jumbo_to0))
    await board.sources[0].send(GmiiFrame.from_payload(after_to1))
    await board.sources[1].send(GmiiFrame.from_payload(after_to0))
    await board.expect(1, [jumbo_to1, after_to1])
    await board.expect(0, [after_to0])
    await board.quiet(40)

    c = await board.counters()
    assert c[(1, "rx_overflow")] == 1 and c[(0, "rx_overflow")] == 0
    assert c[(0, "rx_good")] == c[(1, "rx_good")] == 2
    assert c[(0, "rx_fcs_error")] == c[(1, "rx_fcs_error")] == 0
    assert c[(1, "tx_frames")] == 2 and c[(0, "tx_frames")] == 1
    assert c["pipeline_drops"] == 1 and c["not_forwarded"] == 0


def lost_in_order(sent, got):
    """The indices of `sent` missing from `got`, if `got` is `sent` in order with some
    frames left out; None if `got` has a frame that was not sent or is out of order."""
    lost, i = [], 0
    for frame in got:
        while i < len(sent) and sent[i] != frame:
            lost.append(i)
            i += 1
        if i == len(sent):
            return None
        i += 1
    return lost + list(range(i, len(sent)))


@soak
@cocotb.test()
async def test_end_to_end_flood_soak(dut):
    """The board as it runs: the table loaded over the UART with every clock running; 200
    frames each way at once, random sizes from minimum to 1514 bytes, back to back on both
    ports. The pipeline takes one frame at a time as it arrives, so a sustained flood on
    both ports can overflow a receive FIFO (README, "Known limit"): every frame must leave
    whole and in order, or be counted in rx_overflow on its port, never cut or changed.
    Then 10 jumbo frames back to back from each port in turn, one port at a time: all
    arrive."""
    board = await started(dut)
    rng, _ = cocotb_util.test_rng(dut, "test_end_to_end_flood_soak")
    await board.load_l2({MAC_TO_PORT1: 1, MAC_TO_PORT0: 0}, hold_phys=False)

    async def send(port, frames):
        for f in frames:
            await board.sources[port].send(GmiiFrame.from_payload(f))

    sent = {1: [l2_frame(MAC_TO_PORT1, rng.randint(60, 1514), seed=i) for i in range(200)],
            0: [l2_frame(MAC_TO_PORT0, rng.randint(60, 1514), seed=1000 + i) for i in range(200)]}
    cocotb.start_soon(send(0, sent[1]))
    cocotb.start_soon(send(1, sent[0]))
    await Timer(200 * 1538 * 8, "ns")  # the longest the flood can last on the wire
    await Timer(50, "us")
    got = {}
    for port in (0, 1):
        got[port] = []
        while not board.sinks[port].empty():
            frame = board.sinks[port].recv_nowait()
            assert frame.check_fcs() and not any(frame.error or []), f"port {port}: bad frame"
            got[port].append(bytes(frame.get_payload()))
    c = await board.counters()
    for port in (0, 1):
        lost = lost_in_order(sent[port], got[port])
        assert lost is not None, f"port {port}: a frame left that was not sent, or out of order"
        ingress = 1 - port
        dut._log.info("port %d: %d of 200 frames lost, rx_overflow %d on port %d",
                      port, len(lost), c[(ingress, "rx_overflow")], ingress)
        assert len(lost) == c[(ingress, "rx_overflow")]
        assert c[(ingress, "rx_good")] == 200 and c[(port, "tx_frames")] == len(got[port])
    assert c["pipeline_drops"] <= c[(0, "rx_overflow")] + c[(1, "rx_overflow")]
    assert c["not_forwarded"] == 0

    jumbo1 = [l2_frame(MAC_TO_PORT1, 9014, seed=2000 + i) for i in range(10)]
    jumbo0 = [l2_frame(MAC_TO_PORT0, 9014, seed=3000 + i) for i in range(10)]
    await send(0, jumbo1)
    await board.expect(1, jumbo1, timeout_us=20000)
    await send(1, jumbo0)
    await board.expect(0, jumbo0, timeout_us=20000)
    await board.quiet()
    after = await board.counters()
    assert after[(0, "rx_overflow")] == c[(0, "rx_overflow")]
    assert after[(1, "rx_overflow")] == c[(1, "rx_overflow")]
