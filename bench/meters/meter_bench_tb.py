# SPDX-License-Identifier: Apache-2.0
"""Meter benchmark (cocotb): a meter unit's operations per clock and latency with every
request on one meter, and how long its commands keep STATUS busy, idle and under load.

Runs on any meter unit (it reads the descriptor from the unit); the meter testbench
(tb/meter/meter_tb.py) drives it, and every colour is checked against the RFC model as in
the tests, so a number here is never from a unit that coloured wrongly. Writes JSON to
$MATCHA_BENCH_OUT.
"""

import json
import os

import cocotb
from cocotb.triggers import ClockCycles

from tb.common import cocotb_util
from tb.meter.meter_tb import CMD_CLEAR, CMD_READ, MeterTb
from tb.model.meter import GREEN, HwMeter, RED, YELLOW


# Clocks to wait after the last request for its result: more than any unit's latency.
SETTLE = 64


def stream_numbers(sent, got):
    """Operations per clock (results between the first and the last result, the clocks
    counted inclusively) and the set of latencies (result clock - request clock)."""
    clocks = got[-1][0] - got[0][0] + 1
    return len(got) / clocks, sorted({r[0] - s[0] for s, r in zip(sent, got)})


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def meter_bench(dut):
    rng, seed = cocotb_util.test_rng(dut, "meter_bench")
    tb = MeterTb(dut)
    await tb.start()
    busy = cocotb_util.BusyMonitor(dut)
    n = int(os.environ.get("MATCHA_BENCH_REQUESTS", "4000"))
    meter = tb.meters - 1
    out = {"unit": dut._name, "meters": tb.meters, "latency_declared": tb.desc.latency,
           "tick_clocks": tb.tick_clocks, "requests": n, "seed": seed, "streams": {}}

    # Every request on one meter, one per clock, in two modes; rates and bursts chosen so
    # that all three colours come out.
    settings = {
        "trTCM, colour-blind": HwMeter(two_rate=True, cir=150, pir=300, cbs=20000, pbs=40000),
        "srTCM, colour-aware": HwMeter(aware=True, cir=300, cbs=20000, pbs=20000),
    }
    for name, setting in settings.items():
        await tb.write_meter(meter, setting)
        reqs = [(0, meter, rng.randint(64, 1500), rng.choice((GREEN, GREEN, YELLOW)))
                for _ in range(n)]
        tb.results.clear()
        sent = await tb.send(reqs)
        await ClockCycles(dut.clk, SETTLE)
        got = await tb.collect(sent, latency=1)
        per_clock, latencies = stream_numbers(sent, got)
        colours = [c for _, c in got]
        tb.check(sent, colours)
        out["streams"][name] = {
            "ops_per_clock": per_clock, "latency": latencies,
            "colours": {k: colours.count(v) for k, v in
                        (("green", GREEN), ("yellow", YELLOW), ("red", RED))}}
        dut._log.info("%s: %.4f operations per clock, latency %s, %s", name, per_clock,
                      latencies, out["streams"][name]["colours"])

    # Commands on an idle unit: clocks STATUS stays busy.
    busy.spans.clear()
    setting = settings["trTCM, colour-blind"]
    for _ in range(8):
        await tb.write_meter(rng.randrange(tb.meters), setting)
        assert await tb.command(CMD_READ, rng.randrange(tb.meters)) == 0
    assert await tb.command(CMD_CLEAR) == 0
    await ClockCycles(dut.clk, 2)
    writes, reads, clear = busy.spans[0:16:2], busy.spans[1:16:2], busy.spans[16]
    tb.bank.clear()

    # WRITEs to another meter while requests take every other clock on one meter.
    await tb.write_meter(meter, setting)
    other = 0
    busy.spans.clear()
    reqs = [(1, meter, rng.randint(64, 1500), GREEN) for _ in range(n // 2)]
    tb.results.clear()
    traffic = cocotb.start_soon(tb.send(reqs))
    loaded = 0
    while not traffic.done():
        await tb.write_meter(other, setting)
        loaded += 1
    sent = await traffic
    await ClockCycles(dut.clk, SETTLE)
    got = await tb.collect(sent, latency=1)
    tb.check(sent, [c for _, c in got])
    half_per_clock, half_latencies = stream_numbers(sent, got)
    await ClockCycles(dut.clk, 2)
    out["commands"] = {
        "write_idle": sorted(set(writes)), "read_idle": sorted(set(reads)), "clear_idle": clear,
        "writes_under_half_load": loaded,
        "write_under_half_load": [min(busy.spans), max(busy.spans)],
        "half_load_ops_per_clock": half_per_clock, "half_load_latency": half_latencies}
    dut._log.info("commands: %s", out["commands"])
    with open(os.environ["MATCHA_BENCH_OUT"], "w") as f:
        json.dump(out, f, indent=1)
