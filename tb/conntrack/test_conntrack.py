# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_conntrack tests (tb/conntrack/conntrack_tb.py) and the
conntrack program's description against docs/pipeline.md.

Run one case: pytest tb/conntrack -k "flows_learned and w64" [--matcha-seed N]
"""

import json

import pytest

from tb.common import sim
from tb.model.program import Program

TOPLEVEL = "matcha_conntrack"
LAYOUT = "layout-conntrack.json"


def layout_file(config):
    return sim.RTL_DIR / config / LAYOUT


# The 512-bit model is soak: the program's behaviour is the 64-bit model's, and the 512-bit
# data path is shown in `make test` by the l2l3 pipeline, the deparser and Corundum.
test_conntrack = sim.cocotb_entry("tb.conntrack.conntrack_tb",
                                  [sim.Model(c, TOPLEVEL, layout=LAYOUT, soak=c == "w512") for c in sim.CONFIGS])


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_conntrack_program(config):
    """The conntrack program as docs/pipeline.md describes it: acl in the first stage, the
    session stage right after it (descriptor 2, after the two tables), by_session in a
    stage of its own keyed on what the session stage writes; the latency is the two table
    stages' and the session stage's 1 + 4 + 1 clocks."""
    if not layout_file(config).exists():
        pytest.skip(f"{layout_file(config)} not found")
    layout = json.loads(layout_file(config).read_text())
    p = Program(layout, strict=False)
    assert p.problems == []
    prog = layout["program"]
    assert prog["stages"] == [[0], [1]]
    assert prog["meters"] == []
    (session,) = prog["sessions"]
    assert {k: session[k] for k in ("name", "index", "size", "ways", "keyWidth", "latency",
                                    "after", "applyIf", "learn", "reason")} == {
        "name": "sessions", "index": 2, "size": 64, "ways": 4, "keyWidth": 128, "latency": 4,
        "after": "acl", "applyIf": ["hdr.ipv4.valid"], "learn": "meta.learn", "reason": 0x27}
    assert session["fields"]["srcPort"] == {"fields": ["hdr.tcp.srcPort", "hdr.udp.srcPort"],
                                            "width": 16}
    assert session["result"] == {"hit": "meta.sessionHit", "reply": "meta.sessionReply",
                                 "state": "meta.sessionState",
                                 "learned": "meta.sessionLearned",
                                 "insertFailed": "meta.sessionFailed"}
    acl, by_session = prog["tables"]
    assert acl["actions"][1] == {"name": "permit", "id": 1, "params": [],
                                 "ops": [{"op": "setConst", "field": "meta.learn", "value": 1}]}
    assert [k["fields"] for k in by_session["key"]] == [
        ["meta.ingressPort"], ["meta.sessionHit"], ["meta.sessionLearned"]]
    assert prog["latency"] == (acl["latency"] + 2) + (1 + 4 + 1) + (by_session["latency"] + 2)
