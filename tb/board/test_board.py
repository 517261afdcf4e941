# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_board tests (tb/board/board_tb.py): the Versa board's core
(RGMII MACs, the pipeline, the UART bridge) on Verilator, with simulation models of the
ECP5 DDR registers (tb/board/ecp5_models.v).

Run one case: pytest tb/board -k bump [--matcha-seed N]
"""

from pathlib import Path

from tb.common import sim

CONFIG = "board"
TOPLEVEL = "matcha_board"
test_board = sim.cocotb_entry(
    "tb.board.board_tb",
    [sim.Model(CONFIG, TOPLEVEL, models=(str(Path(__file__).with_name("ecp5_models.v")),))])
