# SPDX-License-Identifier: Apache-2.0
"""Table control for the pipeline tests: the C driver and the program model side by side.

Every table change goes through the real driver (libmatcha, tb/common/driver.py) opened on
a bus that is, by default, the `RecordingBus` of tb/common/driver.py: the driver call runs
at once and its register writes are kept, to be performed on the DUT afterwards with
`driver.replay`. The model (tb/model/program.py) is changed only once the writes have been
performed (`Update.commit`), so that a test knows which frames may have seen the old
tables and which the new.

Calls whose result depends on what the hardware holds (per-entry counters, the default
action's readback, a change that moves counted entries: the driver carries their counts
along) run on a live bus instead (`SwitchBus.live`), whose read32 and write32 block until
the simulator has done the access (tb/common/axil.py, LiveBus).

Nothing here imports cocotb: the same code runs in the simulation and, against a
self-describing block made from the program description (`snapshot_for`), in plain pytest.
"""

import ctypes
from dataclasses import dataclass, field

from tb.common import contract
from tb.common import driver as drv
from tb.common import meter_regs

KIND_CODES = {name: code for code, name in contract.KIND_NAMES.items()}
# A pipeline's meter arrays (docs/tables.md, "Meters"): 32-bit rates, 40-bit bursts and
# levels, a 32-bit time base ticking every clock.
METER_DATA_BITS = contract.METER_WORDS * 32
METER_GEOMETRY = drv.meter_geometry(32, 40, 32)
# A session table's readback data: the age and the initiator bit.
SESSION_DATA_BITS = contract.SESSION_AGE_BITS + 1


class SwitchBus:
    """The driver's register backend: the recorder, or a live bus while one is set."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.live = None

    def read32(self, addr):
        return (self.live or self.recorder).read32(addr)

    def write32(self, addr, value):
        return (self.live or self.recorder).write32(addr, value)


def descriptor_of(table):
    """The descriptor docs/tables.md gives a table of a program description: kind (with
    the counters, default and, for LPM, prefix store bits), keyWidth, size, dataWidth, base,
    ways/levels/range fields, latency, LPM fanout, pointer bits and levels in memory/range
    slots."""
    kind = KIND_CODES[table["kind"]] | contract.KIND_DEFAULT_ACTION
    if table.get("counters"):
        kind |= contract.KIND_COUNTERS
    geometry = extra = 0
    if table["kind"] == "exact":
        geometry = table.get("ways", 4)
    elif table["kind"] == "lpm":
        kind |= contract.KIND_PREFIX_STORE
        geometry = table["lpm"]["levels"]
        lpm = table["lpm"]
        extra = (lpm["fanout"] | lpm["pointerBits"] << contract.LPM_EXTRA_POINTER_SHIFT |
                 lpm["memoryLevels"] << contract.LPM_EXTRA_MEMORY_SHIFT)
    elif table["kind"] == "ternary":
        geometry = sum(1 for k in table["key"] if k.get("range"))
        extra = table["rangeSlots"] if geometry else 0
    elif table["kind"] == "mem_exact":
        # docs/tables.md "Memory-backed exact tables": whole bytes an entry, as many
        # entries in each beat of the port as fit, a bucket's beats (`bucketBytes`) in all,
        # at most MEMX_MAX_SLOTS.
        extra = contract.MEMX_ENTRY_KEY_BYTE + (table["keyWidth"] + 7) // 8 + (table["dataWidth"] + 7) // 8
        beat = table["memory"]["dataWidth"] // 8
        geometry = min(table["memory"]["bucketBytes"] // beat * (beat // extra), contract.MEMX_MAX_SLOTS)
    return drv.Descriptor(kind, table["keyWidth"], table["size"], table["dataWidth"],
                          (table["index"] + 1) * contract.INFO_WINDOW_BYTES, geometry, table.get("latency", 0),
                          extra)


def descriptor_of_meter(meter):
    """The descriptor docs/tables.md gives a meter array of a program description."""
    size = int(meter["size"])
    return drv.Descriptor(contract.KIND_METER, size.bit_length() - 1, size, METER_DATA_BITS,
                          (meter["index"] + 1) * contract.INFO_WINDOW_BYTES, METER_GEOMETRY,
                          meter.get("latency", 0), 1)


def descriptor_of_session(session):
    """The descriptor docs/sessions.md gives a session table of a program description:
    kind 5 with counters, the canonical key width, size, 17 bits of readback data, the ways,
    the latency; in memory ("Sessions in memory"), kind 8 without counters, the sessions a
    bucket for the ways, and the entry bytes in the extra word."""
    base = (session["index"] + 1) * contract.INFO_WINDOW_BYTES
    if "memory" in session:
        return drv.Descriptor(contract.KIND_MEM_SESSION, session["keyWidth"], session["size"], SESSION_DATA_BITS,
                              base, session["ways"], session["latency"],
                              contract.MEMS_ENTRY_KEY_BYTE + (session["keyWidth"] + 7) // 8)
    return drv.Descriptor(contract.KIND_SESSION | contract.KIND_COUNTERS, session["keyWidth"],
                          session["size"], SESSION_DATA_BITS, base, session["ways"], session["latency"], 0)


def descriptors_for(program):
    """[(index, Descriptor)] of a program description's tables, meter arrays and session
    tables."""
    out = [(t["index"], descriptor_of(t)) for t in program["tables"]]
    out += [(m["index"], descriptor_of_meter(m)) for m in program.get("meters", [])]
    out += [(s["index"], descriptor_of_session(s)) for s in program.get("sessions", [])]
    return sorted(out)


def snapshot_for(program, build_id=0):
    """A self-describing block (address -> value, as driver.read_info_block returns it)
    for a program description: what the hardware should show for it."""
    objects = descriptors_for(program)
    snap = {contract.INFO_MAGIC: contract.INFO_MAGIC_VALUE, contract.INFO_VERSION: contract.INFO_VERSION_VALUE, contract.INFO_BUILD_ID: build_id,
            contract.INFO_OBJECTS: len(objects)}
    for i, (_, d) in enumerate(objects):
        for j, v in enumerate(d.words):
            snap[drv.descriptor_address(i) + 4 * j] = v
    return snap


@dataclass
class Update:
    """One table change: the driver call that makes it and the change of the model.
    Control.record runs the call on the recorder and keeps its register writes, to be
    performed on the DUT; a live change runs the call on the live bus instead. commit()
    changes the model, once the DUT has the change."""
    what: str
    call: object
    apply: object
    writes: list = None
    done: bool = field(default=False)

    def commit(self):
        if not self.done:
            self.apply()
        self.done = True


class Control:
    """The driver (on a SwitchBus over a RecordingBus of `snapshot`) and the model
    `program` (a tb.model.program.Program), changed together."""

    def __init__(self, snapshot, program):
        self.recorder = drv.RecordingBus(snapshot)
        self.bus = SwitchBus(self.recorder)
        self.dev = drv.Device(self.bus)
        self.model = program
        self.open_writes = self.recorder.take()
        self.number = {t.name: t.index for t in program.tables}
        self.number.update({m["name"]: m["index"] for m in program.meter_arrays})
        self.number.update({s.name: s.index for s in program.sessions.values()})

    def close(self):
        self.dev.close()

    # ------------------------------------------------------------------ the driver

    def record(self, update):
        """Runs the update's driver call on the recorder; returns its register writes. A
        refused call (MatchaError) must have written nothing."""
        assert self.bus.live is None, "a recorded change while the live bus is set"
        self.recorder.take()
        try:
            update.call()
        except drv.MatchaError:
            writes = self.recorder.take()
            assert writes == [], f"{update.what}: refused ({self.dev.last_error()}) but " \
                                 f"wrote {len(writes)} registers"
            raise
        update.writes = self.recorder.take()
        return update.writes

    # ------------------------------------------------------------------ changes

    def add(self, name, *entry, action, data=0):
        """The Update adding an entry: exact (key,), LPM (prefix, length), ternary (value,
        mask, priority), direct (index,). A direct table has no call by index: its entry is
        added by name, the layout loaded into the driver first (`dev.layout_load_text`)."""
        t = self.model[name]
        n = self.number[name]
        aid = t.action_id(action)
        adders = {"exact": self.dev.exact_add, "mem_exact": self.dev.mem_exact_add, "lpm": self.dev.lpm_add,
                  "ternary": self.dev.ternary_add,
                  "direct": lambda _, *args: self._direct_add(t, *args)}
        call = lambda: adders[t.kind](n, *entry, aid, data)  # noqa: E731
        apply = lambda: t.add(*entry, aid, data)  # noqa: E731
        return Update(f"{name} add {_entry_str(entry)} {t.action(aid).name}({data:#x})",
                      call, apply)

    def _direct_add(self, t, index, action_id, data):
        """A direct table's entry through the driver's entries by name: one value per key
        field (the first in the index's most significant bits), the action's parameters
        from its data."""
        keys, rest = [], index
        for _, width in reversed(t.key_parts):
            keys.insert(0, rest & ((1 << width) - 1))
            rest >>= width
        act = t.action(action_id)
        self.dev.entry_add(t.name, keys, act.name, [p.value(data) for p in act.params])

    def delete(self, name, *entry):
        t = self.model[name]
        n = self.number[name]
        deleters = {"exact": self.dev.exact_delete, "mem_exact": self.dev.mem_exact_delete,
                    "lpm": self.dev.lpm_delete,
                    "ternary": self.dev.ternary_delete}
        call = lambda: deleters[t.kind](n, *entry)  # noqa: E731
        return Update(f"{name} delete {_entry_str(entry)}", call, lambda: t.delete(*entry))

    def set_default(self, name, action, data=0):
        t = self.model[name]
        n = self.number[name]
        aid = t.action_id(action)
        call = lambda: self.dev.set_default(n, aid, data)  # noqa: E731
        return Update(f"{name} default {t.action(aid).name}({data:#x})", call,
                      lambda: t.set_default(aid, data))

    def meter_set(self, name, index, flags=0, cir=0, cburst=0, pir=0, pburst=0):
        """The Update setting meter `index` of array `name` in P4Runtime terms (recorded
        only): the model takes the setting in the hardware's units as the driver wrote it
        into the staging registers, with full buckets, at tick 0 (tests that cannot know a
        frame's tick use rates of 0)."""
        n = self.number[name]
        data = (n + 1) * contract.INFO_WINDOW_BYTES + contract.WIN_DATA
        setting = {}

        def call():
            self.dev.meter_set(n, index, flags, cir, cburst, pir, pburst)
            w = [self.recorder.staging.get(data + 4 * i, 0) for i in range(contract.METER_WRITE_WORDS)]
            setting["hw"] = meter_regs.from_words(w)

        return Update(f"{name}[{index}] meter_set flags {flags:#x} CIR {cir} CBS {cburst} "
                      f"PIR {pir} PBS/EBS {pburst}", call,
                      lambda: self.model.meters[name].configure(index, setting["hw"], 0))

    def meter_set_off(self, name, index):
        """The Update unconfiguring meter `index` of array `name` (every frame green)."""
        n = self.number[name]
        return Update(f"{name}[{index}] unconfigured",
                      lambda: self.dev.meter_set(n, index, off=True),
                      lambda: self.model.meters[name].configure(index, None, 0))

    def session_set_policy(self, name, policy):
        """The Update setting a session table's full policy (drv.SESSION_PUNT or _DROP)."""
        stage = self.model.sessions[name]

        def apply():
            stage.table.drop_on_full = policy == drv.SESSION_DROP

        return Update(f"{name} full policy {'drop' if policy == drv.SESSION_DROP else 'punt'}",
                      lambda: self.dev.session_set_policy(self.number[name], policy), apply)

    def clear(self, name):
        t = self.model[name]
        return Update(f"{name} clear", lambda: self.dev.table_clear(self.number[name]),
                      t.clear)

    # -------------------------------------------------- reads (on a live bus only)

    def get_default(self, name):
        """(action id, data) the hardware holds as the miss action (live bus)."""
        return self.dev.get_default(self.number[name])

    def table_counters(self, name):
        """(hits, misses) through the driver (live bus)."""
        hits, misses = ctypes.c_uint64(), ctypes.c_uint64()
        self.dev._call("matcha_table_counters", self.number[name], ctypes.byref(hits),
                       ctypes.byref(misses))
        return hits.value, misses.value

    def entry_counters(self, name, entry, reset=False):
        """(packets, bytes) of one entry through the driver's by-key call (live bus); with
        `reset` the entry's count restarts from 0 (the model's too)."""
        t = self.model[name]
        by_key = {"exact": self.dev.exact_counters, "lpm": self.dev.lpm_counters,
                  "ternary": self.dev.ternary_counters}
        got = by_key[t.kind](self.number[name], *entry_args(entry), reset=reset)
        if reset:
            t.reset_entry_counters(entry)
        return got

    def index_counters(self, name, index):
        """(packets, bytes) of one counter index, raw (live bus)."""
        return self.dev.counters_read(self.number[name], index)


def entry_args(entry):
    """An entry's identity as the model lists it (an exact key is a bare int) as the
    argument tuple of add/delete/counters: (key,), (prefix, length), (value, mask,
    priority)."""
    return entry if isinstance(entry, tuple) else (entry,)


def _entry_str(entry):
    return "(" + ", ".join(f"{v:#x}" if v > 9 else str(v) for v in entry) + ")"


def range_pairs(lo, hi, bits=16):
    """(value, mask) pairs covering lo..hi exactly: the driver's range split."""
    return drv.range_to_prefixes(lo, hi, bits)
