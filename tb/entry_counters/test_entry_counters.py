"""pytest entry for the matcha_entry_counters tests (tb/entry_counters/entry_counters_tb.py).

Run one case: pytest tb/entry_counters -k back_to_back [--matcha-seed N]
"""

import pytest

from tb.common import sim

TOPLEVEL = "matcha_entry_counters"
CONFIG = "tables"
CASES = [
    "test_back_to_back_same_entry",
    "test_random_events_and_reads",
    "test_zero_under_traffic",
    "test_clear",
    "test_command_waits_for_free_clock",
    "test_reset_mid_traffic",
]


@pytest.mark.parametrize("case", CASES)
def test_entry_counters(case, matcha_seed):
    if not sim.rtl_file(CONFIG, TOPLEVEL).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, TOPLEVEL)} not found (run `make rtl`)")
    sim.run(CONFIG, TOPLEVEL, "tb.entry_counters.entry_counters_tb", testcase=case, seed=matcha_seed)
