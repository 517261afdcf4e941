#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the register tables of the docs (and the forwarding checks' reasons) against the
contract the generator wrote.

The register maps are written once, in the generator (rtl/.../Contract.scala), which writes
build/rtl/contract/matcha_contract.py; the docs explain them in tables of their own. Every
row of those tables (`| 0x004 | INDEX | ...`) must give the offset the contract gives the
register of that name, and every register of the contract's group must have its row:
a doc that drifts from the hardware stops `make rtl`.

Usage: tools/check_docs.py build/rtl/contract/matcha_contract.py
"""

import re
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (file, the line that heads the table, the contract's prefix for its names, contract
# constants of the prefix that are not registers of the table)
TABLES = [
    ("docs/tables.md", "### Self-describing block", "INFO_",
     {"DESCRIPTORS", "DESCRIPTOR_BYTES", "MAGIC_VALUE", "VERSION_VALUE", "VERSION_MAJOR_SHIFT",
      "VERSION_MINOR_MASK", "WINDOW_BYTES", "ADDRESS_WIDTH"}),
    ("docs/tables.md", "### Table window", "WIN_", {"END", "STAGING_WORDS"}),
    ("docs/sessions.md", "| offset | name |", "SESSION_", {"AGE_BITS", "AGE_MAX", "INITIATOR_HIGH", "STATE_SYN_SENT", "STATE_SYN_ACK",
      "STATE_ESTABLISHED", "STATE_CLOSING", "STATE_RESET", "STATE_UDP"}),
    ("ip/corundum/README.md", "| offset from `0x800000` | name |", "APP_", {"BASE", "ID_VALUE", "VERSION_VALUE", "VERSION_MAJOR_SHIFT",
      "VERSION_MINOR_MASK", "ERROR_SEEN", "ERROR_WRITE", "ERROR_COUNT_SHIFT", "ERROR_COUNT_MASK",
      "CONTROL_TX_PIPELINE", "CONTROL_CPU_PORT", "MEMORY_TABLES", "MEMORY_READY"}),
    ("docs/pipeline.md", "| reason | name | check", "REASON_CHECK_", set()),
]

ROW = re.compile(r"^\|\s*`?(0x[0-9A-Fa-f]+)`?(?:\s*\+[^|]*)?\s*\|\s*([A-Z][A-Z0-9_]*)")


def rows(path, heading):
    """{name: offset} of the table that follows the line starting with `heading`."""
    lines = (REPO / path).read_text().splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith(heading)), None)
    if start is None:
        raise SystemExit(f"check_docs: {path}: no line starting with {heading!r}")
    found, in_table = {}, False
    for ln in lines[start:]:
        if ln.startswith("|"):
            in_table = True
            m = ROW.match(ln)
            if m:
                found.setdefault(m.group(2), int(m.group(1), 16))
        elif in_table:
            break
    return found


def main(contract_path):
    contract = runpy.run_path(contract_path)
    problems = []
    for path, heading, prefix, not_rows in TABLES:
        documented = rows(path, heading)
        for name, offset in documented.items():
            key = name if name.startswith(prefix) else prefix + name
            if key not in contract:
                problems.append(f"{path}: {name} has no register {key} in the contract")
            elif contract[key] != offset:
                problems.append(f"{path}: {name} is at 0x{offset:X} in the doc, 0x{contract[key]:X} in the contract")
        named = {name if name.startswith(prefix) else prefix + name for name in documented}
        for key in contract:
            if key.startswith(prefix) and key[len(prefix):] not in not_rows and key not in named:
                problems.append(f"{path}: the table under {heading!r} has no row for {key}")
    for p in problems:
        print("check_docs:", p)
    print(f"check_docs: {'FAILED' if problems else 'ok'} ({len(TABLES)} register tables)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
