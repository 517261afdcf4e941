# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of the meter units: matcha_meter_table (256 meters, a 32-bit time base that
ticks every clock) and matcha_meter_small_table (16 meters, a 10-bit time base that ticks
every 3 clocks, so it wraps every 3072 clocks).

The oracle is tb/model/meter.py, RFC 2697 and RFC 2698 written from the RFCs' text and
knowing nothing of the RTL: every packet's colour must be the one the model gives for the
same meter, the same sequence of packets and the same ticks (read from the unit's `now`
output in the clock each request is presented). Refreshes by the sweeper and by READ must
be invisible; forwarding must make back-to-back packets on one meter see exactly what one
packet at a time would. Meters are set through the control window, by register writes or
through the C driver in P4Runtime terms (docs/tables.md, "Meters").
"""

import copy

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util
from tb.common import contract
from tb.common import driver as drv
from tb.common import meter_regs
from tb.common.axil import AxiLiteRegisters
from tb.common.sim import only_on
from tb.model.meter import GREEN, NAMES, RED, YELLOW, HwMeter, MeterBank
from tb.model.test_meter import EDGE_CIR, EDGE_PACKETS, EDGE_PIR, EDGE_SHIFT, TICKS_PER_US

BASE = contract.INFO_WINDOW_BYTES  # the window of meter array 0
CMD, INDEX, FLAGS, DATA = contract.WIN_CMD, contract.WIN_INDEX, contract.WIN_FLAGS, contract.WIN_DATA
HITS, MISSES = contract.WIN_HITS, contract.WIN_MISSES
CMD_WRITE, CMD_READ, CMD_CLEAR = contract.CMD_WRITE, contract.CMD_READ, contract.CMD_CLEAR
CMD_ZERO, CMD_DEFAULT = contract.CMD_ZERO, contract.CMD_DEFAULT
OKAY, SLVERR = 0, 2
LATENCY = 6
CLOCK_HZ = 1_000_000_000 // cocotb_util.CLOCK_NS  # 250 MHz
TABLE = 0


geometry = drv.meter_geometry


EXPECTED = {
    "matcha_meter_table": drv.Descriptor(contract.KIND_METER, 8, 256, 384, BASE,
                                         geometry(32, 40, 32), LATENCY, 1),
    "matcha_meter_small_table": drv.Descriptor(contract.KIND_METER, 4, 16, 384, BASE,
                                               geometry(32, 40, 10), LATENCY, 3),
}

TRANSITIONS = {(a, b) for a in (GREEN, YELLOW, RED) for b in (GREEN, YELLOW, RED)}


class MeterTb(AxiLiteRegisters):
    """A unit of EXPECTED is checked against its expected descriptor; any other unit (the
    benchmark's) is described by its own self-describing block, read in start()."""

    def __init__(self, dut):
        self.dut = dut
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        if dut._name in EXPECTED:
            self._describe(EXPECTED[dut._name])
        self.results = []  # (cycle, colour) of every result, in order
        self.tick = 0      # the time base, unwrapped, as of the last clock the monitor saw
        self.tick_at = {}  # cycle -> unwrapped tick, when `record_ticks`
        self.record_ticks = False
        self.cycles = cocotb_util.CycleCounter(dut)

    def _describe(self, desc):
        self.desc = desc
        self.meters = desc.size
        g = desc.geometry
        self.rate_bits, self.level_bits, self.time_bits = drv.meter_geometry_widths(g)
        self.tick_clocks = desc.extra
        self.bank = MeterBank(self.meters)

    async def start(self):
        await cocotb_util.start(self.dut, inputs_low=("request_valid",))
        if self.dut._name not in EXPECTED:
            tables = drv.descriptors(await drv.read_info_block(self.read32))
            assert len(tables) == 1 and tables[0].code == contract.KIND_METER, tables
            self._describe(tables[0])
        cocotb.start_soon(self._monitor())
        await RisingEdge(self.dut.clk)

    def unwrap(self, now):
        """The unwrapped tick of a time base value at most one wrap after self.tick."""
        return self.tick + ((now - self.tick) & ((1 << self.time_bits) - 1))

    async def _monitor(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            self.tick = self.unwrap(int(dut.now.value))
            if self.record_ticks:
                self.tick_at[self.cycles.cycle] = self.tick
            if int(dut.result_valid.value):
                self.results.append((self.cycles.cycle, int(dut.result_payload_colour.value)))

    # ------------------------------------------------------------------- control window

    async def command(self, op, index=None):
        """A command on the meter's window; returns STATUS's error field."""
        return await self.window_command(BASE, op, index)

    async def stage_meter(self, index, hw):
        """The staging registers of a WRITE of `hw` (an HwMeter, or None: unconfigured)."""
        for i, w in enumerate(meter_regs.write_words(hw or HwMeter())):
            await self.write32(BASE + DATA + 4 * i, w)
        await self.write32(BASE + FLAGS, int(hw is not None))
        await self.write32(BASE + INDEX, index)

    async def write_meter(self, index, hw, model=True):
        """Sets meter `index` to `hw` (an HwMeter), or unconfigures it (None)."""
        await self.stage_meter(index, hw)
        assert await self.command(CMD_WRITE) == 0
        if model:
            # Full buckets stay full until a packet takes from them, so any tick between
            # the WRITE and the next packet is the model's time of the configuration.
            self.bank.configure(index, hw, self.tick)

    async def read_meter(self, index):
        """(configured, HwMeter or None, committed level, peak level, unwrapped tick)."""
        assert await self.command(CMD_READ, index) == 0
        flags = await self.read32(BASE + FLAGS)
        w = [await self.read32(BASE + DATA + 4 * i) for i in range(contract.METER_WORDS)]
        on = bool(flags & contract.FLAGS_VALID)
        hw = meter_regs.from_words(w) if on else None
        committed, peak, at = meter_regs.levels(w)
        # The READ happened a few hundred clocks ago at most.
        mask = (1 << self.time_bits) - 1
        t = self.tick - ((self.tick - at) & mask)
        return on, hw, committed, peak, t

    async def check_levels(self, index, banks=None):
        """READ meter `index`: its setting and its levels refilled to the READ's tick must be
        the model's (`banks`: the models one of which must hold; the first that does becomes
        `self.bank`). Returns the levels."""
        on, hw, lc, lp, t = await self.read_meter(index)
        banks = banks or [self.bank]
        for bank in banks:
            want_hw = bank.settings.get(index)
            if on == (want_hw is not None) and hw == want_hw and (lc, lp) == bank.levels(index, t):
                self.bank = bank
                return lc, lp
        want_hw = banks[0].settings.get(index)
        assert on == (want_hw is not None), f"meter {index}: configured {on}"
        assert hw == want_hw, f"meter {index}: read {hw}, set {want_hw}"
        want = banks[0].levels(index, t)
        assert (lc, lp) == want, f"meter {index} at tick {t}: levels {(lc, lp)}, model {want}"

    # ---------------------------------------------------------------------- requests

    async def send(self, reqs):
        """Presents requests: each (gap, index, bytes, colour) waits `gap` idle clocks, then
        is valid for one clock. Returns [(cycle, tick, index, bytes, colour)]."""
        dut = self.dut
        out = []
        for gap, index, nbytes, colour in reqs:
            if gap:
                dut.request_valid.value = 0
                await ClockCycles(dut.clk, gap)
            dut.request_valid.value = 1
            dut.request_payload_index.value = index
            dut.request_payload_bytes.value = nbytes
            dut.request_payload_colour.value = colour
            await ReadOnly()
            out.append((self.cycles.cycle, self.unwrap(int(dut.now.value)), index, nbytes,
                        colour))
            await RisingEdge(dut.clk)
        dut.request_valid.value = 0
        return out

    async def collect(self, sent, latency=LATENCY):
        """[(result cycle, colour)] of the results that answer `sent`: as many results as
        requests, from the first one at least `latency` clocks after the first request."""
        await ClockCycles(self.dut.clk, latency + 2)
        first = next(i for i, r in enumerate(self.results) if r[0] - sent[0][0] >= latency)
        got = self.results[first:first + len(sent)]
        del self.results[:first + len(sent)]
        assert len(got) == len(sent), f"{len(got)} results for {len(sent)} requests"
        return got

    async def results_of(self, sent):
        """The colours of `sent`, each checked to come LATENCY clocks after its request."""
        got = await self.collect(sent)
        for (cycle, *_), (rcycle, _) in zip(sent, got):
            assert rcycle - cycle == LATENCY, f"result after {rcycle - cycle} clocks"
        return [c for _, c in got]

    def check(self, sent, colours, bank=None):
        """Checks the colours of `sent` against the model, in order; returns
        [(tick, index, bytes, in colour, colour)]."""
        bank = bank or self.bank
        out = []
        for (cycle, tick, index, nbytes, colour), got in zip(sent, colours):
            want = bank.packet(index, tick, nbytes, colour)
            assert got == want, (
                f"meter {index} ({bank.settings.get(index)}), tick {tick}, {nbytes} bytes, "
                f"in {NAMES.get(colour, colour)}: {NAMES.get(got, got)}, model "
                f"{NAMES.get(want, want)}")
            out.append((tick, index, nbytes, colour, got))
        return out

    async def run(self, reqs, bank=None):
        """Sends `reqs` and checks every colour against the model; returns
        [(tick, index, bytes, in colour, colour)]."""
        self.results.clear()
        sent = await self.send(reqs)
        return self.check(sent, await self.results_of(sent), bank)


def random_setting(rng, two_rate=None, aware=None, packets=None):
    """A random setting of rates near what packets of 64..1500 bytes every few clocks
    offer, so that colours change often."""
    two_rate = rng.random() < 0.5 if two_rate is None else two_rate
    aware = rng.random() < 0.3 if aware is None else aware
    packets = rng.random() < 0.15 if packets is None else packets
    if packets:
        shift = rng.randrange(8, 16)
        per_tick = rng.uniform(0.002, 0.2)  # packets
        bursts = [rng.randrange(1 << shift, 8 << shift) for _ in range(2)]
    else:
        shift = rng.randrange(0, 4)
        per_tick = rng.uniform(2, 100)  # bytes
        bursts = [rng.randrange(1, 6000) << shift for _ in range(2)]
    cir = max(1, int(per_tick * (1 << shift)))
    pir = cir + int(rng.uniform(0, 2) * cir) if two_rate else 0
    return HwMeter(two_rate, aware, packets, shift, cir, pir, *bursts)


def random_traffic(rng, n, meters, gap=(0, 3), sizes=(64, 1500), colours=(GREEN,)):
    return [(rng.randint(*gap), rng.choice(meters), rng.randint(*sizes), rng.choice(colours))
            for _ in range(n)]


# ----------------------------------------------------------------------------- tests

@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_registers(dut):
    """The descriptor; WRITE then READ gives the setting back with both buckets full;
    unconfiguring; FLAGS.valid; out-of-range indexes and commands a meter does not have;
    SLVERR; HITS and MISSES count requests on configured and unconfigured meters."""
    rng, _ = cocotb_util.test_rng(dut, "registers")
    tb = MeterTb(dut)
    await tb.start()
    d = tb.desc
    assert await tb.read32(contract.INFO_MAGIC) == contract.INFO_MAGIC_VALUE
    assert await tb.read32(contract.INFO_OBJECTS) == 1
    desc = [await tb.read32(drv.descriptor_address(0) + 4 * j) for j in range(contract.DESC_WORDS)]
    assert desc == d.words, desc
    for _ in range(8):
        index = rng.randrange(tb.meters)
        hw = HwMeter(rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.5,
                     rng.randrange(meter_regs.SHIFT_MAX + 1), rng.getrandbits(tb.rate_bits), rng.getrandbits(tb.rate_bits),
                     rng.getrandbits(tb.level_bits), rng.getrandbits(tb.level_bits))
        await tb.write_meter(index, hw)
        before = tb.tick
        on, got, lc, lp, t = await tb.read_meter(index)
        assert on and got == hw, (got, hw)
        assert (lc, lp) == (hw.cbs, hw.pbs), "a WRITE fills both buckets"
        assert before <= t <= tb.tick, (before, t, tb.tick)
        await tb.check_levels(index)
    # Unconfigured: FLAGS.valid 0, levels 0.
    await tb.write_meter(index, None)
    on, _, lc, lp, _ = await tb.read_meter(index)
    assert not on and (lc, lp) == (0, 0)
    assert await tb.command(CMD_WRITE, tb.meters) == 1, \
        "index out of range not reported"
    assert await tb.command(CMD_READ, tb.meters + 5) == 1
    assert await tb.command(CMD_ZERO, 0) == 2, "ZERO on a meter not refused"
    assert await tb.command(CMD_DEFAULT) == 2
    for addr in (BASE + 0x10, BASE + 0x120, BASE + 0x200, 0x20000):
        r = await tb.axil.read(addr, 4)
        assert r.resp == SLVERR, f"read {addr:#x}: resp {r.resp}"
    for i in range(12):
        assert (await tb.axil.read(BASE + DATA + 4 * i, 4)).resp == OKAY
    # HITS: requests on configured meters; MISSES: on unconfigured ones.
    on_meter = rng.randrange(tb.meters)
    off_meter = (on_meter + 1) % tb.meters
    await tb.write_meter(on_meter, HwMeter(cir=1, cbs=100000, pbs=0))
    await tb.write_meter(off_meter, None)
    reqs = random_traffic(rng, 40, [on_meter, off_meter])
    await tb.run(reqs)
    hits = sum(1 for r in reqs if r[1] == on_meter)
    assert await tb.read32(BASE + HITS) == hits and await tb.read32(BASE + HITS + 4) == 0
    assert await tb.read32(BASE + MISSES) == len(reqs) - hits


async def transitions(dut, two_rate):
    rng, _ = cocotb_util.test_rng(dut, "transitions")
    tb = MeterTb(dut)
    await tb.start()
    meter = rng.randrange(tb.meters)
    # CIR 2 bytes per tick; PIR 4; 3000-byte buckets.
    await tb.write_meter(meter, HwMeter(two_rate=two_rate, cir=2, pir=4 if two_rate else 0,
                                        cbs=3000, pbs=3000))
    seen = set()
    last = None
    for _ in range(300):
        # A burst of back-to-back packets (small, any size, larger than any bucket), then a
        # pause of up to 1200 ticks.
        reqs = [(rng.randint(0, 2), meter,
                 rng.choice([rng.randint(64, 200)] * 2 + [rng.randint(64, 1500)] * 4 + [4000]),
                 GREEN) for _ in range(rng.randint(1, 8))]
        reqs[0] = (rng.randint(50, 1200) * tb.tick_clocks,) + reqs[0][1:]
        for *_, colour in await tb.run(reqs):
            if last is not None:
                seen.add((last, colour))
            last = colour
        if seen == TRANSITIONS:
            break
    missing = sorted((NAMES[a], NAMES[b]) for a, b in TRANSITIONS - seen)
    assert not missing, f"transitions never seen: {missing}"
    await tb.check_levels(meter)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_single_rate_transitions(dut):
    """srTCM, colour-blind: every transition between green, yellow and red, the model's
    colour for every packet."""
    await transitions(dut, two_rate=False)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_two_rate_transitions(dut):
    """trTCM, colour-blind: every transition, the model's colour for every packet."""
    await transitions(dut, two_rate=True)


# Colour-aware sequences, worked out by hand from the RFCs' rules (packets back to back;
# CIR 1 and PIR 2 bytes per tick refill a few bytes in between, far from every threshold):
# (bytes, colour in, colour out). Together they take every outcome an aware meter allows.
AWARE_SEQUENCES = {
    # srTCM, CBS = EBS = 3000: Tc 3000, Te 3000.
    False: [(1000, GREEN, GREEN),    # Tc 2000
            (1000, YELLOW, YELLOW),  # never upgraded though Tc has room: Te 2000
            (2500, GREEN, RED),      # Tc and Te short
            (1900, GREEN, GREEN),    # Tc about 100
            (1500, GREEN, YELLOW),   # Tc short: from Te, about 500 left
            (1000, YELLOW, RED),     # Te short
            (10, RED, RED),          # red stays red, whatever the buckets hold
            (10, 3, RED)],           # 3 is red
    # trTCM, CBS 3000, PBS 6000: Tc 3000, Tp 6000.
    True: [(1000, GREEN, GREEN),     # Tc 2000, Tp 5000
           (1000, YELLOW, YELLOW),   # Tp 4000
           (10, RED, RED),
           (2500, GREEN, YELLOW),    # Tc short: Tp 1500
           (1000, GREEN, GREEN),     # Tc about 1000, Tp about 500
           (1000, GREEN, RED),       # Tp short
           (1000, YELLOW, RED),
           (10, 3, RED)],
}


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_colour_aware(dut):
    """Colour-aware meters downgrade and never upgrade: the hand-worked sequences above
    (green in to green, yellow and red; yellow in to yellow and red; red and 3 in to red),
    the same colours in on colour-blind meters ignored; then random colours in on random
    traffic, every colour the model's and never better than the colour in."""
    rng, _ = cocotb_util.test_rng(dut, "colour_aware")
    tb = MeterTb(dut)
    await tb.start()
    meters = rng.sample(range(tb.meters), 4)
    modes = [(False, True), (True, True), (False, False), (True, False)]
    for m, (two_rate, aware) in zip(meters, modes):
        await tb.write_meter(m, HwMeter(two_rate=two_rate, aware=aware, cir=1,
                                        pir=2 if two_rate else 0, cbs=3000,
                                        pbs=6000 if two_rate else 3000))
    for m, (two_rate, aware) in zip(meters, modes):
        seq = AWARE_SEQUENCES[two_rate]
        got = [c for *_, c in await tb.run([(0, m, b, cin) for b, cin, _ in seq])]
        if aware:
            assert got == [cout for *_, cout in seq], \
                f"meter {m}: {[NAMES[c] for c in got]}, by hand {[NAMES[c] for *_, c in seq]}"
        else:
            assert got[:2] == [GREEN, GREEN], "a colour-blind meter took yellow in as yellow"
        await tb.check_levels(m)

    for m, (two_rate, aware) in zip(meters, modes):
        await tb.write_meter(m, HwMeter(two_rate=two_rate, aware=aware, cir=30,
                                        pir=60 if two_rate else 0, cbs=4000, pbs=4000))
    for _ in range(6):
        await ClockCycles(dut.clk, rng.randrange(0, 3000))
        reqs = random_traffic(rng, 300, meters, gap=(0, 4), colours=(0, 1, 2, 3, 0, 0))
        for tick, index, nbytes, cin, cout in await tb.run(reqs):
            if tb.bank.settings[index].aware:
                assert cout >= min(cin, RED), f"meter {index}: {NAMES[min(cin, RED)]} in, " \
                    f"{NAMES[cout]} out"
    for m in meters:
        await tb.check_levels(m)


async def expect_run(tb, reqs):
    return [c for *_, c in await tb.run(reqs)]


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_refill_resolution(dut):
    """Refill is rate × elapsed ticks, exactly: after draining a bucket, a READ at any tick
    finds rate × (ticks since) units, and packets costing one unit more or less than that
    go red or green; a rate below one byte per tick (shift 8: 3/256 byte) accumulates its
    fractions. On the small unit the time base ticks every 3 clocks."""
    rng, _ = cocotb_util.test_rng(dut, "refill_resolution")
    tb = MeterTb(dut)
    await tb.start()
    m = rng.randrange(tb.meters)
    for shift, rate in [(0, 7), (0, 1), (8, 3), (3, 5)]:
        hw = HwMeter(shift=shift, cir=rate, cbs=60000 << shift, pbs=0)
        await tb.write_meter(m, hw)
        for _ in range(12):
            # Drain: one packet as large as the bucket holds now.
            lc, _ = await tb.check_levels(m)
            assert (await expect_run(tb, [(0, m, lc >> shift, GREEN)]))[0] == GREEN
            wait = rng.randrange(1, 300)
            await ClockCycles(dut.clk, wait)
            if rng.random() < 0.5:
                await tb.check_levels(m)  # exactly rate × ticks since the packet
            # A packet near what the bucket holds by now: the model says which side.
            clocks = rng.randrange(0, 40)
            ticks = (wait + clocks + 10) // tb.tick_clocks
            guess = (rate * ticks >> shift) + rng.choice([-1, 0, 1])
            await expect_run(tb, [(clocks, m, max(guess, 1), GREEN)])
    await tb.check_levels(m)


@cocotb.test(timeout_time=30, timeout_unit="ms")
async def test_back_to_back(dut):
    """A request every clock: all on one meter, alternating two (the update two clocks
    ahead is forwarded), three, and random mixes of two and four meters, in both modes,
    blind and aware. Every colour is the model's, as if one packet at a time."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back")
    tb = MeterTb(dut)
    await tb.start()
    meters = rng.sample(range(tb.meters), 4)
    settings = [HwMeter(two_rate=True, cir=150, pir=300, cbs=5000, pbs=8000),
                HwMeter(two_rate=False, cir=200, cbs=4000, pbs=4000),
                HwMeter(two_rate=True, aware=True, cir=100, pir=400, cbs=3000, pbs=6000),
                HwMeter(two_rate=False, aware=True, shift=2, cir=800, cbs=12000, pbs=8000)]
    for m, s in zip(meters, settings):
        await tb.write_meter(m, s)
    a, b, c, d = meters
    patterns = {
        "one meter": lambda i: a,
        "two alternating": lambda i: (a, b)[i % 2],
        "three in turn": lambda i: (a, b, c)[i % 3],
        "pairs": lambda i: (a, a, b, b)[i % 4],
        "random of two": lambda i: rng.choice((c, d)),
        "random of four": lambda i: rng.choice(meters),
    }
    for name, pick in patterns.items():
        for first in meters:
            # Start from a settled state: some time for the buckets to refill.
            await ClockCycles(dut.clk, rng.randrange(0, 200))
            reqs = [(0, pick(i) if name != "one meter" else first, rng.randint(64, 1500),
                     rng.choice((GREEN, GREEN, YELLOW, RED))) for i in range(400)]
            out = await tb.run(reqs)
            colours = {c for *_, c in out}
            dut._log.info("%s from meter %d: %s", name, first,
                          {NAMES[k]: sum(1 for *_, c in out if c == k) for k in colours})
            if name != "one meter":
                break
    for m in meters:
        await tb.check_levels(m)


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_random(dut):
    """Random settings on every meter (modes, colour-awareness, bytes or packets, scales,
    some unconfigured), random traffic with random gaps on random meters; READs between
    the bursts."""
    rng, _ = cocotb_util.test_rng(dut, "random")
    tb = MeterTb(dut)
    await tb.start()
    meters = list(range(tb.meters)) if tb.meters <= 32 else rng.sample(range(tb.meters), 32)
    for m in meters:
        await tb.write_meter(m, random_setting(rng) if rng.random() < 0.85 else None)
    for _ in range(8):
        busy = rng.sample(meters, rng.randint(1, len(meters)))
        await tb.run(random_traffic(rng, 500, busy, gap=rng.choice([(0, 0), (0, 2), (0, 8)]),
                                    colours=(0, 0, 1, 2)))
        for m in rng.sample(meters, 3):
            await tb.check_levels(m)


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_reconfigure(dut):
    """Meters set again while idle take their new setting with full buckets; set again (or
    unconfigured) under traffic, every packet is coloured by the old setting or by the new
    one with full buckets from one point on, that point being a clock without a request
    while the WRITE was busy."""
    rng, _ = cocotb_util.test_rng(dut, "reconfigure")
    tb = MeterTb(dut)
    await tb.start()
    meters = rng.sample(range(tb.meters), 3)
    for m in meters:
        await tb.write_meter(m, random_setting(rng))
    # While idle.
    for _ in range(4):
        await tb.run(random_traffic(rng, 200, meters))
        m = rng.choice(meters)
        await tb.write_meter(m, random_setting(rng))
        await tb.check_levels(m)
        await tb.run(random_traffic(rng, 100, meters))
    # Under traffic.
    tb.record_ticks = True
    for round_ in range(6):
        m = rng.choice(meters)
        new = None if round_ == 3 else random_setting(rng)
        before = copy.deepcopy(tb.bank)
        reqs = random_traffic(rng, 400, meters, gap=(0, 2), colours=(0, 1))
        tb.results.clear()
        traffic = cocotb.start_soon(tb.send(reqs))
        await ClockCycles(dut.clk, rng.randrange(50, 300))
        await tb.stage_meter(m, new)
        start = tb.cycles.cycle
        assert await tb.command(CMD_WRITE) == 0
        end = tb.cycles.cycle
        sent = await traffic
        colours = await tb.results_of(sent)
        busy = {s[0] for s in sent}
        candidates = [c for c in range(start, end + 1) if c not in busy]
        assert candidates, "the WRITE had no idle clock"
        # Every switch point the colours allow: the clocks between them may hold packets of
        # a colour both settings give, and only the levels tell those points apart.
        matched = []
        for cand in candidates:
            bank = copy.deepcopy(before)
            switched = False
            ok = True
            for (cycle, tick, index, nbytes, colour), got in zip(sent, colours):
                if not switched and cycle > cand:
                    bank.configure(m, new, tb.tick_at[cand])
                    switched = True
                if bank.packet(index, tick, nbytes, colour) != got:
                    ok = False
                    break
            if ok:
                if not switched:
                    bank.configure(m, new, tb.tick_at[cand])
                matched.append((cand, bank))
        assert matched, f"round {round_}: no switch point in clocks {start}..{end} explains " \
            f"the colours of meter {m}"
        # The switched meter's levels pick the switch point; the others agree in every bank.
        await tb.check_levels(m, [bank for _, bank in matched])
        dut._log.info("round %d: meter %d set again at clock %d (WRITE busy %d..%d)", round_, m,
                      next(c for c, bank in matched if bank is tb.bank), start, end)
        for x in meters:
            await tb.check_levels(x)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_clear(dut):
    """CLEAR unconfigures every meter: every packet green, READ gives FLAGS.valid 0 and
    empty buckets; meters set after it work."""
    rng, _ = cocotb_util.test_rng(dut, "clear")
    tb = MeterTb(dut)
    await tb.start()
    meters = rng.sample(range(tb.meters), min(tb.meters, 8))
    for m in meters:
        await tb.write_meter(m, random_setting(rng))
    await tb.run(random_traffic(rng, 300, meters))
    assert await tb.command(CMD_CLEAR) == 0
    tb.bank.clear()
    out = await tb.run(random_traffic(rng, 200, meters, sizes=(1000, 9000), colours=(0, 1, 2)))
    assert all(c == GREEN for *_, c in out)
    for m in meters[:3]:
        on, hw, lc, lp, _ = await tb.read_meter(m)
        assert not on and hw is None and (lc, lp) == (0, 0)
    await tb.write_meter(meters[0], HwMeter(two_rate=True, cir=1, pir=2, cbs=2000, pbs=3000))
    await tb.run(random_traffic(rng, 100, meters))
    await tb.check_levels(meters[0])


async def set_through_driver(tb, meter, flags, cir, cburst, pir, pburst):
    """Sets `meter` through the C driver in P4Runtime terms at CLOCK_HZ, and the model to
    what the unit then holds (both buckets full); returns the driver's bus (for more
    calls) and the setting as an HwMeter."""
    bus = drv.RecordingBus(await drv.read_info_block(tb.read32))
    with drv.Device(bus) as dev:
        dev.set_clock_hz(CLOCK_HZ)
        dev.meter_set(TABLE, meter, flags, cir, cburst, pir, pburst)
    await drv.replay(bus.take(), tb.write32, tb.read32)
    on, hw, lc, lp, _ = await tb.read_meter(meter)
    assert on and (lc, lp) == (hw.cbs, hw.pbs)
    tb.bank.configure(meter, hw, tb.tick)
    return bus, hw


async def long_run(dut, name, flags, cir, cburst, pir, pburst, offered):
    """A meter set through the C driver in P4Runtime terms, offered a fixed load (`offered`
    times CIR, random packet sizes) for a long run: every colour is the model's, and the
    measured green rate (green plus yellow: PIR for two-rate) is within 1 % of what was
    set."""
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = MeterTb(dut)
    await tb.start()
    meter = rng.randrange(tb.meters)
    bus, hw = await set_through_driver(tb, meter, flags, cir, cburst, pir, pburst)
    dut._log.info("set %s: %s", name, hw)
    # The driver decodes the unit's READ (FLAGS and DATA as the unit left them) back into
    # what was asked: rates within the 0.1 % it promises, bursts exact, both buckets full.
    for off in [FLAGS] + [DATA + 4 * i for i in range(12)]:
        bus.staging[BASE + off] = await tb.read32(BASE + off)
    with drv.Device(bus) as dev:
        dev.set_clock_hz(CLOCK_HZ)
        got, committed, peak = dev.meter_get(TABLE, meter)
    bus.take()
    assert (got.flags, got.cburst, got.pburst) == (flags, cburst, pburst), got
    for want, rate in ((cir, got.cir), (pir, got.pir)):
        assert abs(rate - want) <= want / 1000, f"driver reads {rate}/s back for {want}/s"
    assert (committed, peak) == (cburst, pburst)

    packets = bool(flags & drv.METER_PACKETS)
    per_clock = cir * offered / CLOCK_HZ  # bytes or packets per clock
    clocks = 200_000
    t, reqs = 0.0, []
    while t < clocks:
        size = rng.randint(64, 1500)
        step = (1 if packets else size) / per_clock
        gap = max(0, round(t + step) - round(t) - 1)
        reqs.append((gap, meter, size, GREEN))
        t += step
    out = await tb.run(reqs)
    start = out[len(out) // 10][0]
    end = out[-1][0]
    seconds = (end - start) * tb.tick_clocks / CLOCK_HZ
    measured = [0, 0]
    for tick, _, nbytes, _, colour in out:
        if start <= tick < end:
            amount = 1 if packets else nbytes
            measured[0] += amount if colour == GREEN else 0
            measured[1] += amount if colour != RED else 0
    green = measured[0] / seconds
    error = green / cir - 1
    dut._log.info("%s: %d requests, offered %.3g/s, green %.6g/s for CIR %d/s (%+.3f %%)",
                  name, len(out), cir * offered, green, cir, 100 * error)
    assert abs(error) < 0.01, f"green rate {green:.6g}/s is {100 * error:+.2f} % off CIR {cir}/s"
    if flags & drv.METER_TWO_RATE:
        passed = measured[1] / seconds
        error = passed / pir - 1
        dut._log.info("%s: green and yellow %.6g/s for PIR %d/s (%+.3f %%)", name, passed, pir,
                      100 * error)
        assert abs(error) < 0.01, f"green + yellow {passed:.6g}/s is {100 * error:+.2f} % off " \
            f"PIR {pir}/s"
    await tb.check_levels(meter)


@cocotb.test(timeout_time=300, timeout_unit="ms")
async def test_long_run_single_rate(dut):
    """srTCM at 10 Gb/s (1.25e9 bytes/s), CBS and EBS 2000 bytes, offered 20 Gb/s."""
    await long_run(dut, "long_run_single_rate", 0, 1_250_000_000, 2000, 0, 2000, offered=2)


@only_on("matcha_meter_table")
@cocotb.test(timeout_time=300, timeout_unit="ms")
async def test_long_run_two_rate(dut):
    """trTCM, colour-blind: CIR 5 Gb/s, PIR 8 Gb/s, bursts 4000 bytes, offered 15 Gb/s. (A
    two-rate meter loses committed tokens at the cap while packets too large for Tc go
    yellow; with bursts of one or two packets and a load near PIR that alone costs a
    visible part of the rate, in the model as in the RFC, so the load here is well above
    PIR.)"""
    await long_run(dut, "long_run_two_rate", drv.METER_TWO_RATE, 625_000_000, 4000,
                   1_000_000_000, 4000, offered=3)


@only_on("matcha_meter_table")
@cocotb.test(timeout_time=300, timeout_unit="ms")
async def test_long_run_packets(dut):
    """srTCM counting packets: CIR 2.5M packets/s, CBS 2, EBS 1, offered twice that."""
    await long_run(dut, "long_run_packets", drv.METER_PACKETS, 2_500_000, 2, 0, 1, offered=2)


@only_on("matcha_meter_table")
@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_bucket_edges_worked_example(dut):
    """The worked example of docs/tables.md ("Rate conversion and how it differs from
    BMv2"), set through the C driver and sent at its times (a clock is 4 ns): the unit
    gives the example's Matcha colours, the model's, where BMv2 differs. Its last packet,
    after 1800 µs of idle, is left to tb/model/test_meter.py."""
    tb = MeterTb(dut)
    await tb.start()
    _, hw = await set_through_driver(tb, 7, drv.METER_TWO_RATE, 500_000, 1000, 1_500_000,
                                     1500)
    assert hw == HwMeter(two_rate=True, shift=EDGE_SHIFT, cir=EDGE_CIR, pir=EDGE_PIR,
                         cbs=1000 << EDGE_SHIFT, pbs=1500 << EDGE_SHIFT), hw
    rows = [row for row in EDGE_PACKETS if row[0] < 1000]
    clocks = [int(t_us * TICKS_PER_US) for t_us, *_ in rows]
    reqs = [(clock - before - 1 if i else 0, 7, size, GREEN)
            for i, ((_, size, *_), clock, before) in enumerate(zip(rows, clocks, [0] + clocks))]
    out = await tb.run(reqs)
    assert [tick - out[0][0] for tick, *_ in out] == clocks
    assert [colour for *_, colour in out] == [row[3] for row in rows]


@only_on("matcha_meter_small_table")
@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_time_wrap(dut):
    """The time base wraps (the small unit's every 1024 ticks, 3072 clocks): a meter left
    alone for several wraps while others take traffic refills by the full elapsed time,
    because the sweeper refreshes it in the clocks without a request."""
    rng, _ = cocotb_util.test_rng(dut, "time_wrap")
    tb = MeterTb(dut)
    await tb.start()
    wrap = 1 << tb.time_bits
    idle, *others = rng.sample(range(tb.meters), 4)
    await tb.write_meter(idle, HwMeter(cir=1, cbs=20 * wrap, pbs=0))
    for o in others:
        await tb.write_meter(o, random_setting(rng))
    await tb.run([(0, idle, 20 * wrap, GREEN)])  # drain it
    for rounds in range(3):
        # About 2.5 wraps of traffic on the others, a gap every few clocks.
        clocks = int(2.5 * wrap * tb.tick_clocks)
        reqs = random_traffic(rng, clocks // 3, others, gap=(1, 3))
        await tb.run(reqs)
        lc, _ = await tb.check_levels(idle)
        assert lc > 2 * wrap, f"level {lc} after 2.5 wraps"
        # Packets near what the bucket holds.
        await tb.run([(0, idle, lc + rng.choice([-1, 0, 1, 2]), GREEN),
                      (rng.randint(0, 5), idle, rng.randint(1, 10), GREEN)])


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_limits(dut):
    """The widest values: buckets of 2^levelWidth - 1 units, rates of 2^rateWidth - 1 units
    per tick (a refill past 2^(levelWidth + 1) saturates), costs of a bucket's size and one
    unit more, costs past 2^levelWidth (large frames at a large shift, a packet at shift
    63): a cost no bucket can hold is red, whatever the buckets hold."""
    rng, _ = cocotb_util.test_rng(dut, "limits")
    tb = MeterTb(dut)
    await tb.start()
    top, fast = (1 << tb.level_bits) - 1, (1 << tb.rate_bits) - 1
    shift = tb.level_bits - 12  # 4095 bytes cost 2^levelWidth - 2^shift units, 4096 bytes 2^levelWidth
    a, b, c = rng.sample(range(tb.meters), 3)
    await tb.write_meter(a, HwMeter(two_rate=True, shift=shift, cir=fast, pir=fast, cbs=top,
                                    pbs=top))
    await tb.write_meter(b, HwMeter(shift=shift, cir=fast, cbs=top, pbs=top))
    await tb.write_meter(c, HwMeter(packets=True, shift=meter_regs.SHIFT_MAX, cir=fast, cbs=top, pbs=top))
    for m in (a, b):
        got = await expect_run(tb, [(0, m, 4096, GREEN), (0, m, 65535, GREEN),
                                    (0, m, 4095, GREEN), (0, m, 1, GREEN)])
        assert got[:3] == [RED, RED, GREEN], [NAMES[x] for x in got]
        # 600 ticks of 2^rateWidth - 1: more than twice what fills a bucket, past the
        # refill's own width.
        await ClockCycles(dut.clk, 600 * tb.tick_clocks)
        assert await tb.check_levels(m) == (top, top), "a saturated refill fills the buckets"
        await tb.run(random_traffic(rng, 200, [m], gap=(0, 1), sizes=(3000, 65535)))
        await tb.check_levels(m)
    assert await expect_run(tb, [(0, c, 64, GREEN), (3, c, 9000, GREEN)]) == [RED, RED]
    await tb.check_levels(c)
