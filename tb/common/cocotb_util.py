# SPDX-License-Identifier: Apache-2.0
"""Helpers shared by the cocotb test modules (run inside the simulator)."""

import logging
import os
import random
import warnings

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from tb.common import seeds
from tb.common.phv import Layout

CLOCK_NS = 4


def layout():
    return Layout(os.environ["MATCHA_TB_LAYOUT"])


def config():
    return os.environ.get("MATCHA_TB_CONFIG", "w64")


def test_rng(dut, name):
    """Random generator of one cocotb test, derived from the run's seed; logs the seed."""
    seed = seeds.sim_seed()
    dut._log.info("MATCHA_SEED=%d (test %s)", seed, name)
    return random.Random(f"{seed}:{name}"), seed


async def start(dut, clock_ns=CLOCK_NS, inputs_low=()):
    """Start the clock and apply reset; `inputs_low` are driven 0 during reset."""
    for name in inputs_low:
        getattr(dut, name).value = 0
    Clock(dut.clk, clock_ns, unit="ns").start()
    dut.rst.value = 1
    await ClockCycles(dut.clk, 8)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


def pause_pattern(rng, busy):
    """Endless pause generator: pauses with probability `busy` (0 = never)."""
    while True:
        yield busy > 0 and rng.random() < busy


def quiet_cocotbext(dut, prefixes=("s_axis", "m_axis", "s_phv")):
    """cocotbext-axi logs every frame at INFO; keep the logs readable."""
    for prefix in prefixes:
        logging.getLogger(f"cocotb.{dut._name}.{prefix}").setLevel(logging.WARNING)


# cocotbext-axi 0.1.28 uses cocotb APIs that cocotb 2 deprecates; not ours to fix.
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"cocotbext\.")


class CycleCounter:
    """Counts rising edges of `clk` (the DUT's `clk` unless given) after reset, so tests
    can timestamp events in clocks."""

    def __init__(self, dut, clk=None):
        self.cycle = 0
        self._task = cocotb.start_soon(self._run(clk if clk is not None else dut.clk))

    async def _run(self, clk):
        while True:
            await RisingEdge(clk)
            self.cycle += 1


class BusyMonitor:
    """Clocks during which a control window's table command is pending (what STATUS bit 0
    reports of it), one span per command, in `spans`; of a model built with
    `probed=BusyMonitor.PROBED` (sim.build)."""
    PROBED = ("window_tablePending",)

    def __init__(self, dut, pending=PROBED[0]):
        self.dut = dut
        self.pending = getattr(dut, pending)
        self.spans = []
        cocotb.start_soon(self._run())

    async def _run(self):
        busy = 0
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            if int(self.pending.value):
                busy += 1
            elif busy:
                self.spans.append(busy)
                busy = 0
