# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_overlay tests (tb/overlay/overlay_tb.py) and the overlay
program's description against docs/overlay.md.

Run one case: pytest tb/overlay -k "outbound and w64" [--matcha-seed N]

The overlay model is built for the 64-bit configuration in `make test`; the 512-bit one is
the benchmark's (bench/).
"""

import json

import pytest

from tb.common import sim
from tb.model.program import Program

TOPLEVEL = "matcha_overlay"
LAYOUT = "layout-overlay.json"
# The overlay with its CA->PA mappings in memory (docs/overlay.md, "Mappings in memory"),
# generated at 64 bits: its model runs every scenario in `make test`, the mapping table's
# reads answered by a memory model 100 clocks late. The on-chip mapping's model runs them
# in `make soak`; matcha-sim's tests (tb/sim) run that program in `make test`.
MEM_TOPLEVEL = "matcha_overlay_mem"
MEM_LAYOUT = "layout-overlay_mem.json"
CONFIGS = ("w64",)


def layout_file(config, layout=LAYOUT):
    return sim.RTL_DIR / config / layout


test_overlay = sim.cocotb_entry(
    "tb.overlay.overlay_tb",
    [sim.Model(c, MEM_TOPLEVEL, layout=MEM_LAYOUT) for c in CONFIGS] +
    [sim.Model(c, TOPLEVEL, layout=LAYOUT, soak=True) for c in CONFIGS])


# The scales of docs/overlay.md: the board's at 64 bits, the Corundum card's at 512. The
# exact tables keyed by user data have `headroom` times their entries in slots.
SCALE = {"w64": {"enis": 256, "mappings": 256, "route": 256, "acl": 64, "sessions": 1024, "headroom": 1},
         "w512": {"enis": 1024, "mappings": 8192, "route": 32768, "acl": 6144, "sessions": 65536,
                  "headroom": 2}}


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_overlay_program(config):
    """The overlay program as docs/overlay.md describes it: its tables in pipeline order,
    the session stage right after the ACL, the meters after the tables, its metadata; the
    model finds nothing inconsistent in the description."""
    if not layout_file(config).exists():
        pytest.skip(f"{layout_file(config)} not found")
    layout = json.loads(layout_file(config).read_text())
    p = Program(layout, strict=False)
    assert p.problems == []
    prog = layout["program"]
    assert [t["name"] for t in prog["tables"]] == [
        "frame_class", "vip", "direction", "eni_out", "eni_in", "eni", "inbound_routing",
        "pa_validation", "acl", "verdict", "route", "policer", "colour", "mapping", "vnet",
        "encap"]
    (session,) = prog["sessions"]
    assert (session["after"], session["size"], session["reason"]) == ("acl", SCALE[config]["sessions"], 0x39)
    assert session["fields"]["zone"] == {"fields": ["meta.eni"], "width": 24}
    (meters,) = prog["meters"]
    assert (meters["name"], meters["size"]) == ("policers", SCALE[config]["enis"])
    sizes = {t["name"]: t["size"] for t in prog["tables"]}
    scale = SCALE[config]
    promised = {"eni_out": scale["enis"], "eni_in": scale["enis"], "pa_validation": scale["enis"],
                "mapping": scale["mappings"]}
    assert {k: sizes[k] for k in promised} == {k: n * scale["headroom"] for k, n in promised.items()}
    # What the table promises whatever the keys (P4Info's size): its entries, not its slots.
    entries = {t["name"]: t["entries"] for t in prog["tables"]}
    assert {k: entries[k] for k in promised} == promised
    assert all(entries[k] == sizes[k] for k in sizes if k not in promised)
    assert (sizes["route"], sizes["acl"]) == (scale["route"], scale["acl"])
    assert {m["name"]: m["width"] for m in prog["metadata"]}["meta.eni"] == 10
    # Every stage but the ones that share: a table keyed on what an earlier one of its
    # stage writes, or conditioned on its drop, starts the next.
    names = [[prog["tables"][i]["name"] for i in s] for s in prog["stages"]]
    assert ["vip", "direction"] in names and ["policer"] in names


def test_layout_overlay_mem_program():
    """overlay_mem is the overlay program but for its mapping, route and session tables. The
    mappings: a mem_exact table on a 512-bit port of its own (m_axi_mapping) whose 128-byte
    buckets (two beats) hold six 18-byte mappings (docs/tables.md: 2 + 6 bytes of VNET and
    address + 10 of underlay address and MAC, three a beat), as many buckets as the on-chip
    table's mappings, results 512 clocks after the key, a late one punted with MAPPING_LATE
    (0x40). The sessions: on a port of their own (m_axi_sessions), six 19-byte sessions a
    128-byte bucket (docs/sessions.md), a quarter as many buckets as the on-chip table's
    sessions, results 512
    clocks after the packet, late ones punted with 0x41 and busy ones with 0x42. The routes:
    the same tree with its two lowest levels each on a port of its own (m_axi_route_0 and
    m_axi_route_1), each given 512 clocks, a late lookup punted with 0x43, no per-entry
    counters. Each port
    has 6-bit ids, and each table a region of its own (sessions from 0, mappings from 1 GiB,
    routes from 1.5 GiB), so that the three can share one channel (ip/corundum/README.md,
    "Tables in the card's memory")."""
    config = "w64"
    if not layout_file(config, MEM_LAYOUT).exists():
        pytest.skip(f"{layout_file(config, MEM_LAYOUT)} not found")
    mem = json.loads(layout_file(config, MEM_LAYOUT).read_text())["program"]
    chip = json.loads(layout_file(config).read_text())["program"]
    assert Program({"program": mem}, strict=False).problems == []
    on_chip = {t["name"]: t for t in chip["tables"]}
    for t in mem["tables"]:
        if t["name"] not in ("mapping", "route"):
            assert t == on_chip[t["name"]], t["name"]
    route = next(t for t in mem["tables"] if t["name"] == "route")
    chip_route = on_chip["route"]
    assert route["memory"] == {"ports": ["m_axi_route_0", "m_axi_route_1"], "dataWidth": 512, "bucketBytes": 64,
                               "addressWidth": 31, "idWidth": 6,
                               "baseAddress": 3 << 29, "memoryLatency": 320, "lateReason": 0x43}
    assert route["lpm"] == {**chip_route["lpm"], "memoryLevels": 2}
    assert (route["counters"], route["latency"]) == (False, chip_route["latency"] - 2 + 2 * 512)
    assert {k: v for k, v in route.items() if k not in ("memory", "lpm", "counters", "latency")} == \
        {k: v for k, v in chip_route.items() if k not in ("lpm", "counters", "latency")}
    mapping = next(t for t in mem["tables"] if t["name"] == "mapping")
    assert (mapping["kind"], mapping["counters"], mapping["latency"]) == ("mem_exact", False, 512)
    assert mapping["memory"] == {"ports": ["m_axi_mapping"], "dataWidth": 512, "bucketBytes": 128, "addressWidth": 31, "idWidth": 6,
                                 "baseAddress": 1 << 30, "memoryLatency": 320, "lateReason": 0x40}
    assert mapping["size"] == 6 * SCALE[config]["mappings"]  # 128 bytes of buckets of six a mapping
    assert [a["name"] for a in mapping["actions"]] == [a["name"] for a in on_chip["mapping"]["actions"]]
    (sessions,), (chip_sessions,) = mem["sessions"], chip["sessions"]
    assert sessions["memory"] == {"ports": ["m_axi_sessions"], "dataWidth": 512, "bucketBytes": 128, "addressWidth": 31, "idWidth": 6,
                                  "baseAddress": 0, "memoryLatency": 320, "lateReason": 0x41, "busyReason": 0x42}
    assert (sessions["size"], sessions["ways"], sessions["latency"]) == (6 * SCALE[config]["sessions"] // 4, 6, 512)
    assert {k: v for k, v in sessions.items() if k not in ("memory", "size", "ways", "latency", "index")} == \
        {k: v for k, v in chip_sessions.items() if k not in ("size", "ways", "latency", "index")}
    assert mem["latency"] - chip["latency"] == 512 - on_chip["mapping"]["latency"] + \
        512 - chip_sessions["latency"] + route["latency"] - chip_route["latency"]
