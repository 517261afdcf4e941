# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of ternary tables with range fields (docs/tables.md, "Range fields"):
matcha_ternary_range_table (the inner 5-tuple, 104 bits, both ports range fields, 16
boundary slots each, 64 entries) and matcha_ternary_acl_table (8 more key bits in front,
4096 entries, 64 slots each).

The table is programmed through its window: `Ranges` keeps each field's boundary slots and
interval ids the way docs/tables.md orders their updates (a split: new id's span, its row
rebuilt, the slot shifted in from the top, the old id narrowed; a merge in reverse).
Entries are written at fixed indices. The oracle is a brute-force first match: the lowest
valid index whose ternary bits match and whose ports lie in its ranges; it knows nothing of
slots or ids.
"""

import os

import cocotb
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import classbench
from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common import sim
from tb.common.axil import AxiLiteRegisters
from tb.common.lookup_port import LookupPort

TIMEOUT_MS = 2000
PORT_FIELDS = [(0, 16), (16, 16)]  # (offset, width): destination port, source port
CONFIGS = {  # top level: (key bits, entries, slots, data bits)
    "matcha_ternary_range_table": (104, 64, 16, 32),
    "matcha_ternary_acl_table": (112, 4096, 64, 16),
}


class SlotsExhausted(Exception):
    pass


class Ranges:
    """One range field's boundary slots and interval ids (the driver's shadow of them)."""

    def __init__(self, field, width, slots):
        self.field, self.max, self.slots = field, (1 << width) - 1, slots
        self.clear()

    def clear(self):
        self.bounds = [0]          # slot s: its lo
        self.ids = [0]             # slot s: its interval id
        self.uses = {}             # boundary -> rules using it
        self.free = list(range(self.slots - 1, 0, -1))

    def needed(self, lo, hi):
        return [b for b in (lo, hi + 1) if 0 < b <= self.max]

    def missing(self, ranges):
        return {b for lo, hi in ranges for b in self.needed(lo, hi) if b not in self.uses}

    def span(self, s):
        end = self.bounds[s + 1] - 1 if s + 1 < len(self.bounds) else self.max
        return self.bounds[s], end


class RangeTableTb(AxiLiteRegisters):
    def __init__(self, dut):
        self.dut = dut
        self.name = os.environ.get("COCOTB_TOPLEVEL", dut._name)
        self.kw, self.size, self.slots, self.dw = CONFIGS[self.name]
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.fields = [Ranges(f, w, self.slots) for f, (_, w) in enumerate(PORT_FIELDS)]
        self.entries = {}  # index -> (value, mask, ranges, action, data)
        self.range_bits = sum(((1 << w) - 1) << o for o, w in PORT_FIELDS)

    async def start(self):
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        snapshot = await drv.read_info_block(self.read32)
        self.desc = drv.descriptors(snapshot)[0]
        assert (self.desc.kind, self.desc.key_bits, self.desc.size) == (contract.KIND_TERNARY, self.kw, self.size)
        assert (self.desc.geometry, self.desc.extra) == (len(PORT_FIELDS), self.slots), self.desc
        self.base, self.latency = self.desc.base, self.desc.latency
        assert self.latency == 9
        self.port = LookupPort(self.dut, self.latency)

    # ------------------------------------------------------------------ window

    async def words(self, offset, value, bits):
        for w in range((bits + 31) // 32):
            await self.write32(self.base + offset + 4 * w, value >> (32 * w) & 0xFFFFFFFF)

    async def cmd(self, op, index, key=0, mask=0, valid=True):
        await self.write32(self.base + contract.WIN_FLAGS, contract.FLAGS_VALID if valid else 0)
        await self.write32(self.base + contract.WIN_KEY, key)
        await self.write32(self.base + contract.WIN_MASK, mask)
        err = await self.window_command(self.base, op, index)
        assert err == contract.STATUS_ERROR_NONE, (op, hex(index), err)

    def at(self, r, i):
        return r.field << contract.RANGE_FIELD_SHIFT | i

    async def write_slot(self, r, s):
        valid = s < len(r.bounds)
        await self.cmd(contract.CMD_RANGE_SLOT, self.at(r, s), r.bounds[s] if valid else 0,
                       r.ids[s] if valid else 0, valid)

    async def split(self, r, b):
        """A boundary at b: the interval holding b keeps [start, b-1], a new id takes
        [b, end] (its row rebuilt, the same as the old one's for every entry written so
        far), the slot goes in by shifting the ones above it up from the top."""
        if not r.free or len(r.bounds) == r.slots:
            raise SlotsExhausted(f"range field {r.field}: all {r.slots} boundary slots in use")
        s = max(i for i, lo in enumerate(r.bounds) if lo < b)
        start, end = r.span(s)
        k = r.free.pop()
        await self.cmd(contract.CMD_RANGE_SPAN, self.at(r, k), b, end)
        await self.cmd(contract.CMD_RANGE_REBUILD, self.at(r, k))
        r.bounds.insert(s + 1, b)
        r.ids.insert(s + 1, k)
        for t in range(len(r.bounds) - 1, s, -1):
            await self.write_slot(r, t)
        await self.cmd(contract.CMD_RANGE_SPAN, self.at(r, r.ids[s]), start, b - 1)

    async def merge(self, r, b):
        """The boundary b no rule uses any more: the interval below widens over the one at
        b, then the slots above shift down over it and the top one is freed."""
        s = r.bounds.index(b)
        start, _ = r.span(s - 1)
        _, end = r.span(s)
        await self.cmd(contract.CMD_RANGE_SPAN, self.at(r, r.ids[s - 1]), start, end)
        r.free.append(r.ids[s])
        del r.bounds[s], r.ids[s]
        for t in range(s, len(r.bounds) + 1):
            await self.write_slot(r, t)

    async def write_entry(self, index, value, mask, ranges, action, data):
        """Boundaries first (a split changes no lookup), then the entry. Refused before
        anything is written when a field has too few slots left."""
        for r, rg in zip(self.fields, ranges):
            need = len(r.missing([rg]))
            if need > min(len(r.free), r.slots - len(r.bounds)):
                raise SlotsExhausted(f"range field {r.field}: all {r.slots} boundary slots in use "
                                     f"({len(r.bounds)} used, {need} more needed)")
        for r, (lo, hi) in zip(self.fields, ranges):
            for b in sorted(r.missing([(lo, hi)])):
                await self.split(r, b)
        for r, (lo, hi) in zip(self.fields, ranges):
            for b in r.needed(lo, hi):
                r.uses[b] = r.uses.get(b, 0) + 1
        o = [off for off, _ in PORT_FIELDS]
        key = value | sum(lo << off for (lo, _), off in zip(ranges, o))
        hib = mask | sum(hi << off for (_, hi), off in zip(ranges, o))
        await self.write32(self.base + contract.WIN_PRIORITY, 0)
        await self.words(contract.WIN_KEY, key, self.kw)
        await self.words(contract.WIN_MASK, hib, self.kw)
        await self.words(contract.WIN_DATA, data, self.dw)
        await self.write32(self.base + contract.WIN_FLAGS, contract.FLAGS_VALID | action << 8)
        assert await self.window_command(self.base, contract.CMD_WRITE, index) == contract.STATUS_ERROR_NONE
        self.entries[index] = (value, mask, ranges, action, data)

    async def delete_entry(self, index):
        """The entry invalidated, then the boundaries nobody uses any more merged away."""
        _, _, ranges, _, _ = self.entries.pop(index)
        await self.write32(self.base + contract.WIN_FLAGS, 0)
        assert await self.window_command(self.base, contract.CMD_WRITE, index) == contract.STATUS_ERROR_NONE
        for r, (lo, hi) in zip(self.fields, ranges):
            for b in r.needed(lo, hi):
                r.uses[b] -= 1
                if not r.uses[b]:
                    del r.uses[b]
                    await self.merge(r, b)

    # ------------------------------------------------------------------ oracle

    def answer(self, key, entries=None):
        entries = self.entries if entries is None else entries
        for i in sorted(entries):
            value, mask, ranges, action, data = entries[i]
            if key & mask != value:
                continue
            if all(lo <= key >> off & 0xFFFF <= hi for (lo, hi), (off, _) in zip(ranges, PORT_FIELDS)):
                return (True, action, data, i)
        return (False, 0, 0, 0)

    # ------------------------------------------------------------------ lookups

    async def stream(self, keys, until=None):
        await self.port.stream(keys, until)

    async def collect(self):
        """[(key, result)] of every key offered so far."""
        return [(k, r) for _, k, r in await self.port.collect()]

    async def lookups(self, keys, oracles=None):
        """Every key looked up back to back; each result must be one of the oracles'
        answers (entry dicts; default: the table now). Returns the hits."""
        await self.stream(keys)
        oracles = oracles or [self.entries]
        hits = 0
        for k, got in await self.collect():
            answers = [self.answer(k, o) for o in oracles]
            assert got in answers, f"key {k:#x}: DUT {got}, oracle {' or '.join(map(str, answers))}"
            hits += got[0]
        return hits

    # ------------------------------------------------------------------ rules, keys

    def encode(self, rule):
        """A ClassBench-like rule as (value, mask, port ranges) of this key."""
        src, sl, dst, dl, proto, sport, dport = rule
        m = lambda n, w: ((1 << n) - 1) << (w - n)  # noqa: E731
        pmask = 0xFF if proto is not None else 0
        value = (src << 56 | dst << 24 | (proto or 0) << 16) << 16
        mask = (m(sl, 32) << 56 | m(dl, 32) << 24 | pmask << 16) << 16
        return value & mask, mask, [dport, sport]

    def rule_key(self, rng, entry):
        """A key inside the entry's rule, or near its port boundaries."""
        value, mask, ranges, _, _ = entry
        full = (1 << self.kw) - 1
        key = value | rng.getrandbits(self.kw) & ~mask & full & ~self.range_bits
        for (lo, hi), (off, _) in zip(ranges, PORT_FIELDS):
            p = rng.choice([lo, hi, rng.randint(lo, hi), max(0, lo - 1), min(0xFFFF, hi + 1)])
            key |= p << off
        return key

    def keys(self, rng, n):
        es = list(self.entries.values())
        return [self.rule_key(rng, rng.choice(es)) if es and rng.random() < 0.9 else rng.getrandbits(self.kw)
                for _ in range(n)]


async def fill(tb, rng, gen, count, indices=None):
    """Writes `count` generated rules at `indices` (default 0..count-1), stopping at the
    first that would need more boundary slots than are left. Returns how many fit."""
    indices = indices or list(range(count))
    for n, i in enumerate(indices[:count]):
        value, mask, ranges = tb.encode(gen.rule())
        try:
            await tb.write_entry(i, value, mask, ranges, rng.randrange(4), rng.getrandbits(tb.dw))
        except SlotsExhausted:
            return n
    return count


async def classbench_rules(dut, name):
    """ClassBench-like rules (wildcard, exact, 0-1023, 1024-65535, random and overlapping
    port ranges) fill the table as far as the boundary slots allow; keys inside, at and
    just past every rule's port boundaries answer as the first-match oracle does."""
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = RangeTableTb(dut)
    await tb.start()
    gen = classbench.RuleGenerator(rng)
    # On the 4096-entry table a few dozen rules spread over it, the last index included
    # (every boundary split rebuilds a row over all entries).
    count = min(tb.size, 48)
    indices = sorted(rng.sample(range(tb.size - 1), count - 1)) + [tb.size - 1] if tb.size > count else None
    n = await fill(tb, rng, gen, count, indices)
    dut._log.info("%d rules written; boundaries in use: %s", n, [len(r.bounds) for r in tb.fields])
    # A rule needs at most two new boundaries a field, so (slots - 1) // 2 rules always fit.
    assert n >= (tb.slots - 1) // 2 or n == count, n
    hits = await tb.lookups(tb.keys(rng, 1500))
    assert hits > 300, hits


@sim.only_on("matcha_ternary_range_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_classbench_rules(dut):
    await classbench_rules(dut, "classbench_rules")


# The 4096-entry unit, the Corundum build's ACL, at its real size: a soak scenario (its model
# and run take over a minute of make test's budget); test_classbench_rules runs the same
# rules' shapes on the 64-entry unit in make test.
@sim.soak
@sim.only_on("matcha_ternary_acl_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_classbench_rules_at_scale(dut):
    await classbench_rules(dut, "classbench_rules_at_scale")


@sim.only_on("matcha_ternary_range_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_every_boundary(dut):
    """Nested and adjacent ranges on one port: every boundary value and its neighbours,
    0 and 65535 included, with the other port anywhere."""
    rng, _ = cocotb_util.test_rng(dut, "every_boundary")
    tb = RangeTableTb(dut)
    await tb.start()
    ranges = [(80, 80), (0, 1023), (1024, 65535), (100, 200), (150, 150), (65535, 65535), (0, 0), (200, 300)]
    for i, rg in enumerate(ranges):
        await tb.write_entry(i, 0, 0, [rg, (0, 65535)] if i % 2 else [(0, 65535), rg], i % 4, i + 1)
    ports = sorted({p for lo, hi in ranges for p in (lo - 1, lo, hi, hi + 1) if 0 <= p <= 0xFFFF})
    keys = [p << off | rng.getrandbits(16) << (16 - off) for p in ports for off in (0, 16)]
    assert await tb.lookups(keys) > 0


@sim.only_on("matcha_ternary_range_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_slots_exhausted(dut):
    """Rules with distinct exact ports use two boundaries each: once a field's slots are
    all in use the next such rule is refused before anything is written, and the table
    still answers for every rule; deleting a rule frees its boundaries for a new one."""
    rng, _ = cocotb_util.test_rng(dut, "slots_exhausted")
    tb = RangeTableTb(dut)
    await tb.start()
    r = tb.fields[0]
    n, port = 0, 1000
    while True:
        try:
            await tb.write_entry(n, 0, 0, [(port, port), (0, 65535)], 1, n)
        except SlotsExhausted as e:
            assert "all %d boundary slots" % tb.slots in str(e)
            break
        n, port = n + 1, port + 7
    assert len(r.bounds) >= tb.slots - 1 and n == (tb.slots - 1) // 2, (len(r.bounds), n)
    keys = [p for q in range(1000, port, 7) for p in (q - 1, q, q + 1)]
    assert await tb.lookups(keys) == n
    await tb.delete_entry(0)
    await tb.write_entry(0, 0, 0, [(port, port), (0, 65535)], 2, 99)
    assert await tb.lookups(keys + [port]) == n


@sim.only_on("matcha_ternary_range_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_churn_under_lookups(dut):
    """Rules with new port ranges added and deleted (boundaries split and merged) while
    keys are looked up every clock: every result is the answer from before the change or
    from after it."""
    rng, _ = cocotb_util.test_rng(dut, "churn_under_lookups")
    tb = RangeTableTb(dut)
    await tb.start()
    gen = classbench.RuleGenerator(rng)
    free = list(range(min(tb.size, 64)))
    rng.shuffle(free)
    await fill(tb, rng, gen, 8, free[:8])
    free = free[8:]
    total = 0
    for step in range(24):
        before = dict(tb.entries)
        if tb.entries and (not free or rng.random() < 0.45):
            i = rng.choice(sorted(tb.entries))
            change = tb.delete_entry(i)
            free.append(i)
        else:
            value, mask, ranges = tb.encode(gen.rule())
            ranges = [(lo, hi) for lo, hi in ranges]
            i = free.pop()
            if sum(len(r.missing([rg])) for r, rg in zip(tb.fields, ranges)) > \
                    min(len(r.free) for r in tb.fields):
                free.append(i)
                continue
            change = tb.write_entry(i, value, mask, ranges, rng.randrange(4), rng.getrandbits(tb.dw))
        keys = tb.keys(rng, 64) + [tb.rule_key(rng, e) for e in before.values()]
        stop = False
        task = cocotb.start_soon(tb.stream(keys, until=lambda: stop))
        await ClockCycles(dut.clk, 3)
        await change
        after = dict(tb.entries)
        await ClockCycles(dut.clk, 3)
        stop = True
        await task
        for k, got in await tb.collect():
            answers = [tb.answer(k, before), tb.answer(k, after)]
            assert got in answers, f"step {step}, key {k:#x}: DUT {got}, before/after {answers}"
            total += 1
    dut._log.info("%d lookups during changes; boundaries now %s", total, [len(r.bounds) for r in tb.fields])
    # Keys stream every clock of every change: at least the 6 clocks around it and the 22 of
    # one entry WRITE (6 + max(16, R) at R = 16) in each of the 24 steps.
    assert total >= 24 * (6 + 22), total


@sim.only_on("matcha_ternary_range_table")
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_range_commands_errors(dut):
    """A range command on a field or slot the table does not have fails with
    ERROR_INDEX_RANGE."""
    tb = RangeTableTb(dut)
    await tb.start()
    for op in (contract.CMD_RANGE_SLOT, contract.CMD_RANGE_SPAN, contract.CMD_RANGE_REBUILD):
        for index in (len(PORT_FIELDS) << contract.RANGE_FIELD_SHIFT, tb.slots, 0xFFFFFFFF):
            assert await tb.window_command(tb.base, op, index) == contract.STATUS_ERROR_INDEX_RANGE, (op, index)
