# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of `mqnic_app_block` with several Corundum interfaces receiving at once,
behind a model of Corundum's receive path as it is (mqnic_port_rx.v, Corundum 1ca0151):

- each port's MAC hands its beats to a 32-beat FIFO (`axis_async_fifo_adapter`,
  DEPTH = 32 beats, FRAME_FIFO 0, MARK_WHEN_FULL because AXIS_RX_USE_READY is 0) at its own
  rate, and never waits: a beat that finds the FIFO full is lost, the rest of its frame
  with it, and the frame is closed by a beat with tlast and bad_frame set once there is
  room again (a frame that had not started is lost whole);
- the FIFO's output is the sync RX tap (s_axis_sync_rx, lane k of the packed vectors) and
  honours the block's tready;
- the host side of the tap (m_axis_sync_rx) always takes (Corundum's interface RX path).

The oracle is the program model (tb/model) run on each frame with ingress port k; what the
model does not drop must reach the host on port k, in order per port, whole, with its PTP
timestamp. The FIFO model counts what it cut (`cut`); a block that stalls a port's tap for
longer than the FIFO covers makes it cut frames.
"""

from collections import deque
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster
from scapy.layers.l2 import Ether

from tb.common import cocotb_util
from tb.common import driver as drv
from tb.corundum.corundum_tb import (
    APP_REGS, COUNTERS, MAC_A, PORT_OVERFLOWS, CorundumTb, Frame, fixed_tables, ipv4,
)
from tb.model import deparse, parse
from tb.model.program import Program
from tb.pipeline.control import Control
from tb.pipeline.traffic import mac_str

FIFO_BEATS = 32     # mqnic_port_rx.v: DEPTH(AXIS_SYNC_KEEP_WIDTH*32)
SIZES = (60, 1514, 9014)


@dataclass
class MacPort:
    """One port's MAC and Corundum's RX FIFO behind it."""
    frames: deque = field(default_factory=deque)   # (Frame, [beats]) still to send
    fifo: deque = field(default_factory=deque)     # (data, keep, last, tuser) beats
    sending: list = None      # beats of the frame on the wire now
    started: bool = False     # the FIFO holds the first beats of the frame on the wire
    cutting: bool = False     # the rest of the current frame is being lost
    close_cut: int = None     # tuser of the bad_frame beat still to write
    cut: int = 0              # frames the FIFO cut or lost
    idle: int = 0             # clocks of inter-frame gap left
    got: list = field(default_factory=list)        # (data, tuser, bad, problems) to the host
    rx_beats: list = field(default_factory=list)   # beats of the frame the host is receiving


class PortsTb(CorundumTb):
    """The app BAR as in CorundumTb; the sync taps of `ports` ports driven beat by beat."""

    def __init__(self, dut, rng, ports):
        self.dut = dut
        self.rng = rng
        self.lay = cocotb_util.layout()
        self.lanes = self.lay.data_width // 8
        self.host_port_base = 1 << (self.lay.port_width - 1)
        self.n = len(dut.s_axis_sync_rx_tvalid)
        assert ports <= self.n, f"the model has {self.n} ports, the test needs {ports}"
        self.ports = [MacPort() for _ in range(ports)]
        self.ts_width = len(dut.s_axis_sync_rx_tuser) // self.n - 1
        self.user_width = self.ts_width + 1
        self.model = Program(self.lay.raw, strict=False)
        cocotb_util.quiet_cocotbext(dut, ("s_axil_app_ctrl",))
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil_app_ctrl"), dut.clk, dut.rst)
        self.rate = 1.0
        self.ctl = None

    async def start(self):
        dut = self.dut
        for name in ("s_axis_sync_rx_tvalid", "s_axis_sync_tx_tvalid", "s_axis_sync_tx_cpl_valid",
                     "s_axis_sync_rx_tdata", "s_axis_sync_rx_tkeep", "s_axis_sync_rx_tlast",
                     "s_axis_sync_rx_tuser"):
            getattr(dut, name).value = 0
        dut.m_axis_sync_rx_tready.value = (1 << self.n) - 1
        dut.m_axis_sync_tx_tready.value = (1 << self.n) - 1
        dut.m_axis_sync_tx_cpl_ready.value = (1 << self.n) - 1
        await cocotb_util.start(dut)
        cocotb.start_soon(self._taps())
        snapshot = await drv.read_info_block(self.read32)
        self.ctl = Control(snapshot, self.model)
        await drv.replay(self.ctl.open_writes, self.write32, self.read32, skip_reads=True)

    def frame(self, k, name, data):
        """Queues `data` on port k's MAC; returns the Frame with the model's verdict."""
        ts = self.rng.getrandbits(self.ts_width) | 1
        f = Frame(name, bytes(data), False, False, ts=ts)
        phv = parse(f.data, ingress_port=k, bad_frame=False, header_bytes=self.lay.header_bytes,
                    runt_bytes=self.lay.runt_bytes, max_frame=self.lay.max_frame)
        out, tuser, reason = deparse(f.data, self.model.answer(phv))
        f.out, f.reason = out, reason
        f.punt = bool(out is not None and tuser["punt"])
        beats = []
        for b in range(0, len(data), self.lanes):
            chunk = f.data[b:b + self.lanes]
            beats.append((int.from_bytes(chunk, "little"), (1 << len(chunk)) - 1,
                          b + self.lanes >= len(data), ts << 1))
        self.ports[k].frames.append((f, beats))
        return f

    # ------------------------------------------------------------------ the taps

    def _mac_clock(self, p):
        """One clock of a MAC: maybe one beat into the FIFO, which never pushes back."""
        if p.sending is None:
            if p.idle:
                p.idle -= 1
                return
            if not p.frames:
                return
            p.sending = list(p.frames.popleft()[1])
            p.started = False
        if p.close_cut is not None and len(p.fifo) < FIFO_BEATS:
            p.fifo.append((0, 1, True, p.close_cut))
            p.close_cut = None
        if self.rng.random() >= self.rate:
            return
        data, keep, last, tuser = p.sending.pop(0)
        if last:
            p.sending = None
            p.idle = 2      # preamble and inter-frame gap, roughly
        if p.cutting:
            p.cutting = not last
            return
        if len(p.fifo) >= FIFO_BEATS:
            p.cut += 1
            if p.started:
                p.close_cut = tuser | 1   # closed with bad_frame once there is room
            p.cutting = not last
            return
        p.started = not last
        p.fifo.append((data, keep, last, tuser))

    async def _taps(self):
        dut = self.dut
        W, K, U = self.lanes * 8, self.lanes, self.user_width
        while True:
            await RisingEdge(dut.clk)
            valid_in = int(dut.s_axis_sync_rx_tvalid.value)
            ready_in = int(dut.s_axis_sync_rx_tready.value)
            out_valid = int(dut.m_axis_sync_rx_tvalid.value)
            if out_valid:
                out = (int(dut.m_axis_sync_rx_tdata.value), int(dut.m_axis_sync_rx_tkeep.value),
                       int(dut.m_axis_sync_rx_tlast.value), int(dut.m_axis_sync_rx_tuser.value))
            for k, p in enumerate(self.ports):
                if valid_in >> k & 1 and ready_in >> k & 1:
                    p.fifo.popleft()
                if out_valid >> k & 1:
                    self._host_beat(p, *(v >> (k * w) & ((1 << w) - 1)
                                         for v, w in zip(out, (W, K, 1, U))))
                self._mac_clock(p)
            tdata = tkeep = tvalid = tlast = tuser = 0
            for k, p in enumerate(self.ports):
                if p.fifo:
                    data, keep, last, user = p.fifo[0]
                    tdata |= data << (k * W)
                    tkeep |= keep << (k * K)
                    tvalid |= 1 << k
                    tlast |= int(last) << k
                    tuser |= user << (k * U)
            dut.s_axis_sync_rx_tdata.value = tdata
            dut.s_axis_sync_rx_tkeep.value = tkeep
            dut.s_axis_sync_rx_tvalid.value = tvalid
            dut.s_axis_sync_rx_tlast.value = tlast
            dut.s_axis_sync_rx_tuser.value = tuser

    def _host_beat(self, p, data, keep, last, user):
        p.rx_beats.append((data, keep, user))
        if not last:
            return
        beats, p.rx_beats = p.rx_beats, []
        problems, out = [], bytearray()
        for b, (d, kp, u) in enumerate(beats):
            n = bin(kp).count("1")
            if kp != (1 << n) - 1:
                problems.append(f"beat {b}: tkeep {kp:#x} not contiguous from lane 0")
            if b < len(beats) - 1 and n != self.lanes:
                problems.append(f"beat {b} of {len(beats)}: partial beat before tlast")
            out += d.to_bytes(self.lanes, "little")[:n]
        if any(u >> 1 != beats[0][2] >> 1 for _, _, u in beats):
            problems.append("timestamp changes within the frame")
        p.got.append((bytes(out), beats[0][2] >> 1, beats[-1][2] & 1, problems))

    # ------------------------------------------------------------------ checking

    def idle(self):
        return all(not p.frames and p.sending is None and not p.fifo for p in self.ports)

    async def drain(self, timeout, expected):
        """Waits until the MACs have sent everything and `expected` frames have reached the
        host (or `timeout` clocks), then a little longer for any frames too many."""
        for _ in range(timeout // 100):
            if self.idle() and sum(len(p.got) for p in self.ports) >= expected:
                break
            await ClockCycles(self.dut.clk, 100)
        else:
            self.dut._log.warning("after %d clocks: MACs idle %s, %d of %d frames to the host",
                                  timeout, self.idle(), sum(len(p.got) for p in self.ports),
                                  expected)
        await ClockCycles(self.dut.clk, 500)

    def port_errors(self, k, sent, whole_drops_allowed=False):
        """What reached the host on port k against what was sent there: every frame the
        model does not drop (with `whole_drops_allowed`, some of them), in order, whole,
        with its timestamp (unique per frame). Returns (errors, frames that never came)."""
        p = self.ports[k]
        want = [f for f in sent if f.out is not None]
        seen = {ts for _, ts, _, _ in p.got}
        lost = [f for f in want if f.ts not in seen]
        arrived = [f for f in want if f.ts in seen]
        errors = []
        if lost and not whole_drops_allowed:
            errors.append(f"port {k}: {len(lost)} of {len(want)} frames never reached the "
                          f"host: {', '.join(f.name for f in lost[:6])}")
        for n, (data, ts, bad, problems) in enumerate(p.got):
            errors += [f"port {k} host frame #{n}: {e}" for e in problems]
            if bad:
                errors.append(f"port {k} host frame #{n}: bad_frame set ({len(data)} bytes)")
            if n >= len(arrived):
                errors.append(f"port {k} host frame #{n}: {len(data)} bytes, ts {ts:#x}, one "
                              "more than the frames sent that arrived")
                continue
            f = arrived[n]
            if (data, ts) != (f.out, f.ts):
                errors.append(f"port {k} host frame #{n}: {len(data)} bytes ts {ts:#x}, expected "
                              f"{f.name} ({len(f.out)} bytes, ts {f.ts:#x})")
        return errors, len(lost)

def mixed_frames(tb, k, count):
    """`count` frames for port k: minimum, 1514-byte and jumbo frames, routed or forwarded
    on L2, in a random order."""
    frames = []
    for j in range(count):
        size = SIZES[j % len(SIZES)]
        if tb.rng.random() < 0.5:
            data = ipv4(tb, "10.1.1.1", length=size)
        else:
            data = bytes(Ether(dst=mac_str(MAC_A), type=0x88B5) / bytes(size - 14))
        frames.append((f"port {k} #{j} ({size} B)", data))
    tb.rng.shuffle(frames)
    return frames


async def setup(dut, name, ports):
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = PortsTb(dut, rng, ports)
    await tb.start()
    await fixed_tables(tb)
    return tb


async def all_ports_receive(dut, ports, per_port):
    """`ports` MACs send at once, each at a share of the pipeline's beat rate that leaves
    room (80 % in total): every frame arrives whole, in order, on its port, and Corundum's
    FIFOs cut none."""
    tb = await setup(dut, f"{ports}_ports_receive", ports)
    tb.rate = 0.8 / ports
    sent = [[tb.frame(k, name, data) for name, data in mixed_frames(tb, k, per_port)]
            for k in range(ports)]
    beats = sum(len(f.data) // tb.lanes + 1 for s in sent for f in s)
    await tb.drain(int(beats / 0.8) + 20_000, sum(f.out is not None for s in sent for f in s))
    errors = []
    for k in range(ports):
        errors += tb.port_errors(k, sent[k])[0]
        if tb.ports[k].cut:
            errors.append(f"port {k}: Corundum's RX FIFO cut {tb.ports[k].cut} frames (the "
                          "block held tready low for too long)")
    counters = await tb.read_counters()
    dut._log.info("counters %s", counters)
    tb.fail_on(errors)
    n = sum(len(s) for s in sent)
    assert counters["rx_frames"] == n and counters["to_host"] == n, counters
    for k in range(ports):
        assert await tb.read32(APP_REGS + PORT_OVERFLOWS + 4 * k) == 0, f"port {k} dropped"


@cocotb.test()
async def test_two_ports_receive(dut):
    """Two MACs receiving at once, minimum, 1514-byte and jumbo frames interleaved."""
    await all_ports_receive(dut, 2, 9)


@cocotb.test()
async def test_four_ports_receive(dut):
    """Four MACs receiving at once, minimum, 1514-byte and jumbo frames interleaved."""
    await all_ports_receive(dut, 4, 6)


@cocotb.test()
async def test_ports_overloaded(dut):
    """Four MACs at full rate, four times what the pipeline takes: frames that find their
    port's ingress buffer full are dropped whole and counted per port; every other frame
    arrives whole and in order, and Corundum's FIFOs still cut none."""
    tb = await setup(dut, "ports_overloaded", 4)
    tb.rate = 1.0
    sent = [[tb.frame(k, name, data) for name, data in mixed_frames(tb, k, 24)] for k in range(4)]
    beats = sum(len(f.data) // tb.lanes + 1 for s in sent for f in s)
    await tb.drain(beats + 20_000, 0)
    n = sum(len(s) for s in sent)
    for _ in range(beats // 1000 + 20):    # the buffers empty at the pipeline's rate
        overflows = [await tb.read32(APP_REGS + PORT_OVERFLOWS + 4 * k) for k in range(4)]
        if sum(len(p.got) for p in tb.ports) + sum(overflows) >= n:
            break
        await ClockCycles(dut.clk, 1000)
    await ClockCycles(dut.clk, 500)
    errors, dropped = [], 0
    for k in range(4):
        port_errors, missing = tb.port_errors(k, sent[k], whole_drops_allowed=True)
        errors += port_errors
        if tb.ports[k].cut:
            errors.append(f"port {k}: Corundum's RX FIFO cut {tb.ports[k].cut} frames")
        if overflows[k] != missing:
            errors.append(f"port {k}: {missing} frames missing, overflow counter {overflows[k]}")
        dropped += missing
    tb.fail_on(errors)
    assert dropped, "nothing was dropped: the ports did not overload the pipeline"
    counters = await tb.read_counters()
    assert counters["rx_frames"] == counters["to_host"] == n - dropped, counters
    dut._log.info("%d of %d frames dropped whole at the ports' buffers", dropped, n)
