"""pytest entry for the matcha_exact_table tests (tb/exact_table/exact_table_tb.py).

Run one case: pytest tb/exact_table/test_exact_table.py -k collisions [--matcha-seed N]
"""

import pytest

from tb.common import sim

TOPLEVEL = "matcha_exact_table"
CONFIG = "tables"
CASES = [
    "test_insert_and_lookup",
    "test_hash_collisions",
    "test_full_table",
    "test_moves_under_lookups",
    "test_readback_and_clear",
    "test_bad_accesses",
    "test_hit_miss_counters",
]


@pytest.mark.parametrize("case", CASES)
def test_exact_table(case, matcha_seed):
    if not sim.rtl_file(CONFIG, TOPLEVEL).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, TOPLEVEL)} not found (run `make rtl`)")
    sim.run(CONFIG, TOPLEVEL, "tb.exact_table.exact_table_tb", testcase=case, seed=matcha_seed)
