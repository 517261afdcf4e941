"""pytest entry for the ternary table tests (tb/ternary_table/ternary_table_tb.py), on both
ternary units: matcha_ternary_table (104-bit keys, 64 entries) and matcha_ternary128_table
(128-bit keys, 32 entries). Tables are loaded through the C driver (build/sw/libmatcha.so,
built here if missing or stale).

Run one case: pytest tb/ternary_table -k "ternary128 and shift" [--matcha-seed N]
"""

import pytest

from tb.common import driver, sim

CONFIG = "tables"
TOPLEVELS = ["matcha_ternary_table", "matcha_ternary128_table"]
CASES = [
    "test_open",
    "test_equal_priority_overlap",
    "test_priority_overlap",
    "test_full_table",
    "test_shift_under_lookups",
    "test_delete_readd",
    "test_readback",
    "test_clear",
    "test_every_key_bit",
    "test_random_rules",
    "test_driver_errors",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("toplevel", TOPLEVELS)
def test_ternary_table(toplevel, case, matcha_seed):
    if not sim.rtl_file(CONFIG, toplevel).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, toplevel)} not found (run `make rtl`)")
    driver.build_library()
    sim.run(CONFIG, toplevel, "tb.ternary_table.ternary_table_tb", testcase=case, seed=matcha_seed,
            run_name=f"{case}")
