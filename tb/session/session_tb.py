# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_session_table: 64 sessions (4 ways x 16 slots), IPv4 5-tuple
keys with a 24-bit zone, behind its AXI4-Lite control window.

The oracle is tb/model/session.py, written from docs/sessions.md. Every packet's result is
checked against the model run one packet at a time; the control side (dump, delete,
flush, statistics, timeouts, tick, policy) goes through the C driver, whose register
accesses run on the DUT's bus while the driver call waits in a bridge thread.
"""

import cocotb
from cocotb.task import bridge
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from tb.common import cocotb_util, contract, driver
from tb.common.axil import AxiLiteRegisters, LiveBus
from tb.common.sim import soak
from tb.model import session as model
from tb.model.session import ACK, FIN, RST, SYN, TCP, UDP, Packet

SIZE, WAYS = 64, 4
LATENCY = 4
TABLE = 0


class SessionTb(AxiLiteRegisters):
    def __init__(self, dut):
        self.dut = dut
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        cocotb_util.quiet_cocotbext(dut, ("s_axil",))
        self.model = None  # once the driver has read the table's size
        self.cycles = cocotb_util.CycleCounter(dut)
        self.latency = LATENCY  # clocks from a packet to its result
        self.queue = []      # packets to send, None for an idle clock
        self.sent = []       # (cycle, packet) in send order
        self.results = []    # (cycle, result) in order
        self.dev = None

    async def start(self, size=SIZE):
        """Reset, then open the driver on the table; `size` is the table's expected size."""
        await cocotb_util.start(self.dut, inputs_low=("packet_valid",))
        cocotb.start_soon(self._drive())
        cocotb.start_soon(self._monitor())
        self.dev = await bridge(lambda: driver.Device(LiveBus(self)))()
        info = self.dev.tables[TABLE]
        assert (info.kind, info.size, info.ways, info.key_bits, info.latency) == \
            (contract.KIND_SESSION, size, WAYS, 128, LATENCY), info
        self.model = model.SessionModel(info.size, info.ways)
        # After reset the table clears itself, one slot per clock.
        await ClockCycles(self.dut.clk, info.size // info.ways + 8)

    async def call(self, fn, *args):
        """A driver call (a Device method and its arguments) against the live DUT."""
        return await bridge(lambda: fn(*args))()

    async def _drive(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            p = self.queue.pop(0) if self.queue else None
            dut.packet_valid.value = p is not None
            if p is None:
                continue
            dut.packet_payload_zone.value = p.zone
            dut.packet_payload_protocol.value = p.protocol
            dut.packet_payload_srcAddr.value = p.src
            dut.packet_payload_dstAddr.value = p.dst
            dut.packet_payload_srcPort.value = p.sport
            dut.packet_payload_dstPort.value = p.dport
            dut.packet_payload_tcpFlags.value = p.flags
            dut.packet_payload_learn.value = p.learn
            dut.packet_payload_frameLen.value = p.length
            self.sent.append((self.cycles.cycle, p))

    # Where the unit's result bundle has the session result's fields.
    RESULT = "result_payload_"

    def read_result(self):
        """The session result on the unit's result port."""
        def field(name):
            return getattr(self.dut, self.RESULT + name).value
        return model.Result(hit=bool(field("hit")), learned=bool(field("learned")),
                            insert_failed=bool(field("insertFailed")), drop=bool(field("drop")),
                            punt=bool(field("punt")), reply=bool(field("reply")),
                            state=int(field("state")), index=int(field("index")))

    async def _monitor(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.result_valid.value):
                self.results.append((self.cycles.cycle, self.read_result()))

    async def send(self, packets):
        """Queues packets (None: an idle clock) and waits until every result is in."""
        self.queue.extend(packets)
        want = len(self.sent) + sum(p is not None for p in self.queue)
        while len(self.results) < want or self.queue:
            await RisingEdge(self.dut.clk)
        await ClockCycles(self.dut.clk, 2)
        return self.results[want - sum(p is not None for p in packets):want]

    def check(self, packets, results, now=0):
        """Each result against the model, packet by packet."""
        packets = [p for p in packets if p is not None]
        assert len(packets) == len(results)
        for n, (p, (cycle, got)) in enumerate(zip(packets, results)):
            want = self.model.packet(p, now)
            if not (want.hit or want.learned):
                got = got.__class__(**{**got.__dict__, "index": None})
            assert got == want, f"packet {n} {p} (result at cycle {cycle}): {got}, model {want}"

    def latency_of(self, results):
        """Clocks from each packet to its result (results in send order)."""
        sent = self.sent[len(self.sent) - len(results):]
        return {rc - sc for (sc, _), (rc, _) in zip(sent, results)}

    async def dump(self):
        """Every valid entry as the driver reads it: index -> Session."""
        out = {}
        for i in range(self.model.size):
            s = await self.call(self.dev.session_read, TABLE, i)
            if s.valid:
                out[i] = (s.key_int(), s.state, s.initiator_high, s.age, s.packets, s.bytes)
        return out

    async def check_table(self):
        """The table as the driver dumps it equals the model's, counts included."""
        dumped = await self.dump()
        want = {i: (s.key, s.state, s.initiator, s.packets, s.bytes)
                for i, s in self.model.entries.items()}
        got = {i: (k, st, ini, p, b) for i, (k, st, ini, _age, p, b) in dumped.items()}
        assert got == want, f"dump {sorted(got.items())}\nmodel {sorted(want.items())}"
        stats = await self.call(self.dev.session_stats, TABLE)
        m = self.model
        assert stats == dict(occupancy=m.occupancy, learned=m.learned,
                             insert_failed=m.insert_failed, aged=m.aged, hits=m.hits,
                             misses=m.misses, late=0, busy=0), stats


def spaced(packets, every):
    """The packets, one every `every` clocks."""
    return [x for p in packets for x in [p] + [None] * (every - 1)]


def flow(n, protocol=TCP, zone=7):
    """A distinct flow per n (the initiator at 10.0.x.y, the responder at 192.168.0.1)."""
    return Packet(zone, protocol, 0x0A000000 | n, 0xC0A80001, 1024 + n % 50000, 80,
                  SYN if protocol == TCP else 0)


def handshake(p, length=100):
    """SYN, SYN-ACK, ACK, data both ways of the TCP flow of p."""
    return [p.with_flags(SYN, length=length), p.reverse(SYN | ACK, length=length),
            p.with_flags(ACK, length=length), p.with_flags(ACK, length=length + 1),
            p.reverse(ACK, length=length + 2)]


@cocotb.test()
async def test_syn_flood_fills_table(dut):
    """A new SYN every clock: each learns while its key has a free way, one session per
    clock; then every way of some key is taken and the punt policy applies, counted."""
    tb = SessionTb(dut)
    await tb.start()
    flood = [flow(n) for n in range(3 * SIZE)]
    results = await tb.send(flood)
    tb.check(flood, results)
    learned_cycles = [c for c, r in results if r.learned]
    assert len(learned_cycles) == tb.model.learned
    # Until the first failure, every packet learns: one new session per clock.
    first_fail = next(i for i, (_, r) in enumerate(results) if r.insert_failed)
    assert all(r.learned for _, r in results[:first_fail])
    assert first_fail >= SIZE // 2, f"first insert failure after {first_fail} sessions"
    dut._log.info("SYN flood: %d learned back to back (one per clock), %d of %d entries "
                  "filled by %d SYNs, %d insert failures", first_fail, tb.model.occupancy,
                  SIZE, len(flood), tb.model.insert_failed)
    assert tb.latency_of(results) == {LATENCY}
    await tb.check_table()


@cocotb.test()
async def test_full_table_policy(dut):
    """No free way: punt (reset value) or drop, as CONTROL says; a live session is never
    overwritten and the failures are counted."""
    tb = SessionTb(dut)
    await tb.start()
    assert await tb.call(tb.dev.session_get_policy, TABLE) == driver.SESSION_PUNT
    flood = [flow(n, UDP) for n in range(4 * SIZE)]
    tb.check(flood, await tb.send(flood))
    before = dict(tb.model.entries)
    assert tb.model.insert_failed > 0
    await tb.call(tb.dev.session_set_policy, TABLE, driver.SESSION_DROP)
    tb.model.drop_on_full = True
    assert await tb.call(tb.dev.session_get_policy, TABLE) == driver.SESSION_DROP
    more = [flow(n, UDP) for n in range(4 * SIZE, 6 * SIZE)]
    results = await tb.send(more)
    tb.check(more, results)
    assert any(r.drop for _, r in results) and not any(r.punt for _, r in results)
    # Existing sessions are all still there, with their keys.
    for i, s in before.items():
        assert tb.model.entries[i].key == s.key
    await tb.check_table()


@cocotb.test()
async def test_forward_and_reverse(dut):
    """Both directions find one session; the TCP state follows the handshake, FIN and RST;
    UDP sessions; the same 5-tuple in another zone is another session."""
    tb = SessionTb(dut)
    await tb.start()
    a, b = flow(1), flow(2)
    u = flow(3, UDP)
    packets = handshake(a) + [a.reverse(FIN | ACK), a.with_flags(ACK)]
    packets += handshake(b) + [b.with_flags(RST), b.reverse(FIN | ACK)]
    packets += [u, u.reverse(0), u, Packet(8, UDP, u.src, u.dst, u.sport, u.dport)]
    # A reply-direction SYN-ACK to a session that does not exist neither learns nor hits.
    packets += [flow(4).reverse(SYN | ACK)]
    results = await tb.send(packets)
    tb.check(packets, results)
    states = [r.state for _, r in results]
    assert states[:7] == [model.SYN_SENT, model.SYN_ACK, model.ESTABLISHED,
                          model.ESTABLISHED, model.ESTABLISHED, model.CLOSING, model.CLOSING]
    assert [r.reply for _, r in results[:5]] == [False, True, False, False, True]
    assert results[12][1].state == model.RESET and results[13][1].state == model.RESET
    assert tb.model.occupancy == 4
    await tb.check_table()
    # The driver finds each session by the key it builds itself.
    key, _ = driver.session_key_ipv4(a.zone, TCP, a.dst, a.dport, a.src, a.sport)
    assert await tb.call(tb.dev.session_find, TABLE, key) == results[0][1].index


@cocotb.test()
async def test_back_to_back_new_flow(dut):
    """Packets of one new flow on consecutive clocks: the first learns, the next clock
    already hits, the session is inserted once; two new flows interleaved likewise."""
    tb = SessionTb(dut)
    await tb.start()
    a = flow(10, UDP)
    b, c = flow(11), flow(12)
    packets = [a] * 6 + [b, c, b.with_flags(SYN), c.reverse(SYN | ACK), b, c]
    results = await tb.send(packets)
    tb.check(packets, results)
    assert [r.learned for _, r in results[:6]] == [True] + [False] * 5
    assert all(r.hit for _, r in results[1:6])
    assert tb.model.learned == 3 and tb.model.occupancy == 3
    await tb.check_table()


@cocotb.test()
async def test_aging_per_state(dut):
    """Sessions in each state age out after their own timeout and not before; the scanner
    counts them; traffic keeps a session alive."""
    tb = SessionTb(dut)
    await tb.start()
    # A tick long enough for a round of driver reads (tens of clocks each) to take a
    # fraction of it.
    tick = 256
    timeouts = {model.RESET: 6, model.SYN_SENT: 8, model.SYN_ACK: 10, model.CLOSING: 12,
                model.UDP_STATE: 14, model.ESTABLISHED: 16}
    await tb.call(tb.dev.session_set_tick, TABLE, tick)
    for s, t in timeouts.items():
        await tb.call(tb.dev.session_set_timeout, TABLE, s, t)
        assert await tb.call(tb.dev.session_get_timeout, TABLE, s) == t
    tb.model.timeouts.update(timeouts)
    flows = {model.SYN_SENT: [flow(20).with_flags(SYN)],
             model.SYN_ACK: handshake(flow(21))[:2],
             model.ESTABLISHED: handshake(flow(22))[:3],
             model.CLOSING: handshake(flow(23))[:3] + [flow(23).with_flags(FIN | ACK)],
             model.RESET: [flow(24).with_flags(SYN), flow(24).reverse(RST)],
             model.UDP_STATE: [flow(25, UDP)]}
    packets = [p for ps in flows.values() for p in ps]
    start = await tb.call(tb.dev.session_now, TABLE)
    results = await tb.send(packets)
    after = await tb.call(tb.dev.session_now, TABLE)
    assert after - start <= 1, "the packets took more than a tick"
    tb.check(packets, results)
    sessions = {s: tb.model.find(canon(ps[0])) for s, ps in flows.items()}
    for s, i in sessions.items():
        assert tb.model.entries[i].state == s
    gone_at = {}
    # A sweep of the scanner takes SIZE idle clocks, under a tick here.
    sweep = 1
    while len(gone_at) < len(sessions):
        for s, i in sessions.items():
            if s in gone_at:
                continue
            now = await tb.call(tb.dev.session_now, TABLE)
            got = await tb.call(tb.dev.session_read, TABLE, i)
            if not got.valid:
                gone_at[s] = now
                continue
            # The age counts from the session's last packet, sent between start and after.
            assert now - after <= got.age <= now - start + 1, (s, got.age, now, start, after)
            assert got.age <= timeouts[s] + 1, f"state {s}: age {got.age}, still there"
            assert got.state == s
        assert (await tb.call(tb.dev.session_now, TABLE)) - after < max(timeouts.values()) + 10
    for s, now in gone_at.items():
        # Not before its timeout (the last packet came at `start` or later), and within a
        # tick, a sweep and a round of driver reads of it.
        assert now - start > timeouts[s], f"state {s} aged at tick {now}, last packet at {start}"
        assert now - after <= timeouts[s] + 1 + sweep + 2, f"state {s} aged late: {now - after}"
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["aged"] == len(sessions) and stats["occupancy"] == 0, stats


def canon(p):
    return model.canonical_key(p)[0]


@cocotb.test()
async def test_traffic_keeps_session_alive(dut):
    """A session whose packets keep coming never ages, while an idle one beside it does."""
    tb = SessionTb(dut)
    await tb.start()
    tick = 16
    await tb.call(tb.dev.session_set_tick, TABLE, tick)
    await tb.call(tb.dev.session_set_timeout, TABLE, model.UDP_STATE, 8)
    busy, idle = flow(30, UDP), flow(31, UDP)
    first = await tb.send([busy, idle])
    assert first[0][1].learned and first[1][1].learned
    for _ in range(12):
        results = await tb.send([busy] + [None] * (2 * tick))
        assert results[0][1].hit, "the busy session aged while its packets kept coming"
    assert (await tb.call(tb.dev.session_read, TABLE, first[0][1].index)).valid
    # Nothing ages from here on, while the driver looks.
    await tb.call(tb.dev.session_set_timeout, TABLE, model.UDP_STATE, model.NEVER)
    assert not (await tb.call(tb.dev.session_read, TABLE, first[1][1].index)).valid
    assert (await tb.call(tb.dev.session_stats, TABLE))["aged"] == 1


@cocotb.test()
async def test_delete_racing_lookups(dut):
    """The driver deletes sessions while their packets keep coming: every packet hits
    until the delete and misses after it (TCP: no re-learning without a SYN), a UDP flow
    re-learns once, other sessions are untouched, and a stale delete removes nothing."""
    tb = SessionTb(dut)
    await tb.start()
    victim = await delete_racing_lookups(tb)
    # Deleting a session that is not there fails with ENOENT.
    try:
        await tb.call(tb.dev.session_delete, TABLE, canon(victim))
        raise AssertionError("deleting an absent session succeeded")
    except driver.MatchaError as e:
        assert e.code == driver.ENOENT, e


async def delete_racing_lookups(tb, every=1):
    """The race of test_delete_racing_lookups on a started table (its setup packets one
    every `every` clocks); returns the TCP flow deleted."""
    dut = tb.dut
    tcp = [flow(40 + n) for n in range(6)]
    udp = flow(50, UDP)
    setup = [p for f in tcp for p in handshake(f)[:3]] + [udp]
    tb.check(setup, await tb.send(spaced(setup, every)))
    victim = tcp[0]
    traffic = []
    for n in range(300):
        traffic += [victim.with_flags(ACK), udp, tcp[1 + n % 5].with_flags(ACK), None]
    mark = len(tb.results)
    tb.queue.extend(traffic)
    await ClockCycles(dut.clk, 40)
    await tb.call(tb.dev.session_delete, TABLE, canon(victim))
    await tb.call(tb.dev.session_delete, TABLE, canon(udp))
    while tb.queue:
        await RisingEdge(dut.clk)
    await ClockCycles(dut.clk, tb.latency + 2)
    results = [r for _, r in tb.results[mark:]]
    sent = [p for p in traffic if p is not None]
    assert len(results) == len(sent)
    victim_hits = [r.hit for p, r in zip(sent, results) if p == victim.with_flags(ACK)]
    cut = victim_hits.index(False)
    assert 0 < cut and not any(victim_hits[cut:]), victim_hits
    udp_results = [r for p, r in zip(sent, results) if p == udp]
    assert sum(r.learned for r in udp_results) == 1
    relearn = next(i for i, r in enumerate(udp_results) if r.learned)
    assert all(r.hit for r in udp_results[:relearn] + udp_results[relearn + 1:])
    others = [r for p, r in zip(sent, results) if p in [f.with_flags(ACK) for f in tcp[1:]]]
    assert all(r.hit and r.state == model.ESTABLISHED for r in others)
    assert await tb.call(tb.dev.session_find, TABLE, canon(victim)) is None
    assert await tb.call(tb.dev.session_find, TABLE, canon(udp)) is not None
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["occupancy"] == 6, stats
    return victim


@cocotb.test()
async def test_flush_under_traffic(dut):
    """A flush while packets flow: afterwards the TCP sessions (which cannot re-learn
    without a SYN) are gone, each UDP flow was re-learned exactly once, the counts restart.
    More UDP flows than a way has slots, so some re-learn beyond the first way, at indexes
    that the flush reaches long before a walk of the counters would."""
    tb = SessionTb(dut)
    await tb.start()
    udp = [flow(70 + n, UDP) for n in range(SIZE // WAYS + 8)]
    sent, got, dumped = await flush_under_traffic(tb, udp)
    # Each re-learned flow's counts start at its learning packet, whatever the flush's
    # clearing of the counters was doing meanwhile.
    counted = {}
    for p, (_, r) in zip(sent, got):
        if p.protocol == UDP and (r.learned or canon(p) in counted):
            counted[canon(p)] = counted.get(canon(p), 0) + 1
    assert {k: (packets, octets) for k, _st, _ini, _age, packets, octets in dumped.values()} == \
        {k: (n, 64 * n) for k, n in counted.items()}


async def flush_under_traffic(tb, udp, every=1, gap=1):
    """The flush of test_flush_under_traffic on a started table, with eight TCP flows and
    the `udp` ones (the setup packets one every `every` clocks, `gap` idle clocks after each
    round of traffic); returns the packets sent after the setup, their results, and the
    table's dump."""
    dut = tb.dut
    tcp = [flow(60 + n) for n in range(8)]
    setup = [p for f in tcp for p in handshake(f)[:3]] + udp
    tb.check(setup, await tb.send(spaced(setup, every)))
    assert tb.model.insert_failed == 0
    traffic = []
    for n in range(60):
        traffic += [tcp[n % 8].with_flags(ACK)] + udp + [None] * gap
    mark = len(tb.results)
    tb.queue.extend(traffic)
    await ClockCycles(dut.clk, 30)
    await tb.call(tb.dev.session_flush, TABLE)
    flushed_at = tb.cycles.cycle
    while tb.queue:
        await RisingEdge(dut.clk)
    await ClockCycles(dut.clk, tb.latency + 2)
    sent = [p for p in traffic if p is not None]
    got = tb.results[mark:]
    assert len(got) == len(sent)
    late = [(p, r) for p, (c, r) in zip(sent, got) if c > flushed_at + tb.latency]
    assert late, "the traffic ended before the flush"
    assert all(not r.hit for p, r in late if p.protocol == TCP)
    learned = {}
    for p, (_, r) in zip(sent, got):
        if p.protocol == UDP and r.learned:
            learned[canon(p)] = learned.get(canon(p), 0) + 1
    assert learned == {canon(u): 1 for u in udp}, learned
    dumped = await tb.dump()
    assert sorted(k for k, *_ in dumped.values()) == sorted(canon(u) for u in udp)
    stats = await tb.call(tb.dev.session_stats, TABLE)
    assert stats["occupancy"] == len(udp), stats
    return sent, got, dumped


@cocotb.test()
async def test_random_traffic(dut):
    """Random flows, directions, TCP flags, learn bits and gaps, checked packet by packet;
    then the whole table and the statistics through the driver."""
    await random_traffic(dut, "test_random_traffic", slots=3000)


@soak
@cocotb.test()
async def test_random_traffic_soak(dut):
    """test_random_traffic with 30,000 packet slots."""
    await random_traffic(dut, "test_random_traffic_soak", slots=30000)


def random_packets(rng, flows, slots, idle):
    """`slots` clocks of traffic over `flows` random flows (TCP or UDP, in zones 0..2): an
    idle clock (None) with probability `idle`, else a packet of one of them in either
    direction, with random TCP flags, learn bit and length."""
    pool = [flow(n, rng.choice((TCP, UDP)), zone=rng.randrange(3)) for n in range(flows)]
    flags = [SYN, SYN | ACK, ACK, FIN | ACK, RST, ACK | 0x08, 0]
    packets = []
    for _ in range(slots):
        if rng.random() < idle:
            packets.append(None)
            continue
        f = rng.choice(pool)
        p = f if rng.random() < 0.5 else f.reverse()
        fl = rng.choice(flags) if f.protocol == TCP else 0
        packets.append(p.with_flags(fl, learn=rng.random() < 0.8, length=rng.randrange(60, 1519)))
    return packets


async def random_traffic(dut, name, slots):
    tb = SessionTb(dut)
    rng, seed = cocotb_util.test_rng(dut, name)
    await tb.start()
    packets = random_packets(rng, 90, slots, idle=0.25)
    results = await tb.send(packets)
    tb.check(packets, results)
    dut._log.info("random traffic (seed %d): %d packets, %d sessions, %d learned, %d failed",
                  seed, len(results), tb.model.occupancy, tb.model.learned,
                  tb.model.insert_failed)
    await tb.check_table()


@cocotb.test()
async def test_bad_accesses(dut):
    """Unmapped session registers answer SLVERR; the driver refuses bad arguments."""
    tb = SessionTb(dut)
    await tb.start()
    base = tb.dev.tables[TABLE].base
    for off in (0x210, 0x220, 0x23C, 0x258, 0x300):
        r = await tb.axil.read(base + off, 4)
        assert int(r.resp) == 2, f"read of window offset 0x{off:x}: response {int(r.resp)}"
    for call, args in ((tb.dev.session_set_timeout, (TABLE, 0, 5)),
                       (tb.dev.session_set_timeout, (TABLE, model.UDP_STATE, 0)),
                       (tb.dev.session_set_timeout, (TABLE, model.UDP_STATE, 1 << 16)),
                       (tb.dev.session_set_tick, (TABLE, 0)),
                       (tb.dev.session_read, (TABLE, SIZE)),
                       (tb.dev.session_read, (TABLE + 1, 0))):
        try:
            await tb.call(call, *args)
            raise AssertionError(f"{call.__name__}{args} succeeded")
        except driver.MatchaError as e:
            assert e.code in (driver.EINVAL, driver.ENOTABLE), e
