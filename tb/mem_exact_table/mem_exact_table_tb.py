# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_mem_exact_table: an exact table in buckets of one 256-bit beat in
memory (matcha_mem_exact_table_narrow: the same on a memory of 128-bit beats, two a bucket) (32-bit keys, 16-bit action data, 1024 buckets of 4 entries), results 512 clocks
after their key, behind an AXI4 master on a memory that answers reads 100 to 600 clocks
late (tb/common/late_memory.py; its writes land at once, or later where a test says).
matcha_mem_exact_table has an on-chip stash of 16 entries for keys whose bucket is full
(4 ways of 4 slots, MEMX_WIN_STASH); the narrow one has none.

The oracle is a dict of key -> (action, data, entry index). Entries are placed by
`BucketWriter`, written from the generated contract (MEMX_*) and the hash of
tb/model/hashing.py: through the table's control window, or straight into the memory for
a fast fill. A result is checked against the dict unless it is flagged late; the number
of late results is checked against the table's LATE counter and against what the memory's
latency makes late.
"""

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters
from tb.common.late_memory import LateMemory
from tb.model.hashing import exact_index

KEY_BITS, DATA_BITS, BUCKETS, LATENCY = 32, 16, 1024, 512
BUCKET_BYTES = 32
ENTRY_BYTES = contract.MEMX_ENTRY_KEY_BYTE + (KEY_BITS + 7) // 8 + (DATA_BITS + 7) // 8
SLOTS = min(BUCKET_BYTES // ENTRY_BYTES, contract.MEMX_MAX_SLOTS)
BASE = contract.INFO_WINDOW_BYTES  # the window of table 0
LATE = contract.MEMX_WIN_LATE
# The load factor docs/tables.md gives for 4-entry buckets with one choice: at 30 % of the
# entries in use, about 1 % of random keys find their bucket full.
LOAD_FACTOR = 0.30


class BucketFull(Exception):
    pass


def bucket_of(key):
    return exact_index(key, KEY_BITS, 0, BUCKETS)


def index_of(bucket, slot):
    return bucket << contract.MEMX_INDEX_SLOT_BITS | slot


def entry_bytes(key, action, data, valid=True):
    """An entry as the contract lays it out: flags, action id, key and data little-endian."""
    b = bytearray(ENTRY_BYTES)
    b[contract.MEMX_ENTRY_FLAGS_BYTE] = contract.MEMX_ENTRY_VALID if valid else 0
    b[contract.MEMX_ENTRY_ACTION_BYTE] = action
    k = contract.MEMX_ENTRY_KEY_BYTE
    b[k:k + 4] = key.to_bytes(4, "little")
    b[k + 4:k + 6] = data.to_bytes(2, "little")
    return bytes(b)


STASH_BASE = index_of(BUCKETS, 0)


def stash_index(key, stash, way):
    """The window INDEX of `key`'s slot in `way` of a stash of `stash` entries: after the
    buckets', way by way, each slot the on-chip exact table's hash (docs/tables.md)."""
    per_way = stash // contract.MEMX_STASH_WAYS
    return STASH_BASE + way * per_way + exact_index(key, KEY_BITS, way, per_way)


class BucketWriter:
    """Places entries as a driver does: a key goes to its own slot when present, else to
    the first free slot of its bucket, else (with `stash` entries on chip) to the first free
    one of its stash slots, lowest way first; with no room it is refused. `table` is the
    oracle."""

    def __init__(self, stash=0):
        self.stash = stash
        self.slots = {}  # bucket -> [key or None] * SLOTS
        self.stashed = {}  # stash INDEX -> key
        self.table = {}  # key -> (action, data, index)

    def place(self, key, use_stash=True):
        b = bucket_of(key)
        slots = self.slots.setdefault(b, [None] * SLOTS)
        if key in slots:
            return index_of(b, slots.index(key))
        if key in self.stashed.values():
            return next(i for i, k in self.stashed.items() if k == key)
        if None in slots:
            s = slots.index(None)
            slots[s] = key
            return index_of(b, s)
        if use_stash and self.stash:
            for way in range(contract.MEMX_STASH_WAYS):
                i = stash_index(key, self.stash, way)
                if i not in self.stashed:
                    self.stashed[i] = key
                    return i
            raise BucketFull(f"bucket {b} is full, and so are the key's stash slots")
        raise BucketFull(f"bucket {b} is full")

    def remove(self, key):
        action, data, index = self.table.pop(key)
        if index >= STASH_BASE:
            del self.stashed[index]
        else:
            self.slots[index >> contract.MEMX_INDEX_SLOT_BITS][index & 0xF] = None
        return index

    def lookup(self, key):
        e = self.table.get(key)
        return (True,) + e if e else (False, None, None, None)


class MemExactTb(AxiLiteRegisters):
    def __init__(self, dut, rng):
        self.dut = dut
        self.rng = rng
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil", "m_axi"))
        self.cycles = cocotb_util.CycleCounter(dut)
        self.memory = None
        self.writer = None
        self.stash = 0
        self.results = []

    async def start(self, latency=100, write_latency=0, write_busy=0.0):
        """`write_latency` and `write_busy`: the memory's writes land and are answered that
        many clocks late, and awready, wready and bvalid are held back that often."""
        await cocotb_util.start(self.dut, inputs_low=("lookup_valid",))
        self.memory = LateMemory(self.dut, "m_axi", BUCKETS * BUCKET_BYTES, self.rng, self.cycles)
        self.memory.latency = latency
        self.memory.write_latency = write_latency
        self.memory.set_write_pauses(write_busy, write_busy, write_busy)
        cocotb.start_soon(self._monitor())
        # The CLEAR after reset writes every bucket.
        for _ in range(100):
            if not await self.read32(BASE + contract.WIN_STATUS) & contract.STATUS_BUSY:
                break
            await ClockCycles(self.dut.clk, 100)
        else:
            raise AssertionError("the CLEAR after reset never ended")
        self.stash = await self.read32(BASE + contract.MEMX_WIN_STASH)
        self.writer = BucketWriter(self.stash)

    async def write_words(self, offset, value, bits):
        for w in range((bits + 31) // 32):
            await self.write32(BASE + offset + 4 * w, (value >> (32 * w)) & 0xFFFFFFFF)

    async def read_words(self, offset, bits):
        v = 0
        for w in range((bits + 31) // 32):
            v |= await self.read32(BASE + offset + 4 * w) << (32 * w)
        return v & ((1 << bits) - 1)

    async def command(self, op, index=None):
        return await self.window_command(BASE, op, index)

    async def write_entry(self, index, key, action, data, valid=True):
        await self.write_words(contract.WIN_KEY, key, KEY_BITS)
        await self.write_words(contract.WIN_DATA, data, DATA_BITS)
        await self.write32(BASE + contract.WIN_FLAGS, drv.flags_word(action, valid))
        assert await self.command(contract.CMD_WRITE, index) == 0

    async def insert(self, key, action, data):
        """Adds or modifies `key` through the window; raises BucketFull when it has no room."""
        index = self.writer.place(key)
        await self.write_entry(index, key, action, data)
        self.writer.table[key] = (action, data, index)
        return index

    async def delete(self, key):
        """Clears the entry's valid flag; its key, action and data stay in memory."""
        action, data, _ = self.writer.table[key]
        await self.write_entry(self.writer.remove(key), key, action, data, valid=False)

    def poke(self, key, action, data):
        """Adds `key` straight into the memory (the layout of the contract); a full bucket
        refuses it."""
        index = self.writer.place(key, use_stash=False)
        b, s = index >> contract.MEMX_INDEX_SLOT_BITS, index & 0xF
        self.memory.mem.write(b * BUCKET_BYTES + s * ENTRY_BYTES, entry_bytes(key, action, data))
        self.writer.table[key] = (action, data, index)

    async def late_count(self):
        lo = await self.read32(BASE + LATE)
        return await self.read32(BASE + LATE + 4) << 32 | lo

    async def _monitor(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.result_valid.value):
                self.results.append((self.cycles.cycle,
                                     bool(dut.result_payload_late.value),
                                     bool(dut.result_payload_hit.value),
                                     int(dut.result_payload_actionId.value),
                                     int(dut.result_payload_actionData.value),
                                     int(dut.result_payload_entryIndex.value)))

    @property
    def beats(self):
        """Beats of a bucket on the memory port: two on the narrow model's."""
        return BUCKET_BYTES // self.memory.byte_lanes

    async def drive(self, keys, every=1):
        """Drives `keys` one every `every` clocks, and at most one every bucket's beats on
        the memory port (the narrow model's carries a bucket in two clocks); returns
        (clock, key) of each."""
        every = max(every, self.beats)
        dut = self.dut
        issued = []
        for k in keys:
            dut.lookup_valid.value = 1
            dut.lookup_payload.value = k
            issued.append((self.cycles.cycle, k))
            await RisingEdge(dut.clk)
            if every > 1:
                dut.lookup_valid.value = 0
                await ClockCycles(dut.clk, every - 1)
        dut.lookup_valid.value = 0
        return issued

    async def lookups(self, keys, every=1, expect=None):
        """Looks `keys` up; checks every result leaves exactly LATENCY clocks after its key
        and, unless late, answers as the oracle (or `expect(key, result)`) does. Returns
        the results, each (key, late, hit, action, data, index)."""
        self.results.clear()
        issued = await self.drive(keys, every)
        await ClockCycles(self.dut.clk, LATENCY + 2)
        assert len(self.results) == len(issued), (len(self.results), len(issued))
        out = []
        for (cycle, k), (rcycle, late, hit, action, data, index) in zip(issued, self.results):
            assert rcycle - cycle == LATENCY, f"key {k:#x}: result after {rcycle - cycle} clocks"
            got = (hit, action, data, index) if hit else (False, None, None, None)
            if not late:
                if expect:
                    expect(k, cycle, got)
                else:
                    assert got == self.writer.lookup(k), f"key {k:#x}: got {got}, oracle {self.writer.lookup(k)}"
            out.append((k, late) + got)
        return out


def rand_key(rng):
    return rng.getrandbits(KEY_BITS)


def keys_in_bucket(rng, bucket, n, exclude=()):
    out = []
    while len(out) < n:
        k = rand_key(rng)
        if bucket_of(k) == bucket and k not in exclude and k not in out:
            out.append(k)
    return out


def fill(tb, rng, n):
    """Pokes random keys until `n` are in; returns (keys, refused keys)."""
    keys, refused = [], []
    while len(keys) < n:
        k = rand_key(rng)
        if k in tb.writer.table or k in refused:
            continue
        try:
            tb.poke(k, rng.randrange(256), rng.getrandbits(DATA_BITS))
            keys.append(k)
        except BucketFull:
            refused.append(k)
    return keys, refused


def absent_keys(tb, rng, n):
    out = []
    while len(out) < n:
        k = rand_key(rng)
        if k not in tb.writer.table:
            out.append(k)
    return out


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_fill_to_load_factor(dut):
    """The table filled with random keys to the documented load factor: few keys refused,
    every key and as many absent ones looked up one a clock, none late, all right."""
    rng, _ = cocotb_util.test_rng(dut, "fill_to_load_factor")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=200)
    tb.memory.jitter = 50
    keys, refused = fill(tb, rng, int(LOAD_FACTOR * BUCKETS * SLOTS))
    attempts = len(keys) + len(refused)
    assert len(refused) <= 0.03 * attempts, f"{len(refused)} of {attempts} keys refused"
    looked = keys + refused + absent_keys(tb, rng, len(keys))
    rng.shuffle(looked)
    out = await tb.lookups(looked)
    assert not any(r[1] for r in out), "late results"
    assert sum(r[2] for r in out) == len(keys)
    assert await tb.late_count() == 0


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_latency_sweep(dut):
    """Memory latencies of 100, 200 and 300 clocks with jitter and rvalid pauses: a
    lookup every clock (every two on the narrow model), each result exactly LATENCY later,
    none late."""
    rng, _ = cocotb_util.test_rng(dut, "latency_sweep")
    tb = MemExactTb(dut, rng)
    await tb.start()
    keys, _ = fill(tb, rng, 600)
    for latency in (100, 200, 300):
        tb.memory.latency = latency
        tb.memory.jitter = 20
        tb.memory.set_pauses(0.0, 0.05)
        looked = [rng.choice(keys) if rng.random() < 0.5 else rand_key(rng) for _ in range(500)]
        reads = tb.memory.reads
        out = await tb.lookups(looked)
        assert tb.memory.reads - reads == len(looked), "a read per lookup"
        assert not any(r[1] for r in out), f"late results at a memory latency of {latency}"
        cycles = [c for c, *_ in tb.results]
        assert cycles == list(range(cycles[0], cycles[0] + tb.beats * len(looked), tb.beats)), \
            "a result for every lookup, as the lookups came"
    assert await tb.late_count() == 0


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_latency_above_l(dut):
    """Reads answered after LATENCY clocks: those lookups leave on time, flagged late, and
    counted; the lookups behind them and after them are unaffected."""
    rng, _ = cocotb_util.test_rng(dut, "latency_above_l")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    keys, _ = fill(tb, rng, 300)
    tb.memory.latency = LATENCY + 100
    slow = [rng.choice(keys) for _ in range(200)]
    tb.results.clear()
    issued = await tb.drive(slow)
    # The reads of these keys come back 100 clocks too late, in order; keys sent after
    # them on a fast memory wait for them (one read id) and are late while that lasts.
    # Still a lookup every clock: the table catches up by passing over the reads that
    # could not be answered in time.
    tb.memory.latency = 100
    fast = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(1200)]
    issued += await tb.drive(fast)
    await ClockCycles(dut.clk, LATENCY + 2)
    assert len(tb.results) == len(issued)
    late = 0
    for (cycle, k), (rcycle, is_late, hit, action, data, index) in zip(issued, tb.results):
        assert rcycle - cycle == LATENCY
        if is_late:
            late += 1
            continue
        got = (hit, action, data, index) if hit else (False, None, None, None)
        assert got == tb.writer.lookup(k), f"key {k:#x}: got {got}"
    flags = [r[1] for r in tb.results]
    assert all(flags[:len(slow)]), "a read answered after LATENCY clocks left on time"
    assert not any(flags[-300:]), "lookups long after the slow reads are late"
    assert await tb.late_count() == late
    dut._log.info("%d of %d lookups late", late, len(issued))
    # Later lookups: none late.
    out = await tb.lookups(fast[:200])
    assert not any(r[1] for r in out)
    assert await tb.late_count() == late


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_memory_error_answers_late(dut):
    """Reads of a third of the buckets answered SLVERR (their data inverted): every lookup
    of those buckets leaves flagged late and is counted, none answers from the bad beat;
    the others answer as the oracle; once the memory answers OKAY again, so do all."""
    rng, _ = cocotb_util.test_rng(dut, "memory_error_answers_late")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    keys, _ = fill(tb, rng, 600)
    failing = set(rng.sample(range(BUCKETS), BUCKETS // 3))
    tb.memory.failing = {b * BUCKET_BYTES for b in failing}
    looked = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(1000)]
    out = await tb.lookups(looked)
    bad = [bucket_of(k) in failing for k in looked]
    assert [late for _, late, *_ in out] == bad, "a lookup of a failing bucket answered, or a good one was late"
    assert await tb.late_count() == sum(bad)
    tb.memory.failing = set()
    out = await tb.lookups(looked)
    assert not any(late for _, late, *_ in out)
    assert await tb.late_count() == sum(bad)


@cocotb.test(timeout_time=10, timeout_unit="ms")
async def test_slower_memory_answers_its_share(dut):
    """Lookups at twice the rate the memory serves reads (rvalid held back half the
    clocks): the table learns the memory's pace and issues only the reads that can come
    back in time, so that once it has, it answers most of the half the memory can serve
    rather than a queue of reads that all come back late (docs/tables.md, "The pace of
    reads"); every answer not flagged late is the oracle's."""
    rng, _ = cocotb_util.test_rng(dut, "slower_memory_answers_its_share")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    keys, _ = fill(tb, rng, 400)
    tb.memory.set_pauses(0.0, 0.5)
    looked = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(6000)]
    out = await tb.lookups(looked)
    settled = [late for _, late, *_ in out[len(out) // 2:]]
    share = 1 - sum(settled) / len(settled)
    dut._log.info("answered %.3f of the lookups after the first half, %d late in all",
                  share, sum(late for _, late, *_ in out))
    # The memory serves half the lookups' reads: 0.5 is the most the table can answer.
    assert share >= 0.35, f"answered {share:.3f} of the lookups, the memory serves 0.5"
    assert await tb.late_count() == sum(late for _, late, *_ in out)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_ar_backpressure(dut):
    """arready held low at random: no lookup lost or reordered; held low longer than
    LATENCY: the lookups that could not issue in time leave late, the rest are right."""
    rng, _ = cocotb_util.test_rng(dut, "ar_backpressure")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=150)
    keys, _ = fill(tb, rng, 400)
    tb.memory.set_pauses(0.4, 0.1)
    looked = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(400)]
    out = await tb.lookups(looked, every=2)
    assert not any(r[1] for r in out), "late under AR pauses a lookup every other clock"
    # arready low for 700 clocks under a lookup every clock.
    tb.memory.set_pauses(0.0, 0.0)
    tb.results.clear()
    tb.memory.stall_ar()
    stalled = [rng.choice(keys) for _ in range(700)]
    issued = await tb.drive(stalled)
    tb.memory.release_ar()
    after = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(300)]
    issued += await tb.drive(after)
    await ClockCycles(dut.clk, LATENCY + 2)
    assert len(tb.results) == len(issued)
    late = 0
    for (cycle, k), (rcycle, is_late, hit, action, data, index) in zip(issued, tb.results):
        assert rcycle - cycle == LATENCY
        late += is_late
        if not is_late:
            assert ((hit, action, data, index) if hit else (False, None, None, None)) == tb.writer.lookup(k)
    flags = [r[1] for r in tb.results]
    # Keys that waited over LATENCY - 150 clocks for arready cannot be answered in time.
    assert all(flags[:700 - (LATENCY - 150) - 20]), "a lookup held back past its deadline left on time"
    assert not any(flags[-100:]), "lookups after the stall are late"
    assert await tb.late_count() == late


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_writes_racing_lookups(dut):
    """One key looked up every clock while the window rewrites, deletes and re-adds its
    entry and its bucket neighbour's: every result is a state the entry had while the
    lookup was in flight, never a mix, and the neighbour is never disturbed."""
    await writes_racing_lookups(dut, "writes_racing_lookups")


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_late_writes_racing_lookups(dut):
    """test_writes_racing_lookups on a memory whose writes land, and are answered, 150
    clocks after their data, with the write channels held back at random: the window
    reports a write done only once it is answered, and no lookup after that misses it."""
    await writes_racing_lookups(dut, "late_writes_racing_lookups", write_latency=150,
                                write_busy=0.3, lookups=6000)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_stash_writes_racing_lookups(dut):
    """test_writes_racing_lookups with the key in the stash (its bucket full of others, the
    neighbour one of them): every result is a state the stash entry had while the lookup
    was in flight, its answer waiting on chip for the bucket's read."""
    await writes_racing_lookups(dut, "stash_writes_racing_lookups", in_stash=True)


async def writes_racing_lookups(dut, name, write_latency=0, write_busy=0.0, lookups=2000,
                                in_stash=False):
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = MemExactTb(dut, rng)
    await tb.start(latency=120, write_latency=write_latency, write_busy=write_busy)
    if in_stash and not tb.stash:
        dut._log.info("no stash in this model")
        return
    tb.memory.jitter = 40
    bucket = rng.randrange(BUCKETS)
    if in_stash:
        *others, key = keys_in_bucket(rng, bucket, SLOTS + 1)
        for k in others:
            tb.poke(k, 0x11, 0x2222)
        neighbour = others[-1]
    else:
        key, neighbour = keys_in_bucket(rng, bucket, 2)
        await tb.insert(neighbour, 0x11, 0x2222)
    await tb.insert(key, 0, 0)
    assert (tb.writer.table[key][2] >= STASH_BASE) == in_stash
    index = tb.writer.table[key][2]
    history = [(0, (True, 0, 0, index))]  # (clock from which, what a lookup of key answers)
    stop = False

    async def rewrite():
        n = 1
        while not stop:
            if n % 5 == 0:
                await tb.delete(key)
                state = (False, None, None, None)
            else:
                # Action and data move together: a mix of two writes matches neither.
                await tb.insert(key, n & 0xFF, (n * 0x0101) & 0xFFFF)
                state = (True, n & 0xFF, (n * 0x0101) & 0xFFFF, tb.writer.table[key][2])
            history.append((tb.cycles.cycle, state))
            n += 1

    def states_between(first, last):
        """What a lookup may answer if its read happened between clocks first and last."""
        out = set()
        for i, (since, state) in enumerate(history):
            until = history[i + 1][0] if i + 1 < len(history) else 1 << 62
            # A write's B (after which the window reports it done) comes after the memory
            # took it: a state may be seen from a little before its recorded clock.
            if since - 50 <= last and until >= first:
                out.add(state)
        return out

    writer = cocotb.start_soon(rewrite())
    looked = [key if i % 4 else neighbour for i in range(lookups)]
    tb.results.clear()
    issued = await tb.drive(looked)
    stop = True
    await writer
    await ClockCycles(dut.clk, LATENCY + 2)
    assert len(tb.results) == len(issued)
    assert len(history) > 20, f"only {len(history)} writes during the lookups"
    seen = set()
    for (cycle, k), (rcycle, late, hit, action, data, index) in zip(issued, tb.results):
        assert rcycle - cycle == LATENCY and not late
        got = (hit, action, data, index) if hit else (False, None, None, None)
        if k == neighbour:
            assert got == (True, 0x11, 0x2222, tb.writer.table[neighbour][2]), f"neighbour: {got}"
        else:
            allowed = states_between(cycle, rcycle)
            assert got in allowed, f"clock {cycle}: {got} is no state of the entry then ({allowed})"
            seen.add(got)
    assert (False, None, None, None) in seen, "no lookup saw the entry deleted"
    assert len(seen) > 10, f"only {len(seen)} states seen"


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_reads_racing_lookups(dut):
    """Window READs while a lookup runs every clock, on a memory whose answers overtake
    one another across read ids: every READ gets its entry, every lookup its own bucket."""
    rng, _ = cocotb_util.test_rng(dut, "reads_racing_lookups")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    tb.memory.jitter = 80
    keys, _ = fill(tb, rng, 300)
    stop = False

    async def read_back():
        reads = 0
        while not stop:
            k = rng.choice(keys)
            action, data, index = tb.writer.table[k]
            assert await tb.command(contract.CMD_READ, index) == 0
            assert await tb.read_words(contract.WIN_KEY, KEY_BITS) == k
            assert await tb.read_words(contract.WIN_DATA, DATA_BITS) == data
            assert await tb.read32(BASE + contract.WIN_FLAGS) == drv.flags_word(action)
            reads += 1
        return reads

    reader = cocotb.start_soon(read_back())
    looked = [rng.choice(keys) if rng.random() < 0.7 else rand_key(rng) for _ in range(1500)]
    out = await tb.lookups(looked)
    stop = True
    reads = await reader
    assert reads >= 10, f"only {reads} READs during the lookups"
    assert not any(r[1] for r in out)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_bucket_full_refused(dut):
    """A bucket's SLOTS entries taken: another key of that bucket is refused, or with a
    stash goes there; the table answers them all; after a delete in the bucket the key
    fits there (a stashed one is deleted from the stash and added again)."""
    rng, _ = cocotb_util.test_rng(dut, "bucket_full_refused")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    bucket = rng.randrange(BUCKETS)
    same = keys_in_bucket(rng, bucket, SLOTS + 1)
    for i, k in enumerate(same[:SLOTS]):
        assert await tb.insert(k, i + 1, k & 0xFFFF) == index_of(bucket, i)
    try:
        index = await tb.insert(same[SLOTS], 9, 9)
        assert tb.stash and index >= STASH_BASE, f"a key went into a full bucket ({index:#x})"
    except BucketFull:
        assert not tb.stash
    await tb.lookups(same + same[::-1])
    await tb.delete(same[1])
    if tb.stash:
        await tb.delete(same[SLOTS])
    assert await tb.insert(same[SLOTS], 9, 9) == index_of(bucket, 1)
    await tb.lookups(same)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_window(dut):
    """The descriptor, READ of an entry the memory holds, INDEX out of range refused,
    hit and miss counters, CLEAR."""
    rng, _ = cocotb_util.test_rng(dut, "window")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=100)
    desc = [await tb.read32(drv.descriptor_address(0) + 4 * j) for j in range(contract.DESC_WORDS)]
    assert desc == drv.Descriptor(contract.KIND_MEM_EXACT, KEY_BITS, BUCKETS * SLOTS, DATA_BITS, BASE, SLOTS,
                                  LATENCY, ENTRY_BYTES).words
    k = rand_key(rng)
    tb.poke(k, 0x5A, 0xBEEF)
    index = tb.writer.table[k][2]
    await tb.write_words(contract.WIN_KEY, 0, KEY_BITS)
    assert await tb.command(contract.CMD_READ, index) == 0
    assert await tb.read_words(contract.WIN_KEY, KEY_BITS) == k
    assert await tb.read_words(contract.WIN_DATA, DATA_BITS) == 0xBEEF
    assert await tb.read32(BASE + contract.WIN_FLAGS) == drv.flags_word(0x5A)
    for bad in (index_of(0, SLOTS), STASH_BASE + tb.stash):
        assert await tb.command(contract.CMD_WRITE, bad) == contract.STATUS_ERROR_INDEX_RANGE
    others = [await tb.insert(rand_key(rng), 1, 2) for _ in range(5)]
    assert len(others) == 5
    looked = [rng.choice(list(tb.writer.table)) if rng.random() < 0.5 else rand_key(rng) for _ in range(100)]
    await tb.lookups(looked)
    hits = sum(tb.writer.lookup(x)[0] for x in looked)
    assert await tb.read_words(contract.WIN_HITS, 64) == hits
    assert await tb.read_words(contract.WIN_MISSES, 64) == len(looked) - hits
    assert await tb.command(contract.CMD_CLEAR) == 0
    assert not any(tb.memory.mem.read(0, BUCKETS * BUCKET_BYTES))
    tb.writer = BucketWriter(tb.stash)
    await tb.lookups(looked[:20])


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_stash_holds_full_buckets_keys(dut):
    """Keys of full buckets go to the stash until its slots are taken, then are refused;
    lookups of keys in buckets, in the stash, refused and absent answer as the oracle,
    a stash hit with its stash INDEX, and count as hits; deletes and re-adds in the stash;
    a READ of a stash entry; the INDEX just past the stash refused; a stash key whose
    bucket comes back late is late; CLEAR empties the stash. On the model without a stash
    (MEMX_WIN_STASH 0) the INDEX after the buckets is refused."""
    rng, _ = cocotb_util.test_rng(dut, "stash_holds_full_buckets_keys")
    tb = MemExactTb(dut, rng)
    await tb.start(latency=200)
    if not tb.stash:
        assert await tb.command(contract.CMD_READ, STASH_BASE) == contract.STATUS_ERROR_INDEX_RANGE
        return
    assert tb.stash == 16
    tb.memory.jitter = 50
    full = rng.sample(range(BUCKETS), 12)
    for b in full:
        for k in keys_in_bucket(rng, b, SLOTS):
            tb.poke(k, rng.randrange(256), rng.getrandbits(DATA_BITS))
    # Until the stash is half full and a key has found no room there. (Keys of one bucket
    # share the stash slot of way 0, and of way 1 where the buckets take CRC bits 16 and
    # up: the hash is the on-chip exact table's. Not every slot may be reachable.)
    stashed, refused = [], []
    for _ in range(4000):
        if refused and 2 * len(stashed) >= tb.stash:
            break
        k = keys_in_bucket(rng, rng.choice(full), 1, exclude=tb.writer.table)[0]
        if k in refused:
            continue
        try:
            index = await tb.insert(k, rng.randrange(256), rng.getrandbits(DATA_BITS))
        except BucketFull:
            refused.append(k)
            continue
        assert STASH_BASE <= index < STASH_BASE + tb.stash
        stashed.append(k)
    else:
        raise AssertionError(f"{len(stashed)} keys stashed, {len(refused)} refused")
    in_memory = [k for k in tb.writer.table if k not in stashed]
    looked = stashed + rng.sample(in_memory, 16) + refused[:16] + absent_keys(tb, rng, 16)
    rng.shuffle(looked)
    out = await tb.lookups(looked + looked[::-1])
    assert not any(r[1] for r in out), "late results"
    assert sum(r[2] and r[5] >= STASH_BASE for r in out) == 2 * len(stashed)
    hits = 2 * sum(tb.writer.lookup(k)[0] for k in looked)
    assert await tb.read_words(contract.WIN_HITS, 64) == hits
    # A READ of a stash entry; the INDEX past the stash.
    k = stashed[0]
    action, data, index = tb.writer.table[k]
    assert await tb.command(contract.CMD_READ, index) == 0
    assert await tb.read_words(contract.WIN_KEY, KEY_BITS) == k
    assert await tb.read_words(contract.WIN_DATA, DATA_BITS) == data
    assert await tb.read32(BASE + contract.WIN_FLAGS) == drv.flags_word(action)
    assert await tb.command(contract.CMD_READ, STASH_BASE + tb.stash) == contract.STATUS_ERROR_INDEX_RANGE
    # Deletes and re-adds: the freed stash slots take keys again.
    for k in stashed[:4]:
        await tb.delete(k)
    for k in stashed[:4]:
        await tb.insert(k, 0x77, rng.getrandbits(DATA_BITS))
    await tb.lookups(stashed + refused[:8])
    # Late stays late: the stash does not answer for a bucket that came back too late.
    tb.memory.latency = LATENCY + 100
    late_before = await tb.late_count()
    out = await tb.lookups(stashed[:8])
    assert all(r[1] for r in out), "a stash key answered though its bucket came back late"
    assert await tb.late_count() == late_before + 8
    tb.memory.latency = 200
    # CLEAR: nothing left, in memory or in the stash.
    assert await tb.command(contract.CMD_CLEAR) == 0
    tb.writer = BucketWriter(tb.stash)
    assert await tb.command(contract.CMD_READ, STASH_BASE + tb.stash - 1) == 0
    assert not await tb.read32(BASE + contract.WIN_FLAGS) & contract.FLAGS_VALID
    await tb.lookups(stashed)
