# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of `mqnic_app_block`, Matcha as Corundum's application block, with a model
of Corundum's side around it (ip/corundum/README.md is the contract):

- the MAC's RX stream into the sync RX tap (tuser = {PTP timestamp, bad_frame}) and the
  host's TX stream into the sync TX tap (tuser = {tag, bad_frame}), from cocotbext-axi
  sources; what the block sends to the host (m_axis_sync_rx) and to the MAC
  (m_axis_sync_tx) into sinks, with random back-pressure;
- a MAC that answers every frame it takes with a TX completion (its own timestamp, the
  frame's tag) on s_axis_sync_tx_cpl, and a TX engine that takes completions from
  m_axis_sync_tx_cpl with random back-pressure;
- the app BAR (s_axil_app_ctrl) from an AxiLiteMaster; tables loaded by the C driver
  (tb/common/driver.py: recorded, then replayed on the BAR, as tb/pipeline does).

The oracle of every frame is the packet path model with the program model
(tb/model, tb/model/program.py) run on the frame as the contract says the block presents
it: a frame from the MAC of port k enters with ingress port k, a frame from the host with
ingress port hostPortBase + k, padded with zeros to 60 bytes. What the model drops is
gone (a host frame then gets a completion with timestamp 0); what it punts goes to the
host; anything else from the MAC goes to the host and anything else from the host to the
MAC. Timestamps and tags must come out unchanged, per frame.
"""

import copy
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import (
    AxiLiteBus, AxiLiteMaster, AxiResp, AxiStreamBus, AxiStreamFrame, AxiStreamSink,
    AxiStreamSource,
)
from scapy.layers.l2 import ARP, Ether

from tb.common import cocotb_util
from tb.common import contract
from tb.common import cpu_header
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters
from tb.common.sim import soak
from tb.common.axis import check_beats, wait_for
from tb.model import deparse, parse
from tb.model.program import Program
from tb.pipeline import traffic
from tb.pipeline.control import Control, entry_args
from tb.pipeline.l2l3 import ACL_DENY, ACL_TO_HOST, L2_DROP, L3_DROP, NO_ROUTE, acl_rule
from tb.pipeline.pipeline_tb import random_tables
from tb.pipeline.traffic import ip_int, mac_str

# ip/corundum/README.md: the app block's registers.
APP_REGS = contract.APP_BASE
APP_ID, VERSION, PORTS, DATA_WIDTH, CONTROL = (contract.APP_ID, contract.APP_VERSION, contract.APP_PORTS,
                                               contract.APP_DATA_WIDTH, contract.APP_CONTROL)
ERROR_ADDRESS, ERROR = contract.APP_ERROR_ADDRESS, contract.APP_ERROR
COUNTERS = {name: getattr(contract, "APP_" + name.upper())
            for name in ("rx_frames", "tx_frames", "dropped", "punted", "to_host", "to_wire", "tx_bypass",
                         "tx_completions", "packet_outs", "packet_out_wrong_port", "packet_out_malformed")}
PORT_OVERFLOWS = contract.APP_RX_OVERFLOW  # + 4k: frames port k's ingress buffer had no room for
MATCHA_APP_ID = contract.APP_ID_VALUE
MIN_TX_BYTES = 60

MAC_A = 0x020000000A0A   # l2_fwd: forward to port 3
MAC_D = 0x020000000D0D   # l2_fwd: drop
NEXT_HOP = 0x02BB00000002
ROUTER = 0x02AA00000001


@dataclass
class Frame:
    """A frame sent into a tap and what the model says becomes of it."""
    name: str
    data: bytes
    from_tx: bool
    bad: bool
    ts: int = 0
    tag: int = 0
    via_pipeline: bool = True
    out: bytes = None        # the frame as it leaves, None when dropped
    punt: bool = False
    reason: int = 0
    packet_out: bool = False  # a packet-out the block takes (CONTROL bit 1)
    refused: str = None       # a packet-out it refuses: "wrong_port" or "malformed"


@dataclass
class Tally:
    """What the app block's counters should say."""
    counts: dict = field(default_factory=lambda: {k: 0 for k in COUNTERS})

    def add(self, f):
        c = self.counts
        if f.refused:
            c["packet_out_" + f.refused] += 1
            c["tx_completions"] += 1
            return
        c["packet_outs"] += f.packet_out
        if not f.from_tx:
            c["rx_frames"] += 1
        elif f.via_pipeline:
            c["tx_frames"] += 1
        else:
            c["tx_bypass"] += 1
            return
        if f.out is None:
            c["dropped"] += 1
            c["tx_completions"] += f.from_tx
            return
        c["punted"] += f.punt
        if f.punt or not f.from_tx:
            c["to_host"] += 1
            c["tx_completions"] += f.from_tx
        else:
            c["to_wire"] += 1


class CorundumTb(AxiLiteRegisters):
    def __init__(self, dut, rng):
        self.dut = dut
        self.rng = rng
        self.lay = cocotb_util.layout()
        self.lanes = self.lay.data_width // 8
        self.host_port_base = 1 << (self.lay.port_width - 1)
        self.ts_width = len(dut.s_axis_sync_rx_tuser) - 1
        self.tag_width = len(dut.s_axis_sync_tx_tuser) - 1
        self.model = Program(self.lay.raw, strict=False)
        cocotb_util.quiet_cocotbext(dut, ("s_axis_sync_rx", "m_axis_sync_rx", "s_axis_sync_tx",
                                          "m_axis_sync_tx", "s_axil_app_ctrl"))
        clk, rst = dut.clk, dut.rst
        self.rx_src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_sync_rx"), clk, rst)
        self.tx_src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis_sync_tx"), clk, rst)
        self.host = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_sync_rx"), clk, rst)
        self.wire = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis_sync_tx"), clk, rst)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil_app_ctrl"), clk, rst)
        self.sent = []
        self.host_frames, self.wire_frames = [], []   # (data, tuser, problems)
        self.mac_cpls = []        # completions the MAC model owes: (ts, tag)
        self.mac_ts_of = {}       # tag -> timestamp the MAC gave the frame
        self.completions = []     # (ts, tag) taken from m_axis_sync_tx_cpl
        self.mac_ts = 0x5000_0000_0000_0000_0000_0001
        self.cpl_busy = 0.0
        self.tally = Tally()
        self.next_tag = 1
        self.tx_via_pipeline = False
        self.cpu_port = False
        self.ctl = None

    async def start(self, open_driver=True):
        """Reset and the collectors; then, with `open_driver`, the driver's open (which
        checks MAGIC and BUILD_ID)."""
        dut = self.dut
        dut.s_axis_sync_tx_cpl_valid.value = 0
        dut.s_axis_sync_tx_cpl_ts.value = 0
        dut.s_axis_sync_tx_cpl_tag.value = 0
        dut.m_axis_sync_tx_cpl_ready.value = 0
        await cocotb_util.start(dut)
        cocotb.start_soon(self._collect(self.host, self.host_frames))
        cocotb.start_soon(self._collect(self.wire, self.wire_frames, self._mac_took))
        cocotb.start_soon(self._mac_completions())
        cocotb.start_soon(self._take_completions())
        if open_driver:
            await self.open_driver()

    async def open_driver(self):
        snapshot = await drv.read_info_block(self.read32)
        assert snapshot[contract.INFO_MAGIC] == contract.INFO_MAGIC_VALUE, f"MAGIC {snapshot[contract.INFO_MAGIC]:#x}"
        assert snapshot[contract.INFO_BUILD_ID] == self.lay.raw["buildId"], "BUILD_ID is not layout.json's"
        self.ctl = Control(snapshot, self.model)
        await drv.replay(self.ctl.open_writes, self.write32, self.read32, skip_reads=True)

    # ------------------------------------------------------------------ the app BAR

    async def add(self, table, *entry, action, data=0):
        """Adds a table entry through the driver; False if the driver has no room for it."""
        return await self._apply(self.ctl.add(table, *entry, action=action, data=data))

    async def set_default(self, table, action, data=0):
        assert await self._apply(self.ctl.set_default(table, action, data))

    async def _apply(self, update):
        try:
            self.ctl.record(update)
        except drv.MatchaError as e:
            if e.code in (drv.ENOSPC, drv.EEXIST):
                return False
            raise
        await drv.replay(update.writes, self.write32, self.read32)
        update.commit()
        return True

    async def tx_through_pipeline(self, on):
        self.tx_via_pipeline = on
        await self.write_control()

    async def cpu_port_on(self, on):
        self.cpu_port = on
        await self.write_control()

    async def write_control(self):
        await self.write32(APP_REGS + CONTROL, (contract.APP_CONTROL_TX_PIPELINE if self.tx_via_pipeline else 0)
                           | (contract.APP_CONTROL_CPU_PORT if self.cpu_port else 0))

    # ------------------------------------------------------------------ traffic

    def gaps(self, in_busy=0.0, out_busy=0.0):
        for src in (self.rx_src, self.tx_src):
            src.set_pause_generator(cocotb_util.pause_pattern(self.rng, in_busy))
        for sink in (self.host, self.wire):
            sink.set_pause_generator(cocotb_util.pause_pattern(self.rng, out_busy))
        self.cpl_busy = out_busy

    def random_gaps(self):
        self.gaps(self.rng.choice([0.0, 0.2, 0.5]), self.rng.choice([0.0, 0.2, 0.5, 0.8]))

    def expect(self, f):
        """Fills in what the model says becomes of frame `f`. With the CPU port on, a host
        frame of EtherType 0x88B5 is a packet-out (ip/corundum/README.md, "The CPU port on
        a card"), read here with the scapy layer of sim/README.md's header; and a punted
        frame reaches the host as matcha-sim's CPU port sends it, behind a packet-in
        header."""
        data, port = f.data, (self.host_port_base if f.from_tx else 0)
        f.packet_out, f.refused = False, None
        if f.from_tx and self.cpu_port and len(data) >= 14 and Ether(data[:14]).type == cpu_header.ETHERTYPE:
            hdr = cpu_header.MatchaCpu(data[14:18]) if len(data) >= 18 else None
            if hdr is None or len(data) == 18 or hdr.type not in (cpu_header.PACKET_OUT, cpu_header.TO_EGRESS):
                f.refused = "malformed"
            elif hdr.type == cpu_header.TO_EGRESS and hdr.egress_port != 0:
                f.refused = "wrong_port"     # the TX tap of port 0 reaches MAC 0 only
            elif hdr.type == cpu_header.PACKET_OUT and hdr.ingress_port >= 1 << self.lay.port_width:
                f.refused = "wrong_port"
            if f.refused:
                f.out, f.punt, f.reason = None, False, 0
                return
            f.packet_out, f.via_pipeline = True, hdr.type == cpu_header.PACKET_OUT
            data, port = data[18:], hdr.ingress_port
        if f.from_tx and not f.via_pipeline:
            f.out, f.punt, f.reason = data, False, 0
            return
        if f.from_tx and len(data) < MIN_TX_BYTES:
            data = data + bytes(MIN_TX_BYTES - len(data))
        phv = parse(data, ingress_port=port, bad_frame=f.bad,
                    header_bytes=self.lay.header_bytes, runt_bytes=self.lay.runt_bytes,
                    max_frame=self.lay.max_frame)
        # A program with meters or sessions answers a frame after the frames before it
        # (tb/pipeline's PipelineTb.send): the model takes each frame as it is sent.
        stateful = self.model.meters or self.model.sessions
        out, tuser, reason = deparse(data, self.model.apply(phv) if stateful else self.model.answer(phv))
        f.out = out
        f.punt = bool(out is not None and tuser["punt"])
        f.reason = reason if out is None else tuser["reason"]
        if f.punt and self.cpu_port:
            f.out = bytes(cpu_header.packet_in(out, port, tuser["egressPort"], tuser["reason"]))

    def _beats_tuser(self, length, per_beat_last, per_beat):
        nbeats = max(1, (length + self.lanes - 1) // self.lanes)
        out = []
        for b in range(nbeats):
            v = per_beat_last if b == nbeats - 1 else per_beat
            out.extend([v] * min(self.lanes, length - b * self.lanes))
        return out

    async def send_rx(self, name, data, bad=False):
        """A frame from the MAC: a fresh nonzero timestamp on every beat, bad_frame on the
        last."""
        ts = self.rng.getrandbits(self.ts_width) | 1
        f = Frame(name, bytes(data), False, bad, ts=ts)
        self.expect(f)
        self.sent.append(f)
        tuser = self._beats_tuser(len(data), ts << 1 | int(bad), ts << 1)
        await self.rx_src.send(AxiStreamFrame(f.data, tuser=tuser))
        return f

    async def send_tx(self, name, data, bad=False):
        """A frame from the host: a fresh tag on every beat, bad_frame on the last."""
        tag = self.next_tag
        self.next_tag = self.next_tag % ((1 << self.tag_width) - 1) + 1
        f = Frame(name, bytes(data), True, bad, tag=tag, via_pipeline=self.tx_via_pipeline)
        self.expect(f)
        self.sent.append(f)
        tuser = self._beats_tuser(len(data), tag << 1 | int(bad), tag << 1)
        await self.tx_src.send(AxiStreamFrame(f.data, tuser=tuser))
        return f

    async def _collect(self, sink, into, on_frame=None):
        while True:
            fr = await sink.recv(compact=False)
            into.append(check_beats(fr, self.lanes))
            if on_frame:
                on_frame(into[-1])

    def _mac_took(self, beats):
        """The MAC owes a completion for every frame it takes: its timestamp, the tag."""
        tag = (beats[1] or 0) >> 1
        self.mac_ts += 0x1_0000
        self.mac_cpls.append((self.mac_ts, tag))
        self.mac_ts_of[tag] = self.mac_ts

    async def _mac_completions(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            if int(dut.s_axis_sync_tx_cpl_valid.value) and int(dut.s_axis_sync_tx_cpl_ready.value):
                self.mac_cpls.pop(0)
            if self.mac_cpls:
                ts, tag = self.mac_cpls[0]
                dut.s_axis_sync_tx_cpl_ts.value = ts
                dut.s_axis_sync_tx_cpl_tag.value = tag
                dut.s_axis_sync_tx_cpl_valid.value = 1
            else:
                dut.s_axis_sync_tx_cpl_valid.value = 0

    async def _take_completions(self):
        dut = self.dut
        while True:
            ready = not (self.cpl_busy and self.rng.random() < self.cpl_busy)
            dut.m_axis_sync_tx_cpl_ready.value = int(ready)
            await RisingEdge(dut.clk)
            if ready and int(dut.m_axis_sync_tx_cpl_valid.value):
                self.completions.append((int(dut.m_axis_sync_tx_cpl_ts.value),
                                         int(dut.m_axis_sync_tx_cpl_tag.value)))

    # ------------------------------------------------------------------ checking

    async def check(self, timeout=None):
        """Waits for everything the sent frames owe (host frames, MAC frames, completions)
        and compares: per tap and per origin in order, data, timestamps and tags; one
        completion per host frame, with the MAC's timestamp when the frame reached the MAC
        and 0 when the block dropped or punted it. Then the app block's counters."""
        to_host = [f for f in self.sent if f.out is not None and (f.punt or not f.from_tx)]
        to_wire = [f for f in self.sent if f.out is not None and f.from_tx and not f.punt]
        from_host = [f for f in self.sent if f.from_tx]
        beats = sum(len(f.data) for f in self.sent) // self.lanes
        timeout = timeout or 8000 + 12 * beats + 80 * len(self.sent)
        # Every frame into the block first: the last ones may be dropped, which nothing
        # below waits for.
        await wait_for(lambda: self.rx_src.idle() and self.tx_src.idle(), self.dut.clk, timeout,
                       f"the block to take every frame ({self.rx_src.queue_occupancy_frames} "
                       f"from the MAC and {self.tx_src.queue_occupancy_frames} from the host "
                       f"queued)")
        await wait_for(lambda: len(self.host_frames) >= len(to_host)
                       and len(self.wire_frames) >= len(to_wire)
                       and len(self.completions) >= len(from_host), self.dut.clk, timeout,
                       f"{len(to_host)} host frames ({len(self.host_frames)} so far), "
                       f"{len(to_wire)} MAC frames ({len(self.wire_frames)}), "
                       f"{len(from_host)} completions ({len(self.completions)})")
        await ClockCycles(self.dut.clk, 100)
        errors = []
        if len(self.host_frames) != len(to_host):
            errors.append(f"{len(self.host_frames)} frames to the host, expected {len(to_host)}")
        if len(self.wire_frames) != len(to_wire):
            errors.append(f"{len(self.wire_frames)} frames to the MAC, expected {len(to_wire)}")
        errors += self._host_errors(to_host)
        errors += self._wire_errors(to_wire)
        errors += self._check_completions(from_host, to_wire)
        self.fail_on(errors)
        self.retire()
        await self.check_counters()

    def _host_errors(self, to_host):
        """The host sees the wire's frames (timestamp nonzero) and punted host frames
        (timestamp 0), each in the order sent."""
        got_rx = [g for g in self.host_frames if g[1] is not None and g[1] >> 1]
        got_punted = [g for g in self.host_frames if not (g[1] is not None and g[1] >> 1)]
        want_rx = [f for f in to_host if not f.from_tx]
        want_punted = [f for f in to_host if f.from_tx]
        return (self._compare("host (from the MAC)", want_rx, got_rx, lambda f: f.ts << 1)
                + self._compare("host (punted host frame)", want_punted, got_punted,
                                lambda f: 0))

    def _wire_errors(self, to_wire):
        """The MAC's frames in order per path, told apart by their tags: frames through the
        pipeline and past it (bypass, packet-outs of type 3) may leave in a different order
        (ip/corundum/README.md)."""
        path_of = {f.tag: f.via_pipeline for f in to_wire}
        errors = []
        for path in (True, False):
            want = [f for f in to_wire if f.via_pipeline == path]
            got = [g for g in self.wire_frames if path_of.get((g[1] or 0) >> 1) == path]
            errors += self._compare(f"MAC ({'pipeline' if path else 'bypass'})", want, got,
                                    lambda f: f.tag << 1)
        stray = [(g[1] or 0) >> 1 for g in self.wire_frames if (g[1] or 0) >> 1 not in path_of]
        if stray:
            errors.append(f"frames to the MAC with tags of no frame that goes there: {stray[:10]}")
        return errors

    def fail_on(self, errors):
        for e in errors[:20]:
            self.dut._log.error("%s", e)
        assert not errors, f"{len(errors)} mismatches; first: {errors[0]}"

    def retire(self):
        """The sent frames are accounted for: into the counters' tally, out of the lists."""
        for f in self.sent:
            self.tally.add(f)
        for done in (self.sent, self.host_frames, self.wire_frames, self.completions):
            done.clear()

    async def settle(self, quiet=2000):
        """Waits until no frame has come out for `quiet` clocks."""
        seen = None
        while seen != (len(self.host_frames), len(self.wire_frames)):
            seen = (len(self.host_frames), len(self.wire_frames))
            await ClockCycles(self.dut.clk, quiet)

    def switch_errors(self, counters):
        """What check() compares, for host frames on both paths (no frames from the MAC):
        frames of the two paths may leave in a different order around a switch
        (ip/corundum/README.md), so the MAC's frames are matched by tag and compared in
        order per path."""
        to_host = [f for f in self.sent if f.out is not None and f.punt]
        to_wire = [f for f in self.sent if f.out is not None and not f.punt]
        errors = self._host_errors(to_host)
        by_tag = {}
        for got in self.wire_frames:
            by_tag.setdefault((got[1] or 0) >> 1, []).append(got)
        for path in (True, False):
            want = [f for f in to_wire if f.via_pipeline == path]
            got = [g for f in want for g in by_tag.pop(f.tag, [])]
            errors += self._compare(f"MAC ({'pipeline' if path else 'bypass'})", want, got,
                                    lambda f: f.tag << 1)
            order = [f.tag for f in want]
            arrived = [t for t in ((g[1] or 0) >> 1 for g in self.wire_frames) if t in order]
            if arrived != order:
                errors.append(f"MAC ({'pipeline' if path else 'bypass'}): tags in the order "
                              f"{arrived}, sent {order}")
        if by_tag:
            errors.append(f"frames to the MAC with tags of no frame that goes there: "
                          f"{sorted(by_tag)}")
        errors += self._check_completions(self.sent, to_wire)
        tally = copy.deepcopy(self.tally)
        for f in self.sent:
            tally.add(f)
        if counters != tally.counts:
            errors.append(f"counters {counters}, expected {tally.counts}")
        return errors

    def _compare(self, where, want, got, tuser_of):
        errors = []
        if len(got) != len(want):
            errors.append(f"{where}: {len(got)} frames, expected {len(want)}")
        for k, (f, (data, tuser, problems)) in enumerate(zip(want, got)):
            want_tuser = tuser_of(f)
            if f.bad and not f.via_pipeline:
                # Passed through untouched: bad_frame stays on its last beat, which is the
                # first one too for a frame of one beat.
                problems = [p for p in problems if not p.startswith("tuser changes")]
                want_tuser |= int(len(f.out) <= self.lanes)
            errors += [f"{where} #{k} ({f.name}): {p}" for p in problems]
            if data != f.out:
                errors.append(f"{where} #{k}: got {len(data)} bytes, expected {f.name} "
                              f"({len(f.out)} bytes)\n    exp {f.out[:64].hex()}"
                              f"\n    got {data[:64].hex()}")
            if tuser != want_tuser:
                errors.append(f"{where} #{k} ({f.name}): tuser {tuser:#x}, expected "
                              f"{want_tuser:#x}")
        return errors

    def _check_completions(self, from_host, to_wire):
        errors = []
        mac_ts = {f.tag: self.mac_ts_of[f.tag] for f in to_wire if f.tag in self.mac_ts_of}
        seen = {}
        for ts, tag in self.completions:
            if tag in seen:
                errors.append(f"second completion for tag {tag}")
            seen[tag] = ts
        for f in from_host:
            if f.tag not in seen:
                errors.append(f"no completion for {f.name} (tag {f.tag})")
            elif f.tag in mac_ts and seen[f.tag] != mac_ts[f.tag]:
                errors.append(f"{f.name}: completion timestamp {seen[f.tag]:#x}, the MAC's "
                              f"was {mac_ts[f.tag]:#x}")
            elif f.tag not in mac_ts and seen[f.tag] != 0:
                errors.append(f"{f.name} never reached the MAC but its completion has "
                              f"timestamp {seen[f.tag]:#x}")
        extra = set(seen) - {f.tag for f in from_host}
        if extra:
            errors.append(f"completions for tags never sent: {sorted(extra)[:10]}")
        return errors

    async def read_counters(self):
        return {k: await self.read32(APP_REGS + a) for k, a in COUNTERS.items()}

    async def check_counters(self, polls=20, interval=500):
        """The counters reach the tally: frames taken in but dropped leave no output to wait
        for, so the last ones may still be draining from the packet buffer (up to a frame
        of beats each) when the outputs are complete."""
        for _ in range(polls):
            got = await self.read_counters()
            if got == self.tally.counts:
                return
            await ClockCycles(self.dut.clk, interval)
        assert got == self.tally.counts, f"counters {got}, expected {self.tally.counts}"


async def setup(dut, name):
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = CorundumTb(dut, rng)
    await tb.start()
    return tb


async def fixed_tables(tb):
    """l2_fwd: MAC_A forward to 3, MAC_D drop; ipv4_lpm: 10/8 routed, 10.66/16 dropped, the
    rest punted (no_route); acl: 10.9.9.9 denied, UDP to port 53 to the host."""
    assert await tb.add("l2_fwd", MAC_A, action="forward", data=3)
    assert await tb.add("l2_fwd", MAC_D, action="drop")
    lpm = tb.model["ipv4_lpm"]
    assert await tb.add("ipv4_lpm", ip_int("10.0.0.0"), 8, action="route",
                        data=lpm.data("route", port=2, dmac=NEXT_HOP, smac=ROUTER))
    assert await tb.add("ipv4_lpm", ip_int("10.66.0.0"), 16, action="drop")
    assert await tb.add("acl", *acl_rule(dst=ip_int("10.9.9.9")), 1, action="deny")
    assert await tb.add("acl", *acl_rule(protocol=17, dstPort=53), 0, action="to_host")


def ipv4(tb, dst, **kw):
    args = dict(eth_dst=MAC_A, src=ip_int("10.1.2.3"), dst=ip_int(dst), proto=17, sport=1234,
                dport=80, ttl=64, options=0)
    args.update(kw)
    return traffic.build_ipv4(tb.rng, **args)


def fates(tb):
    """(name, frame) of one frame per fate of the fixed tables, and the fate the model gives
    it from the wire: routed, forwarded on L2, dropped by l2_fwd, ipv4_lpm and the ACL,
    punted by no_route and by the ACL."""
    rng = tb.rng
    other = bytes(Ether(dst=mac_str(MAC_A), type=0x88B5) / bytes(rng.randrange(46, 300)))
    return [
        ("routed", ipv4(tb, "10.1.1.1", length=rng.randrange(60, 400)), None),
        ("l2 forward", other, None),
        ("l2 drop", bytes(Ether(dst=mac_str(MAC_D), type=0x88B5) / bytes(80)), L2_DROP),
        ("l3 drop", ipv4(tb, "10.66.1.2"), L3_DROP),
        ("acl deny", ipv4(tb, "10.9.9.9"), ACL_DENY),
        ("no route", ipv4(tb, "192.0.2.7"), NO_ROUTE),
        ("acl to_host", ipv4(tb, "10.3.3.3", dport=53), ACL_TO_HOST),
    ]


# ----------------------------------------------------------------------------- tests


@cocotb.test()
async def test_app_registers(dut):
    """The app BAR: Matcha's APP_ID, version, port count and data width at 0x800000; the
    pipeline's self-describing block at 0 (MAGIC, BUILD_ID checked at start); MEMORY 0 (every
    table on chip); CONTROL reads back its two bits as written, and nothing of the others; addresses nothing answers give SLVERR, reads and writes,
    in the pipeline's window, in the app registers and above the tables, and the bus
    keeps working after them."""
    tb = await setup(dut, "app_registers")
    assert await tb.read32(APP_REGS + APP_ID) == MATCHA_APP_ID
    version = await tb.read32(APP_REGS + VERSION)
    assert version >> contract.APP_VERSION_MAJOR_SHIFT == contract.APP_VERSION_VALUE >> contract.APP_VERSION_MAJOR_SHIFT
    ports = await tb.read32(APP_REGS + PORTS)
    assert ports >= 1
    assert await tb.read32(APP_REGS + DATA_WIDTH) == tb.lay.data_width
    assert await tb.read32(APP_REGS + CONTROL) == 0, "host frames bypass the pipeline by default"
    assert await tb.read32(APP_REGS + contract.APP_MEMORY) == 0, "a core with every table on chip"
    both = contract.APP_CONTROL_TX_PIPELINE | contract.APP_CONTROL_CPU_PORT
    for value in (contract.APP_CONTROL_TX_PIPELINE, contract.APP_CONTROL_CPU_PORT, 0xFFFFFFFF):
        await tb.write32(APP_REGS + CONTROL, value)
        assert await tb.read32(APP_REGS + CONTROL) == value & both, f"CONTROL after writing {value:#x}"
    await tb.write32(APP_REGS + CONTROL, 0)
    n = len(tb.model.tables)
    for k in range(ports):
        assert await tb.read32(APP_REGS + PORT_OVERFLOWS + 4 * k) == 0
    for addr in ((n + 1) * contract.INFO_WINDOW_BYTES, 0x7FFFFC, 0x0FFF0, APP_REGS + 0x6C,
                 APP_REGS + PORT_OVERFLOWS + 4 * ports,
                 APP_REGS + 0x1000, 0xFFFFFC):
        r = await tb.axil.read(addr, 4)
        assert r.resp == AxiResp.SLVERR, f"read of 0x{addr:06x}: {r.resp!r}"
        w = await tb.axil.write(addr, bytes(4))
        assert w.resp == AxiResp.SLVERR, f"write of 0x{addr:06x}: {w.resp!r}"
    assert await tb.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
    await tb.check_counters()


def probe_indexes(d, rng):
    """Window INDEX values of table `d` to read back: first, last and some between; for an
    LPM table, the first and last node of every level and the first and last result."""
    if d.code != contract.KIND_LPM:
        return sorted({0, d.size - 1, *(rng.randrange(d.size) for _ in range(3))})
    out = []
    for level in range(d.geometry + 1):
        count = d.size if level == d.geometry else drv.lpm_nodes(d.fanout, d.size)[level]
        out += [level << contract.LPM_LEVEL_SHIFT, level << contract.LPM_LEVEL_SHIFT | (count - 1)]
    return out


@cocotb.test()
async def test_memories_clear_at_reset(dut):
    """The model starts from random register and memory contents (as hardware powers up).
    Right after reset the tables are busy clearing themselves; once STATUS says they are
    done, every entry read back (first, last and random ones; every LPM level), with its
    counters, and every window's hit and miss counters read zero, before the driver has
    written anything."""
    rng, _ = cocotb_util.test_rng(dut, "memories_clear_at_reset")
    tb = CorundumTb(dut, rng)
    await tb.start(open_driver=False)
    first = await tb.read32(contract.WIN_STATUS + contract.INFO_WINDOW_BYTES)
    snapshot = await drv.read_info_block(tb.read32)
    tables = drv.descriptors(snapshot)
    largest = max(tables, key=lambda d: d.size)
    assert largest.base != contract.INFO_WINDOW_BYTES or first & 1, "the first table was not busy after reset"
    errors = []
    for d in tables:
        for polls in range(10_000):
            status = await tb.read32(d.base + contract.WIN_STATUS)
            if not status & 1:
                break
        else:
            raise AssertionError(f"table at 0x{d.base:06x} still busy after reset")
        for index in probe_indexes(d, rng):
            err = await tb.window_command(d.base, 2, index)
            if err:
                errors.append(f"table at 0x{d.base:06x}: READ of {index:#x} answered {err}")
                continue
            words = {"FLAGS": contract.WIN_FLAGS, "PRIORITY": contract.WIN_PRIORITY}
            words.update({f"KEY[{i}]": contract.WIN_KEY + 4 * i for i in range((d.key_bits + 31) // 32)})
            words.update({f"MASK[{i}]": contract.WIN_MASK + 4 * i for i in range((d.key_bits + 31) // 32)})
            words.update({f"DATA[{i}]": contract.WIN_DATA + 4 * i for i in range((d.data_bits + 31) // 32)})
            if d.counters:
                for name, a in (("PACKETS", contract.WIN_PACKETS), ("BYTES", contract.WIN_BYTES)):
                    words.update({f"{name}.lo": a, f"{name}.hi": a + 4})
            # A READ of an LPM tree node reports FLAGS.valid set and the node in DATA.
            node = d.code == contract.KIND_LPM and index >> contract.LPM_LEVEL_SHIFT < d.geometry
            for name, a in words.items():
                v = await tb.read32(d.base + a)
                if v != (1 if node and name == "FLAGS" else 0):
                    errors.append(f"table at 0x{d.base:06x} (kind {d.code}) entry {index:#x}: "
                                  f"{name} = {v:#x} after reset")
        for name, a in (("HITS", contract.WIN_HITS), ("MISSES", contract.WIN_MISSES)):
            if await tb.read32(d.base + a) or await tb.read32(d.base + a + 4):
                errors.append(f"table at 0x{d.base:06x}: {name} not zero after reset")
    tb.fail_on(errors)
    await tb.check_counters()


@cocotb.test()
async def test_command_during_reset_clear(dut):
    """A command written while a table clears itself after reset is not lost: DEFAULT on the
    first table right after reset (STATUS still busy) takes effect once the clear is done,
    as READ_DEFAULT then shows."""
    rng, _ = cocotb_util.test_rng(dut, "command_during_reset_clear")
    tb = CorundumTb(dut, rng)
    await tb.start(open_driver=False)
    base = contract.INFO_WINDOW_BYTES
    action, data = rng.randrange(1, 4), rng.getrandbits(32)
    await tb.write32(base + contract.WIN_FLAGS, drv.flags_word(action))
    await tb.write32(base + contract.WIN_DATA, data)
    await tb.write32(base + contract.WIN_CMD, contract.CMD_DEFAULT)
    assert await tb.read32(base + contract.WIN_STATUS) & contract.STATUS_BUSY, "the clear after reset was already done"
    snapshot = await drv.read_info_block(tb.read32)
    first = drv.descriptors(snapshot)[0]
    assert first.default_action
    data &= (1 << min(first.data_bits, 32)) - 1
    for _ in range(10_000):
        status = await tb.read32(base + contract.WIN_STATUS)
        if not status & contract.STATUS_BUSY:
            break
    error_bits = contract.STATUS_ERROR_MASK << contract.STATUS_ERROR_SHIFT
    assert not status & (error_bits | contract.STATUS_BUSY), f"STATUS {status:#x} after DEFAULT"
    await tb.write32(base + contract.WIN_DATA, 0)
    assert await tb.window_command(base, contract.CMD_READ_DEFAULT) == 0
    got = (drv.flags_action(await tb.read32(base + contract.WIN_FLAGS)), await tb.read32(base + contract.WIN_DATA))
    assert got == (action, data), f"miss action {got}, DEFAULT wrote {(action, data)}"


@cocotb.test()
async def test_error_register(dut):
    """Every access the app port answers with SLVERR is also recorded where a host on
    Corundum (whose PCIe bridge drops the response codes) can read it: ERROR_ADDRESS holds
    the last one's address, ERROR_SEEN says one happened, ERROR_WRITE whether it was a write,
    ERROR_COUNT how many since ERROR was written; writing ERROR clears it, and good
    accesses leave it alone."""
    tb = await setup(dut, "error_register")
    assert await tb.read32(APP_REGS + ERROR) == 0, "an error recorded before any access"
    bad = [(tb.rng.randrange(len(tb.model.tables) + 1, 0x7F) << 16 | tb.rng.randrange(0, 0x10000, 4)),
           APP_REGS + 0x6C, APP_REGS + 0x1000 + tb.rng.randrange(0, 0x1000, 4), 0xFFFFFC]
    count = 0
    for addr in bad:
        for write in (False, True):
            if write:
                assert (await tb.axil.write(addr, bytes(4))).resp == AxiResp.SLVERR
            else:
                assert (await tb.axil.read(addr, 4)).resp == AxiResp.SLVERR
            count += 1
            assert await tb.read32(APP_REGS + ERROR_ADDRESS) == addr
            assert await tb.read32(APP_REGS + ERROR) == (count << contract.APP_ERROR_COUNT_SHIFT | contract.APP_ERROR_SEEN
                                                        | (contract.APP_ERROR_WRITE if write else 0)), \
                f"ERROR after a bad {'write' if write else 'read'} of 0x{addr:06x}"
    await tb.write32(APP_REGS + ERROR, 0)
    assert await tb.read32(APP_REGS + ERROR) == 0
    await tb.read32(contract.INFO_MAGIC)
    await tb.write32(APP_REGS + CONTROL, 0)
    assert await tb.read32(APP_REGS + ERROR) == 0, "a good access recorded as an error"
    assert await tb.read32(APP_REGS + ERROR_ADDRESS) == bad[-1]


@cocotb.test()
async def test_rx_fates(dut):
    """Frames from the MAC through the pipeline, one of each fate, several rounds with
    back-pressure: what is not dropped reaches the host as the model has it (routed frames
    rewritten, punted ones unchanged), each with its own PTP timestamp; dropped frames
    vanish and are counted."""
    tb = await setup(dut, "rx_fates")
    await fixed_tables(tb)
    for rnd in range(4):
        tb.random_gaps()
        for name, frame, reason in fates(tb):
            f = await tb.send_rx(f"r{rnd} {name}", frame)
            if reason in (L2_DROP, L3_DROP, ACL_DENY):
                assert f.out is None and f.reason == reason, f.name
            elif reason is not None:
                assert f.punt and f.reason == reason, f.name
        await tb.check()


@cocotb.test()
async def test_rx_bad_frame(dut):
    """bad_frame on the last beat of a frame from the MAC: the pipeline drops it (and only
    it); good frames around it come through with their timestamps."""
    tb = await setup(dut, "rx_bad_frame")
    await fixed_tables(tb)
    for k in range(30):
        frame = ipv4(tb, "10.1.1.1", length=tb.rng.randrange(60, 300))
        f = await tb.send_rx(f"#{k}", frame, bad=k % 3 == 1)
        assert (f.out is None) == f.bad
    await tb.check()


@cocotb.test()
async def test_tx_bypass(dut):
    """With CONTROL bit 0 clear (MATCHA_TX_PIPELINE=0), host frames go to the MAC untouched
    with their tags, even ones the tables would drop, and each gets the MAC's completion."""
    tb = await setup(dut, "tx_bypass")
    await fixed_tables(tb)
    tb.random_gaps()
    for rnd in range(3):
        for name, frame, _ in fates(tb):
            await tb.send_tx(f"r{rnd} {name}", frame)
        arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP())
        await tb.send_tx(f"r{rnd} arp", arp)
        # bad_frame passes through on the last beat: of a frame of one beat and of several.
        await tb.send_tx(f"r{rnd} short bad", arp[:tb.lanes], bad=True)
        await tb.send_tx(f"r{rnd} bad", ipv4(tb, "10.1.1.1"), bad=True)
    await tb.check()


@cocotb.test()
async def test_tx_pipeline(dut):
    """With CONTROL bit 0 set, host frames go through the pipeline (ingress port
    hostPortBase): forwarded and routed ones reach the MAC with their tags and get the MAC's
    completion; dropped ones (tables, bad_frame) vanish and punted ones reach the host with
    timestamp 0, both with a completion made by the block (timestamp 0). Frames shorter
    than 60 bytes (ARP) are padded with zeros first, not punted as runts."""
    tb = await setup(dut, "tx_pipeline")
    await fixed_tables(tb)
    await tb.tx_through_pipeline(True)
    for rnd in range(3):
        tb.random_gaps()
        for name, frame, reason in fates(tb):
            f = await tb.send_tx(f"r{rnd} {name}", frame)
            if reason in (L2_DROP, L3_DROP, ACL_DENY):
                assert f.out is None and f.reason == reason, f.name
        arp = bytes(Ether(dst=mac_str(MAC_A)) / ARP())
        assert len(arp) < MIN_TX_BYTES
        f = await tb.send_tx(f"r{rnd} short arp", arp)
        assert f.out is not None and not f.punt and len(f.out) == MIN_TX_BYTES
        f = await tb.send_tx(f"r{rnd} bad", ipv4(tb, "10.1.1.1"), bad=True)
        assert f.out is None
        await tb.send_tx(f"r{rnd} short bad", arp, bad=True)
    await tb.check()


@cocotb.test()
async def test_tx_switch_under_traffic(dut):
    """CONTROL bit 0 flipped while host frames flow, some already taken and the rest
    waiting in the host's queue: each frame takes one path, chosen when its first beat is
    offered, so the frames up to some point take the old path and the rest the new one,
    that point being just after the last frame whose first beat the host had offered when
    the write landed. Every
    frame comes out (or not) as the model has it on its path, in order on each path, and
    gets exactly one completion; the counters count each frame on its path."""
    tb = await setup(dut, "tx_switch_under_traffic")
    await fixed_tables(tb)
    for rnd in range(6):
        tb.random_gaps()
        new_path = rnd % 2 == 0   # bypass at reset: the first flip is to the pipeline
        for _ in range(3):
            for name, frame, _ in fates(tb):
                await tb.send_tx(f"r{rnd} {name}", frame)
        sent = list(tb.sent)
        n = len(sent)
        assert len({f.tag for f in sent}) == n
        await wait_for(lambda: tb.tx_src.queue_occupancy_frames <= 2 * n // 3, dut.clk,
                       100_000, "a third of the host frames taken")
        # Frames the host has not started are all after the switch point; of the ones it
        # had started, only the last can still have its first beat waiting for tready.
        started = n - tb.tx_src.queue_occupancy_frames
        await tb.tx_through_pipeline(new_path)
        queued = tb.tx_src.queue_occupancy_frames
        assert queued, "the host had sent every frame before the switch: send more"
        await wait_for(lambda: len(tb.completions) >= n, dut.clk, 4000 * n,
                       f"{n} completions ({len(tb.completions)} so far)")
        await tb.settle()
        counters = await tb.read_counters()
        tried = []
        for point in range(max(started - 1, 0), n - queued + 1):
            for i, f in enumerate(sent):
                f.via_pipeline = new_path if i >= point else not new_path
                tb.expect(f)
            errors = tb.switch_errors(counters)
            if not errors:
                break
            tried.append(f"switch before frame {point}: {len(errors)} mismatches, "
                         f"first {errors[0]}")
        else:
            tb.fail_on(tried)
        dut._log.info("round %d: frames 0..%d on the old path, %d..%d on the new", rnd,
                      point - 1, point, n - 1)
        tb.retire()


async def taken_or_held(tb, src, valid, ready, clocks=200):
    """After a frame is queued on `src`: True once lane 0 of the stream it feeds has offered
    a beat that is not taken for `clocks` clocks in a row, False once `src` has sent all."""
    held = 0
    for _ in range(100_000):
        await RisingEdge(tb.dut.clk)
        held = held + 1 if int(valid.value) & 1 and not int(ready.value) & 1 else 0
        if held >= clocks:
            return True
        if src.idle():
            return False
    raise AssertionError("a frame neither taken nor held")


@cocotb.test()
async def test_tx_switch_with_beat_offered(dut):
    """CONTROL bit 0 flipped while a host frame's first beat is offered and not taken: the
    frame stays on the path it was offered to, and neither path stalls. To the pipeline: the
    MAC stops taking, a host frame waits at the MAC, the switch to the pipeline comes, then
    more host frames and frames from the wire. To the bypass: host frames the tables drop
    wait for completions the TX engine does not take, until the next one waits at the
    pipeline's input, the switch to the bypass comes, then frames from the wire, which
    share that input."""
    tb = await setup(dut, "tx_switch_with_beat_offered")
    await fixed_tables(tb)
    for sink in (tb.host, tb.wire):
        sink.set_pause_generator(None)

    tb.wire.pause = True
    # Longer than the beats the block takes in to read a frame's CPU header before it
    # offers the frame to a path (ip/corundum/README.md), so the host still holds the rest.
    await tb.send_tx("waits at the MAC", ipv4(tb, "10.1.1.1", length=1000))
    assert await taken_or_held(tb, tb.tx_src, dut.m_axis_sync_tx_tvalid,
                               dut.m_axis_sync_tx_tready), "the MAC took a frame while stopped"
    await tb.tx_through_pipeline(True)
    for name, frame, _ in fates(tb):
        await tb.send_tx(f"host {name}", frame)
        await tb.send_rx(f"wire {name}", frame)
    tb.wire.pause = False
    await tb.check()

    # Dropped host frames owe completions the block makes; with the TX engine taking none,
    # they stay in flight until the block's limit stops the next frame at its first beat.
    await tb.tx_through_pipeline(True)
    tb.cpl_busy = 1.0
    l2_drop = next(frame for name, frame, _ in fates(tb) if name == "l2 drop")
    for k in range(1000):
        await tb.send_tx(f"in flight #{k}", l2_drop)
        if await taken_or_held(tb, tb.tx_src, dut.s_axis_sync_tx_tvalid,
                               dut.s_axis_sync_tx_tready):
            break
    else:
        raise AssertionError("1000 dropped host frames did not stop the host's tap")
    dut._log.info("the host's tap stopped after %d dropped frames", k + 1)
    await tb.tx_through_pipeline(False)
    for name, frame, _ in fates(tb):
        await tb.send_rx(f"wire {name}", frame)
    tb.cpl_busy = 0.0
    await tb.check()


@cocotb.test()
async def test_backpressure_fills_pipeline(dut):
    """The host and the MAC stop taking frames while 300 minimum-size and some jumbo frames
    arrive on both taps: the host's tap stops (tready low) and the MAC's frames wait in its
    port's ingress buffer (which holds them all here), nothing lost or reordered, and
    everything comes out once they take again."""
    tb = await setup(dut, "backpressure_fills_pipeline")
    await fixed_tables(tb)
    await tb.tx_through_pipeline(True)
    for src in (tb.rx_src, tb.tx_src):
        src.set_pause_generator(None)
    for sink in (tb.host, tb.wire):
        sink.set_pause_generator(None)
        sink.pause = True
    tb.cpl_busy = 1.0
    for k in range(300):
        length = 9000 if k in (50, 220) else 60
        frame = ipv4(tb, tb.rng.choice(["10.1.1.1", "192.0.2.1", "10.66.0.1"]), length=length)
        await (tb.send_tx if k % 2 else tb.send_rx)(f"#{k}", frame)
    await ClockCycles(dut.clk, 3000)
    stalled = not int(dut.s_axis_sync_rx_tready.value) or not int(dut.s_axis_sync_tx_tready.value)
    assert stalled, "the block still takes frames with the host and the MAC stopped"
    assert not tb.host_frames and not tb.wire_frames
    for sink in (tb.host, tb.wire):
        sink.pause = False
    tb.cpl_busy = 0.0
    await tb.check()


@cocotb.test()
async def test_random_traffic(dut):
    """Random tables and defaults (as tb/pipeline draws them), random frames on both taps
    (IPv4 biased to the entries, non-IP, VXLAN, malformed, bad_frame, short host frames)
    under random gaps and back-pressure, host frames through the pipeline or not."""
    await random_traffic(dut, "random_traffic", rounds=4)


@soak
@cocotb.test()
async def test_random_traffic_soak(dut):
    """test_random_traffic for 40 rounds (4,800 frames)."""
    await random_traffic(dut, "random_traffic_soak", rounds=40)


async def load_random_tables(tb):
    """Random tables (tb/pipeline's draw) loaded through the driver."""
    l2, routes, acl = random_tables(tb)
    for table, items in (("l2_fwd", l2), ("ipv4_lpm", routes), ("acl", acl)):
        for entry, action, data in items:
            await tb.add(table, *entry_args(entry), action=action, data=data)


async def random_traffic(dut, name, rounds):
    tb = await setup(dut, name)
    rng = tb.rng
    await load_random_tables(tb)
    maker = traffic.FrameMaker(rng, tb.model)
    for rnd in range(rounds):
        await tb.tx_through_pipeline(rnd % 4 != 2)
        tb.random_gaps()
        for _ in range(120):
            name, frame, _, bad = maker.frame()
            if rng.random() < 0.05:
                frame = frame[:rng.randrange(14, 60)]
            if rng.random() < 0.5:
                await tb.send_tx(f"r{rnd} tx {name}", frame, bad)
            else:
                await tb.send_rx(f"r{rnd} rx {name}", frame, bad)
        await tb.check()
