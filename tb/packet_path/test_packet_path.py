"""pytest entry for the matcha_packet_path tests (tb/packet_path/packet_path_tb.py), on
both data widths.

Run one case: pytest tb/packet_path -k "line_rate and w512" [--matcha-seed N]
"""

import pytest

from tb.common import sim

TOPLEVEL = "matcha_packet_path"
CASES = [
    "test_pass_through_random",
    "test_every_length",
    "test_jumbo_and_oversize",
    "test_malformed_then_next",
    "test_ingress_port_from_first_beat",
    "test_bad_frame_only_counts_on_last_beat",
    "test_back_to_back_no_gaps",
    "test_min_frames_at_line_rate",
    "test_idle_outputs_quiet",
    "test_decision_per_frame_before_its_bytes",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("config", sim.CONFIGS)
def test_packet_path(config, case, matcha_seed):
    missing = sim.rtl_missing(config, TOPLEVEL)
    if missing:
        pytest.skip(missing)
    sim.run(config, TOPLEVEL, "tb.packet_path.packet_path_tb", testcase=case,
            seed=matcha_seed)
