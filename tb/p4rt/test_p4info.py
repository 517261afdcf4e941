# SPDX-License-Identifier: Apache-2.0
"""The P4Info the generator writes beside every layout (rtl/.../P4Info.scala), checked with
the `p4runtime` package's P4Info class and against the layout.json of the same build:
every table with its size, match fields (names, widths, match kinds by the table's kind),
actions and parameters, initial default action and direct counter; every meter array; the
packet-in and packet-out metadata; the build id; and the ids, recomputed here from the names
by p4c's rule with a Jenkins one-at-a-time hash of this file's own (checked against the
hash's published values).

Run: pytest tb/p4rt/test_p4info.py
"""

import json

import pytest
from google.protobuf import json_format, text_format
from p4.config.v1 import p4info_pb2

from tb.common import sim

LAYOUTS = sorted(sim.RTL_DIR.glob("*/layout*.json"))
CONTROL = "ingress"
PREFIX = dict(p4info_pb2.P4Ids.Prefix.items())


def one_at_a_time(name):
    """Bob Jenkins' one-at-a-time hash, 32 bits."""
    h = 0
    for b in name.encode():
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    return (h + (h << 15)) & 0xFFFFFFFF


def test_one_at_a_time_known_values():
    # The values published with the hash (Wikipedia, "Jenkins hash function").
    assert one_at_a_time("a") == 0xCA2E9442
    assert one_at_a_time("The quick brown fox jumps over the lazy dog") == 0x519E91F5


def p4c_ids(symbols):
    """{(prefix, name): id} as p4c assigns them: each kind's names in sorted order, the id
    prefix << 24 | the hash's low 24 bits, the next free value on a collision."""
    taken, ids = set(), {}
    for prefix, name in sorted(set(symbols)):
        h = one_at_a_time(name)
        while (prefix << 24 | (h & 0xFFFFFF)) in taken:
            h = (h + 1) & 0xFFFFFFFF
        ids[(prefix, name)] = prefix << 24 | (h & 0xFFFFFF)
        taken.add(ids[(prefix, name)])
    return ids


def load(layout_path):
    name = layout_path.name.replace("layout", "p4info", 1)
    text = layout_path.with_name(name).with_suffix(".txt")
    generated = layout_path.with_name(name)
    info = text_format.Parse(text.read_text(), p4info_pb2.P4Info())
    assert info == json_format.Parse(generated.read_text(), p4info_pb2.P4Info()), \
        f"{text} is not {generated}"
    return info, json.loads(layout_path.read_text())


def match_kinds(table):
    kinds = {"exact": ["EXACT"] * len(table["key"]), "direct": ["EXACT"] * len(table["key"]),
             "mem_exact": ["EXACT"] * len(table["key"]),
             "lpm": ["EXACT"] * (len(table["key"]) - 1) + ["LPM"],
             "ternary": ["RANGE" if k.get("range") else "TERNARY" for k in table["key"]]}
    return [p4info_pb2.MatchField.MatchType.Value(k) for k in kinds[table["kind"]]]


def test_every_layout_has_a_p4info():
    assert LAYOUTS, f"no layout under {sim.RTL_DIR} (run `make rtl`)"
    for layout in LAYOUTS:
        p4info = layout.with_name(layout.name.replace("layout", "p4info", 1)).with_suffix(".txt")
        assert p4info.exists(), f"{layout} has no {p4info.name} beside it"


@pytest.mark.parametrize("layout_path", LAYOUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_p4info_follows_layout(layout_path):
    info, layout = load(layout_path)
    program = layout["program"]
    phv = {f["name"]: f["width"] for f in layout["phv"]["fields"]}
    assert info.pkg_info.name == program["name"]
    assert info.pkg_info.version == f"0x{layout['buildId']:08x}"
    assert info.pkg_info.arch == "matcha"

    actions = {a.preamble.id: a for a in info.actions}
    counters = {c.preamble.id: c for c in info.direct_counters}
    assert [t.preamble.name for t in info.tables] == [f"{CONTROL}.{t['name']}" for t in program["tables"]]
    for t, want in zip(info.tables, program["tables"]):
        where = want["name"]
        assert t.size == want["entries"] <= want["size"], where
        assert [(f.id, f.name, f.bitwidth) for f in t.match_fields] == \
            [(i + 1, "|".join(k["fields"]), k["width"]) for i, k in enumerate(want["key"])], where
        assert [f.match_type for f in t.match_fields] == match_kinds(want), where
        refs = [actions[r.id] for r in t.action_refs]
        assert [a.preamble.name for a in refs] == [f"{CONTROL}.{where}.{a['name']}" for a in want["actions"]], where
        for a, wa in zip(refs, want["actions"]):
            assert [(p.id, p.name, p.bitwidth) for p in a.params] == \
                [(i + 1, p["name"], p["width"]) for i, p in enumerate(wa["params"])], f"{where}.{wa['name']}"
        default = next(a for a in want["actions"] if a["name"] == want["default"]["action"])
        assert actions[t.initial_default_action.action_id].preamble.name == f"{CONTROL}.{where}.{default['name']}"
        data = want["default"]["data"]
        assert [(arg.param_id, int.from_bytes(arg.value, "big")) for arg in t.initial_default_action.arguments] == \
            [(i + 1, data >> p["offset"] & ((1 << p["width"]) - 1)) for i, p in enumerate(default["params"])]
        if want["counters"]:
            (cid,) = t.direct_resource_ids
            assert counters[cid].direct_table_id == t.preamble.id
            assert counters[cid].spec.unit == p4info_pb2.CounterSpec.BOTH
        else:
            assert not t.direct_resource_ids, where
    assert len(counters) == sum(t["counters"] for t in program["tables"])
    assert [(m.preamble.name, m.size) for m in info.meters] == \
        [(f"{CONTROL}.{m['name']}", m["size"]) for m in program["meters"]]

    headers = {h.preamble.name: [(m.id, m.name, m.bitwidth) for m in h.metadata]
               for h in info.controller_packet_metadata}
    assert headers == {
        "packet_in": [(1, "ingress_port", phv["meta.ingressPort"]), (2, "reason", phv["meta.reason"])],
        "packet_out": [(1, "egress_port", phv["meta.egressPort"]), (2, "submit_to_ingress", 1),
                       (3, "ingress_port", phv["meta.ingressPort"])]}


@pytest.mark.parametrize("layout_path", LAYOUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_p4info_ids_and_aliases(layout_path):
    info, _ = load(layout_path)
    kinds = [("TABLE", info.tables), ("ACTION", info.actions), ("DIRECT_COUNTER", info.direct_counters),
             ("METER", info.meters), ("CONTROLLER_HEADER", info.controller_packet_metadata)]
    preambles = [(PREFIX[k], e.preamble) for k, entities in kinds for e in entities]
    want = p4c_ids((prefix, p.name) for prefix, p in preambles)
    for prefix, p in preambles:
        assert p.id == want[(prefix, p.name)], p.name
    names = [p.name for _, p in preambles]
    for _, p in preambles:
        # The shortest suffix of whole components that no other name ends with.
        parts = p.name.split(".")
        unique = [".".join(parts[-k:]) for k in range(1, len(parts) + 1)
                  if not any(o != p.name and (o == ".".join(parts[-k:]) or o.endswith("." + ".".join(parts[-k:])))
                             for o in names)]
        assert p.alias == unique[0], p.name
