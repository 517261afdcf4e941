# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of matcha_packet_path: throughput and latency per frame size.

Frames of one size are offered back to back at full input rate with no back-pressure.
Measured, in clocks:
- throughput: frames per clock between the first and the last output frame's end
  (steady state), and the input beats accepted per clock;
- latency: from a frame's first input beat to its first output beat (min/mean/max).
Results go to the JSON file named by MATCHA_BENCH_OUT.
"""

import json
import os
import random

import cocotb
from cocotb.triggers import ClockCycles
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from tb.common import cocotb_util, packets
from tb.common.axis import FrameProbe, in_tuser_bytes, wait_for
from tb.model import parse

SIZES = [int(s) for s in os.environ.get("MATCHA_BENCH_SIZES", "64,128,512,1518,9000")
         .split(",")]


def frames_for(size):
    """Enough frames to reach steady state, few enough to keep the bench short."""
    return max(8, min(300, 40000 // size))


@cocotb.test()
async def bench_packet_path(dut):
    rng = random.Random(1)
    lay = cocotb_util.layout()
    lanes = lay.data_width // 8
    cocotb_util.quiet_cocotbext(dut)
    src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
    sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
    await cocotb_util.start(dut)
    pin = FrameProbe(dut, "s_axis")
    pout = FrameProbe(dut, "m_axis")
    results = []
    for size in SIZES:
        n = frames_for(size)
        frames = []
        while len(frames) < n:
            f = packets.frame_of(rng, ["eth", "ipv4", "udp"], 0, min_len=size,
                                 ipv4_options=0)
            f = f[:size]
            if parse(f, header_bytes=lay.header_bytes)["meta.parseError"] == 0:
                frames.append(f)
        await ClockCycles(dut.clk, 20)
        pin.reset()
        pout.reset()
        for f in frames:
            src.send_nowait(AxiStreamFrame(f, tuser=in_tuser_bytes(len(f), lanes, 1)))
        await wait_for(lambda: len(pout.ends) >= n, dut.clk, 200 + 20 * n * (size // lanes + 4),
                       f"{n} frames of {size} bytes")
        got = [await sink.recv() for _ in range(n)]
        assert all(bytes(g.tdata) == f for g, f in zip(got, frames)), "output differs"
        beats_per_frame = -(-size // lanes)
        span = pout.ends[-1] - pout.ends[0]
        fpc = (n - 1) / span if span else float("nan")
        in_span = pin.ends[-1] - pin.starts[0] + 1
        lat = [o - i for i, o in zip(pin.starts, pout.starts)]
        res = {
            "config": lay.config, "size": size, "frames": n,
            "frames_per_clock": fpc,
            "ideal_frames_per_clock": 1 / beats_per_frame,
            "bits_per_clock": fpc * size * 8,
            "bus_efficiency": fpc * beats_per_frame,
            "input_beats_per_clock": pin.beats / in_span,
            "latency_first": lat[0], "latency_min": min(lat), "latency_max": max(lat),
            "latency_mean": sum(lat) / len(lat),
        }
        dut._log.info("%s", res)
        results.append(res)
    with open(os.environ["MATCHA_BENCH_OUT"], "w") as f:
        json.dump(results, f, indent=1)
