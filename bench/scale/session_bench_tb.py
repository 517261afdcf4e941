# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of a memory-backed session table unit under 100 % new flows
(bench/scale/run_sessions.py): for each memory latency of MATCHA_BENCH_LATENCIES and each
offered rate of MATCHA_BENCH_RATES (new flows a clock), a flood of MATCHA_BENCH_FLOWS TCP
SYNs of new random flows, on a memory whose reads miss the writes that land while they are
out; the table flushed between runs, its aging scanner off. Every result is checked against the reference model
(MemSessionTb.check); writes results.json into MATCHA_BENCH_OUT: per run, sessions learned,
refused (bucket full), busy and late, per clock, and the memory's reads and writes.
"""

import json
import os
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge

from tb.common import cocotb_util, contract
from tb.mem_session_table.mem_session_table_tb import BASE, TABLE, MemSessionTb
from tb.session.session_tb import spaced
from tb.model.session import SYN, TCP, Packet


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
