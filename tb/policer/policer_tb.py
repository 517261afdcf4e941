# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_policer: the packet path with the policer program (docs/pipeline.md,
"The policer program"): `police`, exact on the source MAC, whose action executes meter
`meter` of the array `policers` (the colour goes into meta.color), then `by_colour`, exact on
meta.color: pass, mark (DSCP) or drop (reason 0x25).

Tables and meters are set through the C driver (tb/pipeline/control.py, recorded and
replayed on the DUT); the oracle of every frame is the program model (tb/model/program.py
with the RFC meters of tb/model/meter.py) between the packet path model's parse and deparse.
The meters here have rates of 0: their buckets only drain, so a frame's colour depends on
the bytes before it on its meter and not on when it reaches the meter, which the model
cannot know; tb/meter tests the refill clock for clock.
"""

import cocotb
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether

from tb.common import driver as drv
from tb.model.meter import GREEN, RED, YELLOW
from tb.pipeline.pipeline_tb import setup
from tb.pipeline.traffic import build_ipv4

POLICER_DROP = 0x25
MARK_DSCP = 0x0A
CLOCK_HZ = 250_000_000


def frame(tb, src_mac, length):
    """A UDP/IPv4 frame of `length` bytes from `src_mac`, DSCP 0 (so a mark shows)."""
    pkt = Ether(build_ipv4(tb.rng, eth_dst=0x020000000001, eth_src=src_mac, src=0x0A000001,
                           dst=0x0A000002, proto=17, ttl=64, options=0, length=length))
    pkt[IP].tos = 0
    del pkt[IP].chksum
    return bytes(pkt)


async def police_setup(dut, name, sources):
    """The DUT with `sources` (MAC -> meter index, or None: no entry) in `police`, and
    by_colour: yellow marks with MARK_DSCP, red drops, green (a miss) passes."""
    tb = await setup(dut, name)
    tb.ctl.dev.set_clock_hz(CLOCK_HZ)
    police = tb.model["police"]
    for mac, meter in sources.items():
        if meter is not None:
            assert await tb.add("police", mac, action="police",
                                data=police.data("police", meter=meter))
    by_colour = tb.model["by_colour"]
    assert await tb.add("by_colour", YELLOW, action="mark",
                        data=by_colour.data("mark", dscp=MARK_DSCP))
    assert await tb.add("by_colour", RED, action="drop")
    return tb


async def meter_set(tb, index, **cfg):
    await tb.change(tb.ctl.meter_set("policers", index, **cfg))


def outcome(got):
    """green, yellow or red, as a frame (sent with DSCP 0) came out: passed, marked with
    MARK_DSCP, dropped with the policer's reason."""
    s, emitted, kind, _ = got
    if kind == "drop":
        assert emitted.reason == POLICER_DROP, f"{s.name}: dropped with {emitted.reason:#x}"
        return RED
    dscp = Ether(emitted.data)[IP].tos >> 2
    assert dscp in (0, MARK_DSCP), f"{s.name}: DSCP {dscp}"
    return YELLOW if dscp == MARK_DSCP else GREEN


@cocotb.test()
async def test_police_by_source(dut):
    """Two meters of the array, one two-rate (CBS 3000, PBS 6000 bytes), one single-rate
    colour-blind (CBS 2000, EBS 1500), two sources sharing the first, a source without an
    entry (never metered), frames of 300 to 900 bytes from the four in turn, with random
    gaps on both sides: every frame's output is the model's; each meter's first frame
    passes, and its frames are passed, marked and dropped (15 and 30 frames are more than
    the buckets hold); the unmetered source's frames all pass, though meter 0 (the one a
    miss's action data, 0, would name) colours every frame red."""
    sources = {0x02000000000A: 5, 0x02000000000B: 9, 0x02000000000C: 5, 0x02000000000D: None}
    tb = await police_setup(dut, "police_by_source", sources)
    await meter_set(tb, 5, flags=drv.METER_TWO_RATE, cir=0, cburst=3000, pir=0, pburst=6000)
    await meter_set(tb, 9, cir=0, cburst=2000, pburst=1500)
    await meter_set(tb, 0, flags=drv.METER_TWO_RATE, cir=0, cburst=1, pir=0, pburst=1)
    tb.random_gaps()
    for i in range(60):
        src = list(sources)[i % 4]
        f = frame(tb, src, tb.rng.randrange(300, 900))
        await tb.send(f"{i} from {src:#x}, {len(f)} bytes", f)
    by_meter = {}
    for got in await tb.check():
        src = int.from_bytes(got[0].frame[6:12], "big")
        by_meter.setdefault(sources[src], []).append(outcome(got))
    assert set(by_meter[None]) == {GREEN}, "an unmetered frame was coloured"
    for meter in (5, 9):
        colours = by_meter[meter]
        assert colours[0] == GREEN and set(colours) == {GREEN, YELLOW, RED}, \
            f"meter {meter}: {colours}"


@cocotb.test()
async def test_meter_set_again_refills(dut):
    """A meter set again through the driver between bursts starts with full buckets: the
    next frames are green again; unconfigured (driver NULL), every frame is green."""
    src = 0x020000000042
    tb = await police_setup(dut, "meter_set_again", {src: 63})
    for rnd in range(3):
        if rnd < 2:
            await meter_set(tb, 63, flags=drv.METER_TWO_RATE | drv.METER_COLOR_AWARE, cir=0,
                            cburst=1000, pir=0, pburst=2500)
        else:
            await tb.change(tb.ctl.meter_set_off("policers", 63))
        for i in range(12):
            await tb.send(f"round {rnd} frame {i}", frame(tb, src, 500))
        colours = [outcome(got) for got in await tb.check()]
        want = [GREEN] * 12 if rnd == 2 else [GREEN] * 2 + [YELLOW] * 3 + [RED] * 7
        assert colours == want, f"round {rnd}: {colours}"
