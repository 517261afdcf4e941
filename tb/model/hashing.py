# SPDX-License-Identifier: Apache-2.0
"""The exact-match hash of docs/tables.md, written from the CRC-64/XZ definition."""

POLY_REFLECTED = 0xC96C5795D7870F42  # 0x42F0E1EBA9EA3693, bit-reversed
ONES = (1 << 64) - 1
CHECK = 0x995DC9BBDF1939FA  # CRC-64/XZ("123456789"), the catalogued check value


def crc64_xz(data: bytes) -> int:
    crc = ONES
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ POLY_REFLECTED if crc & 1 else crc >> 1
    return crc ^ ONES


def key_bytes(key: int, key_bits: int) -> bytes:
    """The key zero-extended to whole bytes, most significant byte first."""
    return key.to_bytes((key_bits + 7) // 8, "big")


def exact_index(key: int, key_bits: int, way: int, slots: int) -> int:
    """Slot of `key` in way `way` of a table with `slots` slots per way."""
    return (crc64_xz(key_bytes(key, key_bits)) >> (16 * way)) & (slots - 1)


assert crc64_xz(b"123456789") == CHECK
