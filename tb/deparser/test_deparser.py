"""pytest entry for the matcha_deparser tests (tb/deparser/deparser_tb.py), on both
data widths.

Run one case: pytest tb/deparser/test_deparser.py -k "vxlan_encap and w512"
              [--matcha-seed N]; WAVES=1 records build/sim/<config>/.../dump.fst
"""

import pytest

from tb.common import sim

TOPLEVEL = "matcha_deparser"
CASES = [
    "test_identity",
    "test_rewrites",
    "test_ttl_checksum_corner_cases",
    "test_vxlan_encap",
    "test_vxlan_decap",
    "test_vxlan_decap_encap",
    "test_push_subsets",
    "test_drop_punt_empty",
    "test_pop_rules",
    "test_jumbo",
    "test_phv_and_frame_skew",
    "test_back_to_back_min_frames",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("config", sim.CONFIGS)
def test_deparser(config, case, matcha_seed):
    missing = sim.rtl_missing(config, TOPLEVEL)
    if missing:
        pytest.skip(missing)
    sim.run(config, TOPLEVEL, "tb.deparser.deparser_tb", testcase=case, seed=matcha_seed)
