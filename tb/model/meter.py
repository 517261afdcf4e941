# SPDX-License-Identifier: Apache-2.0
"""Meters: the RFC 2697 single rate and RFC 2698 two rate three colour markers.

Written from the RFCs' text, not from the RTL:

RFC 2697 (srTCM). Two token buckets C and E share the rate CIR; they start full (Tc = CBS,
Te = EBS). CIR times per second: if Tc < CBS, Tc grows by one, else if Te < EBS, Te grows
by one, else neither does. A packet of B bytes at time t, colour-blind: if Tc(t) - B >= 0 it
is green and Tc -= B; else if Te(t) - B >= 0 it is yellow and Te -= B; else it is red and
neither bucket changes. Colour-aware: green and Tc -= B only if it arrives green and
Tc(t) - B >= 0; else yellow and Te -= B if it arrives green or yellow and Te(t) - B >= 0;
else red.

RFC 2698 (trTCM). Bucket P fills at PIR up to PBS, bucket C at CIR up to CBS, both start
full. Colour-blind: red if Tp(t) - B < 0; else yellow if Tc(t) - B < 0, with Tp -= B; else
green, with Tp -= B and Tc -= B. Colour-aware: red if it arrives red or Tp(t) - B < 0; else
yellow (Tp -= B) if it arrives yellow or Tc(t) - B < 0; else green (Tp -= B, Tc -= B).

Time and tokens here are whatever numbers the caller uses: ints for the hardware's ticks and
units (docs/tables.md, "Meters": a tick's refill arrives as one lump of `rate` units, which
is the RFC's one-token-at-a-time process with tokens of that size), Fractions for
seconds and bytes. Refill between two events is `rate * elapsed`, added to the buckets in the
RFC's order, so refilling in several steps gives what one step gives.

Colours are P4's MeterColor_t: GREEN 0, YELLOW 1, RED 2; a pre-colour of 3 counts as red.
"""

from dataclasses import dataclass

GREEN, YELLOW, RED = 0, 1, 2
NAMES = {GREEN: "green", YELLOW: "yellow", RED: "red"}


def _in_colour(colour, aware):
    if not aware:
        return GREEN
    return RED if colour >= RED else colour


class SrTcm:
    """RFC 2697 single rate three colour marker: C and E fill at CIR, C first."""

    def __init__(self, cir, cbs, ebs, aware=False, t=0):
        self.cir, self.cbs, self.ebs, self.aware = cir, cbs, ebs, aware
        self.tc, self.te = cbs, ebs  # both buckets start full
        self.t = t

    def advance(self, t):
        """The tokens of the time since the last event: to C while Tc < CBS, then to E while
        Te < EBS, the rest lost."""
        tokens = self.cir * (t - self.t)
        assert tokens >= 0, "time runs forward"
        to_c = min(tokens, self.cbs - self.tc)
        self.tc += to_c
        self.te = min(self.ebs, self.te + tokens - to_c)
        self.t = t

    def mark(self, t, b, colour=GREEN):
        self.advance(t)
        colour = _in_colour(colour, self.aware)
        if colour == GREEN and self.tc - b >= 0:
            self.tc -= b
            return GREEN
        if colour in (GREEN, YELLOW) and self.te - b >= 0:
            self.te -= b
            return YELLOW
        return RED

    @property
    def levels(self):
        """(Tc, Te)"""
        return self.tc, self.te


class TrTcm:
    """RFC 2698 two rate three colour marker: P fills at PIR, C at CIR."""

    def __init__(self, cir, cbs, pir, pbs, aware=False, t=0):
        self.cir, self.cbs, self.pir, self.pbs, self.aware = cir, cbs, pir, pbs, aware
        self.tc, self.tp = cbs, pbs  # both buckets start full
        self.t = t

    def advance(self, t):
        dt = t - self.t
        assert dt >= 0, "time runs forward"
        self.tc = min(self.cbs, self.tc + self.cir * dt)
        self.tp = min(self.pbs, self.tp + self.pir * dt)
        self.t = t

    def mark(self, t, b, colour=GREEN):
        self.advance(t)
        colour = _in_colour(colour, self.aware)
        if colour == RED or self.tp - b < 0:
            return RED
        if colour == YELLOW or self.tc - b < 0:
            self.tp -= b
            return YELLOW
        self.tp -= b
        self.tc -= b
        return GREEN

    @property
    def levels(self):
        """(Tc, Tp)"""
        return self.tc, self.tp


# ------------------------------------------------------------------- the hardware's view

@dataclass(frozen=True)
class HwMeter:
    """A meter's setting as the control window stages it (docs/tables.md, "Meters"): rates
    in units per tick, bursts in units, a byte (or packet) costs 2^shift units."""
    two_rate: bool = False
    aware: bool = False
    packets: bool = False
    shift: int = 0
    cir: int = 0
    pir: int = 0
    cbs: int = 0
    pbs: int = 0  # PBS (two-rate) or EBS (single-rate)

    def cost(self, nbytes):
        return (1 if self.packets else nbytes) << self.shift

    def marker(self, t):
        if self.two_rate:
            return TrTcm(self.cir, self.cbs, self.pir, self.pbs, self.aware, t)
        return SrTcm(self.cir, self.cbs, self.pbs, self.aware, t)


class MeterBank:
    """N meters as the hardware keeps them, times in ticks. An unconfigured meter marks
    every packet green; configuring one fills both buckets."""

    def __init__(self, n):
        self.n = n
        self.settings = {}  # index -> HwMeter
        self.markers = {}

    def configure(self, index, setting, t):
        if setting is None:
            self.settings.pop(index, None)
            self.markers.pop(index, None)
        else:
            self.settings[index] = setting
            self.markers[index] = setting.marker(t)

    def clear(self):
        self.settings.clear()
        self.markers.clear()

    def packet(self, index, t, nbytes, colour=GREEN):
        m = self.markers.get(index)
        if m is None:
            return GREEN
        return m.mark(t, self.settings[index].cost(nbytes), colour)

    def levels(self, index, t):
        """The two bucket levels refilled to `t` (0, 0 for an unconfigured meter)."""
        m = self.markers.get(index)
        if m is None:
            return 0, 0
        m.advance(t)
        return m.levels
