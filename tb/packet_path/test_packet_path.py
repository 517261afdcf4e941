# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_packet_path tests (tb/packet_path/packet_path_tb.py), on
both data widths.

Run one case: pytest tb/packet_path -k "line_rate and w512" [--matcha-seed N]
"""

from tb.common import sim

TOPLEVEL = "matcha_packet_path"
test_packet_path = sim.cocotb_entry("tb.packet_path.packet_path_tb",
                                    [sim.Model(c, TOPLEVEL) for c in sim.CONFIGS])
