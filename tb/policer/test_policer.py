# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_policer tests (tb/policer/policer_tb.py) and the policer
program's description against docs/pipeline.md.

Run one case: pytest tb/policer -k "police_by_source and w64" [--matcha-seed N]
"""

import json

import pytest

from tb.common import sim
from tb.model.program import Program

TOPLEVEL = "matcha_policer"
LAYOUT = "layout-policer.json"


def layout_file(config):
    return sim.RTL_DIR / config / LAYOUT


# The 512-bit model is soak, as tb/conntrack's.
test_policer = sim.cocotb_entry("tb.policer.policer_tb",
                                [sim.Model(c, TOPLEVEL, layout=LAYOUT, soak=c == "w512") for c in sim.CONFIGS])


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_policer_program(config):
    """The policer program as docs/pipeline.md describes it: police in the first stage, its
    meter op on the 64 meters of `policers` (descriptor after the two tables), by_colour in
    a second stage (it reads meta.color, which police writes); the first stage's latency
    has the meter's 6 clocks in it."""
    if not layout_file(config).exists():
        pytest.skip(f"{layout_file(config)} not found")
    layout = json.loads(layout_file(config).read_text())
    p = Program(layout, strict=False)
    assert p.problems == []
    prog = layout["program"]
    assert prog["stages"] == [[0], [1]]
    assert prog["meters"] == [{"name": "policers", "index": 2, "size": 64, "latency": 6}]
    police, by_colour = prog["tables"]
    assert [a["name"] for a in police["actions"]] == ["no_op", "police"]
    assert police["actions"][1]["ops"] == [{"op": "meter", "meter": "policers",
                                             "param": "meter"}]
    assert by_colour["key"] == [{"fields": ["meta.color"], "width": 2}]
    assert [a["name"] for a in by_colour["actions"]] == ["pass", "mark", "drop"]
    assert prog["latency"] == (police["latency"] + 6 + 2) + (by_colour["latency"] + 2)
