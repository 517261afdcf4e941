# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of `mqnic_app_block` of the builds `corundum-overlay-w64` and
`corundum-overlay` (512 bits, the card's scale): the overlay program (docs/overlay.md) as
Corundum's application block, with its tables in memory (the 64-bit build's sessions,
mappings and routes, the 512-bit build's sessions and mappings) in the card's DDR when
Corundum enables the DDR channels (DDR_ENABLE), else in its HBM when it enables those
(HBM_ENABLE: 256-bit beats, two a table's beat), on chip otherwise (ip/corundum/README.md,
"Tables in the card's memory").

The Corundum side is tb/corundum/corundum_tb.py's model; the tables are DASH's VNET
configuration of tb/overlay (dash_tables), loaded through the C driver on the app BAR. With
DDR_ENABLE (HBM_ENABLE), DDR (HBM) channel 0 is a memory (tb/common/late_memory.py) in
that channel's clock domain that answers reads 100 of its clocks late, and the other
kind of channel must stay idle. The oracle of every frame is the overlay program
model, as in tb/corundum; the memory's contents are checked against the program's regions
(docs/overlay.md, "Mappings, sessions and routes in memory").

Run one case: pytest tb/corundum -k "overlay and DDR" [--matcha-seed N]
"""

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from tb.common import cocotb_util, contract
from tb.common.late_memory import LateMemory
from tb.corundum.corundum_tb import APP_REGS, CorundumTb
from tb.overlay.overlay_tb import (
    ENI_TX, RX_CA, RX_MAC, RX_PA, RX_VNI, TX_CA, TX_MAC, dash_tables, outbound, vm_frame, vxlan,
)
from tb.pipeline.pipeline_tb import memory_regions
from tb.pipeline.traffic import ip_int

# The memory channels' clocks against the core's 250 MHz (cocotb_util.CLOCK_NS): DDR at
# 300 MHz, HBM at 450.
CLOCK_PS = {"ddr": 3334, "hbm": 2222}
MEMORY = APP_REGS + contract.APP_MEMORY


def channel_kind():
    """The channel the model's parameters give the tables (the shell's choice: DDR first),
    or None for the on-chip core."""
    params = dict(p.split("=") for p in os.environ.get("MATCHA_TB_PARAMETERS", "").split(",") if p)
    return next((k for k in CLOCK_PS if params.get(f"{k.upper()}_ENABLE") == "1"), None)


class OverlayCorundumTb(CorundumTb):
    def __init__(self, dut, rng):
        super().__init__(dut, rng)
        # The tables' ports in memory, {port: (base address, bytes)} of each one's region.
        program = self.lay.raw["program"]
        self.regions = {port: (base, size) for port, (_, base, size) in memory_regions(program).items()}
        self.in_memory = bool(self.regions)
        # A table's ids on its own port: the crossbar above them tells the tables apart.
        self.table_id_bits = next((t["memory"]["idWidth"] for t in program["tables"] + program.get("sessions", [])
                                   if "memory" in t), 0)
        self.memory = None
        self.kind = channel_kind()
        assert (self.kind is not None) == self.in_memory, "a memory core on a memory channel"
        self.requests = dict.fromkeys(CLOCK_PS, 0)  # clocks of a channel's clock with AR or AW valid
        self.writes = []        # (crossbar master, address) of each write the memory channel took
        if self.in_memory:
            cocotb_util.quiet_cocotbext(dut, (f"m_axi_{self.kind}",))
            clk = getattr(dut, f"{self.kind}_clk")
            cycles = cocotb_util.CycleCounter(dut, clk)
            self.memory = LateMemory(dut, f"m_axi_{self.kind}", 1 << 34, rng, cycles, clk=clk,
                                     reset=getattr(dut, f"{self.kind}_rst"))

    def status(self, kind=None):
        return getattr(self.dut, f"{kind or self.kind or 'ddr'}_status")

    async def start(self, ddr_ready=True):
        dut = self.dut
        for kind, period in CLOCK_PS.items():
            Clock(getattr(dut, f"{kind}_clk"), period, unit="ps").start()
            getattr(dut, f"{kind}_rst").value = 1
            self.status(kind).value = int(ddr_ready)
        await super().start(open_driver=False)
        for kind in CLOCK_PS:
            await ClockCycles(getattr(dut, f"{kind}_clk"), 4)
            getattr(dut, f"{kind}_rst").value = 0
            cocotb.start_soon(self._watch(kind))
        await self.open_driver()

    async def _watch(self, kind):
        dut = self.dut
        clk = getattr(dut, f"{kind}_clk")
        ar, aw = (getattr(dut, f"m_axi_{kind}_{s}") for s in ("arvalid", "awvalid"))
        while True:
            await RisingEdge(clk)
            self.requests[kind] += int(ar.value) + int(aw.value)
            if kind == self.kind and int(aw.value) and int(getattr(dut, f"m_axi_{kind}_awready").value):
                self.writes.append((int(getattr(dut, f"m_axi_{kind}_awid").value) >> self.table_id_bits,
                                    int(getattr(dut, f"m_axi_{kind}_awaddr").value)))

    def regions_of_masters(self):
        """{crossbar master: the table regions its writes landed in}; every write must land
        in some table's region."""
        out = {}
        for master, address in self.writes:
            inside = [name for name, (base, size) in self.regions.items() if base <= address < base + size]
            assert inside, f"a write at {address:#x}, in no table's region: {self.regions}"
            out.setdefault(master, set()).update(inside)
        return out


async def overlay_start(dut, name, ddr_ready=True):
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = OverlayCorundumTb(dut, rng)
    await tb.start(ddr_ready)
    await dash_tables(tb)
    return tb


@cocotb.test()
async def test_memory_register(dut):
    """APP MEMORY says whether this core keeps its tables in memory (the DDR_ENABLE and
    HBM_ENABLE models' do, the on-chip one's does not) and follows its channel's status."""
    rng, _ = cocotb_util.test_rng(dut, "memory_register")
    tb = OverlayCorundumTb(dut, rng)
    await tb.start(ddr_ready=False)
    tables = contract.APP_MEMORY_TABLES if tb.in_memory else 0
    assert await tb.read32(MEMORY) == tables
    tb.status().value = 1
    await ClockCycles(dut.clk, 8)
    assert await tb.read32(MEMORY) == tables | (contract.APP_MEMORY_READY if tb.in_memory else 0)
    version = await tb.read32(APP_REGS + contract.APP_VERSION)
    assert version == contract.APP_VERSION_VALUE, f"VERSION {version:#x}"


@cocotb.test()
async def test_overlay_flows(dut):
    """DASH's outbound and inbound paths through the block: a TX VM's TCP flows to RX_CA
    from the host (through the pipeline, to the MAC, encapsulated to RX_PA) and from the
    wire (to the host), the RX VM's replies passing on the session each learned, and a
    route miss, a mapping miss, a wrong VIP and an unsolicited inbound frame dropped, every
    frame against the overlay model, under random back-pressure. In the DDR_ENABLE
    (HBM_ENABLE) model the sessions, mappings and routes sit in DDR (HBM) channel 0, each
    table in its own region, and every lookup reads them there; no other channel sees a
    request."""
    tb = await overlay_start(dut, "overlay_flows")
    # Replies come back from RX_PA in the RX VNET's VNI to the TX VM: inbound for ENI_TX.
    routing = tb.model["inbound_routing"]
    assert await tb.add("inbound_routing", routing.key(eni=ENI_TX, vni=RX_VNI, src=ip_int(RX_PA)),
                        routing.key(eni=0x3FF, vni=0xFFFFFF, src=0xFFFFFFFF), 10, action="decap")
    await tb.tx_through_pipeline(True)
    reads_before = tb.memory.reads if tb.memory else 0
    rng = tb.rng
    for round in range(3):
        tb.random_gaps()
        # The SYNs first, from both taps (the block may take the taps' frames in either
        # order, and a reply needs its session), then the replies and the rest.
        sports = [41000 + 10 * round + k for k in range(4)]
        for k, sport in enumerate(sports):
            send = tb.send_tx if k % 2 else tb.send_rx
            await send(f"syn {sport}", outbound(sport=sport, flags="S"))
        await tb.check()
        for sport in sports:
            await tb.send_rx(f"reply {sport}", vxlan(vm_frame(
                RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=sport, flags="SA"), RX_VNI, RX_PA))
        await tb.send_rx("route miss", outbound(inner_dst="192.168.200.200", sport=rng.randrange(1024, 65536)))
        await tb.send_tx("mapping miss", outbound(inner_dst="192.168.1.77", sport=rng.randrange(1024, 65536)))
        await tb.send_rx("wrong vip", outbound(vip="10.10.10.10"))
        await tb.send_rx("unsolicited", vxlan(vm_frame(
            RX_MAC, TX_MAC, RX_CA, TX_CA, sport=80, dport=rng.randrange(1024, 30000), flags="A"), RX_VNI, RX_PA))
        await tb.check()
    # The model's count (every frame above matched it): each flow's SYN and reply pass, the
    # four others of a round are dropped.
    passed = tb.tally.counts["to_wire"] + tb.tally.counts["to_host"]
    assert (passed, tb.tally.counts["dropped"]) == (24, 12), tb.tally.counts
    if tb.memory:
        assert tb.memory.reads > reads_before, f"no lookup read the {tb.kind} channel"
        # Each table (crossbar master) wrote its own region and no other.
        regions = tb.regions_of_masters()
        assert sorted(map(sorted, regions.values())) == sorted([name] for name in tb.regions), regions
    # The channels the core does not use see no request.
    idle = {k: n for k, n in tb.requests.items() if k != tb.kind}
    assert not any(idle.values()), f"requests on channels the core does not use: {idle}"
