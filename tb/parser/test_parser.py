# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_parser tests (tb/parser/parser_tb.py).

The parser does not depend on the data width: one model (w64) serves all tests.
Run one case: pytest tb/parser/test_parser.py -k malformed  [--matcha-seed N] [WAVES=1]
"""

import pytest

from tb.common import sim
from tb.common.phv import Layout
from tb.model import CHECK_REASONS, all_field_names

TOPLEVEL = "matcha_parser"
CONFIG = "w64"
test_parser = sim.cocotb_entry("tb.parser.parser_tb", [sim.Model(CONFIG, TOPLEVEL)])


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_matches_model(config):
    """layout.json names exactly the PHV fields of docs/packet-path.md, with the
    documented widths, and the parameters the docs give."""
    if not sim.layout_file(config).exists():
        pytest.skip(f"{sim.layout_file(config)} not found (run `make rtl`)")
    lay = Layout(sim.layout_file(config))
    missing, extra, widths = lay.check_against(all_field_names())
    assert not missing, f"fields missing from layout.json: {missing}"
    assert not extra, f"fields in layout.json the docs do not define: {extra}"
    assert not widths, f"width mismatches (name, docs, layout): {widths}"
    spans = sorted(lay.fields.values())
    for (o1, w1), (o2, _) in zip(spans, spans[1:]):
        assert o1 + w1 <= o2, "overlapping PHV fields"
    assert (lay.header_bytes, lay.port_width, lay.runt_bytes, lay.max_frame) == \
        ({"w64": 128, "w512": 192}[config], 4, 60, 9216)
    assert lay.data_width == {"w64": 64, "w512": 512}[config]
    assert lay.parse_errors == {"RUNT": 1, "TRUNCATED": 2, "IPV4_IHL": 3, "BAD_FRAME": 4,
                                "TOO_DEEP": 5, "IP_VERSION": 6, "OVERSIZE": 7, "EMPTY": 8,
                                "TCP_OFFSET": 9}
    assert lay.raw["checkReasons"] == CHECK_REASONS
    assert isinstance(lay.parser_latency, int) and lay.parser_latency >= 0
