# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_direct_table: a direct table (10-bit keys, 1000 entries, 40-bit
action data) behind its AXI4-Lite control window; docs/tables.md, "Direct".

Entries are loaded by the C driver through its generic entry calls (matcha_entry_*, a
layout naming the unit's table), its register accesses running on the DUT's bus from a
bridge thread (`LiveBus`), so that reads (entry read-back, adoption) see the RTL. The
model starts from random register and memory contents, as hardware powers up.

The oracle is a dict, index -> (action id, action data), written from the contract alone:
a key below 1000 with an entry at its index hits it, with entryIndex the key; every other
key misses. A lookup during a WRITE may answer as the entry was before it or as it is
after it, and once it has answered as after, never again as before.
"""

import cocotb
from cocotb.task import bridge
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters, LiveBus

TABLE, NAME = 0, "eni"
KEY_BITS, SIZE, DATA_BITS = 10, 1000, 40
EXPECTED = drv.Descriptor(contract.KIND_DIRECT, KEY_BITS, SIZE, DATA_BITS,
                          contract.INFO_WINDOW_BYTES, 0, 2, 0)
TIMEOUT_MS = 400

# A layout for the unit (BUILD_ID 0: a unit no layout.json describes). Action ids reach
# both ends of the 8-bit field; "pair" packs two parameters.
ACTIONS = {"set": (1, (40,)), "pair": (0x80, (8, 32)), "drop": (0xFF, ())}
LAYOUT = """{"buildId": 0, "program": {"name": "direct_unit", "tables": [
{"name": "eni", "index": 0, "kind": "direct", "size": 1000, "keyWidth": 10,
 "dataWidth": 40, "latency": 2, "counters": false,
 "key": [{"fields": ["meta.eni"], "width": 10}],
 "actions": [
  {"name": "set", "id": 1, "params": [{"name": "v", "width": 40, "offset": 0}], "ops": []},
  {"name": "pair", "id": 128, "params": [{"name": "hi", "width": 8, "offset": 32},
                                         {"name": "lo", "width": 32, "offset": 0}], "ops": []},
  {"name": "drop", "id": 255, "params": [], "ops": []}]}
]}}
"""
MISS = (False, None, None, None)


def pack(widths, params):
    """Action data from parameter values, first parameter in the most significant bits
    (docs/pipeline.md)."""
    data = 0
    for w, v in zip(widths, params):
        data = data << w | v
    return data


class DirectTableTb(AxiLiteRegisters):
    def __init__(self, dut):
        self.dut = dut
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.cycles = cocotb_util.CycleCounter(dut)
        self.base = EXPECTED.base
        self.oracle = {}   # index -> (action id, data)
        self.handles = {}  # index -> the driver's handle of its entry
        self.inputs = {}   # clock -> key on the port during that clock
        self.outputs = {}  # clock -> (hit, action id, data, entryIndex) valid during it
        self.monitor = None
        self.lookups_done = self.hits_seen = 0
        self.dev = None

    async def start(self):
        """Reset; wait for the window's CLEAR after reset (STATUS busy); open the driver on
        the live bus and load the layout."""
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        while await self.read32(self.base + contract.WIN_STATUS) & contract.STATUS_BUSY:
            pass
        self.dev = await self.open()

    async def open(self):
        """A driver handle on the DUT with the unit's layout; its descriptor checked."""
        def opened():
            dev = drv.Device(LiveBus(self))
            dev.layout_load_text(LAYOUT, "direct_unit.json")
            return dev
        dev = await bridge(opened)()
        snapshot = await drv.read_info_block(self.read32)
        assert drv.descriptors(snapshot) == [EXPECTED], drv.descriptors(snapshot)
        return dev

    async def call(self, fn, *args):
        """A driver call (a Device method and its arguments) against the live DUT."""
        return await bridge(lambda: fn(*args))()

    # -------------------------------------------------------------- table changes

    @staticmethod
    def rand_action(rng):
        name = rng.choice(sorted(ACTIONS))
        return name, [rng.getrandbits(w) for w in ACTIONS[name][1]]

    async def add(self, key, name, params):
        h = await self.call(self.dev.entry_add, NAME, [key], name, params)
        self.oracle[key] = (ACTIONS[name][0], pack(ACTIONS[name][1], params))
        self.handles[key] = h

    async def modify(self, key, name, params):
        await self.call(self.dev.entry_modify, NAME, self.handles[key], name, params)
        self.oracle[key] = (ACTIONS[name][0], pack(ACTIONS[name][1], params))

    async def delete(self, key):
        await self.call(self.dev.entry_delete, NAME, self.handles.pop(key))
        del self.oracle[key]

    async def read_entry(self, index):
        """READ straight on the window: (valid, action id, key, data)."""
        assert await self.window_command(self.base, contract.CMD_READ, index) == \
            contract.STATUS_ERROR_NONE
        flags = await self.read32(self.base + contract.WIN_FLAGS)
        data = await self.read32(self.base + contract.WIN_DATA) | \
            await self.read32(self.base + contract.WIN_DATA + 4) << 32
        return (bool(flags & contract.FLAGS_VALID), flags >> contract.FLAGS_ACTION_SHIFT & 0xFF,
                await self.read32(self.base + contract.WIN_KEY), data)

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
                                   int(dut.result_payload_entryIndex.value))

    async def stream(self, keys, until=None):
        """Puts `keys` on the lookup port one per clock; with `until`, cycles through them
        until it returns true."""
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

    async def collect(self):
        """[(clock, key, result)] of every key issued so far; each result exactly
        `latency` clocks after its key, and no result without a key."""
        await ClockCycles(self.dut.clk, EXPECTED.latency + 2)
        monitor, self.monitor = self.monitor, None
        await monitor
        out = []
        for c in sorted(self.inputs):
            r = self.outputs.pop(c + EXPECTED.latency, None)
            assert r is not None, f"no result {EXPECTED.latency} clocks after the key of clock {c}"
            out.append((c, self.inputs[c], r))
        assert not self.outputs, f"results without a key: clocks {sorted(self.outputs)[:8]}"
        self.inputs.clear()
        self.lookups_done += len(out)
        self.hits_seen += sum(r[0] for _, _, r in out)
        return out

    @staticmethod
    def answer(oracle, key):
        """(hit, action id, data, entryIndex) the contract gives a key."""
        e = oracle.get(key) if key < SIZE else None
        return MISS if e is None else (True, e[0], e[1], key)

    @staticmethod
    def seen(result):
        """A DUT result with what a miss leaves unspecified blanked."""
        return result if result[0] else MISS

    async def lookups(self, keys):
        """Looks the keys up back to back; each result must be the oracle's."""
        await self.stream(keys)
        for c, k, r in await self.collect():
            want = self.answer(self.oracle, k)
            assert self.seen(r) == want, f"key {k} (clock {c}): DUT {self.seen(r)}, oracle {want}"

    async def hit_miss_counts(self):
        return (await self.read32(self.base + contract.WIN_HITS)
                | await self.read32(self.base + contract.WIN_HITS + 4) << 32,
                await self.read32(self.base + contract.WIN_MISSES)
                | await self.read32(self.base + contract.WIN_MISSES + 4) << 32)


async def fill(tb, rng, n):
    """`n` entries at random free indexes, the first and last index among them."""
    keys = [0, SIZE - 1] + rng.sample([k for k in range(1, SIZE - 1) if k not in tb.oracle], n - 2)
    for k in keys:
        await tb.add(k, *tb.rand_action(rng))
    return keys


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_random_lookups(dut):
    """Random entries added, modified and deleted through the driver in rounds; after
    each round random keys over the whole key space (1000..1023 included) and every
    present key, back to back, against the oracle; the hit and miss counters agree."""
    rng, _ = cocotb_util.test_rng(dut, "random_lookups")
    tb = DirectTableTb(dut)
    await tb.start()
    await fill(tb, rng, 200)
    for rnd in range(5):
        for _ in range(40):
            r = rng.random()
            present = sorted(tb.oracle)
            if r < 0.4:
                free = rng.choice([k for k in range(SIZE) if k not in tb.oracle])
                await tb.add(free, *tb.rand_action(rng))
            elif r < 0.7:
                await tb.modify(rng.choice(present), *tb.rand_action(rng))
            else:
                await tb.delete(rng.choice(present))
        keys = [rng.randrange(1 << KEY_BITS) for _ in range(400)] + sorted(tb.oracle)
        rng.shuffle(keys)
        await tb.lookups(keys)
        dut._log.info("round %d: %d entries", rnd, len(tb.oracle))
    assert await tb.hit_miss_counts() == (tb.hits_seen, tb.lookups_done - tb.hits_seen)
    assert tb.hits_seen > 1000 and tb.lookups_done - tb.hits_seen > 500, \
        (tb.hits_seen, tb.lookups_done)


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_out_of_range_keys_miss(dut):
    """Keys 1000..1023 address no entry: with entries at 0..23 and 976..999 (what the key's
    low bits, or its wrap past 999, would reach) they all miss; the driver refuses to add
    one, and the table is as it was."""
    rng, _ = cocotb_util.test_rng(dut, "out_of_range_keys_miss")
    tb = DirectTableTb(dut)
    await tb.start()
    for k in list(range(24)) + list(range(SIZE - 24, SIZE)):
        await tb.add(k, *tb.rand_action(rng))
    beyond = list(range(SIZE, 1 << KEY_BITS))
    await tb.lookups(beyond + sorted(tb.oracle) + beyond[::-1])
    for key in (SIZE, (1 << KEY_BITS) - 1):
        try:
            await tb.call(tb.dev.entry_add, NAME, [key], "drop")
        except drv.MatchaError as e:
            assert e.code == drv.EINVAL and f"key {key} is beyond the last entry" in e.message, e
        else:
            raise AssertionError(f"key {key} was added")
    await tb.lookups(beyond + sorted(tb.oracle))


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_clear_empties(dut):
    """CLEAR (matcha_table_clear) under lookups every clock: each answers as before or
    misses, and all miss after it; every index reads back invalid; the driver has no
    entry left, and the same keys can be added again."""
    rng, _ = cocotb_util.test_rng(dut, "clear_empties")
    tb = DirectTableTb(dut)
    await tb.start()
    keys = await fill(tb, rng, 300)
    before = dict(tb.oracle)
    stop = False
    task = cocotb.start_soon(tb.stream(keys, until=lambda: stop))
    await tb.call(tb.dev.table_clear, TABLE)
    tb.oracle.clear()
    tb.handles.clear()
    await ClockCycles(dut.clk, 3)
    stop = True
    await task
    answered = 0
    for c, k, r in await tb.collect():
        r = tb.seen(r)
        assert r in (tb.answer(before, k), MISS), f"key {k} (clock {c}) during CLEAR: {r}"
        answered += r[0]
    dut._log.info("%d lookups answered as before the CLEAR", answered)
    await tb.lookups(keys)
    for i in range(SIZE):
        assert await tb.read_entry(i) == (False, 0, 0, 0), f"entry {i} after CLEAR"
    assert await tb.call(tb.dev.entry_handles, NAME) == []
    for k in keys[:20]:
        await tb.add(k, *tb.rand_action(rng))
    await tb.lookups(keys)


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_read_back_after_reset_is_empty(dut):
    """From random power-up contents, the table is empty after reset: adoption reads every
    index back and finds no entry, and every key misses. Entries added then are adopted by
    a second handle, in index order, as the hardware holds them (KEY reads 0: the index is
    the key)."""
    rng, _ = cocotb_util.test_rng(dut, "read_back_after_reset_is_empty")
    tb = DirectTableTb(dut)
    await tb.start()
    await tb.call(tb.dev.tables_adopt)
    assert await tb.call(tb.dev.entry_handles, NAME) == []
    await tb.lookups(list(range(1 << KEY_BITS)))
    assert tb.hits_seen == 0
    keys = await fill(tb, rng, 12)
    second = await tb.open()
    await tb.call(second.tables_adopt)
    handles = await tb.call(second.entry_handles, NAME)
    assert len(handles) == len(keys)
    for h, k in zip(handles, sorted(keys)):
        view = await tb.call(second.entry_read, NAME, h)
        action_id, data = tb.oracle[k]
        name = next(n for n, (i, _) in ACTIONS.items() if i == action_id)
        assert (view.index, view.action, pack(ACTIONS[name][1], view.params)) == (k, name, data), \
            f"handle {h}: {view}, key {k} holds {tb.oracle[k]}"
        assert await tb.read_entry(k) == (True, action_id, 0, data)
    # The second handle continues the first one's table: it deletes an adopted entry.
    await tb.call(second.entry_delete, NAME, handles[0])
    del tb.oracle[min(keys)]
    await tb.lookups(keys)
    second.close()


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_same_key_during_write(dut):
    """One key looked up every clock while the driver adds its entry, modifies it twice
    and deletes it: every result is the entry as before the WRITE or as after it, and once
    a lookup has seen the new entry no later one sees the old."""
    rng, _ = cocotb_util.test_rng(dut, "same_key_during_write")
    tb = DirectTableTb(dut)
    await tb.start()
    key = rng.randrange(1, SIZE - 1)
    # Neighbours, so that a WRITE reaching the wrong index would show.
    await tb.add(key - 1, "set", [rng.getrandbits(40)])
    await tb.add(key + 1, "set", [rng.getrandbits(40)])
    steps = [("add", "pair", [0xA5, rng.getrandbits(32)]), ("modify", "set", [rng.getrandbits(40)]),
             ("modify", "drop", []), ("delete",)]
    for step in steps:
        old = tb.answer(tb.oracle, key)
        stop = False
        task = cocotb.start_soon(tb.stream([key], until=lambda: stop))
        await ClockCycles(dut.clk, 4)
        await getattr(tb, step[0])(key, *step[1:])
        await ClockCycles(dut.clk, 4)
        stop = True
        await task
        new = tb.answer(tb.oracle, key)
        results = [tb.seen(r) for _, _, r in await tb.collect()]
        assert set(results) <= {old, new}, f"{step[0]}: results {set(results)}, {old} or {new}"
        first_new = results.index(new)
        assert results[:first_new] == [old] * first_new and \
            results[first_new:] == [new] * (len(results) - first_new), \
            f"{step[0]}: the old entry answered after the new one"
        assert 0 < first_new < len(results), f"{step[0]}: not seen before and after"
        dut._log.info("%s: %d lookups as before, %d as after", step[0], first_new,
                      len(results) - first_new)
    await tb.lookups([key - 1, key, key + 1])


@cocotb.test(timeout_time=TIMEOUT_MS, timeout_unit="ms")
async def test_bad_window_address_slverr(dut):
    """Offsets of the window that no register holds answer SLVERR, reads and writes
    alike, and change nothing; commands with an INDEX past the last entry, or that the
    table does not have, fail in STATUS."""
    rng, _ = cocotb_util.test_rng(dut, "bad_window_address_slverr")
    tb = DirectTableTb(dut)
    await tb.start()
    keys = await fill(tb, rng, 10)
    # KEY and MASK have one word (10 bits), DATA two (40 bits); then the end of the
    # common registers, and the window's last word.
    for off in (contract.WIN_KEY + 4, contract.WIN_MASK + 4, contract.WIN_DATA + 8,
                contract.WIN_END, contract.INFO_WINDOW_BYTES - 4):
        r = await tb.axil.read(tb.base + off, 4)
        assert r.resp == AxiResp.SLVERR, f"read of offset 0x{off:x}: {r.resp!r}"
        w = await tb.axil.write(tb.base + off, (0xFFFFFFFF).to_bytes(4, "little"))
        assert w.resp == AxiResp.SLVERR, f"write of offset 0x{off:x}: {w.resp!r}"
    for op, index, error in ((contract.CMD_WRITE, SIZE, contract.STATUS_ERROR_INDEX_RANGE),
                             (contract.CMD_READ, 0xFFFFFFFF, contract.STATUS_ERROR_INDEX_RANGE),
                             (contract.CMD_ZERO, 0, contract.STATUS_ERROR_UNKNOWN_CMD),
                             (contract.CMD_DEFAULT, 0, contract.STATUS_ERROR_UNKNOWN_CMD)):
        assert await tb.window_command(tb.base, op, index) == error, (op, index)
    await tb.lookups(keys + [rng.randrange(1 << KEY_BITS) for _ in range(50)])
