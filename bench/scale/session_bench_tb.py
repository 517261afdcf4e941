# SPDX-License-Identifier: Apache-2.0
"""cocotb benches of a memory-backed session table unit, each writing results.json into
MATCHA_BENCH_OUT, on a memory whose reads miss the writes that land while they are out.

`bench_learning` (bench/scale/run_sessions.py), 100 % new flows: for each memory latency of
MATCHA_BENCH_LATENCIES and each offered rate of MATCHA_BENCH_RATES (new flows a clock), a
flood of MATCHA_BENCH_FLOWS TCP SYNs of new random flows; the table flushed between runs,
its aging scanner off. Every result is checked against the reference model
(MemSessionTb.check). Per run: sessions learned, refused (bucket full), busy and late, per
clock, and the memory's reads and writes.

`bench_aging` (bench/scale/run_session_aging.py), learning and aging on a memory that
answers reads and takes writes in only a share of the clocks: see its docstring.
"""

import json
import os
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge

from tb.common import cocotb_util, contract
from tb.mem_session_table.mem_session_table_tb import BASE, TABLE, MemSessionTb
from tb.session.session_tb import spaced
from tb.model import session as model
from tb.model.session import SYN, SYN_SENT, TCP, UDP, UDP_STATE, Packet


async def count_writes(dut, counter):
    while True:
        await RisingEdge(dut.clk)
        if int(dut.m_axi_awvalid.value) and int(dut.m_axi_awready.value):
            counter[0] += 1


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def bench_learning(dut):
    rng, seed = cocotb_util.test_rng(dut, "bench_learning")
    buckets = int(os.environ["MATCHA_BENCH_BUCKETS"])
    flows = int(os.environ["MATCHA_BENCH_FLOWS"])
    tb = MemSessionTb(dut, rng, buckets)
    await tb.start(latency=100, snapshot=True)
    # The aging scanner off: the memory's reads and writes are the flood's alone.
    await tb.write32(BASE + contract.MEMS_WIN_SCAN_INTERVAL, 0)
    writes = [0]
    cocotb.start_soon(count_writes(dut, writes))
    runs = []
    for latency in map(int, os.environ["MATCHA_BENCH_LATENCIES"].split(",")):
        for rate in map(float, os.environ["MATCHA_BENCH_RATES"].split(",")):
            tb.memory.latency = latency
            await tb.call(tb.dev.session_flush, TABLE)
            tb.model.flush()
            while not tb.memory.idle():
                await ClockCycles(dut.clk, 100)
            flood = [Packet(rng.getrandbits(24), TCP, rng.getrandbits(32), rng.getrandbits(32),
                            rng.getrandbits(16), rng.getrandbits(16), SYN) for _ in range(flows)]
            before = dict(tb.model.__dict__)
            reads, written = tb.memory.reads, writes[0]
            every = round(1 / rate)
            results = await tb.send(spaced(flood, every))
            late, busy = tb.check(flood, results)
            span = results[-1][0] - results[0][0] + every
            learned = tb.model.learned - before["learned"]
            refused = tb.model.insert_failed - before["insert_failed"]
            runs.append(dict(latency=latency, offered_per_clock=1 / every, flows=flows,
                             learned=learned, refused=refused, busy=busy, late=late,
                             learned_per_clock=learned / span,
                             reads=tb.memory.reads - reads, writes=writes[0] - written,
                             seed=seed))
            dut._log.info("%s", runs[-1])
            stats = await tb.call(tb.dev.session_stats, TABLE)
            assert stats["occupancy"] == tb.model.occupancy, stats
    Path(os.environ["MATCHA_BENCH_OUT"], "results.json").write_text(json.dumps(runs, indent=1))


# bench_aging's traffic: established UDP sessions offered at UDP_RATE a clock, then a flood
# of new TCP flows at SYN_RATE while they age; a tick of TICK clocks.
TICK = 1024
UDP_RATE, SYN_RATE = 0.2, 0.2


async def aged_by(tb, want, deadline):
    """The clock at which SESSION_AGED reached `want` (read every 256 clocks), or None if it
    had not by clock `deadline`."""
    while tb.cycles.cycle < deadline:
        if await tb.read32(BASE + contract.SESSION_AGED) >= want:
            return tb.cycles.cycle
        await ClockCycles(tb.dut.clk, 256)
    return None


@cocotb.test(timeout_time=6000, timeout_unit="ms")
async def bench_aging(dut):
    """For each memory latency of MATCHA_BENCH_LATENCIES and each memory share of
    MATCHA_BENCH_SHARES (the fraction of clocks in which the memory answers a read beat and
    takes a write beat, at random: 1 is a memory that keeps up with the table), with the
    aging scanner reading a bucket every MATCHA_BENCH_SCAN of the memory's answers:
    1. MATCHA_BENCH_UDP_FLOWS UDP sessions of new random flows, one every 1/UDP_RATE
       clocks, on an empty table, each result checked against the reference model;
    2. at once, MATCHA_BENCH_SYN_FLOWS TCP SYNs of other new random flows, one every
       1/SYN_RATE clocks, while the UDP sessions pass their timeout of
       MATCHA_BENCH_UDP_TIMEOUT ticks and the scanner removes them (the SYNs' own timeout
       is never reached);
    3. until the scanner has removed every UDP session.
    Then the memory holds exactly the SYNs' sessions their results say were learned, and
    SESSION_AGED counts every UDP session learned. Per run: the flood's sessions learned,
    busy, late and refused, and learned per clock; the clock the last UDP session could age
    in (its last packet plus its timeout and a tick) and the clock they had all aged by; the
    memory's reads and writes per clock over the run."""
    rng, seed = cocotb_util.test_rng(dut, "bench_aging")
    buckets = int(os.environ["MATCHA_BENCH_BUCKETS"])
    scan = int(os.environ["MATCHA_BENCH_SCAN"])
    udp_timeout = int(os.environ["MATCHA_BENCH_UDP_TIMEOUT"])
    udp_flows, syn_flows = int(os.environ["MATCHA_BENCH_UDP_FLOWS"]), int(os.environ["MATCHA_BENCH_SYN_FLOWS"])
    tb = MemSessionTb(dut, rng, buckets)
    await tb.start(latency=100, snapshot=True)
    await tb.call(tb.dev.session_set_tick, TABLE, TICK)
    await tb.call(tb.dev.session_set_timeout, TABLE, UDP_STATE, udp_timeout)
    await tb.call(tb.dev.session_set_timeout, TABLE, SYN_SENT, contract.SESSION_AGE_MAX)
    tb.model.timeouts[UDP_STATE] = udp_timeout
    tb.model.timeouts[SYN_SENT] = contract.SESSION_AGE_MAX
    writes = [0]
    cocotb.start_soon(count_writes(dut, writes))
    runs = []
    for latency in map(int, os.environ["MATCHA_BENCH_LATENCIES"].split(",")):
        for share in map(float, os.environ["MATCHA_BENCH_SHARES"].split(",")):
            await tb.call(tb.dev.session_set_scan_interval, TABLE, 0)
            tb.memory.set_pauses(0.0, 0.0)
            tb.memory.set_write_pauses(0.0, 0.0, 0.0)
            await tb.call(tb.dev.session_flush, TABLE)
            tb.model.flush()
            while not tb.memory.idle():
                await ClockCycles(dut.clk, 100)
            tb.memory.latency = latency
            tb.memory.set_pauses(0.0, 1 - share)
            tb.memory.set_write_pauses(0.0, 1 - share, 0.0)
            await tb.call(tb.dev.session_set_scan_interval, TABLE, scan)
            aged0 = await tb.read32(BASE + contract.SESSION_AGED)
            start, reads, written = tb.cycles.cycle, tb.memory.reads, writes[0]

            udp = [Packet(rng.getrandbits(24), UDP, rng.getrandbits(32), rng.getrandbits(32),
                          rng.getrandbits(16), rng.getrandbits(16), 0) for _ in range(udp_flows)]
            results = await tb.send(spaced(udp, round(1 / UDP_RATE)))
            tb.check(udp, results)
            udp_learned = sum(r.learned for _, r in results)
            udp_done = results[-1][0]

            syns = [Packet(rng.getrandbits(24), TCP, rng.getrandbits(32), rng.getrandbits(32),
                           rng.getrandbits(16), rng.getrandbits(16), SYN) for _ in range(syn_flows)]
            every = round(1 / SYN_RATE)
            results = await tb.send(spaced(syns, every))
            flags = tb.flags[-len(results):]
            learned = {model.canonical_key(p)[0] for p, (_, r) in zip(syns, results) if r.learned}
            late = sum(f[0] for f in flags)
            busy = sum(f[1] for f in flags)
            refused = sum(r.insert_failed for _, r in results)
            span = results[-1][0] - results[0][0] + every

            eligible = udp_done + (udp_timeout + 1) * TICK
            sweep = buckets * scan
            done = await aged_by(tb, aged0 + udp_learned, eligible + 4 * sweep + 10 * latency)
            end = tb.cycles.cycle
            await ClockCycles(dut.clk, 20)
            await tb.memory.writes_landed()
            held = {s[0] for s in tb.memory_dump().values()}
            runs.append(dict(latency=latency, share=share, scan=scan, udp_timeout_clocks=udp_timeout * TICK,
                             udp_offered_per_clock=UDP_RATE, udp_learned=udp_learned,
                             syn_offered_per_clock=1 / every, syns=len(syns), learned=len(learned),
                             learned_per_clock=len(learned) / span, late=late, busy=busy, refused=refused,
                             udp_eligible_by=eligible - start, aged_by=None if done is None else done - start,
                             clocks=end - start, reads=tb.memory.reads - reads, writes=writes[0] - written,
                             seed=seed))
            dut._log.info("%s", runs[-1])
            assert done is not None, f"UDP sessions not all aged by clock {end - start}: {runs[-1]}"
            assert held == learned, (f"the memory holds {len(held)} sessions, the flood's results "
                                     f"learned {len(learned)}: {len(held - learned)} held and not learned, "
                                     f"{len(learned - held)} learned and not held")
    Path(os.environ["MATCHA_BENCH_OUT"], "results.json").write_text(json.dumps(runs, indent=1))
