# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_entry_counters: 16 entries of 64-bit packet and byte counters,
commands drained for 3 clocks (docs/tables.md, "Per-entry counters").

The oracle is the list of events the test issued, clock by clock. A command acts at one
clock between the one it was issued in and the one it answers in, and must act as if at
that clock: a READ returns the sums of the events before some clock k in that range, a ZERO
leaves the sums of the events after some such k. The tests check exactly that, plus that
every event issued before the command (allowing the drain) is in a READ's answer.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.common import cocotb_util

SIZE, DRAIN = 16, 3
READ, ZERO, CLEAR = 0, 1, 2


class CountersTb:
    def __init__(self, dut):
        self.dut = dut
        self.cycle = 0
        self.events = []  # (cycle, index, bytes)
        self.answers = []  # (cycle, packets, bytes)
        self.base = {}  # index -> (packets, bytes) the entry held when the test began

    async def start(self):
        """Reset, then read every entry: the RAM keeps its contents across reset, so a
        test that runs after another starts from that one's counts."""
        await cocotb_util.start(self.dut, inputs_low=("io_events_valid", "io_commands_valid"))
        cocotb.start_soon(self._clock())
        for index in range(SIZE):
            await self.step(command=(READ, index))
            self.base[index] = (await self.wait_answer())[1:]
        self.answers.clear()

    async def _clock(self):
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            self.cycle += 1
            if self.dut.io_answer_valid.value:
                self.answers.append((self.cycle, int(self.dut.io_answer_payload_packets.value),
                                     int(self.dut.io_answer_payload_bytes.value)))

    async def step(self, event=None, command=None):
        """One clock: optionally an event (index, bytes) and a command (op, index)."""
        await RisingEdge(self.dut.clk)
        d = self.dut
        d.io_events_valid.value = event is not None
        if event is not None:
            d.io_events_payload_index.value, d.io_events_payload_bytes.value = event
            self.events.append((self.cycle, *event))
        d.io_commands_valid.value = command is not None
        if command is not None:
            d.io_commands_payload_op.value, d.io_commands_payload_index.value = command
        return self.cycle

    async def idle(self, n=1):
        for _ in range(n):
            await self.step()

    async def wait_answer(self, limit=10_000):
        seen = len(self.answers)
        for _ in range(limit):
            if len(self.answers) > seen:
                return self.answers[seen]
            await self.step()
        raise AssertionError("command never answered")

    def sums(self, index, after=-1, before=10**12, since=0):
        """Packets and bytes of the events on `index` issued in cycles (after, before),
        counting from the `since`-th event issued; from the test's start (no `after`, no
        `since`), on top of what the entry held then."""
        evs = [b for c, i, b in self.events[since:] if i == index and after < c < before]
        packets, octets = self.base[index] if after < 0 and since == 0 else (0, 0)
        return packets + len(evs), octets + sum(evs)

    def check_read(self, index, issued, answer):
        got = answer[1:]
        possible = {self.sums(index, before=k) for k in range(issued, answer[0] + 1)}
        assert got in possible, (
            f"READ of entry {index} issued at {issued}, answered at {answer[0]}: got {got}, "
            f"possible {sorted(possible)}")
        assert got[0] >= self.sums(index, before=issued)[0], "an event before the command is missing"


async def read(tb, index, since_zero=False):
    """READ of `index`, checked against every event so far unless it was zeroed."""
    issued = await tb.step(command=(READ, index))
    answer = await tb.wait_answer()
    if not since_zero:
        tb.check_read(index, issued, answer)
    return answer


@cocotb.test()
async def test_back_to_back_same_entry(dut):
    """Every clock an event on the same entry, then on alternating entries: the
    read-modify-write forwards what is still on its way into the RAM, so none is lost."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back")
    tb = CountersTb(dut)
    await tb.start()
    for _ in range(50):
        await tb.step(event=(5, rng.randrange(60, 1519)))
    for n in range(60):
        await tb.step(event=((5, 6, 5, 5, 7)[n % 5], rng.randrange(60, 9000)))
    await tb.idle(4)
    for index in (5, 6, 7, 0):
        answer = await read(tb, index)
        assert answer[1:] == tb.sums(index), f"entry {index}: {answer[1:]} != {tb.sums(index)}"


@cocotb.test()
async def test_random_events_and_reads(dut):
    """Random events (most clocks busy) with READs of random entries interleaved."""
    rng, _ = cocotb_util.test_rng(dut, "random")
    tb = CountersTb(dut)
    await tb.start()
    for _ in range(40):
        for _ in range(rng.randrange(1, 30)):
            busy = rng.random() < 0.8
            await tb.step(event=(rng.randrange(SIZE), rng.randrange(0, 65536)) if busy else None)
        index = rng.randrange(SIZE)
        issued = await tb.step(command=(READ, index))
        seen = len(tb.answers)
        while len(tb.answers) == seen:
            await tb.step(event=(rng.randrange(SIZE), rng.randrange(0, 65536)) if rng.random() < 0.8 else None)
        tb.check_read(index, issued, tb.answers[seen])
    await tb.idle(4)
    for index in range(SIZE):
        answer = await read(tb, index)
        assert answer[1:] == tb.sums(index)


@cocotb.test()
async def test_zero_under_traffic(dut):
    """ZERO of an entry while it keeps being hit: the final count is exactly the events
    after the clock the ZERO acted in, which lies between its issue and its answer."""
    rng, _ = cocotb_util.test_rng(dut, "zero")
    tb = CountersTb(dut)
    await tb.start()
    for _ in range(30):
        await tb.step(event=(3, rng.randrange(64, 1500)))
    issued = await tb.step(command=(ZERO, 3), event=(3, 100))
    seen = len(tb.answers)
    n = 0
    while len(tb.answers) == seen:
        n += 1
        await tb.step(event=(3, rng.randrange(64, 1500)) if n % 3 else None)
    answered = tb.answers[seen][0]
    for _ in range(20):
        await tb.step(event=(3, rng.randrange(64, 1500)))
    await tb.idle(4)
    answer = await read(tb, 3, since_zero=True)
    possible = {tb.sums(3, after=k - 1) for k in range(issued, answered + 1)}
    assert answer[1:] in possible, f"after ZERO: {answer[1:]} not in {sorted(possible)}"
    assert answer[1] <= tb.sums(3, after=issued - 1)[0]


@cocotb.test()
async def test_clear(dut):
    """CLEAR zeroes every entry; counting resumes from 0."""
    rng, _ = cocotb_util.test_rng(dut, "clear")
    tb = CountersTb(dut)
    await tb.start()
    for _ in range(100):
        await tb.step(event=(rng.randrange(SIZE), rng.randrange(60, 1500)))
    await tb.idle(4)
    await tb.step(command=(CLEAR, 0))
    await tb.wait_answer()
    mark = len(tb.events)
    for _ in range(40):
        await tb.step(event=(rng.randrange(SIZE), rng.randrange(60, 1500)))
    await tb.idle(4)
    for index in range(SIZE):
        answer = await read(tb, index, since_zero=True)
        assert answer[1:] == tb.sums(index, since=mark), f"entry {index} after CLEAR"


@cocotb.test()
async def test_command_waits_for_free_clock(dut):
    """A READ under an event every clock waits (the bus shares the RAM port with the
    write-back) and is answered in the first free clock, with every event before it."""
    rng, _ = cocotb_util.test_rng(dut, "starve")
    tb = CountersTb(dut)
    await tb.start()
    issued = await tb.step(command=(READ, 9), event=(9, 64))
    for _ in range(40):
        await tb.step(event=(rng.choice((9, 10)), 64))
    assert len(tb.answers) == 0, "answered although every clock carried an event"
    await tb.idle(6)
    assert len(tb.answers) == 1
    tb.check_read(9, issued, tb.answers[0])
    assert tb.answers[0][1:] == tb.sums(9), "the READ acted in the first free clock"


@cocotb.test()
async def test_reset_mid_traffic(dut):
    """Reset during traffic and a pending command: afterwards commands and counting work
    (the RAM keeps its contents across reset; CLEAR is how software starts from zero)."""
    rng, _ = cocotb_util.test_rng(dut, "reset")
    tb = CountersTb(dut)
    await tb.start()
    await tb.step(command=(READ, 1), event=(1, 64))
    for _ in range(5):
        await tb.step(event=(1, 64))
    dut.rst.value = 1
    await tb.idle(3)
    dut.rst.value = 0
    tb.answers.clear()
    await tb.step(command=(CLEAR, 0))
    await tb.wait_answer()
    mark = len(tb.events)
    for _ in range(30):
        await tb.step(event=(rng.randrange(SIZE), 100))
    await tb.idle(4)
    for index in range(SIZE):
        answer = await read(tb, index, since_zero=True)
        assert answer[1:] == tb.sums(index, since=mark), f"entry {index} after reset and CLEAR"
