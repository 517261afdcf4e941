# SPDX-License-Identifier: Apache-2.0
"""A tables file in the syntax matcha-ctl reads (sw/driver/README.md, "matcha-ctl"), loaded
into the program model (tb/model/program.py) directly, without the driver: what the file
means, written from the README, to set against what matcha-ctl made of it.

Commands: `table_add <table> <action> <match fields> => <params> [priority]`,
`table_set_default <table> <action> [=>] <params>`, `meter_set_rates <meter> <index>
<cir>:<cburst> [<pir>:<pburst>] [trtcm|srtcm] [color-aware] [packets]` and `set_clock_hz`;
blank lines and lines starting with `#` are skipped. Match fields, one per key field in key
order: a value, `value/length`, `value&&&mask` or `low->high` (ternary tables; expanded into
the fewest prefixes, the last ranged field varying fastest, as the driver does). On a range
field of a ternary table (docs/tables.md, "Range fields") every match is one range, lo in
the entry's value and hi in its mask: `low->high` itself, a value v as v->v, and a value
whose mask is a prefix of the field (`0&&&0`, `/n`) the block it covers. Values:
decimal, 0x hex, IPv4 a.b.c.d, MAC aa:bb:cc:dd:ee:ff.

The model meters every frame at tick 0 (the harness cannot know a frame's tick), so only
meters that never refill (rates 0) are taken: their colours do not depend on time.
"""

import re
from pathlib import Path

from tb.model.meter import HwMeter


class TablesFileError(ValueError):
    pass


def value(text, width, where):
    """A value of a field or parameter of `width` bits."""
    t = text.strip()
    if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", t):
        parts = [int(x) for x in t.split(".")]
        if any(p > 255 for p in parts):
            raise TablesFileError(f"{where}: {t} is not an IPv4 address")
        v = int.from_bytes(bytes(parts), "big")
    elif re.fullmatch(r"[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}", t):
        v = int.from_bytes(bytes(int(x, 16) for x in t.split(":")), "big")
    elif re.fullmatch(r"0[xX][0-9a-fA-F]+", t):
        v = int(t, 16)
    elif re.fullmatch(r"\d+", t):
        v = int(t)
    else:
        raise TablesFileError(f"{where}: cannot read {t!r} as a value")
    if v >> width:
        raise TablesFileError(f"{where}: {t} does not fit in {width} bits")
    return v


def prefix_mask(width, length):
    return ((1 << length) - 1) << (width - length)


def range_prefixes(lo, hi, width):
    """[(value, mask)] covering [lo, hi] exactly, fewest and ascending."""
    out = []
    while lo <= hi:
        size = lo & -lo if lo else 1 << width
        while size > hi - lo + 1:
            size >>= 1
        out.append((lo, ((1 << width) - 1) & ~(size - 1)))
        lo += size
    return out


def field_match(text, width, where):
    """[(value, mask, prefix length or None)] of one match field: one item, or the prefixes
    of a range."""
    if "&&&" in text:
        v, m = text.split("&&&", 1)
        v, m = value(v, width, where), value(m, width, where)
        if v & ~m:
            raise TablesFileError(f"{where}: {text}: value has bits outside the mask")
        return [(v, m, None)]
    if "->" in text:
        lo, hi = text.split("->", 1)
        lo, hi = value(lo, width, where), value(hi, width, where)
        if lo > hi:
            raise TablesFileError(f"{where}: range {text} is empty")
        return [(v, m, None) for v, m in range_prefixes(lo, hi, width)]
    if "/" in text:
        v, length = text.rsplit("/", 1)
        length = int(length)
        if not 0 <= length <= width:
            raise TablesFileError(f"{where}: /{length} on a {width}-bit field")
        v = value(v, width, where)
        if v & ~prefix_mask(width, length):
            raise TablesFileError(f"{where}: {text} has bits set past its length")
        return [(v, prefix_mask(width, length), length)]
    return [(value(text, width, where), (1 << width) - 1, width)]


def range_match(text, width, where):
    """[(lo, hi, None)] of one match on a range field: the range it covers."""
    if "->" in text:
        lo, hi = text.split("->", 1)
        lo, hi = value(lo, width, where), value(hi, width, where)
        if lo > hi:
            raise TablesFileError(f"{where}: range {text} is empty")
        return [(lo, hi, None)]
    (v, m, _), = field_match(text, width, where)
    free = ~m & ((1 << width) - 1)
    if free & (free + 1):
        raise TablesFileError(f"{where}: {text} on a range field: the mask is no prefix")
    return [(v, v | free, None)]


def action_data(table, action, texts, where):
    act = table.action(action)
    if len(texts) != len(act.params):
        raise TablesFileError(f"{where}: action {action} takes {len(act.params)} "
                              f"parameter(s), not {len(texts)}")
    return act.data(**{p.name: value(t, p.width, f"{where}, {p.name}")
                       for p, t in zip(act.params, texts)})


def table_add(program, words, where):
    table, action = program[words[0]], words[1]
    if "=>" not in words:
        raise TablesFileError(f"{where}: table_add without '=>'")
    arrow = words.index("=>")
    fields, rest = words[2:arrow], words[arrow + 1:]
    if len(fields) != len(table.key_parts):
        raise TablesFileError(f"{where}: table {table.name} has {len(table.key_parts)} key "
                              f"field(s), the line {len(fields)}")
    priority = None
    if table.kind == "ternary":
        if not rest:
            raise TablesFileError(f"{where}: a ternary entry needs a priority")
        priority, rest = int(rest[-1]), rest[:-1]
    data = action_data(table, action, rest, where)
    range_offsets = {o for o, _ in getattr(table, "ranges", [])}
    matches, below = [], sum(width for _, width in table.key_parts)
    for f, (parts, width) in zip(fields, table.key_parts):
        below -= width
        parse = range_match if below in range_offsets else field_match
        matches.append(parse(f, width, f"{where}, key field {parts[0]}"))
    combos = [[]]
    for m in matches:  # the last ranged field varies fastest
        combos = [c + [x] for c in combos for x in m]
    for combo in combos:
        key = mask = 0
        length, partial = 0, False
        for (v, m, plen), (_, width) in zip(combo, table.key_parts):
            key, mask = key << width | v, mask << width | m
            if table.kind in ("exact", "direct") and m != (1 << width) - 1:
                raise TablesFileError(f"{where}: table {table.name} takes values only")
            if table.kind == "lpm":
                if plen is None:
                    raise TablesFileError(f"{where}: LPM key fields are values or prefixes")
                if partial and plen:
                    raise TablesFileError(f"{where}: a field after a partial prefix must be /0")
                partial = partial or plen < width
                length += plen
        if table.kind == "ternary":
            table.add(key, mask, priority, action, data)
        elif table.kind == "lpm":
            table.add(key, length, action, data)
        else:
            table.add(key, action, data)


def meter_set_rates(program, words, where, refill_as_zero=False):
    name, index, *rest = words
    if name not in program.meters:
        raise TablesFileError(f"{where}: no meter array {name}")
    pairs = [w for w in rest if ":" in w]
    flags = [w for w in rest if ":" not in w]
    unknown = set(flags) - {"trtcm", "srtcm", "color-aware", "packets"}
    if unknown or not 1 <= len(pairs) <= 2:
        raise TablesFileError(f"{where}: meter_set_rates {' '.join(words)}")
    (cir, cbs), *peak = [tuple(int(x) for x in p.split(":")) for p in pairs]
    pir, pbs = peak[0] if peak else (0, 0)
    if (cir or pir) and not refill_as_zero:
        raise TablesFileError(f"{where}: only meters with rates 0 are modelled here (the "
                              f"model cannot know the tick each frame meters at)")
    two_rate = "trtcm" in flags or (len(pairs) == 2 and "srtcm" not in flags)
    program.meters[name].configure(int(index), HwMeter(
        two_rate=two_rate, aware="color-aware" in flags, packets="packets" in flags,
        cbs=cbs, pbs=pbs), 0)


def load(program, path, refill_as_zero=False):
    """Every command of the file at `path` applied to `program`; returns the number of
    table entries added (as matcha-ctl counts them: one per table_add).

    A meter with a rate is refused unless `refill_as_zero`: then the model's bucket starts
    full and never refills. The hardware's bucket holds at least as many tokens at every
    frame, so a frame the model colours green is green there too, and a model colouring a
    frame yellow or red where the hardware refilled shows as a mismatch, never as a pass:
    right for traffic that stays within the bursts."""
    return load_text(program, Path(path).read_text(), str(path), refill_as_zero)


def load_text(program, text, name="<tables>", refill_as_zero=False):
    """load() of the commands in `text`, errors naming `name` and the line."""
    entries = 0
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"{name}:{n}"
        cmd, args = words[0], words[1:]
        try:
            if cmd == "table_add":
                table_add(program, args, where)
                entries += 1
            elif cmd == "table_set_default":
                table = program[args[0]]
                params = [w for w in args[2:] if w != "=>"]
                table.set_default(args[1], action_data(table, args[1], params, where))
            elif cmd == "meter_set_rates":
                meter_set_rates(program, args, where, refill_as_zero)
            elif cmd == "set_clock_hz":
                int(args[0])
            else:
                raise TablesFileError(f"{where}: {cmd} is not a command this loader takes")
        except (KeyError, IndexError) as e:
            raise TablesFileError(f"{where}: {line.strip()}: {e!r}") from None
    return entries
