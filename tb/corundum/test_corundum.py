"""pytest entry for the tests of `mqnic_app_block`, Matcha as Corundum's application block
(tb/corundum/corundum_tb.py), once per generated Corundum build: `corundum-w64` (64-bit
taps, the small model) and `corundum` (512-bit taps, Corundum's 100G width).

Run one case: pytest tb/corundum -k "tx_pipeline and w64" [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "mqnic_app_block"
CONFIGS = ("corundum-w64", "corundum")
test_corundum = sim.cocotb_entry("tb.corundum.corundum_tb",
                                 [sim.Model(c, TOPLEVEL) for c in CONFIGS])
