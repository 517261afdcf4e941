# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_session_table tests (tb/session/session_tb.py).

Run one case: pytest tb/session/test_session.py -k flush [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_session_table"
CONFIG = "tables"
test_session_table = sim.cocotb_entry("tb.session.session_tb",
                                      [sim.Model(CONFIG, TOPLEVEL, layout=None)])
