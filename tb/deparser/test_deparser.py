# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_deparser tests (tb/deparser/deparser_tb.py), on both
data widths.

Run one case: pytest tb/deparser/test_deparser.py -k "vxlan_encap and w512"
              [--matcha-seed N]; WAVES=1 records build/sim/<config>/.../dump.fst
"""

from tb.common import sim

TOPLEVEL = "matcha_deparser"
test_deparser = sim.cocotb_entry("tb.deparser.deparser_tb",
                                 [sim.Model(c, TOPLEVEL) for c in sim.CONFIGS])
