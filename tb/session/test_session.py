"""pytest entry for the matcha_session_table tests (tb/session/session_tb.py).

Run one case: pytest tb/session/test_session.py -k flush [--matcha-seed N]
"""

import pytest

from tb.common import sim

TOPLEVEL = "matcha_session_table"
CONFIG = "tables"
CASES = [
    "test_syn_flood_fills_table",
    "test_full_table_policy",
    "test_forward_and_reverse",
    "test_back_to_back_new_flow",
    "test_aging_per_state",
    "test_traffic_keeps_session_alive",
    "test_delete_racing_lookups",
    "test_flush_under_traffic",
    "test_random_traffic",
    "test_bad_accesses",
]


@pytest.mark.parametrize("case", CASES)
def test_session_table(case, matcha_seed):
    if not sim.rtl_file(CONFIG, TOPLEVEL).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, TOPLEVEL)} not found (run `make rtl`)")
    sim.run(CONFIG, TOPLEVEL, "tb.session.session_tb", testcase=case, seed=matcha_seed)
