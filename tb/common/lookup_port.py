# SPDX-License-Identifier: Apache-2.0
"""The lookup side of a match unit in a cocotb test (docs/tables.md, "Lookup interface"):
keys offered one per clock on `lookup_valid`/`lookup_payload`, results sampled from
`result_valid`/`result_payload_*`, each result matched to the key `latency` clocks before
it."""

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from tb.common import cocotb_util


class LookupPort:
    def __init__(self, dut, latency):
        self.dut, self.latency = dut, latency
        self.cycles = cocotb_util.CycleCounter(dut)
        self.inputs, self.outputs, self.monitor = {}, {}, None

    async def _monitor(self):
        dut = self.dut
        while self.monitor is not None:
            await RisingEdge(dut.clk)
            await ReadOnly()
            c = self.cycles.cycle
            if int(dut.lookup_valid.value):
                self.inputs[c] = int(dut.lookup_payload.value)
            if int(dut.result_valid.value):
                self.outputs[c] = (bool(dut.result_payload_hit.value), int(dut.result_payload_actionId.value),
                                   int(dut.result_payload_actionData.value), int(dut.result_payload_entryIndex.value))

    async def stream(self, keys, until=None):
        """Puts `keys` on the lookup port one per clock; with `until` (a callable), cycles
        through them until it returns true."""
        dut = self.dut
        if self.monitor is None:
            self.monitor = cocotb.start_soon(self._monitor())
        await RisingEdge(dut.clk)
        i = 0
        while (i < len(keys)) if until is None else not until():
            dut.lookup_valid.value = 1
            dut.lookup_payload.value = keys[i % len(keys)]
            await RisingEdge(dut.clk)
            i += 1
        dut.lookup_valid.value = 0

    async def collect(self):
        """Waits for the results of every key offered so far: [(clock, key, (hit, action id,
        action data, entry index))]. Each result must come exactly `latency` clocks after its
        key, and only then."""
        await ClockCycles(self.dut.clk, self.latency + 2)
        monitor, self.monitor = self.monitor, None
        if monitor is not None:
            await monitor
        out = []
        for c in sorted(self.inputs):
            r = self.outputs.pop(c + self.latency, None)
            assert r is not None, f"no result {self.latency} clocks after the key of clock {c}"
            out.append((c, self.inputs[c], r))
        assert not self.outputs, f"results with no key {self.latency} clocks before: " \
                                 f"clocks {sorted(self.outputs)[:8]}"
        self.inputs.clear()
        return out
