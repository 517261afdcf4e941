# SPDX-License-Identifier: Apache-2.0
"""matcha-sim built for a program other than the built-in one (`make sim PROGRAM=<name>`):
the conntrack program (docs/pipeline.md, "The conntrack program"), whose session stage
learns flows in the data path; and a program that was not generated, refused.

Its tables are loaded by matcha-ctl from a file while the simulator waits, behind the relay
tb/sim/ctl_then_read_back.py, which reads them back from the running simulator; the entries
read back are checked against what the file means, and every output capture, punt.csv,
drop.csv and the summary's counts (the session table's hits and misses too) against the
model holding them, its session stage learning frame by frame in the order they are sent.

Run one: pytest tb/sim/test_programs.py [--matcha-seed N]
"""

import os
import random
import subprocess
import sys
from collections import Counter
from types import SimpleNamespace

import pytest

from sim import build as sim_build
from tb.conntrack.conntrack_tb import INSIDE, INSIDE_NET, OUTSIDE, TCP_PROTO, frame
from tb.model.session import ACK, FIN, RST, SYN, UDP
from tb.common import sim
from tb.common.phv import Layout
from tb.sim import harness
from tb.sim.harness import Simulator

CONNTRACK = harness.SimBinary("w64", "conntrack")
READ_BACK = harness.REPO / "tb" / "sim" / "ctl_then_read_back.py"
# ACL: frames from 10.0.0.0/8 are permitted (and learn a session), frames to port 23 are
# denied whatever their source; by_session drops frames of no session on the outside port.
TABLES = f"""\
table_add acl permit {INSIDE_NET:#x}&&&0xff000000 0&&&0 0&&&0 0&&&0 0&&&0 => 10
table_add acl deny 0&&&0 0&&&0 0&&&0 0&&&0 23&&&0xffff => 20
table_add by_session drop {OUTSIDE} 0 0 =>
"""
FLAG_MIXES = [SYN, SYN, SYN | ACK, ACK, ACK, FIN | ACK, RST, 0]


def random_flows(rng, n_flows, n_frames):
    """n_frames (port, frame) of n_flows TCP and UDP flows between inside clients (most in
    10.0.0.0/8, the others outside the permitted net) and outside servers, some on port 23,
    each frame in a random direction with random TCP flags."""
    # conntrack_tb's frame() reads only the random generator of the testbench it is given.
    gen = SimpleNamespace(rng=rng)
    flows = []
    for _ in range(n_flows):
        client = (INSIDE_NET if rng.random() < 0.8 else 0xAC100000) | rng.getrandbits(16)
        flows.append((client, 0xC0A80000 | rng.getrandbits(8), rng.choice([TCP_PROTO, UDP]),
                      rng.randrange(1024, 4789), rng.choice([22, 23, 80, 443])))
    out = []
    for _ in range(n_frames):
        src, dst, proto, sport, dport = rng.choice(flows)
        flags = rng.choice(FLAG_MIXES)
        if rng.random() < 0.5:
            out.append((INSIDE, frame(gen, src, dst, proto, sport, dport, flags)))
        else:
            out.append((OUTSIDE, frame(gen, dst, src, proto, dport, sport, flags)))
    return out


@pytest.mark.builds(CONNTRACK)
def test_conntrack_program_capture(work, matcha_seed):
    """The conntrack simulator on ~300 random frames of 30 flows in both directions: the
    three entries matcha-ctl loaded are the file's; frames from inside learn sessions,
    outside frames pass only on a session, frames to port 23 are denied, every output and
    the summary's counts (the session table's included) are the model's."""
    missing = CONNTRACK.missing()
    if missing:
        pytest.skip(missing)
    rng = random.Random(f"{matcha_seed}:conntrack")
    layout = sim_build.layout_path(CONNTRACK.config, CONNTRACK.program)
    tables = work / "tables.txt"
    tables.write_text(TABLES)
    in_args, sent = harness.write_captures(work, random_flows(rng, 30, 300))
    sock = work / "ctl.sock"
    with Simulator(CONNTRACK.config, *in_args, "--out", work / "out", "--socket", sock,
                   "--wait-client", program=CONNTRACK.program) as s:
        env = {**os.environ, "MATCHA_READBACK_CTL": str(harness.matcha_ctl()),
               "MATCHA_READBACK_OUT": str(work / "tables.json")}
        ctl = subprocess.run([sys.executable, str(READ_BACK), f"sim:{sock}", "--layout",
                              str(layout), "-f", str(tables)],
                             env=env, capture_output=True, text=True, timeout=60)
        assert ctl.returncode == 0, f"{ctl.stdout}\n{ctl.stderr}"
        rc, out, err = s.finish(timeout=100)
    assert rc == 0, f"matcha-sim exit {rc}\n{out}\n{err}"
    assert out.startswith("matcha-sim conntrack w64: ")

    program = harness.program_read_back(layout, work / "tables.json")
    acl, by_session = program["acl"], program["by_session"]
    assert sorted(acl.entries()) == sorted([
        (acl.key(src=INSIDE_NET), acl.key(src=0xFF000000), 10),
        (acl.key(dstPort=23), acl.key(dstPort=0xFFFF), 20)])
    assert [acl.lookup(acl.key(src=INSIDE_NET | 5, dstPort=23))[1],
            acl.lookup(acl.key(src=INSIDE_NET | 5, dstPort=80))[1]] == [
        acl.action_id("deny"), acl.action_id("permit")]
    assert by_session.entries() == [by_session.key(ingressPort=OUTSIDE)]
    assert by_session.lookup(by_session.key(ingressPort=OUTSIDE))[1] == \
        by_session.action_id("drop")

    exp = harness.expected(program, sent, Layout(layout).header_bytes)
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    assert got.summary["program"] == "conntrack"
    sessions = program.sessions["sessions"].table
    # Something of everything the program does: sessions learned and hit, outside frames
    # let through and dropped for want of one, ACL denials.
    assert sessions.learned and sessions.hits, (sessions.learned, sessions.hits)
    reasons = Counter(reason for _, _, reason in exp.drops)
    print(f"sessions learned {sessions.learned}, hits {sessions.hits}, drops per reason "
          f"{dict(reasons)}, frames out {sum(map(len, exp.ports.values()))}")
    assert {by_session.action("drop").ops[0].reason,
            acl.action("deny").ops[0].reason} <= set(reasons), reasons
    assert exp.ports


def test_unknown_program_refused():
    """sim/build.py asked for a program the generator did not write: refused, naming the
    programs it did write (rtl Generate.main: l2l3 in layout.json, the others in
    layout-<program>.json)."""
    missing = CONNTRACK.missing()
    if missing:
        pytest.skip(missing)
    r = subprocess.run([sys.executable, str(harness.REPO / "sim" / "build.py"), "--program",
                        "no_such_program"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "no layout of program no_such_program in " in r.stderr
    written = sorted(["l2l3"] + [f.stem.removeprefix("layout-")
                                 for f in (sim.RTL_DIR / "w64").glob("layout-*.json")])
    assert f"(programs there: {', '.join(written)}; run `make rtl`)" in r.stderr
