# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of matcha_lpm32_mem_bench (bench/scale/run_lpm.py): prefixes loaded through
the C driver, then runs of lookups, one a clock, against memories (one a level, on its own
port) of each latency and bandwidth in MATCHA_BENCH_MEMORIES ("latency:busy,..."; busy: the
share of clocks in which a memory holds its answer back, at random). Every result leaves exactly the table's latency after its key (LpmTableTb.collect),
and every one not flagged late is checked against the brute-force oracle; writes
results.json into MATCHA_BENCH_OUT: per run, lookups, late results, the table's
LPM_WIN_LATE count, memory reads and the clocks the lookups took.
"""

import json
import os
from pathlib import Path

import cocotb

from tb.common import cocotb_util, contract
from tb.common import driver as drv
from tb.lpm_table import lpm_table_tb as lpm

PREFIXES = 96
# Long enough for the levels to learn a slower memory's pace (docs/tables.md, "The pace of
# reads"): its first late answers come a table latency after the reads it could not serve.
LOOKUPS = 8000
NAME = "matcha_lpm32_mem_bench"
# matcha.table.LpmMemSweep: 512 prefixes in 10-slot nodes (4 levels), the lowest 2 in
# memory, each given 512 clocks.
lpm.EXPECTED[NAME] = drv.Descriptor(contract.KIND_LPM | contract.KIND_PREFIX_STORE, 32, 512, 32,
                                    contract.INFO_WINDOW_BYTES, 4, 2 + 2 * 512 + 2,
                                    drv.lpm_extra(10, 512, memory_levels=2))


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def bench_lookup_rate(dut):
    rng, seed = cocotb_util.test_rng(dut, "bench_lookup_rate")
    tb = lpm.LpmTableTb(dut)
    await tb.start()
    bases = [rng.getrandbits(tb.kw) for _ in range(4)]
    added = await lpm.random_set(tb, rng, PREFIXES, bases)
    keys = lpm.lookup_keys(tb, rng, bases, LOOKUPS)
    runs = []
    for spec in os.environ["MATCHA_BENCH_MEMORIES"].split(","):
        latency, busy = int(spec.split(":")[0]), float(spec.split(":")[1])
        for m in tb.memories:
            m.latency = latency
            m.set_pauses(0.0, busy)
        late_before, done_before = tb.late_seen, tb.lookups_done
        counted_before, reads_before = await lpm.late_count(tb), sum(m.reads for m in tb.memories)
        start = tb.cycles.cycle
        await tb.stream(keys)
        clocks = tb.cycles.cycle - start
        for _, k, r in await tb.collect(late_ok=True):
            tb.check(k, r, [tb.oracle.answer(k)])
        runs.append({"seed": seed, "prefixes": added, "latency": latency, "busy": busy, "lookups": len(keys),
                     "late": tb.late_seen - late_before, "answered": tb.lookups_done - done_before,
                     "late_counted": await lpm.late_count(tb) - counted_before,
                     "reads": sum(m.reads for m in tb.memories) - reads_before, "clocks": clocks,
                     "table_latency": tb.latency})
        dut._log.info("%s", runs[-1])
        while not all(m.idle() for m in tb.memories):
            await cocotb.triggers.ClockCycles(dut.clk, 100)
    Path(os.environ["MATCHA_BENCH_OUT"], "results.json").write_text(json.dumps(runs, indent=1))
