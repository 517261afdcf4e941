# SPDX-License-Identifier: Apache-2.0
"""cocotb bench of matcha_overlay (docs/overlay.md): frames per clock, sessions learned
per clock and latency in clocks of the whole overlay pipeline.

The tables start from tb/overlay's DASH configuration (overlay_setup: VIP, direction,
ENIs, the TX VM's routing group with 192.168.1.0/24 to VNET_RX, CA-to-PA mapping, VNET,
verdict, colour and encap entries), loaded through the C driver, plus mappings of the
sixteen destinations 192.168.1.1-16, so that every flow the bench sends is known. Every
frame is a TX VM's TCP frame to one of them (source 192.168.0.1, destination port 80,
source port 10000 + flow number) in the VXLAN of its host, outbound: decapsulated, its
ACL, session, route, policer, mapping and VNET looked up, and encapsulated again.

Frames are offered back to back at full input rate (the AXI4-Stream source never idles
while frames are queued) with no output back-pressure. Every frame's output is checked
against the program model in the order sent (PipelineTb.check), and every run must pass
every frame (no drop, no punt) unless it says otherwise. Measured per run, in clocks:
frames per clock between the ends of the first and the last output frame, the input's
beats per clock and stalls (clocks with s_axis_tvalid and not s_axis_tready), latency from
a frame's first input beat to its first output beat.

Four tests, each writing a JSON file into the directory MATCHA_BENCH_OUT names:
- bench_features: 128-byte inner frames with features added cumulatively, then 64, 256,
  512 and 1518-byte inner frames with all of them;
- bench_learning: every frame a TCP SYN of a new flow, the session table's statistics read
  through the driver before and after;
- bench_latency: latency with the tables nearly empty, filled to hundreds of entries, and
  with 1/64 and 1/2 of the session table's flows established, frames offered at the rate
  the pipeline sustains;
- bench_rewrite: frames per clock of frames the deparser leaves in place and of frames only
  decapsulated, beside the overlay path's.
"""

import json
import os
import time
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from tb.common import driver as drv
from tb.common.axis import FrameProbe
from tb.overlay.overlay_tb import (
    ENI_TX, FAKE_MAC, GROUP_TX, RX_MAC, TX_CA, TX_HOST_VNI, TX_MAC, TX_PA, VNET_RX,
    acl_rule, add_direct, mac_int, overlay_setup, vm_frame, vxlan,
)
from tb.pipeline.traffic import ip_int

# The outer headers of a frame from a host: Ethernet 14, IPv4 20, UDP 8, VXLAN 8 bytes.
OUTER_BYTES = 50
# An inner TCP frame without its payload: Ethernet 14, IPv4 20, TCP 20 bytes.
INNER_HEADERS = 54
DSTS = [f"192.168.1.{k}" for k in range(1, 17)]
FIRST_SPORT = 10000
CLOCK_HZ = 250_000_000
# The policer: two-rate, 200 Gb/s committed and peak (more than the 512-bit bus carries at
# 250 MHz, 128 Gb/s) and bursts of 10^9 bytes, more than any run sends, so that every
# frame stays green (the model, which cannot know a frame's tick, meters without refill).
POLICER = dict(flags=drv.METER_TWO_RATE, cir=25_000_000_000, cburst=1_000_000_000,
               pir=25_000_000_000, pburst=1_000_000_000)
ACL_RULES = 200
SESSIONS = "sessions"


def flow_frame(flow, inner_bytes, flags):
    """Flow `flow`'s TCP frame of `inner_bytes` (flags "S" or "A") in its host's VXLAN: its
    destination DSTS[flow % 16], its source port FIRST_SPORT + flow // 16, so that the
    session table's 65,536 flows fit the port numbers."""
    inner = vm_frame(TX_MAC, FAKE_MAC, TX_CA, DSTS[flow % len(DSTS)], proto="tcp",
                     sport=FIRST_SPORT + flow // len(DSTS), dport=80, flags=flags,
                     payload=inner_bytes - INNER_HEADERS)
    frame = vxlan(inner, TX_HOST_VNI, TX_PA)
    assert len(frame) == inner_bytes + OUTER_BYTES, len(frame)
    return frame


def frames_for(inner_bytes):
    """Enough frames for a steady state of a few thousand clocks."""
    beats = -(-(inner_bytes + OUTER_BYTES) // 64)
    return max(200, min(1200, 4000 // beats))


class Bench:
    def __init__(self, tb):
        self.tb = tb
        self.dut = tb.dut
        self.lanes = tb.lanes
        self.pin = FrameProbe(tb.dut, "s_axis")
        self.pout = FrameProbe(tb.dut, "m_axis")
        self.session_index = tb.ctl.number[SESSIONS]
        self.last_passed = []

    async def run(self, label, frames, expect_pass=True, period=None):
        """Sends `frames` back to back (or, with `period`, a frame every `period` clocks,
        its beats back to back), checks every output against the model and returns the
        measurements."""
        tb = self.tb
        tb.gaps()
        beats = -(-len(frames[0]) // self.lanes)
        await ClockCycles(self.dut.clk, 10)
        self.pin.reset()
        self.pout.reset()
        t0 = time.time()
        for i, f in enumerate(frames):
            await tb.send(f"{label} #{i}", f)
            if period:
                await ClockCycles(self.dut.clk, period)
        results = await tb.check()
        n = len(frames)
        # Per frame: it passed (left on m_axis, not punted).
        self.last_passed = [kind == "out" and not got.tuser["punt"]
                            for _, got, kind, _ in results]
        passed = sum(1 for _, got, kind, _ in results if kind == "out" and not got.tuser["punt"])
        punted = sum(1 for _, got, kind, _ in results if kind == "out" and got.tuser["punt"])
        dropped = sum(1 for _, _, kind, _ in results if kind == "drop")
        if expect_pass:
            assert passed == n, f"{label}: {passed} of {n} frames passed ({punted} punted, " \
                                f"{dropped} dropped)"
        pin, pout = self.pin, self.pout
        in_len = len(frames[0])
        out_lens = sorted({len(got.data) for _, got, kind, _ in results if kind == "out"})
        span = pout.ends[-1] - pout.ends[0]
        fpc = (len(pout.ends) - 1) / span if span else float("nan")
        in_span = pin.ends[-1] - pin.starts[0] + 1
        out_span = pout.ends[-1] - pout.starts[0] + 1
        r = dict(label=label, frames=n, inner_bytes=in_len - OUTER_BYTES, in_bytes=in_len,
                 out_bytes=out_lens, passed=passed, punted=punted, dropped=dropped,
                 checked=len(results), frames_per_clock=fpc, ideal_frames_per_clock=1 / beats,
                 beats_per_frame=beats, bus_efficiency=fpc * beats,
                 input_frames_per_clock=n / in_span, input_clocks=in_span,
                 output_clocks=out_span,
                 input_beats_per_clock=pin.beats / in_span, input_stalls=pin.stalls,
                 output_stalls=pout.stalls, period=period,
                 wall_s=round(time.time() - t0, 1))
        if dropped == 0 and len(pout.starts) == n:
            lat = [o - i for i, o in zip(pin.starts, pout.starts)]
            r.update(latency_min=min(lat), latency_max=max(lat),
                     latency_mean=sum(lat) / len(lat), latency_first=lat[0])
        self.dut._log.info("%s", r)
        return r

    async def stats(self):
        """The session table's statistics, read through the driver on the live bus."""
        return await self.tb.live(self.tb.ctl.dev.session_stats, self.session_index)

    def model_sessions(self):
        return self.tb.model.sessions[SESSIONS].table

    async def check_stats(self):
        """The driver's statistics against the model's; returns them."""
        s = await self.stats()
        m = self.model_sessions()
        assert (s["learned"], s["insert_failed"], s["occupancy"]) == \
            (m.learned, m.insert_failed, m.occupancy), f"session stats {s}, model " \
            f"learned {m.learned}, insert_failed {m.insert_failed}, occupancy {m.occupancy}"
        return s


async def bench_setup(dut, name):
    """overlay_setup and mappings of every destination the flows use."""
    tb = await overlay_setup(dut, name)
    tb.ctl.dev.set_clock_hz(CLOCK_HZ)
    m = tb.model["mapping"]
    for k, dst in enumerate(DSTS):
        if dst == "192.168.1.1":    # overlay_setup maps RX_CA
            continue
        assert await tb.add("mapping", m.key(dstVnet=VNET_RX, dst=ip_int(dst)),
                            action="set_mapping",
                            data=m.data("set_mapping", underlay_ip=ip_int(f"10.10.2.{20 + k}"),
                                        overlay_dmac=mac_int(RX_MAC) + k))
    return tb, Bench(tb)


async def load_batch(tb, updates):
    """Performs many table changes as one: every update's driver call recorded in turn (a
    refusal for lack of room or a duplicate skips that update), the writes of all of them
    performed on the DUT, then the model changed. Returns the number made."""
    writes, made = [], []
    for u in updates:
        try:
            tb.ctl.record(u)
        except drv.MatchaError as e:
            if e.code in (drv.ENOSPC, drv.EEXIST):
                continue
            raise
        writes += u.writes
        made.append(u)
    tb.op_starts.append(tb.cycles.cycle)
    await tb.replay(writes)
    for u in made:
        u.commit()
    tb.states.append(tb.model.copy())
    return len(made)


def acl_filler(tb, n, first_priority):
    """`n` ACL rules no bench flow matches, at priorities from `first_priority` down: the TX
    ENI's outbound rules to destinations 10.200.0.0 + k (the flows go to 192.168.1.0/24),
    any port, half of them permits and half denies. The ports are range fields (value: lo,
    mask: hi); a whole-field range adds no boundary, so the rules take none of the fields'
    64 boundary slots, which rules of distinct ports would exhaust."""
    acl = tb.model["acl"]
    mask = acl.key(outbound=1, eni=0x3FF, src=0xFFFFFF00, dst=0xFFFFFFFF, protocol=0xFF,
                   srcPort=0xFFFF, dstPort=0xFFFF)
    out = []
    for k in range(n):
        value = acl.key(outbound=1, eni=ENI_TX, src=ip_int("192.168.0.0"),
                        dst=ip_int("10.200.0.0") + k, protocol=6, srcPort=0, dstPort=0)
        out.append(tb.ctl.add("acl", value, mask, first_priority - k,
                              action="permit" if k % 2 else "deny"))
    return out


async def acl_with_one_match(tb):
    """The ACL: ACL_RULES rules, the only one the flows match (TCP from 192.168.0.0/24 to
    192.168.1.0/24 port 80, permit) the last, at the lowest priority; a miss denies."""
    await tb.change(tb.ctl.clear("acl"))
    await tb.set_default("acl", "deny")
    assert await load_batch(tb, acl_filler(tb, ACL_RULES - 1, 1000)) == ACL_RULES - 1
    await acl_rule(tb, 1, ENI_TX, "192.168.0.0", "192.168.1.0", 6, 80, "permit", 10)
    assert len(tb.model["acl"].entries()) == ACL_RULES


async def police_eni(tb):
    """The TX ENI's policer: its own meter, set to POLICER."""
    await add_direct(tb, "policer", ENI_TX, "police", meter=ENI_TX)
    await tb.change(tb.ctl.meter_set("policers", ENI_TX, **POLICER))


def write(name, data):
    out = Path(os.environ["MATCHA_BENCH_OUT"]) / f"{name}.json"
    out.write_text(json.dumps(data, indent=1))


# ------------------------------------------------------------------------- the tests


@cocotb.test()
async def bench_features(dut):
    """128-byte inner frames, features added cumulatively (the VPP study's steps), then
    the other sizes with all features on."""
    tb, b = await bench_setup(dut, "bench_features")
    flows = 64
    n = frames_for(128)

    def acks(size, count):
        return [flow_frame(i % flows, size, "A") for i in range(count)]

    rows = []
    # Forwarding only: the ACL permits everything (no rule, a miss permits), no policer,
    # every destination routed and mapped. The frames are TCP ACKs of no session: the
    # session stage looks each up and misses, and learns nothing (only a SYN learns).
    await tb.change(tb.ctl.clear("acl"))
    await tb.set_default("acl", "permit")
    rows.append(dict(step="forwarding only", **await b.run("forwarding", acks(128, n))))
    # + ACL: 200 rules, one of which matches.
    await acl_with_one_match(tb)
    rows.append(dict(step="+ ACL", **await b.run("acl", acks(128, n))))
    # + policer on the ENI.
    await police_eni(tb)
    rows.append(dict(step="+ policer", **await b.run("policer", acks(128, n))))
    # + sessions: the flows' SYNs learn their sessions; then every frame is of one.
    learn = await b.run("syn", [flow_frame(i, 128, "S") for i in range(flows)])
    stats = await b.check_stats()
    assert stats["learned"] == flows and stats["insert_failed"] == 0, stats
    rows.append(dict(step="+ sessions", sessions=stats["occupancy"],
                     **await b.run("sessions", acks(128, n))))
    assert b.model_sessions().hits >= n
    sizes = []
    for size in (64, 128, 256, 512, 1518):
        if size == 128:
            sizes.append(dict(rows[-1]))
            continue
        sizes.append(await b.run(f"all {size}", acks(size, frames_for(size))))
    stats = await b.check_stats()
    write("features", dict(steps=rows, sizes=sizes, flows=flows, learn=learn,
                           session_stats=stats, acl_rules=ACL_RULES, policer=POLICER,
                           clock_hz=CLOCK_HZ))


@cocotb.test()
async def bench_learning(dut):
    """100 % new flows: every frame a TCP SYN of a new 5-tuple that the ACL permits, with
    all features on; sessions learned per clock from the session table's statistics."""
    tb, b = await bench_setup(dut, "bench_learning")
    await acl_with_one_match(tb)
    await police_eni(tb)
    runs = []
    # Two runs of 1000 new flows at 64-byte inner frames: into the empty table, then into
    # the table holding the first 1000 (where the first keys find all their ways taken).
    for first in (0, 1000):
        flows = 1000
        before = await b.stats()
        r = await b.run(f"new flows {first}",
                        [flow_frame(first + i, 64, "S") for i in range(flows)],
                        expect_pass=False)
        after = await b.check_stats()
        learned = after["learned"] - before["learned"]
        failed = after["insert_failed"] - before["insert_failed"]
        r.update(flows=flows, occupancy_before=before["occupancy"], learned=learned,
                 insert_failed=failed, occupancy=after["occupancy"],
                 learned_per_clock=learned / r["output_clocks"],
                 ideal_learned_per_clock=r["ideal_frames_per_clock"])
        # A learned SYN passes; one that finds no free way is punted (docs/overlay.md).
        assert r["passed"] == learned and r["punted"] == failed and r["dropped"] == 0, r
        runs.append(r)
    write("learning", dict(runs=runs, acl_rules=ACL_RULES, clock_hz=CLOCK_HZ))


@cocotb.test()
async def bench_latency(dut):
    """Latency with the tables nearly empty, filled to hundreds of entries, and with few
    and many established sessions: 1/64 and 7/8 of the session table (1,024 and 57,344 at
    the Corundum scale's 65,536; learning in the data path picks a free way of four and
    moves nothing, so as the table fills more new flows find no way free and are offered
    more, about 66,000 for 57,344). The frames are offered one every `period` clocks, the
    rate the pipeline sustains (bench_features), so that none waits in the input buffer
    behind another."""
    tb, b = await bench_setup(dut, "bench_latency")
    rng = tb.rng
    m = tb.model
    size = 128
    n = 400
    flows = 16
    period = -(-(size + OUTER_BYTES) // 64) + 1

    def acks(flow_ids, count):
        return [flow_frame(flow_ids[i % len(flow_ids)], size, "A") for i in range(count)]

    def fill():
        return {t: len(m[t].entries()) for t in ("vip", "direction", "eni_out", "eni_in",
                                                 "inbound_routing", "pa_validation", "acl",
                                                 "route", "mapping")}

    runs = []
    runs.append(dict(case="nearly empty", tables=fill(), sessions=0,
                     **await b.run("empty", acks(range(flows), n), period=period)))
    # Fill: ACL rules in front of the one that matches, routes of the TX routing group
    # (10.k.0.0/16, none covering the flows' destinations), mappings, ENI MACs and PAs.
    t0 = time.time()
    await load_batch(tb, acl_filler(tb, 250, 1000))
    route = m["route"]
    group_bits = route.key_parts[0][1]
    await load_batch(tb, [tb.ctl.add("route", route.key(routingGroup=GROUP_TX,
                                                        dst=ip_int(f"10.{k}.0.0")),
                                     group_bits + 16, action="route_vnet",
                                     data=route.data("route_vnet", dst_vnet=3 + k % 100))
                          for k in range(250)])
    mapping = m["mapping"]
    await load_batch(tb, [tb.ctl.add("mapping", mapping.key(dstVnet=rng.randrange(3, 1024),
                                                            dst=rng.getrandbits(32)),
                                     action="set_mapping",
                                     data=mapping.data("set_mapping",
                                                       underlay_ip=rng.getrandbits(32),
                                                       overlay_dmac=rng.getrandbits(48)))
                          for _ in range(850)])
    for table in ("eni_out", "eni_in"):
        t = m[table]
        await load_batch(tb, [tb.ctl.add(table, rng.getrandbits(48),
                                         action="set_eni",
                                         data=t.data("set_eni", eni=rng.randrange(10, 1024)))
                              for _ in range(400)])
    pa = m["pa_validation"]
    await load_batch(tb, [tb.ctl.add("pa_validation", pa.key(srcVnet=rng.randrange(3, 1024),
                                                             src=rng.getrandbits(32)),
                                     action="permit") for _ in range(400)])
    load_s = time.time() - t0
    filled = fill()
    runs.append(dict(case="tables filled", tables=filled, sessions=0,
                     **await b.run("filled", acks(range(flows), n), period=period)))
    # Established sessions: SYNs learn them (a SYN that finds no free way is punted and
    # its flow is not established); then frames of established flows only.
    established = []
    offered = 0
    learn_runs = []

    async def learn(target, batch):
        nonlocal offered
        while len(established) < target:
            want = min(batch, target - len(established))
            ids = list(range(offered, offered + want))
            r = await b.run(f"learn {offered}", [flow_frame(i, 64, "S") for i in ids],
                            expect_pass=False)
            learn_runs.append(r)
            established.extend(i for i, ok in zip(ids, b.last_passed) if ok)
            offered += want

    table_size = b.model_sessions().size
    few, many = table_size // 64, table_size * 7 // 8
    await learn(few, 1000)
    stats = await b.check_stats()
    runs.append(dict(case=f"{few} established flows", tables=filled, sessions=stats["occupancy"],
                     offered=offered,
                     **await b.run(f"{few} flows", acks(established[:few], n), period=period)))
    await learn(many, 4000)
    stats = await b.check_stats()
    runs.append(dict(case=f"{many} established flows", tables=filled,
                     sessions=stats["occupancy"], offered=offered,
                     insert_failed=stats["insert_failed"],
                     **await b.run(f"{many} flows", acks(established[:many], many),
                                   period=period)))
    write("latency", dict(runs=runs, learn=learn_runs, load_s=round(load_s, 1),
                          session_stats=stats,
                          program_latency=tb.lay.raw["program"]["latency"]))


@cocotb.test()
async def bench_rewrite(dut):
    """Where the clocks go: frames per clock of frames the deparser passes unchanged
    (not overlay traffic: frame_class punts them to the host as they arrived), of frames
    only decapsulated (a route_direct route: the outer headers popped, none pushed) whose
    output is one beat shorter than the input and of the same length in beats, next to
    the overlay path (bench_features: popped and pushed)."""
    tb, b = await bench_setup(dut, "bench_rewrite")
    runs = []
    plain = bytes(Ether(dst="02:00:00:00:00:01", src=TX_MAC) /
                  IP(src=TX_CA, dst="192.168.1.1") / UDP(sport=1000, dport=2000) /
                  Raw(bytes(178 - 42)))
    r = await b.run("not overlay", [plain] * frames_for(128), expect_pass=False)
    assert r["punted"] == r["frames"], r
    runs.append(dict(case="not overlay traffic, punted unchanged", **r))
    route = tb.model["route"]
    key = (route.key(routingGroup=GROUP_TX, dst=ip_int("192.168.1.0")),
           route.key_parts[0][1] + 24)
    await tb.delete("route", *key)
    assert await tb.add("route", *key, action="route_direct")
    for inner, what in ((128, "decapsulated only (route_direct), one beat shorter"),
                        (142, "decapsulated only (route_direct), as many beats")):
        r = await b.run(f"direct {inner}",
                        [flow_frame(i % len(DSTS), inner, "A") for i in range(frames_for(128))])
        runs.append(dict(case=what, **r))
    write("rewrite", dict(runs=runs))
