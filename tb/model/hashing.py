# SPDX-License-Identifier: Apache-2.0
"""The exact-match hash of docs/tables.md, written from the CRC-64/XZ definition."""

POLY_REFLECTED = 0xC96C5795D7870F42  # 0x42F0E1EBA9EA3693, bit-reversed
ONES = (1 << 64) - 1
CHECK = 0x995DC9BBDF1939FA  # CRC-64/XZ("123456789"), the catalogued check value


def _byte_step(crc: int) -> int:
    """Eight steps of the reflected CRC's shift register, one per bit of a byte."""
    for _ in range(8):
        crc = (crc >> 1) ^ POLY_REFLECTED if crc & 1 else crc >> 1
    return crc


# The register's next state for each low byte, so that a byte costs one step, not eight
# (the scale benchmark hashes millions of keys).
_STEP = [_byte_step(b) for b in range(256)]


def crc64_xz(data: bytes) -> int:
    crc = ONES
    for byte in data:
        crc = (crc >> 8) ^ _STEP[(crc ^ byte) & 0xFF]
    return crc ^ ONES


def key_bytes(key: int, key_bits: int) -> bytes:
    """The key zero-extended to whole bytes, most significant byte first."""
    return key.to_bytes((key_bits + 7) // 8, "big")


def exact_index(key: int, key_bits: int, way: int, slots: int) -> int:
    """Slot of `key` in way `way` of a table with `slots` slots per way."""
    return (crc64_xz(key_bytes(key, key_bits)) >> (16 * way)) & (slots - 1)


assert crc64_xz(b"123456789") == CHECK


# The session table's slots (docs/sessions.md, "Slots"): the CRC through one round of
# PRESENT's substitution and bit permutation (Bogdanov et al., CHES 2007), so that a way's
# index bits are not linear in the key: keys that differ only in a counted-up field (a
# traffic generator's ports) reach every slot of every way.
PRESENT_SBOX = (0xC, 0x5, 0x6, 0xB, 0x9, 0x0, 0xA, 0xD, 0x3, 0xE, 0xF, 0x8, 0x4, 0x7, 0x1, 0x2)


def present_bit(i: int) -> int:
    """Where PRESENT's permutation takes bit i of 64."""
    return 63 if i == 63 else 16 * i % 63


def session_mix(h: int) -> int:
    substituted = 0
    for nibble in range(16):
        substituted |= PRESENT_SBOX[h >> 4 * nibble & 0xF] << 4 * nibble
    return sum(1 << present_bit(i) for i in range(64) if substituted >> i & 1)


def session_index(key: int, key_bits: int, way: int, slots: int) -> int:
    """Slot of `key` in way `way` of a session table with `slots` slots per way."""
    return (session_mix(crc64_xz(key_bytes(key, key_bits))) >> (16 * way)) & (slots - 1)
