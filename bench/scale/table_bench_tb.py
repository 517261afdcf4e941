# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of matcha_mem_exact_table at one lookup a clock (bench/scale/run_table.py):
the table filled to its load factor, then runs of lookups back to back (half present keys,
half absent) against a memory of each latency and bandwidth in MATCHA_BENCH_MEMORIES
("latency:busy,..."; busy: the share of clocks in which the memory holds its answer back,
at random, so that it answers 1 - busy beats a clock at most). Every result not flagged
late is checked against the oracle (MemExactTb.lookups); writes results.json into
MATCHA_BENCH_OUT: per run, lookups, late results, the table's LATE count, memory reads,
and results per clock.
"""

import json
import os
from pathlib import Path

import cocotb

from tb.common import cocotb_util
from tb.mem_exact_table.mem_exact_table_tb import (
    BUCKETS, LOAD_FACTOR, SLOTS, MemExactTb, absent_keys, fill,
)

# Long enough for the table to learn a slower memory's pace in the first half of a run.
LOOKUPS = 16000


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def bench_lookup_rate(dut):
    rng, _ = cocotb_util.test_rng(dut, "bench_lookup_rate")
    tb = MemExactTb(dut, rng)
    await tb.start()
    keys, _ = fill(tb, rng, int(LOAD_FACTOR * BUCKETS * SLOTS))
    runs = []
    for spec in os.environ["MATCHA_BENCH_MEMORIES"].split(","):
        latency, busy = int(spec.split(":")[0]), float(spec.split(":")[1])
        tb.memory.latency = latency
        tb.memory.set_pauses(0.0, busy)
        looked = [rng.choice(keys) for _ in range(LOOKUPS // 2)] + absent_keys(tb, rng, LOOKUPS // 2)
        rng.shuffle(looked)
        late_before, reads_before = await tb.late_count(), tb.memory.reads
        out = await tb.lookups(looked)
        cycles = [c for c, *_ in tb.results]
        late = sum(r[1] for r in out)
        runs.append({"latency": latency, "busy": busy, "lookups": len(looked), "late": late,
                     "late_counted": await tb.late_count() - late_before,
                     "reads": tb.memory.reads - reads_before,
                     "results_per_clock": len(cycles) / (cycles[-1] - cycles[0] + 1),
                     "answered_per_clock": (len(looked) - late) / (cycles[-1] - cycles[0] + 1),
                     # One lookup a clock: the share of the second half's not late.
                     "answered_second_half": 1 - sum(r[1] for r in out[len(out) // 2:]) / (len(out) - len(out) // 2)})
        dut._log.info("%s", runs[-1])
        while not tb.memory.idle():
            await cocotb.triggers.ClockCycles(dut.clk, 100)
    Path(os.environ["MATCHA_BENCH_OUT"], "results.json").write_text(json.dumps(runs, indent=1))
