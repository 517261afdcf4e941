# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of `mqnic_app_block` of the builds `corundum-overlay-w64` and
`corundum-overlay` (512 bits, the card's scale): the overlay program (docs/overlay.md) as
Corundum's application block, with its tables in memory (the 64-bit build's sessions,
mappings and routes, the 512-bit build's sessions and mappings) in the card's DDR when
Corundum enables the DDR channels (DDR_ENABLE), on chip otherwise (ip/corundum/README.md,
"Tables in the card's memory").

The Corundum side is tb/corundum/corundum_tb.py's model; the tables are DASH's VNET
configuration of tb/overlay (dash_tables), loaded through the C driver on the app BAR. With
DDR_ENABLE, DDR channel 0 is a memory (tb/common/late_memory.py) in the DDR clock domain
that answers reads 100 of its clocks late. The oracle of every frame is the overlay program
model, as in tb/corundum; the memory's contents are checked against the program's regions
(docs/overlay.md, "Mappings, sessions and routes in memory").

Run one case: pytest tb/corundum -k "overlay and DDR" [--matcha-seed N]
"""

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

# The DDR clock: 300 MHz against the core's 250 (cocotb_util.CLOCK_NS).
DDR_CLOCK_PS = 3334
MEMORY = APP_REGS + contract.APP_MEMORY


class OverlayCorundumTb(CorundumTb):
    def __init__(self, dut, rng):
        super().__init__(dut, rng)
        # The tables in memory, {name: (base address, bytes)} of each one's region.
        program = self.lay.raw["program"]
        self.regions = {name: (base, size) for name, (_, base, size) in memory_regions(program).items()}
        self.in_memory = bool(self.regions)
        # A table's ids on its own port: the crossbar above them tells the tables apart.
        self.table_id_bits = next((t["memory"]["idWidth"] for t in program["tables"] + program.get("sessions", [])
                                   if "memory" in t), 0)
        self.memory = None
        self.ddr_requests = 0   # clocks of the DDR clock with AR or AW valid
        self.writes = []        # (crossbar master, address) of each write the DDR port took
        if self.in_memory:
            cocotb_util.quiet_cocotbext(dut, ("m_axi_ddr",))
            cycles = cocotb_util.CycleCounter(dut, dut.ddr_clk)
            self.memory = LateMemory(dut, "m_axi_ddr", 1 << 34, rng, cycles, clk=dut.ddr_clk)

    async def start(self, ddr_ready=True):
        dut = self.dut
        Clock(dut.ddr_clk, DDR_CLOCK_PS, unit="ps").start()
        dut.ddr_rst.value = 1
        dut.ddr_status.value = int(ddr_ready)
        await super().start(open_driver=False)
        await ClockCycles(dut.ddr_clk, 4)
        dut.ddr_rst.value = 0
        cocotb.start_soon(self._watch_ddr())
        await self.open_driver()

    async def _watch_ddr(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.ddr_clk)
            self.ddr_requests += int(dut.m_axi_ddr_arvalid.value) + int(dut.m_axi_ddr_awvalid.value)
            if int(dut.m_axi_ddr_awvalid.value) and int(dut.m_axi_ddr_awready.value):
                self.writes.append((int(dut.m_axi_ddr_awid.value) >> self.table_id_bits,
                                    int(dut.m_axi_ddr_awaddr.value)))

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
    """APP MEMORY says whether this core keeps its tables in memory (the DDR_ENABLE
    model's does, the on-chip one's does not) and follows the channel's ddr_status."""
    rng, _ = cocotb_util.test_rng(dut, "memory_register")
    tb = OverlayCorundumTb(dut, rng)
    await tb.start(ddr_ready=False)
    tables = contract.APP_MEMORY_TABLES if tb.in_memory else 0
    assert await tb.read32(MEMORY) == tables
    dut.ddr_status.value = 1
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
    frame against the overlay model, under random back-pressure. In the DDR_ENABLE model
    the sessions, mappings and routes sit in DDR channel 0, each table in its own region,
    and every lookup reads them there."""
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
        assert tb.memory.reads > reads_before, "no lookup read the DDR channel"
        # Each table (crossbar master) wrote its own region and no other.
        regions = tb.regions_of_masters()
        assert sorted(map(sorted, regions.values())) == sorted([name] for name in tb.regions), regions
    else:
        assert tb.ddr_requests == 0, f"{tb.ddr_requests} requests on the DDR port of the on-chip core"
