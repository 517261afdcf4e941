# SPDX-License-Identifier: Apache-2.0
"""A memory behind an AXI4 port that answers reads late, as DRAM and HBM do.

Each read of full beats (one, or an incrementing burst of several) is answered `latency`
clocks (plus up to `jitter`) after the port takes its address, read from memory when it is
answered, or, with `snapshot`, when its address is taken: then a read misses every write
that lands while it is out, as a DRAM read that left the controller's queue before the
write reached it does. Answers keep the order of their read id (as AXI asks) but may
overtake answers of another id; a burst's beats go out together. `ar_busy` and `r_busy`
hold arready low and rvalid back at random (cocotb_util.pause_pattern); `stall_ar()` holds
arready low until `release_ar()`.

A write lands in memory `write_latency` clocks after its last data beat, and its response
goes out then: until its B, a read may find the bucket as it was, the latest AXI allows.
`aw_busy`, `w_busy` and `b_busy` (set_write_pauses) hold awready, wready and bvalid back at
random. Responses keep the order of their write id.

Built from cocotbext-axi's channel sinks and sources and its Memory rather than its
AxiRam, which answers a read as soon as it can: it has no read latency, no reordering
across ids and no write that lands late, which are what these tests are about.
"""

import heapq
import re

import cocotb
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiBus
from cocotbext.axi.axi_channels import AxiARSink, AxiAWSink, AxiBSource, AxiRSource, AxiWSink
from cocotbext.axi.memory import Memory

from tb.common import cocotb_util


class LateMemory:
    def __init__(self, dut, prefix, size, rng, cycles, clk=None, reset=None):
        """`cycles` counts the rising edges of `clk`, the port's clock (the DUT's `clk`
        unless given): latencies are in its clocks. With `reset` (active high), the memory
        takes no read or write while it is held, as a memory controller in reset does."""
        bus = AxiBus.from_prefix(dut, prefix)
        self.clk = clk if clk is not None else dut.clk
        self.mem = Memory(size)
        self.aw = AxiAWSink(bus.write.aw, self.clk, reset)
        self.w = AxiWSink(bus.write.w, self.clk, reset)
        self.b = AxiBSource(bus.write.b, self.clk, reset)
        self.cycles = cycles
        self.rng = rng
        self.ar = AxiARSink(bus.read.ar, self.clk, reset)
        self.r = AxiRSource(bus.read.r, self.clk)
        self.byte_lanes = len(bus.read.r.rdata) // 8
        self.latency = 100
        self.jitter = 0
        self.snapshot = False
        self.failing = set()  # beat addresses whose reads are answered SLVERR
        self._stalled = False
        self._ar_busy = 0.0
        self._due = []  # heap of (clock due, order, id, address, data or None)
        self._last_due = {}  # read id -> clock its latest answer is due
        self._order = 0
        self.reads = 0
        self.beats_read = set()  # the address of every beat read
        self.write_latency = 0
        self._writes_due = []  # heap of (clock due, order, id, [(address, bytes)])
        self._last_write_due = {}  # write id -> clock its latest response is due
        self.writes = 0
        self._write_open = False  # an address taken whose data has not all come
        self.set_pauses(0.0, 0.0)
        self.set_write_pauses(0.0, 0.0, 0.0)
        cocotb.start_soon(self._take_reads())
        cocotb.start_soon(self._answer_reads())
        cocotb.start_soon(self._take_writes())
        cocotb.start_soon(self._land_writes())

    def set_pauses(self, ar_busy, r_busy):
        self._ar_busy = ar_busy
        self.ar.set_pause_generator(self._ar_pauses())
        self.r.set_pause_generator(cocotb_util.pause_pattern(self.rng, r_busy))

    def _ar_pauses(self):
        while True:
            yield self._stalled or (self._ar_busy > 0 and self.rng.random() < self._ar_busy)

    def set_write_pauses(self, aw_busy, w_busy, b_busy):
        self.aw.set_pause_generator(cocotb_util.pause_pattern(self.rng, aw_busy))
        self.w.set_pause_generator(cocotb_util.pause_pattern(self.rng, w_busy))
        self.b.set_pause_generator(cocotb_util.pause_pattern(self.rng, b_busy))

    def stall_ar(self):
        self._stalled = True

    def release_ar(self):
        self._stalled = False

    async def _take_reads(self):
        while True:
            ar = await self.ar.recv()
            assert 1 << int(ar.arsize) == self.byte_lanes, "full beats"
            assert int(ar.arburst) == 1 or int(ar.arlen) == 0, "an incrementing burst"
            rid, address = int(ar.arid), int(ar.araddr)
            assert address % self.byte_lanes == 0, f"unaligned read at {address:#x}"
            beats = [address + k * self.byte_lanes for k in range(int(ar.arlen) + 1)]
            due = self.cycles.cycle + self.latency + self.rng.randint(0, self.jitter)
            due = max(due, self._last_due.get(rid, 0))
            self._last_due[rid] = due
            data = [self._read(a) for a in beats] if self.snapshot else None
            heapq.heappush(self._due, (due, self._order, rid, beats, data))
            self._order += 1
            self.reads += 1
            self.beats_read.update(beats)

    async def _answer_reads(self):
        while True:
            await RisingEdge(self.clk)
            while self._due and self._due[0][0] <= self.cycles.cycle:
                _, _, rid, beats, data = heapq.heappop(self._due)
                for k, address in enumerate(beats):
                    r = self.r._transaction_obj()
                    r.rid = rid
                    r.rlast = int(k == len(beats) - 1)
                    r.rdata = self._read(address) if data is None else data[k]
                    r.rresp = 0
                    if address in self.failing:
                        r.rresp = 2
                        r.rdata ^= (1 << 8 * self.byte_lanes) - 1
                    self.r.send_nowait(r)

    async def _take_writes(self):
        while True:
            aw = await self.aw.recv()
            self._write_open = True
            assert 1 << int(aw.awsize) == self.byte_lanes, "full beats"
            assert int(aw.awburst) == 1 or int(aw.awlen) == 0, "an incrementing burst"
            address = int(aw.awaddr)
            assert address % self.byte_lanes == 0, f"unaligned write at {address:#x}"
            ops = []
            for k in range(int(aw.awlen) + 1):
                w = await self.w.recv()
                assert int(w.wlast) == (k == int(aw.awlen)), "wlast on the burst's last beat"
                data = int(w.wdata).to_bytes(self.byte_lanes, "little")
                strb = int(getattr(w, "wstrb", (1 << self.byte_lanes) - 1))
                beat = address + k * self.byte_lanes
                # The runs of enabled bytes, each one write.
                for run in re.finditer("1+", f"{strb:0{self.byte_lanes}b}"[::-1]):
                    ops.append((beat + run.start(), data[run.start():run.end()]))
            wid = int(aw.awid)
            due = max(self.cycles.cycle + self.write_latency, self._last_write_due.get(wid, 0))
            self._last_write_due[wid] = due
            heapq.heappush(self._writes_due, (due, self._order, wid, ops))
            self._write_open = False
            self._order += 1
            self.writes += 1

    async def _land_writes(self):
        while True:
            await RisingEdge(self.clk)
            while self._writes_due and self._writes_due[0][0] <= self.cycles.cycle:
                _, _, wid, ops = heapq.heappop(self._writes_due)
                for address, data in ops:
                    self.mem.write(address, data)
                b = self.b._transaction_obj()
                b.bid = wid
                b.bresp = 0
                self.b.send_nowait(b)

    def _read(self, address):
        return int.from_bytes(self.mem.read(address, self.byte_lanes), "little")

    def _writing(self):
        """A write the port has sent some of (its address or a data beat) that has not yet
        landed and been answered."""
        return (not self.aw.empty() or self._write_open or not self.w.empty() or bool(self._writes_due)
                or not self.b.empty())

    async def writes_landed(self):
        """Returns once every write the port has sent has landed and been answered."""
        while self._writing():
            await RisingEdge(self.clk)

    def idle(self):
        return not self._due and self.r.empty() and not self._writing()
