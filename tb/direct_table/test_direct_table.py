# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_direct_table tests (tb/direct_table/direct_table_tb.py).
Entries are loaded through the C driver (build/sw/libmatcha.so, built here if missing or
stale); the model starts from random register and memory contents.

Run one case: pytest tb/direct_table -k same_key [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_direct_table"
CONFIG = "tables"
test_direct_table = sim.cocotb_entry("tb.direct_table.direct_table_tb",
                                     [sim.Model(CONFIG, TOPLEVEL, layout=None, random_init=True)])
