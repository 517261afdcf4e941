# SPDX-License-Identifier: Apache-2.0
"""32-bit register access to a DUT's AXI4-Lite port through cocotbext-axi."""

from cocotb.task import resume
from cocotbext.axi import AxiResp

from tb.common.contract import (STATUS_BUSY, STATUS_ERROR_MASK, STATUS_ERROR_SHIFT, WIN_CMD, WIN_INDEX,
                                WIN_STATUS)
from tb.common.driver import BusError


class AxiLiteRegisters:
    """read32/write32 of little-endian 32-bit registers for a testbench whose
    cocotbext-axi AxiLiteMaster is `self.axil`. A response other than OKAY raises
    BusError: it fails a test, and a driver call running on the bus (driver.Device) sees
    it as the bus error it reports."""

    async def write32(self, addr, value):
        r = await self.axil.write(addr, value.to_bytes(4, "little"))
        if r.resp != AxiResp.OKAY:
            raise BusError(f"write of 0x{value:08x} to 0x{addr:06x}: {r.resp!r}")

    async def read32(self, addr):
        r = await self.axil.read(addr, 4)
        if r.resp != AxiResp.OKAY:
            raise BusError(f"read of 0x{addr:06x}: {r.resp!r}")
        return int.from_bytes(r.data, "little")

    async def window_command(self, base, op, index=None, max_polls=100_000):
        """One command straight on the table window at `base` (docs/tables.md): INDEX
        when given, CMD, then STATUS until it is not busy. Returns STATUS's error field."""
        if index is not None:
            await self.write32(base + WIN_INDEX, index)
        await self.write32(base + WIN_CMD, op)
        for _ in range(max_polls):
            status = await self.read32(base + WIN_STATUS)
            if not status & STATUS_BUSY:
                return (status >> STATUS_ERROR_SHIFT) & STATUS_ERROR_MASK
        raise AssertionError(f"command {op} at 0x{base:06x} still busy after {max_polls} "
                             "STATUS reads")


class LiveBus:
    """The register backend of a C driver call (driver.Device) running in a bridge thread
    (cocotb.task.bridge): each access blocks the thread until the AXI4-Lite transaction of
    `regs` (an AxiLiteRegisters) is done on the DUT; a response other than OKAY raises
    BusError, which the driver reports as a bus error."""

    def __init__(self, regs):
        self.read32 = resume(regs.read32)
        self.write32 = resume(regs.write32)
