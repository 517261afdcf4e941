# SPDX-License-Identifier: Apache-2.0
"""A real Internet routing table in the Corundum build's route table (docs/overlay.md,
"Scale"): the first 32,768 IPv4 prefixes of a full BGP table (sw/driver/tests/data/
README.md), every one under routing group 0, loaded through matcha-ctl into the 512-bit
overlay simulator with the rest of one ENI's outbound path, and outbound frames sent to
destinations at, inside and next to the ends of sampled prefixes, and at random.

Each prefix routes to a VNET of its own number modulo the VNETs, and each VNET has its own
VNI, so every frame that leaves says by its VNI which prefix the hardware's B+tree chose;
a destination gets a mapping only in the VNET its longest prefix routes to, so a wrong
choice is a mapping miss. The oracle is the program model (its LPM looks the key up at
every length, and tb/model/test_program.py checks it against a search of every prefix),
holding the tables read from the same file: every output capture, drop and punt must be the
model's, and the frames must spread over the table's prefix lengths.

A soak scenario (the load takes minutes): make soak, or
make test-one T=tb/sim/test_overlay_bgp.py
"""

import ipaddress
import random
import subprocess

import pytest
from scapy.layers.inet import UDP
from scapy.packet import Raw

from sim import build as sim_build
from tb.common.phv import Layout
from tb.model.program import Program
from tb.sim import harness, tables_file
from tb.sim.bgp_routes import bgp_prefixes, probes, reach, scale, tables

OVERLAY = harness.SimBinary("w512", "overlay")
ROUTES = 32768
SAMPLED = 1000   # prefixes whose ends are probed (four frames each)
RANDOM = 600     # frames to random destinations


@pytest.mark.soak
@pytest.mark.builds(OVERLAY)
def test_bgp_table_routes_as_the_model(work, matcha_seed):
    missing = OVERLAY.missing()
    if missing:
        pytest.skip(missing)
    rng = random.Random(matcha_seed)
    nets = bgp_prefixes(ROUTES)
    assert len(nets) == ROUTES
    destinations = probes(nets, rng, SAMPLED, RANDOM)
    tables_path = work / "bgp_tables.txt"
    tables_path.write_text("\n".join(tables(nets, destinations, scale.VNETS)) + "\n")
    frames = [bytes(scale.outbound(0, str(ipaddress.ip_address(d)), UDP(sport=1024 + k % 60000, dport=53),
                                   Raw(b"q" * 16)))
              for k, d in enumerate(destinations)]
    inputs, sent = harness.write_captures(work, [(0, f) for f in frames])

    layout = sim_build.layout_path(OVERLAY.config, OVERLAY.program)
    sock, out = work / "ctl.sock", work / "out"
    out.mkdir()
    with harness.Simulator(OVERLAY.config, "--socket", sock, "--wait-client", *inputs, "--out", out,
                           "--layout", layout, program=OVERLAY.program) as s:
        s.wait_socket(sock)
        ctl = subprocess.run([str(harness.matcha_ctl()), f"sim:{sock}", "--layout", str(layout),
                              "-f", str(tables_path)], capture_output=True, text=True, timeout=1800)
        assert ctl.returncode == 0, f"{ctl.stdout}\n{ctl.stderr}"
        rc, stdout, stderr = s.finish(timeout=600)
    assert rc == 0, f"{stdout}\n{stderr}"

    program = Program(layout)
    tables_file.load(program, tables_path)
    assert len(program["route"].entries()) == ROUTES
    exp = harness.expected(program, sent, Layout(layout).header_bytes)
    got = harness.read_outputs(out)
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []

    # The frames reach across the table: many VNETs, prefixes of many lengths, and
    # destinations no prefix covers.
    passed, vnis, lengths, drops = reach(program, exp)
    print(f"seed {matcha_seed}: {len(frames)} frames, {len(passed)} passed in {len(vnis)} VNIs, "
          f"prefix lengths {sorted(lengths.items())}, drops {dict(drops)}")
    assert len(passed) > len(frames) // 2 and len(vnis) > 500
    assert len(lengths) >= 10 and drops["route.miss"] > 0
