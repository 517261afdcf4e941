# SPDX-License-Identifier: Apache-2.0
"""The built-in L2/L3 program with an ACL, written by hand from docs/pipeline.md ("The
built-in program"), in the format of the "program" section of layout.json.

The tests use it as the expected description: the generator's layout.json must agree with
it in everything the contract fixes (tb.model.program.compare). Values the generator
chooses (table index, latency, ways, LPM geometry) are given as the docs' example has them
and are not compared.
"""

import copy

from tb.model import CHECK_REASONS

# Reasons (docs/pipeline.md, table of the built-in program).
L2_DROP = 0x20
L3_DROP = 0x21
NO_ROUTE = 0x22
ACL_DENY = 0x23
ACL_TO_HOST = 0x24

# Action ids.
L2_NO_OP, L2_FORWARD, L2_DROP_ACTION = 0, 1, 2
ROUTE, ROUTE_DROP, NO_ROUTE_ACTION = 0, 1, 2
PERMIT, DENY, TO_HOST = 0, 1, 2

L2_FWD = {
    "name": "l2_fwd", "index": 0, "kind": "exact", "size": 64,
    "keyWidth": 48, "dataWidth": 4, "latency": 3, "counters": True, "ways": 4,
    "key": [{"fields": ["hdr.eth.dst"], "width": 48}],
    "actions": [
        {"name": "no_op", "id": 0, "params": [], "ops": []},
        {"name": "forward", "id": 1,
         "params": [{"name": "port", "width": 4, "offset": 0}],
         "ops": [{"op": "set", "field": "meta.egressPort", "param": "port"}]},
        {"name": "drop", "id": 2, "params": [], "ops": [{"op": "drop", "reason": L2_DROP}]},
    ],
    "default": {"action": "no_op", "data": 0},
}

IPV4_LPM = {
    "name": "ipv4_lpm", "index": 1, "kind": "lpm", "size": 64,
    "keyWidth": 32, "dataWidth": 100, "latency": 5, "counters": True,
    "applyIf": ["hdr.ipv4.valid"],
    "key": [{"fields": ["hdr.ipv4.dst"], "width": 32}],
    "lpm": {"fanout": 10, "levels": 3, "nodes": [1, 6, 26], "pointerBits": 15, "memoryLevels": 0},
    "actions": [
        # route(port, dmac, smac): first parameter in the most significant bits; the
        # forwarding checks of docs/pipeline.md come first.
        {"name": "route", "id": 0,
         "params": [{"name": "port", "width": 4, "offset": 96},
                    {"name": "dmac", "width": 48, "offset": 48},
                    {"name": "smac", "width": 48, "offset": 0}],
         "ops": [{"op": "check", "check": "IPV4_OPTIONS", "field": "hdr.ipv4.ihl",
                  "fate": "punt", "reason": CHECK_REASONS["IPV4_OPTIONS"]},
                 {"op": "check", "check": "IPV4_CHECKSUM", "field": "hdr.ipv4.checksumOk",
                  "fate": "drop", "reason": CHECK_REASONS["IPV4_CHECKSUM"]},
                 {"op": "check", "check": "IP_LENGTH", "field": "hdr.ipv4.lengthOk",
                  "fate": "drop", "reason": CHECK_REASONS["IP_LENGTH"]},
                 {"op": "check", "check": "TTL_EXPIRED", "field": "hdr.ipv4.ttl",
                  "fate": "punt", "reason": CHECK_REASONS["TTL_EXPIRED"]},
                 {"op": "set", "field": "meta.egressPort", "param": "port"},
                 {"op": "set", "field": "hdr.eth.dst", "param": "dmac"},
                 {"op": "set", "field": "hdr.eth.src", "param": "smac"},
                 {"op": "decrement", "field": "hdr.ipv4.ttl"}]},
        {"name": "drop", "id": 1, "params": [], "ops": [{"op": "drop", "reason": L3_DROP}]},
        {"name": "no_route", "id": 2, "params": [],
         "ops": [{"op": "punt", "reason": NO_ROUTE}]},
    ],
    "default": {"action": "no_route", "data": 0},
}

ACL = {
    "name": "acl", "index": 2, "kind": "ternary", "size": 64,
    "keyWidth": 104, "dataWidth": 1, "latency": 7, "counters": True,
    "applyIf": ["hdr.ipv4.valid"],
    "key": [{"fields": ["hdr.ipv4.src"], "width": 32},
            {"fields": ["hdr.ipv4.dst"], "width": 32},
            {"fields": ["hdr.ipv4.protocol"], "width": 8},
            {"fields": ["hdr.tcp.srcPort", "hdr.udp.srcPort"], "width": 16},
            {"fields": ["hdr.tcp.dstPort", "hdr.udp.dstPort"], "width": 16}],
    "actions": [
        {"name": "permit", "id": 0, "params": [], "ops": []},
        {"name": "deny", "id": 1, "params": [], "ops": [{"op": "drop", "reason": ACL_DENY}]},
        {"name": "to_host", "id": 2, "params": [],
         "ops": [{"op": "punt", "reason": ACL_TO_HOST}]},
    ],
    "default": {"action": "permit", "data": 0},
}

PROGRAM = {
    "name": "l2l3",
    "latency": 8,
    "stages": [[0, 1, 2]],
    "tables": [L2_FWD, IPV4_LPM, ACL],
}

# ACL key layout: (name, width), most significant first.
ACL_PARTS = [("src", 32), ("dst", 32), ("protocol", 8), ("srcPort", 16), ("dstPort", 16)]
ACL_WIDTH = sum(w for _, w in ACL_PARTS)


def program():
    """A fresh copy of the docs' program description."""
    return copy.deepcopy(PROGRAM)


def acl_rule(**parts):
    """(value, mask) of an ACL rule from parts given as a value (exact match), a
    (value, prefix length) pair, or a (value, mask) dict {"value", "mask"}; parts not
    given are wildcards. E.g. acl_rule(dst=(0x0a000000, 8), protocol=6, dstPort=80)."""
    unknown = set(parts) - {n for n, _ in ACL_PARTS}
    if unknown:
        raise ValueError(f"no ACL key part(s) {sorted(unknown)}")
    value = mask = 0
    for name, width in ACL_PARTS:
        full = (1 << width) - 1
        p = parts.get(name)
        if p is None:
            v, m = 0, 0
        elif isinstance(p, dict):
            v, m = p["value"], p["mask"]
        elif isinstance(p, tuple):
            v, length = p
            m = full ^ ((1 << (width - length)) - 1)
        else:
            v, m = p, full
        value = (value << width) | (v & m)
        mask = (mask << width) | m
    return value, mask


def range_to_masks(lo, hi, width=16):
    """The (value, mask) pairs whose union is exactly the range lo..hi of `width`-bit
    numbers: the usual split into aligned power-of-two blocks."""
    if not 0 <= lo <= hi < 1 << width:
        raise ValueError(f"range {lo}..{hi} of {width}-bit values")
    full = (1 << width) - 1
    out = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << width
        while size > hi - lo + 1:
            size >>= 1
        out.append((lo, full ^ (size - 1)))
        lo += size
    return out
