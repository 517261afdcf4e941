# SPDX-License-Identifier: Apache-2.0
"""The C driver (sw/driver, libmatcha) driven from a testbench.

Tables in the cocotb tests are loaded by the real driver, so that what is checked is the
driver and the RTL together, against an oracle that knows neither. Three pieces:

- `Device`: a ctypes binding of build/sw/libmatcha.so (built with
  `make -C sw/driver shared` on first use; make decides whether it is stale, a file lock
  keeps pytest-xdist workers from building it at the same time). A call that returns a
  negative `MATCHA_E*` code raises `MatchaError` carrying the code and
  `matcha_last_error()`.
- `RecordingBus`: the register backend the driver is opened on. The driver's calls are
  synchronous and a simulation bus is not, so the backend does not touch the DUT: it
  answers reads from a snapshot of the DUT's self-describing block plus a minimal model of
  the table window protocol (below), and records every write in order.
- `read_info_block` and `replay`: coroutines that take the snapshot from the DUT before
  the driver is opened, and perform the recorded writes on the DUT afterwards, checking
  each command's STATUS against the error the recorder predicted.

What the recorder models of docs/tables.md, and nothing more:

- below 0x10000, the snapshot (MAGIC, VERSION, BUILD_ID, OBJECTS, the descriptors);
  anything else there is a bus error;
- in each table's window, the staging registers (INDEX, FLAGS, PRIORITY, KEY, MASK, DATA)
  read back what was last written; HITS and MISSES read 0;
- a CMD write sets the error field of STATUS: 2 for an unknown command or one the table
  does not have (ZERO without counters, DEFAULT and READ_DEFAULT without a default
  action: descriptor kind bits 8 and 9), 1 for a WRITE, READ or ZERO whose INDEX is out of
  range for the table as its descriptor describes it (exact and ternary: below `size`;
  LPM: `level << 20 | node` with level i's nodes as `lpm_nodes` gives them, and level
  `levels` the `size` results; memory-backed exact: `bucket << MEMX_INDEX_SLOT_BITS | slot`
  with `size / geometry` buckets of `geometry` entries), 0 otherwise;
  RANGE_SLOT, RANGE_SPAN and RANGE_REBUILD are a ternary table's with range fields
  (descriptor geometry: how many; extra: slots each), their INDEX `field << 16 | slot`
  out of range answering 1; STATUS is never busy;
- a READ command does not load the staging registers: the recorder knows no table
  contents (the driver reads entries back only in matcha_exact_read and
  matcha_ternary_read, which have no use here);
- per-entry counts: a READ latches into PACKETS and BYTES what `RecordingBus.counts`
  holds for the entry, 0 unless a test put better information there (e.g. counts it read
  from the DUT); ZERO and CLEAR set the counts it holds to 0. The driver's per-entry
  totals (what it carries along when it moves an entry) are therefore built from these
  values;
- the default action: DEFAULT keeps the staged action id and data as the table's
  (`RecordingBus.defaults`), READ_DEFAULT loads them into FLAGS (bit 0 set) and DATA;
  before any DEFAULT a table's is unknown and reads as action 0, data 0 unless a test
  set it.

It never models a table's entries, a trie or a hash.
"""

import ctypes
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tb.common import contract, sim

REPO = Path(__file__).resolve().parents[2]
DRIVER_DIR = REPO / "sw" / "driver"
SW_BUILD = REPO / "build" / "sw"
LIBRARY = SW_BUILD / "libmatcha.so"

# enum matcha_error
OK, EIO, ENODEV, EVERSION, EINVAL, ENOTABLE, EKIND = 0, -1, -2, -3, -4, -5, -6
E2BIG, EEXIST, ENOENT, ENOSPC, ENOMEM, ETIMEDOUT, EHW = -7, -8, -9, -10, -11, -12, -13
ENOTSUP = -14
ERRORS = {code: "MATCHA_" + name for name, code in dict(
    OK=OK, EIO=EIO, ENODEV=ENODEV, EVERSION=EVERSION, EINVAL=EINVAL, ENOTABLE=ENOTABLE,
    EKIND=EKIND, E2BIG=E2BIG, EEXIST=EEXIST, ENOENT=ENOENT, ENOSPC=ENOSPC, ENOMEM=ENOMEM,
    ETIMEDOUT=ETIMEDOUT, EHW=EHW, ENOTSUP=ENOTSUP).items()}

SESSION_PUNT, SESSION_DROP = 0, 1  # enum matcha_session_policy
MAX_BITS = 512  # MATCHA_MAX_KEY_BITS, MATCHA_MAX_DATA_BITS
COUNTERS_RESET = 0x1  # MATCHA_COUNTERS_RESET
RANGE_MAX_PREFIXES = 62  # MATCHA_RANGE_MAX_PREFIXES


class MatchaError(Exception):
    """A driver call failed: `code` (negative), `name` ("MATCHA_ENOSPC"), `message`
    (matcha_last_error)."""

    def __init__(self, call, code, message):
        self.call, self.code, self.message = call, code, message
        self.name = ERRORS.get(code, str(code))
        super().__init__(f"{call}: {self.name}: {message}")


class BusError(Exception):
    """Raised by a backend for an access the bus answers with an error."""


# ---------------------------------------------------------------------- the library

_lib = None




def build_library():
    """Brings build/sw/libmatcha.so up to date with the driver sources; returns its path."""
    with sim.locked(SW_BUILD / ".libmatcha.lock"):
        r = subprocess.run(["make", "-s", "-C", str(DRIVER_DIR), "shared", f"BUILD={SW_BUILD}"],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"building {LIBRARY} failed:\n{r.stdout}{r.stderr}")
    return LIBRARY


_READ32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32,
                           ctypes.POINTER(ctypes.c_uint32))
_WRITE32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)


class _RegsOps(ctypes.Structure):
    _fields_ = [("read32", _READ32), ("write32", _WRITE32)]


class TableInfo(ctypes.Structure):
    """struct matcha_table_info"""
    _fields_ = [(n, ctypes.c_uint) for n in ("kind", "key_bits", "size", "data_bits")] + \
        [("base", ctypes.c_uint32)] + \
        [(n, ctypes.c_uint) for n in ("ways", "levels", "bucket_entries", "latency")] + \
        [(n, ctypes.c_bool) for n in ("counters", "default_action", "prefix_store")]

    def __repr__(self):
        return "TableInfo(" + ", ".join(f"{n}={getattr(self, n)}" for n, _ in self._fields_) + ")"


class LpmLevel(ctypes.Structure):
    """struct matcha_lpm_level"""
    _fields_ = [(n, ctypes.c_uint) for n in ("fanout", "nodes", "used", "slots")] + \
        [(n, ctypes.c_bool) for n in ("real", "in_memory")] + [("pointer_bits", ctypes.c_uint)]

    def __repr__(self):
        return "LpmLevel(" + ", ".join(f"{n}={getattr(self, n)}" for n, _ in self._fields_) + ")"


def lpm_extra(fanout, size, memory_levels=0):
    """An LPM table's descriptor EXTRA word: its fanout, its pointer bits as the generator
    chooses them (enough for every level's nodes and every result, at least
    LPM_MIN_POINTER_BITS) and its levels in memory."""
    most = max(max(lpm_nodes(fanout, size)), size)
    pointer_bits = max(contract.LPM_MIN_POINTER_BITS, (most - 1).bit_length())
    return (fanout | pointer_bits << contract.LPM_EXTRA_POINTER_SHIFT |
            memory_levels << contract.LPM_EXTRA_MEMORY_SHIFT)


def lpm_nodes(fanout, size):
    """Nodes of each level of an LPM table's B+tree, the root's first, as the generator sizes
    them (docs/tables.md, "LPM"): the fewest levels with fanout * ceil(fanout/2)^(levels-1)
    >= 2 * size + 1, each level below the root at most ceil(below / ceil(fanout/2)) nodes."""
    half, boundaries = (fanout + 1) // 2, 2 * size + 1
    if half < 2:
        return [1]
    levels, reach = 1, fanout
    while reach < boundaries:
        levels, reach = levels + 1, reach * half
    nodes = [-(-boundaries // half)]
    while len(nodes) < levels:
        nodes.insert(0, -(-nodes[0] // half))
    return [1] + nodes[1:]


class Session(ctypes.Structure):
    """struct matcha_session"""
    _fields_ = [("valid", ctypes.c_bool), ("state", ctypes.c_uint),
                ("initiator_high", ctypes.c_bool), ("age", ctypes.c_uint32),
                ("key_bits", ctypes.c_uint), ("key", ctypes.c_uint8 * (MAX_BITS // 8)),
                ("packets", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]

    def key_int(self):
        return int.from_bytes(bytes(self.key[:(self.key_bits + 7) // 8]), "big")


class SessionStats(ctypes.Structure):
    """struct matcha_session_stats"""
    _fields_ = [("occupancy", ctypes.c_uint32)] + \
        [(n, ctypes.c_uint64) for n in ("learned", "insert_failed", "aged", "hits", "misses",
                                        "late", "busy")]

    def as_dict(self):
        return {n: getattr(self, n) for n, _ in self._fields_}
class _Entry(ctypes.Structure):
    """struct matcha_entry"""
    _fields_ = [("valid", ctypes.c_bool), ("action_id", ctypes.c_uint8),
                ("priority", ctypes.c_uint32), ("key_bits", ctypes.c_uint),
                ("key", ctypes.c_uint8 * (MAX_BITS // 8)), ("mask", ctypes.c_uint8 * (MAX_BITS // 8)),
                ("data_bits", ctypes.c_uint), ("data", ctypes.c_uint8 * (MAX_BITS // 8))]


@dataclass(frozen=True)
class Entry:
    """An entry as the hardware holds it (matcha_exact_read, matcha_ternary_read); key,
    mask and data as ints, mask 0 and priority 0 on exact tables."""
    valid: bool
    action_id: int
    key: int
    mask: int
    priority: int
    data: int


def _be_int(array, bits):
    return int.from_bytes(bytes(array)[:(bits + 7) // 8], "big")


# The structures of the calls by name, as the P4Runtime server (sw/p4rt) binds them.
sys.path.insert(0, str(REPO / "sw" / "p4rt"))
from matcha_p4rt.libmatcha import (  # noqa: E402
    MATCH_EXACT, NO_PRIORITY, MeterConfig, EntryView as _EntryView, Match as _Match, Value as _Value,
)


@dataclass(frozen=True)
class EntryView:
    """An entry by name as matcha_entry_read gives it back from the hardware: its action's
    name, parameter values (ints, in the action's order) and index."""
    action: str
    params: tuple
    index: int


METER_TWO_RATE, METER_COLOR_AWARE, METER_PACKETS = 0x1, 0x2, 0x4  # MATCHA_METER_*


class _Prefix(ctypes.Structure):
    """struct matcha_prefix"""
    _fields_ = [("value", ctypes.c_uint32), ("mask", ctypes.c_uint32)]


def library():
    """The loaded libmatcha (built first if needed)."""
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(str(build_library()))
    P, U, I, U8, U32 = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_uint8, ctypes.c_uint32
    B = ctypes.c_char_p
    U64P = ctypes.POINTER(ctypes.c_uint64)
    sigs = {
        "matcha_strerror": (ctypes.c_char_p, [I]),
        "matcha_open_ops": (I, [ctypes.POINTER(_RegsOps), P, ctypes.POINTER(P)]),
        "matcha_close": (None, [P]),
        "matcha_last_error": (ctypes.c_char_p, [P]),
        "matcha_version": (U32, [P]),
        "matcha_build_id": (U32, [P]),
        "matcha_table_count": (U, [P]),
        "matcha_table_info": (I, [P, U, ctypes.POINTER(TableInfo)]),
        "matcha_table_clear": (I, [P, U]),
        "matcha_exact_add": (I, [P, U, B, U, U8, B, U]),
        "matcha_exact_delete": (I, [P, U, B, U]),
        "matcha_lpm_add": (I, [P, U, B, U, U8, B, U]),
        "matcha_lpm_delete": (I, [P, U, B, U]),
        "matcha_lpm_level": (I, [P, U, U, ctypes.c_void_p]),
        "matcha_lpm_lookup_sw": (I, [P, U, B, ctypes.POINTER(U32)]),
        "matcha_exact_lookup_sw": (I, [P, U, B, U, ctypes.POINTER(U32)]),
        "matcha_ternary_add": (I, [P, U, B, B, U, U32, U8, B, U]),
        "matcha_ternary_delete": (I, [P, U, B, B, U, U32]),
        "matcha_table_set_default": (I, [P, U, U8, B, U]),
        "matcha_table_get_default": (I, [P, U, ctypes.POINTER(U8), P, U]),
        "matcha_counters_read": (I, [P, U, U32, U64P, U64P]),
        "matcha_counters_zero": (I, [P, U, U32]),
        "matcha_exact_counters": (I, [P, U, B, U, U64P, U64P, U]),
        "matcha_lpm_counters": (I, [P, U, B, U, U64P, U64P, U]),
        "matcha_ternary_counters": (I, [P, U, B, B, U, U32, U64P, U64P, U]),
        "matcha_range_to_prefixes": (I, [U32, U32, U, ctypes.POINTER(_Prefix), U]),
        "matcha_session_key_ipv4": (I, [U32, U8, U32, ctypes.c_uint16, U32, ctypes.c_uint16,
                                        ctypes.c_char_p, ctypes.POINTER(ctypes.c_bool)]),
        "matcha_session_read": (I, [P, U, U32, ctypes.POINTER(Session)]),
        "matcha_session_find": (I, [P, U, B, U, ctypes.POINTER(U32)]),
        "matcha_session_delete": (I, [P, U, B, U]),
        "matcha_session_flush": (I, [P, U]),
        "matcha_session_stats": (I, [P, U, ctypes.POINTER(SessionStats)]),
        "matcha_session_set_timeout": (I, [P, U, U, U32]),
        "matcha_session_get_timeout": (I, [P, U, U, ctypes.POINTER(U32)]),
        "matcha_session_set_tick": (I, [P, U, U32]),
        "matcha_session_set_scan_interval": (I, [P, U, U32]),
        "matcha_session_get_scan_interval": (I, [P, U, ctypes.POINTER(U32)]),
        "matcha_session_now": (I, [P, U, ctypes.POINTER(U32)]),
        "matcha_session_set_policy": (I, [P, U, I]),
        "matcha_session_get_policy": (I, [P, U, ctypes.POINTER(I)]),
        "matcha_exact_read": (I, [P, U, U32, ctypes.POINTER(_Entry)]),
        "matcha_ternary_read": (I, [P, U, U32, ctypes.POINTER(_Entry)]),
        "matcha_set_clock_hz": (I, [P, ctypes.c_uint64]),
        "matcha_meter_set": (I, [P, U, U32, ctypes.POINTER(MeterConfig)]),
        "matcha_meter_get": (I, [P, U, U32, ctypes.POINTER(MeterConfig), U64P, U64P]),
        "matcha_layout_load_text": (I, [P, B, ctypes.c_size_t, B]),
        "matcha_tables_adopt": (I, [P]),
        "matcha_entry_add": (I, [P, B, ctypes.POINTER(_Match), U, B, ctypes.POINTER(_Value), U,
                                 ctypes.c_int64, ctypes.POINTER(U32)]),
        "matcha_entry_modify": (I, [P, B, U32, B, ctypes.POINTER(_Value), U]),
        "matcha_entry_delete": (I, [P, B, U32]),
        "matcha_entry_read": (I, [P, B, U32, ctypes.POINTER(_EntryView)]),
        "matcha_entry_next": (I, [P, B, U32, ctypes.POINTER(U32)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def session_key_ipv4(zone, protocol, src, sport, dst, dport):
    """(canonical 128-bit key as an int, reversed) as the driver builds it
    (matcha_session_key_ipv4)."""
    key = ctypes.create_string_buffer(16)
    rev = ctypes.c_bool()
    rc = library().matcha_session_key_ipv4(zone, protocol, src, sport, dst, dport, key,
                                           ctypes.byref(rev))
    if rc < 0:
        raise MatchaError("matcha_session_key_ipv4", rc, f"zone {zone:#x}: {strerror(rc)}")
    return int.from_bytes(key.raw, "big"), rev.value


def strerror(code):
    return library().matcha_strerror(code).decode()


def range_to_prefixes(lo, hi, bits):
    """The inclusive range [lo, hi] of a `bits`-wide field as the fewest (value, mask)
    pairs that match exactly the range (matcha_range_to_prefixes)."""
    out = (_Prefix * RANGE_MAX_PREFIXES)()
    n = library().matcha_range_to_prefixes(lo, hi, bits, out, RANGE_MAX_PREFIXES)
    if n < 0:
        raise MatchaError("matcha_range_to_prefixes", n,
                          f"[{lo}, {hi}] of a {bits}-bit field: {strerror(n)}")
    return [(p.value, p.mask) for p in out[:n]]


def to_be(value, bits):
    """An int as the driver's big-endian byte string of ceil(bits/8) bytes; bytes pass as
    they are (to hand the driver malformed values on purpose)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return int(value).to_bytes((bits + 7) // 8, "big")


class Device:
    """A matcha_dev handle opened on `bus` (an object with read32(addr) -> int and
    write32(addr, value), raising BusError on a bus error)."""

    def __init__(self, bus):
        self._lib = library()
        self._bus = bus
        self._exc = None
        # The callbacks must outlive the handle: keep them on the object.
        self._ops = _RegsOps(_READ32(self._read32), _WRITE32(self._write32))
        self._dev = ctypes.c_void_p()
        rc = self._guard(self._lib.matcha_open_ops, ctypes.byref(self._ops), None,
                         ctypes.byref(self._dev))
        if rc < 0:
            err = MatchaError("matcha_open_ops", rc, self.last_error())
            self.close()
            raise err
        self.tables = [self.table_info(t) for t in range(self.table_count())]

    # Exceptions cannot cross the C code: a failing callback reports a bus error to the
    # driver and the exception is raised again once the driver returns.
    def _read32(self, _ctx, addr, val):
        try:
            val[0] = self._bus.read32(addr) & 0xFFFFFFFF
            return 0
        except BusError:
            return 1
        except BaseException as e:  # noqa: BLE001 - re-raised after the call
            self._exc = self._exc or e
            return -1

    def _write32(self, _ctx, addr, value):
        try:
            self._bus.write32(addr, value)
            return 0
        except BusError:
            return 1
        except BaseException as e:  # noqa: BLE001
            self._exc = self._exc or e
            return -1

    def _guard(self, fn, *args):
        self._exc = None
        rc = fn(*args)
        if self._exc is not None:
            e, self._exc = self._exc, None
            raise e
        return rc

    def _call(self, name, *args):
        rc = self._guard(getattr(self._lib, name), self._dev, *args)
        if rc < 0:
            raise MatchaError(name, rc, self.last_error())
        return rc

    def close(self):
        if self._dev:
            self._lib.matcha_close(self._dev)
            self._dev = ctypes.c_void_p()

    def last_error(self):
        return self._lib.matcha_last_error(self._dev).decode()

    def version(self):
        return self._lib.matcha_version(self._dev)

    def build_id(self):
        return self._lib.matcha_build_id(self._dev)

    def table_count(self):
        return self._lib.matcha_table_count(self._dev)

    def table_info(self, table):
        info = TableInfo()
        self._call("matcha_table_info", table, ctypes.byref(info))
        return info

    def table_clear(self, table):
        self._call("matcha_table_clear", table)

    def _info(self, table):
        return self.tables[table] if table < len(self.tables) else None

    def _widths(self, table):
        """(key bits, data bits) of a table; the widest there are for a table that does
        not exist, so that the driver gets to report it."""
        t = self._info(table)
        return (t.key_bits, t.data_bits) if t else (MAX_BITS, MAX_BITS)

    def exact_add(self, table, key, action_id, data, key_bits=None, data_bits=None):
        kb, db = self._widths(table)
        kb = key_bits if key_bits is not None else kb
        db = data_bits if data_bits is not None else db
        self._call("matcha_exact_add", table, to_be(key, kb), kb, action_id, to_be(data, db), db)

    def exact_delete(self, table, key, key_bits=None):
        kb = key_bits if key_bits is not None else self._widths(table)[0]
        self._call("matcha_exact_delete", table, to_be(key, kb), kb)

    def mem_exact_add(self, table, key, action_id, data):
        kb, db = self._widths(table)
        self._call("matcha_mem_exact_add", table, to_be(key, kb), kb, action_id, to_be(data, db), db)

    def mem_exact_delete(self, table, key):
        kb = self._widths(table)[0]
        self._call("matcha_mem_exact_delete", table, to_be(key, kb), kb)

    def lpm_add(self, table, prefix, length, action_id, data, data_bits=None):
        """prefix: an int of the table's key width (or raw bytes); data: an int."""
        kb, db = self._widths(table)
        db = data_bits if data_bits is not None else db
        self._call("matcha_lpm_add", table, to_be(prefix, kb), length, action_id,
                   to_be(data, db), db)

    def lpm_delete(self, table, prefix, length):
        kb = self._widths(table)[0]
        self._call("matcha_lpm_delete", table, to_be(prefix, kb), length)

    def lpm_level(self, table, level):
        """One level of the table's B+tree (struct matcha_lpm_level)."""
        lv = LpmLevel()
        self._call("matcha_lpm_level", table, level, ctypes.byref(lv))
        return lv

    def lpm_lookup_sw(self, table, key):
        """The result index the driver's shadow gives a key, None on a miss."""
        r = ctypes.c_uint32()
        rc = self._guard(self._lib.matcha_lpm_lookup_sw, self._dev, table,
                         to_be(key, self._widths(table)[0]), ctypes.byref(r))
        if rc == ENOENT:
            return None
        if rc < 0:
            raise MatchaError("matcha_lpm_lookup_sw", rc, self.last_error())
        return r.value

    def exact_lookup_sw(self, table, key, key_bits=None):
        """The index (way * slots + slot) where the driver put a key, None if absent."""
        kb = key_bits if key_bits is not None else self._widths(table)[0]
        index = ctypes.c_uint32()
        rc = self._guard(self._lib.matcha_exact_lookup_sw, self._dev, table, to_be(key, kb),
                         kb, ctypes.byref(index))
        if rc == ENOENT:
            return None
        if rc < 0:
            raise MatchaError("matcha_exact_lookup_sw", rc, self.last_error())
        return index.value

    def ternary_add(self, table, value, mask, priority, action_id, data, key_bits=None,
                    data_bits=None):
        """value, mask: ints of the table's key width (or raw bytes); data: an int."""
        kb, db = self._widths(table)
        kb = key_bits if key_bits is not None else kb
        db = data_bits if data_bits is not None else db
        self._call("matcha_ternary_add", table, to_be(value, kb), to_be(mask, kb), kb,
                   priority, action_id, to_be(data, db), db)

    def ternary_delete(self, table, value, mask, priority, key_bits=None):
        kb = key_bits if key_bits is not None else self._widths(table)[0]
        self._call("matcha_ternary_delete", table, to_be(value, kb), to_be(mask, kb), kb,
                   priority)

    def _read_entry(self, name, table, index, masked):
        e = _Entry()
        self._call(name, table, index, ctypes.byref(e))
        return Entry(e.valid, e.action_id, _be_int(e.key, e.key_bits),
                     _be_int(e.mask, e.key_bits) if masked else 0,
                     e.priority if masked else 0, _be_int(e.data, e.data_bits))

    def exact_read(self, table, index):
        """Entry `index` (way * slots + slot) read back from the hardware."""
        return self._read_entry("matcha_exact_read", table, index, masked=False)

    def mem_exact_read(self, table, index):
        """Entry `index` (bucket << MEMX_INDEX_SLOT_BITS | slot) read back from the memory."""
        return self._read_entry("matcha_mem_exact_read", table, index, masked=False)

    def ternary_read(self, table, index):
        """Entry `index` read back from the hardware."""
        return self._read_entry("matcha_ternary_read", table, index, masked=True)

    # Per-entry counters: each returns (packets, bytes).

    def counters_read(self, table, index):
        """Raw counts of one index (exact slot, LPM result, ternary entry)."""
        p, b = ctypes.c_uint64(), ctypes.c_uint64()
        self._call("matcha_counters_read", table, index, ctypes.byref(p), ctypes.byref(b))
        return p.value, b.value

    def counters_zero(self, table, index):
        self._call("matcha_counters_zero", table, index)

    def _entry_counters(self, name, table, *args, reset=False):
        p, b = ctypes.c_uint64(), ctypes.c_uint64()
        self._call(name, table, *args, ctypes.byref(p), ctypes.byref(b),
                   COUNTERS_RESET if reset else 0)
        return p.value, b.value

    def exact_counters(self, table, key, reset=False, key_bits=None):
        """The counts of an entry wherever it sat since it was added (or last reset)."""
        kb = key_bits if key_bits is not None else self._widths(table)[0]
        return self._entry_counters("matcha_exact_counters", table, to_be(key, kb), kb,
                                    reset=reset)

    def lpm_counters(self, table, prefix, length, reset=False):
        kb = self._widths(table)[0]
        return self._entry_counters("matcha_lpm_counters", table, to_be(prefix, kb), length,
                                    reset=reset)

    def ternary_counters(self, table, value, mask, priority, reset=False, key_bits=None):
        kb = key_bits if key_bits is not None else self._widths(table)[0]
        return self._entry_counters("matcha_ternary_counters", table, to_be(value, kb),
                                    to_be(mask, kb), kb, priority, reset=reset)

    # The default (miss) action.

    def set_default(self, table, action_id, data, data_bits=None):
        db = data_bits if data_bits is not None else self._widths(table)[1]
        self._call("matcha_table_set_default", table, action_id, to_be(data, db), db)

    def get_default(self, table):
        """(action id, action data as an int)."""
        db = self._widths(table)[1]
        action = ctypes.c_uint8()
        data = ctypes.create_string_buffer(max(1, (db + 7) // 8))
        self._call("matcha_table_get_default", table, ctypes.byref(action), data, db)
        return action.value, int.from_bytes(data.raw[:(db + 7) // 8], "big")

    # Session tables.

    def session_read(self, table, index):
        s = Session()
        self._call("matcha_session_read", table, index, ctypes.byref(s))
        return s

    def session_find(self, table, key):
        """The index of the session with this canonical key, None if there is none."""
        index = ctypes.c_uint32()
        kb = self._widths(table)[0]
        rc = self._guard(self._lib.matcha_session_find, self._dev, table, to_be(key, kb), kb,
                         ctypes.byref(index))
        if rc == ENOENT:
            return None
        if rc < 0:
            raise MatchaError("matcha_session_find", rc, self.last_error())
        return index.value

    def session_delete(self, table, key):
        kb = self._widths(table)[0]
        self._call("matcha_session_delete", table, to_be(key, kb), kb)

    def session_flush(self, table):
        self._call("matcha_session_flush", table)

    def session_stats(self, table):
        s = SessionStats()
        self._call("matcha_session_stats", table, ctypes.byref(s))
        return s.as_dict()

    def session_set_timeout(self, table, state, ticks):
        self._call("matcha_session_set_timeout", table, state, ticks)

    def session_get_timeout(self, table, state):
        v = ctypes.c_uint32()
        self._call("matcha_session_get_timeout", table, state, ctypes.byref(v))
        return v.value

    def session_set_tick(self, table, clocks):
        self._call("matcha_session_set_tick", table, clocks)

    def session_set_scan_interval(self, table, clocks):
        self._call("matcha_session_set_scan_interval", table, clocks)

    def session_get_scan_interval(self, table):
        v = ctypes.c_uint32()
        self._call("matcha_session_get_scan_interval", table, ctypes.byref(v))
        return v.value

    def session_now(self, table):
        v = ctypes.c_uint32()
        self._call("matcha_session_now", table, ctypes.byref(v))
        return v.value

    def session_set_policy(self, table, policy):
        self._call("matcha_session_set_policy", table, policy)

    def session_get_policy(self, table):
        v = ctypes.c_int()
        self._call("matcha_session_get_policy", table, ctypes.byref(v))
        return v.value
    # Meters.

    def set_clock_hz(self, hz):
        self._call("matcha_set_clock_hz", hz)

    def meter_set(self, table, index, flags=0, cir=0, cburst=0, pir=0, pburst=0, off=False):
        """Sets a meter in P4Runtime terms (rates per second, bursts in bytes or packets);
        `off` unconfigures it."""
        cfg = MeterConfig(flags, cir, cburst, pir, pburst)
        self._call("matcha_meter_set", table, index, None if off else ctypes.byref(cfg))

    def meter_get(self, table, index):
        """(MeterConfig, committed tokens, peak tokens); MatchaError ENOENT if unconfigured."""
        cfg, c, p = MeterConfig(), ctypes.c_uint64(), ctypes.c_uint64()
        self._call("matcha_meter_get", table, index, ctypes.byref(cfg), ctypes.byref(c),
                   ctypes.byref(p))
        return cfg, c.value, p.value

    # Entries by name (a layout loaded first).

    def layout_load_text(self, text, name="layout.json"):
        data = text.encode()
        self._call("matcha_layout_load_text", data, len(data), name.encode())

    def tables_adopt(self):
        self._call("matcha_tables_adopt")

    @staticmethod
    def _params(params):
        return (_Value * max(1, len(params)))(*(_Value.of(v) for v in params))

    def entry_add(self, table, keys, action, params=()):
        """Adds an entry matching `keys` (one int per key field, exact) to the table called
        `table`; returns its handle."""
        match = (_Match * len(keys))(*(_Match(MATCH_EXACT, _Value.of(k)) for k in keys))
        handle = ctypes.c_uint32()
        self._call("matcha_entry_add", table.encode(), match, len(keys), action.encode(),
                   self._params(params), len(params), NO_PRIORITY, ctypes.byref(handle))
        return handle.value

    def entry_modify(self, table, handle, action, params=()):
        self._call("matcha_entry_modify", table.encode(), handle, action.encode(),
                   self._params(params), len(params))

    def entry_delete(self, table, handle):
        self._call("matcha_entry_delete", table.encode(), handle)

    def entry_read(self, table, handle):
        """The entry read back from the hardware, as an EntryView."""
        v = _EntryView()
        self._call("matcha_entry_read", table.encode(), handle, ctypes.byref(v))
        return EntryView(v.action.contents.name.decode(),
                         tuple(v.params[i].int() for i in range(v.nparams)), v.index)

    def entry_handles(self, table):
        """The handles in use in a table, lowest first."""
        out, h = [], ctypes.c_uint32()
        while True:
            rc = self._guard(self._lib.matcha_entry_next, self._dev, table.encode(),
                             out[-1] + 1 if out else 0, ctypes.byref(h))
            if rc == ENOENT:  # past the last handle
                return out
            if rc < 0:
                raise MatchaError("matcha_entry_next", rc, self.last_error())
            out.append(h.value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------- the recording bus

# The descriptor word that holds each field of a Descriptor.
DESCRIPTOR_WORD = {
    "kind": contract.DESC_KIND_WORD, "key_bits": contract.DESC_KEY_BITS_WORD, "size": contract.DESC_SIZE_WORD,
    "data_bits": contract.DESC_DATA_BITS_WORD, "base": contract.DESC_BASE_WORD,
    "geometry": contract.DESC_GEOMETRY_WORD, "latency": contract.DESC_LATENCY_WORD, "extra": contract.DESC_EXTRA_WORD,
}


def descriptor_address(i, field="kind"):
    """The address of descriptor `i`'s word that holds `field`."""
    return contract.INFO_DESCRIPTORS + contract.INFO_DESCRIPTOR_BYTES * i + 4 * DESCRIPTOR_WORD[field]


def meter_geometry(rate, level, time):
    """A meter array's geometry word from its rate, burst and level, and time base widths."""
    return (rate << contract.METER_GEOMETRY_RATE_LSB | level << contract.METER_GEOMETRY_LEVEL_LSB
            | time << contract.METER_GEOMETRY_TIME_LSB)


def meter_geometry_widths(geometry):
    """(rate, level, time) bits of a meter array's geometry word."""
    return tuple(geometry >> lsb & contract.METER_GEOMETRY_FIELD_MASK for lsb in
                 (contract.METER_GEOMETRY_RATE_LSB, contract.METER_GEOMETRY_LEVEL_LSB, contract.METER_GEOMETRY_TIME_LSB))


def flags_word(action, valid=True):
    """A window FLAGS value: the action id (a session's state) and the valid bit."""
    return action << contract.FLAGS_ACTION_SHIFT | (contract.FLAGS_VALID if valid else 0)


def flags_action(flags):
    """The action id (a session's state) of a FLAGS value."""
    return flags >> contract.FLAGS_ACTION_SHIFT & contract.FLAGS_ACTION_MASK


@dataclass(frozen=True)
class Descriptor:
    kind: int
    key_bits: int
    size: int
    data_bits: int
    base: int
    geometry: int  # ways (exact), levels (LPM), meter_geometry (meter), range fields (ternary), 0
    latency: int
    extra: int     # lpm_extra (LPM), clocks per tick (meter), range slots (ternary), 0

    @classmethod
    def from_words(cls, words):
        return cls(**{f: words[j] for f, j in DESCRIPTOR_WORD.items()})

    @property
    def words(self):
        """The descriptor's words as the self-describing block holds them."""
        w = [0] * contract.DESC_WORDS
        for f, j in DESCRIPTOR_WORD.items():
            w[j] = getattr(self, f)
        return w

    @property
    def code(self):
        """The kind without its flags: KIND_EXACT, KIND_LPM, KIND_TERNARY or KIND_METER."""
        return self.kind & contract.KIND_CODE_MASK

    @property
    def counters(self):
        return bool(self.kind & contract.KIND_COUNTERS)

    @property
    def default_action(self):
        return bool(self.kind & contract.KIND_DEFAULT_ACTION)

    @property
    def prefix_store(self):
        return bool(self.kind & contract.KIND_PREFIX_STORE)

    def counter_index(self, index):
        """The counter a window INDEX names (entry, or LPM result), None if none."""
        if self.code != contract.KIND_LPM:
            return index if 0 <= index < self.size else None
        level, address = index >> contract.LPM_LEVEL_SHIFT, index & contract.LPM_ADDRESS_MASK
        return address if level == self.geometry and address < self.size else None

    @property
    def fanout(self):
        """An LPM table's slots a node."""
        return self.extra & contract.LPM_EXTRA_FANOUT_MASK

    @property
    def pointer_bits(self):
        """An LPM table's bits of a slot's pointer."""
        return self.extra >> contract.LPM_EXTRA_POINTER_SHIFT & contract.LPM_EXTRA_FIELD_MASK

    @property
    def memory_levels(self):
        """An LPM table's lowest levels kept in memory."""
        return self.extra >> contract.LPM_EXTRA_MEMORY_SHIFT & contract.LPM_EXTRA_FIELD_MASK

    @property
    def range_fields(self):
        """A ternary table's range fields (0 for any other table)."""
        return self.geometry if self.code == contract.KIND_TERNARY else 0

    def range_index_in_range(self, index):
        """Whether a RANGE_* command's `index` names a field and slot of this table."""
        return (index >> contract.RANGE_FIELD_SHIFT < self.range_fields and
                index & contract.RANGE_SLOT_MASK < self.extra)

    def index_in_range(self, index):
        """Whether a WRITE, READ or ZERO of `index` addresses an entry of this table."""
        if self.code == contract.KIND_MEM_EXACT:
            # bucket << MEMX_INDEX_SLOT_BITS | slot; geometry: entries per bucket
            bucket, slot = index >> contract.MEMX_INDEX_SLOT_BITS, index & ((1 << contract.MEMX_INDEX_SLOT_BITS) - 1)
            return bucket < self.size // self.geometry and slot < self.geometry
        if self.code != contract.KIND_LPM:
            return 0 <= index < self.size
        level, address = index >> contract.LPM_LEVEL_SHIFT, index & contract.LPM_ADDRESS_MASK
        if self.geometry == 0:
            return False
        if level < self.geometry:
            return address < lpm_nodes(self.fanout, self.size)[level]
        return level == self.geometry and address < self.size


@dataclass(frozen=True)
class Write:
    """One recorded register write; `error` is the STATUS error the recorder predicts for
    a CMD write (None for other registers)."""
    addr: int
    value: int
    error: int = None

    @property
    def is_command(self):
        return self.error is not None


def descriptors(snapshot):
    n = snapshot[contract.INFO_OBJECTS]
    return [Descriptor.from_words([snapshot[descriptor_address(i) + 4 * j] for j in range(contract.DESC_WORDS)])
            for i in range(n)]


class RecordingBus:
    """The driver's register backend during a synchronous driver call (module docstring:
    what it models). `snapshot` maps byte address -> value of the self-describing block,
    as read_info_block returns it."""

    def __init__(self, snapshot):
        self.snapshot = dict(snapshot)
        self.tables = descriptors(self.snapshot)
        self.windows = {d.base: d for d in self.tables}
        self.number = {d.base: i for i, d in enumerate(self.tables)}
        self.staging = {}  # address -> value last written
        self.error = {}    # window base -> error field of STATUS
        self.writes = []
        # What the recorder knows beyond the registers; tests may fill both.
        self.counts = {}    # (table, counter index) -> (packets, bytes)
        self.defaults = {}  # table -> (action id, action data as an int)
        self.latched = {}   # window base -> (packets, bytes) of the last READ

    def _window(self, addr):
        base = addr & ~(contract.INFO_WINDOW_BYTES - 1)
        return (base, self.windows[base]) if base in self.windows else (None, None)

    def read32(self, addr):
        if addr < contract.INFO_WINDOW_BYTES:
            if addr not in self.snapshot:
                raise BusError(f"read of unmapped 0x{addr:06x}")
            return self.snapshot[addr]
        base, d = self._window(addr)
        if d is None:
            raise BusError(f"read of 0x{addr:06x}: no table window there")
        off = addr - base
        if off == contract.WIN_STATUS:
            return self.error.get(base, contract.STATUS_ERROR_NONE) << contract.STATUS_ERROR_SHIFT
        if off in (contract.WIN_HITS, contract.WIN_HITS + 4, contract.WIN_MISSES, contract.WIN_MISSES + 4):
            return 0
        if contract.WIN_PACKETS <= off < contract.WIN_BYTES + 8:
            value = self.latched.get(base, (0, 0))[(off - contract.WIN_PACKETS) // 8]
            return (value >> 32 if off % 8 else value) & 0xFFFFFFFF
        return self.staging.get(addr, 0)

    def write32(self, addr, value):
        base, d = self._window(addr)
        if d is None:
            raise BusError(f"write of 0x{value:08x} to 0x{addr:06x}: no table window there")
        if addr - base != contract.WIN_CMD:
            self.staging[addr] = value
            self.writes.append(Write(addr, value))
            return
        known = {contract.CMD_WRITE, contract.CMD_READ, contract.CMD_CLEAR}
        known |= {contract.CMD_ZERO} if d.counters else set()
        known |= {contract.CMD_DEFAULT, contract.CMD_READ_DEFAULT} if d.default_action else set()
        ranges = {contract.CMD_RANGE_SLOT, contract.CMD_RANGE_SPAN, contract.CMD_RANGE_REBUILD}
        known |= ranges if d.range_fields else set()
        index = self.staging.get(base + contract.WIN_INDEX, 0)
        if value not in known:
            err = contract.STATUS_ERROR_UNKNOWN_CMD
        elif value in (contract.CMD_WRITE, contract.CMD_READ, contract.CMD_ZERO) and not d.index_in_range(index):
            err = contract.STATUS_ERROR_INDEX_RANGE
        elif value in ranges and not d.range_index_in_range(index):
            err = contract.STATUS_ERROR_INDEX_RANGE
        else:
            err = contract.STATUS_ERROR_NONE
            self._command(base, d, value, index)
        self.error[base] = err
        self.writes.append(Write(addr, value, err))

    def _command(self, base, d, cmd, index):
        """What a command that succeeds does to what the recorder knows."""
        table, counter = self.number[base], d.counter_index(index)
        if cmd == contract.CMD_READ and d.counters:
            self.latched[base] = self.counts.get((table, counter), (0, 0))
        elif cmd == contract.CMD_ZERO and counter is not None:
            self.counts.pop((table, counter), None)
        elif cmd == contract.CMD_CLEAR:
            self.counts = {k: v for k, v in self.counts.items() if k[0] != table}
        elif cmd == contract.CMD_DEFAULT:
            words = (d.data_bits + 31) // 32
            data = sum(self.staging.get(base + contract.WIN_DATA + 4 * i, 0) << (32 * i)
                       for i in range(words))
            action = flags_action(self.staging.get(base + contract.WIN_FLAGS, 0))
            self.defaults[table] = (action, data & ((1 << d.data_bits) - 1))
        elif cmd == contract.CMD_READ_DEFAULT:
            action, data = self.defaults.get(table, (0, 0))
            self.staging[base + contract.WIN_FLAGS] = flags_word(action)
            for i in range((d.data_bits + 31) // 32):
                self.staging[base + contract.WIN_DATA + 4 * i] = (data >> (32 * i)) & 0xFFFFFFFF

    def take(self):
        """The writes recorded since the last take(), oldest first."""
        out, self.writes = self.writes, []
        return out


# ------------------------------------------------------------------- on the DUT side

async def read_info_block(read32):
    """The self-describing block of the DUT as {address: value}; `read32` is an async
    callable reading one register of the DUT."""
    snap = {a: await read32(a) for a in (contract.INFO_MAGIC, contract.INFO_VERSION, contract.INFO_BUILD_ID, contract.INFO_OBJECTS)}
    for i in range(snap[contract.INFO_OBJECTS]):
        for j in range(contract.DESC_WORDS):
            a = descriptor_address(i) + 4 * j
            snap[a] = await read32(a)
    return snap


def commands(writes):
    """Recorded writes split into commands: each a list of the staging writes since the
    previous command followed by its CMD write (trailing staging writes form a last group
    without a command)."""
    groups, cur = [], []
    for w in writes:
        cur.append(w)
        if w.is_command:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    return groups


async def replay(writes, write32, read32, skip_reads=False, max_polls=1_000_000):
    """Performs recorded writes on the DUT in order. After each CMD write, polls STATUS
    until it is not busy and checks that its error field is the one the recorder
    predicted (so a command the driver saw succeed succeeds on the DUT). `write32(addr,
    value)` and `read32(addr)` are async callables on the DUT's bus. `skip_reads` leaves
    out READ commands with their INDEX write (the LPM capacity probes). Returns the number
    of commands performed."""
    done = 0
    for group in commands(writes):
        cmd = group[-1]
        if skip_reads and cmd.is_command and cmd.value == contract.CMD_READ:
            continue
        for w in group:
            await write32(w.addr, w.value)
        if not cmd.is_command:
            continue
        for _ in range(max_polls):
            status = await read32(cmd.addr)
            if not status & contract.STATUS_BUSY:
                break
        else:
            raise AssertionError(f"command {cmd.value} at 0x{cmd.addr:06x} still busy after "
                                 f"{max_polls} STATUS reads")
        error = (status >> contract.STATUS_ERROR_SHIFT) & contract.STATUS_ERROR_MASK
        if error != cmd.error:
            index = next((w.value for w in reversed(group)
                          if w.addr == (cmd.addr & ~(contract.INFO_WINDOW_BYTES - 1)) + contract.WIN_INDEX), None)
            raise AssertionError(
                f"command {cmd.value} at 0x{cmd.addr:06x}"
                + (f" on INDEX 0x{index:x}" if index is not None else "")
                + f": STATUS error {error}, the contract (docs/tables.md) says {cmd.error}")
        done += 1
    return done
