# SPDX-License-Identifier: Apache-2.0
"""Matching what the DUT emitted against what the model allows, frame by frame, in order.

Each frame sent produces exactly one output: a frame on m_axis (with tuser) or a pulse on
drop_valid (with a reason). Both streams keep frame order, so the outputs are an
interleaving of the two streams; which stream a frame went to is known only once its
expected result is known.

While tables change under traffic, a frame may show the tables as they were before or
after each change that overlapped it: its acceptable results are the model's answers for
every table state from the last one complete when the frame was queued to the last one
begun when its output appeared. `match` finds an assignment of outputs to frames in which
every frame's output is one of its acceptable results (a small dynamic programme over the
number of m_axis frames consumed), or reports the first frame for which none exists.
"""

from dataclasses import dataclass, field

from tb.common.axis import describe


@dataclass
class Sent:
    """A frame as sent: name, bytes, ingress port, bad_frame, and the first table state
    (index) it may see."""
    name: str
    frame: bytes
    port: int
    bad: bool
    state: int
    answers: dict = field(default_factory=dict)  # state -> (out, tuser, drop reason)


@dataclass
class Emitted:
    """An m_axis frame (data, tuser dict) or a drop (reason), with the table state
    (index) last begun when it appeared."""
    state: int
    data: bytes = None
    tuser: dict = None
    reason: int = None
    problems: list = field(default_factory=list)  # beat-level problems (tkeep, tuser)


def _accepts(answer, got, is_drop):
    out, tuser, reason = answer
    if is_drop:
        return out is None and reason == got.reason
    return out is not None and out == got.data and tuser == got.tuser


def match(sent, outs, drops, answer):
    """Assigns outputs to frames. `answer(sent_item, state)` gives the model's
    (out, tuser, drop reason) for a frame in a table state. Returns (assignment, errors):
    assignment lists per frame ("out" | "drop", index into outs/drops, state used)."""
    # reachable[i_out] = back pointer (previous i_out, kind, index, state)
    reachable = {0: None}
    history = []
    for k, s in enumerate(sent):
        nxt = {}
        for i_out in sorted(reachable):
            i_drop = k - i_out
            for kind, pool, idx in (("out", outs, i_out), ("drop", drops, i_drop)):
                if idx >= len(pool):
                    continue
                got = pool[idx]
                for state in range(s.state, max(s.state, got.state) + 1):
                    if _accepts(answer(s, state), got, kind == "drop"):
                        key = i_out + 1 if kind == "out" else i_out
                        nxt.setdefault(key, (i_out, kind, idx, state))
                        break
        if not nxt:
            return None, [_explain(sent, k, reachable, outs, drops, answer)]
        history.append(nxt)
        reachable = nxt
    errors = []
    end = len(outs)
    if end not in reachable or len(sent) - end != len(drops):
        errors.append(f"{len(sent)} frames sent, {len(outs)} came out and {len(drops)} were "
                      f"dropped; no assignment uses them all (possible m_axis counts: "
                      f"{sorted(reachable)})")
        return None, errors
    assignment = []
    i_out = end
    for k in range(len(sent) - 1, -1, -1):
        prev, kind, idx, state = history[k][i_out]
        assignment.append((kind, idx, state))
        i_out = prev
    assignment.reverse()
    for kind, idx, _ in assignment:
        if kind == "out":
            errors.extend(f"{sent_name(sent, assignment, idx)}: {p}" for p in outs[idx].problems)
    return assignment, errors


def sent_name(sent, assignment, out_index):
    for s, (kind, idx, _) in zip(sent, assignment):
        if kind == "out" and idx == out_index:
            return s.name
    return f"output {out_index}"


def describe_answer(answer):
    out, tuser, reason = answer
    if out is None:
        return f"drop reason {reason:#x}"
    return f"{len(out)} bytes, tuser {tuser}"


def _explain(sent, k, reachable, outs, drops, answer):
    """Why frame k fits no output: what the model allows vs the next output of each
    stream (for the most likely position)."""
    s = sent[k]
    i_out = min(reachable)
    i_drop = k - i_out
    lines = [f"frame {k} {s.name} (port {s.port}, {len(s.frame)} bytes, first state "
             f"{s.state}): no output fits"]
    states = set()
    for pool, idx in ((outs, i_out), (drops, i_drop)):
        if idx < len(pool):
            states.update(range(s.state, max(s.state, pool[idx].state) + 1))
    states = sorted(states) or [s.state]
    answers = {st: answer(s, st) for st in states}
    for st, a in answers.items():
        lines.append(f"  model (tables state {st}): {describe_answer(a)}")
    if i_out < len(outs):
        g = outs[i_out]
        lines.append(f"  next m_axis frame (#{i_out}): {len(g.data)} bytes, tuser {g.tuser}")
        for st, a in answers.items():
            if a[0] is not None:
                if a[0] != g.data:
                    lines.append(f"    vs state {st}: {describe(a[0], g.data)}")
                    lines.append(f"    in  {s.frame[:80].hex()}\n    exp {a[0][:80].hex()}"
                                 f"\n    got {g.data[:80].hex()}")
                break
    else:
        lines.append(f"  no m_axis frame left ({len(outs)} in all)")
    if i_drop < len(drops):
        lines.append(f"  next drop (#{i_drop}): reason {drops[i_drop].reason:#x}")
    else:
        lines.append(f"  no drop left ({len(drops)} in all)")
    return "\n".join(lines)
