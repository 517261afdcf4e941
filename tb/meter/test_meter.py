"""pytest entry for the meter unit tests (tb/meter/meter_tb.py).

Run one case: pytest tb/meter/test_meter.py -k back_to_back [--matcha-seed N]
"""

import pytest

from tb.common import sim

CONFIG = "tables"
MAIN, SMALL = "matcha_meter_table", "matcha_meter_small_table"
BOTH = (MAIN, SMALL)
CASES = {
    "test_registers": BOTH,
    "test_single_rate_transitions": BOTH,
    "test_two_rate_transitions": BOTH,
    "test_colour_aware": BOTH,
    "test_refill_resolution": BOTH,
    "test_back_to_back": BOTH,
    "test_random": BOTH,
    "test_reconfigure": BOTH,
    "test_clear": BOTH,
    "test_long_run_single_rate": BOTH,
    "test_long_run_two_rate": (MAIN,),
    "test_long_run_packets": (MAIN,),
    "test_time_wrap": (SMALL,),
    "test_limits": BOTH,
}


@pytest.mark.parametrize("toplevel,case", [(t, c) for c, units in CASES.items() for t in units])
def test_meter(toplevel, case, matcha_seed):
    if not sim.rtl_file(CONFIG, toplevel).exists():
        pytest.skip(f"{sim.rtl_file(CONFIG, toplevel)} not found (run `make rtl`)")
    sim.run(CONFIG, toplevel, "tb.meter.meter_tb", testcase=case, seed=matcha_seed)
