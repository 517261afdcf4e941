# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of one match-table unit: lookups per clock and lookup latency in clocks.

Works on any unit with the table interface of docs/tables.md (AXI4-Lite `s_axil`, a
`lookup` Flow in, a `result` Flow out) and takes what it needs from descriptor 0 of the
self-describing block: kind, key and data widths, size, ways or levels, and the declared
latency. It loads a few entries through the control window (exact: the CRC-64/XZ cuckoo
slots and ternary: value/mask entries, written register by register from docs/tables.md;
LPM: prefixes added by the C driver, which writes results and whole B+tree nodes), then
offers a new key on `lookup_valid`/`lookup_payload` every clock, hitting and missing keys
mixed, in two phases:

- `idle`: lookups only;
- `writes`: the same, while WRITE commands run back to back on the control window from
  the first quarter of the stream to the third. None of them changes an answer (free
  exact slots; LPM results no leaf points at, and the tree's nodes written again as they
  are; spare ternary entries no key of the stream equals), so every answer can still be
  checked.

A monitor samples the ports once per clock, after the clock edge, so a key and a result
are both timestamped with the clock during which they are on the ports. Per phase it
reports results per clock between the first and the last result (one per key, so 1.000
when the unit takes a key every clock), the latency of every key (result clock - key
clock), and the answers that differ from an oracle of the loaded entries (hit, action id,
action data, entryIndex; a miss's action is not checked; LPM: the longest of the added
prefixes that covers the key, by brute force).

Then, on the idle unit, a WRITE, a READ and a CLEAR command, each timed in clocks its
table command keeps STATUS busy (the window's pending flag, sampled every clock).

Results go to the JSON file named by MATCHA_BENCH_OUT, written before the checks. The
test fails if a phase has fewer results than keys, results per clock below 1, a latency
that varies or differs from the descriptor's, or a wrong answer.
"""

import json
import os
from itertools import zip_longest

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters
from tb.lpm_table.lpm_table_tb import Oracle, rand_length, truncate
from tb.model.hashing import exact_index

KEYS = int(os.environ.get("MATCHA_BENCH_KEYS", "2000"))
KIND_NAMES = {contract.KIND_EXACT: "exact", contract.KIND_LPM: "lpm", contract.KIND_TERNARY: "ternary"}
DEFAULT_ACTION = 1 << 9  # descriptor kind bit 9: a miss applies the default action
TABLE = 0  # the unit's table: descriptor 0


def words(bits):
    return (bits + 31) // 32


class Unit(AxiLiteRegisters):
    """The DUT's control window and lookup ports."""

    def __init__(self, dut):
        self.dut = dut
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.clock = 0
        self.recording = False
        self.keys = []     # (clock, key) of every lookup_valid clock while recording
        self.results = []  # (clock, hit, action id, action data, entryIndex)

    async def start(self):
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        cocotb.start_soon(self._monitor())
        self.snapshot = snap = await drv.read_info_block(self.read32)
        assert snap[contract.INFO_MAGIC] == 0x4D544348, f"MAGIC reads {snap[contract.INFO_MAGIC]:#x}"
        assert snap[contract.INFO_OBJECTS] >= 1, "no descriptor"
        self.desc = drv.descriptors(snap)[0]
        self.base = self.desc.base
        kw = len(self.dut.lookup_payload)
        assert kw == self.desc.key_bits, \
            f"lookup_payload has {kw} bits, the descriptor says {self.desc.key_bits}"

    async def _monitor(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            self.clock += 1
            await ReadOnly()
            if not self.recording:
                continue
            if int(dut.lookup_valid.value):
                self.keys.append((self.clock, int(dut.lookup_payload.value)))
            if int(dut.result_valid.value):
                self.results.append((self.clock, bool(dut.result_payload_hit.value),
                                     int(dut.result_payload_actionId.value),
                                     int(dut.result_payload_actionData.value),
                                     int(dut.result_payload_entryIndex.value)))

    async def write_wide(self, offset, value, bits):
        for w in range(words(bits)):
            await self.write32(self.base + offset + 4 * w, (value >> (32 * w)) & 0xFFFFFFFF)

    async def write_entry(self, index, action, data, key=None, mask=None, valid=True):
        """Staging registers, then CMD WRITE; waits until STATUS is no longer busy."""
        d = self.desc
        if key is not None:
            await self.write_wide(contract.WIN_KEY, key, d.key_bits)
        if mask is not None:
            await self.write_wide(contract.WIN_MASK, mask, d.key_bits)
        await self.write_wide(contract.WIN_DATA, data, d.data_bits)
        await self.write32(self.base + contract.WIN_FLAGS, action << 8 | int(valid))
        error = await self.window_command(self.base, contract.CMD_WRITE, index)
        assert error == contract.STATUS_ERROR_NONE, f"WRITE of entry {index:#x}: STATUS error {error}"


# ------------------------------------------------------------------ table contents
#
# Each loader writes its entries and returns a Table: `answer(key)` is the expected
# (hit, action id, action data, entryIndex) and `spares` the writes for the `writes`
# phase, none of which changes an answer for the keys `hit_key`/`miss_key` produce.

class Table:
    def __init__(self):
        self.spares = []  # coroutine functions, each one WRITE command

    def hit_key(self, rng):
        raise NotImplementedError

    def miss_key(self, rng):
        raise NotImplementedError

    def answer(self, key):
        raise NotImplementedError


class ExactTable(Table):
    def __init__(self, unit, rng):
        super().__init__()
        d = unit.desc
        self.unit, self.kw, self.ways = unit, d.key_bits, d.geometry
        assert self.ways and d.size % self.ways == 0, f"exact table of {d.size} entries, {self.ways} ways"
        self.slots = d.size // self.ways
        self.entries = {}  # index -> (key, action, data)
        self.by_key = {}
        self.reserved = set()
        self.rng = rng

    def place(self, key):
        for w in range(self.ways):
            i = w * self.slots + exact_index(key, self.kw, w, self.slots)
            if i not in self.entries and i not in self.reserved:
                return i
        return None

    async def load(self, n, spares):
        rng, d = self.rng, self.unit.desc
        while len(self.entries) < n:
            k = rng.getrandbits(self.kw)
            i = self.place(k)
            if i is None or k in self.by_key:
                continue
            a, data = rng.randrange(256), rng.getrandbits(d.data_bits)
            await self.unit.write_entry(i, a, data, key=k)
            self.entries[i] = (k, a, data)
            self.by_key[k] = (True, a, data, i)
        self.spare_keys = set()
        while len(self.spare_keys) < spares:
            k = rng.getrandbits(self.kw)
            i = self.place(k)
            if i is None or k in self.by_key or k in self.spare_keys:
                continue
            self.reserved.add(i)
            self.spare_keys.add(k)
            a, data = rng.randrange(256), rng.getrandbits(d.data_bits)
            self.spares.append(lambda i=i, k=k, a=a, data=data:
                               self.unit.write_entry(i, a, data, key=k))
        self.keys = list(self.by_key)

    def hit_key(self, rng):
        return rng.choice(self.keys)

    def miss_key(self, rng):
        while True:
            k = rng.getrandbits(self.kw)
            if k not in self.by_key and k not in self.spare_keys:
                return k

    def answer(self, key):
        return self.by_key.get(key, (False, None, None, None))


class LpmTable(Table):
    """Prefixes added by the C driver, as tb/lpm_table loads them: libmatcha runs against
    the recording bus of tb/common/driver.py and its writes (results, whole B+tree nodes)
    are performed on the unit. Lengths as route tables have them, around a few bases, so
    that prefixes nest. `answer` is the brute-force longest-prefix match of the unit test's
    Oracle over the added prefixes; entryIndex is the result the driver wrote the prefix
    to. Spares: WRITEs of results no prefix has (no leaf points at them; valid, so that a
    lookup reaching one would show), and every node of the tree written again as it is."""

    def __init__(self, unit, rng):
        super().__init__()
        d = unit.desc
        self.unit, self.kw, self.levels, self.rng = unit, d.key_bits, d.geometry, rng
        self.oracle = Oracle(d)
        self.result = {}  # (value, length) -> the result index the driver wrote it to
        self.nodes = {}   # node INDEX -> the recorded writes of its last WRITE

    async def replay(self, writes):
        u = self.unit
        await drv.replay(writes, u.write32, u.read32, skip_reads=True)
        index = u.base + contract.WIN_INDEX
        for group in drv.commands(writes):
            cmd = group[-1]
            if not cmd.is_command or cmd.value != contract.CMD_WRITE:
                continue
            target = next(w.value for w in reversed(group) if w.addr == index)
            if target >> contract.LPM_LEVEL_SHIFT < self.levels:
                self.nodes[target] = group

    def results_written(self, writes):
        """Result indexes a run of recorded writes names in INDEX."""
        index = self.unit.base + contract.WIN_INDEX
        return {w.value & contract.LPM_ADDRESS_MASK for w in writes
                if w.addr == index and w.value >> contract.LPM_LEVEL_SHIFT == self.levels}

    async def load(self, n, spares):
        rng, d, u = self.rng, self.unit.desc, self.unit
        n = min(n, d.size - spares)
        assert n >= 1, f"LPM table of {d.size} prefixes: too small"
        bus = drv.RecordingBus(u.snapshot)
        dev = drv.Device(bus)
        await self.replay(bus.take())
        bases = [rng.getrandbits(self.kw) for _ in range(4)]
        while len(self.oracle.prefixes) < n:
            length = rand_length(self, rng)
            p = (truncate(rng.choice(bases) ^ rng.getrandbits(self.kw - self.kw // 4),
                          length, self.kw), length)
            # No /0: a default route would leave no key to miss.
            if length == 0 or p in self.oracle.prefixes:
                continue
            a, data = rng.randrange(256), rng.getrandbits(d.data_bits)
            dev.lpm_add(TABLE, *p, a, data)
            writes = bus.take()
            written = self.results_written(writes)
            assert len(written) == 1, f"/{length} {p[0]:#x}: the add wrote results {written}"
            await self.replay(writes)
            self.oracle.prefixes[p] = (a, data)
            self.result[p] = written.pop()
        free = sorted(set(range(d.size)) - set(self.result.values()))
        results = [lambda r=r, a=rng.randrange(256), data=rng.getrandbits(d.data_bits):
                   u.write_entry(self.levels << contract.LPM_LEVEL_SHIFT | r, a, data)
                   for r in rng.sample(free, spares)]
        nodes = [lambda group=group: drv.replay(group, u.write32, u.read32)
                 for group in self.nodes.values()]
        # Results and nodes alternate, a result first (the WRITE command_clocks times).
        self.spares = [w for pair in zip_longest(results, nodes) for w in pair if w]
        self.keys = sorted(self.oracle.prefixes)

    def _inside(self, rng, value, length):
        low = self.kw - length
        return value | (rng.getrandbits(low) if low else 0)

    def hit_key(self, rng):
        """A key under a random prefix: its first or last, or any."""
        value, length = rng.choice(self.keys)
        last = value | ((1 << (self.kw - length)) - 1)
        return rng.choice((value, last, self._inside(rng, value, length)))

    def miss_key(self, rng):
        """A key no prefix covers: just outside a prefix, or any (a table with a short
        prefix covers nearly every key: then a hit)."""
        mask = (1 << self.kw) - 1
        for _ in range(1000):
            value, length = rng.choice(self.keys)
            last = value | ((1 << (self.kw - length)) - 1)
            k = rng.choice(((value - 1) & mask, (last + 1) & mask, rng.getrandbits(self.kw)))
            if not self.oracle.answer(k)[0]:
                return k
        return self.hit_key(rng)

    def answer(self, key):
        hit, a, data, prefix = self.oracle.answer(key)
        return (hit, a, data, self.result[prefix]) if hit else (False, None, None, None)


class TernaryTable(Table):
    """Entries at the lowest indexes, each a random value under a random mask; spares at
    the top indexes, exact values (full mask) no key of the stream equals."""

    def __init__(self, unit, rng):
        super().__init__()
        d = unit.desc
        self.unit, self.kw, self.rng = unit, d.key_bits, rng
        self.entries = []  # (value, mask, action, data), index = position

    async def load(self, n, spares):
        rng, d, u = self.rng, self.unit.desc, self.unit
        n = min(n, d.size - spares)
        assert n >= 1, f"ternary table of {d.size} entries: too small"
        full = (1 << self.kw) - 1
        for i in range(n):
            # Care about most of the bits, so that random keys mostly miss.
            mask = full
            for _ in range(min(self.kw // 4, 8)):
                mask &= ~(1 << rng.randrange(self.kw))
            value = rng.getrandbits(self.kw) & mask
            a, data = rng.randrange(256), rng.getrandbits(d.data_bits)
            await u.write_entry(i, a, data, key=value, mask=mask)
            self.entries.append((value, mask, a, data))
        self.spare_values = set()
        while len(self.spare_values) < spares:
            v = rng.getrandbits(self.kw)
            if not self.answer(v)[0]:
                self.spare_values.add(v)
        for j, v in enumerate(sorted(self.spare_values)):
            i = d.size - 1 - j
            a, data = rng.randrange(256), rng.getrandbits(d.data_bits)
            self.spares.append(lambda i=i, v=v, a=a, data=data:
                               u.write_entry(i, a, data, key=v, mask=full))

    def hit_key(self, rng):
        value, mask, _, _ = rng.choice(self.entries)
        full = (1 << self.kw) - 1
        return value | (rng.getrandbits(self.kw) & ~mask & full)

    def miss_key(self, rng):
        for _ in range(1000):
            k = rng.getrandbits(self.kw)
            if not self.answer(k)[0] and k not in self.spare_values:
                return k
        return self.hit_key(rng)  # a table that matches (nearly) every key

    def answer(self, key):
        for i, (value, mask, a, data) in enumerate(self.entries):
            if key & mask == value:
                return True, a, data, i
        return False, None, None, None


LOADERS = {contract.KIND_EXACT: ExactTable, contract.KIND_LPM: LpmTable, contract.KIND_TERNARY: TernaryTable}


# ------------------------------------------------------------------------ the bench

def key_stream(rng, table, n):
    """`n` keys, about half hitting, with runs of one key repeated back to back."""
    keys = []
    while len(keys) < n:
        k = table.hit_key(rng) if rng.random() < 0.5 else table.miss_key(rng)
        keys += [k] * (rng.randrange(2, 5) if rng.random() < 0.05 else 1)
    return keys[:n]


async def run_phase(unit, table, keys, with_writes):
    dut = unit.dut
    unit.keys, unit.results = [], []
    unit.recording = True
    writes = []  # (clock of the first staging write, clock STATUS read not busy)
    done = False

    async def commands():
        start = unit.clock
        while unit.clock < start + len(keys) // 4:
            await RisingEdge(dut.clk)
        i = 0
        while not done and unit.clock < start + 3 * len(keys) // 4:
            t0 = unit.clock
            await table.spares[i % len(table.spares)]()
            writes.append((t0 - start, unit.clock - start))
            i += 1

    task = cocotb.start_soon(commands()) if with_writes else None
    for k in keys:
        dut.lookup_valid.value = 1
        dut.lookup_payload.value = k
        await RisingEdge(dut.clk)
    dut.lookup_valid.value = 0
    done = True
    if task is not None:
        await task
    await ClockCycles(dut.clk, unit.desc.latency + 8)
    unit.recording = False

    issued, results = unit.keys, unit.results
    assert [k for _, k in issued] == keys, "the monitor saw other keys than were driven"
    latencies = [r[0] - i[0] for i, r in zip(issued, results)]
    span = results[-1][0] - results[0][0] + 1 if results else 0
    wrong = []
    hits = 0
    for (c, k), (_, hit, a, data, index) in zip(issued, results):
        want = table.answer(k)
        got = (hit, a, data, index) if hit else (False, None, None, None)
        hits += hit
        if got != want:
            wrong.append(f"key {k:#x} (clock {c}): got {got}, want {want}")
    return {
        "keys": len(keys),
        "results": len(results),
        "results_per_clock": len(results) / span if span else 0.0,
        "result_span_clocks": span,
        "latency_min": min(latencies, default=None),
        "latency_max": max(latencies, default=None),
        "hits": hits,
        "misses": len(results) - hits,
        "wrong": len(wrong),
        "wrong_first": wrong[:5],
        "writes": len(writes),
        "write_clocks": [writes[0][0], writes[-1][1]] if writes else None,
        "write_mean_clocks": sum(b - a for a, b in writes) / len(writes) if writes else None,
    }


async def command_clocks(unit, table):
    """Clocks each command keeps the table's part of STATUS busy on an idle unit: a WRITE
    (a spare entry again), a READ of index 0, then a CLEAR. 0 for a command done in the
    clock it is taken (STATUS never busy), None where one command showed several spans."""
    busy = cocotb_util.BusyMonitor(unit.dut)
    commands = (("write", table.spares[0]),
                ("read", lambda: unit.window_command(unit.base, contract.CMD_READ, 0)),
                ("clear", lambda: unit.window_command(unit.base, contract.CMD_CLEAR)))
    out = {}
    for name, command in commands:
        busy.spans.clear()
        error = await command()
        assert not error, f"{name.upper()}: STATUS error {error}"
        await ClockCycles(unit.dut.clk, 2)
        out[name] = busy.spans[0] if len(busy.spans) == 1 else None if busy.spans else 0
    return out


def failures(res):
    """What is wrong with one unit's result, [] if nothing."""
    out = []
    for name, p in res["phases"].items():
        if p["results"] != p["keys"]:
            out.append(f"{name}: {p['results']} results for {p['keys']} keys")
        if p["results_per_clock"] < 1:
            out.append(f"{name}: {p['results_per_clock']:.4f} results per clock")
        if p["latency_min"] != p["latency_max"]:
            out.append(f"{name}: latency varies, {p['latency_min']}..{p['latency_max']} clocks")
        elif p["latency_min"] != res["latency_declared"]:
            out.append(f"{name}: latency {p['latency_min']} clocks, descriptor says "
                       f"{res['latency_declared']}")
        if p["wrong"]:
            out.append(f"{name}: {p['wrong']} wrong answers, first {p['wrong_first']}")
        if name == "writes" and not p["writes"]:
            out.append(f"{name}: no WRITE command completed during the stream")
    out += [f"{name.upper()}: several busy spans for one command"
            for name, clocks in res["commands"].items() if clocks is None]
    return out


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def bench_lookups(dut):
    rng, seed = cocotb_util.test_rng(dut, "bench_lookups")
    unit = Unit(dut)
    await unit.start()
    d = unit.desc
    kind = d.kind & 0xFF
    assert kind in LOADERS, f"descriptor kind {kind}: no loader for it"
    table = LOADERS[kind](unit, rng)
    await table.load(n=min(d.size // 2, 32), spares=4)
    dut._log.info("%s: %s, loaded", os.environ.get("COCOTB_TOPLEVEL", dut._name), d)
    await ClockCycles(dut.clk, 10)
    res = {
        "unit": os.environ.get("COCOTB_TOPLEVEL", dut._name),
        "kind": KIND_NAMES[kind],
        "key_bits": d.key_bits, "size": d.size, "data_bits": d.data_bits,
        "geometry": d.geometry,
        "latency_declared": d.latency,
        "seed": seed,
        "phases": {},
    }
    for name, with_writes in (("idle", False), ("writes", True)):
        keys = key_stream(rng, table, KEYS)
        res["phases"][name] = await run_phase(unit, table, keys, with_writes)
        dut._log.info("%s: %s", name, res["phases"][name])
        await ClockCycles(dut.clk, 10)
    res["commands"] = await command_clocks(unit, table)
    dut._log.info("commands: %s", res["commands"])
    res["failures"] = failures(res)
    with open(os.environ["MATCHA_BENCH_OUT"], "w") as f:
        json.dump(res, f, indent=1)
    assert not res["failures"], "; ".join(res["failures"])
