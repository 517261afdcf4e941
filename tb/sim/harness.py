# SPDX-License-Identifier: Apache-2.0
"""Running matcha-sim (sim/) from pytest: the binary, a process, its outputs, and what the
reference model says they must be.

The binary is built by sim/build.py, once per configuration, program and test process
(the build itself is skipped when up to date and serialized between pytest-xdist workers
by a file lock). The oracle of every frame is the packet-path model's parse and deparse around the
program model (tb/model/program.py) holding the tables the test loaded through the C
driver.
"""

import csv
import functools
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from scapy.packet import Raw
from scapy.utils import PcapNgWriter, RawPcapReader, wrpcap

from sim import build as sim_build
from tb.common import driver as drv
from tb.common import sim
from tb.model import CHECK_REASONS, ERROR_NAMES, MAX_FRAME, deparse, parse
from tb.model.program import InMemory, Program

REPO = Path(__file__).resolve().parents[2]
DLT_EN10MB = 1
# The shortest Ethernet frame, FCS left out as captures leave it out: 64 bytes on the wire.
ETHERNET_MIN = 60


@functools.lru_cache(maxsize=None)
def binary(config, program=sim_build.DEFAULT_PROGRAM):
    """build/sim/<config>/<program>/matcha-sim, built if it is missing or stale."""
    r = subprocess.run([sys.executable, str(REPO / "sim" / "build.py"), "--config", config,
                        "--program", program], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"sim/build.py --config {config} --program {program} failed:\n"
                           f"{r.stdout}{r.stderr}")
    return Path(r.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class SimBinary:
    """matcha-sim of one configuration and program, as a build target of the tests
    (tb/conftest.py)."""
    config: str
    program: str = sim_build.DEFAULT_PROGRAM

    def missing(self):
        return sim_build.missing(self.config, self.program)

    def build(self):
        return binary(self.config, self.program)

    def __str__(self):
        return f"{self.config}/{self.program}/matcha-sim"


@functools.lru_cache(maxsize=None)
def matcha_ctl():
    """build/sw/matcha-ctl, brought up to date by the driver's Makefile (make decides; a
    file lock keeps pytest-xdist workers from building it at the same time)."""
    with sim.locked(drv.SW_BUILD / ".matcha-ctl.lock"):
        r = subprocess.run(["make", "-s", "-C", str(drv.DRIVER_DIR), f"BUILD={drv.SW_BUILD}"],
                           capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"building matcha-ctl failed:\n{r.stdout}{r.stderr}")
    return drv.SW_BUILD / "matcha-ctl"


def short_dir():
    """A fresh directory with a short path (a Unix socket path has at most 107 bytes)."""
    return Path(tempfile.mkdtemp(prefix="msim-"))


class Simulator:
    """A matcha-sim process of `program`'s pipeline; stdout and stderr are collected when
    it ends."""

    def __init__(self, config, *args, program=sim_build.DEFAULT_PROGRAM):
        self.args = [str(binary(config, program)), *map(str, args)]
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.rc = self.out = self.err = None

    def finish(self, timeout=600):
        """Waits for the end; returns (exit status, stdout, stderr)."""
        try:
            self.out, self.err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.out, self.err = self.proc.communicate()
            raise AssertionError(f"matcha-sim did not end in {timeout} s: {self.args}\n"
                                 f"{self.out}\n{self.err}")
        self.rc = self.proc.returncode
        return self.rc, self.out, self.err

    def stop(self, timeout=60):
        """SIGTERM (the end of a serving run), then finish()."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.finish(timeout)

    def alive(self):
        return self.proc.poll() is None

    def wait_socket(self, sock, timeout=30):
        """Returns once the simulator serves its control socket `sock`."""
        deadline = time.monotonic() + timeout
        while not Path(sock).exists():
            if not self.alive() or time.monotonic() > deadline:
                rc, out, err = self.stop()
                raise AssertionError(f"matcha-sim did not open its socket (exit {rc}):\n{out}\n{err}")
            time.sleep(0.02)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def run(config, *args, timeout=600, program=sim_build.DEFAULT_PROGRAM):
    """Runs matcha-sim to its end; returns (exit status, stdout, stderr)."""
    with Simulator(config, *args, program=program) as s:
        return s.finish(timeout)


# ----------------------------------------------------------------------- captures


@dataclass
class Sent:
    """One record of an input capture: where its frame enters, its number in that port's
    capture (from 1), the bytes captured and the frame's length on the wire (longer when
    the capture's snapshot length cut it)."""
    port: int
    packet: int
    frame: bytes
    wire_len: int = None

    def __post_init__(self):
        if self.wire_len is None:
            self.wire_len = len(self.frame)


def write_captures(directory, frames, pcapng_ports=()):
    """Writes [(port, frame)] or [(port, frame, wire length)] as one capture per port,
    timestamps increasing in list order (so the simulator's merge by timestamp sends them
    in list order); pcap, or pcapng for the ports in `pcapng_ports`, the frames as given
    either way. Returns the --in arguments and the Sent records in send order."""
    per_port = defaultdict(list)
    sent = []
    for i, (port, frame, *wire_len) in enumerate(frames):
        p = Raw(frame)  # as captured: scapy must not dissect (and fail on) malformed frames
        p.time = 1_700_000_000 + i * 1e-6
        if wire_len:
            p.wirelen = wire_len[0]
        per_port[port].append(p)
        sent.append(Sent(port, len(per_port[port]), frame, *wire_len))
    args = []
    for port, pkts in sorted(per_port.items()):
        path = Path(directory) / f"in{port}.pcap"
        if port in pcapng_ports:
            path = path.with_suffix(".pcapng")
            writer = PcapNgWriter(str(path))
            writer.linktype = DLT_EN10MB  # not guessed from the frames, which stay bytes
            writer.write_header(None)
            for p in pkts:
                writer.write_packet(bytes(p), sec=p.time, wirelen=p.wirelen)
            writer.close()
        else:
            wrpcap(str(path), pkts, linktype=DLT_EN10MB)
        args += ["--in", f"{port}={path}"]
    return args, sent


# ------------------------------------------------------------------------ outputs


@dataclass
class Outputs:
    ports: dict        # egress port -> [frame]
    punt: list         # [frame]
    punt_rows: list    # punt.csv as dicts
    drop_rows: list    # drop.csv as dicts
    skipped_rows: list # skipped.csv as dicts
    summary: dict      # summary.json


def frames_of(path):
    """The frames of a capture as bytes, undissected."""
    with RawPcapReader(str(path)) as r:
        return [data for data, _ in r]


def read_outputs(out_dir):
    out_dir = Path(out_dir)
    ports = {}
    for f in out_dir.glob("port*.pcap"):
        m = re.fullmatch(r"port(\d+)\.pcap", f.name)
        if m:
            ports[int(m.group(1))] = frames_of(f)
    with open(out_dir / "punt.csv") as f:
        punt_rows = list(csv.DictReader(f))
    with open(out_dir / "drop.csv") as f:
        drop_rows = list(csv.DictReader(f))
    with open(out_dir / "skipped.csv") as f:
        skipped_rows = list(csv.DictReader(f))
    return Outputs(ports, frames_of(out_dir / "punt.pcap"), punt_rows, drop_rows,
                   skipped_rows, json.loads((out_dir / "summary.json").read_text()))


def entering(s, pad=True):
    """What a capture record becomes at the pipeline's door, by the rules of sim/README.md
    "Input": (the frame that enters, None), or (None, why it never enters). A record is
    skipped when the capture did not keep all of its frame ("snaplen"), when it holds no
    byte ("empty"), when its frame is longer than the pipeline's maximum ("oversize"), the
    first of these that holds. A frame shorter than the Ethernet minimum enters with zero
    bytes after it up to that minimum, as a NIC sends it, unless padding is off."""
    if len(s.frame) < s.wire_len:
        return None, "snaplen"
    if not s.frame:
        return None, "empty"
    if len(s.frame) > MAX_FRAME:
        return None, "oversize"
    if pad and len(s.frame) < ETHERNET_MIN:
        return s.frame + bytes(ETHERNET_MIN - len(s.frame)), None
    return s.frame, None


@dataclass
class Expected:
    ports: dict        # egress port -> [frame]
    punt: list         # [(Sent, frame, egress port, reason)]
    drops: list        # [(Sent, frame as it entered, reason)]
    in_counts: dict    # port -> (frames, bytes)
    skipped: list      # [(Sent, reason)]
    padded: int        # frames that entered padded
    pad: bool
    # meter array -> [requests on configured meters, on unconfigured ones] (its window's
    # HITS and MISSES, docs/tables.md "Meters")
    meters: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))


def expected(program, sent, header_bytes, pad=True, busy=frozenset()):
    """What the model makes of the records in send order (its counters counting the frames
    that enter) with the configuration's header window, padding short frames unless `pad`
    is false; the frames of `busy`, (port, packet) of each, found their session tables'
    tracked buckets taken (`busy_frames`)."""
    exp = Expected(defaultdict(list), [], [], defaultdict(lambda: [0, 0]), [], 0, pad)
    for s in sent:
        if busy:
            for stage in program.sessions.values():
                stage.busy = (s.port, s.packet) in busy
        frame, skipped = entering(s, pad)
        if frame is None:
            exp.skipped.append((s, skipped))
            continue
        exp.padded += frame != s.frame
        trace = []
        phv = parse(frame, ingress_port=s.port, header_bytes=header_bytes)
        out, tuser, drop = deparse(frame, program.apply(phv, trace=trace))
        count_meter_requests(program, trace, exp.meters)
        exp.in_counts[s.port][0] += 1
        exp.in_counts[s.port][1] += len(frame)
        if out is None:
            exp.drops.append((s, frame, drop))
        elif tuser["punt"]:
            exp.punt.append((s, out, tuser["egressPort"], tuser["reason"]))
        else:
            exp.ports[tuser["egressPort"]].append(out)
    for stage in program.sessions.values():
        stage.busy = False
    return exp


def busy_frames(program, punt_rows):
    """(port, packet) of each frame the hardware punted with a session table's busy reason
    (punt.csv's rows): the model cannot know when a table in memory runs out of tracked
    buckets (docs/sessions.md, "Exact under reads in flight"); expected(busy=) checks that
    such a frame changed nothing and left as it came."""
    reasons = {st.busy_reason for st in program.sessions.values() if st.busy_reason is not None}
    return frozenset((int(r["ingress_port"]), int(r["ingress_packet"])) for r in punt_rows
                     if int(r["reason"]) in reasons)


def count_meter_requests(program, trace, counts):
    """Adds the meter requests of one frame's lookups (`Program.apply`'s trace) to
    `counts`: {array: [requests on configured meters, on unconfigured ones]}."""
    for look in trace:
        if not look.applied or look.action is None or look.table not in program.by_name:
            continue  # a table that did not apply or applied no action, or the session stage
        action = program[look.table].action(look.action)
        for op in action.ops:
            if op.op == "meter":
                index = action.param(op.param).value(look.data)
                counts[op.meter][0 if index in program.meters[op.meter].settings else 1] += 1


def _first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"packet {i + 1}: got {g[:64].hex()}..., expected {w[:64].hex()}..."
    return f"{len(got)} packets, expected {len(want)}"


def compare(outputs, exp):
    """Every output pcap, punt.csv, drop.csv and skipped.csv against the model, packet by
    packet; returns a list of differences (empty when they agree)."""
    errors = []
    for port in sorted(set(outputs.ports) | set(exp.ports)):
        got, want = outputs.ports.get(port, []), exp.ports.get(port, [])
        if got != want:
            errors.append(f"port{port}.pcap: {_first_difference(got, want)}")
    want_punt = [out for _, out, _, _ in exp.punt]
    if outputs.punt != want_punt:
        errors.append(f"punt.pcap: {_first_difference(outputs.punt, want_punt)}")
    rows = [(int(r["ingress_port"]), int(r["ingress_packet"]), int(r["egress_port"]),
             int(r["reason"]), int(r["bytes"])) for r in outputs.punt_rows]
    want_rows = [(s.port, s.packet, port, reason, len(out)) for s, out, port, reason in exp.punt]
    if rows != want_rows:
        errors.append(f"punt.csv: {_first_row_difference(rows, want_rows)}")
    if [int(r["packet"]) for r in outputs.punt_rows] != list(range(1, len(rows) + 1)):
        errors.append("punt.csv: packet numbers are not 1, 2, 3, ...")
    drops = [(int(r["ingress_port"]), int(r["ingress_packet"]), int(r["reason"]),
              int(r["bytes"])) for r in outputs.drop_rows]
    want_drops = [(s.port, s.packet, reason, len(frame)) for s, frame, reason in exp.drops]
    if drops != want_drops:
        errors.append(f"drop.csv: {_first_row_difference(drops, want_drops)}")
    skipped = sorted((int(r["ingress_port"]), int(r["ingress_packet"]), r["reason"],
                      int(r["captured_bytes"]), int(r["wire_bytes"]))
                     for r in outputs.skipped_rows)
    want_skipped = sorted((s.port, s.packet, reason, len(s.frame), s.wire_len)
                          for s, reason in exp.skipped)
    if skipped != want_skipped:
        errors.append(f"skipped.csv: {_first_row_difference(skipped, want_skipped)}")
    return errors


def _first_row_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return f"row {i + 1}: {g}, expected {w}"
    return f"{len(got)} rows, expected {len(want)}"


def reason_names(program):
    """{reason code: name} as sim/README.md names reasons: parse errors and forwarding
    checks by their names, table reasons as table.action, a memory-backed table's late
    lookups as <table>.late, a session stage's as <session table>.full (and, in memory,
    .late and .busy); a reason that
    several actions raise is their names joined by "/", in description order."""
    table_names = {}
    for t in program.tables:
        if isinstance(t, InMemory):
            table_names.setdefault(t.late_reason, []).append(f"{t.name}.late")
        for a in t.actions.values():
            for op in a.ops:
                if op.reason is not None and op.op != "check":
                    table_names.setdefault(op.reason, []).append(f"{t.name}.{a.name}")
    for s in program.sessions.values():
        table_names.setdefault(s.reason, []).append(f"{s.name}.full")
        if s.late_reason is not None:
            table_names.setdefault(s.late_reason, []).append(f"{s.name}.late")
            table_names.setdefault(s.busy_reason, []).append(f"{s.name}.busy")
    checks = {code: name for name, code in CHECK_REASONS.items()}
    return {**{r: "/".join(n) for r, n in table_names.items()}, **ERROR_NAMES, **checks}


def program_read_back(layout, path):
    """The model of the program of `layout` holding the entries tb/sim/ctl_then_read_back.py
    read back from the simulator into `path`."""
    program = Program(layout)
    for index, entries in json.loads(Path(path).read_text()).items():
        t = program[int(index)]
        for *entry, action_id, data in entries:
            t.add(*entry, action_id, data)
    return program


def summary_errors(summary, exp, program):
    """summary.json's counts against the model's: frames and bytes in and out per port,
    frames padded, records skipped per reason, punts and drops per reason, every table's,
    session table's and meter array's hits and misses, and the reason names."""
    errors = []

    def check(what, got, want):
        if got != want:
            errors.append(f"{what}: {got}, expected {want}")

    check("in", {int(p): (c["frames"], c["bytes"]) for p, c in summary["in"].items()},
          {p: tuple(c) for p, c in exp.in_counts.items()})
    check("out", {int(p): (c["frames"], c["bytes"]) for p, c in summary["out"].items()},
          {p: (len(fs), sum(map(len, fs))) for p, fs in exp.ports.items() if fs})
    check("pad", summary["pad"], exp.pad)
    check("padded", summary["padded"], exp.padded)
    check("skipped", summary["skipped"]["frames"], len(exp.skipped))
    check("skipped per reason", summary["skipped"]["reasons"],
          dict(Counter(reason for _, reason in exp.skipped)))
    check("punted per reason",
          {int(r): v["frames"] for r, v in summary["punted"]["reasons"].items()},
          dict(Counter(reason for _, _, _, reason in exp.punt)))
    check("dropped per reason",
          {int(r): v["frames"] for r, v in summary["dropped"]["reasons"].items()},
          dict(Counter(reason for _, _, reason in exp.drops)))
    check("tables", {t["name"]: (t["hits"], t["misses"]) for t in summary["tables"]},
          {**program.counters(),
           **{s.name: (s.table.hits, s.table.misses) for s in program.sessions.values()},
           **{m: tuple(exp.meters[m]) for m in program.meters}})
    names = reason_names(program)
    for what in ("punted", "dropped"):
        check(f"{what} reason names",
              {int(r): v["name"] for r, v in summary[what]["reasons"].items()},
              {int(r): names.get(int(r), "") for r in summary[what]["reasons"]})
    n = sum(len(fs) for fs in exp.ports.values()) + len(exp.punt)
    check("frames with a latency", summary["latency"]["frames"], n)
    check("complete", summary["complete"], True)
    check("problems", summary["problems"], [])
    return errors

