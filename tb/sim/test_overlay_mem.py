# SPDX-License-Identifier: Apache-2.0
"""The overlay with its CA->PA mappings and sessions in memory (docs/overlay.md, "Mappings
and sessions in memory"), in matcha-sim with its memory model (sim/axi_memory.h): the 64-bit
`overlay_mem` build, tables loaded through matcha-ctl, outbound frames to mapped and
unmapped destinations. A memory of 100 clocks runs in make test; one of 300 clocks with a
read every 4, one slower than the tables, and the 512-bit build (the Corundum card's scale,
its routes on chip), in make soak.

The mappings are placed where they are hard for the table: full buckets (every entry of a
bucket taken, each by a WRITE whose strobes must leave its neighbours alone), one mapping
more in each, which the driver puts in the table's on-chip stash (docs/tables.md, "The
stash"), and one more destination in each without a mapping of its own. A key's bucket is the low
bits of its CRC-64 (tb/model/hashing.py, written from the CRC's definition). The oracle is
the program model holding the same tables file: every output, drop and punt and the
summary's counts must be its.

Run one: make test-one T=tb/sim/test_overlay_mem.py
"""

import ipaddress
import random
import subprocess
import sys

import pytest
from scapy.layers.inet import UDP
from scapy.packet import Raw

from sim import build as sim_build
from tb.common.phv import Layout
from tb.model.hashing import exact_index
from tb.model.program import Program
from tb.pipeline.control import descriptor_of
from tb.sim import harness, tables_file

sys.path.insert(0, str(harness.REPO / "sim" / "examples"))
import make_overlay_scale as scale  # noqa: E402  (the scale example's addressing and frames)

OVERLAY_MEM = harness.SimBinary("w64", "overlay_mem")
# The Corundum card's: 512 bits, the card's scale, routes on chip.
OVERLAY_MEM_W512 = harness.SimBinary("w512", "overlay_mem")
VNET = 3
NET = ipaddress.ip_network("172.16.0.0/16")
FULL_BUCKETS = 4
SCATTERED = 24


def placement(mapping, rng):
    """(mapped, unmapped) destinations of VNET: FULL_BUCKETS buckets with every entry
    mapped, one mapping more each (in the stash) and one more destination each left
    unmapped, SCATTERED mappings in other
    buckets (at most one a bucket), and as many unmapped destinations in empty buckets."""
    slots = descriptor_of(mapping.desc).geometry
    buckets = mapping.size // slots

    def bucket(d):
        return exact_index(mapping.key(dstVnet=VNET, dst=d), mapping.key_width, 0, buckets)

    seen = {}
    while sum(len(ds) > slots + 1 for ds in seen.values()) < FULL_BUCKETS:
        d = int(NET.network_address) + rng.randrange(NET.num_addresses)
        if d not in seen.setdefault(bucket(d), []):
            seen[bucket(d)].append(d)
    full = [ds[:slots + 2] for ds in seen.values() if len(ds) > slots + 1][:FULL_BUCKETS]
    mapped = [d for ds in full for d in ds[:slots + 1]]
    unmapped = [ds[slots + 1] for ds in full]
    taken = {bucket(d) for ds in full for d in ds}
    for group in (mapped, unmapped):
        for _ in range(SCATTERED):
            while True:
                d = int(NET.network_address) + rng.randrange(NET.num_addresses)
                if bucket(d) not in taken:
                    break
            taken.add(bucket(d))
            group.append(d)
    return mapped, unmapped


def run(work, seed, memory_latency, memory_interval, late=False, cleared=False, settings=(),
        binary=OVERLAY_MEM, write_latency=0, repeat=1, jitter=0):
    """The frames through matcha-sim with its memory answering `memory_latency` clocks
    late (and up to `jitter` more, reads of one id overtaking older ones of another), a
    beat every `memory_interval` clocks at most, its writes landing
    `write_latency` clocks after their data, the tables loaded by matcha-ctl
    after the matcha-ctl commands `settings` (with `cleared`, `--cleared`: without reading
    the tables back first); a flow to each destination, `repeat` frames of it a few flows
    apart; every output
    against the model (whose mapping lookups are all late with `late`). Returns the
    summary, the expected outputs, the program model and how many destinations were and
    were not mapped."""
    missing = binary.missing()
    if missing:
        pytest.skip(missing)
    layout = sim_build.layout_path(binary.config, binary.program)
    program = Program(layout)
    rng = random.Random(seed)
    mapped, unmapped = placement(program["mapping"], rng)
    tables_path = work / "tables.txt"
    tables_path.write_text("\n".join(scale.one_route_tables(NET, VNET, mapped)) + "\n")
    ctl_path = work / "ctl.txt"
    ctl_path.write_text("\n".join([*settings, tables_path.read_text()]))
    destinations = mapped + unmapped
    rng.shuffle(destinations)
    flows = [bytes(scale.outbound(0, str(ipaddress.ip_address(d)), UDP(sport=2000 + k, dport=53),
                                  Raw(b"m" * 20))) for k, d in enumerate(destinations)]
    # Flow k's frames at k, k + 3, k + 6, ... in flows (ties in flow order).
    frames = [f for _, f in sorted(((k + 3 * j, f) for k, f in enumerate(flows) for j in range(repeat)),
                                   key=lambda p: p[0])]
    inputs, sent = harness.write_captures(work, [(0, f) for f in frames])
    sock, out = work / "ctl.sock", work / "out"
    out.mkdir()
    with harness.Simulator(binary.config, "--socket", sock, "--wait-client", *inputs, "--out", out,
                           "--layout", layout, "--memory-latency", memory_latency,
                           "--memory-interval", memory_interval, "--memory-write-latency", write_latency,
                           "--memory-jitter", jitter, "--seed", seed, program=binary.program) as s:
        s.wait_socket(sock)
        ctl = subprocess.run([str(harness.matcha_ctl()), f"sim:{sock}", "--layout", str(layout),
                              *(["--cleared"] if cleared else []), "-f", str(ctl_path)],
                             capture_output=True, text=True, timeout=300)
        assert ctl.returncode == 0, f"{ctl.stdout}\n{ctl.stderr}"
        rc, stdout, stderr = s.finish(timeout=300)
    assert rc == 0, f"{stdout}\n{stderr}"
    tables_file.load(program, tables_path)
    in_memory = [t for t in program.by_name.values() if t.desc.get("memory")]
    for t in in_memory:
        t.late = late
    program.sessions["sessions"].late = late
    exp = harness.expected(program, sent, Layout(layout).header_bytes)
    got = harness.read_outputs(out)
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    memories = {m["port"]: m for m in got.summary["memories"]}
    assert sorted(memories) == sorted(p for t in in_memory + [program.sessions["sessions"]]
                                      for p in t.desc["memory"]["ports"])
    for m in memories.values():
        assert (m["latency"], m["interval"], m["write_latency"], m["jitter"]) == \
            (memory_latency, memory_interval, write_latency, jitter)
    print(f"seed {seed}: {len(frames)} frames, {len(mapped)} mapped, memories {memories}")
    return got.summary, exp, program, len(mapped), len(unmapped)


def beats(table):
    """Beats of its port a bucket of a table in memory takes (layout.json's `bucketBytes`)."""
    memory = table.desc["memory"]
    return memory["bucketBytes"] // (memory["dataWidth"] // 8)


@pytest.mark.parametrize("binary,memory_latency,memory_interval,cleared", [
    pytest.param(OVERLAY_MEM, 100, 1, True, marks=pytest.mark.builds(OVERLAY_MEM)),
    pytest.param(OVERLAY_MEM, 300, 4, False, marks=[pytest.mark.soak, pytest.mark.builds(OVERLAY_MEM)]),
    pytest.param(OVERLAY_MEM_W512, 100, 1, True, marks=[pytest.mark.soak, pytest.mark.builds(OVERLAY_MEM_W512)])],
    ids=["w64-100", "w64-300", "w512-100"])
def test_mappings_from_memory(work, matcha_seed, binary, memory_latency, memory_interval, cleared):
    """Every lookup back in time: each mapped destination leaves encapsulated to its PA,
    full buckets included, and each unmapped one is dropped as a mapping miss, as the model
    says; at 300 clocks the lookups overlap (several reads out at once). Loaded with
    matcha-ctl --cleared (the 100-clock run), the mappings go in without a READ of the
    table: every read of its memory is a frame's lookup."""
    summary, exp, program, mapped, unmapped = run(work, matcha_seed, memory_latency, memory_interval,
                                                  cleared=cleared, binary=binary)
    names = harness.reason_names(program)
    drops = [names[r] for *_, r in exp.drops]
    assert sum(len(fs) for fs in exp.ports.values()) == mapped
    assert drops == ["mapping.drop"] * unmapped
    mapping_memory = next(m for m in summary["memories"] if m["port"] == "m_axi_mapping")
    if memory_latency >= 300:
        assert mapping_memory["reads_out_max"] > 1
    if cleared:
        mapping = program["mapping"]
        assert mapping_memory["read_beats"] == beats(mapping) * (mapping.hits + mapping.misses) == \
            beats(mapping) * (mapped + unmapped)
    # The aging scanner reads buckets between the frames (test_scanner_stopped: not when
    # stopped).
    sessions_memory = next(m for m in summary["memories"] if m["port"] == "m_axi_sessions")
    assert sessions_memory["traffic_read_beats"] > beats(program.sessions["sessions"]) * (mapped + unmapped)


@pytest.mark.builds(OVERLAY_MEM)
def test_sessions_with_late_writes(work, matcha_seed):
    """A memory whose writes land 300 clocks after their data, three times its reads'
    latency: each flow's three frames come a few flows apart, so the later ones read their
    bucket while the first one's session is still on its way to memory. Each flow learns
    its session once and its later frames hit it, as the model says (docs/sessions.md,
    "Exact under reads in flight"); the session table's hits and misses are the model's."""
    summary, exp, program, mapped, unmapped = run(work, matcha_seed, 100, 1, write_latency=300, repeat=3)
    sessions = program.sessions["sessions"].table
    assert sessions.occupancy == mapped + unmapped
    assert (sessions.hits, sessions.misses) == (2 * (mapped + unmapped), mapped + unmapped)
    memories = {m["port"]: m for m in summary["memories"]}
    assert memories["m_axi_sessions"]["traffic_write_beats"] >= beats(program.sessions["sessions"]) * (mapped + unmapped)


@pytest.mark.builds(OVERLAY_MEM)
def test_reads_of_varying_latency(work, matcha_seed):
    """A memory answering each read 100 to 300 clocks after its address (seeded), each read
    id's reads in order (a DRAM controller's latency varies with its queues and rows): every
    table in memory still answers every lookup in time and right. Each flow's three frames
    come a few flows apart; each flow learns its session once and every frame is the
    model's. (The pipeline's lookups, and the session table's scanner, read under one id a
    port: reads of another id are the control plane's, which the memory answers out of
    order against the lookups' where they overlap.)"""
    summary, exp, program, mapped, unmapped = run(work, matcha_seed, 100, 1, repeat=3, jitter=200)
    sessions = program.sessions["sessions"].table
    assert sessions.occupancy == mapped + unmapped
    assert (sessions.hits, sessions.misses) == (2 * (mapped + unmapped), mapped + unmapped)
    for m in summary["memories"]:
        assert m["delayed"] > m["traffic_read_beats"] // 4, m


@pytest.mark.builds(OVERLAY_MEM)
def test_scanner_stopped(work, matcha_seed):
    """The aging scanner stopped through the driver (matcha-ctl session_set_scan_interval
    0) before the traffic: during it the session table's memory sees one read a frame and
    one write a session learned (every frame a new flow), and nothing else; the mapping's,
    one read a frame that reached it."""
    summary, exp, program, mapped, unmapped = run(
        work, matcha_seed, 100, 1, settings=["session_set_scan_interval sessions 0"])
    memories = {m["port"]: m for m in summary["memories"]}
    learned = program.sessions["sessions"].table.occupancy
    assert learned == mapped + unmapped
    s, m = beats(program.sessions["sessions"]), beats(program["mapping"])
    assert (memories["m_axi_sessions"]["traffic_read_beats"],
            memories["m_axi_sessions"]["traffic_write_beats"]) == (s * (mapped + unmapped), s * learned)
    assert (memories["m_axi_mapping"]["traffic_read_beats"],
            memories["m_axi_mapping"]["traffic_write_beats"]) == (m * (mapped + unmapped), 0)


@pytest.mark.soak
@pytest.mark.builds(OVERLAY_MEM)
def test_memory_slower_than_the_table(work, matcha_seed):
    """A memory slower than the tables' latency (512 clocks): every frame is punted as it
    came by the session stage, the first memory-backed one it meets, with sessions.late;
    none reaches the mapping, which counts no hit or miss."""
    summary, exp, _, mapped, unmapped = run(work, matcha_seed, 600, 1, late=True)
    assert len(exp.punt) == mapped + unmapped and not exp.drops
    assert {int(r): v["name"] for r, v in summary["punted"]["reasons"].items()} == {0x41: "sessions.late"}
    (mapping,) = [t for t in summary["tables"] if t["name"] == "mapping"]
    assert (mapping["hits"], mapping["misses"]) == (0, 0)

