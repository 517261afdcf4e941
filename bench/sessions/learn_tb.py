# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of a session table unit under 100 % new flows: a TCP SYN of a new random
flow (zone, addresses and ports drawn from the run's seed) every clock, four times as many
flows as the table has entries. Every result is checked against the reference model
(tb/model/session.py); the numbers go to the JSON file named by MATCHA_BENCH_OUT.
"""

import json
import os

import cocotb

from tb.common import cocotb_util
from tb.model.session import SYN, TCP, Packet
from tb.session.session_tb import SessionTb


@cocotb.test()
async def bench_learning(dut):
    size = int(os.environ["MATCHA_BENCH_SIZE"])
    tb = SessionTb(dut)
    rng, seed = cocotb_util.test_rng(dut, "bench_learning")
    await tb.start(size)
    offered = 4 * size
    flood = [Packet(rng.getrandbits(24), TCP, rng.getrandbits(32), rng.getrandbits(32),
                    rng.getrandbits(16), rng.getrandbits(16), SYN) for _ in range(offered)]
    results = await tb.send(flood)
    tb.check(flood, results)
    learned = [r.learned for _, r in results]
    first_fail = next((i for i, (_, r) in enumerate(results) if r.insert_failed), offered)
    # Until the first failure every packet learns: sessions per clock over that stretch.
    span = results[first_fail - 1][0] - results[0][0] + 1
    after = {f"after_{k}x": sum(learned[:k * size]) / size for k in (1, 2, 4)}
    out = dict(size=size, seed=seed, offered=offered, latency=sorted(tb.latency_of(results)),
               learned_before_first_failure=first_fail,
               learned_per_clock=first_fail / span,
               occupancy_at_first_failure=first_fail / size, **after,
               learned=tb.model.learned, insert_failed=tb.model.insert_failed)
    stats = await tb.call(tb.dev.session_stats, 0)
    assert stats["learned"] == tb.model.learned and stats["occupancy"] == tb.model.occupancy
    dut._log.info("session bench: %s", out)
    with open(os.environ["MATCHA_BENCH_OUT"], "w") as f:
        json.dump(out, f)
