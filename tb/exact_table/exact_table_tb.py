# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_exact_table: a 4-way cuckoo table (40-bit keys, 48-bit action
data, 64 entries = 4 ways x 16 slots) behind its AXI4-Lite control window.

The oracle is the table model below, placing keys with the hash of tb/model/hashing.py
(written from the CRC-64/XZ definition in docs/tables.md): a lookup hits exactly when the
model has the key in one of its candidate slots, with that entry's action and index.
"""

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters
from tb.model.hashing import exact_index

KEY_BITS, DATA_BITS, WAYS, SLOTS = 40, 48, 4, 16
LATENCY = 3
BASE = contract.INFO_WINDOW_BYTES  # the window of table 0
CMD, INDEX, FLAGS, PRIORITY = contract.WIN_CMD, contract.WIN_INDEX, contract.WIN_FLAGS, contract.WIN_PRIORITY
KEY, MASK, DATA = contract.WIN_KEY, contract.WIN_MASK, contract.WIN_DATA
HITS, MISSES = contract.WIN_HITS, contract.WIN_MISSES
OKAY, SLVERR = 0, 2


class Model:
    """Slots of every way, as the driver would place them."""

    def __init__(self):
        self.slots = {}  # table index -> (key, action, data)

    @staticmethod
    def index(way, slot):
        return way * SLOTS + slot

    def candidates(self, key):
        return [self.index(w, exact_index(key, KEY_BITS, w, SLOTS)) for w in range(WAYS)]

    def lookup(self, key):
        for i in self.candidates(key):
            e = self.slots.get(i)
            if e is not None and e[0] == key:
                return True, e[1], e[2], i
        return False, None, None, None

    def free_candidate(self, key):
        return next((i for i in self.candidates(key) if i not in self.slots), None)


class ExactTableTb(AxiLiteRegisters):
    def __init__(self, dut):
        self.dut = dut
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.model = Model()
        self.pending = []  # keys looked up, oldest first, with their issue cycle
        self.results = []
        self.cycles = cocotb_util.CycleCounter(dut)

    async def start(self):
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        cocotb.start_soon(self._monitor())

    async def write_words(self, offset, value, bits):
        for w in range((bits + 31) // 32):
            await self.write32(BASE + offset + 4 * w, (value >> (32 * w)) & 0xFFFFFFFF)

    async def read_words(self, offset, bits):
        v = 0
        for w in range((bits + 31) // 32):
            v |= await self.read32(BASE + offset + 4 * w) << (32 * w)
        return v & ((1 << bits) - 1)

    async def command(self, op, index=None):
        """A command on the table's window; returns STATUS's error field."""
        return await self.window_command(BASE, op, index)

    async def write_entry(self, index, key, action, data, valid=True):
        await self.write_words(KEY, key, KEY_BITS)
        await self.write_words(DATA, data, DATA_BITS)
        await self.write32(BASE + FLAGS, drv.flags_word(action, valid))
        assert await self.command(contract.CMD_WRITE, index) == 0
        if valid:
            self.model.slots[index] = (key, action, data)
        else:
            self.model.slots.pop(index, None)

    async def insert(self, key, action, data):
        i = self.model.free_candidate(key)
        assert i is not None, f"no free candidate for {key:#x}"
        await self.write_entry(i, key, action, data)
        return i

    async def fill(self, rng, n):
        """Inserts `n` new random keys with random actions (keys without a free candidate
        are passed over); returns them."""
        keys = []
        while len(keys) < n:
            k = rand_key(rng)
            if self.model.free_candidate(k) is not None and k not in keys:
                await self.insert(k, rng.randrange(256), rng.getrandbits(DATA_BITS))
                keys.append(k)
        return keys

    async def _monitor(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.result_valid.value):
                self.results.append((self.cycles.cycle,
                                     bool(dut.result_payload_hit.value),
                                     int(dut.result_payload_actionId.value),
                                     int(dut.result_payload_actionData.value),
                                     int(dut.result_payload_entryIndex.value)))

    async def lookups(self, keys, expect=None):
        """Looks up `keys` one per clock; checks every result against the model (or against
        `expect(key)` when given) and that it comes exactly LATENCY clocks later."""
        dut = self.dut
        self.results.clear()
        issued = []
        for k in keys:
            dut.lookup_valid.value = 1
            dut.lookup_payload.value = k
            # The key is on the port during this clock; its result must be valid
            # LATENCY clocks later.
            issued.append((self.cycles.cycle, k))
            await RisingEdge(dut.clk)
        dut.lookup_valid.value = 0
        await ClockCycles(dut.clk, LATENCY + 2)
        assert len(self.results) == len(issued), (len(self.results), len(issued))
        for (cycle, k), (rcycle, hit, action, data, index) in zip(issued, self.results):
            assert rcycle - cycle == LATENCY, f"key {k:#x}: result after {rcycle - cycle} clocks"
            want = expect(k) if expect else self.model.lookup(k)
            got = (hit, action, data, index) if hit else (False, None, None, None)
            assert got == want, f"key {k:#x}: got {got}, model {want}"


def rand_key(rng):
    return rng.getrandbits(KEY_BITS)


def keys_for_slot(rng, way, slot, n, exclude=()):
    """`n` random keys whose way-`way` hash is `slot`."""
    out = []
    while len(out) < n:
        k = rand_key(rng)
        if exact_index(k, KEY_BITS, way, SLOTS) == slot and k not in exclude and k not in out:
            out.append(k)
    return out


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_insert_and_lookup(dut):
    rng, _ = cocotb_util.test_rng(dut, "insert_and_lookup")
    tb = ExactTableTb(dut)
    await tb.start()
    keys = await tb.fill(rng, 30)
    absent = [rand_key(rng) for _ in range(30)]
    mixed = keys + absent
    rng.shuffle(mixed)
    await tb.lookups(mixed)
    # Back-to-back lookups of the same key.
    await tb.lookups([keys[0]] * 8 + [absent[0]] * 3)


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_hash_collisions(dut):
    """Four keys with the same way-0 slot: one takes it, the others go to later ways, and
    all hit; a key
    whose candidates are all taken cannot be placed, and the others stay intact."""
    rng, _ = cocotb_util.test_rng(dut, "hash_collisions")
    tb = ExactTableTb(dut)
    await tb.start()
    slot = rng.randrange(SLOTS)
    same = keys_for_slot(rng, 0, slot, 4)
    placed = []
    for k in same:
        i = tb.model.free_candidate(k)
        if i is not None:
            await tb.write_entry(i, k, 7, k & 0xFFFF)
            placed.append(k)
    ways_used = sorted(tb.model.lookup(k)[3] // SLOTS for k in placed)
    assert len(placed) == 4 and ways_used.count(0) == 1, ways_used
    await tb.lookups(same + same[::-1])
    # A key colliding with an occupied slot in every way misses and disturbs nothing: each
    # of its candidate slots still free gets a key hashing there in that way. (Waiting for
    # random inserts to block a key never ends when they leave the last way empty.)
    blocked = next(k for k in iter(lambda: rand_key(rng), None) if k not in placed)
    fillers = []
    for way, i in enumerate(tb.model.candidates(blocked)):
        if i not in tb.model.slots:
            slot = exact_index(blocked, KEY_BITS, way, SLOTS)
            k = keys_for_slot(rng, way, slot, 1, exclude=placed + [blocked])[0]
            await tb.write_entry(i, k, 1, 1)
            fillers.append(k)
    assert tb.model.free_candidate(blocked) is None
    await tb.lookups([blocked] + placed + fillers)


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_full_table(dut):
    """Every one of the 64 slots holds a key; all hit, with the right index."""
    rng, _ = cocotb_util.test_rng(dut, "full_table")
    tb = ExactTableTb(dut)
    await tb.start()
    keys = []
    for way in range(WAYS):
        for slot in range(SLOTS):
            # A key whose earlier ways' slots are full, so the model places it here.
            k = keys_for_slot(rng, way, slot, 1, exclude=keys)[0]
            while tb.model.free_candidate(k) != Model.index(way, slot):
                k = keys_for_slot(rng, way, slot, 1, exclude=keys)[0]
            await tb.write_entry(Model.index(way, slot), k, (way * SLOTS + slot) & 0xFF, k)
            keys.append(k)
    assert len(tb.model.slots) == WAYS * SLOTS
    await tb.lookups(keys)
    await tb.lookups([rand_key(rng) for _ in range(20)])


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_moves_under_lookups(dut):
    """Entries moved make-before-break (copy, then invalidate the old slot) while lookups
    run every clock: every present key hits with its action and data throughout."""
    rng, _ = cocotb_util.test_rng(dut, "moves_under_lookups")
    tb = ExactTableTb(dut)
    await tb.start()
    keys = await tb.fill(rng, 24)
    expected = {k: tb.model.lookup(k)[1:3] for k in keys}
    stop = False
    errors = []

    async def lookup_forever():
        dut.lookup_valid.value = 1
        i = 0
        issued = []
        tb.results.clear()
        while not stop:
            k = keys[i % len(keys)]
            dut.lookup_payload.value = k
            await RisingEdge(dut.clk)
            issued.append(k)
            i += 1
        dut.lookup_valid.value = 0
        await ClockCycles(dut.clk, LATENCY + 2)
        for k, (_, hit, action, data, _) in zip(issued, tb.results):
            if not hit or (action, data) != expected[k]:
                errors.append((hex(k), hit, action, data))
        assert len(tb.results) == len(issued)

    task = cocotb.start_soon(lookup_forever())
    moves = 0
    for k in keys:
        old = tb.model.lookup(k)[3]
        new = next((i for i in tb.model.candidates(k) if i not in tb.model.slots), None)
        if new is None:
            continue
        key, action, data = tb.model.slots[old]
        await tb.write_entry(new, key, action, data)
        await tb.write_entry(old, 0, 0, 0, valid=False)
        moves += 1
    stop = True
    await task
    assert moves >= 5, f"only {moves} moves were possible"
    assert not errors, f"{len(errors)} wrong lookups during moves, first {errors[:5]}"
    await tb.lookups(keys)


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_readback_and_clear(dut):
    rng, _ = cocotb_util.test_rng(dut, "readback_and_clear")
    tb = ExactTableTb(dut)
    await tb.start()
    k = rand_key(rng)
    data = rng.getrandbits(DATA_BITS)
    i = await tb.insert(k, 0x5A, data)
    # Scribble over the staging registers, then read the entry back into them.
    await tb.write_words(KEY, 0, KEY_BITS)
    await tb.write_words(DATA, 0, DATA_BITS)
    await tb.write32(BASE + FLAGS, 0)
    assert await tb.command(contract.CMD_READ, i) == 0
    assert await tb.read_words(KEY, KEY_BITS) == k
    assert await tb.read_words(DATA, DATA_BITS) == data
    assert await tb.read32(BASE + FLAGS) == drv.flags_word(0x5A)
    assert await tb.read32(BASE + INDEX) == i
    assert await tb.command(contract.CMD_CLEAR) == 0
    tb.model.slots.clear()
    await tb.lookups([k])
    assert await tb.command(contract.CMD_READ, i) == 0
    assert await tb.read32(BASE + FLAGS) & contract.FLAGS_VALID == 0


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_bad_accesses(dut):
    """The bus answers unmapped addresses with SLVERR and never hangs; bad commands and
    out-of-range indexes are refused with an error code and change nothing."""
    rng, _ = cocotb_util.test_rng(dut, "bad_accesses")
    tb = ExactTableTb(dut)
    await tb.start()
    assert await tb.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
    assert await tb.read32(contract.INFO_VERSION) == contract.INFO_VERSION_VALUE
    assert await tb.read32(contract.INFO_OBJECTS) == 1
    desc = [await tb.read32(drv.descriptor_address(0) + 4 * j) for j in range(contract.DESC_WORDS)]
    assert desc == drv.Descriptor(contract.KIND_EXACT, KEY_BITS, WAYS * SLOTS, DATA_BITS, BASE, WAYS, LATENCY, 0).words
    for addr in (0x20, drv.descriptor_address(1), 0x8000, BASE + 0x10, BASE + 0x200, 0x20000, 0xFFFFFC):
        r = await tb.axil.read(addr, 4)
        assert r.resp == SLVERR, f"read {addr:#x}: resp {r.resp}"
        w = await tb.axil.write(addr, b"\x01\x00\x00\x00")
        assert w.resp == SLVERR, f"write {addr:#x}: resp {w.resp}"
    assert (await tb.axil.read(BASE + INDEX, 4)).resp == OKAY
    k = rand_key(rng)
    await tb.insert(k, 3, 3)
    assert await tb.command(contract.CMD_WRITE, WAYS * SLOTS) == contract.STATUS_ERROR_INDEX_RANGE, \
        "index out of range not reported"
    assert await tb.command(9) == contract.STATUS_ERROR_UNKNOWN_CMD, "unknown command not reported"
    await tb.lookups([k])


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_hit_miss_counters(dut):
    rng, _ = cocotb_util.test_rng(dut, "hit_miss_counters")
    tb = ExactTableTb(dut)
    await tb.start()
    keys = await tb.fill(rng, 10)
    seq = [rng.choice(keys) if rng.random() < 0.6 else rand_key(rng) for _ in range(100)]
    await tb.lookups(seq)
    hits = sum(tb.model.lookup(k)[0] for k in seq)
    lo = await tb.read32(BASE + HITS)
    hi = await tb.read32(BASE + HITS + 4)
    assert (hi << 32 | lo) == hits
    lo = await tb.read32(BASE + MISSES)
    hi = await tb.read32(BASE + MISSES + 4)
    assert (hi << 32 | lo) == len(seq) - hits

