"""pytest entry for the tests of `mqnic_app_block`, Matcha as Corundum's application block
(tb/corundum/corundum_tb.py), once per generated Corundum build: `corundum-w64` (64-bit
taps, the small model) and `corundum` (512-bit taps, Corundum's 100G width).

Run one case: pytest tb/corundum -k "tx_pipeline and w64" [--matcha-seed N]
"""

import pytest

from tb.common import driver, sim

TOPLEVEL = "mqnic_app_block"
CONFIGS = ("corundum-w64", "corundum")
CASES = [
    "test_app_registers",
    "test_rx_fates",
    "test_rx_bad_frame",
    "test_tx_bypass",
    "test_tx_pipeline",
    "test_tx_switch_under_traffic",
    "test_tx_switch_with_beat_offered",
    "test_backpressure_fills_pipeline",
    "test_random_traffic",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("config", CONFIGS)
def test_corundum(config, case, matcha_seed):
    missing = sim.rtl_missing(config, TOPLEVEL)
    if missing:
        pytest.skip(missing)
    driver.build_library()
    sim.run(config, TOPLEVEL, "tb.corundum.corundum_tb", testcase=case, seed=matcha_seed,
            run_name=case)
