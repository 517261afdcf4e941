# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_mem_session_table tests
(tb/mem_session_table/mem_session_table_tb.py).

Run one case: pytest tb/mem_session_table/test_mem_session_table.py -k aging [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_mem_session_table"
CONFIG = "tables"
test_mem_session_table = sim.cocotb_entry("tb.mem_session_table.mem_session_table_tb",
                                          [sim.Model(CONFIG, TOPLEVEL, layout=None)])
