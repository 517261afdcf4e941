#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes hash_vectors.json: test vectors for the exact-match hash of docs/tables.md and
the session hash of docs/sessions.md.

Each vector holds a key width, the key (hex of its big-endian bytes, zero-extended at the
most significant end to ceil(keyBits/8) bytes), CRC-64/XZ of those bytes, the exact
table's slot index in each of 4 ways for a way of 1024 slots (`index`), and the session
table's (`session`). The Scala generator, the Python model
and the C driver all check against this one file, so it is generated once and kept under
version control; rerunning this script reproduces it byte for byte (fixed seed).

The CRC is tb/model/hashing.py's, written from the CRC-64/XZ definition and checked
against the catalogued check value before anything is written.
"""
import json
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]))
from tb.model.hashing import CHECK, crc64_xz, key_bytes, session_mix  # noqa: E402


KEY_WIDTHS = (1, 8, 12, 16, 32, 44, 48, 104, 128, 136)
RANDOM_KEYS_PER_WIDTH = 8
SLOTS = 1024
WAYS = 4
SEED = 20240611


def vector(key: int, key_bits: int) -> dict:
    h = crc64_xz(key_bytes(key, key_bits))
    return {
        "keyBits": key_bits,
        "key": key_bytes(key, key_bits).hex(),
        "crc64": f"{h:016x}",
        "index": {"slots": SLOTS, "ways": [(h >> (16 * w)) & (SLOTS - 1) for w in range(WAYS)]},
        "session": {"slots": SLOTS,
                    "ways": [(session_mix(h) >> (16 * w)) & (SLOTS - 1) for w in range(WAYS)]},
    }


def main() -> None:
    check = crc64_xz(b"123456789")
    if check != CHECK:
        sys.exit(f"CRC-64/XZ check value is {check:#018x}, expected {CHECK:#018x}")

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
