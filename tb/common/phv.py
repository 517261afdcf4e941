# SPDX-License-Identifier: Apache-2.0
"""PHV packing by field name, from the generator's layout.json.

layout.json is the only thing the testbenches take from the generator besides the
Verilog: it says where each named field sits in the flat PHV bit vector. Header formats
themselves come from the reference model (tb/model), not from here.
"""

import json
from pathlib import Path


class Layout:
    def __init__(self, path):
        self.path = Path(path)
        with open(self.path) as f:
            self.raw = json.load(f)
        phv = self.raw["phv"]
        self.width = phv["width"]
        self.fields = {f["name"]: (f["offset"], f["width"]) for f in phv["fields"]}
        for name, (off, width) in self.fields.items():
            if off < 0 or width <= 0 or off + width > self.width:
                raise ValueError(f"{self.path}: field {name} [{off}+:{width}] outside PHV")
        self.config = self.raw.get("config")
        self.data_width = self.raw.get("dataWidth")
        self.header_bytes = self.raw.get("headerBytes")
        self.port_width = self.raw.get("portWidth")
        self.runt_bytes = self.raw.get("runtBytes")
        self.max_frame = self.raw.get("maxFrameBytes")
        self.parser_latency = self.raw.get("parser", {}).get("latency")
        self.parse_errors = self.raw.get("parseErrors", {})
        self.writable = self.raw.get("writable", {})

    def pack(self, values, strict=True):
        """PHV int from {name: value}; names absent from `values` are 0.

        With strict, every name must be in the layout and every value must fit.
        """
        vec = 0
        for name, value in values.items():
            if name not in self.fields:
                if strict:
                    raise KeyError(f"{name} is not a field of {self.path}")
                continue
            off, width = self.fields[name]
            value = int(value)
            if value < 0 or value >> width:
                raise ValueError(f"{name} = {value:#x} does not fit in {width} bits")
            vec |= value << off
        return vec

    def unpack(self, vec):
        vec = int(vec)
        return {name: (vec >> off) & ((1 << width) - 1)
                for name, (off, width) in self.fields.items()}

    def check_against(self, model_names):
        """Differences between the layout and the model's field names and widths:
        (missing_in_layout, extra_in_layout, width_mismatches)."""
        missing = sorted(n for n in model_names if n not in self.fields)
        extra = sorted(n for n in self.fields if n not in model_names)
        widths = sorted((n, model_names[n], self.fields[n][1]) for n in model_names
                        if n in self.fields and self.fields[n][1] != model_names[n])
        return missing, extra, widths


def compared_fields(phv):
    """Names of the PHV fields a parser result is judged on: every field of a valid
    header, every header's valid bit, the push valid bits and meta.*."""
    names = []
    valid = {k[: -len(".valid")] for k, v in phv.items() if k.endswith(".valid") and v}
    for name in phv:
        if name.startswith("meta.") or name.endswith(".valid"):
            names.append(name)
        elif name.startswith("hdr."):
            prefix = name.rsplit(".", 1)[0]
            if prefix in valid:
                names.append(name)
    return names


def diff(expected, got, names=None):
    """List of 'name: expected X, got Y' for the names that differ."""
    out = []
    for name in names if names is not None else expected:
        e, g = expected.get(name), got.get(name)
        if e != g:
            ef = f"{e:#x}" if isinstance(e, int) else repr(e)
            gf = f"{g:#x}" if isinstance(g, int) else repr(g)
            out.append(f"{name}: expected {ef}, got {gf}")
    return out
