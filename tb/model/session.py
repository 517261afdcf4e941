# SPDX-License-Identifier: Apache-2.0
"""Reference model of the stateful session table, written from docs/sessions.md.

A one-packet-at-a-time machine: what the table does with each packet, each bus operation
and each visit of the aging scanner, in the order they happen. The candidate slots of a
key come from the session hash of docs/sessions.md (tb/model/hashing.py).
"""

import copy
from dataclasses import dataclass

from tb.model.hashing import session_index

TCP, UDP = 6, 17
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10

SYN_SENT, SYN_ACK, ESTABLISHED, CLOSING, RESET, UDP_STATE = 1, 2, 3, 4, 5, 6
STATES = (SYN_SENT, SYN_ACK, ESTABLISHED, CLOSING, RESET, UDP_STATE)
STATE_NAMES = {0: "none", SYN_SENT: "syn_sent", SYN_ACK: "syn_ack", ESTABLISHED: "established",
               CLOSING: "closing", RESET: "reset", UDP_STATE: "udp"}
DEFAULT_TIMEOUTS = {SYN_SENT: 30, SYN_ACK: 30, ESTABLISHED: 3600, CLOSING: 30, RESET: 5,
                    UDP_STATE: 120}
STAMP_BITS = 16
NEVER = (1 << STAMP_BITS) - 1


@dataclass(frozen=True)
class Packet:
    zone: int
    protocol: int
    src: int
    dst: int
    sport: int
    dport: int
    flags: int = 0
    learn: bool = True
    length: int = 64

    def reverse(self, flags=0, learn=True, length=64):
        return Packet(self.zone, self.protocol, self.dst, self.src, self.dport, self.sport,
                      flags, learn, length)

    def with_flags(self, flags, learn=True, length=64):
        return Packet(self.zone, self.protocol, self.src, self.dst, self.sport, self.dport,
                      flags, learn, length)


def canonical_key(p, addr_bits=32):
    """(key, reversed): zone, protocol, the lower (address, port) pair, the higher one;
    `reversed` when the packet runs from the higher pair to the lower."""
    a = (p.src << 16) | p.sport
    b = (p.dst << 16) | p.dport
    reversed_ = a > b
    low, high = (b, a) if reversed_ else (a, b)
    pair = addr_bits + 16
    return (((p.zone << 8 | p.protocol) << pair | low) << pair) | high, reversed_


def learnable(p):
    """A packet the stage allows to learn creates a session if it is UDP or a TCP SYN
    without ACK, RST or FIN."""
    if not p.learn:
        return False
    if p.protocol == UDP:
        return True
    return p.protocol == TCP and p.flags & (SYN | ACK | RST | FIN) == SYN


def next_state(state, p, reply):
    """The state after a packet of the session (`reply`: it runs opposite to the first)."""
    if p.protocol != TCP:
        return state
    if p.flags & RST:
        return RESET
    if p.flags & FIN:
        return state if state == RESET else CLOSING
    if state == SYN_SENT and reply and p.flags & (SYN | ACK) == SYN | ACK:
        return SYN_ACK
    if state == SYN_ACK and not reply and p.flags & ACK and not p.flags & SYN:
        return ESTABLISHED
    return state


@dataclass
class Session:
    key: int
    state: int
    initiator: bool  # the first packet ran from the higher pair to the lower
    seen: int        # tick of the last packet
    packets: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Result:
    hit: bool
    learned: bool
    insert_failed: bool
    drop: bool
    punt: bool
    reply: bool
    state: int
    index: int  # only meaningful with hit or learned


class SessionModel:
    def __init__(self, size, ways=4, addr_bits=32, zone_bits=24):
        self.size, self.ways, self.slots = size, ways, size // ways
        self.addr_bits = addr_bits
        self.key_bits = zone_bits + 8 + 2 * (addr_bits + 16)
        self.entries = {}  # index -> Session
        self.timeouts = dict(DEFAULT_TIMEOUTS)
        self.drop_on_full = False
        self.learned = self.insert_failed = self.aged = self.hits = self.misses = 0

    def __deepcopy__(self, memo):
        # Sessions hold only numbers: a shallow copy of each is a deep one, and much
        # cheaper than copy's generic walk (Program.apply(count=False) copies the table).
        new = copy.copy(self)
        new.entries = {i: copy.copy(e) for i, e in self.entries.items()}
        new.timeouts = dict(self.timeouts)
        return new

    def candidates(self, key):
        return [w * self.slots + session_index(key, self.key_bits, w, self.slots)
                for w in range(self.ways)]

    def find(self, key):
        for i in self.candidates(key):
            s = self.entries.get(i)
            if s is not None and s.key == key:
                return i
        return None

    def packet(self, p, now, commit=True):
        """The table's answer to `p` at tick `now`; without `commit`, the answer alone,
        the table and its counts left as they were (what a packet would see, asked
        without copying a table of 10^5 sessions)."""
        key, reversed_ = canonical_key(p, self.addr_bits)
        i = self.find(key)
        if i is not None:
            s = self.entries[i]
            reply = reversed_ != s.initiator
            state = next_state(s.state, p, reply)
            if commit:
                s.state = state
                s.seen = now
                s.packets += 1
                s.bytes += p.length
                self.hits += 1
            return Result(True, False, False, False, False, reply, state, i)
        self.misses += commit
        if not learnable(p):
            return Result(False, False, False, False, False, False, 0, None)
        free = next((c for c in self.candidates(key) if c not in self.entries), None)
        if free is None:
            self.insert_failed += commit
            return Result(False, False, True, self.drop_on_full, not self.drop_on_full,
                          False, 0, None)
        state = UDP_STATE if p.protocol == UDP else SYN_SENT
        if commit:
            self.entries[free] = Session(key, state, reversed_, now, 1, p.length)
            self.learned += 1
        return Result(False, True, False, False, False, False, state, free)

    def age(self, index, now):
        s = self.entries.get(index)
        return None if s is None else (now - s.seen) % (1 << STAMP_BITS)

    def expired(self, index, now):
        """Whether the scanner, visiting `index` at tick `now`, removes its session."""
        s = self.entries.get(index)
        return s is not None and self.age(index, now) > self.timeouts[s.state]

    def scan(self, index, now):
        if self.expired(index, now):
            del self.entries[index]
            self.aged += 1
            return True
        return False

    def delete(self, index, key):
        """The bus's compare-and-delete."""
        s = self.entries.get(index)
        if s is not None and s.key == key:
            del self.entries[index]
            return True
        return False

    def flush(self):
        self.entries.clear()

    @property
    def occupancy(self):
        return len(self.entries)


class MemSessionModel(SessionModel):
    """The session table with its sessions in memory (docs/sessions.md, "Sessions in
    memory"): a key's candidates are the `slots` slots of one bucket, the session hash's
    low bits, and an entry's index is bucket << 4 | slot. Everything else is the table's."""

    SLOT_BITS = 4

    def __init__(self, buckets, slots, addr_bits=32, zone_bits=24):
        super().__init__(buckets * slots, ways=slots, addr_bits=addr_bits, zone_bits=zone_bits)
        self.buckets = buckets

    def bucket(self, key):
        return session_index(key, self.key_bits, 0, self.buckets)

    def candidates(self, key):
        b = self.bucket(key)
        return [b << self.SLOT_BITS | s for s in range(self.ways)]
