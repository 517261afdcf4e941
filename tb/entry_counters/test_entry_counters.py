# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_entry_counters tests (tb/entry_counters/entry_counters_tb.py).

Run one case: pytest tb/entry_counters -k back_to_back [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_entry_counters"
CONFIG = "tables"
test_entry_counters = sim.cocotb_entry("tb.entry_counters.entry_counters_tb",
                                       [sim.Model(CONFIG, TOPLEVEL, layout=None)])
