# SPDX-License-Identifier: Apache-2.0
"""The meter DATA words the testbenches write and read back (tb/common/meter_regs.py)."""

import pytest

from tb.common import contract, meter_regs
from tb.model.meter import HwMeter


def test_a_setting_survives_its_words():
    s = HwMeter(two_rate=True, aware=True, packets=False, shift=meter_regs.SHIFT_MAX, cir=1, pir=2,
                cbs=3 | 5 << 40, pbs=4 | 7 << 35)
    words = meter_regs.write_words(s)
    assert len(words) == contract.METER_WRITE_WORDS
    assert meter_regs.from_words(words) == s


def test_the_mode_word():
    assert meter_regs.mode_word(HwMeter()) == 0
    assert meter_regs.mode_word(HwMeter(packets=True, shift=3)) == \
        contract.METER_MODE_PACKETS | 3 << contract.METER_MODE_SHIFT_LSB
    with pytest.raises(ValueError):
        meter_regs.mode_word(HwMeter(shift=meter_regs.SHIFT_MAX + 1))


def test_levels_of_a_read():
    words = [0] * contract.METER_WORDS
    words[contract.METER_CLEVEL_WORD:contract.METER_CLEVEL_WORD + 2] = [0x89ABCDEF, 0x12]
    words[contract.METER_PLEVEL_WORD] = 7
    words[contract.METER_TIME_WORD] = 99
    assert meter_regs.levels(words) == (0x1289ABCDEF, 7, 99)
