# SPDX-License-Identifier: Apache-2.0
"""The overlay example of `make run` (sim/run_example.sh, EXAMPLE=overlay): the overlay
program's simulator on sim/examples/overlay.pcap, its tables loaded by matcha-ctl from
sim/examples/overlay_tables.txt behind the relay tb/sim/ctl_then_read_back.py.

Three oracles, none of them matcha-ctl or the RTL:

- the tables file read into the program model directly (tb/sim/tables_file.py): the exact,
  LPM and ternary entries read back from the running simulator must be what the file means;
- the program model holding those tables, between the packet-path model's parse and
  deparse, frame by frame in capture order: every output capture, punt.csv, drop.csv and the
  summary's counts (per reason, per table, the session table's too) must be the model's;
- the scenario of sim/examples/make_overlay_pcap.py, which says what each frame is there to
  show (leaves encapsulated to which host PA in which VNI with which outer DSCP, or is
  dropped or punted for which reason): the model must do just that, so a wrong entry in the
  tables file fails here even though the simulator and the model agree on it.

Run one: make test-one T=tb/sim/test_overlay_example.py
"""

import os
import re
import runpy
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
from tb.model import deparse, parse
from tb.model.program import Program
from tb.sim import harness, tables_file

OVERLAY = harness.SimBinary("w64", "overlay")
# The same program with its mapping table in memory, matcha-sim's memory model answering it
# (sim/axi_memory.h).
OVERLAY_MEM = harness.SimBinary("w64", "overlay_mem")
EXAMPLES = harness.REPO / "sim" / "examples"
CAPTURE = EXAMPLES / "overlay.pcap"
TABLES = EXAMPLES / "overlay_tables.txt"
SCRIPT = EXAMPLES / "make_overlay_pcap.py"
RUN_EXAMPLE = harness.REPO / "sim" / "run_example.sh"
READ_BACK = harness.REPO / "tb" / "sim" / "ctl_then_read_back.py"


def test_overlay_capture_is_what_its_script_makes(work):
    """sim/examples/overlay.pcap is the output of sim/examples/make_overlay_pcap.py, and
    stays small."""
    out = work / "overlay.pcap"
    r = subprocess.run([sys.executable, str(SCRIPT), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == CAPTURE.read_bytes()
    assert CAPTURE.stat().st_size < 100_000


def contents(table):
    """A table's entries with their actions and data, as comparable tuples."""
    if table.kind == "lpm":
        return sorted((*p, *e) for p, e in table.prefixes.items())
    if table.kind == "ternary":
        return sorted((r.value, r.mask, r.priority, r.action, r.data) for r in table.rules)
    return sorted((k, *e) for k, e in table.table.items())


def raised_by(program):
    """{`<table>.<action>` or `<session table>.full`: the reason it drops or punts with}."""
    reasons = {f"{s.name}.full": s.reason for s in program.sessions.values()}
    for t in program.tables:
        for a in t.actions.values():
            for op in a.ops:
                if op.reason is not None:
                    reasons[f"{t.name}.{a.name}"] = op.reason
    return reasons


def outcome(frame, program, header_bytes):
    """What the model does with one frame: ("pass", outer destination, VNI, outer DSCP),
    ("drop", reason) or ("punt", reason)."""
    out, tuser, drop = deparse(frame, program.apply(parse(frame, ingress_port=0,
                                                          header_bytes=header_bytes)))
    if out is None:
        return "drop", drop
    if tuser["punt"]:
        return "punt", tuser["reason"]
    eth = Ether(out)
    if VXLAN not in eth:
        return "pass", "not VXLAN", None, None
    return "pass", eth[IP].dst, eth[VXLAN].vni, eth[IP].tos >> 2


@pytest.mark.builds(OVERLAY, OVERLAY_MEM)
@pytest.mark.parametrize("binary", [OVERLAY, OVERLAY_MEM], ids=lambda b: b.program)
def test_make_run_overlay_example(work, binary):
    """`make run`: sim/run_example.sh with the overlay simulator, and with the simulator of
    the overlay whose mappings are in memory. matcha-ctl loads every entry of the file, and
    the entries read back are what the file means; every frame does what the scenario says
    it is there to show; every output, punt.csv, drop.csv and the summary (counts per
    reason with their names, every table's hits and misses) agree with the model; the
    script ends with the summary and the list of captures."""
    missing = binary.missing()
    if missing:
        pytest.skip(missing)
    layout = sim_build.layout_path(binary.config, binary.program)
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "EXAMPLE": "overlay", "MATCHA_SIM": harness.binary(binary.config, binary.program),
           "MATCHA_LAYOUT": layout, "MATCHA_SOCKET": work / "ctl.sock",
           "MATCHA_CTL": READ_BACK, "MATCHA_READBACK_CTL": harness.matcha_ctl(),
           "MATCHA_READBACK_OUT": work / "tables.json"}
    r = subprocess.run(["bash", str(RUN_EXAMPLE), str(work / "out")],
                       env={**os.environ, **{k: str(v) for k, v in env.items()}},
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"

    program = Program(layout)
    window = Layout(layout).header_bytes
    entries = tables_file.load(program, TABLES)
    assert f"sim/examples/overlay_tables.txt: {entries} entries loaded" in r.stdout
    assert f"matcha-sim {binary.program} w64: " in r.stdout

    # What matcha-ctl put into the hardware is what the file means (the direct tables, the
    # default and the meter are not read back: the model's outputs check them below).
    hw = harness.program_read_back(layout, work / "tables.json")
    for t in program.tables:
        if t.kind != "direct":
            assert contents(hw[t.name]) == contents(t), t.name

    # Every frame does what the scenario says, in the model holding the file's tables. The
    # scenario names a drop or punt by what raises it; the frame carries only the reason.
    reasons, names = raised_by(program), harness.reason_names(program)
    scenario = [(label, frame, (e[0], reasons[e[1]]) if e[0] != "pass" else e)
                for label, frame, e in runpy.run_path(str(SCRIPT))["scenario"]()]
    frames = harness.frames_of(CAPTURE)
    assert len(frames) == len(scenario)

    def said(o):
        if o[0] == "pass":
            return f"pass to {o[1]} in VNI {o[2]}, DSCP {o[3]}"
        return f"{o[0]} {o[1]:#04x} {names.get(o[1], '')}"

    intent = program.copy()
    wrong = []
    for (label, _, expected), frame in zip(scenario, frames):
        frame += bytes(max(0, harness.ETHERNET_MIN - len(frame)))
        got = outcome(frame, intent, window)
        if got != expected:
            wrong.append(f"{label}: {said(got)}; the scenario says {said(expected)}")
    assert wrong == [], "\n".join(wrong)

    # The simulator's outputs and summary against the model, frame by frame.
    sent = [harness.Sent(0, i + 1, f) for i, f in enumerate(frames)]
    exp = harness.expected(program, sent, window)
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    assert got.summary["program"] == binary.program
    # The counts per reason are the scenario's (their names the model's, checked above).
    for what, kind in (("dropped", "drop"), ("punted", "punt")):
        assert {int(r): v["frames"] for r, v in got.summary[what]["reasons"].items()} == \
            dict(Counter(e[1] for _, _, e in scenario if e[0] == kind)), what
    sessions = program.sessions["sessions"].table
    # The scenario's eight flows before the probes (two of them dropped after the session
    # table, by a route miss and a mapping miss), and every probe but the last.
    probes = sum(label.startswith("C>B udp probe") for label, _, _ in scenario)
    assert (sessions.learned, sessions.insert_failed) == (8 + probes - 1, 1)

    # The printed summary names the reasons and tables; the captures come last.
    for pattern in (r"^ +0x39 sessions\.full +1$", r"^ +0x3a colour\.drop_red +4$",
                    r"^ +0x33 eni_out\.drop/eni_in\.drop +1$",
                    r"^tables +frame_class +direct +hits", r"^ +sessions +session +hits"):
        assert re.search(pattern, r.stdout, re.M), pattern
    captures = sorted((work / "out").glob("*.pcap"))
    tail = r.stdout.splitlines()[-(len(captures) + 1):]
    assert tail == [f"output captures in {work / 'out'}:"] + [f"  {c}" for c in captures]
