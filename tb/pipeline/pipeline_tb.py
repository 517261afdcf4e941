# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_l2l3: the packet path with the built-in L2/L3 program (l2_fwd
exact, ipv4_lpm LPM, acl ternary) and its AXI4-Lite control window.

Tables are loaded by the C driver (libmatcha through tb/common/driver.py): the driver runs
against the recording bus and its register writes are then performed on the DUT
(`driver.replay`, each command's STATUS checked), so a change reaches the hardware exactly
as the driver made it. Calls that read the hardware (per-entry counters, the default
action's readback, changes that move counted entries) run the driver on a live bus whose
accesses block until the simulator has done them (`LiveBus`, cocotb's bridge/resume).

The oracle of every frame is the program model (tb/model/program.py) between the packet
path model's parse and deparse; the program it runs is the generator's description from
layout.json, which tb/pipeline/test_pipeline.py checks against docs/pipeline.md. Outputs
(m_axis frames with tuser, drop pulses with reason) are compared in order
(tb/pipeline/outputs.py); while tables change under traffic, a frame may show any table
state from the last one complete when it was queued to the last one begun when it came
out.
"""

import cocotb
from cocotb.task import bridge
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import (
    AxiLiteBus, AxiLiteMaster, AxiResp, AxiStreamBus, AxiStreamFrame, AxiStreamSink,
    AxiStreamSource,
)
from scapy.layers.inet import IP, UDP, IPOption_NOP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
from scapy.packet import Raw

from tb.common import cocotb_util, packets
from tb.common import contract
from tb.common import driver as drv
from tb.common.axil import AxiLiteRegisters, LiveBus
from tb.common.late_memory import LateMemory
from tb.common.scapy_view import assert_model_matches_scapy
from tb.common.sim import soak, soak_on
from tb.common.axis import check_beats, decode_out_tuser, in_tuser_bytes, wait_for
from tb.model import CHECK_REASONS, NO_ERROR, deparse, internet_checksum, parse
from tb.model.program import Program
from tb.pipeline import traffic
from tb.pipeline.control import (
    Control, descriptor_of, descriptors_for, entry_args, range_pairs,
)
from tb.pipeline.l2l3 import (
    ACL_DENY, ACL_TO_HOST, L2_DROP, L3_DROP, NO_ROUTE, acl_rule,
)
from tb.pipeline.outputs import Emitted, Sent, match
from tb.pipeline.traffic import ip_int, mac_str, routed_by_scapy

HITS, MISSES = contract.WIN_HITS, contract.WIN_MISSES


def memory_regions(prog):
    """{port: (table name, base address, bytes)} of the tables in memory of layout.json's `program`
    (their "memory" members): `bucketBytes` a bucket of an exact table (geometry entries)
    or a session table (`ways` sessions) on its one port; a beat a node of each of an LPM
    table's levels in memory, each level on a port of its own, its nodes after the ones of
    the levels above it."""
    sessions = prog.get("sessions", [])
    regions = {}
    for t in prog["tables"] + sessions:
        if "memory" not in t:
            continue
        m = t["memory"]
        if t.get("kind") == "lpm":
            beats = t["lpm"]["nodes"][-t["lpm"]["memoryLevels"]:]
        else:
            beats = [t["size"] // (t["ways"] if t in sessions else descriptor_of(t).geometry)]
        base = m["baseAddress"]
        for port, n in zip(m["ports"], beats, strict=True):
            regions[port] = t["name"], base, n * m["bucketBytes"]
            base += n * m["bucketBytes"]
    return regions


class PipelineTb(AxiLiteRegisters):
    def __init__(self, dut, rng):
        self.dut = dut
        self.rng = rng
        self.lay = cocotb_util.layout()
        self.lanes = self.lay.data_width // 8
        self.pw = self.lay.port_width
        self.model = Program(self.lay.raw, strict=False)
        for p in self.model.problems:
            dut._log.warning("layout.json program: %s", p)
        cocotb_util.quiet_cocotbext(dut, ("s_axis", "m_axis", "s_axil"))
        self.src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        self.sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        self.cycles = cocotb_util.CycleCounter(dut)
        # A memory-backed table's memory, {table: [the memory of each of its ports]}: a port answers reads 100 clocks late
        # (LateMemory.latency; the table is built for up to its memoryLatency).
        self.memories = {}
        for port, (table, base, size) in memory_regions(self.lay.raw["program"]).items():
            cocotb_util.quiet_cocotbext(dut, (port,))
            self.memories.setdefault(table, []).append(LateMemory(dut, port, base + size, rng, self.cycles))
        self.sent, self.outs, self.drops = [], [], []
        self.op_starts = []   # clock each table change began (change i -> state i + 1)
        self.states = []      # model copies: states[i] = the tables after change i
        self.exact_counts = True
        self.ctl = None

    # ------------------------------------------------------------------ setup, bus

    async def start(self):
        await cocotb_util.start(self.dut)
        cocotb.start_soon(self._collect_outputs())
        cocotb.start_soon(self._watch_drops())
        self.snapshot = await drv.read_info_block(self.read32)
        self.check_info_block()
        self.ctl = Control(self.snapshot, self.model)
        await self.replay(self.ctl.open_writes, skip_reads=True)
        self.states = [self.model.copy()]

    def check_info_block(self):
        s = self.snapshot
        assert s[contract.INFO_MAGIC] == contract.INFO_MAGIC_VALUE, f"MAGIC {s[contract.INFO_MAGIC]:#x}"
        assert s[contract.INFO_VERSION] >> 16 == 1, f"VERSION {s[contract.INFO_VERSION]:#x}"
        build_id = self.lay.raw.get("buildId")
        assert s[contract.INFO_BUILD_ID] == build_id, \
            f"BUILD_ID {s[contract.INFO_BUILD_ID]:#x}, layout.json buildId {build_id!r}"
        want = descriptors_for(self.lay.raw["program"])
        got = drv.descriptors(s)
        assert len(got) == len(want), f"{len(got)} descriptors, the program has {len(want)}"
        for index, d in want:
            assert got[index] == d, f"descriptor {index}: {got[index]}, want {d}"

    async def read64(self, addr):
        lo = await self.read32(addr)    # reading the low word latches the high word
        hi = await self.read32(addr + 4)
        return hi << 32 | lo

    async def replay(self, writes, skip_reads=False):
        return await drv.replay(writes, self.write32, self.read32, skip_reads=skip_reads)

    async def live(self, fn, *args):
        """Runs a driver call (a blocking function) on the live bus."""
        self.ctl.bus.live = LiveBus(self)
        try:
            return await bridge(fn)(*args)
        finally:
            self.ctl.bus.live = None

    # ------------------------------------------------------------- table changes

    async def change(self, update, live=False):
        """Performs a table change on the DUT (recorded and replayed, or live) and then on
        the model. A refusal by the driver raises MatchaError and changes nothing."""
        if live:
            self.op_starts.append(self.cycles.cycle)
            try:
                await self.live(update.call)
            except drv.MatchaError:
                self.states.append(self.model.copy())
                raise
        else:
            self.ctl.record(update)
            self.op_starts.append(self.cycles.cycle)
            await self.replay(update.writes)
        update.commit()
        self.states.append(self.model.copy())

    async def add(self, table, *entry, action, data=0, live=False, may_fail=False):
        """Adds an entry; with may_fail, a driver refusal for lack of room (or a duplicate)
        returns False instead of raising."""
        try:
            await self.change(self.ctl.add(table, *entry, action=action, data=data), live)
        except drv.MatchaError as e:
            if may_fail and e.code in (drv.ENOSPC, drv.EEXIST):
                return False
            raise
        return True

    async def delete(self, table, *entry, live=False):
        await self.change(self.ctl.delete(table, *entry), live)

    async def set_default(self, table, action, data=0, live=False):
        await self.change(self.ctl.set_default(table, action, data), live)

    async def load(self, table, items, live=False):
        """Adds [(entry, action, data)]; entries the driver has no room for are skipped.
        Returns the entries added."""
        added = []
        for entry, action, data in items:
            if await self.add(table, *entry, action=action, data=data, live=live,
                              may_fail=True):
                added.append(entry)
        return added

    # ------------------------------------------------------------------- traffic

    def gaps(self, in_busy=0.0, out_busy=0.0):
        self.src.set_pause_generator(cocotb_util.pause_pattern(self.rng, in_busy))
        self.sink.set_pause_generator(cocotb_util.pause_pattern(self.rng, out_busy))

    def random_gaps(self):
        self.gaps(self.rng.choice([0.0, 0.1, 0.3, 0.6]), self.rng.choice([0.0, 0.1, 0.3, 0.6]))

    def parse(self, frame, port=0, bad=False):
        return parse(frame, ingress_port=port, bad_frame=bad,
                     header_bytes=self.lay.header_bytes, runt_bytes=self.lay.runt_bytes,
                     max_frame=self.lay.max_frame)

    def expected(self, frame, port=0, bad=False):
        """The model's (out, tuser, drop reason) for a frame with the current tables."""
        return deparse(frame, self.model.answer(self.parse(frame, port, bad)))

    def answer(self, s, state):
        a = s.answers.get(state)
        if a is None:
            phv = self.parse(s.frame, s.port, s.bad)
            a = s.answers[state] = deparse(s.frame, self.states[state].answer(phv))
        return a

    async def send(self, name, frame, port=0, bad=False):
        """Queues a frame; the model counts it with the tables of now. With meters or a
        session table, a frame's answer depends on the frames before it, so it is taken
        now, for the tables of now."""
        s = Sent(name, bytes(frame), port, bad, len(self.states) - 1)
        after = self.model.apply(self.parse(frame, port, bad), count=True)
        if self.model.meters or self.model.sessions:
            s.answers[s.state] = deparse(s.frame, after)
        self.sent.append(s)
        await self.src.send(AxiStreamFrame(s.frame, tuser=in_tuser_bytes(
            len(frame), self.lanes, port, bad)))
        return s

    async def _collect_outputs(self):
        while True:
            fr = await self.sink.recv(compact=False)
            data, tu, problems = check_beats(fr, self.lanes)
            self.outs.append(Emitted(len(self.op_starts), data,
                                     None if tu is None else decode_out_tuser(tu, self.pw),
                                     problems=problems))

    async def _watch_drops(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            if int(dut.drop_valid.value):
                self.drops.append(Emitted(len(self.op_starts),
                                          reason=int(dut.drop_payload.value)))

    async def check(self, timeout=None, settle=60):
        """Waits for an output of every frame sent and matches them with the model's
        answers in order. Returns [(Sent, Emitted, kind, state)]."""
        n = len(self.sent)
        beats = sum(len(s.frame) for s in self.sent) // self.lanes
        timeout = timeout or 5000 + 6 * beats + 60 * n
        try:
            await wait_for(lambda: len(self.outs) + len(self.drops) >= n, self.dut.clk,
                           timeout, f"{n} outputs ({len(self.outs)} frames and "
                                    f"{len(self.drops)} drops so far)")
        except AssertionError:
            _, errors = match(self.sent, self.outs, self.drops, self.answer)
            for e in errors[:5]:
                self.dut._log.error("%s", e)
            raise
        await ClockCycles(self.dut.clk, settle)
        assignment, errors = match(self.sent, self.outs, self.drops, self.answer)
        for e in errors[:20]:
            self.dut._log.error("%s", e)
        assert not errors, f"{len(errors)} mismatches; first: {errors[0]}"
        result = []
        for s, (kind, idx, state) in zip(self.sent, assignment):
            result.append((s, (self.outs if kind == "out" else self.drops)[idx], kind, state))
        self.sent, self.outs, self.drops = [], [], []
        return result

    # ------------------------------------------------------------------ counters

    async def check_counters(self, entries=True):
        """Table hit and miss counts (read from the window directly and through the
        driver) and, with `entries`, every entry's packet and byte counts through the
        driver's by-key calls, against the model. Without exact_counts (tables changed
        under traffic) only hits + misses per table are compared."""
        errors = []
        for t in self.model.tables:
            base = (t.index + 1) * contract.INFO_WINDOW_BYTES
            hits, misses = await self.read64(base + HITS), await self.read64(base + MISSES)
            via_driver = await self.live(self.ctl.table_counters, t.name)
            if via_driver != (hits, misses):
                errors.append(f"{t.name}: the driver reads (hits, misses) {via_driver}, the "
                              f"window {hits, misses}")
            if self.exact_counts:
                if (hits, misses) != (t.hits, t.misses):
                    errors.append(f"{t.name}: (hits, misses) ({hits}, {misses}), model "
                                  f"({t.hits}, {t.misses})")
            elif hits + misses != t.hits + t.misses:
                errors.append(f"{t.name}: {hits} hits + {misses} misses, model "
                              f"{t.hits + t.misses} lookups")
            if not (entries and self.exact_counts and t.counters):
                continue
            for e in t.entries():
                got = await self.live(self.ctl.entry_counters, t.name, e)
                want = t.entry_counters(e)
                if got != want:
                    errors.append(f"{t.name} entry {_entry(e)}: (packets, bytes) {got}, "
                                  f"model {want}")
        for e in errors[:30]:
            self.dut._log.error("%s", e)
        assert not errors, f"{len(errors)} counter mismatches; first: {errors[0]}"

    async def index_counters(self, table, index):
        """(packets, bytes) of one index, read with the window's READ command directly."""
        t = self.model[table]
        base = (t.index + 1) * contract.INFO_WINDOW_BYTES
        if t.kind == "lpm":
            index |= t.geometry["levels"] << contract.LPM_LEVEL_SHIFT
        error = await self.window_command(base, contract.CMD_READ, index)
        assert error == 0, f"READ of {table} index {index}: STATUS error {error}"
        return await self.read64(base + contract.WIN_PACKETS), await self.read64(base + contract.WIN_BYTES)


def _entry(e):
    if isinstance(e, tuple):
        return "(" + ", ".join(f"{v:#x}" for v in e) + ")"
    return f"{e:#x}"


async def setup(dut, name):
    rng, _ = cocotb_util.test_rng(dut, name)
    tb = PipelineTb(dut, rng)
    await tb.start()
    return tb


# ------------------------------------------------------------------ frame helpers

MAC_R = 0x02AA00000001   # router MAC (routes' smac)


def route_data(tb, port, dmac, smac=MAC_R):
    return tb.model["ipv4_lpm"].data("route", port=port, dmac=dmac, smac=smac)


def ipv4(tb, dst, src="10.1.2.3", proto=17, sport=1234, dport=80, eth_dst=0x020000000001,
         ttl=64, vlan=False, options=0, length=None):
    return traffic.build_ipv4(tb.rng, eth_dst=eth_dst, src=ip_int(src), dst=ip_int(dst),
                              proto=proto, sport=sport, dport=dport, ttl=ttl, vlan=vlan,
                              options=options, length=length)


def ipv4_header_ok(out):
    pkt = Ether(out)
    off = len(out) - len(pkt[IP])
    ihl = (out[off] & 0xF) * 4
    return internet_checksum(out[off:off + ihl]) == 0


# ----------------------------------------------------------------------------- tests


@cocotb.test()
async def test_self_describing_block(dut):
    """MAGIC, VERSION, BUILD_ID = layout.json buildId, one descriptor per program table
    (kind with the counters and default bits, widths, size, base, geometry, latency); every
    default action reads back as the program's; counters start at 0; unmapped addresses
    answer SLVERR."""
    tb = await setup(dut, "self_describing_block")
    for t in tb.model.tables:
        got = await tb.live(tb.ctl.get_default, t.name)
        assert got == t.reset_default, f"{t.name}: default {got}, program {t.reset_default}"
    await tb.check_counters()
    n = len(tb.model.tables)
    for addr in ((n + 1) * contract.INFO_WINDOW_BYTES, (n + 1) * contract.INFO_WINDOW_BYTES + 0x100, 0xFF0000):
        r = await tb.axil.read(addr, 4)
        assert r.resp == AxiResp.SLVERR, f"read of 0x{addr:06x}: {r.resp!r}"
        w = await tb.axil.write(addr, bytes(4))
        assert w.resp == AxiResp.SLVERR, f"write of 0x{addr:06x}: {w.resp!r}"


@cocotb.test()
async def test_l2_forwarding(dut):
    """l2_fwd by destination MAC on frames the L3 tables skip: forward sets the egress
    port, drop drops with 0x20, no_op and a miss keep the ingress port; a deleted entry
    misses. IPv4 frames to the same MACs: no route punts with the L2 port."""
    tb = await setup(dut, "l2_forwarding")
    rng = tb.rng
    l2 = tb.model["l2_fwd"]
    macs = {0x020000000010 + i: ("forward", l2.data("forward", port=(3 * i + 1) % 16))
            for i in range(8)}
    macs[0x02000000DEAD] = ("drop", 0)
    macs[0x020000000B0B] = ("no_op", 0)
    for mac, (action, data) in macs.items():
        assert await tb.add("l2_fwd", mac, action=action, data=data)
    unknown = 0x0200000000FF
    tb.random_gaps()
    for rnd in range(3):
        for mac in list(macs) + [unknown, 0xFFFFFFFFFFFF]:
            port = rng.randrange(16)
            for maker in (lambda m: traffic.ipv6_frame(rng, m, rng.randrange(70, 300)),
                          lambda m: bytes(Ether(dst=mac_str(m), src=mac_str(MAC_R), type=0x0806)
                                          / bytes(rng.randrange(46, 200)))):
                frame = maker(mac)
                out, tuser, drop = tb.expected(frame, port)
                action, data = macs.get(mac, ("no_op", 0))
                if action == "drop":
                    assert drop == L2_DROP
                else:
                    assert out == frame and tuser == {
                        "punt": 0, "egressPort": data if action == "forward" else port,
                        "reason": 0}
                await tb.send(f"r{rnd} {mac:#x} from {port}", frame, port)
        frame = ipv4(tb, "192.0.2.1", eth_dst=0x020000000011)
        assert tb.expected(frame, 2)[1] == {"punt": 1, "egressPort": 4, "reason": NO_ROUTE}
        await tb.send(f"r{rnd} ipv4 no route", frame, 2)
        await tb.check()
        victim = list(macs)[rnd]
        await tb.delete("l2_fwd", victim)
        del macs[victim]
        tb.random_gaps()
    await tb.check_counters()


@cocotb.test()
async def test_ipv4_routing(dut):
    """Nested prefixes /0, /8, /16, /24, /32 (and a /16 drop): each destination takes its
    longest prefix; the routed frame is what scapy builds (new MACs, TTL - 1 mod 256,
    IPv4 checksum valid), also behind a VLAN tag (TTL 0 and 1 and options:
    test_forwarding_checks)."""
    tb = await setup(dut, "ipv4_routing")
    routes = [("0.0.0.0", 0, 5), ("10.0.0.0", 8, 1), ("10.1.0.0", 16, 2),
              ("10.1.2.0", 24, 3), ("10.1.2.3", 32, 4), ("10.66.0.0", 16, None)]
    nh = {}
    for pfx, ln, port in routes:
        if port is None:
            assert await tb.add("ipv4_lpm", ip_int(pfx), ln, action="drop")
        else:
            nh[port] = 0x02BB00000000 | port
            assert await tb.add("ipv4_lpm", ip_int(pfx), ln, action="route",
                                data=route_data(tb, port, nh[port]))
    cases = [("10.1.2.3", 4), ("10.1.2.4", 3), ("10.1.3.1", 2), ("10.2.0.1", 1),
             ("11.0.0.1", 5), ("10.1.2.255", 3), ("10.66.1.1", None), ("9.255.255.255", 5)]
    tb.random_gaps()
    sent = []
    for rnd in range(4):
        for dst, port in cases:
            for ttl in (64, 2, 255):
                frame = ipv4(tb, dst, ttl=ttl, vlan=rnd % 2 == 1, options=0,
                             proto=tb.rng.choice([6, 17, 1]))
                out, tuser, drop = tb.expected(frame, 7)
                if port is None:
                    assert drop == L3_DROP
                else:
                    assert tuser == {"punt": 0, "egressPort": port, "reason": 0}
                    assert out == routed_by_scapy(frame, nh[port], MAC_R)
                sent.append((await tb.send(f"{dst} ttl {ttl} r{rnd}", frame, 7), port))
    results = await tb.check()
    for s, got, kind, _ in results:
        if kind == "out":
            assert ipv4_header_ok(got.data), f"{s.name}: IPv4 checksum wrong"
            assert Ether(got.data)[IP].ttl == (Ether(s.frame)[IP].ttl - 1) % 256, s.name
    await tb.check_counters()


@cocotb.test()
async def test_qinq_routed_and_bridged(dut):
    """Frames with two VLAN tags, an 802.1ad S-tag then an 802.1Q tag and two 802.1Q tags:
    scapy's dissection finds both tags and the IP header behind them where the model does
    (hdr.vlan, hdr.vlan2). An IPv4 frame is routed as scapy routes it (new MACs, TTL - 1,
    checksum), its tags kept; an IPv6 frame, which the L3 tables skip, is bridged by its
    destination MAC, unchanged."""
    tb = await setup(dut, "qinq_routed_and_bridged")
    nh = 0x02BB00000003
    assert await tb.add("ipv4_lpm", ip_int("10.9.0.0"), 16, action="route",
                        data=route_data(tb, 3, nh))
    bridged_mac = 0x020000000042
    assert await tb.add("l2_fwd", bridged_mac, action="forward",
                        data=tb.model["l2_fwd"].data("forward", port=6))
    tags = {"802.1ad + 802.1Q": lambda: Dot1AD(prio=5, vlan=100) / Dot1Q(dei=1, vlan=7),
            "802.1Q + 802.1Q": lambda: Dot1Q(vlan=200) / Dot1Q(prio=3, vlan=4094)}
    tb.random_gaps()
    for rnd in range(3):
        for name, tag in tags.items():
            routed = bytes(Ether(dst=mac_str(0x020000000001), src=mac_str(0x020000000099))
                           / tag() / IP(src="10.1.2.3", dst="10.9.1.1", ttl=64 - rnd)
                           / UDP(sport=1, dport=2) / Raw(bytes(40)))
            bridged = bytes(Ether(dst=mac_str(bridged_mac), src=mac_str(0x020000000099))
                            / tag() / IPv6(src="2001:db8::1", dst="2001:db8::2")
                            / UDP(sport=3, dport=4) / Raw(bytes(40)))
            for frame in (routed, bridged):
                phv = tb.parse(frame)
                assert_model_matches_scapy(frame, phv, tb.lay.header_bytes)
                assert phv["hdr.vlan.valid"] == phv["hdr.vlan2.valid"] == 1, name
            out, tuser, _ = tb.expected(routed, 1)
            assert tuser == {"punt": 0, "egressPort": 3, "reason": 0}, name
            assert out == routed_by_scapy(routed, nh, MAC_R), name
            assert tb.expected(bridged, 1) == (bridged, {"punt": 0, "egressPort": 6,
                                                         "reason": 0}, None), name
            await tb.send(f"{name} routed r{rnd}", routed, 1)
            await tb.send(f"{name} bridged r{rnd}", bridged, 1)
    await tb.check()
    await tb.check_counters()


def frame_with_ip(ip, vlan=False, payload=40, pad_to=None):
    """Ethernet (+ 802.1Q) + `ip` (a scapy IP with UDP) + `payload` bytes, zero-padded to
    `pad_to` bytes if given; the IP header's fields as `ip` sets them (scapy fills only
    those left unset)."""
    eth = Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:99")
    frame = bytes((eth / Dot1Q(vlan=7) if vlan else eth) / ip / UDP(sport=5, dport=6) /
                  Raw(bytes(payload)))
    return frame + bytes(max(0, (pad_to or 0) - len(frame)))


def checksum_broken(frame, ip_offset=14):
    """`frame` with its IPv4 header checksum off by a flipped bit in each byte."""
    b = bytearray(frame)
    b[ip_offset + 10] ^= 0x01
    b[ip_offset + 11] ^= 0x01
    return bytes(b)


@cocotb.test()
async def test_forwarding_checks(dut):
    """RFC 1812 on routed frames (docs/pipeline.md, "Forwarding checks"): a bad IPv4 header
    checksum is dropped (IPV4_CHECKSUM), a total length past the frame's end or below the
    header's dropped (IP_LENGTH), options punted (IPV4_OPTIONS), TTL 0 and 1 punted as
    received (TTL_EXPIRED), TTL 2 routed with TTL 1; the first failing check decides.
    Frames no route covers are not routed and keep their no-route punt, IPv6 frames
    bridged by l2_fwd keep a hop limit of 0 and a bad payload length. Each case's fate is
    written here from the RFC and must also be the model's."""
    tb = await setup(dut, "forwarding_checks")
    assert await tb.add("ipv4_lpm", ip_int("10.0.0.0"), 8, action="route",
                        data=route_data(tb, 3, 0x02BB00000003))
    assert await tb.add("l2_fwd", 0x020000000001, action="forward",
                        data=tb.model["l2_fwd"].data("forward", port=9))
    routed = dict(src="192.0.2.1", dst="10.1.2.3")
    at_frame_end = len(frame_with_ip(IP(**routed))) - 14
    punt, drop = "punt", "drop"
    cases = [
        ("checksum wrong", checksum_broken(frame_with_ip(IP(**routed))), drop,
         CHECK_REASONS["IPV4_CHECKSUM"]),
        ("checksum wrong, TTL 1", checksum_broken(frame_with_ip(IP(**routed, ttl=1))), drop,
         CHECK_REASONS["IPV4_CHECKSUM"]),
        ("checksum wrong, no route",
         checksum_broken(frame_with_ip(IP(src="192.0.2.1", dst="11.0.0.1"))), punt, NO_ROUTE),
        ("TTL 0", frame_with_ip(IP(**routed, ttl=0)), punt, CHECK_REASONS["TTL_EXPIRED"]),
        ("TTL 1", frame_with_ip(IP(**routed, ttl=1)), punt, CHECK_REASONS["TTL_EXPIRED"]),
        ("TTL 1 behind 802.1Q", frame_with_ip(IP(**routed, ttl=1), vlan=True), punt,
         CHECK_REASONS["TTL_EXPIRED"]),
        ("TTL 0, no route", frame_with_ip(IP(src="192.0.2.1", dst="11.0.0.1", ttl=0)), punt,
         NO_ROUTE),
        ("TTL 2", frame_with_ip(IP(**routed, ttl=2)), "routed", 0),
        ("total length one past the frame", frame_with_ip(IP(**routed, len=at_frame_end + 1)),
         drop, CHECK_REASONS["IP_LENGTH"]),
        ("total length at the frame's end", frame_with_ip(IP(**routed, len=at_frame_end)),
         "routed", 0),
        ("total length short of the padded frame", frame_with_ip(IP(**routed), payload=2,
                                                                  pad_to=60), "routed", 0),
        ("total length below the header", frame_with_ip(IP(**routed, len=19)), drop,
         CHECK_REASONS["IP_LENGTH"]),
        ("options", frame_with_ip(IP(**routed, options=[IPOption_NOP()] * 4)), punt,
         CHECK_REASONS["IPV4_OPTIONS"]),
        ("options, TTL 1", frame_with_ip(IP(**routed, ttl=1, options=[IPOption_NOP()] * 4)),
         punt, CHECK_REASONS["IPV4_OPTIONS"]),
    ]
    bridged = bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:99") /
                    IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=0, plen=1000) /
                    UDP(sport=5, dport=6) / Raw(bytes(20)))
    cases.append(("bridged IPv6, hop limit 0, payload length past the frame", bridged,
                  "bridged", 0))
    tb.random_gaps()
    for name, frame, fate, reason in cases:
        out, tuser, dropped = tb.expected(frame, 4)
        if fate == drop:
            assert dropped == reason, f"{name}: the model gives {dropped}, the RFC {reason}"
        elif fate == punt:
            # To the host as it came, with the port l2_fwd gave it (test_l2_forwarding).
            assert (out, tuser) == (frame, {"punt": 1, "egressPort": 9, "reason": reason}), \
                f"{name}: the model gives {tuser}"
        elif fate == "routed":
            assert tuser == {"punt": 0, "egressPort": 3, "reason": 0}, name
            assert out == routed_by_scapy(frame, 0x02BB00000003, MAC_R), name
            assert ipv4_header_ok(out), name
        else:
            assert (out, tuser) == (frame, {"punt": 0, "egressPort": 9, "reason": 0}), name
        await tb.send(name, frame, 4)
    await tb.check()


@cocotb.test()
async def test_no_route_punt(dut):
    """Without a covering route an IPv4 frame is punted with reason 0x22, byte for byte as
    received (no TTL change), the egress port the ingress port; routed neighbours are
    not affected."""
    tb = await setup(dut, "no_route_punt")
    assert await tb.add("ipv4_lpm", ip_int("172.16.0.0"), 12, action="route",
                        data=route_data(tb, 9, 0x02BB00000009))
    tb.random_gaps()
    for k in range(60):
        dst = tb.rng.choice(["172.16.5.5", "172.32.0.1", "8.8.8.8", "172.15.255.255",
                             "172.31.255.255"])
        port = tb.rng.randrange(16)
        frame = ipv4(tb, dst, proto=tb.rng.choice([6, 17, 47]), ttl=tb.rng.randrange(2, 256),
                     options=0)
        out, tuser, _ = tb.expected(frame, port)
        if dst.startswith("172.16") or dst.startswith("172.31"):
            assert tuser == {"punt": 0, "egressPort": 9, "reason": 0}
        else:
            assert out == frame and tuser == {"punt": 1, "egressPort": port,
                                              "reason": NO_ROUTE}
        await tb.send(f"{dst} #{k}", frame, port)
    await tb.check()
    await tb.check_counters()


@cocotb.test()
async def test_acl(dut):
    """Overlapping ACL rules: equal priority goes to the rule added first, higher priority
    wins whatever the order; deny drops (0x23), to_host punts (0x24) the routed frame,
    permit lets it through; port ranges as value/mask pairs (the driver's range split);
    deleting the first rule of a tie hands its frames to the second, re-adding puts it
    after."""
    tb = await setup(dut, "acl")
    assert await tb.add("ipv4_lpm", 0, 0, action="route", data=route_data(tb, 1, 0x02BB01))
    host = acl_rule(dst=(ip_int("10.9.0.0"), 16))
    ssh = acl_rule(protocol=6, dstPort=22)
    trusted = acl_rule(src=ip_int("10.1.2.3"))
    rules = [(host, 10, "to_host"), (ssh, 10, "deny"), (trusted, 20, "permit")]
    pairs = range_pairs(1000, 2054)
    assert len(pairs) > 2
    for v, m in pairs:
        rules.append((acl_rule(protocol=17, dstPort={"value": v, "mask": m}), 5, "deny"))
    for v, m in range_pairs(53, 53):
        rules.append((acl_rule(protocol=17, srcPort={"value": v, "mask": m}), 5, "to_host"))
    for (value, mask), prio, action in rules:
        assert await tb.add("acl", value, mask, prio, action=action)

    def frames():
        out = []
        for src in ("10.1.2.3", "10.7.7.7"):
            for dst in ("10.9.1.1", "10.8.1.1"):
                for proto, sport, dport in ((6, 5555, 22), (6, 5555, 80), (17, 53, 80),
                                            (17, 5555, 999), (17, 5555, 1000),
                                            (17, 5555, 1500), (17, 5555, 2054),
                                            (17, 5555, 2055), (17, 53, 1500), (1, 0, 0)):
                    out.append((f"{src}>{dst} p{proto} {sport}>{dport}",
                                ipv4(tb, dst, src=src, proto=proto, sport=sport,
                                     dport=dport)))
        return out

    # Hand-worked expectations for a few of them.
    probe = {name: f for name, f in frames()}
    exp = {name: tb.expected(f, 3) for name, f in probe.items()}
    assert exp["10.7.7.7>10.9.1.1 p6 5555>22"][1]["reason"] == ACL_TO_HOST  # tie: first
    assert exp["10.7.7.7>10.8.1.1 p6 5555>22"][2] == ACL_DENY
    assert exp["10.1.2.3>10.9.1.1 p6 5555>22"][1] == {"punt": 0, "egressPort": 1,
                                                      "reason": 0}     # priority 20
    assert exp["10.7.7.7>10.8.1.1 p17 5555>2054"][2] == ACL_DENY
    assert exp["10.7.7.7>10.8.1.1 p17 5555>2055"][1]["punt"] == 0
    assert exp["10.7.7.7>10.8.1.1 p17 5555>999"][1]["punt"] == 0
    assert exp["10.7.7.7>10.8.1.1 p17 53>1500"][2] == ACL_DENY            # tie: range first
    assert exp["10.7.7.7>10.8.1.1 p17 53>80"][1]["reason"] == ACL_TO_HOST

    for phase in range(3):
        tb.random_gaps()
        for name, frame in frames():
            await tb.send(f"phase {phase} {name}", frame, tb.rng.randrange(16))
        await tb.check()
        # Live: the rules behind the changed one shift, and their counts go with them.
        if phase == 0:
            await tb.delete("acl", *host, 10, live=True)
            f = probe["10.7.7.7>10.9.1.1 p6 5555>22"]
            assert tb.expected(f)[2] == ACL_DENY
        elif phase == 1:
            await tb.add("acl", *host, 10, action="to_host", live=True)
            assert tb.model["acl"].position(*host, 10) > tb.model["acl"].position(*ssh, 10)
    await tb.check_counters()


@cocotb.test()
async def test_non_ipv4_skips_l3(dut):
    """With the LPM default set to drop and a catch-all ACL deny, frames without a valid
    IPv4 header (IPv6, ARP, VLAN + IPv6, VXLAN over IPv6 with an inner IPv4) pass with
    their L2 result, and the L3 tables count nothing for them; IPv4 frames among them are
    dropped by the ACL."""
    tb = await setup(dut, "non_ipv4_skips_l3")
    rng = tb.rng
    await tb.set_default("ipv4_lpm", "drop")
    assert await tb.add("acl", *acl_rule(), 0, action="deny")
    mac = 0x020000000777
    assert await tb.add("l2_fwd", mac, action="forward", data=6)
    tb.random_gaps()
    n_ip = 0
    for k in range(120):
        dst = rng.choice([mac, rng.getrandbits(48)])
        r = rng.random()
        if r < 0.25:
            frame = traffic.ipv6_frame(rng, dst, rng.randrange(62, 400))
        elif r < 0.45:
            frame = traffic.vxlan_over_ipv6(rng, dst)
        elif r < 0.6:
            pkt = packets.build_stack(rng, rng.choice([["eth"], ["eth", "vlan"],
                                                       ["eth", "vlan", "ipv6", "tcp"]]), 40)
            pkt[Ether].dst = mac_str(dst)
            frame = bytes(pkt)
        elif r < 0.8:
            frame = bytes(Ether(dst=mac_str(dst), type=0x0806) / bytes(50))
        else:
            frame = ipv4(tb, "10.0.0.1", eth_dst=dst)
            n_ip += 1
        phv = tb.parse(frame, 2)
        out, tuser, drop = tb.expected(frame, 2)
        if phv["hdr.ipv4.valid"]:
            assert drop == ACL_DENY
        elif phv["meta.parseError"] == NO_ERROR:
            assert out == frame and tuser["egressPort"] == (6 if dst == mac else 2)
        await tb.send(f"#{k}", frame, 2)
    await tb.check()
    assert tb.model["ipv4_lpm"].misses == n_ip and tb.model["acl"].hits == n_ip
    await tb.check_counters()


@cocotb.test()
async def test_parse_errors_untouched(dut):
    """Frames with a parse error (runts, truncated headers, bad IHL, IP version, too deep,
    bad_frame, oversize) come out as the packet path alone makes them, although a /0
    route, a catch-all to_host ACL rule and an L2 drop entry for their destination would
    all act; they count in no table. Error-free frames between them are routed."""
    tb = await setup(dut, "parse_errors_untouched")
    rng = tb.rng
    assert await tb.add("ipv4_lpm", 0, 0, action="route", data=route_data(tb, 3, 0x02BB03))
    assert await tb.add("acl", *acl_rule(), 0, action="to_host")
    cases = list(packets.malformed_cases(rng).items())
    macs = set()
    for _, (frame, kw) in cases:
        phv = tb.parse(frame)
        if phv["hdr.eth.valid"] and phv["hdr.eth.dst"] not in macs and len(macs) < 40:
            if await tb.add("l2_fwd", phv["hdr.eth.dst"], action="drop", may_fail=True):
                macs.add(phv["hdr.eth.dst"])
    oversize = packets.random_length_frame(rng, 9300)
    cases.append(("oversize", (oversize, {})))
    tb.random_gaps()
    bare = Program(tb.lay.raw, strict=False)
    errors = 0
    for name, (frame, kw) in cases:
        port = rng.randrange(16)
        bad = kw.get("bad_frame", False)
        phv = tb.parse(frame, port, bad)
        if phv["meta.parseError"] != NO_ERROR:
            errors += 1
            assert tb.expected(frame, port, bad) == deparse(frame, bare.answer(phv)), name
        await tb.send(name, frame, port, bad)
        good = ipv4(tb, "10.0.0.1", eth_dst=0x0200000000AB)
        await tb.send(f"after {name}", good, port)
    assert errors > 20
    await tb.check(timeout=200_000)
    await tb.check_counters()


@soak_on("w512")  # the tables' control, the same code at both widths
@cocotb.test()
async def test_default_action_runtime(dut):
    """Default actions changed at run time: between batches (read back through the
    driver each time) and while frames are in flight (each frame shows the old default
    or the new one)."""
    tb = await setup(dut, "default_action_runtime")
    rng = tb.rng
    assert await tb.add("ipv4_lpm", ip_int("10.0.0.0"), 8, action="route",
                        data=route_data(tb, 2, 0x02BB02))
    lpm, l2 = tb.model["ipv4_lpm"], tb.model["l2_fwd"]
    settings = [
        ("ipv4_lpm", "drop", 0),
        ("ipv4_lpm", "route", route_data(tb, 11, 0x02CC0B, 0x02DD0B)),
        ("l2_fwd", "forward", l2.data("forward", port=13)),
        ("acl", "to_host", 0),
        ("l2_fwd", "drop", 0),
        ("acl", "deny", 0),
        ("ipv4_lpm", "no_route", 0),
        ("l2_fwd", "no_op", 0),
        ("acl", "permit", 0),
    ]

    def batch(n):
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.6:
                f = ipv4(tb, rng.choice(["10.1.1.1", "192.0.2.9", "8.8.4.4"]),
                         eth_dst=rng.getrandbits(48), ttl=rng.randrange(256),
                         proto=rng.choice([6, 17]))
            else:
                f = traffic.ipv6_frame(rng, rng.getrandbits(48), rng.randrange(62, 200))
            out.append(f)
        return out

    # Drained between changes.
    for table, action, data in settings:
        await tb.set_default(table, action, data)
        t = tb.model[table]
        got = await tb.live(tb.ctl.get_default, table)
        assert got == (t.action_id(action), data), f"{table} default reads back {got}"
        tb.random_gaps()
        for k, f in enumerate(batch(25)):
            await tb.send(f"{table}={action} #{k}", f, rng.randrange(16))
        await tb.check()
    assert lpm.get_default() == lpm.reset_default
    # Under traffic.
    tb.exact_counts = False
    tb.gaps(0.2, 0.2)

    async def stream():
        for k, f in enumerate(batch(300)):
            await tb.send(f"stream #{k}", f, rng.randrange(16))
            while tb.src.count() > 4:
                await RisingEdge(dut.clk)

    task = cocotb.start_soon(stream())
    for table, action, data in settings * 2:
        await ClockCycles(dut.clk, rng.randrange(20, 200))
        await tb.set_default(table, action, data)
    await task
    results = await tb.check()
    seen = {st for _, _, _, st in results}
    dut._log.info("frames under default changes showed %d table states", len(seen))
    await tb.check_counters()


def random_tables(tb):
    """Intended random contents of the three tables (the driver may refuse some)."""
    rng = tb.rng
    p = tb.model
    l2 = traffic.random_l2(rng, p["l2_fwd"], rng.randint(20, 45))
    routes = traffic.random_routes(rng, p["ipv4_lpm"], rng.randint(20, 50))
    acl = traffic.random_acl(rng, p["acl"], rng.randint(10, 50),
                             prefixes=[e for e, _, _ in routes],
                             ranges=lambda lo, hi: range_pairs(lo, hi))
    return l2, routes, acl


async def random_defaults(tb):
    rng = tb.rng
    if rng.random() < 0.3:
        await tb.set_default("l2_fwd", "forward", rng.randrange(16))
    if rng.random() < 0.3:
        await tb.set_default("ipv4_lpm", *rng.choice([
            ("drop", 0), ("route", traffic.random_route_data(rng, tb.model["ipv4_lpm"]))]))
    if rng.random() < 0.3:
        await tb.set_default("acl", rng.choice(["deny", "to_host"]))


@soak_on("w512")  # the 512-bit data path: tb/deparser, tb/packet_path, tb/corundum
@cocotb.test()
async def test_random_traffic(dut):
    """Random tables (exact, nested LPM prefixes, overlapping ACL rules with port ranges),
    random defaults, random frames biased towards the entries (with non-IPv4, VXLAN,
    fragments, malformed and bad frames) under random gaps and back-pressure; every output
    in order against the model; between rounds entries are added and deleted (on the live
    bus, so counted entries that move keep their counts); table hit/miss counts and every
    entry's packet and byte counts against the model at the end."""
    await random_traffic(dut, "random_traffic", rounds=4)


@soak
@cocotb.test()
async def test_random_traffic_soak(dut):
    """test_random_traffic for 40 rounds (10,000 frames)."""
    await random_traffic(dut, "random_traffic_soak", rounds=40)


async def random_traffic(dut, name, rounds):
    tb = await setup(dut, name)
    rng = tb.rng
    l2, routes, acl = random_tables(tb)
    added = {"l2_fwd": await tb.load("l2_fwd", l2),
             "ipv4_lpm": await tb.load("ipv4_lpm", routes),
             "acl": await tb.load("acl", acl)}
    dut._log.info("tables: %s", {k: len(v) for k, v in added.items()})
    await random_defaults(tb)
    maker = traffic.FrameMaker(rng, tb.model)
    for rnd in range(rounds):
        tb.random_gaps()
        for _ in range(250):
            name, frame, port, bad = maker.frame()
            await tb.send(f"r{rnd} {name}", frame, port, bad)
        await tb.check()
        # Changes between rounds: delete some entries, add new ones.
        for table in ("l2_fwd", "ipv4_lpm", "acl"):
            entries = tb.model[table].entries()
            for e in rng.sample(entries, min(len(entries), rng.randint(0, 5))):
                await tb.delete(table, *entry_args(e), live=True)
        more_l2, more_routes, more_acl = random_tables(tb)
        await tb.load("l2_fwd", more_l2[:rng.randint(0, 6)], live=True)
        await tb.load("ipv4_lpm", more_routes[:rng.randint(0, 6)], live=True)
        await tb.load("acl", more_acl[:rng.randint(0, 6)], live=True)
        if rnd == 1:
            await random_defaults(tb)
    await tb.check_counters()


@cocotb.test()
async def test_back_to_back_one_flow(dut):
    """Minimum-size frames of one flow back to back (two jumbo frames among them), no
    gaps, no back-pressure: every one hits the same entry of each table; the per-entry
    counters count every hit (packets and bytes), as do the table counters."""
    tb = await setup(dut, "back_to_back_one_flow")
    mac = 0x020000000042
    assert await tb.add("l2_fwd", mac, action="forward", data=5)
    assert await tb.add("ipv4_lpm", ip_int("10.20.30.0"), 24, action="route",
                        data=route_data(tb, 8, 0x02BB08))
    rule = acl_rule(src=ip_int("10.1.1.1"), dst=ip_int("10.20.30.40"), protocol=17,
                    srcPort=4000, dstPort=5000)
    assert await tb.add("acl", *rule, 7, action="permit")
    tb.gaps()
    n = 300
    for k in range(n):
        length = {100: 9000, 200: 9216}.get(k, 64 if k % 10 else 200)
        frame = ipv4(tb, "10.20.30.40", src="10.1.1.1", proto=17, sport=4000, dport=5000,
                     eth_dst=mac, ttl=64, options=0, length=length)
        await tb.send(f"flow #{k}", frame, k % 16)
    results = await tb.check()
    assert all(kind == "out" and got.tuser == {"punt": 0, "egressPort": 8, "reason": 0}
               for _, got, kind, _ in results)
    assert tb.model["acl"].entry_counters((*rule, 7))[0] == n
    await tb.check_counters()


@soak_on("w512")  # the tables' control, the same code at both widths
@cocotb.test()
async def test_counters_follow_moved_entries(dut):
    """Per-entry counts stay with their entry when the driver moves it: ternary entries
    shifted by higher-priority adds and by deletes before them, exact entries moved by
    cuckoo placement of later keys; counts of a deleted and re-added entry start at 0;
    raw index counters (READ) agree with the ternary order; a read with reset restarts an
    entry's count; CLEAR empties a table and its per-entry counts, not its hit and miss
    counts."""
    tb = await setup(dut, "counters_follow_moved_entries")
    rng = tb.rng
    assert await tb.add("ipv4_lpm", 0, 0, action="route", data=route_data(tb, 1, 0x02BB01))
    rules = [acl_rule(dst=(ip_int(f"10.{i}.0.0"), 16)) for i in range(6)]
    for i, r in enumerate(rules):
        assert await tb.add("acl", *r, 10, action="permit")
    macs = [rng.getrandbits(48) for _ in range(12)]
    for m in macs:
        assert await tb.add("l2_fwd", m, action="forward", data=rng.randrange(16))

    async def traffic_round(tag):
        tb.random_gaps()
        for k in range(80):
            i = rng.randrange(6)
            frame = ipv4(tb, f"10.{i}.1.{k}", eth_dst=rng.choice(macs),
                         length=rng.randrange(60, 300))
            await tb.send(f"{tag} #{k}", frame, rng.randrange(16))
        await tb.check()

    await traffic_round("before")
    # Raw READ of each ternary index: the driver packs rules in priority order.
    acl = tb.model["acl"]
    for r in rules:
        pos = acl.position(*r, 10)
        assert await tb.index_counters("acl", pos) == acl.entry_counters((*r, 10)), pos
    await tb.check_counters()
    # Higher-priority rules go in front: every rule shifts down (live: counts move).
    for i in range(3):
        assert await tb.add("acl", *acl_rule(dst=(ip_int(f"10.{i}.1.0"), 24)), 20 + i,
                            action="permit", live=True)
    await tb.delete("acl", *rules[0], 10, live=True)
    await traffic_round("shifted")
    await tb.check_counters()
    # Fill the exact table so that cuckoo moves happen, with traffic counted before.
    added = 0
    for _ in range(60):
        if await tb.add("l2_fwd", rng.getrandbits(48), action="no_op", live=True,
                        may_fail=True):
            added += 1
    dut._log.info("%d more L2 entries (cuckoo moves for some)", added)
    await traffic_round("filled")
    await tb.delete("acl", *rules[1], 10, live=True)
    await tb.add("acl", *rules[1], 10, action="deny", live=True)
    assert acl.entry_counters((*rules[1], 10)) == (0, 0)
    await traffic_round("readded")
    await tb.check_counters()
    # Reading with reset: the next read covers exactly the hits after it.
    for table, entry in (("acl", (*rules[2], 10)), ("l2_fwd", macs[0]),
                         ("ipv4_lpm", (0, 0))):
        want = tb.model[table].entry_counters(entry)
        got = await tb.live(tb.ctl.entry_counters, table, entry, True)
        assert got == want, f"{table} {entry}: read with reset {got}, model {want}"
    await traffic_round("after reset")
    await tb.check_counters()
    # CLEAR empties the ACL and its per-entry counts; its hit and miss counts go on.
    await tb.change(tb.ctl.clear("acl"))
    await traffic_round("acl cleared")
    assert acl.entries() == [] and acl.misses >= 80
    await tb.check_counters()


# The tables racing their lookups are the same units at either width; at 512 bits the
# run is three times as long, so that width is a soak scenario.
@soak_on("w512")
@cocotb.test()
async def test_updates_under_traffic(dut):
    """Routes added and removed (recorded driver writes performed while traffic runs):
    every output is the model's answer for a table state the frame may have seen, i.e.
    before or after each update that overlapped it. Table hit + miss counts still add
    up."""
    tb = await setup(dut, "updates_under_traffic")
    rng = tb.rng
    tb.exact_counts = False
    lpm = tb.model["ipv4_lpm"]
    base = traffic.random_prefixes(rng, 12, default_route=False)
    for p, ln in base:
        await tb.add("ipv4_lpm", p, ln, action="route", data=traffic.random_route_data(rng, lpm),
                     may_fail=True)
    churn = traffic.random_prefixes(rng, 30, default_route=True)
    churn = [pl for pl in churn if pl not in lpm.prefixes]
    dsts = [p | (rng.getrandbits(32) & ((1 << (32 - ln)) - 1)) for p, ln in base + churn]
    tb.gaps(0.1, 0.2)
    done = False

    async def stream():
        k = 0
        while not done:
            dst = rng.choice(dsts)
            frame = traffic.build_ipv4(rng, eth_dst=rng.getrandbits(48),
                                       src=rng.getrandbits(32), dst=dst,
                                       proto=rng.choice([6, 17]), length=rng.randrange(60, 160))
            await tb.send(f"stream #{k}", frame, rng.randrange(16))
            k += 1
            while tb.src.count() > 3:
                await RisingEdge(dut.clk)

    task = cocotb.start_soon(stream())
    present = []
    for step in range(60):
        if present and (rng.random() < 0.4 or len(present) > 12):
            p = present.pop(rng.randrange(len(present)))
            await tb.delete("ipv4_lpm", *p, live=rng.random() < 0.2)
        else:
            p = rng.choice(churn)
            if p in lpm.prefixes:
                continue
            action = rng.choice(["route", "route", "drop"])
            data = traffic.random_route_data(rng, lpm) if action == "route" else 0
            if await tb.add("ipv4_lpm", *p, action=action, data=data,
                            live=rng.random() < 0.2, may_fail=True):
                present.append(p)
        await ClockCycles(dut.clk, rng.randrange(0, 40))
    done = True
    await task
    results = await tb.check()
    later = sum(1 for s, _, _, st in results if st > s.state)
    differ = sum(1 for s, _, _, st in results if tb.answer(s, st) != tb.answer(s, s.state))
    dut._log.info("%d frames, %d table changes; %d frames showed a change begun after they "
                  "were queued, %d of them with another result", len(results),
                  len(tb.op_starts), later, differ)
    assert differ > 0, "no frame was affected by a change under traffic"
    await tb.check_counters()


@soak_on("w512")  # as test_updates_under_traffic
@cocotb.test()
async def test_acl_and_l2_updates_under_traffic(dut):
    """ACL rules (overlapping, random priorities, so the driver shifts entries) and L2
    entries (cuckoo moves as the table fills) added and deleted while frames that match
    them stream through: every output is the model's answer for a table state the frame
    may have seen."""
    tb = await setup(dut, "acl_and_l2_updates_under_traffic")
    rng = tb.rng
    tb.exact_counts = False
    acl, l2 = tb.model["acl"], tb.model["l2_fwd"]
    assert await tb.add("ipv4_lpm", 0, 0, action="route", data=route_data(tb, 1, 0x02BB01))
    rule_pool = [e for e, _, _ in traffic.random_acl(rng, acl, 120,
                                                     ranges=lambda lo, hi: range_pairs(lo, hi))]
    mac_pool = [rng.getrandbits(48) for _ in range(90)]
    for m in mac_pool[:40]:
        await tb.add("l2_fwd", m, action="forward", data=rng.randrange(16), may_fail=True)
    tb.gaps(0.1, 0.2)
    done = False

    async def stream():
        k = 0
        while not done:
            value, mask, _ = rng.choice(rule_pool)
            key = traffic.split_key(value | (rng.getrandbits(104) & ~mask))
            proto = key["protocol"] if key["protocol"] in (6, 17) else rng.choice([6, 17, 1])
            frame = traffic.build_ipv4(rng, eth_dst=rng.choice(mac_pool), src=key["src"],
                                       dst=key["dst"], proto=proto, sport=key["srcPort"],
                                       dport=key["dstPort"], length=rng.randrange(60, 140),
                                       options=0)
            await tb.send(f"stream #{k}", frame, rng.randrange(16))
            k += 1
            while tb.src.count() > 3:
                await RisingEdge(dut.clk)

    task = cocotb.start_soon(stream())
    for step in range(80):
        live = rng.random() < 0.2
        if rng.random() < 0.6:
            rules = acl.entries()
            if rules and (rng.random() < 0.4 or len(rules) > 40):
                await tb.delete("acl", *rng.choice(rules), live=live)
            else:
                rule = rng.choice(rule_pool)
                if rule not in rules:
                    await tb.add("acl", *rule, action=rng.choice(["permit", "deny", "to_host"]),
                                 live=live, may_fail=True)
        else:
            macs = l2.entries()
            if macs and rng.random() < 0.4:
                await tb.delete("l2_fwd", rng.choice(macs), live=live)
            else:
                m = rng.choice(mac_pool)
                if m not in macs:
                    action = rng.choice(["forward", "drop"])
                    await tb.add("l2_fwd", m, action=action,
                                 data=rng.randrange(16) if action == "forward" else 0,
                                 live=live, may_fail=True)
        await ClockCycles(dut.clk, rng.randrange(0, 30))
    done = True
    await task
    results = await tb.check()
    differ = sum(1 for s, _, _, st in results if tb.answer(s, st) != tb.answer(s, s.state))
    dut._log.info("%d frames, %d table changes, %d frames with a result of a change begun "
                  "after they were queued", len(results), len(tb.op_starts), differ)
    assert differ > 0, "no frame was affected by a change under traffic"
    await tb.check_counters()
