#!/usr/bin/env python3
"""Writes hash_vectors.json: test vectors for the exact-match hash of docs/tables.md.

Each vector holds a key width, the key (hex of its big-endian bytes, zero-extended at the
most significant end to ceil(keyBits/8) bytes), CRC-64/XZ of those bytes, and the slot
index in each of 4 ways for a way of 1024 slots. The Scala generator, the Python model
and the C driver all check against this one file, so it is generated once and kept under
version control; rerunning this script reproduces it byte for byte (fixed seed).

The CRC is implemented here, bit by bit, independently of any library, and checked
against the standard check value before anything is written.
"""
import json
import pathlib
import random
import sys

POLY_REFLECTED = 0xC96C5795D7870F42  # 0x42F0E1EBA9EA3693, bit-reversed (reflected input)
MASK64 = (1 << 64) - 1

KEY_WIDTHS = (1, 8, 12, 16, 32, 44, 48, 104, 128, 136)
RANDOM_KEYS_PER_WIDTH = 8
SLOTS = 1024
WAYS = 4
SEED = 20240611


def crc64_xz(data: bytes) -> int:
    crc = MASK64
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ POLY_REFLECTED if crc & 1 else crc >> 1
    return crc ^ MASK64


def key_bytes(key: int, key_bits: int) -> bytes:
    return key.to_bytes((key_bits + 7) // 8, "big")


def vector(key: int, key_bits: int) -> dict:
    h = crc64_xz(key_bytes(key, key_bits))
    return {
        "keyBits": key_bits,
        "key": key_bytes(key, key_bits).hex(),
        "crc64": f"{h:016x}",
        "index": {"slots": SLOTS, "ways": [(h >> (16 * w)) & (SLOTS - 1) for w in range(WAYS)]},
    }


def main() -> None:
    check = crc64_xz(b"123456789")
    if check != 0x995DC9BBDF1939FA:
        sys.exit(f"CRC-64/XZ check value is {check:#018x}, expected 0x995dc9bbdf1939fa")

    rng = random.Random(SEED)
    vectors = []
    for bits in KEY_WIDTHS:
        keys = [0, (1 << bits) - 1] + [rng.getrandbits(bits) for _ in range(RANDOM_KEYS_PER_WIDTH)]
        # dict.fromkeys: narrow widths draw repeats; keep each key once, in order.
        vectors += [vector(k, bits) for k in dict.fromkeys(keys)]

    out = pathlib.Path(__file__).with_name("hash_vectors.json")
    # One vector per line: readable diffs, trivial to parse.
    lines = ",\n".join("  " + json.dumps(v, separators=(", ", ": ")) for v in vectors)
    out.write_text("[\n" + lines + "\n]\n")
    print(f"wrote {len(vectors)} vectors to {out}")


if __name__ == "__main__":
    main()
