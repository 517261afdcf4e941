"""pytest entry for the matcha_board tests (tb/board/board_tb.py): the Versa board's core
(RGMII MACs, the pipeline, the UART bridge) on Verilator, with simulation models of the
ECP5 DDR registers (tb/board/ecp5_models.v).

Run one case: pytest tb/board -k bump [--matcha-seed N]
"""

from pathlib import Path

import pytest

from tb.common import driver, sim

CONFIG = "board"
TOPLEVEL = "matcha_board"
MODELS = [Path(__file__).with_name("ecp5_models.v")]
CASES = [
    "test_self_describing_block",
    "test_bridge_bad_requests",
    "test_bump_in_the_wire",
    "test_fcs_errors_dropped_and_counted",
    "test_punted_frames_discarded",
    "test_routed_ipv4_rewritten",
    "test_rx_overflow_counted",
]


@pytest.mark.parametrize("case", CASES)
def test_board(case, matcha_seed):
    missing = sim.rtl_missing(CONFIG, TOPLEVEL)
    if missing:
        pytest.skip(missing)
    driver.build_library()
    sim.run(CONFIG, TOPLEVEL, "tb.board.board_tb", testcase=case, seed=matcha_seed,
            run_name=case, models=MODELS)
