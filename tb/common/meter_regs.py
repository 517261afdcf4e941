# SPDX-License-Identifier: Apache-2.0
"""A meter's window DATA words (docs/tables.md, "Meters") to and from the model's HwMeter.

The word layout is the generated contract's (METER_*); the model (tb/model/meter.py) keeps
only what a setting means, so it stays an oracle independent of the register map."""

from tb.common import contract
from tb.model.meter import HwMeter

SHIFT_MAX = (1 << contract.METER_MODE_SHIFT_BITS) - 1
_MASK32 = 0xFFFFFFFF


def mode_word(hw):
    """The MODE word of a setting: its mode bits and its shift."""
    if not 0 <= hw.shift <= SHIFT_MAX:
        raise ValueError(f"shift {hw.shift} is not in 0..{SHIFT_MAX}")
    return ((contract.METER_MODE_TWO_RATE if hw.two_rate else 0) | (contract.METER_MODE_AWARE if hw.aware else 0)
            | (contract.METER_MODE_PACKETS if hw.packets else 0) | hw.shift << contract.METER_MODE_SHIFT_LSB)


def write_words(hw):
    """The METER_WRITE_WORDS DATA words a WRITE of `hw` stages."""
    w = [0] * contract.METER_WRITE_WORDS
    w[contract.METER_MODE_WORD] = mode_word(hw)
    w[contract.METER_CIR_WORD] = hw.cir
    w[contract.METER_PIR_WORD] = hw.pir
    for at, v in ((contract.METER_CBS_WORD, hw.cbs), (contract.METER_PBS_WORD, hw.pbs)):
        w[at], w[at + 1] = v & _MASK32, v >> 32
    return w


def word64(words, at):
    """The 64-bit value of DATA words `at` (low) and `at + 1` (high)."""
    return words[at] | words[at + 1] << 32


def from_words(words):
    """The HwMeter that DATA words (a WRITE's, or the first of a READ's) hold."""
    mode = words[contract.METER_MODE_WORD]
    return HwMeter(bool(mode & contract.METER_MODE_TWO_RATE), bool(mode & contract.METER_MODE_AWARE),
                   bool(mode & contract.METER_MODE_PACKETS), mode >> contract.METER_MODE_SHIFT_LSB & SHIFT_MAX,
                   words[contract.METER_CIR_WORD], words[contract.METER_PIR_WORD],
                   word64(words, contract.METER_CBS_WORD), word64(words, contract.METER_PBS_WORD))


def levels(words):
    """(committed level, peak level, tick) of a READ's METER_WORDS DATA words."""
    return (word64(words, contract.METER_CLEVEL_WORD), word64(words, contract.METER_PLEVEL_WORD),
            words[contract.METER_TIME_WORD])
