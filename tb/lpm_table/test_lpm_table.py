# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the LPM table tests (tb/lpm_table/lpm_table_tb.py), on the LPM units:
matcha_lpm32_table, matcha_lpm128_table and matcha_lpm32_mem_table (two levels in
memory). Tables are loaded through the C driver (build/sw/libmatcha.so, built here if
missing or stale).

Run one case: pytest tb/lpm_table -k "lpm128 and nested" [--matcha-seed N]
"""

from tb.common import sim

CONFIG = "tables"
TOPLEVELS = ["matcha_lpm32_table", "matcha_lpm128_table", "matcha_lpm32_mem_table"]
test_lpm_table = sim.cocotb_entry("tb.lpm_table.lpm_table_tb",
                                  [sim.Model(CONFIG, t, layout=None) for t in TOPLEVELS])
