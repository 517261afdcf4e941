# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the tests of `mqnic_app_block`, Matcha as Corundum's application block,
once per generated Corundum build: `corundum-w64` (64-bit taps, the small model) and
`corundum` (512-bit taps, Corundum's 100G width).

- tb/corundum/corundum_tb.py: one interface (Corundum's default IF_COUNT=1);
- tb/corundum/cpu_port_tb.py: the CPU port (CONTROL bit 1), one interface (the 512-bit
  build's in `make soak`);
- tb/corundum/ports_tb.py: four interfaces (IF_COUNT=4) receiving at once behind a model of
  Corundum's RX FIFOs (the 512-bit build's in `make soak`);
- tb/corundum/overlay_tb.py: the builds `corundum-overlay-w64` and `corundum-overlay` (512
  bits, in `make soak`), the overlay program with its tables in DDR (DDR_ENABLE), in HBM
  (HBM_ENABLE) and on chip.

Run one case: pytest tb/corundum -k "tx_pipeline and w64" [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "mqnic_app_block"
CONFIGS = ("corundum-w64", "corundum")
test_corundum = sim.cocotb_entry("tb.corundum.corundum_tb",
                                 [sim.Model(c, TOPLEVEL, random_init=True) for c in CONFIGS])
# The CPU port at 512 bits is a soak scenario: its header insertion and stripping are the
# same code at both widths, and the 512-bit data path has the one-interface tests.
test_corundum_cpu_port = sim.cocotb_entry("tb.corundum.cpu_port_tb",
                                          [sim.Model(c, TOPLEVEL, random_init=True, soak=c == "corundum")
                                           for c in CONFIGS])
# Four interfaces at 512 bits are a soak scenario: the interfaces' arbitration is the same
# code at both widths, and the 512-bit data path has the one-interface tests.
test_corundum_ports = sim.cocotb_entry(
    "tb.corundum.ports_tb",
    [sim.Model(c, TOPLEVEL, parameters=(("IF_COUNT", 4),), random_init=True,
               soak=c == "corundum") for c in CONFIGS])
# The overlay build (tb/corundum/overlay_tb.py): its tables in DDR channel 0 when Corundum
# sets DDR_ENABLE (with an Alveo DDR4 channel's widths), else in HBM channel 0 when it sets
# HBM_ENABLE (Corundum's 256-bit HBM beats), on chip otherwise.
# The 512-bit build, the card's scale, is a soak scenario: its shell is the 64-bit build's
# code, and its pipelines have tb/sim's tests. So is the 64-bit build on HBM: its shell
# differs from DDR's by the narrower in front of the memory core, whose beats the narrow
# memory-backed unit (tb/mem_exact_table) shows in `make test`.
# The 64-bit models compile at -O0, about ten seconds faster each than at -O1, for two
# tests that run a few seconds longer (bench/results/test_budget.md).
OVERLAY_CONFIGS = ("corundum-overlay-w64", "corundum-overlay")
DDR, HBM = ((("DDR_ENABLE", 1), ("AXI_DDR_DATA_WIDTH", 512), ("AXI_DDR_ADDR_WIDTH", 34)),
            (("HBM_ENABLE", 1), ("AXI_HBM_ADDR_WIDTH", 33)))
test_corundum_overlay = sim.cocotb_entry("tb.corundum.overlay_tb", [
    model for config in OVERLAY_CONFIGS for w64 in [config == "corundum-overlay-w64"] for model in (
        *(sim.Model(config, TOPLEVEL, layout="layout-overlay_mem.json", parameters=channel,
                    soak=not w64 or channel == HBM, opt="-O0" if w64 else None)
          for channel in (DDR, HBM)),
        sim.Model(config, TOPLEVEL, layout="layout-overlay.json", soak=not w64,
                  opt="-O0" if w64 else None))])
