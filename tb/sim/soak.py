# SPDX-License-Identifier: Apache-2.0
"""The counting soak: randomized traffic through matcha-sim running the conntrack program
(or the overlay program: `Plan.program`, `--program overlay`, tb/sim/soak_overlay.py),
checked frame by frame against the reference model while its tables change under it.

The traffic is cut into chunks; each chunk is one matcha-sim run (its captures are written,
run and compared, then only counters are kept, so memory stays bounded however many frames
go through). In each chunk, a client of the control socket (the C driver, tb/common/driver.py)

- loads the base tables (ACL, by_session), and closes: the traffic starts;
- reconnects and, for as long as frames flow, churns `by_session` entries of the churn
  ports (add, modify, delete through the driver's entry API), each update stamped with the
  simulator's clock before its first bus access and after its last (OP_CLOCK,
  docs/sim-socket.md), interleaved with bad control-bus accesses whose answers are checked
  (SLVERR, DECERR, 0xFF);
- in a reset chunk, resets the pipeline in the middle of the traffic (OP_RESET), clears and
  reloads the tables and closes, which lets the traffic go on.

The oracle is the packet-path model's parse and deparse around the program model
(tb/model), fed the frames in send order. A frame's table lookup happens between its first
beat in and its first beat out (or its drop), so an update whose clock window ends before
the frame's first beat in is in the table the frame sees, one that starts after the
frame's first beat out is not, and for an update whose window overlaps the frame's, the
frame may see the table before or after it: the frame must then match the model under one
of those states, and nothing else. Every other frame must match the model exactly.
Updates never touch the ACL or the session table, so the session table's state follows
from the frames alone.

Frames: TCP and UDP flows between the inside and outside ports and on the churn ports, of
every size from 1 to 9216 bytes (weighted to small ones), cut short (truncated), the
named malformed frames of tb/common/packets.py, random bytes, and in SYN-flood chunks a
flood of TCP SYNs from distinct inside sources that fills the 64-session table, whose
full-table policy punts the flows it cannot learn (`sessions.full`).

Every frame in is accounted for: out, punted or dropped as the model says, or lost in the
pipeline at a reset (lost.csv). Counters: tb/sim/soak.py Counts.

What is program-specific (the base tables, the frames, the churned table and which frames
an update can reach) is a spec: ConntrackSpec here, OverlaySpec in tb/sim/soak_overlay.py
(VXLAN flows of six ENIs both ways, `mapping` entries of a VNET churned, its base tables
loaded from the model through the driver by load_program). The rest is the same for both.
"""

import csv
import json
import random
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from scapy.layers.inet import IP, TCP, UDP as ScapyUDP
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader, RawPcapWriter, checksum

from sim import build as sim_build
from tb.common import driver as drv
from tb.common import packets
from tb.common.phv import Layout
from tb.common.sim_socket import (CANNOT_RUN, DECERR, OP_READ, OP_WRITE, SLVERR,
                                  ProtocolError, SocketBus)
from tb.model import deparse, parse
from tb.model.program import Program
from tb.model.session import ACK, FIN, RST, SYN
from tb.pipeline.traffic import ip_str
from tb.sim import harness
from tb.sim.harness import Simulator

INSIDE, OUTSIDE = 0, 1
# Ports whose frames meet the churned by_session entries; OTHER meets none.
CHURN_PORTS = (4, 5, 6)
OTHER = 9
INSIDE_NET = 0x0A000000
TCP_PROTO, UDP_PROTO = 6, 17
FLAG_MIXES = [SYN, SYN, SYN | ACK, ACK, ACK, FIN | ACK, RST, 0]
MAX_FRAME = 9216
# The simulator's output timestamps count clocks: 1 ns per clock at 1000 MHz, so the
# first beat out of a frame on an egress port is its timestamp minus the first one in.
CLOCK_MHZ = 1000
TIME0_NS = 1_700_000_000 * 10**9
WINDOW = 1 << 24
NEVER = 1 << 63  # the control bus's 24 address bits (docs/sim-socket.md)
BY_SESSION_ACTIONS = ("pass", "drop", "to_host")


def frame_size(rng):
    """A size from 1 to 9216 bytes, every one possible, weighted to small frames: the
    simulator's speed is in beats, and 1-9216 uniformly would spend almost every clock on
    jumbo frames."""
    r = rng.random()
    if r < 0.15:
        return rng.randint(1, 59)         # runts: enter padded to 60
    if r < 0.85:
        return rng.randint(60, 256)
    if r < 0.97:
        return rng.randint(257, 1518)
    return rng.randint(1519, MAX_FRAME)


@dataclass
class Counts:
    """Everything a soak counts. `frames_in` = `out` + `punted` + `dropped` + `lost`
    + `unaccounted`; `mismatches` are frames whose fate or bytes differ from every state
    the model allows."""
    chunks: int = 0
    frames_in: int = 0
    out: int = 0
    punted: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    lost: int = 0
    unaccounted: int = 0
    mismatches: int = 0
    ambiguous: int = 0        # frames a table update could have reached either way
    updates: int = 0          # by_session adds, modifies and deletes that the driver made
    updates_refused: int = 0  # adds the driver refused (no free slot)
    update_ops: Counter = field(default_factory=Counter)  # add, modify, delete
    update_seconds: float = 0.0
    bad_accesses: int = 0
    bad_answers_wrong: int = 0
    resets: int = 0
    session_full: int = 0
    sessions_learned: int = 0  # by the model, frame by frame (counted with count=True)
    session_hits: int = 0
    summary_errors: int = 0
    sizes: bytearray = field(default_factory=lambda: bytearray(MAX_FRAME + 1))
    kinds: Counter = field(default_factory=Counter)
    first_errors: list = field(default_factory=list)
    sim_seconds: float = 0.0
    model_seconds: float = 0.0
    clocks: int = 0

    def error(self, text):
        if len(self.first_errors) < 20:
            self.first_errors.append(text)

    def add(self, other):
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "sizes":
                for i, v in enumerate(theirs):
                    mine[i] |= v
            elif name == "first_errors":
                mine.extend(theirs[:20 - len(mine)])
            elif isinstance(mine, Counter):
                mine.update(theirs)
            else:
                setattr(self, name, mine + theirs)

    def accounted(self):
        return self.out + sum(self.punted.values()) + sum(self.dropped.values()) + self.lost


# ------------------------------------------------------------------------ traffic


def _ip_checksum(header):
    return checksum(header[:10] + b"\0\0" + header[12:])


def set_ipv4_lengths(frame, ip):
    """Sets, in `frame` (a bytearray), the lengths and checksums of the option-less IPv4
    packet at offset `ip` that runs to the frame's end: its total length and header
    checksum, then a UDP length (and no UDP checksum, as IPv4 allows) or a TCP checksum."""
    size = len(frame)
    frame[ip + 2:ip + 4] = (size - ip).to_bytes(2, "big")
    frame[ip + 10:ip + 12] = _ip_checksum(bytes(frame[ip:ip + 20])).to_bytes(2, "big")
    l4, proto, l4_len = ip + 20, frame[ip + 9], size - ip - 20
    if proto == UDP_PROTO:
        frame[l4 + 4:l4 + 6] = l4_len.to_bytes(2, "big")
        frame[l4 + 6:l4 + 8] = b"\0\0"
    else:
        frame[l4 + 16:l4 + 18] = b"\0\0"
        pseudo = bytes(frame[ip + 12:ip + 20]) + bytes([0, proto]) + l4_len.to_bytes(2, "big")
        frame[l4 + 16:l4 + 18] = checksum(pseudo + bytes(frame[l4:])).to_bytes(2, "big")


class FrameMaker:
    """Random frames of one shard. Each (flow, direction, TCP flags) header is built by
    scapy once; a frame of size S is that header with S minus its length random payload
    bytes, the IPv4 total length, the UDP length and the checksums set for them (the
    Internet checksum by scapy.utils.checksum): building every one of 10^7 frames with
    scapy would take longer than simulating it. A size shorter than the header cuts it: a
    truncated frame."""

    def __init__(self, rng):
        self.rng = rng
        self.headers = {}
        self.malformed = list(packets.malformed_cases(rng).values())
        self.flows = [self._flow() for _ in range(40)]

    def _flow(self):
        rng = self.rng
        client = (INSIDE_NET if rng.random() < 0.8 else 0xAC100000) | rng.getrandbits(16)
        return (client, 0xC0A80000 | rng.getrandbits(8), rng.choice([TCP_PROTO, UDP_PROTO]),
                rng.randrange(1024, 4789), rng.choice([22, 23, 80, 443]))

    def header(self, src, dst, proto, sport, dport, flags):
        key = (src, dst, proto, sport, dport, flags)
        h = self.headers.get(key)
        if h is None:
            l4 = (TCP(sport=sport, dport=dport, flags=flags) if proto == TCP_PROTO
                  else ScapyUDP(sport=sport, dport=dport))
            h = bytes(Ether(dst="02:00:00:00:00:20", src="02:00:00:00:00:10")
                      / IP(src=ip_str(src), dst=ip_str(dst), ttl=64)
                      / l4)
            if len(self.headers) > 100_000:
                self.headers.clear()  # a SYN flood's headers are used once
            self.headers[key] = h
        return h

    def sized(self, header, size):
        if size <= len(header):
            return header[:size]
        frame = bytearray(header + self.rng.randbytes(size - len(header)))
        set_ipv4_lengths(frame, 14)
        return bytes(frame)

    def flow_frame(self, port=None):
        rng = self.rng
        src, dst, proto, sport, dport = rng.choice(self.flows)
        flags = rng.choice(FLAG_MIXES) if proto == TCP_PROTO else 0
        if port is None:
            port = rng.choice((INSIDE, OUTSIDE))
        if port == OUTSIDE or (port != INSIDE and rng.random() < 0.5):
            src, dst, sport, dport = dst, src, dport, sport
        return port, self.sized(self.header(src, dst, proto, sport, dport, flags),
                                frame_size(rng))

    def frame(self):
        """(port, frame, kind)."""
        rng = self.rng
        r = rng.random()
        if r < 0.60:
            return (*self.flow_frame(), "flow")
        if r < 0.75:
            return (*self.flow_frame(rng.choice(CHURN_PORTS)), "churn_port")
        if r < 0.80:
            return (*self.flow_frame(OTHER), "other_port")
        if r < 0.88:
            port, f = self.flow_frame()
            return port, f[:rng.randrange(1, min(len(f), 54) + 1)], "truncated"
        if r < 0.95:
            f = rng.choice(self.malformed)[0]
            return rng.choice((INSIDE, OUTSIDE)), f, "malformed"
        return rng.choice((INSIDE, OUTSIDE, OTHER)), rng.randbytes(frame_size(rng)), "random"

    def syn_flood(self):
        """A TCP SYN from a new inside source: a session to learn, until the table is full."""
        rng = self.rng
        h = self.header(INSIDE_NET | rng.getrandbits(24), 0xC0A80000 | rng.getrandbits(8),
                        TCP_PROTO, rng.randrange(1024, 65536), 80, SYN)
        return INSIDE, self.sized(h, rng.randint(60, 128)), "syn_flood"


def write_capture(path, frames):
    """The frames of one port as a nanosecond pcap, each with the timestamp of its place
    `i` in the chunk's send order (the simulator sends frames in timestamp order)."""
    w = RawPcapWriter(str(path), linktype=harness.DLT_EN10MB, nano=True, sync=False)
    w.write_header(None)  # write_packet alone does not
    for i, f in frames:
        w.write_packet(f, sec=TIME0_NS // 10**9, usec=i * 1000, caplen=len(f), wirelen=len(f))
    w.close()


# ------------------------------------------------------------------------ tables


BASE_ACL = [  # (key parts, mask parts, priority, action)
    (dict(src=INSIDE_NET), dict(src=0xFF000000), 10, "permit"),
    (dict(dstPort=23), dict(dstPort=0xFFFF), 20, "deny"),
]
BASE_BY_SESSION = [((OUTSIDE, 0, 0), "drop")]
CHURN_KEYS = [(p, h, l) for p in CHURN_PORTS for h in (0, 1) for l in (0, 1)]


def base_program(layout):
    p = Program(layout)
    acl, by_session = p["acl"], p["by_session"]
    for value, mask, prio, action in BASE_ACL:
        acl.add(acl.key(**value), acl.key(**mask), prio, acl.action_id(action))
    for key, action in BASE_BY_SESSION:
        by_session.add(_bs_key(by_session, key), by_session.action_id(action))
    return p


def _bs_key(table, key):
    port, hit, learned = key
    return table.key(ingressPort=port, sessionHit=hit, sessionLearned=learned)


class SwappableBus:
    """The bus of one Device over several connections: the traffic starts (and goes on
    after a reset) only when a connection closes, while the driver's view of the tables
    (its shadow) must carry over to the next one."""

    def __init__(self, bus):
        self.bus = bus

    def read32(self, addr):
        return self.bus.read32(addr)

    def write32(self, addr, value):
        self.bus.write32(addr, value)


def load_base(dev, program):
    acl = program["acl"]
    for value, mask, prio, action in BASE_ACL:
        dev.ternary_add(0, acl.key(**value), acl.key(**mask), prio, acl.action_id(action), 0)
    handles = {}
    for key, action in BASE_BY_SESSION:
        handles[key] = dev.entry_add("by_session", key, action)
    return handles


def split_key(table, key):
    """A model key as the driver's entry calls take it: one value per key field."""
    fields = []
    for _, width in reversed(table.key_parts):
        fields.insert(0, key & ((1 << width) - 1))
        key >>= width
    return tuple(fields)


def join_key(table, fields):
    """split_key's inverse."""
    key = 0
    for value, (_, width) in zip(fields, table.key_parts):
        key = key << width | value
    return key


def load_program(dev, program, handles_of=None):
    """Every entry and default of the model `program` through the driver: exact and direct
    entries by name (the driver's entry API), LPM and ternary ones by index, the defaults
    that differ from the reset ones. Returns the handles of table `handles_of`'s entries,
    by their key fields (what the churn modifies and deletes)."""
    handles = {}
    for t in program.tables:
        if t.kind in ("exact", "direct"):
            for key, (aid, data) in t.table.items():
                act = t.action(aid)
                fields = split_key(t, key)
                h = dev.entry_add(t.name, fields, act.name, [p.value(data) for p in act.params])
                if t.name == handles_of:
                    handles[fields] = h
        elif t.kind == "lpm":
            for (prefix, length), (aid, data) in t.prefixes.items():
                dev.lpm_add(t.index, prefix, length, aid, data)
        else:
            # Rules in match order: equal priorities keep the order the model gave them.
            for r in t.rules:
                dev.ternary_add(t.index, r.value, r.mask, r.priority, r.action, r.data)
        if t.default != t.reset_default:
            dev.set_default(t.index, *t.default)
    return handles


class ProgramSpec:
    """What the soak needs to know of a program: its base tables (the model's and how the
    driver loads them), the frames it sends, the table it churns and which frames an
    update can reach. A subclass gives every method but flood_frames."""
    name = None
    churn_table = None
    # In a SYN-flood chunk, frames from this fraction of the chunk on are SYNs with this
    # probability.
    flood_start, flood_share = 0.5, 0.5

    def base_program(self, layout):
        """The program model of `layout` holding the base tables."""
        raise NotImplementedError

    def load_base(self, dev, program):
        """Writes `program`'s tables through the driver; returns the churned table's
        handles by key."""
        raise NotImplementedError

    def maker(self, rng):
        """The frame maker (FrameMaker's interface) of a shard."""
        raise NotImplementedError

    def choose_update(self, rng):
        """(key fields, action, parameters) of the next update."""
        raise NotImplementedError

    def churned(self, port, phv):
        """Whether any update could change what this frame does."""
        raise NotImplementedError

    def reaches(self, port, phv, key):
        """Whether the update of `key` could change what this frame does."""
        raise NotImplementedError

    def egress(self, program, phv, port):
        """The port a frame leaves by whatever the churned table holds."""
        raise NotImplementedError

    def flood_frames(self, sessions):
        """Frames a SYN-flood chunk needs to fill a table of `sessions` (at least; 0: the
        chunk's own length is enough)."""
        return 0


class ConntrackSpec(ProgramSpec):
    """The conntrack program: by_session churned on the churn ports."""
    name = "conntrack"
    churn_table = "by_session"

    def base_program(self, layout):
        return base_program(layout)

    def load_base(self, dev, program):
        return load_base(dev, program)

    def maker(self, rng):
        return FrameMaker(rng)

    def choose_update(self, rng):
        return rng.choice(CHURN_KEYS), rng.choice(BY_SESSION_ACTIONS), ()

    def churned(self, port, phv):
        return port in CHURN_PORTS

    def reaches(self, port, phv, key):
        return key[0] == port

    def egress(self, program, phv, port):
        # by_session's actions never set the egress port: the frame's is the model's
        # whatever the table holds.
        return program.apply(phv, count=False).get("meta.egressPort", 0)


def program_spec(name):
    if name == "conntrack":
        return ConntrackSpec()
    if name == "overlay":
        from tb.sim.soak_overlay import OverlaySpec
        return OverlaySpec()
    raise ValueError(f"the soak knows no program {name!r} (conntrack, overlay)")


@dataclass
class Update:
    start: int          # clock (OP_CLOCK) before its first bus access
    end: int            # clock after its last
    key: tuple          # the churned table's key fields (conntrack: port, hit, learned)
    action: str         # None: deleted
    params: tuple = ()  # the action's parameters


@dataclass
class Epoch:
    """The control side of one stretch of a chunk between resets: the frames sent before
    `first_frame` belong to earlier epochs; the updates, in order."""
    first_frame: int
    updates: list = field(default_factory=list)


class Controller:
    """The client of one chunk: base tables, then churn and bad accesses while frames
    flow, and a reset in the middle when asked."""

    def __init__(self, sock, layout_text, program, rng, churn, bad_bus, reset_at_clock,
                 spec):
        self.sock, self.rng = sock, rng
        self.spec = spec
        self.layout_text, self.program = layout_text, program
        self.churn, self.bad_bus, self.reset_at_clock = churn, bad_bus, reset_at_clock
        self.epochs = [Epoch(0)]
        self.counts = Counts()
        self.error = None

    def start(self):
        """Loads the base tables and closes the connection (the traffic starts); the
        churn then runs in a thread until the simulator ends."""
        self.swap = SwappableBus(SocketBus(self.sock))
        self.dev = drv.Device(self.swap)
        self.dev.layout_load_text(self.layout_text)
        self.handles = self.spec.load_base(self.dev, self.program)
        self.swap.bus.close()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self._churn_loop()
        except (ProtocolError, OSError, ConnectionError):
            pass  # the simulator ended the connection at the end of its traffic
        except BaseException as e:  # noqa: BLE001 - reported by finish()
            self.error = e

    def finish(self):
        self.thread.join(timeout=120)
        self.dev.close()
        if self.error is not None:
            raise self.error
        return self.epochs, self.counts

    def _churn_loop(self):
        bus = SocketBus(self.sock, timeout=5)
        self.swap.bus = bus
        reset_pending = self.reset_at_clock is not None
        n = 0
        while True:
            if reset_pending and bus.clock() >= self.reset_at_clock:
                bus = self._reset(bus)
                reset_pending = False
            if self.bad_bus and n % 8 == 0:
                self._bad_access(bus)
            if self.churn:
                self._update(bus)
            elif not self.bad_bus:
                bus.clock()  # only to see the end of the run (the connection closing)
                time.sleep(0.001)
            n += 1

    def _update(self, bus):
        rng, dev = self.rng, self.dev
        table = self.spec.churn_table
        key, action, params = self.spec.choose_update(rng)
        handle = self.handles.get(key)
        delete = handle is not None and rng.random() < 0.4
        t0 = time.monotonic()
        # Recorded before it starts: if the simulator ends in the middle of it (its last
        # frame out), frames may still have seen it, and it never ends.
        update = Update(bus.clock(), NEVER, key, None if delete else action, params)
        self.epochs[-1].updates.append(update)
        try:
            if handle is None:
                self.handles[key] = dev.entry_add(table, key, action, params)
            elif delete:
                dev.entry_delete(table, handle)
                del self.handles[key]
            else:
                dev.entry_modify(table, handle, action, params)
        except drv.MatchaError as e:
            if e.code != drv.ENOSPC:
                raise
            self.epochs[-1].updates.pop()  # no free slot: nothing was written
            self.counts.updates_refused += 1
            return
        update.end = bus.clock()
        self.counts.update_seconds += time.monotonic() - t0
        self.counts.updates += 1
        self.counts.update_ops["add" if handle is None else "delete" if delete else "modify"] += 1

    def _bad_access(self, bus):
        """One bad access, its answer checked: an unmapped address inside the window
        (SLVERR), one beyond it (DECERR), an unaligned one, an unknown op, non-zero
        padding (0xFF)."""
        rng = self.rng
        kind = rng.randrange(5)
        if kind == 0:
            addr = rng.choice((0x00F000, WINDOW - 4))
            op = rng.choice((OP_READ, OP_WRITE))
            want, got = SLVERR, bus.transact(op, addr, rng.getrandbits(32))[1]
        elif kind == 1:
            op = rng.choice((OP_READ, OP_WRITE))
            want, got = DECERR, bus.transact(op, WINDOW + 4 * rng.getrandbits(20), 1)[1]
        elif kind == 2:
            want, got = CANNOT_RUN, bus.transact(OP_READ, 4 * rng.getrandbits(10) + 2)[1]
        elif kind == 3:
            want, got = CANNOT_RUN, bus.transact(ord("Q"), 0)[1]
        else:
            bus.send_raw(b"W\x01\x00\x00" + bytes(8))
            want, got = CANNOT_RUN, bus.receive(OP_WRITE)[1]
        self.counts.bad_accesses += 1
        if got != want:
            self.counts.bad_answers_wrong += 1
            self.counts.error(f"bad access {kind}: answer {got}, expected {want}")

    def _reset(self, bus):
        """Resets the pipeline; clears the tables and the sessions (what a reset leaves
        in table memories is not the question here), reloads the base tables, closes: the
        traffic goes on."""
        first = bus.reset()
        self.counts.resets += 1
        dev = self.dev
        for t in self.program.tables:
            dev.table_clear(t.index)
        for stage in self.program.sessions.values():
            dev.session_flush(stage.index)
        self.handles = self.spec.load_base(dev, self.program)
        self.epochs.append(Epoch(first))
        bus.close()
        bus = SocketBus(self.sock, timeout=5)
        self.swap.bus = bus
        return bus


# ------------------------------------------------------------------------ checking


def read_dut(out_dir):
    """The simulator's outputs of one chunk: per ingress (port, packet), its fate."""
    out_dir = Path(out_dir)
    fates = {}
    with open(out_dir / "drop.csv") as f:
        for r in csv.DictReader(f):
            fates[(int(r["ingress_port"]), int(r["ingress_packet"]))] = (
                "drop", int(r["reason"]), int(r["bytes"]), int(r["first_in_clock"]),
                int(r["drop_clock"]))
    punts = [d for d, _ in RawPcapReader(str(out_dir / "punt.pcap"))]
    with open(out_dir / "punt.csv") as f:
        for r, data in zip(csv.DictReader(f), punts):
            fates[(int(r["ingress_port"]), int(r["ingress_packet"]))] = (
                "punt", int(r["reason"]), int(r["egress_port"]), data, int(r["first_in_clock"]),
                int(r["first_out_clock"]))
    lost = set()
    with open(out_dir / "lost.csv") as f:
        for r in csv.DictReader(f):
            lost.add((int(r["ingress_port"]), int(r["ingress_packet"])))
    ports = {}
    for p in out_dir.glob("port*.pcap"):
        with RawPcapReader(str(p)) as rd:
            ports[int(p.stem[4:])] = [
                (data, (meta.sec * 10**9 + meta.usec) - TIME0_NS) for data, meta in rd]
    return fates, lost, ports


def model_fate(program, frame, port, header_bytes):
    """What the model does with `frame` entering on `port`, its state updated."""
    return _fate(frame, program.apply(parse(frame, ingress_port=port,
                                            header_bytes=header_bytes)))


def _fate(frame, phv):
    out, tuser, reason = deparse(frame, phv)
    if out is None:
        return ("drop", reason)
    if tuser["punt"]:
        return ("punt", tuser["reason"], tuser["egressPort"], out)
    return ("out", tuser["egressPort"], out)


def _set_entry(table, key, action, params=()):
    """Sets the entry of a key (its fields) of an exact or direct table to `action` with
    `params` (None: absent); returns what it was."""
    k = join_key(table, key)
    before = table.table.get(k)
    if action is None:
        table.table.pop(k, None)
    else:
        act = table.action(action)
        table.table[k] = (act.id, act.data(**{p.name: v for p, v in zip(act.params, params)}))
    return before


def _restore(table, key, before):
    k = join_key(table, key)
    if before is None:
        table.table.pop(k, None)
    else:
        table.table[k] = before


def check_chunk(frames, out_dir, epochs, layout, header_bytes, counts, spec):
    """Compares one chunk's outputs with the model, frame by frame, adding to `counts`."""
    fates, lost, ports = read_dut(out_dir)
    heads = {p: 0 for p in ports}
    epoch_i = 0
    program = spec.base_program(layout)
    churned = program[spec.churn_table]

    def count_sessions(program):
        for stage in program.sessions.values():
            counts.sessions_learned += stage.table.learned
            counts.session_hits += stage.table.hits
    committed = 0
    last_in = 0  # the latest first-beat-in clock seen: a bound below for later frames
    for i, (port, packet, frame) in enumerate(frames):
        if epoch_i + 1 < len(epochs) and i >= epochs[epoch_i + 1].first_frame:
            epoch_i += 1
            count_sessions(program)
            program = spec.base_program(layout)
            churned = program[spec.churn_table]
            committed = 0
            last_in = 0
        updates = epochs[epoch_i].updates
        entered = frame if len(frame) >= harness.ETHERNET_MIN else (
            frame + bytes(harness.ETHERNET_MIN - len(frame)))
        key = (port, packet)
        got = fates.get(key)
        counts.frames_in += 1
        if key in lost:
            counts.lost += 1
            if i >= (epochs[epoch_i + 1].first_frame if epoch_i + 1 < len(epochs) else
                     len(frames)) or got is not None:
                counts.mismatches += 1
                counts.error(f"frame {key} lost, but it entered after the reset or left: "
                             f"{_brief(got)}")
            # The frame went through part of the pipeline: the model sees it (its session
            # effect, if any, is gone with the reset that follows).
            model_fate(program, entered, port, header_bytes)
            continue
        if got is None:
            # An output frame: it entered no earlier than the frames before it, and left
            # when the next frame of its egress port did (below).
            lo = hi = last_in
        elif got[0] == "drop":
            lo, hi = got[3], got[4]
        else:
            lo, hi = got[4], got[5]
        last_in = max(last_in, lo)
        while committed < len(updates) and updates[committed].end < lo:
            u = updates[committed]
            _set_entry(churned, u.key, u.action, u.params)
            committed += 1
        phv = parse(entered, ingress_port=port, header_bytes=header_bytes)
        alternatives = []
        if committed < len(updates) and spec.churned(port, phv):
            if got is None:
                egress = spec.egress(program, phv, port)
                q = ports.get(egress, [])
                if heads.get(egress, 0) < len(q):
                    hi = q[heads[egress]][1]
            # The states the frame may see: after each update in its window that touches
            # a key it can meet (the others cannot change what it does).
            undo = []
            for u in updates[committed:]:
                if u.start > hi:
                    break
                if not spec.reaches(port, phv, u.key):
                    continue
                before = _set_entry(churned, u.key, u.action, u.params)
                undo.append((u.key, before))
                if before != churned.table.get(join_key(churned, u.key)):
                    alternatives.append(_fate(entered, program.apply(phv, count=False)))
            for k, before in reversed(undo):
                _restore(churned, k, before)
        want = _fate(entered, program.apply(phv))
        candidates = [want] + [a for a in alternatives if a != want]
        matched = _match(candidates, got, entered, ports, heads)
        counts.ambiguous += len(candidates) > 1
        if matched is None:
            counts.mismatches += 1
            counts.error(f"frame {key} (send order {i}, {len(frame)} bytes): got "
                         f"{_brief(got)}, model allows {[_brief(c) for c in candidates]}")
        elif matched[0] == "out":
            counts.out += 1
        elif matched[0] == "punt":
            counts.punted[matched[1]] += 1
        else:
            counts.dropped[matched[1]] += 1
    count_sessions(program)
    leftover = sum(len(q) - heads[p] for p, q in ports.items())
    if leftover:
        counts.mismatches += leftover
        counts.error(f"{leftover} output frames no input frame explains")
    return counts


def _brief(fate):
    if fate is None:
        return "an output"
    if fate[0] == "out":
        return f"out port {fate[1]} ({len(fate[2])} bytes)"
    if fate[0] == "drop":
        return f"drop {fate[1]:#x}"
    return f"punt {fate[1]:#x}"


def _match(candidates, got, entered, ports, heads):
    """The candidate the DUT's fate is, or None."""
    for c in candidates:
        if c[0] == "drop" and got is not None and got[0] == "drop":
            if (c[1], len(entered)) == (got[1], got[2]):
                return c
        elif c[0] == "punt" and got is not None and got[0] == "punt":
            if (c[1], c[2], c[3]) == (got[1], got[2], got[3]):
                return c
        elif c[0] == "out" and got is None:
            q, h = ports.get(c[1], []), heads.get(c[1], 0)
            if h < len(q) and q[h][0] == c[2]:
                heads[c[1]] = h + 1
                return c
    return None


# ------------------------------------------------------------------------ running


@dataclass
class Plan:
    """What a soak runs: `frames` in chunks of `chunk`, with `backpressure` on the output,
    table churn and bad bus accesses during the traffic, a reset in every `reset_every`-th
    chunk and a SYN flood in every `syn_flood_every`-th (0: never; a SYN-flood chunk is
    longer than `chunk` where the program's session table needs more SYNs to fill, as the
    overlay's does: ConntrackSpec.flood_frames). `program`: conntrack or overlay
    (program_spec)."""
    frames: int
    chunk: int = 20_000
    backpressure: float = 0.2
    churn: bool = True
    bad_bus: bool = True
    reset_every: int = 3
    syn_flood_every: int = 4
    config: str = "w512"
    program: str = "conntrack"


def run_chunk(plan, seed, index, maker, work, counts):
    """One matcha-sim run of `plan.chunk` frames (chunk `index` of the shard of `seed`),
    compared with the model; adds to `counts`."""
    spec = program_spec(plan.program)
    rng = random.Random(f"{seed}:chunk:{index}")
    maker.rng = rng
    layout_path = sim_build.layout_path(plan.config, plan.program)
    flood = plan.syn_flood_every and index % plan.syn_flood_every == plan.syn_flood_every - 1
    n = plan.chunk
    if flood:
        # Long enough to fill the session table, whatever the chunk.
        n = max(n, spec.flood_frames(Program(layout_path).sessions["sessions"].table.size))
    n = min(n, plan.frames - counts.frames_in)
    per_port = defaultdict(list)
    frames = []
    beats = 0
    flood_from = int(n * spec.flood_start)
    for i in range(n):
        if flood and i >= flood_from and rng.random() < spec.flood_share:
            port, frame, kind = maker.syn_flood()
        else:
            port, frame, kind = maker.frame()
        per_port[port].append((i, frame))
        frames.append((port, len(per_port[port]), frame))
        counts.sizes[len(frame)] = 1
        counts.kinds[kind] += 1
        beats += -(-max(len(frame), harness.ETHERNET_MIN) // 64)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    in_args = []
    for port, items in sorted(per_port.items()):
        path = work / f"in{port}.pcap"
        write_capture(path, items)
        in_args += ["--in", f"{port}={path}"]
    layout_text = layout_path.read_text()
    layout = Layout(layout_path)
    reset_at = None
    if plan.reset_every and index % plan.reset_every == plan.reset_every - 1:
        # Somewhere in the first half of the traffic, by a bound below of its clocks.
        reset_at = int(beats * rng.uniform(0.1, 0.5))
    sock = harness.short_dir() / "ctl.sock"
    out = work / "out"
    t0 = time.monotonic()
    with Simulator(plan.config, *in_args, "--out", out, "--socket", sock, "--wait-client",
                   "--clock-mhz", CLOCK_MHZ, "--backpressure", plan.backpressure,
                   "--seed", rng.getrandbits(31), program=plan.program) as sim:
        ctl = Controller(sock, layout_text, spec.base_program(layout_path), rng, plan.churn,
                         plan.bad_bus, reset_at, spec)
        ctl.start()
        rc, stdout, stderr = sim.finish(timeout=3600)
    epochs, ctl_counts = ctl.finish()
    counts.sim_seconds += time.monotonic() - t0
    counts.add(ctl_counts)
    if rc != 0:
        raise AssertionError(f"matcha-sim exit {rc}\n{stdout}\n{stderr}")
    t0 = time.monotonic()
    chunk = Counts()
    check_chunk(frames, out, epochs, layout_path, layout.header_bytes, chunk, spec)
    counts.model_seconds += time.monotonic() - t0
    summary = json.loads((out / "summary.json").read_text())
    counts.clocks += summary["clocks"]
    errors = summary_errors(summary, chunk, n)
    counts.summary_errors += len(errors)
    for e in errors:
        counts.error(f"chunk {index}: summary.json {e}")
    # Frames in that the simulator accounts for neither as out, punted, dropped nor lost.
    counts.unaccounted += summary["frames_in"] - (
        sum(c["frames"] for c in summary["out"].values()) + summary["punted"]["frames"]
        + summary["dropped"]["frames"] + summary["lost"]["frames"])
    counts.session_full += chunk.punted[Program(layout_path).sessions["sessions"].reason]
    chunk.sizes = bytearray(MAX_FRAME + 1)
    counts.add(chunk)
    counts.chunks += 1
    sock.unlink(missing_ok=True)
    sock.parent.rmdir()
    return counts


def summary_errors(summary, chunk, n):
    """summary.json's counts against the chunk's, counted frame by frame."""
    errors = []

    def check(what, got, want):
        if got != want:
            errors.append(f"{what}: {got}, expected {want}")

    check("frames in", summary["frames_in"], n)
    check("frames in (per port)", sum(c["frames"] for c in summary["in"].values()), n)
    check("out", sum(c["frames"] for c in summary["out"].values()), chunk.out)
    check("punted per reason", {int(r): v["frames"] for r, v in summary["punted"]["reasons"].items()},
          dict(chunk.punted))
    check("dropped per reason",
          {int(r): v["frames"] for r, v in summary["dropped"]["reasons"].items()},
          dict(chunk.dropped))
    check("lost", summary["lost"]["frames"], chunk.lost)
    check("complete", summary["complete"], True)
    check("problems", summary["problems"], [])
    return errors


def run_shard(plan, seed, work, progress=None, stop_at=None):
    """Chunks until `plan.frames` have gone through, or no new chunk once time.time() has
    passed `stop_at`; returns the Counts."""
    counts = Counts()
    maker = program_spec(plan.program).maker(random.Random(f"{seed}:maker"))
    index = 0
    while counts.frames_in < plan.frames and (stop_at is None or time.time() < stop_at):
        run_chunk(plan, seed, index, maker, work, counts)
        if progress:
            progress(index, counts)
        index += 1
    return counts


def _shard(args):
    plan, seed, work, stop_at = args

    def progress(index, c):
        print(f"shard {seed}: chunk {index}, {c.frames_in} frames, {c.mismatches} mismatches, "
              f"{c.unaccounted} unaccounted", flush=True)

    return run_shard(plan, seed, work, progress, stop_at)


def run(plan, seed, shards, work, stop_at=None):
    """`plan.frames` split over `shards` processes of seeds seed, seed+1, ...; returns the
    summed Counts and the wall time."""
    per = -(-plan.frames // shards)
    jobs = [(replace(plan, frames=min(per, plan.frames - k * per)), seed + k,
             Path(work) / f"shard{k}", stop_at) for k in range(shards)]
    t0 = time.monotonic()
    total = Counts()
    if shards == 1:
        total.add(_shard(jobs[0]))
    else:
        with ProcessPoolExecutor(shards) as pool:
            for c in pool.map(_shard, jobs):
                total.add(c)
    return total, time.monotonic() - t0


def report(plan, seed, shards, counts, wall, command, commit):
    """bench/results/soak.md's text."""
    names = harness.reason_names(Program(sim_build.layout_path(plan.config, plan.program)))
    sizes = sum(counts.sizes[1:])
    lines = [
        "# Soak: every frame counted",
        "",
        *([f"**Stopped at the time limit: {counts.frames_in:,} of the {plan.frames:,} frames "
           "asked for ran.**", ""] if counts.frames_in < plan.frames else []),
        f"`{command}` at commit `{commit}`, seed {seed} ({shards} shards, seeds {seed} to "
        f"{seed + shards - 1}): `tb/sim/soak.py` (how it works is in its docstring and in "
        "tb/README.md, \"The counting soak\").",
        "",
        f"matcha-sim of the **{plan.program}** program at **{plan.config}**, chunks of "
        f"{plan.chunk} frames, back-pressure {plan.backpressure}, "
        f"{program_spec(plan.program).churn_table} churn "
        f"{'on' if plan.churn else 'off'}, bad bus accesses {'on' if plan.bad_bus else 'off'}, "
        f"a reset in one chunk of {plan.reset_every}, a SYN flood in one chunk of "
        f"{plan.syn_flood_every}.",
        "",
        "| count | frames |",
        "| --- | ---: |",
        f"| in | {counts.frames_in:,} |",
        f"| out | {counts.out:,} |",
        f"| punted | {sum(counts.punted.values()):,} |",
        f"| dropped | {sum(counts.dropped.values()):,} |",
        f"| lost by reset | {counts.lost:,} |",
        f"| **unaccounted** | **{counts.unaccounted}** |",
        f"| **mismatches** | **{counts.mismatches}** |",
        f"| summary.json differences | {counts.summary_errors} |",
        f"| ambiguous (a table update in the frame's window; matched before or after it) | "
        f"{counts.ambiguous:,} |",
        "",
        "| punted, reason | frames |",
        "| --- | ---: |",
        *[f"| {r:#04x} `{names.get(r, '')}` | {n:,} |" for r, n in sorted(counts.punted.items())],
        "",
        "| dropped, reason | frames |",
        "| --- | ---: |",
        *[f"| {r:#04x} `{names.get(r, '')}` | {n:,} |" for r, n in sorted(counts.dropped.items())],
        "",
        "| frames made, kind | frames |",
        "| --- | ---: |",
        *[f"| {k} | {n:,} |" for k, n in sorted(counts.kinds.items())],
        "",
        f"- Sizes: {sizes} of the 9216 sizes from 1 to 9216 bytes were sent.",
        f"- Table churn: {counts.updates:,} {program_spec(plan.program).churn_table} updates "
        f"({counts.update_ops['add']:,} "
        f"adds, {counts.update_ops['modify']:,} modifies, {counts.update_ops['delete']:,} "
        "deletes) "
        f"through the driver, {counts.updates_refused:,} adds refused for want of a slot; "
        f"{counts.updates / max(counts.sim_seconds, 1e-9):,.0f} updates per second of "
        f"simulation wall time, {counts.update_seconds / max(counts.updates, 1) * 1e3:.2f} ms "
        "each.",
        f"- Bad control-bus accesses: {counts.bad_accesses:,}, answers other than the "
        f"documented one: {counts.bad_answers_wrong}.",
        f"- Resets in the middle of traffic: {counts.resets}, {counts.lost:,} frames lost in "
        "the pipeline by them (lost.csv), the tables reloaded after each.",
        f"- SYN flood: {counts.kinds['syn_flood']:,} SYNs; {counts.session_full:,} frames "
        "punted `sessions.full` (the full-table policy, punt).",
        f"- Sessions (the model's, which every frame matched): {counts.sessions_learned:,} "
        f"learned, {counts.session_hits:,} frames of a learned session.",
        f"- Wall time {wall / 60:.1f} min; summed over the shards: simulator runs "
        f"{counts.sim_seconds / 60:.1f} min ({counts.clocks:,} clocks), model checks "
        f"{counts.model_seconds / 60:.1f} min; {counts.frames_in / wall:,.0f} frames/s.",
    ]
    if counts.first_errors:
        lines += ["", "First differences:", "", *[f"- {e}" for e in counts.first_errors]]
    return "\n".join(lines) + "\n"


def main(argv=None):
    import argparse
    import subprocess
    import sys
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=10**7)
    ap.add_argument("--seed", type=lambda v: int(v, 0), default=None)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--config", default="w512")
    ap.add_argument("--program", default=Plan.program, choices=("conntrack", "overlay"))
    ap.add_argument("--chunk", type=int, default=Plan.chunk)
    ap.add_argument("--work", help="the shards' captures (default build/soak/<program>: two "
                    "programs' soaks run side by side)")
    ap.add_argument("--report", help="write the result (Markdown) here")
    ap.add_argument("--max-minutes", type=float,
                    help="start no new chunk after this long; the report says what ran")
    args = ap.parse_args(argv)
    from tb.common import seeds, sim
    sim.setup_environment()
    seed = seeds.choose_seed() if args.seed is None else args.seed
    seeds.announce(seed, "tb/sim/soak.py --seed repeats it")
    plan = Plan(args.frames, chunk=args.chunk, config=args.config, program=args.program)
    harness.binary(plan.config, plan.program)
    commit = subprocess.run(["git", "-C", str(harness.REPO), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    stop_at = time.time() + 60 * args.max_minutes if args.max_minutes else None
    work = args.work or harness.REPO / "build" / "soak" / plan.program
    counts, wall = run(plan, seed, args.shards, work, stop_at)
    # Paths in the repository as the report's reader would type them, from its root.
    root = f"{harness.REPO}/"
    command = " ".join(["python -m tb.sim.soak", *(a.removeprefix(root) for a in
                                                   (argv if argv is not None else sys.argv[1:]))])
    text = report(plan, seed, args.shards, counts, wall, command, commit)
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    ok = counts.mismatches == 0 and counts.unaccounted == 0 and counts.summary_errors == 0 \
        and counts.bad_answers_wrong == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
