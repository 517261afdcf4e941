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
import lzma
import random
import subprocess
import sys
from collections import Counter

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from sim import build as sim_build
from tb.common.phv import Layout
from tb.model.program import Program
from tb.sim import harness, tables_file

sys.path.insert(0, str(harness.REPO / "sim" / "examples"))
import make_overlay_scale as scale  # noqa: E402  (the scale example's addressing and frames)

OVERLAY = harness.SimBinary("w512", "overlay")
BGP = harness.REPO / "sw" / "driver" / "tests" / "data" / "bgp-ipv4-full.txt.xz"
ROUTES = 32768
GROUP_BITS = 16
SAMPLED = 1000   # prefixes whose ends are probed (four frames each)
RANDOM = 600     # frames to random destinations


def bgp_prefixes():
    with lzma.open(BGP, "rt") as f:
        nets = [ipaddress.ip_network(line.strip()) for line in f if line.strip()]
    return nets[:ROUTES]


def longest(prefixes, address):
    """The index of the longest of `prefixes` covering `address`, or None (a lookup per
    length: the script's own, so that it can place the mappings)."""
    for length in range(32, -1, -1):
        i = prefixes.get((address >> (32 - length) << (32 - length), length))
        if i is not None:
            return i
    return None


def probes(nets, rng):
    """Destinations: the first and last address of sampled prefixes and the ones just
    outside them, and random ones."""
    out = []
    for net in rng.sample(nets, SAMPLED):
        first, last = int(net.network_address), int(net.broadcast_address)
        out += [first, last, (first - 1) & 0xFFFFFFFF, (last + 1) & 0xFFFFFFFF]
    out += [rng.getrandbits(32) for _ in range(RANDOM)]
    return list(dict.fromkeys(out))


def tables(nets, destinations):
    """The tables file: one ENI's outbound path, the BGP table in routing group 0, a
    VNI per VNET, and for each destination a prefix covers, a mapping in that prefix's
    VNET."""
    index = {(int(n.network_address), n.prefixlen): i for i, n in enumerate(nets)}
    t = ["table_add frame_class overlay 1 1 =>", f"table_add vip accept {scale.VIP} =>",
         f"table_add direction outbound {scale.host_vni(0)} =>",
         f"table_add eni_out set_eni {scale.eni_mac(0)} => 0",
         f"table_add eni set_eni_attrs 0 => 0 {scale.pa(0, 1)} {scale.host_vni(0)} 0",
         "table_add acl permit 1 0 0&&&0 0&&&0 17 0->65535 0->65535 => 10",
         "table_add verdict admit 0 1 =>", "table_add verdict admit 1 1 =>"]
    t += [f"table_add route route_vnet 0 {n} => {i % scale.VNETS}" for i, n in enumerate(nets)]
    t += [f"table_add vnet set_vni {v} => {scale.vnet_vni(v)}" for v in range(scale.VNETS)]
    for k, d in enumerate(destinations):
        i = longest(index, d)
        if i is not None:
            t.append(f"table_add mapping set_mapping {i % scale.VNETS} {ipaddress.ip_address(d)} => "
                     f"{scale.pa(k >> 8, k & 255)} {scale.ca_mac(0, k & 255)}")
    t.append("table_set_default encap vxlan_encap 02:aa:00:00:00:f1 02:bb:00:00:00:f2")
    return t


@pytest.mark.soak
@pytest.mark.builds(OVERLAY)
def test_bgp_table_routes_as_the_model(work, matcha_seed):
    missing = OVERLAY.missing()
    if missing:
        pytest.skip(missing)
    rng = random.Random(matcha_seed)
    nets = bgp_prefixes()
    assert len(nets) == ROUTES
    destinations = probes(nets, rng)
    tables_path = work / "bgp_tables.txt"
    tables_path.write_text("\n".join(tables(nets, destinations)) + "\n")
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
    passed = [Ether(f) for fs in exp.ports.values() for f in fs]
    vnis = Counter(p[VXLAN].vni for p in passed if VXLAN in p)
    lengths = Counter(program["route"].match(int(ipaddress.ip_address(p[VXLAN].payload[IP].dst)))[1] - GROUP_BITS
                      for p in passed if VXLAN in p)
    names = harness.reason_names(program)
    drops = Counter(names[r] for *_, r in exp.drops)
    print(f"seed {matcha_seed}: {len(frames)} frames, {len(passed)} passed in {len(vnis)} VNIs, "
          f"prefix lengths {sorted(lengths.items())}, drops {dict(drops)}")
    assert len(passed) > len(frames) // 2 and len(vnis) > 500
    assert len(lengths) >= 10 and drops["route.miss"] > 0
