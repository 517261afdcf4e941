# SPDX-License-Identifier: Apache-2.0
"""The meter model (tb/model/meter.py) on worked examples of RFC 2697 and RFC 2698.

Every expected colour and level below is worked out by hand from the RFCs' rules, step by
step in the comments; no simulator is involved.
"""

import random
from fractions import Fraction

import pytest

from tb.model.meter import GREEN, RED, YELLOW, HwMeter, MeterBank, SrTcm, TrTcm


def run(marker, events):
    """events: (t, bytes, colour, expected colour, expected levels or None)."""
    for t, b, colour, want, levels in events:
        got = marker.mark(t, b, colour)
        assert got == want, f"t={t} B={b}: {got}, expected {want}"
        if levels is not None:
            assert marker.levels == levels, f"t={t} B={b}: levels {marker.levels}, expected {levels}"


def test_srtcm_blind_green_yellow_red_and_refill():
    # CIR 100 per tick, CBS 3000, EBS 5000; both buckets start full.
    m = SrTcm(cir=100, cbs=3000, ebs=5000)
    run(m, [
        (0, 1500, GREEN, GREEN, (1500, 5000)),   # Tc - B >= 0
        (0, 1500, GREEN, GREEN, (0, 5000)),
        (0, 1500, GREEN, YELLOW, (0, 3500)),     # Tc short, Te - B >= 0
        (0, 1500, GREEN, YELLOW, (0, 2000)),
        (0, 1500, GREEN, YELLOW, (0, 500)),
        (0, 1500, GREEN, RED, (0, 500)),         # neither: no bucket changes
        # 10 ticks: 1000 tokens, all to C (Tc < CBS throughout).
        (10, 1000, GREEN, GREEN, (0, 500)),
        (10, 600, GREEN, RED, (0, 500)),
        # 40 ticks: 4000 tokens: 3000 fill C, the other 1000 go to E.
        (50, 3001, GREEN, RED, (3000, 1500)),
        (50, 1500, GREEN, GREEN, (1500, 1500)),
        # 200 ticks: 20000 tokens: C takes 1500, E takes 3500, the rest is lost.
        (250, 0, GREEN, GREEN, (3000, 5000)),
    ])


def test_srtcm_colour_aware():
    m = SrTcm(cir=1, cbs=100, ebs=100, aware=True)
    run(m, [
        (0, 10, YELLOW, YELLOW, (100, 90)),   # yellow never becomes green, even with Tc full
        (0, 1, RED, RED, (100, 90)),          # red stays red and takes nothing
        (0, 100, GREEN, GREEN, (0, 90)),
        (0, 50, GREEN, YELLOW, (0, 40)),      # green arriving, Tc short: yellow from E
        (0, 50, YELLOW, RED, (0, 40)),        # Te short too
        (0, 40, 3, RED, (0, 40)),             # colour 3 counts as red
        (0, 40, YELLOW, YELLOW, (0, 0)),
    ])
    # Colour-blind, the same packets ignore their colour.
    m = SrTcm(cir=1, cbs=100, ebs=100)
    run(m, [(0, 10, YELLOW, GREEN, (90, 100)), (0, 1, RED, GREEN, (89, 100))])


def test_trtcm_blind_green_yellow_red_and_refill():
    # CIR 10, CBS 1000, PIR 30, PBS 2000.
    m = TrTcm(cir=10, cbs=1000, pir=30, pbs=2000)
    run(m, [
        (0, 1500, GREEN, YELLOW, (1000, 500)),  # Tp - B >= 0, Tc - B < 0: Tp only
        (0, 600, GREEN, RED, (1000, 500)),      # Tp - B < 0
        (0, 500, GREEN, GREEN, (500, 0)),       # both
        # 10 ticks: Tc 500 + 100, Tp 0 + 300.
        (10, 300, GREEN, GREEN, (300, 0)),
        # 90 ticks: Tc capped at CBS, Tp at PBS.
        (100, 2001, GREEN, RED, (1000, 2000)),  # larger than PBS: always red
        (100, 2000, GREEN, YELLOW, (1000, 0)),
    ])


def test_trtcm_colour_aware():
    m = TrTcm(cir=10, cbs=1000, pir=30, pbs=2000, aware=True)
    run(m, [
        (0, 100, YELLOW, YELLOW, (1000, 1900)),  # yellow stays yellow: Tp only
        (0, 100, RED, RED, (1000, 1900)),        # red stays red: nothing taken
        (0, 100, GREEN, GREEN, (900, 1800)),
        (0, 1000, GREEN, YELLOW, (900, 800)),    # green arriving, Tc short
        (0, 900, YELLOW, RED, (900, 800)),       # Tp short
    ])


def test_rfc_units_seconds_and_bytes():
    """The same rules in the RFCs' own units: 1 Mb/s = 125000 bytes/s, times in seconds."""
    m = SrTcm(cir=125000, cbs=1500, ebs=1500, t=Fraction(0))
    run(m, [
        (Fraction(0), 1500, GREEN, GREEN, (0, 1500)),
        # 6 ms: 750 bytes of tokens, all to C.
        (Fraction(6, 1000), 1000, GREEN, YELLOW, (750, 500)),
        # 12 ms more: 1500 bytes: 750 fill C, 750 go to E.
        (Fraction(18, 1000), 1500, GREEN, GREEN, (0, 1250)),
    ])
    # 8 µs is one byte of CIR (C is full already) and two bytes of PIR.
    m = TrTcm(cir=125000, cbs=100, pir=250000, pbs=200, t=Fraction(0))
    run(m, [(Fraction(0), 200, GREEN, YELLOW, (100, 0)),
            (Fraction(8, 1000000), 2, GREEN, GREEN, (98, 0))])


@pytest.mark.parametrize("two_rate", [False, True])
def test_refill_in_steps_is_refill_at_once(two_rate):
    """A meter touched at every tick in between (the hardware's sweeper) ends where one
    touched only at the end does."""
    rng = random.Random(7)
    for _ in range(200):
        cir, pir = rng.randrange(0, 50), rng.randrange(0, 80)
        cbs, pbs = rng.randrange(1, 3000), rng.randrange(1, 3000)
        mk = (lambda: TrTcm(cir, cbs, max(cir, pir), pbs)) if two_rate else \
            (lambda: SrTcm(cir, cbs, pbs))
        a, b = mk(), mk()
        t = 0
        for _ in range(20):
            size = rng.randrange(1, 2000)
            assert a.mark(t, size) == b.mark(t, size)
            step = rng.randrange(0, 100)
            for k in range(step):
                a.advance(t + k)
            t += step
        b.advance(t)
        a.advance(t)
        assert a.levels == b.levels


def test_long_run_green_rate_is_cir():
    """Offered twice the CIR, an srTCM passes CIR worth of green bytes; a trTCM passes CIR
    green and PIR green plus yellow."""
    rng = random.Random(3)
    sr = SrTcm(cir=5, cbs=3000, ebs=3000)
    tr = TrTcm(cir=5, cbs=3000, pir=8, pbs=3000)
    t, green, passed = 0, [0, 0], 0
    start = 20000
    while t < 1_000_000:
        size = rng.randrange(64, 1501)
        t += size // 10  # offered: 10 per tick
        cs, ct = sr.mark(t, size), tr.mark(t, size)
        if t >= start:
            green[0] += size if cs == GREEN else 0
            green[1] += size if ct == GREEN else 0
            passed += size if ct != RED else 0
    span = t - start
    assert abs(green[0] / span - 5) / 5 < 0.01
    assert abs(green[1] / span - 5) / 5 < 0.01
    assert abs(passed / span - 8) / 8 < 0.01


def test_bank_unconfigured_and_costs():
    bank = MeterBank(4)
    assert bank.packet(0, 0, 1500, RED) == GREEN  # unconfigured: all green
    assert bank.levels(0, 5) == (0, 0)
    # Packets mode with shift 4: each packet costs 16 units whatever its length.
    bank.configure(1, HwMeter(packets=True, shift=4, cir=0, cbs=32, pbs=16), t=0)
    assert [bank.packet(1, 0, n) for n in (9000, 64, 64, 64)] == [GREEN, GREEN, YELLOW, RED]
    # Bytes with shift 2: 100 bytes cost 400 units.
    bank.configure(2, HwMeter(shift=2, cir=1, cbs=400, pbs=0), t=0)
    assert bank.packet(2, 0, 100) == GREEN and bank.packet(2, 399, 100) == RED
    assert bank.packet(2, 400, 100) == GREEN
    bank.configure(2, None, t=0)
    assert bank.packet(2, 500, 10**6) == GREEN


# The worked example of docs/tables.md ("Rate conversion and how it differs from BMv2"):
# trTCM, CIR 500000 bytes/s (0.5 byte/µs), CBS 1000, PIR 1500000 bytes/s (1.5 byte/µs),
# PBS 1500, configured at t = 0 on a 250 MHz pipeline, one clock per tick. The driver holds
# it at shift 29 (PBS 1500 < 2^11 in 40-bit levels) with CIR ⌈0.002 × 2^29⌉ = 1073742 and
# PIR ⌈0.006 × 2^29⌉ = 3221226 units per tick (sw/driver/tests/test_meter.c checks this).
# Each row: time in µs, bytes, the peak bucket before the packet and the colour in
# Matcha, then in BMv2.
EDGE_SHIFT, EDGE_CIR, EDGE_PIR, TICKS_PER_US = 29, 1073742, 3221226, 250
EDGE_PACKETS = [
    (Fraction(0), 1500, Fraction(1500), YELLOW, 1500, YELLOW),
    # BMv2 counts 66 whole µs: ⌊66 × 1.5⌋ = 99 tokens, one short.
    (Fraction(669, 10), 100, Fraction(10035, 100), GREEN, 99, RED),
    # Matcha's green took those 100 bytes, BMv2's red left them: ⌊67 × 1.5⌋ = 100.
    (Fraction(672, 10), 1, Fraction(8, 10), RED, 100, GREEN),
    # 0.8 + 1.5 × 132.8 = 200 exactly; BMv2 has 99 + ⌊200 × 1.5⌋ − 100 = 299.
    (Fraction(200), 200, Fraction(200), GREEN, 299, GREEN),
    (Fraction(2006, 10), 1, Fraction(9, 10), RED, 99, GREEN),
    # Both buckets full again: the two agree from here.
    (Fraction(2000), 1500, Fraction(1500), YELLOW, 1500, YELLOW),
]


def test_bucket_edges_worked_example_matcha():
    """The model at the hardware's ticks and units gives the example's Matcha column: the
    peak bucket before each packet (to within the rounded-up rate's excess, below 1e-4
    byte here) and the colour."""
    m = HwMeter(two_rate=True, shift=EDGE_SHIFT, cir=EDGE_CIR, pir=EDGE_PIR,
                cbs=1000 << EDGE_SHIFT, pbs=1500 << EDGE_SHIFT).marker(0)
    for t_us, size, peak, colour, _, _ in EDGE_PACKETS:
        tick = t_us * TICKS_PER_US
        assert tick.denominator == 1
        m.advance(int(tick))
        excess = Fraction(m.levels[1], 1 << EDGE_SHIFT) - peak
        assert 0 <= excess < Fraction(1, 10**4), f"t={t_us} µs: peak {float(peak + excess)}"
        assert m.mark(int(tick), size << EDGE_SHIFT) == colour, f"t={t_us} µs"


class WholeMicrosecondMeter:
    """BMv2's two-rate meter as docs/tables.md describes it: time in whole microseconds
    since its origin, each bucket credited with the whole tokens ⌊µs × rate⌋ since the
    origin less those credited before, saturated at its burst; the peak bucket checked
    first, a packet taking from each bucket it passes and stopping at the first short."""

    def __init__(self, cir, cbs, pir, pbs):
        # [rate per µs, burst, tokens, tokens credited since the origin, colour when short]
        self.buckets = [[pir, pbs, pbs, 0, RED], [cir, cbs, cbs, 0, YELLOW]]

    def peak(self, t_us):
        rate, burst, tokens, credited, _ = self.buckets[0]
        return min(burst, tokens + int(int(t_us) * rate) - credited)

    def mark(self, t_us, size):
        for b in self.buckets:
            since_origin = int(int(t_us) * b[0])
            b[2] = min(b[1], b[2] + since_origin - b[3])
            b[3] = since_origin
            if b[2] < size:
                return b[4]
            b[2] -= size
        return GREEN


def test_bucket_edges_worked_example_bmv2():
    """The example's BMv2 column follows from whole microseconds and whole tokens."""
    m = WholeMicrosecondMeter(Fraction(1, 2), 1000, Fraction(3, 2), 1500)
    for t_us, size, _, _, peak, colour in EDGE_PACKETS:
        assert m.peak(t_us) == peak, f"t={t_us} µs"
        assert m.mark(t_us, size) == colour, f"t={t_us} µs"
