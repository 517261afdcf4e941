"""pytest entry for the LPM table tests (tb/lpm_table/lpm_table_tb.py), on both LPM units:
matcha_lpm32_table and matcha_lpm128_table. Tables are loaded through the C driver
(build/sw/libmatcha.so, built here if missing or stale).

Run one case: pytest tb/lpm_table -k "lpm128 and nested" [--matcha-seed N]
"""

import pytest

from tb.common import driver, sim

CONFIG = "tables"
TOPLEVELS = ["matcha_lpm32_table", "matcha_lpm128_table"]
CASES = [
    "test_open",
    "test_random_prefixes",
    "test_nested_prefixes",
    "test_prefix_store",
    "test_delete_readd",
    "test_updates_under_lookups",
    "test_fallback_in_flight",
    "test_back_to_back_updates",
    "test_table_full",
    "test_driver_errors",
    "test_clear",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("toplevel", TOPLEVELS)
def test_lpm_table(toplevel, case, matcha_seed):
    if not sim.rtl_file(CONFIG, toplevel).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, toplevel)} not found (run `make rtl`)")
    driver.build_library()
    sim.run(CONFIG, toplevel, "tb.lpm_table.lpm_table_tb", testcase=case, seed=matcha_seed,
            run_name=f"{case}")
