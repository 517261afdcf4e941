# SPDX-License-Identifier: Apache-2.0
"""cocotb tests of matcha_conntrack: the packet path with the conntrack program
(docs/pipeline.md, "The conntrack program"): `acl`, ternary on the 5-tuple, whose `permit`
sets meta.learn; the session stage (`sessions`, 64 sessions in 4 ways) that learns flows in
the data path and writes meta.sessionHit/Learned/...; then `by_session`, exact on
(meta.ingressPort, meta.sessionHit, meta.sessionLearned), which here drops frames of no
session arriving on the outside port.

Tables are loaded and the session table's policy set through the C driver
(tb/pipeline/control.py, recorded and replayed on the DUT); the session statistics are read
through the driver on the live bus. The oracle of every frame is the program model
(tb/model/program.py, whose session stage is tb/model/session.py) between the packet path
model's parse and deparse, run frame by frame in the order the frames are sent.
"""

import cocotb
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether

from tb.common import driver as drv
from tb.common.sim import soak
from tb.model.session import ACK, CLOSING, ESTABLISHED, FIN, RST, SYN, UDP, UDP_STATE
from tb.pipeline.pipeline_tb import setup
from tb.pipeline.traffic import build_ipv4

INSIDE, OUTSIDE = 0, 1
INSIDE_NET = 0x0A000000      # 10.0.0.0/8: the ACL permits (and so learns) its frames
ACL_DENY = 0x26
SESSION_FULL = 0x27
NO_SESSION = 0x28
MAC_IN, MAC_OUT = 0x020000000010, 0x020000000020
TCP_PROTO = 6


def frame(tb, src, dst, proto, sport, dport, flags=0, length=None):
    """An IPv4 TCP or UDP frame without VLAN or options; TCP with `flags`."""
    raw = build_ipv4(tb.rng, eth_dst=MAC_OUT, eth_src=MAC_IN, src=src, dst=dst, proto=proto,
                     sport=sport, dport=dport, ttl=64, options=0, length=length)
    if proto != TCP_PROTO:
        return raw
    pkt = Ether(raw)
    pkt[TCP].flags = flags
    del pkt[TCP].chksum
    del pkt[IP].chksum
    return bytes(pkt)


def acl_key(tb, **parts):
    return tb.model["acl"].key(**parts)


async def conntrack_setup(dut, name):
    """The DUT with the ACL permitting (learning) every frame from 10.0.0.0/8, denying
    frames to port 23, and by_session dropping outside frames of no session."""
    tb = await setup(dut, name)
    acl = tb.model["acl"]
    permit_mask = acl.key(src=0xFF000000)
    assert await tb.add("acl", acl_key(tb, src=INSIDE_NET), permit_mask, 10, action="permit")
    assert await tb.add("acl", acl_key(tb, dstPort=23), acl.key(dstPort=0xFFFF), 20,
                        action="deny")
    by_session = tb.model["by_session"]
    assert await tb.add("by_session", by_session.key(ingressPort=OUTSIDE), action="drop")
    return tb


async def check_stats(tb):
    """The session table's statistics through the driver against the model (no session
    ages: the tick is the reset 65536 clocks and the shortest timeout 5 ticks; an on-chip
    table has no late or busy packets)."""
    stage = tb.model.sessions["sessions"]
    t = stage.table
    stats = await tb.live(tb.ctl.dev.session_stats, stage.index)
    want = {"occupancy": t.occupancy, "learned": t.learned, "insert_failed": t.insert_failed,
            "aged": 0, "hits": t.hits, "misses": t.misses, "late": 0, "busy": 0}
    assert stats == want, f"session statistics {stats}, model {want}"
    return stats


def outcome(got):
    s, emitted, kind, _ = got
    if kind == "drop":
        return "drop", emitted.reason
    return ("punt", emitted.tuser["reason"]) if emitted.tuser["punt"] else ("pass", None)


@cocotb.test()
async def test_flows_learned_replies_pass(dut):
    """Inside clients open UDP flows and TCP handshakes to outside servers: the first
    frame learns, the outside replies pass, the handshake reaches ESTABLISHED and a FIN
    closes it; unsolicited outside frames (a new source, a port no flow uses, an inside
    address's reply to a flow never opened) are dropped with 0x28; an inside frame to port
    23 is denied (0x26) and learns nothing, so its reply is dropped too. Each frame's output
    is the model's, and the table's statistics and counters agree. An outside frame to port
    23 keeps the ACL's 0x26: by_session does not apply to a frame already dropped."""
    tb = await conntrack_setup(dut, "flows_learned")
    client, server = INSIDE_NET | 0x0105, 0xC0000201
    udp = (client, server, UDP, 40000, 53)
    await tb.send("udp out", frame(tb, *udp), INSIDE)
    await tb.send("udp reply", frame(tb, server, client, UDP, 53, 40000), OUTSIDE)
    await tb.send("udp reply from another port", frame(tb, server, client, UDP, 54, 40000),
                  OUTSIDE)
    tcp = (client, server, TCP_PROTO, 40001, 443)
    rev = (server, client, TCP_PROTO, 443, 40001)
    await tb.send("syn", frame(tb, *tcp, SYN), INSIDE)
    await tb.send("syn-ack", frame(tb, *rev, SYN | ACK), OUTSIDE)
    await tb.send("ack", frame(tb, *tcp, ACK), INSIDE)
    await tb.send("data in", frame(tb, *rev, ACK, length=400), OUTSIDE)
    await tb.send("fin", frame(tb, *tcp, FIN | ACK), INSIDE)
    await tb.send("fin reply", frame(tb, *rev, FIN | ACK), OUTSIDE)
    await tb.send("unsolicited syn", frame(tb, 0xC0000299, client, TCP_PROTO, 5555, 22, SYN),
                  OUTSIDE)
    await tb.send("telnet", frame(tb, client, server, TCP_PROTO, 40002, 23, SYN), INSIDE)
    await tb.send("telnet reply", frame(tb, server, client, TCP_PROTO, 23, 40002, SYN | ACK),
                  OUTSIDE)
    await tb.send("telnet from outside", frame(tb, 0xC0000299, client, TCP_PROTO, 5556, 23, SYN),
                  OUTSIDE)
    got = {g[0].name: outcome(g) for g in await tb.check()}
    assert got["udp out"] == got["udp reply"] == got["syn-ack"] == got["data in"] == \
        ("pass", None), got
    for name in ("udp reply from another port", "unsolicited syn", "telnet reply"):
        assert got[name] == ("drop", NO_SESSION), f"{name}: {got[name]}"
    for name in ("telnet", "telnet from outside"):
        assert got[name] == ("drop", ACL_DENY), f"{name}: {got[name]}"
    table = tb.model.sessions["sessions"].table
    states = sorted(s.state for s in table.entries.values())
    assert states == [CLOSING, UDP_STATE], f"session states {states} (CLOSING, UDP)"
    stats = await check_stats(tb)
    assert stats["learned"] == 2
    await tb.check_counters()


@cocotb.test()
async def test_back_to_back_new_flows(dut):
    """Frames of new flows with no gap between them: each flow's SYN and the reply right
    behind it (the next clock's frame sees the session the SYN learned), several flows
    interleaved, and outside frames of flows not yet opened, all against the model."""
    tb = await conntrack_setup(dut, "back_to_back")
    tb.gaps(0.0, 0.0)
    for i in range(12):
        client, server = INSIDE_NET | (0x0200 + i), 0xC6336400 + i % 3
        tcp = (client, server, TCP_PROTO, 30000 + i, 80)
        rev = (server, client, TCP_PROTO, 80, 30000 + i)
        if i % 4 == 3:
            await tb.send(f"{i} early reply", frame(tb, *rev, SYN | ACK, length=60), OUTSIDE)
        await tb.send(f"{i} syn", frame(tb, *tcp, SYN, length=60), INSIDE)
        await tb.send(f"{i} syn-ack", frame(tb, *rev, SYN | ACK, length=60), OUTSIDE)
        await tb.send(f"{i} ack", frame(tb, *tcp, ACK, length=60), INSIDE)
    got = {g[0].name: outcome(g) for g in await tb.check()}
    for i in range(12):
        assert got[f"{i} syn-ack"] == ("pass", None), f"{i}: {got[f'{i} syn-ack']}"
        if i % 4 == 3:
            assert got[f"{i} early reply"] == ("drop", NO_SESSION)
    states = {s.state for s in tb.model.sessions["sessions"].table.entries.values()}
    assert states == {ESTABLISHED}, f"states {states} (all ESTABLISHED)"
    await check_stats(tb)


@cocotb.test()
async def test_table_full_policy(dut):
    """More new UDP flows than the 64 sessions hold: those whose four candidate slots are
    taken are punted with 0x27 (the reset policy), then, once the policy is set to drop
    through the driver, dropped with 0x27; their replies from outside are dropped (no
    session); flows that were learned keep passing. INSERT_FAILED counts the refusals."""
    tb = await conntrack_setup(dut, "table_full")
    tb.random_gaps()
    flows = [(INSIDE_NET | tb.rng.getrandbits(24), 0xCB007100 | tb.rng.getrandbits(8), UDP,
              tb.rng.randrange(1024, 4789), tb.rng.randrange(4790, 65536)) for _ in range(120)]
    for i, f in enumerate(flows[:90]):
        await tb.send(f"{i} out", frame(tb, *f), INSIDE)
    first = [outcome(g) for g in await tb.check()]
    assert ("punt", SESSION_FULL) in first and ("pass", None) in first, set(first)
    await tb.change(tb.ctl.session_set_policy("sessions", drv.SESSION_DROP))
    for i, f in enumerate(flows[90:]):
        await tb.send(f"{90 + i} out", frame(tb, *f), INSIDE)
    for i, (src, dst, proto, sport, dport) in enumerate(flows):
        await tb.send(f"{i} reply", frame(tb, dst, src, proto, dport, sport), OUTSIDE)
    second = [outcome(g) for g in await tb.check()]
    assert ("drop", SESSION_FULL) in second[:30] and ("punt", SESSION_FULL) not in second
    replies = second[30:]
    assert ("pass", None) in replies and ("drop", NO_SESSION) in replies, set(replies)
    stats = await check_stats(tb)
    assert stats["insert_failed"] > 0 and stats["occupancy"] <= 64
    await tb.check_counters()


@cocotb.test()
async def test_random_traffic(dut):
    """Random TCP and UDP frames of a few dozen flows in both directions with random
    flags (SYN, ACK, FIN, RST mixes), lengths and gaps, from inside and outside: every
    frame's output, the session statistics and the table counters are the model's."""
    await random_traffic(dut, "random_traffic", frames=300)


@soak
@cocotb.test()
async def test_random_traffic_soak(dut):
    """test_random_traffic with 3,000 frames."""
    await random_traffic(dut, "random_traffic_soak", frames=3000)


async def random_traffic(dut, name, frames):
    tb = await conntrack_setup(dut, name)
    tb.random_gaps()
    rng = tb.rng
    flows = []
    for _ in range(40):
        proto = rng.choice([TCP_PROTO, UDP])
        client = (INSIDE_NET if rng.random() < 0.8 else 0xAC100000) | rng.getrandbits(16)
        flows.append((client, 0xC0A80000 | rng.getrandbits(8), proto,
                      rng.randrange(1024, 4789), rng.choice([22, 23, 80, 443, 8080])))
    flag_mixes = [SYN, SYN, SYN | ACK, ACK, ACK, FIN | ACK, RST, SYN | FIN, 0]
    for i in range(frames):
        src, dst, proto, sport, dport = rng.choice(flows)
        flags = rng.choice(flag_mixes)
        if rng.random() < 0.5:
            await tb.send(f"{i} in", frame(tb, src, dst, proto, sport, dport, flags), INSIDE)
        else:
            await tb.send(f"{i} out", frame(tb, dst, src, proto, dport, sport, flags), OUTSIDE)
    await tb.check()
    await check_stats(tb)
    await tb.check_counters()
