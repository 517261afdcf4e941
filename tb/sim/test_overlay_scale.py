# SPDX-License-Identifier: Apache-2.0
"""The overlay program at the scale of its issue (docs/overlay.md, "Scale"), loaded through
matcha-ctl into the 512-bit simulator (the Corundum build's sizes) and run with the flows
of sim/examples/make_overlay_scale.py.

Oracles, none of them matcha-ctl or the RTL:

- the tables file read into the program model directly (tb/sim/tables_file.py): every
  exact, LPM and ternary entry read back from the running simulator must be what the file
  means, and each table holds the number of entries the scale asks for;
- the program model holding those tables, between the packet-path model's parse and
  deparse: every output capture, punt.csv, drop.csv and the summary's counts must be the
  model's;
- the flows must reach across the tables: frames of many ENIs pass both ways, through many
  routes and mappings, and the drops are those the script's flows are there to show.

A soak scenario: the 512-bit overlay's simulator builds in about a minute and the test
takes about 5 minutes (bench/results/overlay_scale_sim.md). make soak, or
make test-one T=tb/sim/test_overlay_scale.py
"""

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN

from sim import build as sim_build
from tb.common.phv import Layout
from tb.model.program import Program
from tb.sim import harness, tables_file

OVERLAY = harness.SimBinary("w512", "overlay")
SCRIPT = harness.REPO / "sim" / "examples" / "make_overlay_scale.py"
READ_BACK = harness.REPO / "tb" / "sim" / "ctl_then_read_back.py"
FLOWS = 1500
# The scale of the issue: entries each table holds once the file is loaded.
SCALE = {"eni_out": 1024, "eni_in": 1024, "mapping": 8192, "route": 4096, "acl": 6000,
         "pa_validation": 256}


@pytest.mark.soak
@pytest.mark.builds(OVERLAY)
def test_overlay_at_scale(work):
    missing = OVERLAY.missing()
    if missing:
        pytest.skip(missing)
    r = subprocess.run([sys.executable, str(SCRIPT), str(work), str(FLOWS)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    tables, capture = work / "overlay_scale_tables.txt", work / "overlay_scale.pcap"
    layout = sim_build.layout_path(OVERLAY.config, OVERLAY.program)
    sock, out = work / "ctl.sock", work / "out"
    out.mkdir()
    with harness.Simulator(OVERLAY.config, "--socket", sock, "--wait-client", "--in",
                           f"0={capture}", "--out", out, "--layout", layout,
                           program=OVERLAY.program) as s:
        env = {**os.environ, "MATCHA_READBACK_CTL": str(harness.matcha_ctl()),
               "MATCHA_READBACK_OUT": str(work / "tables.json")}
        ctl = subprocess.run([sys.executable, str(READ_BACK), f"sim:{sock}", "--layout", str(layout),
                              "-f", str(tables)], env=env, capture_output=True, text=True,
                             timeout=600)
        assert ctl.returncode == 0, f"{ctl.stdout}\n{ctl.stderr}"
        rc, stdout, stderr = s.finish(timeout=300)
    assert rc == 0, f"{stdout}\n{stderr}"

    program = Program(layout)
    # The policers' bursts (20,000 and 40,000 bytes) hold every ENI's frames of this run.
    loaded = tables_file.load(program, tables, refill_as_zero=True)
    print(f"{loaded} entries loaded")
    for name, n in SCALE.items():
        assert len(entries(program[name])) == n, name
    hw = harness.program_read_back(layout, work / "tables.json")
    for t in program.tables:
        if t.kind != "direct":
            assert entries(hw[t.name]) == entries(t), t.name

    frames = harness.frames_of(capture)
    sent = [harness.Sent(0, i + 1, f) for i, f in enumerate(frames)]
    exp = harness.expected(program, sent, Layout(layout).header_bytes)
    got = harness.read_outputs(out)
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []

    # The flows reach across the tables: the encapsulated frames go to many hosts in many
    # VNIs, both ways; the drops are the flows' own.
    passed = [Ether(f) for fs in exp.ports.values() for f in fs]
    vnis = Counter(p[VXLAN].vni for p in passed if VXLAN in p)
    outbound = {v for v in vnis if v >= 1000}
    inbound = {v for v in vnis if 101 <= v < 117}
    hosts = {p[IP].dst for p in passed if VXLAN in p}
    print(f"{len(passed)} frames passed to {len(hosts)} hosts, {len(outbound)} VNETs, "
          f"{len(inbound)} host VNIs; drops {Counter(r for *_, r in exp.drops)}")
    assert len(passed) > len(frames) // 3
    assert len(outbound) > 300 and len(inbound) == 16 and len(hosts) > 500
    names = harness.reason_names(program)
    assert {names[r] for *_, r in exp.drops} >= {"verdict.deny", "mapping.drop", "route.drop"}


def entries(table):
    """A table's entries with their actions and data, as comparable tuples."""
    if table.kind == "lpm":
        return sorted((*p, *e) for p, e in table.prefixes.items())
    if table.kind == "ternary":
        return sorted((r.value, r.mask, r.priority, r.action, r.data) for r in table.rules)
    return sorted((k, *e) for k, e in table.table.items())
