# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_exact_table tests (tb/exact_table/exact_table_tb.py).

Run one case: pytest tb/exact_table/test_exact_table.py -k collisions [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_exact_table"
CONFIG = "tables"
test_exact_table = sim.cocotb_entry("tb.exact_table.exact_table_tb",
                                    [sim.Model(CONFIG, TOPLEVEL, layout=None)])
