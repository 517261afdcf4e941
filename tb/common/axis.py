# SPDX-License-Identifier: Apache-2.0
"""AXI4-Stream helpers for the packet-path and deparser testbenches."""

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge

from tb.model import PORT_WIDTH


def decode_out_tuser(value, port_width=PORT_WIDTH):
    """m_axis_tuser -> {punt, egressPort, reason} (docs: bit 0 punt, [P:1] port,
    [P+8:P+1] reason)."""
    return {"punt": value & 1,
            "egressPort": (value >> 1) & ((1 << port_width) - 1),
            "reason": (value >> (1 + port_width)) & 0xFF}


def in_tuser_bytes(length, lanes, port, bad=False, port_later=None, bad_on_beats=None):
    """Per-byte tuser list for an AxiStreamSource frame of `length` bytes.

    bit 0 is bad_frame and counts on the last beat only; bits [P:1] carry the ingress
    port, taken from the first beat. `port_later` puts a different port on the later
    beats; `bad_on_beats` sets bit 0 on the given beat indexes (default: the last beat
    when `bad`).
    """
    nbeats = (length + lanes - 1) // lanes
    if bad_on_beats is None:
        bad_on_beats = {nbeats - 1} if bad else set()
    out = []
    for beat in range(nbeats):
        p = port if beat == 0 or port_later is None else port_later
        v = (p << 1) | (1 if beat in bad_on_beats else 0)
        n = min(lanes, length - beat * lanes)
        out.extend([v] * n)
    return out


def check_beats(frame, lanes):
    """Check a frame received with recv(compact=False): tkeep contiguous from lane 0 on
    every beat, every beat but the last full, the last one not empty; tuser the same on
    every beat. Returns (data, tuser_of_first_beat, [problems])."""
    problems = []
    tkeep = list(frame.tkeep)
    tdata = bytes(frame.tdata)
    tuser = list(frame.tuser) if frame.tuser else []
    nbeats = len(tdata) // lanes
    data = bytearray()
    for b in range(nbeats):
        keep = tkeep[b * lanes:(b + 1) * lanes]
        n = sum(keep)
        if keep != [1] * n + [0] * (lanes - n):
            problems.append(f"beat {b}: tkeep {''.join(map(str, keep[::-1]))} not "
                            f"contiguous from lane 0")
        if b < nbeats - 1 and n != lanes:
            problems.append(f"beat {b} of {nbeats}: partial beat ({n} bytes) before tlast")
        if b == nbeats - 1 and n == 0:
            problems.append("last beat has tkeep 0")
        data += bytes(tdata[b * lanes + i] for i in range(lanes) if keep[i])
    first = tuser[0] if tuser else None
    if tuser:
        per_beat = [tuser[b * lanes] for b in range(nbeats)]
        if any(u != first for u in per_beat):
            problems.append(f"tuser changes within the frame: {[hex(u) for u in per_beat]}")
    return bytes(data), first, problems


class DropMonitor:
    """Records (cycle, reason) for every clock with drop_valid high."""

    def __init__(self, dut):
        self.dut = dut
        self.drops = []
        self.cycle = 0
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1
            if int(self.dut.drop_valid.value):
                self.drops.append((self.cycle, int(self.dut.drop_payload.value)))


class FrameProbe:
    """First-beat and last-beat clocks of every frame on an AXI4-Stream interface, the
    beats accepted and the clocks it stalled (valid without ready); `reset()` starts the
    lists and counts again, the clock count goes on (the benchmarks' probe)."""

    def __init__(self, dut, prefix):
        self.valid = getattr(dut, f"{prefix}_tvalid")
        self.ready = getattr(dut, f"{prefix}_tready")
        self.last = getattr(dut, f"{prefix}_tlast")
        self.clk = dut.clk
        self.cycle = 0
        self.reset()
        cocotb.start_soon(self._run())

    def reset(self):
        self.starts, self.ends = [], []
        self.beats = self.stalls = 0
        self._in_frame = False

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if not int(self.valid.value):
                continue
            if not int(self.ready.value):
                self.stalls += 1
                continue
            self.beats += 1
            if not self._in_frame:
                self.starts.append(self.cycle)
                self._in_frame = True
            if int(self.last.value):
                self.ends.append(self.cycle)
                self._in_frame = False


class BeatCounter:
    """Counts accepted beats and frames on an AXI4-Stream interface, per cycle."""

    def __init__(self, dut, prefix):
        self.valid = getattr(dut, f"{prefix}_tvalid")
        self.ready = getattr(dut, f"{prefix}_tready")
        self.last = getattr(dut, f"{prefix}_tlast")
        self.clk = dut.clk
        self.cycle = 0
        self.beats = []   # cycle of each accepted beat
        self.lasts = []   # cycle of each accepted tlast
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            self.cycle += 1
            if int(self.valid.value) and int(self.ready.value):
                self.beats.append(self.cycle)
                if int(self.last.value):
                    self.lasts.append(self.cycle)


async def wait_for(cond, clk, timeout_cycles, what):
    for _ in range(timeout_cycles):
        if cond():
            return
        await RisingEdge(clk)
    if not cond():
        raise AssertionError(f"timeout after {timeout_cycles} clocks waiting for {what}")


def describe(exp, got):
    if len(exp) != len(got):
        return f"length {len(got)}, expected {len(exp)}"
    diffs = [i for i in range(len(exp)) if exp[i] != got[i]]
    return (f"{len(diffs)} bytes differ, first at {diffs[0]} ({got[diffs[0]]:#04x} != "
            f"{exp[diffs[0]]:#04x}), offsets {diffs[:12]}")


class OutputChecker:
    """Expected outputs in order (frames with tuser, and drop reasons) vs what the DUT's
    m_axis and drop port produce."""

    def __init__(self, dut, sink, drops, lanes, port_width=PORT_WIDTH):
        self.dut = dut
        self.sink = sink
        self.drops = drops
        self.lanes = lanes
        self.port_width = port_width
        self.items = []   # (name, frame, (out, tuser, drop_reason))
        # The larger share of clocks the source or the sink pauses: the default timeout
        # stretches by 1 / (1 - busy), the slowest the frames can then get through.
        self.busy = 0.0

    def expect(self, name, frame, expected):
        self.items.append((name, frame, expected))

    async def check(self, timeout=None, settle=50):
        """Wait for every expected frame and drop, compare in order. Returns the output
        frames (bytes) in order; raises AssertionError listing every mismatch."""
        want_out = [(n, f, e) for n, f, e in self.items if e[0] is not None]
        want_drop = [(n, e[2]) for n, f, e in self.items if e[0] is None]
        total = sum(len(f) for _, f, _ in self.items)
        timeout = timeout or 4000 + int(8 * (total // self.lanes + 10 * len(self.items))
                                        / (1 - self.busy))
        got = []

        async def collect():
            while len(got) < len(want_out):
                got.append(await self.sink.recv(compact=False))

        task = cocotb.start_soon(collect())
        try:
            await wait_for(lambda: len(got) >= len(want_out)
                           and len(self.drops.drops) >= len(want_drop),
                           self.dut.clk, timeout,
                           f"{len(want_out)} frames ({len(got)} so far) and "
                           f"{len(want_drop)} drops ({len(self.drops.drops)} so far)")
        except AssertionError as e:
            self._report_partial(want_out, want_drop, got)
            raise e
        await ClockCycles(self.dut.clk, settle)
        task.cancel()
        errors = self._compare(want_out, want_drop, got)
        if not self.sink.empty():
            errors.append(f"{self.sink.count()} unexpected extra output frames")
        if len(self.drops.drops) != len(want_drop):
            errors.append(f"{len(self.drops.drops)} drops, expected {len(want_drop)}")
        for e in errors[:30]:
            self.dut._log.error("%s", e)
        assert not errors, f"{len(errors)} mismatches; first: {errors[0]}"
        self.items = []
        self.drops.drops.clear()
        return [check_beats(fr, self.lanes)[0] for fr in got]

    def _compare(self, want_out, want_drop, got):
        errors = []
        for (name, reason), (_, g) in zip(want_drop, self.drops.drops):
            if g != reason:
                errors.append(f"{name}: drop reason {g}, expected {reason}")
        for (name, frame, (exp, tuser, _)), fr in zip(want_out, got):
            data, tu, problems = check_beats(fr, self.lanes)
            errors.extend(f"{name}: {p}" for p in problems)
            if data != exp:
                errors.append(f"{name}: output differs from the model: {describe(exp, data)}"
                              f"\n    in  {frame[:160].hex()}\n    exp {exp[:160].hex()}"
                              f"\n    got {data[:160].hex()}")
            got_tuser = decode_out_tuser(tu, self.port_width) if tu is not None else None
            if got_tuser != tuser:
                errors.append(f"{name}: tuser {got_tuser}, expected {tuser}")
        return errors

    def _report_partial(self, want_out, want_drop, got):
        errors = self._compare(want_out, want_drop, got)
        self.dut._log.error("timeout with %d/%d frames and %d/%d drops; mismatches so far:",
                            len(got), len(want_out), len(self.drops.drops), len(want_drop))
        for e in errors[:20]:
            self.dut._log.error("%s", e)
