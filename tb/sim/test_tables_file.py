# SPDX-License-Identifier: Apache-2.0
"""tb/sim/tables_file.py on its own: a meter with rates is refused, or, with
`refill_as_zero`, modelled with buckets that start full and never refill. The oracle is
RFC 2698's marking written out by hand for the bursts the line gives."""

import pytest

from sim import build as sim_build
from tb.model.meter import GREEN, RED, YELLOW
from tb.model.program import Program
from tb.sim import tables_file

LAYOUT = sim_build.layout_path("w64", "overlay")
LINE = "meter_set_rates policers 3 1000:600 2000:1500 trtcm"


@pytest.fixture
def program():
    if not LAYOUT.exists():
        pytest.skip(f"{LAYOUT} not found (make rtl)")
    return Program(LAYOUT)


def test_meter_with_rates_refused(program):
    with pytest.raises(tables_file.TablesFileError, match="rates 0"):
        tables_file.load_text(program, LINE)


def test_meter_with_rates_modelled_without_refill(program):
    tables_file.load_text(program, LINE, refill_as_zero=True)
    bank = program.meters["policers"]
    # CBS 600, PBS 1500 bytes, both full at the start. 500-byte frames far apart in time,
    # where the configured rates would have refilled both buckets: C 600 -> 100 (green),
    # then C short, P 1500 -> 1000 -> 500 (yellow, yellow), then P short (red).
    ticks = [0, 10**6, 2 * 10**6, 3 * 10**6]
    assert [bank.packet(3, t, 500) for t in ticks] == [GREEN, YELLOW, YELLOW, RED]
