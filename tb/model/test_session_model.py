# SPDX-License-Identifier: Apache-2.0
"""Unit tests of the session table model (pure Python, no simulator), against the rules of
docs/sessions.md: the canonical key checked against scapy's field values, the TCP state
machine over a handshake and its teardown, the learning rule, the full policy, aging."""

from scapy.layers.inet import IP, TCP as ScapyTCP

from tb.model import session as m
from tb.model.session import ACK, FIN, RST, SYN, TCP, UDP, Packet


def test_canonical_key_from_scapy_fields():
    """The key of both directions of a scapy-built flow: zone, protocol, then the lower
    (address, port) pair."""
    fwd = IP(src="10.0.0.9", dst="10.0.0.2") / ScapyTCP(sport=40000, dport=443, flags="S")
    rev = IP(src="10.0.0.2", dst="10.0.0.9") / ScapyTCP(sport=443, dport=40000, flags="SA")

    def packet(p):
        ip = p[IP]
        return Packet(0xABCDEF, ip.proto, int.from_bytes(bytes(IP(dst=ip.src))[16:20], "big"),
                      int.from_bytes(bytes(IP(dst=ip.dst))[16:20], "big"), p.sport, p.dport,
                      int(p[ScapyTCP].flags))

    kf, rf = m.canonical_key(packet(fwd))
    kr, rr = m.canonical_key(packet(rev))
    assert kf == kr and rf and not rr
    want = bytes.fromhex("abcdef" "06" "0a000002" "01bb" "0a000009" "9c40")
    assert kf.to_bytes(16, "big") == want


def flow(n=1, protocol=TCP):
    return Packet(1, protocol, 0x0A000000 + n, 0x0A000100, 1000 + n, 80, SYN)


def test_handshake_and_teardown():
    t, f = m.SessionModel(64), flow()
    states = [t.packet(p, 0).state for p in (
        f, f.reverse(SYN | ACK), f.with_flags(ACK), f.reverse(ACK), f.with_flags(FIN | ACK),
        f.reverse(ACK), f.with_flags(RST), f.with_flags(FIN))]
    assert states == [m.SYN_SENT, m.SYN_ACK, m.ESTABLISHED, m.ESTABLISHED, m.CLOSING,
                      m.CLOSING, m.RESET, m.RESET]
    assert t.learned == 1 and t.occupancy == 1


def test_handshake_steps_need_the_right_direction():
    t, f = m.SessionModel(64), flow()
    t.packet(f, 0)
    # A SYN-ACK from the initiator's side is no SYN-ACK of the handshake.
    assert t.packet(f.with_flags(SYN | ACK), 0).state == m.SYN_SENT
    assert t.packet(f.reverse(SYN | ACK), 0).state == m.SYN_ACK
    # The responder's ACK does not establish.
    assert t.packet(f.reverse(ACK), 0).state == m.SYN_ACK
    assert t.packet(f.with_flags(ACK), 0).state == m.ESTABLISHED


def test_learning_rule():
    t = m.SessionModel(64)
    assert not t.packet(flow(1).with_flags(SYN | ACK), 0).learned
    assert not t.packet(flow(2).with_flags(SYN | FIN), 0).learned
    assert not t.packet(flow(3).with_flags(ACK), 0).learned
    assert not t.packet(flow(4).with_flags(SYN, learn=False), 0).learned
    assert t.packet(flow(5, UDP).with_flags(0), 0).learned
    assert t.packet(flow(6), 0).learned
    assert not t.packet(Packet(1, 1, 1, 2, 0, 0), 0).learned  # ICMP never learns
    assert t.learned == 2 and t.misses == 7


def test_full_policy_never_overwrites():
    t = m.SessionModel(64, ways=4)
    n = 0
    while t.insert_failed == 0:
        t.packet(flow(n, UDP), 0)
        n += 1
    refused = flow(n - 1, UDP)
    before = {i: s.key for i, s in t.entries.items()}
    assert t.occupancy < 64  # d-left: some key is refused before the table is full
    r = t.packet(refused, 0)
    assert r.insert_failed and r.punt and not r.drop and not r.learned
    t.drop_on_full = True
    r = t.packet(refused, 0)
    assert r.insert_failed and r.drop and not r.punt
    assert {i: s.key for i, s in t.entries.items()} == before and t.insert_failed == 3


def test_aging_after_the_timeout_and_not_before():
    t = m.SessionModel(64)
    t.timeouts[m.UDP_STATE] = 10
    r = t.packet(flow(1, UDP), 100)
    assert not t.scan(r.index, 110) and t.scan(r.index, 111)
    assert t.aged == 1 and t.occupancy == 0
    # Ages are modulo 2^16.
    r = t.packet(flow(2, UDP), 0xFFFE)
    assert not t.expired(r.index, 8) and t.expired(r.index, 9)


def test_answer_without_commit_is_the_answer_and_changes_nothing(matcha_seed):
    """A packet asked without commit gets what the same packet then gets with it, and
    leaves the sessions and the counts as they were: random packets of a few flows in
    either direction, with every flag mix, over a 16-session table that fills."""
    import random

    rng = random.Random(matcha_seed)
    t = m.SessionModel(16, ways=4)
    flows = [flow(n, rng.choice((TCP, UDP))) for n in range(40)]
    for _ in range(2000):
        f = rng.choice(flows)
        flags = rng.choice((SYN, SYN | ACK, ACK, FIN | ACK, RST, 0))
        p = f.with_flags(flags) if rng.random() < 0.5 else f.reverse(flags)
        state = ({i: vars(s).copy() for i, s in t.entries.items()},
                 (t.learned, t.insert_failed, t.hits, t.misses))
        asked = t.packet(p, 7, commit=False)
        assert state == ({i: vars(s).copy() for i, s in t.entries.items()},
                         (t.learned, t.insert_failed, t.hits, t.misses))
        assert t.packet(p, 7) == asked
