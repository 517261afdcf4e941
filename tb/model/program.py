# SPDX-License-Identifier: Apache-2.0
"""Reference model of a Matcha pipeline program: tables, actions, counters.

Written from docs/pipeline.md (semantics, action data, the "program" section of
layout.json) and docs/tables.md (match kinds, default action, per-entry counters),
independently of the generator. A `Program` is loaded from a program description (the
"program" object of layout.json, a whole layout, or a path to one); its tables hold
entries as the driver's user sees them (keys, prefixes, rules), not as the hardware
places them.

`Program.apply(phv)` takes a PHV dict as `tb.model.packet_path.parse` makes it (fields of
headers that are not valid are absent) and returns the PHV the tables leave, which
`tb.model.packet_path.deparse` turns into the output frame:

    phv = parse(frame, port, header_bytes=layout["headerBytes"])
    out, tuser, drop_reason = deparse(frame, program.apply(phv))

Semantics (docs/pipeline.md "Semantics"):

- a frame with meta.parseError != 0 passes untouched: no lookup, no counter;
- tables apply in description order, each reading the PHV the tables before it left;
- a table whose `applyIf` condition does not hold does nothing (no lookup, no counter):
  the condition is a list of 1-bit fields that must read 1, or 0 when written `!field`;
- the key is the concatenation of the key fields, first one in the most significant
  bits; a field of a header that is not valid reads 0; a `firstValid` key part takes the
  first of its fields whose header is valid (0 if none is);
- a hit applies the entry's action and data, a miss the table's default action and data;
  hits and misses are counted per table, hits also per entry (packets, meta.frameLen
  bytes) when the table has counters;
- ops: check (a forwarding check of the routed IP header, below), set (from an
  action-data parameter), setConst, decrement (modulo 2^width), copy
  (another field of the same width, read as a key reads it: 0 when its header is not
  valid), drop
  (meta.drop, meta.reason), punt (meta.punt, meta.reason), meter (meter `param` of a
  meter array colours the frame: meta.color becomes its colour, with meta.frameLen bytes
  and meta.color as the colour in), applied in order; values are cut to the field's width.

Forwarding checks (docs/pipeline.md, "Forwarding checks"; RFC 1812 5.2.2 and 5.3.1): an
action's `check` ops come first; each names a check and a field of the IP header the
frame is routed on, and the first check the valid header fails punts or drops the frame
(its `fate`) with the check's reason, and the action does nothing else. The model decides
each from the header itself: the checksum over the header as parsed (RFC 1071), the length
field against meta.frameLen and the header's offset, the IHL, the TTL or hop limit.

Meter arrays (the "meters" of the description) are tb/model/meter.py's MeterBank, set with
`Program.meters[name].configure(index, HwMeter, tick)`; `apply(phv, tick=t)` meters at
tick t (tests that cannot know a frame's tick use meters whose rates are 0).

The session stage (the "sessions" of the description, docs/pipeline.md "The session
stage") runs right after its `after` table: a frame it applies to (its `applyIf` bit set)
hands tb/model/session.py's SessionModel (`Program.sessions[name].table`) the zone, the
5-tuple and the TCP flags read like key parts, and the `learn` bit; the result goes into
the meta.session* fields it names, and a frame refused by a full table is punted or
dropped (the model's `drop_on_full`) with the stage's reason. `apply(phv, tick=t)` hands
the table tick t.

Match kinds (docs/tables.md): exact (key -> action), LPM (the longest prefix covering the
key), ternary ((key & mask) == value; the highest priority wins, equal priorities go to
the rule added first), direct (the key is the index of the one entry it can hit: keys from
the table's size up always miss).
"""

import copy
import json
from dataclasses import dataclass, field as dc_field
from pathlib import Path

from .headers import CHECK_REASONS as CHECKS
from .headers import HEADER_TYPES, INSTANCE_TYPE, WRITABLE, all_field_names
from .packet_path import emit, ones_sum
from .meter import MeterBank
from .session import MemSessionModel, Packet, SessionModel, canonical_key

KINDS = ("exact", "lpm", "ternary", "direct")
OPS = ("check", "set", "setConst", "decrement", "copy", "drop", "punt", "meter")
FATES = ("punt", "drop")
# Table punt and drop reasons are at least 0x10; parse errors own 1..15.
MIN_TABLE_REASON = 0x10

_FIELD_WIDTHS = all_field_names()


class ProgramError(ValueError):
    """A program description the model cannot use, or a table operation the contract
    does not allow (a duplicate entry, a missing one, a value wider than its field)."""


class TableFull(ProgramError):
    """More entries than the table's size."""


def field_width(name, declared=None, metadata=None):
    """Width of a PHV field: the model's own (tb/model/headers.py), or a metadata field of
    the program's (`metadata`: name -> width); a field neither knows takes the width the
    description declares for it."""
    if name in _FIELD_WIDTHS:
        return _FIELD_WIDTHS[name]
    if metadata and name in metadata:
        return metadata[name]
    if declared is None:
        raise ProgramError(f"unknown PHV field {name!r}")
    return declared


def header_valid(phv, name):
    """Whether the header a field belongs to is valid: hdr.<inst>.<f> and push.<h>.<f>
    follow their header's valid bit; meta.* and the valid bits themselves always read."""
    parts = name.split(".")
    if parts[0] in ("hdr", "push") and len(parts) == 3 and parts[2] != "valid":
        return bool(phv.get(f"{parts[0]}.{parts[1]}.valid", 0))
    return True


def read_field(phv, name, width):
    """A field as a key reads it: 0 when its header is not valid."""
    if not header_valid(phv, name):
        return 0
    return phv.get(name, 0) & ((1 << width) - 1)


def _mask(width):
    return (1 << width) - 1


def condition_holds(phv, terms):
    """Whether a frame meets an applyIf condition: every term holds, a term being a 1-bit
    field that must be 1 or `!field`, which must be 0 (docs/pipeline.md)."""
    for term in terms:
        want = 0 if term.startswith("!") else 1
        if phv.get(term.lstrip("!"), 0) != want:
            return False
    return True


def _condition(desc, where):
    terms = desc.get("applyIf", [])
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
        raise ProgramError(f"{where}: applyIf is a list of fields, not {terms!r}")
    return terms


# ---------------------------------------------------------------------------- actions


@dataclass
class Param:
    name: str
    width: int
    offset: int

    def value(self, data):
        return (data >> self.offset) & _mask(self.width)


@dataclass
class Op:
    op: str
    field: str = None
    param: str = None
    value: int = None
    reason: int = None
    meter: str = None
    source: str = None      # copy: the field it copies
    check: str = None       # check: the check's name (CHECKS)
    fate: str = None        # check: punt or drop


@dataclass
class Action:
    name: str
    id: int
    params: list
    ops: list
    metadata: dict = None   # the program's metadata fields and their widths

    def _width(self, name):
        return field_width(name, metadata=self.metadata)

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        raise ProgramError(f"action {self.name}: no parameter {name!r}")

    @property
    def data_width(self):
        return sum(p.width for p in self.params)

    def data(self, **values):
        """Action data from parameter values by name (missing ones are 0)."""
        unknown = set(values) - {p.name for p in self.params}
        if unknown:
            raise ProgramError(f"action {self.name}: no parameter(s) {sorted(unknown)}")
        d = 0
        for p in self.params:
            v = int(values.get(p.name, 0))
            if v < 0 or v >> p.width:
                raise ProgramError(f"action {self.name}: {p.name} = {v:#x} does not fit in "
                                   f"{p.width} bits")
            d |= v << p.offset
        return d

    def apply(self, phv, data, meters=None, tick=0):
        """Applies the ops in order to `phv` (a dict, changed in place); `meters`: the
        program's meter arrays by name, metering at `tick`."""
        for op in self.ops:
            if op.op == "check" and check_fails(phv, op):
                phv[f"meta.{op.fate}"] = 1
                phv["meta.reason"] = CHECKS[op.check]
                return
        for op in self.ops:
            if op.op == "check":
                continue
            elif op.op == "set":
                width = self._width(op.field)
                phv[op.field] = self.param(op.param).value(data) & _mask(width)
            elif op.op == "setConst":
                phv[op.field] = op.value & _mask(self._width(op.field))
            elif op.op == "decrement":
                width = self._width(op.field)
                phv[op.field] = (phv.get(op.field, 0) - 1) & _mask(width)
            elif op.op == "copy":
                width = self._width(op.field)
                phv[op.field] = read_field(phv, op.source, width)
            elif op.op == "drop":
                phv["meta.drop"] = 1
                phv["meta.reason"] = op.reason & 0xFF
            elif op.op == "punt":
                phv["meta.punt"] = 1
                phv["meta.reason"] = op.reason & 0xFF
            elif op.op == "meter":
                phv["meta.color"] = meters[op.meter].packet(
                    self.param(op.param).value(data), tick, phv.get("meta.frameLen", 0),
                    phv.get("meta.color", 0))
            else:  # checked when loading
                raise ProgramError(f"unknown op {op.op!r}")


def _ip_header(phv, header):
    """The header `header` (hdr.<instance>) as parsed: its fields, the writable ones as the
    parser found them (their Orig copies)."""
    fields = {name: phv.get(f"{header}.{name}", 0) for name, _, _ in HEADER_TYPES["ipv4"][1]}
    for name in WRITABLE["ipv4"]:
        fields[name] = phv.get(f"{header}.{name}Orig", fields[name])
    return fields


def check_fails(phv, op):
    """Whether the valid header a check op names fails it (RFC 1812 5.2.2, 5.3.1)."""
    header, name = op.field.rsplit(".", 1)
    if not phv.get(f"{header}.valid", 0):
        return False
    ipv6 = INSTANCE_TYPE[header.split(".")[1]] == "ipv6"
    if op.check == "TTL_EXPIRED":
        return phv[op.field] <= 1
    if op.check == "IPV4_OPTIONS":
        return phv[f"{header}.ihl"] != 5
    if op.check == "IPV4_CHECKSUM":
        return ones_sum(emit("ipv4", _ip_header(phv, header))) != 0xFFFF
    # IP_LENGTH: the datagram holds its own header and the frame holds the datagram.
    room = phv["meta.frameLen"] - phv[f"{header}.offset"]
    if ipv6:
        return 40 + phv[f"{header}.payloadLen"] > room
    return not phv[f"{header}.ihl"] * 4 <= phv[f"{header}.totalLen"] <= room


def _action(desc, table, metadata=None):
    try:
        params = [Param(p["name"], int(p["width"]), int(p["offset"]))
                  for p in desc.get("params", [])]
        ops = []
        for o in desc.get("ops", []):
            if o.get("op") not in OPS:
                raise ProgramError(f"table {table}, action {desc['name']}: unknown op "
                                   f"{o.get('op')!r}")
            ops.append(Op(o["op"], o.get("field"), o.get("param"),
                          None if o.get("value") is None else int(o["value"]),
                          None if o.get("reason") is None else int(o["reason"]),
                          o.get("meter"), o.get("from"), o.get("check"), o.get("fate")))
        return Action(desc["name"], int(desc["id"]), params, ops, metadata)
    except KeyError as e:
        raise ProgramError(f"table {table}: action without {e}") from None


# ----------------------------------------------------------------------------- tables


@dataclass
class Lookup:
    """What one table did to one frame (for traces and error messages)."""
    table: str
    applied: bool
    key: int = None
    hit: bool = False
    entry: object = None   # the entry's identity (key, (prefix, len), rule); None on a miss
    action: str = None     # None: no action applied (a memory-backed table's late lookup)
    data: int = None

    def __str__(self):
        if not self.applied:
            return f"{self.table}: skipped"
        if self.action is None:
            return f"{self.table}: key {self.key:#x} late, no action"
        what = f"hit {_entry_str(self.entry)}" if self.hit else "miss"
        return f"{self.table}: key {self.key:#x} {what} -> {self.action}({self.data:#x})"


def _entry_str(entry):
    if isinstance(entry, int):
        return f"{entry:#x}"
    if isinstance(entry, tuple) and len(entry) == 2:
        return f"{entry[0]:#x}/{entry[1]}"
    if isinstance(entry, tuple) and len(entry) == 3:
        return f"{entry[0]:#x}&{entry[1]:#x}@{entry[2]}"
    return repr(entry)


class Table:
    """One table: description, entries, default action, counters."""

    kind = None

    def __init__(self, desc, metadata=None):
        self.desc = desc
        self.name = desc["name"]
        self.index = int(desc.get("index", 0))
        self.size = int(desc["size"])
        self.key_width = int(desc["keyWidth"])
        self.data_width = int(desc.get("dataWidth", 0))
        self.latency = desc.get("latency")
        self.counters = bool(desc.get("counters", False))
        self.apply_if = _condition(desc, f"table {self.name}")
        self.key_parts = []  # [(fields, width)], most significant first
        for part in desc["key"]:
            fields = part["fields"] if isinstance(part["fields"], list) else [part["fields"]]
            self.key_parts.append((list(fields), int(part["width"])))
        self.actions = {}
        for a in desc["actions"]:
            act = _action(a, self.name, metadata)
            if act.id in self.actions:
                raise ProgramError(f"table {self.name}: two actions with id {act.id}")
            self.actions[act.id] = act
        self.by_name = {a.name: a for a in self.actions.values()}
        d = desc.get("default", {})
        self.reset_default = (self.action_id(d.get("action", 0)), int(d.get("data", 0)))
        self.default = self.reset_default
        self.hits = 0
        self.misses = 0
        self.entry_counts = {}  # entry identity -> [packets, bytes]

    # -------------------------------------------------------------- description

    def action(self, action):
        """An Action by name or id."""
        if isinstance(action, Action):
            return action
        if isinstance(action, str):
            if action not in self.by_name:
                raise ProgramError(f"table {self.name}: no action {action!r}")
            return self.by_name[action]
        if int(action) not in self.actions:
            raise ProgramError(f"table {self.name}: no action with id {action}")
        return self.actions[int(action)]

    def action_id(self, action):
        return self.action(action).id

    def data(self, action, **values):
        """Action data for `action` (name or id) from parameter values."""
        return self.action(action).data(**values)

    def key_of(self, phv):
        """The lookup key of a PHV: the key parts concatenated, first part in the most
        significant bits; a part is its first field whose header is valid, else 0."""
        key = 0
        for fields, width in self.key_parts:
            value = 0
            for name in fields:
                if header_valid(phv, name):
                    value = read_field(phv, name, width)
                    break
            key = (key << width) | value
        return key

    def key(self, **parts):
        """A key from named parts (by the first field's last component, e.g.
        `key(dst=...)`, `key(srcPort=...)`); parts not given are 0."""
        key = 0
        names = [fields[0].rsplit(".", 1)[-1] for fields, _ in self.key_parts]
        unknown = set(parts) - set(names)
        if unknown:
            raise ProgramError(f"table {self.name}: no key part(s) {sorted(unknown)}; "
                               f"parts: {names}")
        for name, (_, width) in zip(names, self.key_parts):
            v = int(parts.get(name, 0))
            if v < 0 or v >> width:
                raise ProgramError(f"table {self.name}: key part {name} = {v:#x} does not "
                                   f"fit in {width} bits")
            key = (key << width) | v
        return key

    def _check_entry(self, action, data):
        act = self.action(action)
        data = int(data)
        if data < 0 or data >> max(self.data_width, 0):
            raise ProgramError(f"table {self.name}: action data {data:#x} wider than "
                               f"{self.data_width} bits")
        return act.id, data

    def _check_key(self, value, what="key"):
        value = int(value)
        if value < 0 or value >> self.key_width:
            raise ProgramError(f"table {self.name}: {what} {value:#x} wider than "
                               f"{self.key_width} bits")
        return value

    # ------------------------------------------------------------- defaults, counts

    def set_default(self, action, data=0):
        self.default = self._check_entry(action, data)

    def get_default(self):
        """(action id, data) a miss applies."""
        return self.default

    def count(self, hit, entry, nbytes):
        if hit:
            self.hits += 1
            if self.counters:
                c = self.entry_counts.setdefault(entry, [0, 0])
                c[0] += 1
                c[1] += nbytes
        else:
            self.misses += 1

    def entry_counters(self, entry):
        """(packets, bytes) of an entry (its identity as `entries()` lists it)."""
        return tuple(self.entry_counts.get(entry, (0, 0)))

    def reset_entry_counters(self, entry):
        """Restarts an entry's counts from 0 (what the driver's counter read with reset
        does); returns the counts before."""
        return tuple(self.entry_counts.pop(entry, (0, 0)))

    def clear(self):
        """Every entry removed and every per-entry count zeroed (the CLEAR command, as
        the driver documents matcha_table_clear); the table's hit and miss counts and its
        default action stay."""
        self._clear_entries()
        self.entry_counts = {}

    def _forget(self, entry):
        """Counts of a deleted entry: gone with it (a new entry starts at zero)."""
        return tuple(self.entry_counts.pop(entry, (0, 0)))

    # ------------------------------------------------------------------ lookups

    def lookup(self, key):
        """(hit, action id, data, entry identity) of a key."""
        raise NotImplementedError

    def apply(self, phv, count=True, meters=None, tick=0):
        """Looks the PHV up and applies the action (phv changed in place; `meters` and
        `tick` as Action.apply takes them); returns a Lookup describing what happened."""
        if not condition_holds(phv, self.apply_if):
            return Lookup(self.name, False)
        key = self.key_of(phv)
        hit, action_id, data, entry = self.lookup(key)
        if not hit:
            action_id, data = self.default
        if count:
            self.count(hit, entry, phv.get("meta.frameLen", 0))
        act = self.actions[action_id]
        act.apply(phv, data, meters, tick)
        return Lookup(self.name, True, key, hit, entry, act.name, data)

    def __len__(self):
        return len(self.entries())


class ExactTable(Table):
    kind = "exact"

    def __init__(self, desc, metadata=None):
        super().__init__(desc, metadata)
        self.ways = desc.get("ways")
        self.table = {}  # key -> (action id, data)

    def add(self, key, action, data=0):
        key = self._check_key(key)
        entry = self._check_entry(action, data)
        if key in self.table:
            raise ProgramError(f"table {self.name}: key {key:#x} is present")
        if len(self.table) >= self.size:
            raise TableFull(f"table {self.name}: {self.size} entries")
        self.table[key] = entry

    def modify(self, key, action, data=0):
        if key not in self.table:
            raise ProgramError(f"table {self.name}: no key {key:#x}")
        self.table[key] = self._check_entry(action, data)

    def delete(self, key):
        if key not in self.table:
            raise ProgramError(f"table {self.name}: no key {key:#x}")
        del self.table[key]
        return self._forget(key)

    def lookup(self, key):
        e = self.table.get(key)
        if e is None:
            return False, None, None, None
        return True, e[0], e[1], key

    def entries(self):
        return list(self.table)

    def _clear_entries(self):
        self.table = {}


class DirectTable(ExactTable):
    """docs/tables.md "Direct": a key names the entry at its index, so only keys below
    `size` have an entry to add; every other key misses. Otherwise it answers as an exact
    table: a key hits its own entry, if it is valid, or nothing."""
    kind = "direct"

    def add(self, key, action, data=0):
        if self._check_key(key) >= self.size:
            raise ProgramError(f"table {self.name}: key {key} is not an index of its "
                               f"{self.size} entries")
        super().add(key, action, data)


class InMemory:
    """A table whose entries (docs/tables.md, "Memory-backed exact tables") or lowest tree
    levels ("LPM levels in memory") live in memory: a lookup answers as the table's own,
    unless what it reads does not come back from memory within the table's latency: then
    no action applies, the frame is punted with the table's late reason, and neither HITS
    nor MISSES counts it. The model has no clock: `late` says that every lookup is late (a
    memory slower than the table allows). Mixed in before the table's class."""

    def __init__(self, desc, metadata=None):
        super().__init__(desc, metadata)
        self.late_reason = int(desc["memory"]["lateReason"])
        self.late = False

    def apply(self, phv, count=True, meters=None, tick=0):
        if not self.late or not condition_holds(phv, self.apply_if):
            return super().apply(phv, count, meters, tick)
        phv["meta.punt"] = 1
        phv["meta.reason"] = self.late_reason
        return Lookup(self.name, True, self.key_of(phv))


class MemExactTable(InMemory, ExactTable):
    """An exact table in memory: where its entries go is the driver's business, and whether
    a key's bucket has room."""
    kind = "mem_exact"


class LpmTable(Table):
    kind = "lpm"

    def __init__(self, desc, metadata=None):
        super().__init__(desc, metadata)
        self.geometry = desc.get("lpm", {})
        self.prefixes = {}  # (value, length) -> (action id, data)

    def _check_prefix(self, value, length):
        value = self._check_key(value, "prefix")
        if not 0 <= length <= self.key_width:
            raise ProgramError(f"table {self.name}: prefix length {length}")
        if value & _mask(self.key_width - length):
            raise ProgramError(f"table {self.name}: {value:#x}/{length} has bits set past "
                               f"its length")
        return value, length

    def add(self, prefix, length, action, data=0):
        p = self._check_prefix(prefix, length)
        entry = self._check_entry(action, data)
        if p in self.prefixes:
            raise ProgramError(f"table {self.name}: {prefix:#x}/{length} is present")
        if len(self.prefixes) >= self.size:
            raise TableFull(f"table {self.name}: {self.size} prefixes")
        self.prefixes[p] = entry

    def delete(self, prefix, length):
        p = (prefix, length)
        if p not in self.prefixes:
            raise ProgramError(f"table {self.name}: no prefix {prefix:#x}/{length}")
        del self.prefixes[p]
        return self._forget(p)

    def match(self, key):
        """The longest prefix covering `key`, or None: `key` cut to each length, longest
        first, looked up among the prefixes (a lookup per length, so that a table of tens
        of thousands of prefixes answers as fast as a small one)."""
        for length in range(self.key_width, -1, -1):
            shift = self.key_width - length
            p = (key >> shift << shift, length)
            if p in self.prefixes:
                return p
        return None

    def lookup(self, key):
        p = self.match(key)
        if p is None:
            return False, None, None, None
        return True, *self.prefixes[p], p

    def entries(self):
        return list(self.prefixes)

    def _clear_entries(self):
        self.prefixes = {}


@dataclass
class Rule:
    value: int
    mask: int
    priority: int
    action: int
    data: int
    seq: int = dc_field(default=0, compare=False)

    @property
    def ident(self):
        return (self.value, self.mask, self.priority)


class TernaryTable(Table):
    kind = "ternary"

    def __init__(self, desc, metadata=None):
        super().__init__(desc, metadata)
        self.rules = []  # in match order: priority descending, then insertion order
        self._seq = 0
        # Range fields ("range": true in the key): (offset, width); an entry gives such a
        # field lo in the value's bits and hi in the mask's, and matches lo <= x <= hi.
        self.ranges = []
        offset = self.key_width
        for part in desc["key"]:
            offset -= int(part["width"])
            if part.get("range", False):
                self.ranges.append((offset, int(part["width"])))
        self.range_bits = sum(_mask(w) << o for o, w in self.ranges)

    def _in_ranges(self, key, rule):
        return all(rule.value >> o & _mask(w) <= key >> o & _mask(w) <= rule.mask >> o & _mask(w)
                   for o, w in self.ranges)

    def add(self, value, mask, priority, action, data=0):
        value = self._check_key(value, "value")
        mask = self._check_key(mask, "mask")
        if value & ~mask & ~self.range_bits:
            raise ProgramError(f"table {self.name}: value {value:#x} has bits outside mask "
                               f"{mask:#x}")
        for o, w in self.ranges:
            lo, hi = value >> o & _mask(w), mask >> o & _mask(w)
            if lo > hi:
                raise ProgramError(f"table {self.name}: range {lo}->{hi} of the field at key bit {o} "
                                   "is empty (lo > hi)")
        act, data = self._check_entry(action, data)
        ident = (value, mask, int(priority))
        if any(r.ident == ident for r in self.rules):
            raise ProgramError(f"table {self.name}: rule {_entry_str(ident)} is present")
        if len(self.rules) >= self.size:
            raise TableFull(f"table {self.name}: {self.size} rules")
        self._seq += 1
        rule = Rule(value, mask, int(priority), act, data, self._seq)
        # After every rule of higher or equal priority: ties go to the rule added first.
        pos = next((i for i, r in enumerate(self.rules) if r.priority < rule.priority),
                   len(self.rules))
        self.rules.insert(pos, rule)
        return pos

    def delete(self, value, mask, priority):
        ident = (value, mask, priority)
        for i, r in enumerate(self.rules):
            if r.ident == ident:
                del self.rules[i]
                return self._forget(ident)
        raise ProgramError(f"table {self.name}: no rule {_entry_str(ident)}")

    def position(self, value, mask, priority):
        """Index of a rule in match order (where the driver packs it)."""
        for i, r in enumerate(self.rules):
            if r.ident == (value, mask, priority):
                return i
        raise ProgramError(f"table {self.name}: no rule {_entry_str((value, mask, priority))}")

    def match(self, key):
        t = ~self.range_bits
        return next((r for r in self.rules if key & r.mask & t == r.value & t and self._in_ranges(key, r)),
                    None)

    def lookup(self, key):
        r = self.match(key)
        if r is None:
            return False, None, None, None
        return True, r.action, r.data, r.ident

    def entries(self):
        return [r.ident for r in self.rules]

    def _clear_entries(self):
        self.rules = []


class MemLpmTable(InMemory, LpmTable):
    """An LPM table with its lowest levels in memory (its "memory" member)."""


TABLE_CLASSES = {"exact": ExactTable, "lpm": LpmTable, "ternary": TernaryTable,
                 "direct": DirectTable, "mem_exact": MemExactTable}


def table_class(desc):
    """The model of a table of layout.json's program."""
    if desc["kind"] == "lpm" and "memory" in desc:
        return MemLpmTable
    return TABLE_CLASSES[desc["kind"]]


# ----------------------------------------------------------------------- session stage

# The session table's inputs in layout.json's "fields", and its results in "result".
SESSION_INPUTS = ("zone", "protocol", "srcAddr", "dstAddr", "srcPort", "dstPort", "tcpFlags")
SESSION_RESULTS = ("hit", "reply", "state", "learned", "insertFailed")


class SessionStage:
    """The session table as a stage: its description and its SessionModel, or with a
    "memory" member (docs/sessions.md, "Sessions in memory") its MemSessionModel, whose
    packets are punted with the late reason while `late` says the memory is slower than
    the table allows, and with the busy reason while `busy` says the tracked buckets ran
    out (the model has no clock to know either: a test sets them, or takes the frames the
    hardware left busy from its punt log and checks that they changed nothing)."""

    def __init__(self, desc):
        try:
            self.desc = desc
            self.name = desc["name"]
            self.index = int(desc["index"])
            self.after = desc["after"]
            self.apply_if = _condition(desc, f"session table {self.name}")
            self.learn = desc["learn"]
            self.reason = int(desc["reason"])
            self.inputs = {}
            for n in SESSION_INPUTS:
                part = desc["fields"][n]
                fields = part["fields"] if isinstance(part["fields"], list) else [part["fields"]]
                self.inputs[n] = (list(fields), int(part["width"]))
            self.results = {n: desc["result"][n] for n in SESSION_RESULTS}
            memory = desc.get("memory")
            self.late_reason = int(memory["lateReason"]) if memory else None
            self.busy_reason = int(memory["busyReason"]) if memory else None
            self.late = False
            self.busy = False
            self.table = self._empty_table()
        except KeyError as e:
            raise ProgramError(f"session table {desc.get('name')}: no {e}") from None

    def read(self, phv, name):
        """An input as a key part reads it: its first field whose header is valid, else 0."""
        fields, width = self.inputs[name]
        for f in fields:
            if header_valid(phv, f):
                return read_field(phv, f, width)
        return 0

    def apply(self, phv, tick=0, commit=True):
        """The stage on `phv` (changed in place); returns a Lookup. Without `commit`, the
        table is left as it was (SessionModel.packet)."""
        if not condition_holds(phv, self.apply_if):
            return Lookup(self.name, False)
        p = Packet(self.read(phv, "zone"), self.read(phv, "protocol"), self.read(phv, "srcAddr"),
                   self.read(phv, "dstAddr"), self.read(phv, "srcPort"),
                   self.read(phv, "dstPort"), self.read(phv, "tcpFlags"),
                   bool(phv.get(self.learn, 0)), phv.get("meta.frameLen", 0))
        if self.late or self.busy:
            phv["meta.punt"] = 1
            phv["meta.reason"] = self.late_reason if self.late else self.busy_reason
            return Lookup(self.name, True, canonical_key(p, self.table.addr_bits)[0])
        r = self.table.packet(p, tick, commit)
        for n, value in zip(SESSION_RESULTS, (r.hit, r.reply, r.state, r.learned,
                                              r.insert_failed)):
            phv[self.results[n]] = int(value)
        if r.drop or r.punt:
            phv["meta.drop" if r.drop else "meta.punt"] = 1
            phv["meta.reason"] = self.reason
        what = "hit" if r.hit else "learned" if r.learned else \
            "insert failed" if r.insert_failed else "miss"
        key = canonical_key(p, self.table.addr_bits)[0]
        return Lookup(self.name, True, key, r.hit, r.index, what, r.state)

    def _empty_table(self):
        size, ways = int(self.desc["size"]), int(self.desc.get("ways", 4))
        widths = dict(addr_bits=self.inputs["srcAddr"][1], zone_bits=self.inputs["zone"][1])
        if self.late_reason is None:
            return SessionModel(size, ways, **widths)
        return MemSessionModel(size // ways, ways, **widths)

    def reset(self):
        self.table = self._empty_table()

    def __deepcopy__(self, memo):
        # Only the table is state; the description and what was read from it are never
        # changed (Program.copy).
        new = copy.copy(self)
        new.table = copy.deepcopy(self.table, memo)
        return new


# ---------------------------------------------------------------------------- program


def program_section(source):
    """The program description from a path to layout.json, a layout dict or a program
    dict; None if a layout has no "program" section."""
    if isinstance(source, (str, Path)):
        with open(source) as f:
            source = json.load(f)
    if "tables" in source:
        return source
    return source.get("program")


class Program:
    """The tables of a program, in description order. With `strict`, a description that
    check() finds problems in is refused; otherwise they are kept in `problems`."""

    def __init__(self, desc, strict=True):
        desc = program_section(desc)
        if desc is None:
            raise ProgramError("no program section")
        self.desc = desc
        self.name = desc.get("name")
        self.metadata = {}
        for m in desc.get("metadata", []):
            name, width = m["name"], int(m["width"])
            if not name.startswith("meta.") or name in _FIELD_WIDTHS or name in self.metadata:
                raise ProgramError(f"metadata {name!r}: a new meta.<name> of its own")
            self.metadata[name] = width
        self.tables = []
        for t in desc["tables"]:
            kind = t.get("kind")
            if kind not in TABLE_CLASSES:
                raise ProgramError(f"table {t.get('name')}: unknown kind {kind!r}")
            self.tables.append(table_class(t)(t, self.metadata))
        self.by_name = {t.name: t for t in self.tables}
        if len(self.by_name) != len(self.tables):
            raise ProgramError("two tables with one name")
        self.meter_arrays = desc.get("meters", [])
        self.meters = {m["name"]: MeterBank(int(m["size"])) for m in self.meter_arrays}
        self.sessions = {s["name"]: SessionStage(s) for s in desc.get("sessions", [])}
        if any(s.after not in self.by_name for s in self.sessions.values()):
            raise ProgramError("a session stage follows a table the program does not have")
        self.problems = self.check()
        if self.problems and strict:
            raise ProgramError("; ".join(self.problems))

    def __getitem__(self, name):
        if isinstance(name, int):
            return self.tables[name]
        return self.by_name[name]

    def check(self):
        """Problems of the description against docs/pipeline.md: key and data widths,
        parameter packing, fields, reasons, default. Empty when it is consistent."""
        out = []
        for t in self.tables:
            where = f"table {t.name}"
            kw = 0
            for fields, width in t.key_parts:
                kw += width
                for name in fields:
                    w = field_width(name, width, self.metadata)
                    if w != width:
                        out.append(f"{where}: key field {name} is {w} bits, part says {width}")
            if kw != t.key_width:
                out.append(f"{where}: key parts sum to {kw} bits, keyWidth is {t.key_width}")
            for term in t.apply_if:
                if field_width(term.lstrip("!"), 1, self.metadata) != 1:
                    out.append(f"{where}: applyIf {term} is not a 1-bit field")
            widest = 0
            for a in t.actions.values():
                at = f"{where}, action {a.name}"
                widest = max(widest, a.data_width)
                # First parameter in the most significant bits, ending at bit 0.
                off = a.data_width
                for p in a.params:
                    off -= p.width
                    if p.offset != off:
                        out.append(f"{at}: parameter {p.name} at offset {p.offset}, the "
                                   f"packing rule puts it at {off}")
                names = {p.name for p in a.params}
                for op in a.ops:
                    if op.op == "copy":
                        try:
                            widths = {field_width(f, metadata=self.metadata)
                                      for f in (op.field, op.source)}
                        except ProgramError as e:
                            out.append(f"{at}: {e}")
                            continue
                        if len(widths) != 1:
                            out.append(f"{at}: copy {op.source} into {op.field} of another width")
                        continue
                    if op.op in ("set", "setConst", "decrement"):
                        if op.field is None:
                            out.append(f"{at}: {op.op} without a field")
                            continue
                        try:
                            fw = field_width(op.field, metadata=self.metadata)
                        except ProgramError as e:
                            out.append(f"{at}: {e}")
                            continue
                        if op.op == "set":
                            if op.param not in names:
                                out.append(f"{at}: set {op.field} from unknown parameter "
                                           f"{op.param!r}")
                            elif a.param(op.param).width != fw:
                                out.append(f"{at}: set {op.field} ({fw} bits) from "
                                           f"{op.param} ({a.param(op.param).width} bits)")
                        if op.op == "setConst" and (op.value is None or op.value >> fw):
                            out.append(f"{at}: setConst {op.field} value {op.value}")
                    elif op.op == "check":
                        if op.check not in CHECKS or op.fate not in FATES:
                            out.append(f"{at}: check {op.check!r} with fate {op.fate!r}")
                        elif op.reason != CHECKS[op.check]:
                            out.append(f"{at}: check {op.check} with reason {op.reason}, "
                                       f"the check's is {CHECKS[op.check]}")
                    elif op.op == "meter":
                        size = next((int(m["size"]) for m in self.meter_arrays
                                     if m["name"] == op.meter), None)
                        if size is None:
                            out.append(f"{at}: meter op on unknown array {op.meter!r}")
                        elif op.param not in names:
                            out.append(f"{at}: meter index from unknown parameter "
                                       f"{op.param!r}")
                        elif 1 << a.param(op.param).width != size:
                            out.append(f"{at}: meter index {op.param} is "
                                       f"{a.param(op.param).width} bits for {size} meters")
                    else:
                        if op.reason is None or not MIN_TABLE_REASON <= op.reason <= 0xFF:
                            out.append(f"{at}: {op.op} reason {op.reason} (tables own "
                                       f"0x10..0xff)")
            widest = max(widest, 1)  # a table stores at least one bit of action data
            if widest != t.data_width:
                out.append(f"{where}: dataWidth {t.data_width}, the widest action takes "
                           f"{widest}")
        for st in self.sessions.values():
            where = f"session table {st.name}"
            for n, (fields, width) in st.inputs.items():
                for name in fields:
                    if field_width(name, width, self.metadata) > width:
                        out.append(f"{where}: {n} field {name} is wider than {width} bits")
            flags = [st.results[n] for n in SESSION_RESULTS if n != "state"]
            for name in [st.learn] + [t.lstrip("!") for t in st.apply_if] + flags:
                if field_width(name, 1, self.metadata) != 1:
                    out.append(f"{where}: {name} is not a 1-bit field")
            if not MIN_TABLE_REASON <= st.reason <= 0xFF:
                out.append(f"{where}: reason {st.reason} (tables own 0x10..0xff)")
        return out

    # ----------------------------------------------------------------- applying

    def apply(self, phv, count=True, trace=None, tick=0):
        """The PHV after the tables (a new dict; `phv` is not changed). With `count`,
        the counters, the meters and the session tables are updated; `trace`, a list, receives a Lookup per
        table; meters meter at `tick`."""
        out = dict(phv)
        if out.get("meta.parseError", 0) != 0:
            if trace is not None:
                trace.extend(Lookup(t.name, False) for t in self.tables)
            return out
        meters = self.meters if count else copy.deepcopy(self.meters)
        for t in self.tables:
            r = t.apply(out, count, meters, tick)
            if trace is not None:
                trace.append(r)
            for s in self.sessions.values():
                if s.after == t.name:
                    r = s.apply(out, tick, commit=count)
                    if trace is not None:
                        trace.append(r)
        return out

    def answer(self, phv):
        """apply() without touching the counters."""
        return self.apply(phv, count=False)

    # ------------------------------------------------------------- state, counts

    def copy(self):
        """An independent copy (entries, defaults and counters)."""
        return copy.deepcopy(self)

    def counters(self):
        """{table: (hits, misses)}"""
        return {t.name: (t.hits, t.misses) for t in self.tables}

    def entry_counters(self):
        """{table: {entry: (packets, bytes)}} for tables with counters, every entry
        present (0, 0 for entries that were never hit)."""
        return {t.name: {e: t.entry_counters(e) for e in t.entries()}
                for t in self.tables if t.counters}

    def reset(self):
        """The state after reset: no entries, no counts, reset defaults."""
        for t in self.tables:
            t.clear()
            t.hits = t.misses = 0
            t.default = t.reset_default
        for bank in self.meters.values():
            bank.clear()
        for stage in self.sessions.values():
            stage.reset()


def load(source, strict=True):
    """A Program from layout.json (path or dict) or a program dict."""
    return Program(source, strict)


# ------------------------------------------------------------- comparing descriptions

# Items of a table description that docs/pipeline.md fixes for a given program; the rest
# (index, latency, ways, LPM geometry) is the generator's choice.
CONTRACT_ITEMS = ("name", "kind", "size", "keyWidth", "dataWidth", "counters", "applyIf")


def _norm_key(key):
    return [(list(p["fields"]) if isinstance(p["fields"], list) else [p["fields"]],
             int(p["width"])) for p in key]


def _norm_action(a):
    return {
        "name": a["name"], "id": int(a["id"]),
        "params": [(p["name"], int(p["width"]), int(p["offset"])) for p in a.get("params", [])],
        "ops": [{k: v for k, v in o.items() if v is not None} for o in a.get("ops", [])],
    }


def _default(t):
    """(action name, data) of a description's default; the action may be named or an id."""
    d = t.get("default", {})
    a = d.get("action")
    if isinstance(a, int):
        a = next((x["name"] for x in t["actions"] if int(x["id"]) == a), a)
    return a, int(d.get("data", 0))


def compare(got, want):
    """Differences between two program descriptions in what the contract fixes (table
    order, names, kinds, sizes, keys, applyIf, actions with ids, parameters and ops,
    defaults); an empty list when they agree."""
    got, want = program_section(got), program_section(want)
    out = []
    gt, wt = got["tables"], want["tables"]
    if [t["name"] for t in gt] != [t["name"] for t in wt]:
        return [f"tables {[t['name'] for t in gt]}, expected {[t['name'] for t in wt]}"]
    for g, w in zip(gt, wt):
        where = f"table {w['name']}"
        for item in CONTRACT_ITEMS:
            if item in w and g.get(item) != w.get(item):
                out.append(f"{where}: {item} {g.get(item)!r}, expected {w.get(item)!r}")
        if _norm_key(g["key"]) != _norm_key(w["key"]):
            out.append(f"{where}: key {_norm_key(g['key'])}, expected {_norm_key(w['key'])}")
        ga = {a["name"]: _norm_action(a) for a in g["actions"]}
        wa = {a["name"]: _norm_action(a) for a in w["actions"]}
        if set(ga) != set(wa):
            out.append(f"{where}: actions {sorted(ga)}, expected {sorted(wa)}")
        for name in sorted(set(ga) & set(wa)):
            for item in ("id", "params", "ops"):
                if ga[name][item] != wa[name][item]:
                    out.append(f"{where}, action {name}: {item} {ga[name][item]}, expected "
                               f"{wa[name][item]}")
        if _default(g) != _default(w):
            out.append(f"{where}: default {_default(g)}, expected {_default(w)}")
    return out

