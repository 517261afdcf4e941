# SPDX-License-Identifier: Apache-2.0
"""pytest entry for the matcha_l2l3 tests (tb/pipeline/pipeline_tb.py), and checks that
need no simulator: the generator's program description against docs/pipeline.md, its
buildId, the table control code against the driver on a recording bus, the output
matcher.

Run one case: pytest tb/pipeline -k "random_traffic and w64" [--matcha-seed N]
"""

import json
import random
import zlib

import pytest

from tb.common import driver, sim
from tb.model import parse
from tb.model.program import Program, compare, program_section
from tb.pipeline import l2l3, traffic
from tb.pipeline.control import Control, descriptors_for, entry_args, range_pairs, snapshot_for
from tb.pipeline.outputs import Emitted, Sent, match

TOPLEVEL = "matcha_l2l3"
test_pipeline = sim.cocotb_entry("tb.pipeline.pipeline_tb",
                                 [sim.Model(c, TOPLEVEL) for c in sim.CONFIGS])


# ------------------------------------------------------------------ the layout


def _layout(config):
    path = sim.layout_file(config)
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = path.read_text()
    layout = json.loads(text)
    if program_section(layout) is None:
        pytest.skip(f"{path} has no program section")
    return text, layout


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_program_matches_docs(config):
    """layout.json's program is the built-in program of docs/pipeline.md (tables, keys,
    applyIf, actions with ids, parameters and ops, defaults), and is consistent by the
    rules there (key widths, parameter packing, dataWidth = the widest action's sum, at least 1)."""
    _, layout = _layout(config)
    assert compare(layout, l2l3.PROGRAM) == []
    p = Program(layout, strict=False)
    assert p.problems == []


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_build_id(config):
    """buildId is the CRC-32 of the layout text without the buildId line."""
    text, layout = _layout(config)
    rest = "".join(ln for ln in text.splitlines(keepends=True) if '"buildId"' not in ln)
    assert layout.get("buildId") == zlib.crc32(rest.encode())


@pytest.mark.parametrize("config", sim.CONFIGS)
@pytest.mark.parametrize("program", ["", "-policer", "-conntrack"])
def test_layout_objects_follow_the_descriptor_rules(config, program):
    """layout.json's `objects` are the descriptors the generator's control bus registered;
    they are what docs/tables.md and docs/sessions.md make of the program section: tables
    in stage order, then meter arrays, then the session table, each with its kind, flags,
    widths, window base and geometry."""
    path = sim.layout_file(config).with_name(f"layout{program}.json")
    layout = json.loads(path.read_text())
    expected = descriptors_for(layout["program"])
    assert [d["index"] for d in layout["objects"]] == list(range(len(expected)))
    names = [t["name"] for t in layout["program"]["tables"]] + \
        [m["name"] for m in layout["program"]["meters"]] + [s["name"] for s in layout["program"]["sessions"]]
    by_index = {i: n for n, i in zip(names, [t["index"] for t in layout["program"]["tables"]]
                                     + [m["index"] for m in layout["program"]["meters"]]
                                     + [s["index"] for s in layout["program"]["sessions"]])}
    for obj, (index, d) in zip(layout["objects"], expected):
        assert obj["name"] == by_index[index]
        got = driver.Descriptor(*(obj[k] for k in ("kind", "keyWidth", "size", "dataWidth", "base", "geometry",
                                                    "latency", "extra")))
        assert got == d, f"{obj['name']}: layout.json has {got}, the rules give {d}"


@pytest.mark.parametrize("config", sim.CONFIGS)
def test_layout_stages_and_latency(config):
    """One stage holds all three tables (no key reads what an earlier table writes), and
    the latency is max(table latency) + 2."""
    _, layout = _layout(config)
    prog = layout["program"]
    assert prog["stages"] == [[0, 1, 2]]
    assert prog["latency"] == max(t["latency"] for t in prog["tables"]) + 2


# --------------------------------------------------------- control, without a DUT


def test_driver_dry_run(matcha_seed):
    """Random tables through the driver on a recording bus of the block the docs' program
    describes: every change the driver makes is a clean recording (no writes when it
    refuses), the model follows, and the frame maker's frames parse."""
    rng = random.Random(f"{matcha_seed}:dry_run")
    desc = l2l3.program()
    program = Program(desc)
    ctl = Control(snapshot_for(desc), program)
    l2 = traffic.random_l2(rng, program["l2_fwd"], 50)
    routes = traffic.random_routes(rng, program["ipv4_lpm"], 60)
    acl = traffic.random_acl(rng, program["acl"], 64, prefixes=[e for e, _, _ in routes],
                             ranges=range_pairs)
    counts = {}
    for table, items in (("l2_fwd", l2), ("ipv4_lpm", routes), ("acl", acl)):
        added = 0
        for entry, action, data in items:
            upd = ctl.add(table, *entry, action=action, data=data)
            try:
                writes = ctl.record(upd)
            except driver.MatchaError as e:
                assert e.code in (driver.ENOSPC, driver.EEXIST), str(e)
                continue
            assert writes and writes[-1].is_command
            upd.commit()
            added += 1
        counts[table] = added
    assert counts["l2_fwd"] >= 40 and counts["acl"] >= 1
    assert len(program["ipv4_lpm"]) == counts["ipv4_lpm"] > 10
    for table in ("l2_fwd", "ipv4_lpm", "acl"):
        for e in program[table].entries()[:5]:
            upd = ctl.delete(table, *entry_args(e))
            ctl.record(upd)
            upd.commit()
    upd = ctl.set_default("ipv4_lpm", "route", traffic.random_route_data(
        rng, program["ipv4_lpm"]))
    assert ctl.record(upd)
    upd.commit()
    maker = traffic.FrameMaker(rng, program)
    outcomes = set()
    for _ in range(300):
        name, frame, port, bad = maker.frame()
        phv = parse(frame, ingress_port=port, bad_frame=bad, header_bytes=128)  # w64's window
        after = program.apply(phv)
        outcomes.add((after["meta.drop"], after["meta.punt"], after["meta.reason"]))
    assert len(outcomes) >= 5, outcomes
    ctl.close()


def test_range_pairs_match_model():
    for lo, hi in ((0, 0), (1000, 2054), (0, 65535), (53, 53), (1, 65534), (1024, 65535)):
        assert range_pairs(lo, hi) == l2l3.range_to_masks(lo, hi)


# --------------------------------------------------------------------- matcher


def _answers(table):
    """answer(sent, state) from {name: [answer per state]}."""
    return lambda s, state: table[s.name][min(state, len(table[s.name]) - 1)]


def test_match_in_order_and_interleaved():
    t = {"u": {"punt": 0, "egressPort": 1, "reason": 0}}
    sent = [Sent("a", b"a", 0, False, 0), Sent("b", b"b", 0, False, 0),
            Sent("c", b"c", 0, False, 0)]
    table = {"a": [(b"A", t["u"], None)], "b": [(None, None, 0x23)],
             "c": [(b"C", t["u"], None)]}
    outs = [Emitted(0, b"A", t["u"]), Emitted(0, b"C", t["u"])]
    drops = [Emitted(0, reason=0x23)]
    assignment, errors = match(sent, outs, drops, _answers(table))
    assert errors == [] and [k for k, _, _ in assignment] == ["out", "drop", "out"]
    # Wrong reason, wrong bytes, a missing output: reported at the frame.
    _, errors = match(sent, outs, [Emitted(0, reason=0x20)], _answers(table))
    assert "frame 1 b" in errors[0]
    _, errors = match(sent, [Emitted(0, b"A", t["u"]), Emitted(0, b"X", t["u"])], drops,
                      _answers(table))
    assert "frame 2 c" in errors[0] and "bytes differ" in errors[0]
    _, errors = match(sent, outs[:1], drops, _answers(table))
    assert "frame 2 c" in errors[0]


def test_match_alternatives_by_state():
    """A frame whose answer changed with the tables: accepted in either state its timing
    allows, to either stream, and not in a state that began after its output."""
    u = {"punt": 0, "egressPort": 1, "reason": 0}
    p = {"punt": 1, "egressPort": 1, "reason": 0x22}
    sent = [Sent("x", b"x", 0, False, 0), Sent("y", b"y", 0, False, 0)]
    table = {"x": [(b"x", p, None), (None, None, 0x21)], "y": [(b"y", p, None),
                                                                (b"Y", u, None)]}
    ans = _answers(table)
    # x dropped in state 1, y routed in state 1.
    a, e = match(sent, [Emitted(1, b"Y", u)], [Emitted(1, reason=0x21)], ans)
    assert e == [] and a == [("drop", 0, 1), ("out", 0, 1)]
    # x punted in state 0, y still old in state 0 although state 1 had begun.
    a, e = match(sent, [Emitted(1, b"x", p), Emitted(1, b"y", p)], [], ans)
    assert e == [] and [k for k, _, _ in a] == ["out", "out"]
    # y's new answer when its output appeared before the change began: refused.
    a, e = match(sent, [Emitted(0, b"x", p), Emitted(0, b"Y", u)], [], ans)
    assert a is None and "frame 1 y" in e[0]
