# SPDX-License-Identifier: Apache-2.0
"""The C driver (sw/driver/include/matcha.h, libmatcha.so) as the server calls it, through
ctypes: a device opened by URI, its layout, the calls by name for entries, default
actions, per-entry counters and meters, and a Corundum card's CONTROL. Table placement,
hashing, LPM and ternary logic stay in C; this module only converts arguments.

A call that returns a negative MATCHA_E* code raises `MatchaError` with the code and
matcha_last_error(). One `Device` must not be used by two threads at once (matcha.h); the
server holds a lock around it.
"""

import ctypes
import importlib.util

# enum matcha_error
OK, EIO, ENODEV, EVERSION, EINVAL, ENOTABLE, EKIND = 0, -1, -2, -3, -4, -5, -6
E2BIG, EEXIST, ENOENT, ENOSPC, ENOMEM, ETIMEDOUT, EHW = -7, -8, -9, -10, -11, -12, -13
ENOTSUP, ELAYOUT = -14, -15

# enum matcha_match_kind
MATCH_EXACT, MATCH_LPM, MATCH_TERNARY, MATCH_RANGE = 1, 2, 3, 4
NO_PRIORITY = -1          # MATCHA_NO_PRIORITY
COUNTERS_RESET = 0x1      # MATCHA_COUNTERS_RESET
METER_TWO_RATE = 0x1      # MATCHA_METER_TWO_RATE
VALUE_BYTES = 64          # MATCHA_VALUE_BYTES
MAX_PARAMS = 32           # MATCHA_MAX_PARAMS


class MatchaError(Exception):
    """A driver call failed: `code` (negative MATCHA_E*), `message` (matcha_last_error)."""

    def __init__(self, call, code, message):
        super().__init__(f"{call}: {message}")
        self.call, self.code, self.message = call, code, message


class Value(ctypes.Structure):
    """struct matcha_value: 512 bits, big-endian"""
    _fields_ = [("be", ctypes.c_uint8 * VALUE_BYTES)]

    @classmethod
    def of(cls, x):
        return cls((ctypes.c_uint8 * VALUE_BYTES)(*int(x).to_bytes(VALUE_BYTES, "big")))

    def int(self):
        return int.from_bytes(bytes(self.be), "big")


class Match(ctypes.Structure):
    """struct matcha_match"""
    _fields_ = [("kind", ctypes.c_uint), ("value", Value), ("mask", Value), ("high", Value),
                ("prefix_len", ctypes.c_uint)]


class ParamInfo(ctypes.Structure):
    """struct matcha_param_info"""
    _fields_ = [("name", ctypes.c_char_p), ("width", ctypes.c_uint), ("offset", ctypes.c_uint)]


class ActionInfo(ctypes.Structure):
    """struct matcha_action_info"""
    _fields_ = [("name", ctypes.c_char_p), ("id", ctypes.c_uint8), ("nparams", ctypes.c_uint),
                ("params", ctypes.POINTER(ParamInfo))]


class FieldInfo(ctypes.Structure):
    """struct matcha_field_info"""
    _fields_ = [("name", ctypes.c_char_p), ("width", ctypes.c_uint), ("offset", ctypes.c_uint),
                ("range", ctypes.c_bool)]


class TableLayout(ctypes.Structure):
    """struct matcha_table_layout"""
    _fields_ = [("name", ctypes.c_char_p), ("table", ctypes.c_uint), ("kind", ctypes.c_uint),
                ("key_bits", ctypes.c_uint), ("data_bits", ctypes.c_uint), ("size", ctypes.c_uint),
                ("nfields", ctypes.c_uint), ("fields", ctypes.POINTER(FieldInfo)),
                ("nactions", ctypes.c_uint), ("actions", ctypes.POINTER(ActionInfo)),
                ("default_action", ctypes.POINTER(ActionInfo))]


class MeterLayout(ctypes.Structure):
    """struct matcha_meter_layout"""
    _fields_ = [("name", ctypes.c_char_p), ("table", ctypes.c_uint), ("size", ctypes.c_uint)]


class EntryView(ctypes.Structure):
    """struct matcha_entry_view"""
    _fields_ = [("handle", ctypes.c_uint32), ("nmatch", ctypes.c_uint),
                ("match", ctypes.POINTER(Match)), ("action", ctypes.POINTER(ActionInfo)),
                ("nparams", ctypes.c_uint), ("params", Value * MAX_PARAMS),
                ("has_priority", ctypes.c_bool), ("priority", ctypes.c_uint32),
                ("hw_entries", ctypes.c_uint), ("index", ctypes.c_uint32)]


class MeterConfig(ctypes.Structure):
    """struct matcha_meter_config"""
    _fields_ = [("flags", ctypes.c_uint)] + \
        [(n, ctypes.c_uint64) for n in ("cir", "cburst", "pir", "pburst")]


def load(path):
    """libmatcha.so at `path` (make -C sw/driver shared), its functions typed."""
    lib = ctypes.CDLL(str(path))
    P, U, I, U32, B = ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_uint32, ctypes.c_char_p
    U64P, U32P = ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(U32)
    sigs = {
        "matcha_open": (I, [B, ctypes.POINTER(P)]),
        "matcha_close": (None, [P]),
        "matcha_last_error": (B, [P]),
        "matcha_build_id": (U32, [P]),
        "matcha_table_count": (U, [P]),
        "matcha_table_clear": (I, [P, U]),
        "matcha_tables_adopt": (I, [P]),
        "matcha_set_clock_hz": (I, [P, ctypes.c_uint64]),
        "matcha_layout_load": (I, [P, B]),
        "matcha_layout_program": (B, [P]),
        "matcha_layout_table": (ctypes.POINTER(TableLayout), [P, U]),
        "matcha_layout_meter": (ctypes.POINTER(MeterLayout), [P, U]),
        "matcha_entry_add": (I, [P, B, ctypes.POINTER(Match), U, B, ctypes.POINTER(Value), U,
                                 ctypes.c_int64, U32P]),
        "matcha_entry_modify": (I, [P, B, U32, B, ctypes.POINTER(Value), U]),
        "matcha_entry_delete": (I, [P, B, U32]),
        "matcha_entry_read": (I, [P, B, U32, ctypes.POINTER(EntryView)]),
        "matcha_entry_next": (I, [P, B, U32, U32P]),
        "matcha_entry_counters": (I, [P, B, U32, U64P, U64P, U]),
        "matcha_default_set": (I, [P, B, B, ctypes.POINTER(Value), U]),
        "matcha_default_get": (I, [P, B, ctypes.POINTER(ctypes.POINTER(ActionInfo)),
                                   ctypes.POINTER(Value)]),
        "matcha_meter_set": (I, [P, U, U32, ctypes.POINTER(MeterConfig)]),
        "matcha_meter_get": (I, [P, U, U32, ctypes.POINTER(MeterConfig), U64P, U64P]),
        "matcha_app_control": (I, [P, U32, U32, U32P]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


def load_contract(path):
    """The generated contract's constants (build/rtl/contract/matcha_contract.py, written
    with the matcha_contract.h that libmatcha.so was built against) as a module."""
    spec = importlib.util.spec_from_file_location("matcha_contract", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _values(ints):
    return (Value * max(1, len(ints)))(*(Value.of(v) for v in ints))


class Device:
    """A device opened by URI (`sim:PATH`, `mqnic:/dev/mqnic0`, `pci:...`, `serial:...`)."""

    def __init__(self, lib, uri):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        rc = lib.matcha_open(uri.encode(), ctypes.byref(self.handle))
        if rc < 0:
            message = self.last_error() if self.handle else "no memory"
            self.close()
            raise MatchaError(f"opening {uri}", rc, message)

    def close(self):
        if self.handle:
            self.lib.matcha_close(self.handle)
            self.handle = ctypes.c_void_p()

    def last_error(self):
        return self.lib.matcha_last_error(self.handle).decode()

    def _call(self, name, *args):
        rc = getattr(self.lib, name)(self.handle, *args)
        if rc < 0:
            raise MatchaError(name, rc, self.last_error())
        return rc

    def build_id(self):
        return self.lib.matcha_build_id(self.handle)

    def load_layout(self, path):
        self._call("matcha_layout_load", str(path).encode())

    def program(self):
        name = self.lib.matcha_layout_program(self.handle)
        return name.decode() if name else None

    def adopt(self):
        self._call("matcha_tables_adopt")

    def set_clock_hz(self, hz):
        self._call("matcha_set_clock_hz", hz)

    def objects(self):
        """[(descriptor index, TableLayout or None, MeterLayout or None)]"""
        out = []
        for i in range(self.lib.matcha_table_count(self.handle)):
            t = self.lib.matcha_layout_table(self.handle, i)
            m = self.lib.matcha_layout_meter(self.handle, i)
            out.append((i, t.contents if t else None, m.contents if m else None))
        return out

    def table_clear(self, index):
        self._call("matcha_table_clear", index)

    def entry_add(self, table, matches, action, params, priority):
        """Adds an entry; `matches` are Match structures in the table's field order, params
        ints in the action's order, priority an int or NO_PRIORITY. Returns its handle."""
        handle = ctypes.c_uint32()
        arr = (Match * len(matches))(*matches)
        self._call("matcha_entry_add", table.encode(), arr, len(matches), action.encode(),
                   _values(params), len(params), priority, ctypes.byref(handle))
        return handle.value

    def entry_modify(self, table, handle, action, params):
        self._call("matcha_entry_modify", table.encode(), handle, action.encode(), _values(params),
                   len(params))

    def entry_delete(self, table, handle):
        self._call("matcha_entry_delete", table.encode(), handle)

    def entry_read(self, table, handle):
        """(matches as added, action name, param ints, priority or None) from the hardware."""
        v = EntryView()
        self._call("matcha_entry_read", table.encode(), handle, ctypes.byref(v))
        matches = [v.match[i] for i in range(v.nmatch)]
        return (matches, v.action.contents.name.decode(), [v.params[i].int() for i in range(v.nparams)],
                v.priority if v.has_priority else None)

    def entry_handles(self, table):
        """Every handle of the table, in order."""
        handles, h = [], ctypes.c_uint32()
        start = 0
        while True:
            rc = self.lib.matcha_entry_next(self.handle, table.encode(), start, ctypes.byref(h))
            if rc == ENOENT:
                return handles
            if rc < 0:
                raise MatchaError("matcha_entry_next", rc, self.last_error())
            handles.append(h.value)
            start = h.value + 1

    def entry_counters(self, table, handle, reset=False):
        packets, nbytes = ctypes.c_uint64(), ctypes.c_uint64()
        self._call("matcha_entry_counters", table.encode(), handle, ctypes.byref(packets),
                   ctypes.byref(nbytes), COUNTERS_RESET if reset else 0)
        return packets.value, nbytes.value

    def default_set(self, table, action, params):
        self._call("matcha_default_set", table.encode(), action.encode(), _values(params), len(params))

    def default_get(self, table):
        """(action name, param ints) of the table's miss action, read from the hardware."""
        action = ctypes.POINTER(ActionInfo)()
        params = (Value * MAX_PARAMS)()
        self._call("matcha_default_get", table.encode(), ctypes.byref(action), params)
        a = action.contents
        return a.name.decode(), [params[i].int() for i in range(a.nparams)]

    def app_control(self, set_bits=0, clear_bits=0):
        """CONTROL of a Corundum card's Matcha application block, after setting `set_bits`
        and clearing `clear_bits` (matcha_app_control; MatchaError ENODEV on a device
        without the block, such as the simulator)."""
        now = ctypes.c_uint32()
        self._call("matcha_app_control", set_bits, clear_bits, ctypes.byref(now))
        return now.value

    def meter_set(self, table, index, config):
        """config: MeterConfig, or None to unconfigure the meter."""
        self._call("matcha_meter_set", table, index, ctypes.byref(config) if config else None)

    def meter_get(self, table, index):
        """The meter's MeterConfig, or None if it is not configured."""
        cfg = MeterConfig()
        rc = self.lib.matcha_meter_get(self.handle, table, index, ctypes.byref(cfg), None, None)
        if rc == ENOENT:
            return None
        if rc < 0:
            raise MatchaError("matcha_meter_get", rc, self.last_error())
        return cfg
