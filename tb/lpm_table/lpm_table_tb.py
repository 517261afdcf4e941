# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of the LPM tables matcha_lpm32_table (32-bit keys, 128 prefixes in a B+tree
of 4-slot nodes: 8 levels), matcha_lpm128_table (128-bit keys, 32 prefixes, 3-slot nodes:
6 levels) and matcha_lpm32_mem_table (matcha_lpm32_table with its two lowest levels in a
memory, each behind a port of its own, `m_axi_0` and `m_axi_1`, each level given 64
clocks: tb/common/late_memory.py answers in MEMORY_LATENCY), all with 32-bit action data.

Tables are loaded by the C driver: libmatcha runs against the recording bus of
tb/common/driver.py and the register writes it makes are then performed on the DUT over
AXI4-Lite, each command's STATUS checked. Nothing here builds a tree.

The oracle (`Oracle`) is a brute-force longest-prefix match over the prefixes the test
added: a lookup hits with the action id and data of the longest prefix covering the key,
or misses if none does. entryIndex is the driver's choice: it must stay the same for a
prefix while the prefix is in the table, and differ between prefixes present together.
An add must fail for lack of room exactly when the table holds `size` prefixes
(`Oracle.overflow`): any `size` prefixes fit (docs/tables.md).
"""

import os

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common import sim
from tb.common.axil import AxiLiteRegisters
from tb.common.late_memory import LateMemory

TABLE = 0
TIMEOUT_MS = 200
# matcha_lpm32_mem_table: the clocks its memory takes to answer a read.
MEMORY_LATENCY = 24
# The units with every level on chip: the tests of the driver's tree alone run on them
# only: the memory unit's tree is matcha_lpm32_table's.
ON_CHIP = ("matcha_lpm32_table", "matcha_lpm128_table")
# The unit with its two lowest levels in memory: every test of lookups and updates runs on
# it too, and its own memory tests on it alone.
MEMORY_UNIT = "matcha_lpm32_mem_table"

# What each DUT's descriptor 0 must say (docs/tables.md): kind (with the prefix store bit),
# keyWidth, size (prefixes), dataWidth, base, levels, latency (levels + 2), fanout. Levels:
# the fewest L with F * ceil(F/2)^(L-1) >= 2 * size + 1.
EXPECTED = {
    "matcha_lpm32_table": drv.Descriptor(contract.KIND_LPM | contract.KIND_PREFIX_STORE, 32, 128, 32, contract.INFO_WINDOW_BYTES, 8, 10,
                                         drv.lpm_extra(4, 128)),
    "matcha_lpm128_table": drv.Descriptor(contract.KIND_LPM | contract.KIND_PREFIX_STORE, 128, 32, 32, contract.INFO_WINDOW_BYTES, 6, 8,
                                          drv.lpm_extra(3, 32)),
    # Latency: 6 levels on chip, 2 * 64 for the levels in memory, 2.
    "matcha_lpm32_mem_table": drv.Descriptor(contract.KIND_LPM | contract.KIND_PREFIX_STORE, 32, 128, 32, contract.INFO_WINDOW_BYTES, 8,
                                             136, drv.lpm_extra(4, 128, memory_levels=2)),
}

# Lengths this far apart nest the test's prefixes (the steps of a route table: /8, /16, /24).
NEST_STEP = 8

MISS = (False, None, None, None)


class Oracle:
    """The prefix set and its longest-prefix match, by brute force."""

    def __init__(self, desc):
        self.kw = desc.key_bits
        self.desc = desc
        self.prefixes = {}  # (value, length) -> (action id, action data)

    def answer(self, key, prefixes=None):
        """(hit, action id, action data, prefix) for a key, in the current prefix set or
        in `prefixes` (a saved copy of one)."""
        prefixes = self.prefixes if prefixes is None else prefixes
        best = None
        for value, length in prefixes:
            if key >> (self.kw - length) == value >> (self.kw - length) and \
                    (best is None or length > best[1]):
                best = (value, length)
        if best is None:
            return MISS
        return (True, *prefixes[best], best)

    def overflow(self, new, prefixes=None):
        """Why adding `new` to the prefix set (or to `prefixes`) must fail with ENOSPC:
        "full" when the table holds `size` prefixes already; None when it fits."""
        prefixes = self.prefixes if prefixes is None else prefixes
        return "full" if len(prefixes) >= self.desc.size else None


def truncate(value, length, kw):
    return value >> (kw - length) << (kw - length) if length < kw else value


class LpmTableTb(AxiLiteRegisters):
    def __init__(self, dut):
        self.dut = dut
        self.name = os.environ.get("COCOTB_TOPLEVEL", dut._name)
        self.expected = EXPECTED[self.name]
        self.kw = self.expected.key_bits
        self.mask = (1 << self.kw) - 1
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.cycles = cocotb_util.CycleCounter(dut)
        self.inputs = {}   # clock -> key on the port during that clock
        self.outputs = {}  # clock -> (hit, action id, data, entryIndex) valid during it
        self.monitor = None  # samples the ports while lookups run (it costs every clock)
        self.index_of = {}  # prefix -> entryIndex seen for it
        self.used_data = set()
        self.lookups_done = 0
        self.hits_seen = 0
        self.memories = []  # the LateMemory of each level in memory, the highest first
        self.late_seen = 0

    # ------------------------------------------------------------------ setup, bus

    async def start(self, replay_probes=False, write_latency=0, write_busy=0.0):
        """Reset, snapshot the self-describing block, open the driver on it. The memories'
        writes land, and are answered, `write_latency` clocks after their data, and
        awready, wready and bvalid are held back `write_busy` of the clocks."""
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        if self.expected.memory_levels:
            # A beat a node of each level in memory, on its own port, its nodes after the
            # ones of the levels above it (docs/tables.md, "LPM levels in memory").
            e = self.expected
            nodes = drv.lpm_nodes(e.fanout, e.size)[-e.memory_levels:]
            rng, _ = cocotb_util.test_rng(self.dut, "memory")
            for j in range(e.memory_levels):
                beat = len(getattr(self.dut, f"m_axi_{j}_rdata")) // 8
                self.memories.append(LateMemory(self.dut, f"m_axi_{j}", sum(nodes[:j + 1]) * beat, rng,
                                                self.cycles))
                self.memories[j].latency = MEMORY_LATENCY
                self.memories[j].write_latency = write_latency
                self.memories[j].set_write_pauses(write_busy, write_busy, write_busy)
        self.snapshot = await drv.read_info_block(self.read32)
        self.desc = drv.descriptors(self.snapshot)[TABLE]
        assert self.desc == self.expected, f"descriptor 0 is {self.desc}, want {self.expected}"
        self.latency = self.desc.latency
        self.oracle = Oracle(self.desc)
        self.bus = drv.RecordingBus(self.snapshot)
        self.dev = drv.Device(self.bus)
        self.open_writes = self.bus.take()
        await self.replay(self.open_writes, skip_reads=not replay_probes)

    async def replay(self, writes, skip_reads=False):
        return await drv.replay(writes, self.write32, self.read32, skip_reads=skip_reads)

    # -------------------------------------------------------------- table changes

    def new_data(self, rng):
        """Action data no other prefix of the test has, so a result names its prefix."""
        while True:
            d = rng.getrandbits(self.desc.data_bits)
            if d not in self.used_data:
                self.used_data.add(d)
                return d

    def driver_add(self, prefix, length, action, data):
        """The driver's add, returning its recorded writes; MatchaError propagates, and a
        refused add must have written nothing."""
        try:
            self.dev.lpm_add(TABLE, prefix, length, action, data)
        except drv.MatchaError:
            assert self.bus.take() == [], "a refused add wrote registers"
            raise
        return self.bus.take()

    def driver_delete(self, prefix, length):
        try:
            self.dev.lpm_delete(TABLE, prefix, length)
        except drv.MatchaError:
            assert self.bus.take() == [], "a refused delete wrote registers"
            raise
        return self.bus.take()

    async def add(self, prefix, length, action, data):
        await self.replay(self.driver_add(prefix, length, action, data))
        self.oracle.prefixes[(prefix, length)] = (action, data)

    async def delete(self, prefix, length):
        await self.replay(self.driver_delete(prefix, length))
        del self.oracle.prefixes[(prefix, length)]
        self.index_of.pop((prefix, length), None)

    async def try_add(self, prefix, length, action, data):
        """Adds a prefix the oracle does not hold; the driver must refuse it with ENOSPC
        exactly when the contract says it does not fit. Returns whether it was added."""
        p = (prefix, length)
        assert p not in self.oracle.prefixes
        why = self.oracle.overflow(p)
        try:
            writes = self.driver_add(prefix, length, action, data)
        except drv.MatchaError as e:
            assert e.code == drv.ENOSPC and why is not None, \
                f"/{length} {prefix:#x}: {e} (the contract says: {why or 'it fits'})"
            assert e.message == self.dev.last_error() != ""
            want = f"table {TABLE} is full, it holds its {self.desc.size} prefixes"
            assert want in e.message, f"{e.message!r} does not say {want!r}"
            assert self.bus.take() == [], "a refused add wrote registers"
            return False
        assert why is None, f"/{length} {prefix:#x} was added, but it overflows {why}"
        await self.replay(writes)
        self.oracle.prefixes[p] = (action, data)
        return True

    # -------------------------------------------------------------------- lookups

    async def _monitor(self):
        dut = self.dut
        while self.monitor is not None:
            await RisingEdge(dut.clk)
            await ReadOnly()
            c = self.cycles.cycle
            if int(dut.lookup_valid.value):
                self.inputs[c] = int(dut.lookup_payload.value)
            if int(dut.result_valid.value):
                self.outputs[c] = (bool(dut.result_payload_hit.value),
                                   int(dut.result_payload_actionId.value),
                                   int(dut.result_payload_actionData.value),
                                   int(dut.result_payload_entryIndex.value),
                                   bool(self.memories) and bool(dut.result_late.value))

    async def stream(self, keys, until=None):
        """Puts `keys` on the lookup port one per clock; with `until` (a callable), cycles
        through them until it returns true."""
        dut = self.dut
        if self.monitor is None:
            self.monitor = cocotb.start_soon(self._monitor())
        await RisingEdge(dut.clk)
        i = 0
        while (i < len(keys)) if until is None else not until():
            dut.lookup_valid.value = 1
            dut.lookup_payload.value = keys[i % len(keys)]
            await RisingEdge(dut.clk)
            i += 1
        dut.lookup_valid.value = 0

    async def collect(self, late_ok=False):
        """Waits for the results of every key issued so far: [(clock, key, result)]. Each
        result must come exactly `latency` clocks after its key, and only then, and not
        late unless `late_ok` (then a late one is dropped from the list)."""
        await ClockCycles(self.dut.clk, self.latency + 2)
        monitor, self.monitor = self.monitor, None
        if monitor is not None:
            await monitor
        out = []
        for c in sorted(self.inputs):
            r = self.outputs.pop(c + self.latency, None)
            assert r is not None, f"no result {self.latency} clocks after the key of clock {c}"
            *r, late = r
            if late:
                assert late_ok, f"the result of the key of clock {c} is late"
                assert not r[0], f"a late result of the key of clock {c} hits"
                self.late_seen += 1
                continue
            out.append((c, self.inputs[c], tuple(r)))
        assert not self.outputs, f"results with no key {self.latency} clocks before: " \
                                 f"clocks {sorted(self.outputs)[:8]}"
        self.inputs.clear()
        self.lookups_done += len(out)
        self.hits_seen += sum(r[0] for _, _, r in out)
        return out

    def check(self, key, got, answers, check_index=True):
        """A DUT result against the acceptable oracle answers (one, or before and after an
        update); returns the answer it matched. `check_index`: check entryIndex too."""
        hit, action, data, index = got
        got3 = (hit, action, data) if hit else (False, None, None)
        match = next((a for a in answers if a[:3] == got3), None)
        assert match is not None, (
            f"key {key:#0{self.kw // 4 + 2}x}: DUT (hit, action, data, index) = "
            f"{(hit, action, data, index)}, oracle: "
            + " or ".join(self.describe(a) for a in answers))
        if hit and check_index:
            p = match[3]
            if p in self.index_of:
                assert self.index_of[p] == index, \
                    f"/{p[1]} {p[0]:#x}: entryIndex {index}, earlier {self.index_of[p]}"
            else:
                other = next((q for q, i in self.index_of.items() if i == index), None)
                assert other is None, f"/{p[1]} {p[0]:#x} and /{other[1]} {other[0]:#x} " \
                                      f"share entryIndex {index}"
                self.index_of[p] = index
        return match

    def describe(self, a):
        if not a[0]:
            return "miss"
        p = a[3]
        return f"hit /{p[1]} {p[0]:#x} action {a[1]} data {a[2]:#x}"

    async def lookups(self, keys):
        """Looks the keys up back to back and checks each against the oracle."""
        await self.stream(keys)
        for _, k, r in await self.collect():
            self.check(k, r, [self.oracle.answer(k)])

    # ------------------------------------------------------------- prefix store

    async def command(self, cmd, index):
        """One window command on the DUT, polled until done; STATUS must report no error."""
        error = await self.window_command(self.desc.base, cmd, index, max_polls=1000)
        assert error == 0, f"command {cmd} on 0x{index:x}: STATUS error {error}"

    async def read_results(self):
        """READ of every result: {r: (valid, action id, data, prefix, length)}, the prefix
        from KEY and its length from PRIORITY (docs/tables.md, the LPM prefix store)."""
        base, words = self.desc.base, (self.kw + 31) // 32
        dwords = (self.desc.data_bits + 31) // 32
        out = {}
        for r in range(self.desc.size):
            await self.command(contract.CMD_READ, self.desc.geometry << contract.LPM_LEVEL_SHIFT | r)
            flags = await self.read32(base + contract.WIN_FLAGS)
            key = sum([await self.read32(base + contract.WIN_KEY + 4 * i) << (32 * i)
                       for i in range(words)])
            data = sum([await self.read32(base + contract.WIN_DATA + 4 * i) << (32 * i)
                        for i in range(dwords)])
            length = await self.read32(base + contract.WIN_PRIORITY)
            out[r] = (bool(flags & contract.FLAGS_VALID), drv.flags_action(flags), data, key, length)
        return out

    async def stored_prefixes(self):
        """The prefix set as the hardware alone gives it: {(prefix, length): (action, data)}
        of the valid results."""
        return {(key, length): (action, data)
                for valid, action, data, key, length in (await self.read_results()).values()
                if valid}

    # -------------------------------------------------------------------- keys

    def boundary_keys(self, prefixes=None):
        """First and last key of each prefix's range and the keys just outside it."""
        out = []
        for v, ln in (self.oracle.prefixes if prefixes is None else prefixes):
            hi = v | ((1 << (self.kw - ln)) - 1)
            out += [v, hi, (v - 1) & self.mask, (hi + 1) & self.mask]
        return out

    def divergent_keys(self, key):
        """The key and, for every bit position, the key with that bit flipped: together
        they meet every prefix length along the key."""
        return [key] + [key ^ (1 << b) for b in range(self.kw)]

    def near_key(self, rng, value):
        """A random key sharing a random number of leading bits with `value`."""
        n = rng.randint(0, self.kw)
        return truncate(value, n, self.kw) | (rng.getrandbits(self.kw) & ((1 << (self.kw - n)) - 1))


def rand_length(tb, rng):
    """A prefix length as route tables have them, scaled to the key: mostly 3/4 of it (/24
    of 32 bits), many from 1/2 to 11/16 (/16 to /22), some 1/4 (/8) and the whole key
    (/32), now and then any length (/0 included)."""
    kw, r = tb.kw, rng.random()
    if r < 0.45:
        return kw * 3 // 4
    if r < 0.75:
        return rng.randint(kw // 2, kw * 11 // 16)
    if r < 0.85:
        return kw // 4
    if r < 0.93:
        return kw
    return rng.randint(0, kw)


def sample(rng, keys, n):
    keys = list(keys)
    return keys if len(keys) <= n else rng.sample(keys, n)


async def random_set(tb, rng, count, bases):
    """Adds up to `count` prefixes of lengths spread over 0..keyWidth (including /0 and
    /keyWidth) drawn around `bases`, so that they nest and overlap; candidates the contract
    says do not fit must be refused with ENOSPC. Returns the number added."""
    kw = tb.kw
    added, tries = 0, 0
    lengths = [0, kw]
    # Draws around a few bases repeat often: four tries a prefix ran out for seed 770921749.
    while added < count and tries < 16 * count:
        tries += 1
        base = rng.choice(bases)
        if rng.random() < 0.3:
            base ^= 1 << rng.randrange(kw)
        length = lengths.pop() if lengths else rand_length(tb, rng)
        p = (truncate(base, length, kw), length)
        if p in tb.oracle.prefixes:
            continue
        added += await tb.try_add(*p, rng.randrange(256), tb.new_data(rng))
    return added


def lookup_keys(tb, rng, bases, n):
    """Keys at prefix boundaries, around the bases and at random, about n in all."""
    keys = sample(rng, tb.boundary_keys(), n // 2)
    keys += [tb.near_key(rng, rng.choice(bases)) for _ in range(n // 3)]
    keys += [rng.getrandbits(tb.kw) for _ in range(n - len(keys))]
    rng.shuffle(keys)
    return keys


# ------------------------------------------------------------------------ the tests

@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_open(dut):
    """The descriptor is as built; the driver opened on it sees the same geometry; its
    capacity probes (READ commands at open) get from the DUT the STATUS the contract
    gives them; an empty table misses, with the descriptor's latency."""
    rng, _ = cocotb_util.test_rng(dut, "open")
    tb = LpmTableTb(dut)
    await tb.start(replay_probes=True)
    d = tb.desc
    reads = [g for g in drv.commands(tb.open_writes) if g[-1].value == contract.CMD_READ]
    assert reads, "the driver made no capacity probes"
    assert any(g[-1].error == contract.STATUS_ERROR_INDEX_RANGE for g in reads)
    assert tb.dev.version() == contract.INFO_VERSION_VALUE and tb.dev.table_count() == 1
    info = tb.dev.table_info(TABLE)
    assert (info.kind, info.key_bits, info.size, info.data_bits, info.base, info.levels,
            info.latency, info.prefix_store) == (d.code, d.key_bits, d.size, d.data_bits,
                                                 d.base, d.geometry, d.latency,
                                                 d.prefix_store), info
    levels = [tb.dev.lpm_level(TABLE, i) for i in range(d.geometry)]
    nodes = drv.lpm_nodes(d.fanout, d.size)
    assert [(lv.fanout, lv.nodes, lv.used, lv.slots, lv.real, lv.in_memory, lv.pointer_bits) for lv in levels] == \
        [(d.fanout, n, 1, 1, i == d.geometry - 1, i >= d.geometry - d.memory_levels, d.pointer_bits)
         for i, n in enumerate(nodes)], levels
    # One clock a level on chip (a level in memory takes its budget: EXPECTED).
    assert d.memory_levels or d.latency == d.geometry + 2
    await tb.lookups([rng.getrandbits(tb.kw) for _ in range(50)] + [0, tb.mask])


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_random_prefixes(dut):
    """A random prefix set, then lookups every clock of keys at its boundaries, near its
    prefixes and at random; the hit and miss counters agree."""
    rng, _ = cocotb_util.test_rng(dut, "random_prefixes")
    tb = LpmTableTb(dut)
    await tb.start()
    bases = [rng.getrandbits(tb.kw) for _ in range(4 if tb.kw == 32 else 3)]
    added = await random_set(tb, rng, tb.desc.size, bases)
    assert added == tb.desc.size, f"only {added} of {tb.desc.size} prefixes added"
    lengths = {ln for _, ln in tb.oracle.prefixes}
    assert {0, tb.kw} <= lengths
    dut._log.info("%d prefixes, %d distinct lengths", added, len(lengths))
    await tb.lookups(lookup_keys(tb, rng, bases, 400))
    # Back to back lookups of one key, then of alternating keys.
    k1, k2 = tb.near_key(rng, bases[0]), tb.near_key(rng, bases[-1])
    await tb.lookups([k1] * 6 + [k1, k2] * 6)
    base = tb.desc.base
    hits = await tb.read32(base + contract.WIN_HITS) | await tb.read32(base + contract.WIN_HITS + 4) << 32
    misses = await tb.read32(base + contract.WIN_MISSES) | \
        await tb.read32(base + contract.WIN_MISSES + 4) << 32
    assert (hits, misses) == (tb.hits_seen, tb.lookups_done - tb.hits_seen), \
        (hits, misses, tb.hits_seen, tb.lookups_done)


@sim.only_on(*ON_CHIP)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_nested_prefixes(dut):
    """Prefixes nested along one key at lengths around every level boundary, siblings and
    a branch next to them; then deleted one at a time in random order (the entries of a
    deleted prefix fall back to the next shorter one), re-added with new actions, and all
    deleted: everything misses."""
    rng, _ = cocotb_util.test_rng(dut, "nested_prefixes")
    tb = LpmTableTb(dut)
    await tb.start()
    kw, stride = tb.kw, NEST_STEP
    key = rng.getrandbits(kw)
    if kw == 32:
        lengths = [0, 1, 4, 7, 8, 9, 12, 15, 16, 17, 23, 24, 25, 30, 31, 32]
    else:
        lengths = [0, 1, 7, 8, 9, 16, 17, 40, 63, 64, 65, 100, 119, 120, 121, 127, 128]
    chain = [(truncate(key, ln, kw), ln) for ln in lengths]
    # The sibling of a few chain prefixes (last bit flipped) and a branch off the key.
    siblings = [(v ^ (1 << (kw - ln)), ln) for v, ln in rng.sample(chain[1:], 4)]
    cut = rng.randrange(stride + 1, kw - stride)
    branch_key = key ^ (1 << (kw - 1 - cut))
    branch = [(truncate(branch_key, ln, kw), ln) for ln in (cut + 1, cut + stride, kw)]
    everything = list(dict.fromkeys(chain + siblings + branch))
    for p in everything:
        assert await tb.try_add(*p, rng.randrange(256), tb.new_data(rng)), p
    probe = tb.divergent_keys(key) + tb.divergent_keys(branch_key)[::4] + tb.boundary_keys()
    await tb.lookups(probe)
    order = list(everything)
    rng.shuffle(order)
    gone = []
    for i, p in enumerate(order):
        await tb.delete(*p)
        gone.append(p)
        if i % 2 == 0 or i == len(order) - 1:
            await tb.lookups(sample(rng, probe, 120))
    assert not tb.oracle.prefixes
    await tb.lookups(probe + [rng.getrandbits(kw) for _ in range(20)])
    # Re-add half with new actions and data; the driver's state after deletes is sound.
    readd = rng.sample(gone, len(gone) // 2)
    for p in readd:
        await tb.add(*p, rng.randrange(256), tb.new_data(rng))
    await tb.lookups(probe)
    for p in readd:
        await tb.delete(*p)
    await tb.lookups(sample(rng, probe, 150))


@sim.only_on(*ON_CHIP)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_prefix_store(dut):
    """The prefix store: READ of every result gives back the prefix set the driver wrote,
    a prefix hidden under two longer ones (no leaf answers it) included,
    and follows deletes; rewriting the stored prefixes changes no lookup; CLEAR empties
    it."""
    rng, _ = cocotb_util.test_rng(dut, "prefix_store")
    tb = LpmTableTb(dut)
    await tb.start()
    kw, stride = tb.kw, NEST_STEP
    base = rng.getrandbits(kw)
    hidden = (truncate(base, stride - 1, kw), stride - 1)
    covering = [(hidden[0], stride), (hidden[0] | 1 << (kw - stride), stride)]
    for p in [hidden] + covering:
        assert await tb.try_add(*p, rng.randrange(256), tb.new_data(rng)), p
    await random_set(tb, rng, 20 if kw == 32 else 12, [base, rng.getrandbits(kw)])
    assert await tb.stored_prefixes() == tb.oracle.prefixes
    keys = lookup_keys(tb, rng, [base], 120) + tb.boundary_keys([hidden])
    await tb.lookups(keys)
    gone = rng.sample(sorted(p for p in tb.oracle.prefixes if p not in (hidden, covering[0])),
                      4) + covering[:1]
    for p in gone:
        await tb.delete(*p)
    assert await tb.stored_prefixes() == tb.oracle.prefixes

    # The store is off the lookup path: other prefixes under the same results answer as
    # before (each result rewritten with its own FLAGS and DATA, a random KEY and PRIORITY).
    b = tb.desc.base
    for r, (valid, action, data, _, _) in (await tb.read_results()).items():
        if not valid:
            continue
        for i in range((kw + 31) // 32):
            await tb.write32(b + contract.WIN_KEY + 4 * i, rng.getrandbits(32))
        await tb.write32(b + contract.WIN_PRIORITY, rng.randrange(kw + 1))
        await tb.write32(b + contract.WIN_FLAGS, drv.flags_word(action))
        for i in range((tb.desc.data_bits + 31) // 32):
            await tb.write32(b + contract.WIN_DATA + 4 * i, data >> (32 * i) & 0xFFFFFFFF)
        await tb.command(contract.CMD_WRITE, tb.desc.geometry << contract.LPM_LEVEL_SHIFT | r)
    await tb.lookups(keys)

    tb.dev.table_clear(TABLE)
    await tb.replay(tb.bus.take())
    assert all(entry == (False, 0, 0, 0, 0) for entry in (await tb.read_results()).values())


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_delete_readd(dut):
    """A random prefix set; half of it deleted, then re-added with other actions and data;
    then deleted entirely (all miss), and the table fills again as far as it did."""
    rng, _ = cocotb_util.test_rng(dut, "delete_readd")
    tb = LpmTableTb(dut)
    await tb.start()
    bases = [rng.getrandbits(tb.kw) for _ in range(3)]
    await random_set(tb, rng, 40 if tb.kw == 32 else 25, bases)
    first = dict(tb.oracle.prefixes)
    half = rng.sample(sorted(first), len(first) // 2)
    for p in half:
        await tb.delete(*p)
    await tb.lookups(lookup_keys(tb, rng, bases, 200) + tb.boundary_keys(half)[:100])
    for p in half:
        await tb.add(*p, rng.randrange(256), tb.new_data(rng))
    await tb.lookups(lookup_keys(tb, rng, bases, 200))
    everything = list(tb.oracle.prefixes)
    rng.shuffle(everything)
    for p in everything:
        await tb.delete(*p)
    keys = tb.boundary_keys(first)
    await tb.lookups(sample(rng, keys, 150) + [tb.near_key(rng, b) for b in bases * 10])
    # Every node and result came back: the same set fits again.
    for p in sorted(first):
        assert await tb.try_add(*p, rng.randrange(256), tb.new_data(rng)), p
    await tb.lookups(lookup_keys(tb, rng, bases, 150))


async def update_under_lookups(tb, rng, op, p, keys):
    """Makes one add or delete with the driver and replays it while `keys` are looked up
    every clock, from a few clocks before its first write to a few after its last; every
    result must be the oracle's answer before the update or after it. Returns the number
    of lookups checked."""
    before = {k: tb.oracle.answer(k) for k in keys}
    if op == "add":
        action, data = rng.randrange(256), tb.new_data(rng)
        writes = tb.driver_add(*p, action, data)
        tb.oracle.prefixes[p] = (action, data)
    else:
        writes = tb.driver_delete(*p)
        del tb.oracle.prefixes[p]
    after = {k: tb.oracle.answer(k) for k in keys}
    changed = sum(before[k][:3] != after[k][:3] for k in keys)
    tb.dut._log.info("%s /%d %#x: %d writes, %d of %d keys change answer", op, p[1], p[0],
                     len(writes), changed, len(keys))
    stop = False
    task = cocotb.start_soon(tb.stream(keys, until=lambda: stop))
    await ClockCycles(tb.dut.clk, 3)
    await tb.replay(writes)
    await ClockCycles(tb.dut.clk, 3)
    stop = True
    await task
    results = await tb.collect()
    for _, k, r in results:
        tb.check(k, r, [before[k], after[k]])
    if op == "delete":
        tb.index_of.pop(p, None)
    return len(results)


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_updates_under_lookups(dut):
    """Adds and deletes replayed while a lookup runs every clock on keys the update
    touches: every result is the oracle's answer from before the update or after it."""
    await updates_under_lookups(dut, "updates_under_lookups")


@sim.only_on(MEMORY_UNIT)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_late_writes_under_lookups(dut):
    """test_updates_under_lookups on memories whose writes land, and are answered, 200
    clocks after their data, with the write channels held back at random: a WRITE is done,
    and the nodes above point to its nodes, only once those writes are answered."""
    await updates_under_lookups(dut, "late_writes_under_lookups", write_latency=200,
                                write_busy=0.3, rounds=4)


async def updates_under_lookups(dut, name, write_latency=0, write_busy=0.0, rounds=10):
    """`rounds` pairs of updates (fewer on the 128-bit unit), each raced by lookups."""
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = LpmTableTb(dut)
    await tb.start(write_latency=write_latency, write_busy=write_busy)
    kw, stride = tb.kw, NEST_STEP
    bases = [rng.getrandbits(kw) for _ in range(2)]
    await random_set(tb, rng, 40 if kw == 32 else 20, bases)
    # Operations: prefixes that need new nodes on several levels, some under present
    # prefixes, re-adds with other data, short prefixes that rewrite many entries.
    ops = []
    for _ in range(rounds if kw == 32 else rounds * 3 // 5):
        base = rng.choice(bases)
        ln = rng.choice([rng.randint(0, stride), rng.randint(stride + 1, kw), kw])
        if rng.random() < 0.5 and ln:
            base ^= 1 << rng.randrange(kw - ln, kw)
        p = (truncate(base, ln, kw), ln)
        ops += [("delete", p), ("add", p)] if p in tb.oracle.prefixes else \
            [("add", p), ("delete", p)]
    ops += [("delete", p) for p in rng.sample(sorted(tb.oracle.prefixes), rounds * 3 // 5)]
    rng.shuffle(ops)
    checked = 0
    for op, p in ops:
        present = p in tb.oracle.prefixes
        if (op == "add") == present or (op == "add" and tb.oracle.overflow(p)):
            continue
        keys = tb.boundary_keys([p]) + [tb.near_key(rng, p[0]) for _ in range(12)] + \
            [p[0] ^ (1 << b) for b in rng.sample(range(kw), 8)]
        checked += await update_under_lookups(tb, rng, op, p, keys)
    assert checked > 50 * rounds, checked
    await tb.lookups(lookup_keys(tb, rng, bases, 200))


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_fallback_in_flight(dut):
    """A level-1 prefix inside a shorter level-1 prefix, deleted (its entries fall back to
    the shorter one, then its result is invalidated) and added again, while keys under it
    are looked up every clock. A lookup reads level 1 one clock after the root and the
    result RAM `levels` clocks later: those that read the entry just before the driver
    rewrote it must still answer with one of the two prefixes, never miss."""
    rng, _ = cocotb_util.test_rng(dut, "fallback_in_flight")
    tb = LpmTableTb(dut)
    await tb.start()
    kw, stride = tb.kw, NEST_STEP
    key = rng.getrandbits(kw)
    outer = (truncate(key, stride + 1, kw), stride + 1)
    inner = (truncate(key, 2 * stride, kw), 2 * stride)
    for p in (outer, inner):
        await tb.add(*p, rng.randrange(256), tb.new_data(rng))
    keys = [inner[0] | rng.getrandbits(kw - 2 * stride) for _ in range(7)] + [key]
    await tb.lookups(keys)
    for _ in range(3):
        await update_under_lookups(tb, rng, "delete", inner, keys)
        await update_under_lookups(tb, rng, "add", inner, keys)
    await tb.lookups(keys + tb.boundary_keys())


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_back_to_back_updates(dut):
    """Sequences of adds and deletes replayed back to back (each starts as soon as the
    previous one's last command completes, so a freed result or node may be reused at
    once) while lookups run every clock: every lookup answers as the table was in one of
    the states it lived through, from the last one complete when its key went in to the
    first one begun when its result came out."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back_updates")
    tb = LpmTableTb(dut)
    await tb.start()
    kw = tb.kw
    bases = [rng.getrandbits(kw) for _ in range(2)]
    await random_set(tb, rng, 30 if kw == 32 else 15, bases)
    for _ in range(3):
        shadow = dict(tb.oracle.prefixes)
        states, writes, touched = [dict(shadow)], [], []
        while len(writes) < 8:
            free = sorted(q for q in shadow if q not in touched)
            if free and rng.random() < 0.5:
                p = rng.choice(free)
                writes.append(tb.driver_delete(*p))
                del shadow[p]
            else:
                base = rng.choice(bases) ^ (1 << rng.randrange(kw))
                ln = rand_length(tb, rng)
                p = (truncate(base, ln, kw), ln)
                if p in shadow or p in touched or tb.oracle.overflow(p, shadow):
                    continue
                shadow[p] = (rng.randrange(256), tb.new_data(rng))
                writes.append(tb.driver_add(*p, *shadow[p]))
            touched.append(p)
            states.append(dict(shadow))
        keys = tb.boundary_keys(touched) + [tb.near_key(rng, v) for v, _ in touched * 4]
        answers = {k: [tb.oracle.answer(k, st) for st in states] for k in keys}
        stop = False
        task = cocotb.start_soon(tb.stream(keys, until=lambda: stop))
        await ClockCycles(dut.clk, 3)
        start, end = [], []
        for w in writes:
            start.append(tb.cycles.cycle)
            await tb.replay(w)
            end.append(tb.cycles.cycle)
        await ClockCycles(dut.clk, 3)
        stop = True
        await task
        results = await tb.collect()
        for c, k, r in results:
            lo = sum(e < c - 1 for e in end)
            hi = sum(s <= c + tb.latency + 1 for s in start)
            tb.check(k, r, answers[k][lo:hi + 1], check_index=False)
        dut._log.info("%d updates in %d clocks, %d lookups", len(writes), end[-1] - start[0],
                      len(results))
        tb.oracle.prefixes = shadow
        for p in touched:
            tb.index_of.pop(p, None)
        await tb.lookups(keys)


async def fill_to_size(tb, rng, prefixes, name):
    """Adds `prefixes` (exactly `size` of them): every one fits, the next is refused with
    ENOSPC and writes nothing; then every answer at their boundaries and near them."""
    size = tb.desc.size
    assert len(prefixes) == size and len(set(prefixes)) == size
    for p in prefixes:
        assert await tb.try_add(*p, rng.randrange(256), tb.new_data(rng)), f"{name}: {p} refused"
    extra = next((rng.getrandbits(tb.kw), tb.kw) for _ in iter(int, 1))
    assert not await tb.try_add(*extra, 1, tb.new_data(rng)), f"{name}: add {size + 1} fitted"
    levels = [tb.dev.lpm_level(TABLE, i) for i in range(tb.desc.geometry)]
    tb.dut._log.info("%s: %d prefixes, %d slots in the leaves, nodes used by level %s", name, size,
                     levels[-1].slots, [lv.used for lv in levels])
    keys = tb.boundary_keys() + [tb.near_key(rng, v) for v, _ in tb.oracle.prefixes]
    await tb.lookups(sample(rng, keys, 500))
    tb.dev.table_clear(TABLE)
    await tb.replay(tb.bus.take())
    tb.oracle.prefixes.clear()
    tb.index_of.clear()
    return levels


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_table_full(dut):
    """Any `size` prefixes fit and the next is refused: distinct short prefixes (no long
    ones at all), then a route-table mix (mostly 3/4 of the key, a default route), each
    filled to exactly `size`."""
    rng, _ = cocotb_util.test_rng(dut, "table_full")
    tb = LpmTableTb(dut)
    await tb.start()
    kw, size = tb.kw, tb.desc.size
    short = [(v << (kw - ln), ln) for ln in range(NEST_STEP + 1) for v in range(1 << ln)]
    await fill_to_size(tb, rng, rng.sample(short, size), "short prefixes")
    mix, bases = {(0, 0)}, [rng.getrandbits(kw) for _ in range(6)]
    while len(mix) < size:
        ln = rand_length(tb, rng)
        mix.add((truncate(rng.choice(bases) ^ rng.getrandbits(kw - kw // 4), ln, kw), ln))
    await fill_to_size(tb, rng, sorted(mix), "route mix")


@sim.only_on(*ON_CHIP)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_table_full_distinct_boundaries(dut):
    """The worst case for the tree: full-length prefixes two keys apart, so every start
    and end is a boundary of its own (2 * size + 1 with key 0). All fit, the next is
    refused, and the leaves hold exactly that many slots."""
    rng, _ = cocotb_util.test_rng(dut, "table_full_distinct_boundaries")
    tb = LpmTableTb(dut)
    await tb.start()
    size, base = tb.desc.size, rng.getrandbits(tb.kw - 12) << 12
    levels = await fill_to_size(tb, rng, [(base | 2 * i + 1, tb.kw) for i in range(size)],
                                "distinct boundaries")
    assert levels[-1].slots == 2 * size + 1, levels[-1]


@sim.only_on(*ON_CHIP)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_table_full_long_under_short(dut):
    """What a multibit trie with a fixed number of nodes a level refuses: long prefixes
    under many distinct short ones (each short prefix with one of 3/4 and one of the whole
    key below it), so that every short prefix needs nodes of its own on every level."""
    rng, _ = cocotb_util.test_rng(dut, "table_full_long_under_short")
    tb = LpmTableTb(dut)
    await tb.start()
    kw, size = tb.kw, tb.desc.size
    prefixes = []
    for g in range(size):
        top = (g + 1) << (kw - NEST_STEP)
        prefixes.append([(top, NEST_STEP),
                         (truncate(top | rng.getrandbits(kw - NEST_STEP), kw * 3 // 4, kw), kw * 3 // 4),
                         (top | rng.getrandbits(kw - NEST_STEP), kw)][g % 3])
    await fill_to_size(tb, rng, prefixes, "long under short")


@sim.only_on(*ON_CHIP)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_driver_errors(dut):
    """Bad calls fail with the right code and a message (matcha_last_error), write nothing
    and leave the table as it was."""
    rng, _ = cocotb_util.test_rng(dut, "driver_errors")
    tb = LpmTableTb(dut)
    await tb.start()
    kw = tb.kw
    key = rng.getrandbits(kw) | 1
    await tb.add(truncate(key, 16, kw), 16, 7, tb.new_data(rng))
    await tb.add(truncate(key, kw - 3, kw), kw - 3, 8, tb.new_data(rng))
    dev = tb.dev

    def fails(code, text, call, *args):
        try:
            call(*args)
        except drv.MatchaError as e:
            assert e.code == code, f"{call.__name__}{args}: {e}, expected {drv.ERRORS[code]}"
            assert e.message == dev.last_error() and text in e.message, \
                f"{call.__name__}: message {e.message!r} does not say {text!r}"
            assert tb.bus.take() == [], f"{call.__name__} failed but wrote registers"
            return
        raise AssertionError(f"{call.__name__}{args} succeeded, expected {drv.ERRORS[code]}")

    v12 = truncate(key, 12, kw)
    fails(drv.EINVAL, "bits set beyond its length 12", dev.lpm_add, TABLE, v12 | 1, 12, 1, 1)
    fails(drv.EINVAL, "bits set beyond its length 0", dev.lpm_add, TABLE, 1 << (kw - 1), 0, 1, 1)
    fails(drv.EINVAL, "bits set beyond its length 12", dev.lpm_delete, TABLE, v12 | 4, 12)
    fails(drv.E2BIG, f"prefix length {kw + 1}", dev.lpm_add, TABLE, 0, kw + 1, 1, 1)
    fails(drv.E2BIG, "action data is 40 bits", dev.lpm_add, TABLE, 0, 0, 1, 1 << 39, 40)
    fails(drv.EINVAL, "action data is 31 bits", dev.lpm_add, TABLE, 0, 0, 1, 1 << 31, 31)
    fails(drv.EEXIST, "already in table 0", dev.lpm_add, TABLE, truncate(key, 16, kw), 16, 1, 1)
    fails(drv.ENOENT, "not in table 0", dev.lpm_delete, TABLE, truncate(key, 17, kw), 17)
    fails(drv.ENOTABLE, "table 1 does not exist", dev.lpm_add, TABLE + 1, 0, 0, 1, 1)
    fails(drv.EKIND, "of kind lpm, not exact", dev.exact_add, TABLE, 1, 1, 1)
    fails(drv.EINVAL, f"has {tb.desc.geometry} levels", dev.lpm_level, TABLE, tb.desc.geometry)
    fails(drv.ENOTABLE, "table 1 does not exist", dev.lpm_level, TABLE + 1, 0)
    # A call that succeeds after failures still works, and the table is unchanged.
    await tb.lookups(tb.divergent_keys(key)[::3] + tb.boundary_keys())
    await tb.add(truncate(key, kw, kw), kw, 9, tb.new_data(rng))
    await tb.lookups(tb.divergent_keys(key)[::3])
    # Opening on a block that is not Matcha's fails with a message.
    bad = dict(tb.snapshot)
    bad[contract.INFO_MAGIC] = 0x12345678
    try:
        drv.Device(drv.RecordingBus(bad))
    except drv.MatchaError as e:
        assert e.code == drv.ENODEV and "magic is 0x12345678" in e.message, e
    else:
        raise AssertionError("opened a device with a wrong magic")


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_clear(dut):
    """matcha_table_clear: the DUT's CLEAR (busy for a while) empties the table, and the
    driver's emptied shadow takes the same prefixes again."""
    rng, _ = cocotb_util.test_rng(dut, "clear")
    tb = LpmTableTb(dut)
    await tb.start()
    bases = [rng.getrandbits(tb.kw) for _ in range(2)]
    await random_set(tb, rng, 30 if tb.kw == 32 else 15, bases)
    keys = lookup_keys(tb, rng, bases, 120)
    await tb.lookups(keys)
    saved = dict(tb.oracle.prefixes)
    tb.dev.table_clear(TABLE)
    writes = tb.bus.take()
    assert [w.value for w in writes if w.is_command] == [contract.CMD_CLEAR]
    await tb.replay(writes)
    tb.oracle.prefixes.clear()
    tb.index_of.clear()
    await tb.lookups(keys)
    for p, (action, data) in saved.items():
        await tb.add(*p, action, data)
    await tb.lookups(keys)


async def memory_table(dut, name, prefixes=30):
    """The memory unit with a random prefix set loaded and looked up in time once: the tb,
    the rng and the lookup keys."""
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = LpmTableTb(dut)
    await tb.start()
    bases = [rng.getrandbits(tb.kw) for _ in range(2)]
    await random_set(tb, rng, prefixes, bases)
    keys = lookup_keys(tb, rng, bases, 120)
    await tb.lookups(keys)
    return tb, rng, keys


async def late_count(tb):
    base = tb.desc.base
    return await tb.read32(base + contract.LPM_WIN_LATE) | await tb.read32(base + contract.LPM_WIN_LATE + 4) << 32


async def late_or_right(tb, keys, rounds):
    """Looks `keys` up `rounds` times: each answer late or the oracle's, some of each, and
    LPM_WIN_LATE counting the late ones."""
    in_time = tb.lookups_done
    for _ in range(rounds):
        await tb.stream(keys)
        for _, k, r in await tb.collect(late_ok=True):
            tb.check(k, r, [tb.oracle.answer(k)])
    tb.dut._log.info("%d late, %d in time", tb.late_seen, tb.lookups_done - in_time)
    assert tb.late_seen > 0, "no lookup was late"
    assert tb.lookups_done > in_time, "every lookup was late"
    assert await late_count(tb) == tb.late_seen


@sim.only_on(MEMORY_UNIT)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_write_waits_for_lookups_in_flight(dut):
    """A WRITE completes once the lookups that may have read the old word have left: on a
    table no lookup reached for its latency, within a few clocks; with a lookup entering
    every clock, no sooner than the table's latency. Each WRITE rewrites a result as READ
    staged it, and every lookup is the oracle's."""
    tb, rng, keys = await memory_table(dut, "write_waits")
    results = [r for r, entry in (await tb.read_results()).items() if entry[0]]
    index = tb.desc.geometry << contract.LPM_LEVEL_SHIFT | rng.choice(results)

    async def timed_write():
        await tb.command(contract.CMD_READ, index)
        start = tb.cycles.cycle
        await tb.command(contract.CMD_WRITE, index)
        return tb.cycles.cycle - start

    await ClockCycles(dut.clk, tb.latency)
    idle = await timed_write()
    streaming = cocotb.start_soon(tb.stream(keys * 4))
    await ClockCycles(dut.clk, 8)
    busy = await timed_write()
    await streaming
    for _, k, r in await tb.collect():
        tb.check(k, r, [tb.oracle.answer(k)])
    dut._log.info("WRITE: %d clocks idle, %d under lookups (latency %d)", idle, busy, tb.latency)
    assert idle < tb.latency // 2, idle
    assert busy >= tb.latency, busy


@sim.only_on(MEMORY_UNIT)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_memory_too_slow_answers_late(dut):
    """A memory slower than a level's 64 clocks: every lookup still leaves exactly
    `latency` clocks after its key, late and hitting nothing, and LPM_WIN_LATE counts each;
    with the memory in time again, every answer is the oracle's."""
    tb, rng, keys = await memory_table(dut, "too_slow")
    assert await late_count(tb) == 0
    for m in tb.memories:
        m.latency = 100
    await tb.stream(keys)
    assert await tb.collect(late_ok=True) == []
    assert tb.late_seen == len(keys)
    assert await late_count(tb) == len(keys)
    for m in tb.memories:
        m.latency = MEMORY_LATENCY
    await tb.lookups(keys)
    assert await late_count(tb) == len(keys)


@sim.only_on(MEMORY_UNIT)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_memory_back_pressure_late_or_right(dut):
    """The memory holds its read address port and its read data back at random and answers
    with jitter: a lookup whose nodes do not come back in time leaves late, and every other
    answer is the oracle's."""
    tb, rng, keys = await memory_table(dut, "back_pressure")
    for m in tb.memories:
        m.set_pauses(0.2, 0.1)
        m.jitter = 8
    await late_or_right(tb, keys, rounds=3)


@sim.only_on(MEMORY_UNIT)
@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_memory_error_answers_late(dut):
    """The memory answers reads of half the lowest level's nodes the lookups read with
    SLVERR (and their bits flipped): a lookup through such a node leaves late, counted, and
    every other answer is the oracle's; with the memory healthy again, every answer is."""
    tb, rng, keys = await memory_table(dut, "memory_error")
    lowest = tb.memories[-1]
    read = sorted(lowest.beats_read)
    assert len(read) >= 2, read
    lowest.failing = set(rng.sample(read, len(read) // 2))
    await late_or_right(tb, keys, rounds=1)
    lowest.failing = set()
    await tb.lookups(keys)
