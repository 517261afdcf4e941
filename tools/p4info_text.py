#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The text format of every P4Info the generator wrote.

    tools/p4info_text.py build/rtl

The generator writes each pipeline's P4Info beside its layout as the proto3 JSON mapping of
p4info.proto's P4Info message (`p4info.json`, `p4info-<program>.json`; rtl/.../P4Info.scala
says why). This parses each with the `p4runtime` package's P4Info class, which refuses a
member the message does not have or a value of the wrong type, and writes the text format
P4Runtime clients (p4runtime-shell, ONOS) load: `p4info.txt`, `p4info-<program>.txt`.
"""
import sys
from pathlib import Path

from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2


def convert(path):
    info = json_format.Parse(path.read_text(), p4info_pb2.P4Info())
    out = path.with_suffix(".txt")
    out.write_text(text_format.MessageToString(info))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} RTL_OUT")
    files = sorted(Path(sys.argv[1]).glob("*/p4info*.json"))
    if not files:
        sys.exit(f"{sys.argv[1]}: no p4info*.json (make rtl first)")
    for f in files:
        try:
            convert(f)
        except json_format.ParseError as e:
            sys.exit(f"{f}: not a P4Info: {e}")
    print(f"p4info_text: {len(files)} P4Info files written as text")


if __name__ == "__main__":
    main()
