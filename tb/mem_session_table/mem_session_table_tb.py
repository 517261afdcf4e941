# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_mem_session_table: the session table with its sessions in memory,
64 buckets of three in 512-bit beats, results 512 clocks after their packet, 16 buckets
tracked on chip, behind an AXI4 master on a memory that answers reads 100 to 600 clocks
late (tb/common/late_memory.py).

The oracle is tb/model/session.py's MemSessionModel, written from docs/sessions.md: every
result is checked against it packet by packet, except a result flagged late or busy, which
must have changed nothing (the model skips it). The memory answers with `snapshot` on
where a test races packets of one flow: a read then misses every write that lands while
it is out, so only the table's own tracking of its writes keeps the answers exact.
"""

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge

from tb.common import cocotb_util, contract, driver
from tb.common.axil import LiveBus
from tb.common.late_memory import LateMemory
from tb.model import session as model
from tb.model.session import ACK, FIN, RST, SYN, TCP, UDP
from tb.session.session_tb import (
    SessionTb, canon, delete_racing_lookups, flow, flush_under_traffic, handshake, random_packets,
    spaced,
)

BUCKETS, SLOTS, TRACKED = 64, 3, 16
BUCKET_BYTES = 64
LATENCY = 512
TABLE = 0
BASE = contract.INFO_WINDOW_BYTES  # the window of table 0


class MemSessionTb(SessionTb):
    """`buckets`: the unit's (64 for the tests' unit)."""

    def __init__(self, dut, rng, buckets=BUCKETS):
        super().__init__(dut)
        cocotb_util.quiet_cocotbext(dut, ("s_axil", "m_axi"))
        self.rng = rng
        self.latency = LATENCY
        self.buckets = buckets
        self.memory = None
        self.flags = []  # (late, busy) of each result, in order

    async def start(self, latency=100, snapshot=False, write_latency=0, write_busy=0.0):
        """`write_latency` and `write_busy`: the memory's writes land and are answered that
        many clocks late, and awready, wready and bvalid are held back that often."""
        await cocotb_util.start(self.dut, inputs_low=("packet_valid",))
        self.memory = LateMemory(self.dut, "m_axi", self.buckets * BUCKET_BYTES, self.rng, self.cycles)
        self.memory.latency = latency
        self.memory.snapshot = snapshot
        self.memory.write_latency = write_latency
        self.memory.set_write_pauses(write_busy, write_busy, write_busy)
        cocotb.start_soon(self._drive())
        cocotb.start_soon(self._monitor())
        self.dev = await self.call(lambda: driver.Device(LiveBus(self)))
        info = self.dev.tables[TABLE]
        assert (info.kind, info.size, info.bucket_entries, info.key_bits, info.latency) == \
            (contract.KIND_MEM_SESSION, self.buckets * SLOTS, SLOTS, 128, LATENCY), info
        self.model = model.MemSessionModel(self.buckets, SLOTS)
        # After reset the table writes every bucket empty, then waits for its reads out.
        while self.memory.writes < self.buckets:
            await RisingEdge(self.dut.clk)
        await self.memory.writes_landed()
        await ClockCycles(self.dut.clk, 2 * latency + 50)

    RESULT = "result_payload_session_"

    def read_result(self):
        self.flags.append((bool(self.dut.result_payload_late.value),
                           bool(self.dut.result_payload_busy.value)))
        return super().read_result()

    def check(self, packets, results, now=0):
        """Each result against the model; a late or busy one must say nothing and change
        nothing. Returns (late, busy) counts."""
        packets = [p for p in packets if p is not None]
        flags = self.flags[len(self.flags) - len(results):]
        assert len(packets) == len(results)
        late = busy = 0
        for n, (p, (cycle, got), (is_late, is_busy)) in enumerate(zip(packets, results, flags)):
            if is_late or is_busy:
                assert not (got.hit or got.learned or got.insert_failed), \
                    f"packet {n} {p}: late {is_late} busy {is_busy} but {got}"
                late += is_late
                busy += is_busy
                continue
            want = self.model.packet(p, now)
            if not (want.hit or want.learned):
                got = got.__class__(**{**got.__dict__, "index": None})
            assert got == want, f"packet {n} {p} (result at cycle {cycle}): {got}, model {want}"
        return late, busy

    async def dump(self):
        """Every valid session as the driver reads it: index -> (key, state, initiator, age)."""
        out = {}
        for b in range(self.buckets):
            for s in range(SLOTS):
                i = b << contract.MEMX_INDEX_SLOT_BITS | s
                got = await self.call(self.dev.session_read, TABLE, i)
                if got.valid:
                    out[i] = (got.key_int(), got.state, got.initiator_high, got.age)
        return out

    def memory_dump(self):
        """Every valid session as the memory holds it, read with the layout of
        docs/sessions.md ("Layout"): index -> (key, state, initiator)."""
        out = {}
        entry = contract.MEMS_ENTRY_KEY_BYTE + 16
        for b in range(self.buckets):
            beat = self.memory.mem.read(b * BUCKET_BYTES, BUCKET_BYTES)
            for s in range(SLOTS):
                e = beat[s * entry:(s + 1) * entry]
                flags = e[contract.MEMS_ENTRY_FLAGS_BYTE]
                if flags & contract.MEMS_ENTRY_VALID:
                    key = int.from_bytes(e[contract.MEMS_ENTRY_KEY_BYTE:], "little")
                    out[b << contract.MEMX_INDEX_SLOT_BITS | s] = (
                        key, flags >> contract.MEMS_ENTRY_STATE_SHIFT & 7,
                        bool(flags & contract.MEMS_ENTRY_INITIATOR))
        return out

    async def check_table(self, late=0, busy=0, driver_dump=False):
        """The table, and its statistics through the driver, equal the model's: the table as
        its memory holds it, or with `driver_dump` as the driver reads it back through the
        window (a READ through memory per entry)."""
        if driver_dump:
            got = {i: (k, st, ini) for i, (k, st, ini, _age) in (await self.dump()).items()}
        else:
            # The last decisions' writes reach the memory a few clocks after their results,
            # and land when they are answered.
            await ClockCycles(self.dut.clk, 20)
            await self.memory.writes_landed()
            got = self.memory_dump()
        want = {i: (s.key, s.state, s.initiator) for i, s in self.model.entries.items()}
        assert got == want, f"dump {sorted(got.items())}\nmodel {sorted(want.items())}"
        stats = await self.call(self.dev.session_stats, TABLE)
        m = self.model
        assert stats == dict(occupancy=m.occupancy, learned=m.learned,
                             insert_failed=m.insert_failed, aged=m.aged, hits=m.hits,
                             misses=m.misses, late=late, busy=busy), stats


def new_flows(first, n, protocol=TCP):
    return [flow(first + i, protocol) for i in range(n)]


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_syn_flood_fills_table(dut):
    """New SYNs one every 10 clocks on a memory of 100 clocks: each learns while its bucket
    has a free slot; then the punt policy applies, counted. Every result 512 clocks after
    its packet."""
    rng, _ = cocotb_util.test_rng(dut, "syn_flood_fills_table")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100)
    flood = new_flows(0, 2 * BUCKETS * SLOTS)
    packets = spaced(flood, 10)
    results = await tb.send(packets)
    assert tb.check(packets, results) == (0, 0)
    assert tb.model.insert_failed > 0 and tb.model.learned > BUCKETS * SLOTS // 2
    assert tb.latency_of(results) == {LATENCY}
    dut._log.info("SYN flood: %d of %d sessions learned, %d refused", tb.model.learned,
                  BUCKETS * SLOTS, tb.model.insert_failed)
    await tb.check_table()


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_back_to_back_new_flow(dut):
    """Packets of one new flow on consecutive clocks, on a memory whose reads miss the
    writes that land while they are out: the first learns, the next clock already hits,
    the session is inserted once; the handshakes of flows sharing a bucket, interleaved
    packet by packet, move each state once per packet."""
    rng, _ = cocotb_util.test_rng(dut, "back_to_back_new_flow")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=300, snapshot=True)
    await one_new_flow_back_to_back(tb)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_writes_answered_late(dut):
    """On a memory whose writes land, and are answered, 300 clocks after their data (three
    times its reads' latency), with the write channels held back at random: the packets of
    test_back_to_back_new_flow, then 40 new flows whose packets come every 120 clocks, so
    that their later packets read their bucket after the learn's write left and before it
    landed, while the flows' writes need more tracked buckets than there are. A bucket
    stays tracked until its write is answered and the reads out by then are back: each
    flow is learned once, packets that find no tracked bucket free leave busy."""
    rng, _ = cocotb_util.test_rng(dut, "writes_answered_late")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100, snapshot=True, write_latency=300, write_busy=0.3)
    await one_new_flow_back_to_back(tb)
    flows = new_flows(500, 40, UDP)
    packets = spaced(flows * 5, 3)
    results = await tb.send(packets)
    late, busy = tb.check(packets, results)
    assert late == 0 and busy > 0 and tb.model.learned > 4 + len(flows) // 2, (busy, tb.model.learned)
    await tb.check_table(busy=busy)


async def one_new_flow_back_to_back(tb):
    a = flow(10, UDP)
    # Three flows of one bucket: a full bucket, every slot's write in flight at once.
    same = []
    n = 100
    while len(same) < 3:
        f = flow(n)
        if not same or tb.model.bucket(canon(f)) == tb.model.bucket(canon(same[0])):
            same.append(f)
        n += 1
    shakes = [handshake(f) for f in same]
    packets = [a] * 6 + [p for step in zip(*shakes) for p in step]
    results = await tb.send(packets)
    assert tb.check(packets, results) == (0, 0)
    assert [r.learned for _, r in results[:6]] == [True] + [False] * 5
    assert all(r.hit for _, r in results[1:6])
    assert [r.state for _, r in results[6 + 6:6 + 9]] == [model.ESTABLISHED] * 3
    assert tb.model.learned == 4 and tb.model.occupancy == 4
    await tb.check_table()


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_forward_and_reverse(dut):
    """Both directions find one session; the TCP state follows the handshake, FIN and RST;
    UDP sessions; the same 5-tuple in another zone is another session; the driver finds
    each session in its bucket by the key it builds itself."""
    rng, _ = cocotb_util.test_rng(dut, "forward_and_reverse")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=200)
    a, b, u = flow(1), flow(2), flow(3, UDP)
    packets = handshake(a) + [a.reverse(FIN | ACK), a.with_flags(ACK)]
    packets += handshake(b) + [b.with_flags(RST), b.reverse(FIN | ACK)]
    packets += [u, u.reverse(0), u, model.Packet(8, UDP, u.src, u.dst, u.sport, u.dport)]
    packets += [flow(4).reverse(SYN | ACK)]
    results = await tb.send(packets)
    assert tb.check(packets, results) == (0, 0)
    states = [r.state for _, r in results]
    assert states[:7] == [model.SYN_SENT, model.SYN_ACK, model.ESTABLISHED,
                          model.ESTABLISHED, model.ESTABLISHED, model.CLOSING, model.CLOSING]
    assert tb.model.occupancy == 4
    await tb.check_table(driver_dump=True)
    key, _ = driver.session_key_ipv4(a.zone, TCP, a.dst, a.dport, a.src, a.sport)
    assert await tb.call(tb.dev.session_find, TABLE, key) == results[0][1].index


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_tracked_buckets_run_out(dut):
    """A new flow every clock on a memory of 300 clocks: each learn's write stays tracked
    for hundreds of clocks, so after the 16 tracked buckets the changes find no room. Those
    packets leave busy, counted, and change nothing; every other result is the model's,
    and the table holds exactly the sessions the model learned."""
    rng, _ = cocotb_util.test_rng(dut, "tracked_buckets_run_out")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=300, snapshot=True)
    flood = new_flows(1000, 60, UDP)
    results = await tb.send(flood)
    late, busy = tb.check(flood, results)
    assert late == 0 and busy > 0 and tb.model.learned >= TRACKED, (busy, tb.model.learned)
    # The refused flows come again once the writes are answered: now they learn.
    again = [p for p, f in zip(flood, tb.flags[-len(flood):]) if f[1]]
    results = await tb.send(spaced(again, 40))
    assert tb.check(again, results) == (0, 0)
    assert all(r.learned or r.insert_failed for _, r in results)
    await tb.check_table(busy=busy)


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_late_memory_learns_nothing(dut):
    """A memory slower than the table is built for: every packet leaves late, learns
    nothing and is counted; once the memory is fast again the same packets learn."""
    rng, _ = cocotb_util.test_rng(dut, "late_memory_learns_nothing")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100)
    tb.memory.latency = 600
    flows = new_flows(2000, 20, UDP)
    results = await tb.send(spaced(flows, 2))
    assert tb.check(flows, results) == (len(flows), 0)
    assert tb.model.occupancy == 0
    # The reads of the slow memory (the scanner's too) come back before the next ones.
    tb.memory.latency = 100
    await ClockCycles(dut.clk, 700)
    results = await tb.send(flows)
    assert tb.check(flows, results) == (0, 0)
    assert tb.model.learned == len(flows) - tb.model.insert_failed
    await tb.check_table(late=len(flows))


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_memory_errors_change_nothing(dut):
    """Reads of some buckets answered SLVERR (their data inverted): a packet of such a
    bucket leaves late, learns and moves nothing and is counted; the scanner removes
    nothing from such a bucket however old its sessions; once the memory answers OKAY, the
    same packets learn and the old sessions age."""
    rng, _ = cocotb_util.test_rng(dut, "memory_errors_change_nothing")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100)
    old = new_flows(4000, 24, UDP)
    # A learned session a bucket tracked for a read and a write of memory: 16 of them.
    results = await tb.send(spaced(old, 16))
    assert tb.check(old, results) == (0, 0)
    bucket = tb.model.bucket
    failing = {bucket(canon(p)) for p in old[:8]}
    tb.memory.failing = {b * BUCKET_BYTES for b in failing}
    fresh = new_flows(5000, 40, UDP)
    packets = old + fresh
    results = await tb.send(spaced(packets, 16))
    late, busy = tb.check(packets, results)
    bad = [bucket(canon(p)) in failing for p in packets]
    assert [f[0] for f in tb.flags[-len(packets):]] == bad and busy == 0
    # Aging: every UDP session is past its timeout within a few ticks; the sweep (a bucket
    # every 2 clocks) removes all but the failing buckets' sessions.
    await tb.call(tb.dev.session_set_tick, TABLE, 256)
    await tb.call(tb.dev.session_set_timeout, TABLE, model.UDP_STATE, 1)
    await tb.call(tb.dev.session_set_scan_interval, TABLE, 2)
    assert await tb.call(tb.dev.session_get_scan_interval, TABLE) == 2
    await ClockCycles(dut.clk, 256 * 4 + BUCKETS * 2 * 2 + 600)
    held = tb.memory_dump()
    assert held and all(i >> contract.MEMX_INDEX_SLOT_BITS in failing for i in held), sorted(held)
    assert {k for k, _, _ in held.values()} == {s.key for i, s in tb.model.entries.items()
                                                if i >> contract.MEMX_INDEX_SLOT_BITS in failing}
    tb.memory.failing = set()
    await ClockCycles(dut.clk, BUCKETS * 2 * 2 + 600)
    assert tb.memory_dump() == {}
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["occupancy"] == 0 and stats["aged"] == tb.model.occupancy and stats["late"] == late, stats


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_scanner_keeps_to_its_share_of_a_slow_memory(dut):
    """On a memory that answers a read in a third of the clocks, the scanner counts
    SCAN_INTERVAL in the memory's answers, not in clocks: at SCAN_INTERVAL 4 it takes a
    quarter of them, and the lookups, a packet every 5 clocks, get the rest and come back in
    time. Counting clocks, it would read in most of the clocks without a packet, more than
    the memory serves, and the lookups queued behind its reads would leave late. The
    scanner still sweeps: an idle session ages within a few sweeps of its timeout."""
    rng, _ = cocotb_util.test_rng(dut, "scanner_keeps_to_its_share_of_a_slow_memory")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100, snapshot=True)
    # The kept flows' sessions outlive lookups that come back late (which refresh
    # nothing) while the pace is learned; the idle one, a SYN, ages 4 ticks after it.
    await tb.call(tb.dev.session_set_tick, TABLE, 256)
    await tb.call(tb.dev.session_set_timeout, TABLE, model.UDP_STATE, 1000)
    await tb.call(tb.dev.session_set_timeout, TABLE, model.SYN_SENT, 4)
    kept, idle = new_flows(6000, 12, UDP), flow(6100)
    results = await tb.send(spaced(kept + [idle], 5))
    assert tb.check(kept + [idle], results) == (0, 0)
    tb.memory.set_pauses(0.0, 2 / 3)
    await tb.call(tb.dev.session_set_scan_interval, TABLE, 4)
    packets = [kept[n % len(kept)] for n in range(3000)]
    results = await tb.send(spaced(packets, 5))
    late, busy = tb.check(packets, results)
    # The table learns the memory's pace from lookups that came back late: the first
    # ones; from then on, all but a few come back in time.
    settled = [f[0] for f in tb.flags[-len(packets) // 2:]]
    dut._log.info("late lookups: %d of %d, %d of the last %d", late, len(packets), sum(settled), len(settled))
    assert busy == 0 and sum(settled) <= len(settled) // 50, \
        f"{sum(settled)} of the last {len(settled)} lookups late, {late} of {len(packets)} in all"
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["aged"] == 1 and stats["occupancy"] == len(kept), stats
    assert canon(idle) not in {k for k, _, _ in tb.memory_dump().values()}


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_aging(dut):
    """The scanner reads a bucket every SCAN_INTERVAL clocks and removes the sessions idle
    past their state's timeout, not before and within a sweep and a read of it, counted;
    a session whose packets keep coming stays."""
    rng, _ = cocotb_util.test_rng(dut, "aging")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=100, snapshot=True)
    tick, timeouts = 1024, {model.SYN_SENT: 6, model.UDP_STATE: 14}
    await tb.call(tb.dev.session_set_tick, TABLE, tick)
    # A sweep: 64 buckets, one every 2 clocks, an eighth of a tick.
    await tb.call(tb.dev.session_set_scan_interval, TABLE, 2)
    assert await tb.read32(BASE + contract.MEMS_WIN_SCAN_INTERVAL) == 2
    for state, t in timeouts.items():
        await tb.call(tb.dev.session_set_timeout, TABLE, state, t)
    kept = flow(3000, UDP)
    udp = [flow(3001 + n, UDP) for n in range(6)]
    syns = [flow(3100 + n) for n in range(6)]
    start = await tb.read32(BASE + contract.SESSION_NOW)
    first = await tb.send([kept] + udp + syns)
    after = await tb.read32(BASE + contract.SESSION_NOW)
    assert all(r.learned for _, r in first)

    def present(now):
        """Sessions there for sure at tick `now`, and gone for sure, by the timeouts."""
        there, gone = 1, 0
        for group, state in ((udp, model.UDP_STATE), (syns, model.SYN_SENT)):
            if now - start <= timeouts[state]:
                there += len(group)
            # Aged at an age above the timeout, then within a sweep and a read of memory.
            if now - after > timeouts[state] + 2:
                gone += len(group)
        return there, 1 + len(udp) + len(syns) - gone

    while True:
        results = await tb.send([kept])
        assert results[0][1].hit, "the session aged while its packets kept coming"
        now = await tb.read32(BASE + contract.SESSION_NOW)
        occupancy = await tb.read32(BASE + contract.SESSION_OCCUPANCY)
        least, most = present(now)
        assert least <= occupancy <= most, f"tick {now - start}: {occupancy} sessions, not {least}..{most}"
        if now - after > max(timeouts.values()) + 3:
            break
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["aged"] == len(udp) + len(syns) and stats["occupancy"] == 1, stats


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_delete_racing_lookups(dut):
    """tb/session's race on a memory whose reads miss writes in flight: the driver deletes
    sessions while their packets keep coming; every packet hits until the delete and
    misses after it (TCP: no re-learning without a SYN), a UDP flow re-learns once, others
    are untouched, and no packet is late or busy."""
    rng, _ = cocotb_util.test_rng(dut, "delete_racing_lookups")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=200, snapshot=True)
    mark = len(tb.flags)
    await delete_racing_lookups(tb, every=12)
    assert not any(late or busy for late, busy in tb.flags[mark:])


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_flush_under_traffic(dut):
    """tb/session's flush while packets flow, on a memory whose reads miss writes in flight:
    afterwards the TCP sessions (which cannot re-learn without a SYN) are gone and each UDP
    flow was learned again exactly once."""
    rng, _ = cocotb_util.test_rng(dut, "flush_under_traffic")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=150, snapshot=True)
    mark = len(tb.flags)
    # The setup spaced so that its writes in flight stay within the tracked buckets; after
    # the flush, a UDP flow left busy learns in a later round.
    udp = [flow(70 + n, UDP) for n in range(20)]
    await flush_under_traffic(tb, udp, every=12, gap=4)
    assert not any(late or busy for late, busy in tb.flags[mark:mark + 3 * 8 + len(udp)])


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_random_traffic(dut):
    """Random flows, directions, TCP flags, learn bits and gaps on a memory of random
    latency and jitter whose reads miss writes in flight, checked packet by packet; then the
    whole table and the statistics through the driver."""
    rng, seed = cocotb_util.test_rng(dut, "random_traffic")
    tb = MemSessionTb(dut, rng)
    await tb.start(latency=rng.randrange(100, 301), snapshot=True)
    tb.memory.jitter = rng.randrange(0, 20)
    packets = random_packets(rng, 120, 3000, idle=0.6)
    results = await tb.send(packets)
    late, busy = tb.check(packets, results)
    dut._log.info("random traffic (seed %d, memory %d clocks): %d packets, %d sessions, "
                  "%d learned, %d refused, %d busy", seed, tb.memory.latency, len(results),
                  tb.model.occupancy, tb.model.learned, tb.model.insert_failed, busy)
    assert late == 0
    await tb.check_table(busy=busy)
