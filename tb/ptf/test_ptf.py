# SPDX-License-Identifier: Apache-2.0
"""The PTF tests of ptftests/l2l3.py, run by PTF's own `ptf` runner against matcha-sim with
its ports on veth pairs and its CPU port (sim/README.md, "Live"), the tables of
scenario.py loaded by matcha-ctl over the control socket; then the simulator's own records
of what PTF cannot see: the denied frame dropped with acl.deny, the punts with their
reasons, the frames the CPU port did not take, counted by why.

The namespace and the pairs are the test's own (netns.py), removed after it; the test
skips where the machine does not allow them.

Run: make test-one T="tb/ptf -q"
"""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tb.common import sim
from tb.common import live_sim
from tb.common.netns import Namespace
from tb.ptf import scenario
from tb.sim import harness

pytestmark = pytest.mark.builds(harness.SimBinary(live_sim.CONFIG))
REPO = Path(__file__).resolve().parents[2]
PTF_TESTS = Path(__file__).resolve().parent / "ptftests"
# What ptftests/l2l3.py sends, in the order it runs its tests.
PTF_ORDER = ["l2l3.RoutedFrames", "l2l3.NoRoutePunted", "l2l3.AclToHostPunted",
             "l2l3.AclDenyDropped", "l2l3.PacketOutEntersPipeline", "l2l3.PacketOutToEgress",
             "l2l3.CpuPortIgnoresOtherFrames"]


def ptf_command(layout, log):
    ptf = Path(sys.executable).with_name("ptf")
    args = [ptf, "--test-dir", PTF_TESTS, "--pypath", REPO, "--log-file", log,
            # A loaded machine simulates slowly: a frame may take seconds, never this long.
            "--default-timeout", "10",
            "--test-params", f"layout={str(layout)!r}"]
    for p in scenario.PORTS:
        args += ["--interface", f"{p}@host{p}"]
    return args + ["--interface", f"{scenario.CPU}@hostcpu", *PTF_ORDER]


def test_ptf_l2l3(work):
    """ptf's verdicts on forwarding, punts and packet-out, then the simulator's records:
    one drop, acl.deny; punts with ipv4_lpm.no_route twice and acl.to_host once; three
    packet-outs in, three straight out of their egress port, and the six other CPU frames
    counted by why they are not one or went nowhere; every frame out sent; a clean exit."""
    live_sim.need()
    layout = sim.layout_file(live_sim.CONFIG)
    reason = scenario.reasons(layout)
    tables = work / "tables.txt"
    tables.write_text(scenario.tables_text())
    with Namespace(scenario.PORTS) as ns:
        # The traffic starts when matcha-ctl, the first client, closes its connection.
        s = live_sim.LiveSim(ns, work, scenario.PORTS, args=["--wait-client"])
        r = subprocess.run([harness.matcha_ctl(), f"sim:{s.socket}", "--layout", layout,
                            "-f", tables], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        r = subprocess.run(ns.command(*ptf_command(layout, work / "ptf.log")),
                           capture_output=True, text=True, timeout=100, cwd=work)
        ptf_log = (work / "ptf.log").read_text() if (work / "ptf.log").exists() else ""
        assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\n{ptf_log[-6000:]}"
        assert f"Ran {len(PTF_ORDER)} tests" in r.stderr, r.stderr
        rc, out, err = s.stop()
    assert rc == 0, out + err
    summary = s.summary()
    outputs = s.outputs()
    assert summary["complete"] and summary["problems"] == [], out
    assert [(int(d["ingress_port"]), int(d["reason"]), d["reason_name"])
            for d in outputs.drop_rows] == [(0, reason["acl.deny"], "acl.deny")]
    assert Counter(int(p["reason"]) for p in outputs.punt_rows) == {
        reason["ipv4_lpm.no_route"]: 2, reason["acl.to_host"]: 1}
    cpu = summary["live"]["cpu"]
    assert cpu["packet_out"] == 3 and cpu["to_egress"] == 3
    assert cpu["ignored"] == {"not_matcha": 1, "short": 1, "not_packet_out": 1, "bad_port": 1,
                              "bad_egress_port": 1, "no_interface": 1}
    assert cpu["sent"] == 3 and cpu["not_sent"] == {}
    ports = summary["live"]["ports"]
    # The pipeline's frames out (4 on port 2, 1 on port 3) and the packet-outs to egress ports.
    assert {p: ports[str(p)]["sent"] for p in scenario.PORTS} == {0: 0, 1: 1, 2: 5, 3: 2}
    assert all(ports[str(p)]["not_sent"] == {} for p in scenario.PORTS)
    assert summary["live"]["no_interface"] == {}
