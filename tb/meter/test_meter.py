# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the meter unit tests (tb/meter/meter_tb.py).

Run one case: pytest tb/meter/test_meter.py -k back_to_back [--matcha-seed N]
"""

from tb.common import sim

CONFIG = "tables"
TOPLEVELS = ("matcha_meter_table", "matcha_meter_small_table")

test_meter = sim.cocotb_entry("tb.meter.meter_tb",
                              [sim.Model(CONFIG, t, layout=None) for t in TOPLEVELS])
