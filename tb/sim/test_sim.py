# SPDX-License-Identifier: Apache-2.0
"""matcha-sim, the Verilator harness of a program's pipeline (sim/README.md), run as a process,
here built for the built-in l2l3 program (matcha_l2l3).

Tables are loaded over the simulator's control socket by the real C driver
(tb/common/driver.py) on a Python client of docs/sim-socket.md (tb/common/sim_socket.py);
every output capture, punt.csv, drop.csv, skipped.csv and the summary's counts are
compared with the reference model (tb/sim/harness.py: the packet-path model around the
program model holding the same tables). The other tests are the socket protocol (bus
errors, DECERR beyond the bus, requests the simulator cannot run), clients that disconnect
in the middle of a run, seeded back-pressure, capture records the simulator skips
(snaplen-cut, empty, oversize) and short frames it pads, and bad input: missing or damaged
captures, a socket path in use, bad options, layouts that are not JSON or whose members are
wrong (the message names the member). Last, `make run`'s flow (sim/run_example.sh)
on the shipped example, against the model holding the tables read back from the simulator
after matcha-ctl loaded them.

Run one: pytest tb/sim -k "capture and w64" [--matcha-seed N]
"""

import json
import os
import random
import re
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, wrpcap

from tb.common import contract
from tb.common import driver as drv
from tb.common import sim
from tb.common.phv import Layout
from tb.common.sim_socket import (
    CANNOT_RUN, DECERR, OKAY, OP_READ, OP_WRITE, REQUEST, SLVERR, SocketBus, connect,
)
from tb.model import MAX_FRAME
from tb.model.program import Program, ProgramError
from tb.pipeline import traffic
from tb.pipeline.control import range_pairs
from tb.sim import harness
from tb.sim.harness import Simulator

# s_axil_awaddr of matcha_l2l3 is 24 bits wide: the control window is 16 MiB.
WINDOW = 1 << 24
pytestmark = pytest.mark.builds(*(harness.SimBinary(c) for c in sim.CONFIGS))
ADDERS = {"exact": "exact_add", "lpm": "lpm_add", "ternary": "ternary_add"}


def need(config):
    missing = harness.SimBinary(config).missing()
    if missing:
        pytest.skip(missing)


def program_of(config):
    return Program(sim.layout_file(config))


def header_bytes(config):
    return Layout(sim.layout_file(config)).header_bytes


# ------------------------------------------------------------------------ tables


def random_tables(rng, program):
    """Intended entries [(table, entry, action, data)]: exact MACs, nested LPM prefixes,
    overlapping ACL rules with port ranges split by the driver."""
    routes = traffic.random_routes(rng, program["ipv4_lpm"], rng.randint(20, 50))
    items = [("l2_fwd", *x) for x in traffic.random_l2(rng, program["l2_fwd"],
                                                        rng.randint(20, 45))]
    items += [("ipv4_lpm", *x) for x in routes]
    items += [("acl", *x) for x in traffic.random_acl(rng, program["acl"], rng.randint(10, 40),
                                                      prefixes=[e for e, _, _ in routes],
                                                      ranges=range_pairs)]
    return items


def random_defaults(rng, program):
    """Miss actions [(table, action, data)] other than the reset ones, each table at most
    once, some tables not at all."""
    choices = {
        "l2_fwd": [("forward", program["l2_fwd"].data("forward", port=rng.randrange(16)))],
        "ipv4_lpm": [("drop", 0), ("route", traffic.random_route_data(rng, program["ipv4_lpm"]))],
        "acl": [("to_host", 0)],
    }
    return [(t, *rng.choice(c)) for t, c in choices.items() if rng.random() < 0.3]


def load(dev, program, items, defaults=()):
    """Adds the entries through the driver and, those it takes, to the model; sets the
    defaults on both. Returns how many entries the driver took."""
    taken = 0
    for name, entry, action, data in items:
        t = program[name]
        aid = t.action_id(action)
        try:
            getattr(dev, ADDERS[t.kind])(t.index, *entry, aid, data)
        except drv.MatchaError as e:
            if e.code in (drv.ENOSPC, drv.EEXIST):
                continue  # no room where the driver can place it, or a repeated rule
            raise
        t.add(*entry, aid, data)
        taken += 1
    for name, action, data in defaults:
        t = program[name]
        dev.set_default(t.index, t.action_id(action), data)
        t.set_default(action, data)
    return taken


def frames_for(rng, program, items, n):
    """n random (port, frame) biased towards the intended entries (FrameMaker on a copy of
    the model holding them all); frames with bad_frame set are left out, a capture cannot
    carry that bit."""
    scratch = program.copy()
    for name, entry, action, data in items:
        try:
            scratch[name].add(*entry, action, data)
        except ProgramError:
            pass
    maker = traffic.FrameMaker(rng, scratch)
    out = []
    while len(out) < n:
        _, frame, port, bad = maker.frame()
        if not bad:
            out.append((port, frame))
    return out


# --------------------------------------------------------------- through the simulator


MODES = {
    "back_to_back": [],
    # Unpadded: the random runts reach the parser, which punts them.
    "backpressure": ["--backpressure", "0.4", "--gap", "2", "--no-pad"],
}


def printed_counts(text):
    """The summary's printed 'in' and 'tables' lines: ({port: (frames, bytes)},
    {table: (hits, misses)})."""
    ins, tables = {}, {}
    section = None
    for line in text.splitlines():
        head = line[:8].strip()
        section = head or section
        m = re.match(r"\S*\s+port (\d+)\s+(\d+) frames\s+(\d+) bytes", line)
        if section == "in" and m:
            ins[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        m = re.match(r"\S*\s+(\w+)\s+(exact|lpm|ternary)\s+hits\s+(\d+)\s+misses\s+(\d+)", line)
        if section == "tables" and m:
            tables[m.group(1)] = (int(m.group(3)), int(m.group(4)))
    return ins, tables


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", sim.CONFIGS)
def test_capture_through_simulator(config, mode, work, matcha_seed):
    """Random tables loaded over the socket by the C driver while the simulator waits
    (--wait-client), then ~500 random frames on up to 16 ingress ports; every egress
    capture, the punt capture with punt.csv and drop.csv against the model packet by
    packet, and the summary's counts (in, out, punts and drops per reason, table hits and
    misses) against the model's."""
    capture_through_simulator(config, mode, work, matcha_seed, frames=500)


@pytest.mark.soak
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("config", sim.CONFIGS)
def test_capture_through_simulator_soak(config, mode, work, matcha_seed):
    """test_capture_through_simulator with 20,000 frames."""
    capture_through_simulator(config, mode, work, matcha_seed, frames=20000)


def capture_through_simulator(config, mode, work, matcha_seed, frames):
    need(config)
    rng = random.Random(f"{matcha_seed}:{config}:{mode}")
    program = program_of(config)
    items = random_tables(rng, program)
    defaults = random_defaults(rng, program)
    in_args, sent = harness.write_captures(work, frames_for(rng, program, items, frames))
    sock = work / "ctl.sock"
    extra = MODES[mode] + (["--seed", matcha_seed] if mode == "backpressure" else [])
    with Simulator(config, *in_args, "--out", work / "out", "--socket", sock, "--wait-client",
                   "--layout", sim.layout_file(config), *extra) as s:
        with SocketBus(sock) as bus:
            with drv.Device(bus) as dev:
                taken = load(dev, program, items, defaults)
        rc, out, err = s.finish()
    assert rc == 0, f"matcha-sim exit {rc}\n{out}\n{err}"
    assert taken > 20
    exp = harness.expected(program, sent, header_bytes(config), pad="--no-pad" not in extra)
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    ins, tables = printed_counts(out)
    assert ins == {p: tuple(c) for p, c in exp.in_counts.items()}
    assert tables == program.counters()
    names = harness.reason_names(program)
    for row in got.punt_rows + got.drop_rows:
        assert row["reason_name"] == names[int(row["reason"])], row
    assert got.summary["socket"]["connections_closed"] == 1
    if mode == "backpressure":
        assert f"seed {matcha_seed}" in out
        assert got.summary["seed"] == matcha_seed


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_drops_while_output_waits(config, work, matcha_seed):
    """Frames that leave (forwarded, or punted for want of a route), each followed by a
    run of frames l2_fwd drops, under heavy back-pressure: the deparser drops the later
    frames while the earlier one still waits at the output (at w512, where a short frame
    fits in the deparser's output registers), and drop.csv and punt.csv still name the
    input frame of every drop and punt."""
    need(config)
    rng = random.Random(f"{matcha_seed}:{config}:drops_while_waiting")
    program = program_of(config)
    fwd, dropped = 0x02000000AA01, 0x02000000DD01
    items = [("l2_fwd", (fwd,), "forward", program["l2_fwd"].data("forward", port=7)),
             ("l2_fwd", (dropped,), "drop", 0)]
    frames = []
    for i in range(60):
        if i % 3 == 2:  # IPv4 without a route: punted
            frames.append((i % 4, traffic.build_ipv4(rng, eth_dst=fwd, src=rng.getrandbits(32),
                                                     dst=rng.getrandbits(32), proto=17,
                                                     length=rng.randint(60, 128))))
        else:
            frames.append((i % 4, traffic.ipv6_frame(rng, fwd, rng.randint(60, 400))))
        frames += [(rng.randrange(4), traffic.ipv6_frame(rng, dropped, rng.randint(60, 90)))
                   for _ in range(rng.randint(1, 5))]
    in_args, sent = harness.write_captures(work, frames)
    sock = work / "ctl.sock"
    with Simulator(config, *in_args, "--out", work / "out", "--socket", sock, "--wait-client",
                   "--backpressure", "0.85", "--seed", matcha_seed) as s:
        with SocketBus(sock) as bus:
            with drv.Device(bus) as dev:
                assert load(dev, program, items) == 2
        rc, out, err = s.finish()
    assert rc == 0, f"matcha-sim exit {rc}\n{out}\n{err}"
    exp = harness.expected(program, sent, header_bytes(config))
    assert len(exp.drops) > 60 and exp.punt and exp.ports[7]
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    if config == "w512":
        # The case this test is for came up: a drop decided before the first beat of a
        # frame sent earlier (a punted one, whose clocks punt.csv gives) had left.
        order = {(s.port, s.packet): i for i, s in enumerate(sent)}

        def sent_index(row):
            return order[int(row["ingress_port"]), int(row["ingress_packet"])]

        assert any(sent_index(d) > sent_index(p)
                   and int(d["drop_clock"]) < int(p["first_out_clock"])
                   for p in got.punt_rows for d in got.drop_rows), \
            "no drop was decided while an earlier frame waited at the output"


def test_backpressure_seed_repeats(work, matcha_seed):
    """The same --seed gives the same back-pressure pattern (the same clocks and
    latencies); without back-pressure the traffic takes fewer clocks; the outputs are the
    model's in every case (tables empty: the reset defaults)."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:seed_repeats")
    program = program_of("w64")
    in_args, sent = harness.write_captures(work, frames_for(rng, program, [], 80))
    exp = harness.expected(program, sent, header_bytes("w64"))
    runs = {}
    for name, extra in (("a", ["--backpressure", "0.5", "--seed", matcha_seed]),
                        ("b", ["--backpressure", "0.5", "--seed", matcha_seed]),
                        ("none", [])):
        rc, out, err = harness.run("w64", *in_args, "--out", work / name, *extra)
        assert rc == 0, f"{out}\n{err}"
        got = harness.read_outputs(work / name)
        assert harness.compare(got, exp) == []
        runs[name] = got.summary
    assert runs["a"]["traffic_clocks"] == runs["b"]["traffic_clocks"]
    assert runs["a"]["latency"] == runs["b"]["latency"]
    assert runs["none"]["traffic_clocks"] < runs["a"]["traffic_clocks"]


def test_frame_of_maximum_size_passes(work):
    """A 9216-byte frame (the pipeline's maximum) and minimum-size frames around it."""
    need("w64")
    big = bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP()
                / Raw(bytes(range(256)) * 40))[:MAX_FRAME]
    small = bytes(Ether(dst="02:00:00:00:00:02") / IP(dst="10.0.0.2") / UDP() / Raw(bytes(18)))
    in_args, sent = harness.write_captures(work, [(1, small), (1, big), (2, small)])
    out_dir = work / "not" / "yet" / "there"  # created with its parents
    rc, out, err = harness.run("w64", *in_args, "--out", out_dir)
    assert rc == 0, f"{out}\n{err}"
    program = program_of("w64")
    exp = harness.expected(program, sent, header_bytes("w64"))
    got = harness.read_outputs(out_dir)
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []


def test_pcapng_and_pcap_inputs(work):
    """A pcapng capture on one port and a pcap capture on another, frames interleaved by
    timestamp: both read, every output the model's."""
    need("w64")
    frames = [(2 if i % 3 else 9, bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")
                                        / IP(dst=f"10.0.0.{i}") / UDP(sport=i, dport=i)
                                        / Raw(bytes(7 * i))))
              for i in range(30)]
    in_args, sent = harness.write_captures(work, frames, pcapng_ports={2})
    assert any(a.endswith(".pcapng") for a in in_args)
    rc, out, err = harness.run("w64", *in_args, "--out", work / "out")
    assert rc == 0, f"{out}\n{err}"
    program = program_of("w64")
    exp = harness.expected(program, sent, header_bytes("w64"))
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []


# ------------------------------------------------------ records skipped, frames padded

# Every test below runs on pcap and on pcapng captures: libpcap reads both, and each
# format keeps a record's captured and wire lengths in its own header.
CAPTURE_FORMATS = pytest.mark.parametrize("fmt", ["pcap", "pcapng"])


def run_against_model(work, frames, *extra, pad=True, fmt="pcap"):
    """[(port, frame[, wire length])] through matcha-sim with empty tables (every table's
    reset default), one capture per port in format `fmt`; every output and the summary's
    counts against the model. Returns the model's Expected, the Outputs and the printed
    summary."""
    ports = {port for port, *_ in frames} if fmt == "pcapng" else ()
    in_args, sent = harness.write_captures(work, frames, pcapng_ports=ports)
    rc, out, err = harness.run("w64", *in_args, "--out", work / "out", *extra, timeout=120)
    assert rc == 0, f"{out}\n{err}"
    program = program_of("w64")
    exp = harness.expected(program, sent, header_bytes("w64"), pad=pad)
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    return exp, got, out


def printed_input(text):
    """The printed summary's 'padded' count (None when off) and its 'skipped' count and
    counts per reason."""
    padded = skipped = None
    reasons = {}
    section = None
    for line in text.splitlines():
        section = line[:8].strip() or section
        if m := re.match(r"padded\s+(\d+) frames", line):
            padded = int(m.group(1))
        elif m := re.match(r"skipped\s+(\d+) frames", line):
            skipped = int(m.group(1))
        elif section == "skipped" and (m := re.fullmatch(r"\s+(\w+)\s+(\d+)", line)):
            reasons[m.group(1)] = int(m.group(2))
    return padded, skipped, reasons


def records_of(path):
    """scapy's reading of a capture (pcap or pcapng): [(captured bytes, length on the
    wire)] in order."""
    with RawPcapReader(str(path)) as r:
        return [(len(data), meta.wirelen) for data, meta in r]


def middle_of_port(rng, frames, fits=lambda frame: True):
    """The index of a random frame that `fits` with frames of its own port both before
    and after it."""
    middle = [i for i, (port, frame, *_) in enumerate(frames) if fits(frame)
              and any(q == port for q, *_ in frames[:i])
              and any(q == port for q, *_ in frames[i + 1:])]
    return rng.choice(middle)


@CAPTURE_FORMATS
def test_snaplen_cut_record_is_skipped(work, matcha_seed, fmt):
    """One record in the middle of random good ones captured shorter than its frame was on
    the wire: it is skipped, listed in skipped.csv and counted in the summary; every other
    frame, those of its port around it too, goes through as the model says."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:snaplen")
    program = program_of("w64")
    frames = [(rng.randrange(3), f) for _, f in frames_for(rng, program, [], 60)]
    i = middle_of_port(rng, frames, lambda f: len(f) > 20)
    port, whole = frames[i]
    frames[i] = (port, whole[:rng.randrange(14, len(whole))], len(whole))
    exp, got, out = run_against_model(work, frames, fmt=fmt)
    # scapy's own reading of the capture says which record is cut.
    cut = [(p, n + 1) for p in range(3) if (work / f"in{p}.{fmt}").exists()
           for n, (caplen, wirelen) in enumerate(records_of(work / f"in{p}.{fmt}"))
           if caplen < wirelen]
    packet = sum(1 for q, *_ in frames[:i + 1] if q == port)
    assert cut == [(port, packet)]
    assert [(int(r["ingress_port"]), int(r["ingress_packet"]), r["reason"])
            for r in got.skipped_rows] == [(port, packet, "snaplen")]
    assert got.summary["skipped"] == {"frames": 1, "reasons": {"snaplen": 1}}
    assert got.summary["frames_done"] == len(frames) - 1
    assert got.summary["in"][str(port)]["frames"] == sum(1 for q, *_ in frames if q == port) - 1
    assert printed_input(out)[1:] == (1, {"snaplen": 1})


@CAPTURE_FORMATS
def test_oversize_record_is_skipped(work, matcha_seed, fmt):
    """A 9217-byte frame, one byte over the pipeline's maximum, in the middle of good ones
    (one of them exactly the maximum): skipped, listed and counted; the others go
    through."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:oversize")
    program = program_of("w64")
    frames = [(0, f) for _, f in frames_for(rng, program, [], 30)]
    base = bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP())
    longest = base + bytes(MAX_FRAME - len(base))
    frames.insert(rng.randrange(len(frames) + 1), (0, longest))
    i = rng.randrange(1, len(frames))
    frames.insert(i, (0, longest + b"\x00"))
    exp, got, out = run_against_model(work, frames, fmt=fmt)
    records = records_of(work / f"in0.{fmt}")
    assert [n + 1 for n, (caplen, _) in enumerate(records) if caplen > MAX_FRAME] == [i + 1]
    assert records[i][0] == MAX_FRAME + 1 == 9217
    assert [(int(r["ingress_packet"]), r["reason"], int(r["captured_bytes"]))
            for r in got.skipped_rows] == [(i + 1, "oversize", 9217)]
    assert got.summary["skipped"] == {"frames": 1, "reasons": {"oversize": 1}}
    assert got.summary["frames_done"] == len(frames) - 1
    assert printed_input(out)[1:] == (1, {"oversize": 1})


@CAPTURE_FORMATS
def test_skipped_records_counted_per_reason(work, matcha_seed, fmt):
    """Snaplen-cut, empty and oversize records scattered over two captures of good frames:
    the summary (printed and summary.json) counts each reason as many times as records of
    it were written, the first line says how many were skipped, skipped.csv lists them."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:skip_reasons")
    program = program_of("w64")
    frames = [(rng.choice((4, 11)), f) for _, f in frames_for(rng, program, [], 80)]
    bad = {"snaplen": rng.randint(1, 4), "empty": rng.randint(1, 4),
           "oversize": rng.randint(1, 4)}
    for _ in range(bad["snaplen"]):
        frames.insert(rng.randrange(len(frames)),
                      (rng.choice((4, 11)), bytes(rng.randint(14, 200)), 1514))
    for _ in range(bad["empty"]):
        frames.insert(rng.randrange(len(frames)), (rng.choice((4, 11)), b""))
    for _ in range(bad["oversize"]):
        frames.insert(rng.randrange(len(frames)),
                      (rng.choice((4, 11)), bytes(rng.randint(MAX_FRAME + 1, MAX_FRAME + 600))))
    print("records skipped for each reason:", bad)
    exp, got, out = run_against_model(work, frames, fmt=fmt)
    n = sum(bad.values())
    assert got.summary["skipped"] == {"frames": n, "reasons": bad}
    assert len(got.skipped_rows) == n
    assert printed_input(out)[1:] == (n, bad)
    assert f"{len(frames) - n} frames from 2 capture(s), {n} records skipped" in out


@CAPTURE_FORMATS
def test_unpadded_arp_is_padded(work, matcha_seed, fmt):
    """A 42-byte ARP request captured unpadded (as the sending host captures it) in the
    middle of good frames of its port enters zero-padded to 60 bytes, as a NIC sends it:
    no runt, one frame counted as padded, and it and the frames around it go through as
    the model says."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:arp")
    program = program_of("w64")
    frames = [(0, f) for _, f in frames_for(rng, program, [], 20)]
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:07")
                / ARP(psrc="10.0.0.7", pdst="10.0.0.1"))
    assert len(arp) == 42
    frames.insert(rng.randrange(1, len(frames)), (0, arp))
    exp, got, out = run_against_model(work, frames, fmt=fmt)
    assert [r for r in got.punt_rows if r["reason_name"] == "RUNT"] == []
    assert got.summary["padded"] == 1 + sum(1 for _, f in frames if len(f) < 60 and f != arp)
    assert got.summary["skipped"]["frames"] == 0
    assert got.summary["in"]["0"] == {"frames": len(frames),
                                      "bytes": sum(max(60, len(f)) for _, f in frames)}
    assert printed_input(out)[0] == got.summary["padded"]


@CAPTURE_FORMATS
@pytest.mark.parametrize("pad", [True, False], ids=["padded", "no_pad"])
def test_short_frames_padded(work, pad, fmt):
    """Frames captured shorter than 60 bytes (whole Ethernet headers and less) between
    frames of 60 and 61 bytes: by default they enter zero-padded to 60 bytes, as a NIC
    sends them, and none is a runt; with --no-pad they enter as captured and the parser
    punts each as RUNT (docs/packet-path.md)."""
    need("w64")
    udp = bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP())  # 42 bytes
    frames = [(0, udp[:n]) for n in (1, 13, 14, 20, 34, 42)]
    frames += [(0, udp + bytes(n - len(udp))) for n in (59, 60, 61)]
    frames += [(1, bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP()))]  # 42 bytes
    short = sum(1 for _, f in frames if len(f) < 60)
    exp, got, out = run_against_model(work, frames, *([] if pad else ["--no-pad"]), pad=pad,
                                      fmt=fmt)
    runts = [r for r in got.punt_rows if r["reason_name"] == "RUNT"]
    entered = [int(r["bytes"]) for r in got.punt_rows + got.drop_rows] + [
        len(f) for fs in got.ports.values() for f in fs]
    if pad:
        assert runts == [] and min(entered) == 60
        assert got.summary["padded"] == short and got.summary["pad"] is True
        assert printed_input(out)[0] == short
        # Port 0: seven frames padded to 60 bytes, one of 60, one of 61.
        assert got.summary["in"]["0"]["bytes"] == 60 * 8 + 61
    else:
        assert len(runts) == short
        assert got.summary["padded"] == 0 and got.summary["pad"] is False
        assert "padded   off (--no-pad)" in out


# --------------------------------------------------------------------- the socket


def test_socket_protocol_and_bus_errors(work):
    """docs/sim-socket.md on a simulator serving only its socket: reads and writes answer
    OKAY, an unmapped address inside the control window the pipeline's SLVERR, an address
    beyond the bus's 24 address bits DECERR, an unaligned address, an unknown op or
    non-zero padding 0xFF; the driver sees a bus error as MATCHA_EIO; SIGTERM ends the run
    and removes the socket."""
    need("w64")
    sock = work / "ctl.sock"
    layout = json.loads(sim.layout_file("w64").read_text())
    with Simulator("w64", "--socket", sock, "--out", work / "out") as s:
        with SocketBus(sock) as bus:
            assert bus.transact(OP_READ, 0x000) == (OP_READ, OKAY, contract.INFO_MAGIC_VALUE)
            assert bus.read32(contract.INFO_BUILD_ID) == layout["buildId"]
            base = bus.read32(contract.INFO_DESCRIPTORS + 4 * 4)  # descriptor 0, word 4: the window base
            assert bus.transact(OP_WRITE, base + contract.WIN_INDEX, 5) == (OP_WRITE, OKAY, 0)
            assert bus.read32(base + contract.WIN_INDEX) == 5
            for addr in (WINDOW, WINDOW + base, 0x7FFFFFFC, 0xFFFFFFFC):
                assert bus.transact(OP_READ, addr) == (OP_READ, DECERR, 0), hex(addr)
                assert bus.transact(OP_WRITE, addr, 1) == (OP_WRITE, DECERR, 0), hex(addr)
            for addr in (0x00F000, WINDOW - 4):
                assert bus.transact(OP_READ, addr)[1] == SLVERR, hex(addr)
                assert bus.transact(OP_WRITE, addr, 1) == (OP_WRITE, SLVERR, 0), hex(addr)
            assert bus.transact(OP_READ, 0x002) == (OP_READ, CANNOT_RUN, 0)
            assert bus.transact(OP_WRITE, base + 1, 7) == (OP_WRITE, CANNOT_RUN, 0)
            assert bus.transact(ord("Q"), 0x000) == (ord("Q"), CANNOT_RUN, 0)
            bus.send_raw(b"R\x01\x00\x00" + struct.pack("<II", 0, 0))
            assert bus.receive(ord("R")) == (ord("R"), CANNOT_RUN, 0)
            # Still in step after all that:
            assert bus.read32(base + contract.WIN_INDEX) == 5
            n_first = bus.transactions
        with SocketBus(sock) as bus:
            with drv.Device(bus) as dev:
                names = {t["index"]: t for t in layout["program"]["tables"]}
                assert dev.table_count() == len(names)
                for i, info in enumerate(dev.tables):
                    assert (info.key_bits, info.size, info.data_bits) == (
                        names[i]["keyWidth"], names[i]["size"], names[i]["dataWidth"])
            n_second = bus.transactions

        class BeyondTheBus:
            """Every address moved past the bus's address bits: all DECERR."""

            def __init__(self, bus):
                self.bus = bus

            def read32(self, addr):
                return self.bus.read32(addr + WINDOW)

            def write32(self, addr, value):
                self.bus.write32(addr + WINDOW, value)

        with SocketBus(sock) as bus:
            with pytest.raises(drv.MatchaError) as e:
                drv.Device(BeyondTheBus(bus))
            assert e.value.code == drv.EIO
            n_third = bus.transactions
        # Served once the simulator has seen the third client go; still connected at the end.
        last = SocketBus(sock)
        assert last.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
        rc, out, err = s.stop()
        last.close()
    assert rc == 0, f"{out}\n{err}"
    assert not sock.exists()
    summary = json.loads((work / "out" / "summary.json").read_text())
    assert summary["socket"] == {"transactions": n_first + n_second + n_third + 1,
                                 "connections_closed": 3}


def test_clients_disconnect_mid_run(work, matcha_seed):
    """While a long capture runs: a client that closes in the middle of a request (the
    first, which starts the traffic), one that closes with a transaction in flight, one
    that opens the driver and reads counters. The run goes on, every frame as the model
    says, and the summary counts the three connections and the whole transactions."""
    need("w64")
    rng = random.Random(f"{matcha_seed}:disconnect")
    program = program_of("w64")
    # Long enough (~400k clocks) for the clients below to come and go during the traffic.
    frames = [(rng.randrange(4), f) for _, f in frames_for(rng, program, [], 300)]
    template = bytes(Ether(dst="02:00:00:00:00:09") / IP(dst="10.9.9.9") / UDP()
                     / Raw(bytes(1400)))
    frames += [(3, template)] * 2500
    in_args, sent = harness.write_captures(work, frames)
    sock = work / "ctl.sock"
    with Simulator("w64", *in_args, "--out", work / "out", "--socket", sock,
                   "--wait-client") as s:
        a = connect(sock)
        a.sendall(REQUEST.pack(OP_READ, 0, 0)[:5])
        a.close()
        with SocketBus(sock) as b:
            assert b.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
            hits = b.read32(contract.INFO_WINDOW_BYTES + contract.WIN_HITS)
            b.send_raw(REQUEST.pack(OP_WRITE, contract.INFO_WINDOW_BYTES + contract.WIN_INDEX, 3))
        with SocketBus(sock) as c:
            with drv.Device(c) as dev:
                assert dev.table_count() == 3
            later = c.read32(contract.INFO_WINDOW_BYTES + contract.WIN_HITS) | c.read32(contract.INFO_WINDOW_BYTES + contract.WIN_HITS + 4) << 32
            assert later >= hits
            n_c = c.transactions
        assert s.alive(), "the run ended before the clients were done; make it longer"
        rc, out, err = s.finish()
    assert rc == 0, f"{out}\n{err}"
    exp = harness.expected(program, sent, header_bytes("w64"))
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    assert got.summary["socket"] == {"transactions": 3 + n_c, "connections_closed": 3}


def test_wait_client_without_captures(work):
    """--socket --wait-client and no captures: the run ends once the first client has
    closed, with the tables' counts in the summary (how a table loader is tried out)."""
    need("w64")
    sock = work / "ctl.sock"
    program = program_of("w64")
    with Simulator("w64", "--socket", sock, "--wait-client", "--out", work / "out") as s:
        with SocketBus(sock) as bus:
            with drv.Device(bus) as dev:
                assert load(dev, program, [("l2_fwd", (0x020000000001,), "drop", 0)]) == 1
        rc, out, err = s.finish(timeout=120)
    assert rc == 0, f"{out}\n{err}"
    summary = json.loads((work / "out" / "summary.json").read_text())
    assert summary["complete"] and summary["frames_in"] == 0
    assert [(t["name"], t["hits"], t["misses"]) for t in summary["tables"]] == [
        (t.name, 0, 0) for t in program.tables]
    assert not sock.exists()


def test_clock_limit_and_signal_stop_early(work):
    """--max-clocks before the last frame has left, and SIGTERM before the traffic could
    start: the summary says INCOMPLETE, summary.json "complete" is false, exit status 1."""
    need("w64")
    frame = bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP() / Raw(bytes(1000)))
    in_args, _ = harness.write_captures(work, [(0, frame)] * 50)
    # Frames wait while the tables clear after reset (docs/tables.md: about a hundred clocks
    # here); then the 50 frames take about 131 clocks each to enter.
    rc, out, err = harness.run("w64", *in_args, "--out", work / "limit", "--max-clocks", 3000)
    assert rc == 1, f"{out}\n{err}"
    assert "INCOMPLETE" in out and "clock limit" in out
    summary = json.loads((work / "limit" / "summary.json").read_text())
    assert not summary["complete"] and 0 < summary["frames_done"] < 50
    sock = work / "ctl.sock"
    with Simulator("w64", *in_args, "--out", work / "signal", "--socket", sock,
                   "--wait-client") as s:
        with SocketBus(sock) as bus:  # the simulator is up; this client never leaves
            assert bus.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
            rc, out, err = s.stop()
    assert rc == 1, f"{out}\n{err}"
    assert "INCOMPLETE: 0 of 50 frames entered" in out and "interrupted" in out


def test_settle_clocks_run_before_traffic(work):
    """--settle-clocks N: N clocks run after reset before the first frame is sent. The
    tables clear after reset in those (about a hundred clocks here), so the frames enter at
    once and the run is N clocks longer less that wait; the outputs and the clocks from the
    first input beat to the last output are the same."""
    need("w64")
    frame = bytes(Ether(dst="02:00:00:00:00:01") / IP(dst="10.0.0.1") / UDP() / Raw(bytes(100)))
    in_args, _ = harness.write_captures(work, [(0, frame)] * 5)
    runs = {}
    for settle in (0, 5000):
        out = work / f"settle{settle}"
        rc, stdout, err = harness.run("w64", *in_args, "--out", out, "--settle-clocks", settle)
        assert rc == 0, f"{stdout}\n{err}"
        runs[settle] = (json.loads((out / "summary.json").read_text()),
                        {f.name: f.read_bytes() for f in sorted(out.glob("*.pcap"))})
    (quick, quick_out), (settled, settled_out) = runs[0], runs[5000]
    assert quick["clocks"] + 5000 > settled["clocks"] > 5000 + quick["traffic_clocks"]
    assert settled["traffic_clocks"] == quick["traffic_clocks"]
    assert settled_out == quick_out and settled["frames_done"] == 5


# ------------------------------------------------------------------------ bad input


def sim_error(*args):
    """Runs matcha-sim expecting a refusal: returns its stderr (exit status 2 checked)."""
    rc, out, err = harness.run("w64", *args, timeout=120)
    assert rc == 2, f"exit {rc}, expected 2\n{out}\n{err}"
    assert "matcha-sim: " in err
    return err


def one_frame_capture(path, **kw):
    wrpcap(str(path), [Ether(dst="02:00:00:00:00:01") / IP() / UDP() / Raw(bytes(40))], **kw)
    return path


def test_missing_capture(work):
    need("w64")
    err = sim_error("--in", f"0={work / 'absent.pcap'}", "--out", work / "out")
    assert "absent.pcap" in err


def test_capture_that_is_not_a_capture(work):
    need("w64")
    bad = work / "text.pcap"
    bad.write_text("this is not a packet capture\n")
    assert "text.pcap" in sim_error("--in", f"0={bad}", "--out", work / "out")


def test_capture_cut_in_a_record(work):
    need("w64")
    good = one_frame_capture(work / "good.pcap")
    cut = work / "cut.pcap"
    data = good.read_bytes()
    cut.write_bytes(data + data[24:24 + 16 + 20])  # a second record, its data cut short
    err = sim_error("--in", f"3={cut}", "--out", work / "out")
    assert "cut.pcap: packet 2: " in err
    assert "a damaged or cut-off file; packets read whole before it: 1" in err


@CAPTURE_FORMATS
def test_record_over_the_file_snaplen(work, fmt):
    """A record holding more bytes than its file's snapshot length allows (65535 in the
    pcap header, 262144 in the pcapng interface block) breaks the format: libpcap reads no
    further, so the capture is refused, naming the record and how many came before it."""
    need("w64")
    frames = [(0, bytes(60)), (0, bytes(300000)), (0, bytes(60))]
    in_args, _ = harness.write_captures(work, frames,
                                        pcapng_ports={0} if fmt == "pcapng" else ())
    err = sim_error(*in_args, "--out", work / "out")
    assert f"in0.{fmt}: packet 2: " in err
    assert "a damaged or cut-off file; packets read whole before it: 1" in err


def test_capture_not_ethernet(work):
    need("w64")
    path = work / "rawip.pcap"
    wrpcap(str(path), [IP() / UDP()], linktype=101)
    assert "link type" in sim_error("--in", f"0={path}", "--out", work / "out")


@pytest.mark.parametrize("args, message", [
    (["--in", "16=x.pcap"], "out of range"),
    (["--in", "x.pcap"], "PORT=FILE"),
    (["--backpressure", "1"], "below 1"),
    (["--gap", "-1"], "not a non-negative integer"),
    (["--wait-client"], "needs --socket"),
    ([], "nothing to simulate"),
    (["--bogus"], "unknown option"),
], ids=["port_out_of_range", "no_port", "backpressure_1", "negative_gap", "wait_no_socket",
        "no_inputs", "unknown_option"])
def test_bad_options(work, args, message):
    need("w64")
    assert message in sim_error(*args)


def test_out_is_a_file(work):
    need("w64")
    capture = one_frame_capture(work / "one.pcap")
    taken = work / "taken"
    taken.write_text("a file")
    assert f"--out {taken}" in sim_error("--in", f"0={capture}", "--out", taken)


def test_socket_path_in_use(work):
    """A second simulator on a socket path another one serves is refused; the first one
    keeps serving."""
    need("w64")
    sock = work / "ctl.sock"
    with Simulator("w64", "--socket", sock, "--out", work / "a") as first:
        with SocketBus(sock) as bus:
            assert bus.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
        assert "in use by another process" in sim_error("--socket", sock, "--out", work / "b")
        with SocketBus(sock) as bus:
            assert bus.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
        rc, out, err = first.stop()
    assert rc == 0, err


def test_socket_path_not_a_socket(work):
    need("w64")
    path = work / "file"
    path.write_text("keep me")
    assert "not a socket" in sim_error("--socket", path, "--out", work / "out")
    assert path.read_text() == "keep me"


def test_socket_path_too_long(work):
    need("w64")
    assert "path longer than" in sim_error("--socket", work / ("s" * 120), "--out",
                                           work / "out")


def test_stale_socket_is_replaced(work):
    """A socket file nobody listens on (left by a process that died) is taken over."""
    need("w64")
    sock = work / "ctl.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock))
    s.close()
    assert sock.exists()
    with Simulator("w64", "--socket", sock, "--out", work / "out") as sim_proc:
        with SocketBus(sock) as bus:
            assert bus.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
        rc, _, err = sim_proc.stop()
    assert rc == 0, err


def test_layout_of_another_build(work):
    need("w64")
    layout = json.loads(sim.layout_file("w64").read_text())
    layout["buildId"] ^= 1
    other = work / "layout.json"
    other.write_text(json.dumps(layout))
    capture = one_frame_capture(work / "one.pcap")
    err = sim_error("--in", f"0={capture}", "--out", work / "out", "--layout", other)
    assert "buildId" in err and "layout.json" in err


def damage_member(layout, path, value):
    """`layout` with the member at `path` (keys and list indexes) set to `value`, or removed
    when `value` is None."""
    *above, last = path
    obj = layout
    for k in above:
        obj = obj[k]
    if value is None:
        del obj[last]
    else:
        obj[last] = value
    return layout


@pytest.mark.parametrize("path, value, message", [
    (("buildId",), None, 'the document: no member "buildId"'),
    (("program", "tables", 1, "index"), "1",
     'program.tables[1].index: expected an integer from 0 to 4294967295, found "1"'),
    (("program", "tables", 0, "actions", 1, "ops", 0, "reason"), 256,
     "program.tables[0].actions[1].ops[0].reason: expected an integer from 0 to 255, found 256"),
    (("program", "tables", 2, "actions"), {}, "program.tables[2].actions: expected an array"),
    (("program", "tables", 2, "index"), 0, "program.tables[2]: index 0 is l2_fwd's too"),
], ids=["no_build_id", "index_a_string", "reason_too_big", "actions_not_an_array",
        "index_twice"])
def test_layout_refused(work, path, value, message):
    """A --layout whose members are missing, of the wrong type or out of range is refused
    with a message naming the file and the member's path."""
    need("w64")
    layout = damage_member(json.loads(sim.layout_file("w64").read_text()), path, value)
    bad = work / "layout.json"
    bad.write_text(json.dumps(layout))
    capture = one_frame_capture(work / "one.pcap")
    assert f"{bad}: {message}" in sim_error("--in", f"0={capture}", "--out", work / "out",
                                            "--layout", bad)


def test_layout_not_json(work):
    """A --layout that is not JSON: refused with the line and column where it stops."""
    need("w64")
    bad = work / "layout.json"
    bad.write_text('{\n  "buildId": 1,\n  "program": {"tables": [}\n}\n')
    err = sim_error("--socket", work / "ctl.sock", "--out", work / "out", "--layout", bad)
    assert f"{bad}: not JSON: parse error at line 3, column 26" in err


# ------------------------------------------------------------------------ examples


def test_example_capture_is_what_its_script_makes(work):
    """sim/examples/l2l3.pcap is the output of sim/examples/make_l2l3_pcap.py."""
    out = work / "l2l3.pcap"
    r = subprocess.run([sys.executable, str(harness.REPO / "sim" / "examples" /
                                            "make_l2l3_pcap.py"), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == (harness.REPO / "sim" / "examples" / "l2l3.pcap").read_bytes()


# `make run`: sim/run_example.sh with matcha-ctl behind tb/sim/ctl_then_read_back.py, which
# reads the tables back from the running simulator once matcha-ctl has loaded them.
RUN_EXAMPLE = harness.REPO / "sim" / "run_example.sh"
EXAMPLE_CAPTURE = harness.REPO / "sim" / "examples" / "l2l3.pcap"
EXAMPLE_TABLES = "sim/examples/l2l3_tables.txt"
READ_BACK = harness.REPO / "tb" / "sim" / "ctl_then_read_back.py"


def run_example(work, **env):
    """sim/run_example.sh on the l2l3 example into work/out; returns the finished process."""
    if "MATCHA_SIM" not in env:
        env["MATCHA_SIM"] = harness.binary("w64")
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "EXAMPLE": "l2l3",
           "MATCHA_LAYOUT": sim.layout_file("w64"), "MATCHA_SOCKET": work / "ctl.sock",
           "MATCHA_CTL": READ_BACK, "MATCHA_READBACK_CTL": harness.matcha_ctl(),
           "MATCHA_READBACK_OUT": work / "tables.json", **env}
    return subprocess.run(["bash", str(RUN_EXAMPLE), str(work / "out")],
                          env={**os.environ, **{k: str(v) for k, v in env.items()}},
                          capture_output=True, text=True, timeout=600)


def test_make_run_example(work):
    """The flow of `make run`: the tables of sim/examples/l2l3_tables.txt, loaded by
    matcha-ctl into the running simulator and read back from it, are the ones the file
    means (counts per table, entries written out here from the file); every output
    capture, punt.csv, drop.csv and the summary agree with the model holding what was read
    back; the script ends with the summary and the list of captures."""
    need("w64")
    r = run_example(work)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert f"{EXAMPLE_TABLES}: 9 entries loaded" in r.stdout

    program = harness.program_read_back(sim.layout_file("w64"), work / "tables.json")
    l2, lpm, acl = program["l2_fwd"], program["ipv4_lpm"], program["acl"]
    assert (len(l2), len(lpm), len(acl)) == (3, 4, 2)
    assert l2.lookup(0x001122334466)[1:3] == (l2.action_id("forward"), l2.data("forward", port=4))
    assert l2.lookup(0x001122334477)[1] == l2.action_id("drop")
    assert sorted(lpm.entries()) == [(0x00000000, 1), (0x0A010000, 16), (0x0A010200, 24),
                                     (0x0A420000, 16)]
    assert lpm.lookup(0x0A010203)[1:3] == (lpm.action_id("route"), lpm.data(
        "route", port=5, dmac=0x020000000005, smac=0x020000000001))
    assert lpm.lookup(0x0A42FFFF)[1] == lpm.action_id("drop")
    deny = (acl.key(src=0x0A090000, protocol=6, dstPort=22),
            acl.key(src=0xFFFF0000, protocol=0xFF, dstPort=0xFFFF), 10)
    to_host = (acl.key(dst=0x0A010035, protocol=17, dstPort=53),
               acl.key(dst=0xFFFFFFFF, protocol=0xFF, dstPort=0xFFFF), 5)
    assert acl.entries() == [deny, to_host]

    sent = [harness.Sent(0, i + 1, f) for i, f in enumerate(harness.frames_of(EXAMPLE_CAPTURE))]
    exp = harness.expected(program, sent, header_bytes("w64"))
    got = harness.read_outputs(work / "out")
    assert harness.compare(got, exp) == []
    assert harness.summary_errors(got.summary, exp, program) == []
    # Something of everything the example is there to show.
    assert len(exp.ports) >= 5 and exp.punt and exp.drops

    captures = sorted((work / "out").glob("*.pcap"))
    tail = r.stdout.splitlines()[-(len(captures) + 1):]
    assert tail == [f"output captures in {work / 'out'}:"] + [f"  {c}" for c in captures]
    assert "socket " in r.stdout and "tables   l2_fwd" in r.stdout


def test_make_run_example_loader_fails(work):
    """A loader that fails: the script says so, exits 1, and the simulator waiting for its
    tables is stopped rather than left running (its socket file is gone)."""
    need("w64")
    r = run_example(work, MATCHA_CTL="/bin/false")
    assert r.returncode == 1
    assert "matcha-ctl could not load" in r.stderr and "matcha-sim stopped" in r.stderr
    assert not (work / "ctl.sock").exists()


def test_make_run_example_without_simulator(work):
    """A simulator that is not built: a clear error naming the target that builds it."""
    r = run_example(work, MATCHA_SIM=work / "matcha-sim")
    assert r.returncode == 1
    assert "matcha-sim is missing: build it with 'make sim'" in r.stderr
