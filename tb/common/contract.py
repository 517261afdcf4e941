# SPDX-License-Identifier: Apache-2.0
"""The control contract, as the generator wrote it: build/rtl/contract/matcha_contract.py
(register offsets, command, status and kind codes, reasons; docs/tables.md). Testbenches
take every such constant from here, never from a copy of their own."""

import importlib.util
from pathlib import Path

GENERATED = Path(__file__).resolve().parents[2] / "build" / "rtl" / "contract" / "matcha_contract.py"
if not GENERATED.exists():
    raise ImportError(f"{GENERATED} is missing: `make rtl` generates it")
_spec = importlib.util.spec_from_file_location("matcha_contract", GENERATED)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
globals().update({name: value for name, value in vars(_module).items() if name.isupper()})
