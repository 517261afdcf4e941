# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the ternary table tests (tb/ternary_table/ternary_table_tb.py), on both
ternary units: matcha_ternary_table (104-bit keys, 64 entries) and matcha_ternary128_table
(128-bit keys, 32 entries). Tables are loaded through the C driver (build/sw/libmatcha.so,
built here if missing or stale).

Run one case: pytest tb/ternary_table -k "ternary128 and shift" [--matcha-seed N]
"""

from tb.common import sim

CONFIG = "tables"
TOPLEVELS = ["matcha_ternary_table", "matcha_ternary128_table"]
test_ternary_table = sim.cocotb_entry("tb.ternary_table.ternary_table_tb",
                                      [sim.Model(CONFIG, t, layout=None) for t in TOPLEVELS])

RANGE_TOPLEVELS = ["matcha_ternary_range_table", "matcha_ternary_acl_table"]
test_ternary_range_table = sim.cocotb_entry("tb.ternary_table.ternary_range_tb",
                                            [sim.Model(CONFIG, t, layout=None) for t in RANGE_TOPLEVELS])
