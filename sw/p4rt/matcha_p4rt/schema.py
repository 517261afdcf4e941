# SPDX-License-Identifier: Apache-2.0
"""What the server knows of a P4Info: its tables, actions, counters and meters by id, each
tied to the driver's name for it, and the conversions between P4Runtime's field matches and
the driver's `struct matcha_match`.

P4Runtime names an entity by id; the driver names it as layout.json does. The generator
writes both files from one program (rtl/.../P4Info.scala): a table `ingress.<t>` is the
driver's table `<t>`, its action `ingress.<t>.<a>` the driver's action `<a>` of `<t>`, a meter
array `ingress.<m>` the driver's `<m>`; match fields and action parameters have the driver's
names. `Schema.check` holds the P4Info to the layout the driver loaded, so that a P4Info of
another build is refused before anything is served.
"""

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from . import libmatcha as lm

EXACT = p4info_pb2.MatchField.EXACT
LPM = p4info_pb2.MatchField.LPM
TERNARY = p4info_pb2.MatchField.TERNARY
RANGE = p4info_pb2.MatchField.RANGE
MATCH_NAMES = {EXACT: "exact", LPM: "lpm", TERNARY: "ternary", RANGE: "range"}
# The packet metadata the server fills in and reads, as P4Info.scala names them.
PACKET_IN = ("ingress_port", "reason")
PACKET_OUT = ("egress_port", "submit_to_ingress", "ingress_port")


class SchemaError(ValueError):
    """A P4Info the server cannot serve, or one that is not the device's."""


class BadValue(ValueError):
    """A P4Runtime value the server refuses (INVALID_ARGUMENT), with the reason."""


@dataclass
class Field:
    id: int
    name: str
    bitwidth: int
    match_type: int

    @property
    def full(self):
        return (1 << self.bitwidth) - 1


@dataclass
class Action:
    id: int
    name: str          # the P4Info name
    driver: str        # the action's name in its table (layout.json)
    params: list       # [(id, name, bitwidth)] in order


@dataclass
class Table:
    id: int
    name: str
    driver: str
    fields: list                  # [Field] in key order
    actions: dict                 # action id -> Action
    size: int
    initial_default: tuple        # (action id, [param ints])
    counter_id: int = None        # its direct counter
    index: int = None             # the driver's descriptor index
    fields_by_id: dict = field(default_factory=dict)

    @property
    def needs_priority(self):
        return any(f.match_type in (TERNARY, RANGE) for f in self.fields)


@dataclass
class Meter:
    id: int
    name: str
    driver: str
    size: int
    index: int = None             # the driver's descriptor index


def decode(value, bitwidth, what):
    """A P4Runtime bytestring as an int: at most the field's bytes, the value within its width."""
    if not value:
        raise BadValue(f"{what}: an empty bytestring")
    if len(value) > (bitwidth + 7) // 8:
        raise BadValue(f"{what}: {len(value)} bytes for a {bitwidth}-bit value")
    v = int.from_bytes(value, "big")
    if v >> bitwidth:
        raise BadValue(f"{what}: {value.hex()} does not fit {bitwidth} bits")
    return v


def encode(v):
    """An int as P4Runtime's canonical bytestring: the fewest bytes, zero as one byte."""
    return v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")


def _driver_name(qualified, prefix):
    if not qualified.startswith(prefix):
        raise SchemaError(f"P4Info name {qualified} is not under {prefix}")
    return qualified[len(prefix):]


class Schema:
    """The P4Info's entities by id. `control` is the prefix of every name (P4Info.scala)."""

    def __init__(self, p4info, control="ingress."):
        self.p4info = p4info
        actions = {a.preamble.id: a for a in p4info.actions}
        self.tables, self.actions, self.meters, self.counters = {}, {}, {}, {}
        for t in p4info.tables:
            driver = _driver_name(t.preamble.name, control)
            fields = [Field(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields]
            for f in fields:
                if f.match_type not in MATCH_NAMES:
                    raise SchemaError(f"table {t.preamble.name}: match field {f.name} is of a kind "
                                      "the server does not serve")
            table_actions = {}
            for ref in t.action_refs:
                a = actions[ref.id]
                act = Action(a.preamble.id, a.preamble.name,
                             _driver_name(a.preamble.name, t.preamble.name + "."),
                             [(p.id, p.name, p.bitwidth) for p in a.params])
                table_actions[act.id] = self.actions[act.id] = act
            init = t.initial_default_action
            default_params = {a.param_id: a.value for a in init.arguments}
            default_action = table_actions[init.action_id]
            table = Table(t.preamble.id, t.preamble.name, driver, fields, table_actions, t.size,
                          (init.action_id, [int.from_bytes(default_params.get(pid, b"\0"), "big")
                                            for pid, _, _ in default_action.params]))
            table.fields_by_id = {f.id: f for f in fields}
            self.tables[table.id] = table
        for c in p4info.direct_counters:
            self.tables[c.direct_table_id].counter_id = c.preamble.id
            self.counters[c.preamble.id] = self.tables[c.direct_table_id]
        for m in p4info.meters:
            self.meters[m.preamble.id] = Meter(m.preamble.id, m.preamble.name,
                                               _driver_name(m.preamble.name, control), m.size)
        headers = {c.preamble.name: {m.name: (m.id, m.bitwidth) for m in c.metadata}
                   for c in p4info.controller_packet_metadata}
        self.packet_in, self.packet_out = headers.get("packet_in", {}), headers.get("packet_out", {})
        for header, served in (("packet_in", PACKET_IN), ("packet_out", PACKET_OUT)):
            if set(headers.get(header, {})) != set(served):
                raise SchemaError(f"controller header {header}: metadata {sorted(headers.get(header, {}))}, "
                                  f"the server serves {sorted(served)}")

    def check(self, device):
        """Ties every table and meter array to its descriptor in the driver's layout, and
        refuses a P4Info that describes them otherwise (names, widths, kinds, sizes, actions
        and parameters)."""
        tables, meters = {}, {}
        for index, t, m in device.objects():
            if t is not None:
                tables[t.name.decode()] = (index, t)
            if m is not None:
                meters[m.name.decode()] = (index, m)
        for table in self.tables.values():
            if table.driver not in tables:
                raise SchemaError(f"P4Info table {table.name}: the device's layout has no table {table.driver}")
            table.index, t = tables.pop(table.driver)
            where = f"P4Info table {table.name}"
            if t.size != table.size:
                raise SchemaError(f"{where}: size {table.size}, the device's {t.size}")
            layout_fields = [(t.fields[i].name.decode(), t.fields[i].width, t.fields[i].range)
                             for i in range(t.nfields)]
            p4_fields = [(f.name, f.bitwidth, f.match_type == RANGE) for f in table.fields]
            if layout_fields != p4_fields:
                raise SchemaError(f"{where}: match fields {p4_fields}, the device's {layout_fields}")
            layout_actions = {}
            for i in range(t.nactions):
                a = t.actions[i]
                layout_actions[a.name.decode()] = [(a.params[j].name.decode(), a.params[j].width)
                                                   for j in range(a.nparams)]
            p4_actions = {a.driver: [(n, w) for _, n, w in a.params] for a in table.actions.values()}
            if layout_actions != p4_actions:
                raise SchemaError(f"{where}: actions {p4_actions}, the device's {layout_actions}")
        if tables:
            raise SchemaError(f"the P4Info has no table {', '.join(sorted(tables))} of the device")
        for meter in self.meters.values():
            if meter.driver not in meters:
                raise SchemaError(f"P4Info meter {meter.name}: the device's layout has no meter array {meter.driver}")
            meter.index, m = meters.pop(meter.driver)
            if m.size != meter.size:
                raise SchemaError(f"P4Info meter {meter.name}: size {meter.size}, the device's {m.size}")
        if meters:
            raise SchemaError(f"the P4Info has no meter {', '.join(sorted(meters))} of the device")

    # ------------------------------------------------------------------ matches

    @staticmethod
    def key(table, field_matches, priority):
        """An entry's identity, from P4Runtime FieldMatches: one canonical match per field in
        key order (("exact", v), ("lpm", v, len), ("ternary", v, mask), ("range", lo, hi); an
        omitted field is its wildcard) and the priority. Raises BadValue as the spec asks:
        unknown or repeated fields, a match of the wrong kind, values that do not fit, bits
        outside a mask or prefix, wildcards written out, a missing exact field, a priority
        where none belongs or none where one does."""
        given = {}
        for fm in field_matches:
            f = table.fields_by_id.get(fm.field_id)
            if f is None:
                raise BadValue(f"table {table.name}: no match field id {fm.field_id}")
            if f.id in given:
                raise BadValue(f"table {table.name}: match field {f.name} given twice")
            given[f.id] = Schema._match(table, f, fm)
        canon = []
        for f in table.fields:
            if f.id in given:
                canon.append(given[f.id])
            elif f.match_type == EXACT:
                raise BadValue(f"table {table.name}: exact match field {f.name} is missing")
            else:
                canon.append(Schema.wildcard(f))
        if table.needs_priority and priority <= 0:
            raise BadValue(f"table {table.name}: an entry of a ternary or range table needs a priority above 0")
        if not table.needs_priority and priority:
            raise BadValue(f"table {table.name}: its entries have no priority (got {priority})")
        return tuple(canon), priority

    @staticmethod
    def wildcard(f):
        return {LPM: ("lpm", 0, 0), TERNARY: ("ternary", 0, 0), RANGE: ("range", 0, f.full)}[f.match_type]

    @staticmethod
    def _match(table, f, fm):
        what = f"table {table.name}, field {f.name}"
        kind = fm.WhichOneof("field_match_type")
        if kind != MATCH_NAMES[f.match_type]:
            raise BadValue(f"{what}: a {kind} match on a {MATCH_NAMES[f.match_type]} field")
        if kind == "exact":
            return ("exact", decode(fm.exact.value, f.bitwidth, what))
        if kind == "lpm":
            v, n = decode(fm.lpm.value, f.bitwidth, what), fm.lpm.prefix_len
            if not 0 < n <= f.bitwidth:
                raise BadValue(f"{what}: prefix length {n} (1 to {f.bitwidth}; a /0 is left out)")
            if v & (f.full >> n):
                raise BadValue(f"{what}: {v:#x} has bits beyond its /{n}")
            return ("lpm", v, n)
        if kind == "ternary":
            v, m = decode(fm.ternary.value, f.bitwidth, what), decode(fm.ternary.mask, f.bitwidth, what)
            if m == 0:
                raise BadValue(f"{what}: a mask of 0 (a don't-care field is left out)")
            if v & ~m:
                raise BadValue(f"{what}: value {v:#x} has bits outside its mask {m:#x}")
            return ("ternary", v, m)
        lo, hi = decode(fm.range.low, f.bitwidth, what), decode(fm.range.high, f.bitwidth, what)
        if lo > hi:
            raise BadValue(f"{what}: range {lo}..{hi} is empty")
        if (lo, hi) == (0, f.full):
            raise BadValue(f"{what}: the whole range (a don't-care field is left out)")
        return ("range", lo, hi)

    @staticmethod
    def field_matches(table, canon, make):
        """P4Runtime FieldMatches of a canonical key (wildcards left out), each built by
        `make()` (a new FieldMatch)."""
        out = []
        for f, c in zip(table.fields, canon):
            if f.match_type != EXACT and c == Schema.wildcard(f):
                continue
            fm = make()
            fm.field_id = f.id
            if c[0] == "exact":
                fm.exact.value = encode(c[1])
            elif c[0] == "lpm":
                fm.lpm.value, fm.lpm.prefix_len = encode(c[1]), c[2]
            elif c[0] == "ternary":
                fm.ternary.value, fm.ternary.mask = encode(c[1]), encode(c[2])
            else:
                fm.range.low, fm.range.high = encode(c[1]), encode(c[2])
            out.append(fm)
        return out

    @staticmethod
    def driver_matches(canon):
        """The driver's matches of a canonical key."""
        out = []
        for c in canon:
            m = lm.Match()
            if c[0] == "exact":
                m.kind, m.value = lm.MATCH_EXACT, lm.Value.of(c[1])
            elif c[0] == "lpm":
                m.kind, m.value, m.prefix_len = lm.MATCH_LPM, lm.Value.of(c[1]), c[2]
            elif c[0] == "ternary":
                m.kind, m.value, m.mask = lm.MATCH_TERNARY, lm.Value.of(c[1]), lm.Value.of(c[2])
            else:
                m.kind, m.value, m.high = lm.MATCH_RANGE, lm.Value.of(c[1]), lm.Value.of(c[2])
            out.append(m)
        return out

    @staticmethod
    def canonical_of_driver(table, matches):
        """The canonical key of matches the driver gives back (as added, or as adoption
        writes them: an exact field of an LPM table as a full-length prefix, a full mask as
        an exact match, a one-value range as an exact match)."""
        canon = []
        for f, m in zip(table.fields, matches):
            v = m.value.int()
            if m.kind == lm.MATCH_EXACT:
                n, mask, hi = f.bitwidth, f.full, v
            elif m.kind == lm.MATCH_LPM:
                n = m.prefix_len
                mask, hi = f.full ^ (f.full >> n), v
            elif m.kind == lm.MATCH_TERNARY:
                mask = m.mask.int()
                n, hi = None, v
            else:
                n, mask, hi = None, None, m.high.int()
            canon.append({EXACT: lambda: ("exact", v), LPM: lambda: ("lpm", v, n),
                          TERNARY: lambda: ("ternary", v, mask),
                          RANGE: lambda: ("range", v, hi)}[f.match_type]())
        return tuple(canon)
