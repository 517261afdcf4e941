# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_mem_exact_table tests (tb/mem_exact_table/mem_exact_table_tb.py).

Run one case: pytest tb/mem_exact_table/test_mem_exact_table.py -k "latency_sweep and narrow" [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_mem_exact_table"
# The same table on a memory of 128-bit beats, half its bucket (rtl MemoryPortNarrower):
# every read and write a burst of two beats.
NARROW_TOPLEVEL = "matcha_mem_exact_table_narrow"
CONFIG = "tables"
test_mem_exact_table = sim.cocotb_entry("tb.mem_exact_table.mem_exact_table_tb",
                                        [sim.Model(CONFIG, t, layout=None) for t in (TOPLEVEL, NARROW_TOPLEVEL)])
