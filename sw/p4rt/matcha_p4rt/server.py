# SPDX-License-Identifier: Apache-2.0
"""The P4Runtime service (p4runtime.proto's P4Runtime) on one Matcha device.

What is served and how (docs/p4runtime.md has the user's view):

- StreamChannel: arbitration for the default role. The stream with the highest election id
  is the primary; every stream is told when the primary changes (OK to the primary,
  ALREADY_EXISTS to the others, NOT_FOUND while there is none). Two streams may not hold one
  election id (INVALID_ARGUMENT ends the later one). Packet-in goes to the primary; a punted
  frame that finds no primary is counted (`packet_in_dropped`). A packet-out from the
  primary goes to matcha-sim's CPU port (cpu_port.py): out of its egress_port, or into the
  pipeline on its ingress_port with submit_to_ingress 1; without a CPU port it is answered
  with a StreamError UNIMPLEMENTED (no target the driver opens has an injection path).
- SetForwardingPipelineConfig: the pipeline is fixed in the bitstream, so a config is
  accepted only with the P4Info generated with the device's build (equal as a message) and a
  p4_device_config that is empty or that build's layout.json. VERIFY_AND_COMMIT clears the
  forwarding state as the spec says (entries, defaults, meters); RECONCILE_AND_COMMIT keeps it.
  The device's P4Info is in force from the start, so a client may also only Get it.
- Write: table entries (INSERT, MODIFY, DELETE, priorities), the default entry (MODIFY; with
  no action, back to the initial default), direct counters (MODIFY to 0: a reset) and meters
  (MODIFY with a config, or without one to unconfigure), CONTINUE_ON_ERROR. Each update is
  checked and applied on its own; if any fails the RPC answers UNKNOWN with one p4.v1.Error
  per update in the status details, as the spec asks.
- Read: table entries (with counter_data when the request asks), default entries, direct
  counters and meters, each by wildcard (table or meter id 0, no match, no index) or one by one.
- Capabilities.

Every entry goes through the C driver by name; the server keeps only which driver handle an
entry's match is, its controller metadata, and what the spec makes it remember.
"""

import json
import logging
import queue
import threading

import grpc
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from . import libmatcha as lm
from .schema import BadValue, Schema, decode, encode

API_VERSION = "1.4.1"  # the p4runtime protos this server is built on (versions.env)
log = logging.getLogger("matcha-p4rt")

# A driver error code as the P4Runtime status of the update that met it.
DRIVER_STATUS = {
    lm.EEXIST: code_pb2.ALREADY_EXISTS,
    lm.ENOENT: code_pb2.NOT_FOUND,
    lm.ENOSPC: code_pb2.RESOURCE_EXHAUSTED,
    lm.EINVAL: code_pb2.INVALID_ARGUMENT,
    lm.E2BIG: code_pb2.INVALID_ARGUMENT,
    lm.ENOTSUP: code_pb2.UNIMPLEMENTED,
}
GRPC_CODE = {c.value[0]: c for c in grpc.StatusCode}


class UpdateError(Exception):
    """One update refused: a google.rpc code and the reason."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _driver(e):
    return UpdateError(DRIVER_STATUS.get(e.code, code_pb2.INTERNAL), e.message)


class Entry:
    """What the server remembers of an entry beyond the driver: its handle and the
    controller's cookies."""
    __slots__ = ("handle", "controller_metadata", "metadata")

    def __init__(self, handle, controller_metadata=0, metadata=b""):
        self.handle, self.controller_metadata, self.metadata = handle, controller_metadata, metadata


class Target:
    """A device, its schema and the entries' index, behind one lock (a driver handle must
    not be used by two threads at once)."""

    def __init__(self, device, schema, layout_text):
        self.device, self.schema, self.layout_text = device, schema, layout_text
        self.lock = threading.Lock()
        self.entries = {}  # table id -> {(canonical key, priority): Entry}
        self.index_entries()

    def index_entries(self):
        """The index from what the driver holds (adopted from the hardware at start)."""
        self.entries = {t: {} for t in self.schema.tables}
        for table in self.schema.tables.values():
            for h in self.device.entry_handles(table.driver):
                matches, _, _, priority = self.device.entry_read(table.driver, h)
                key = (Schema.canonical_of_driver(table, matches), priority or 0)
                self.entries[table.id][key] = Entry(h)

    def reset(self):
        """Forwarding state back to power-up: no entries, initial defaults, meters unset."""
        for table in self.schema.tables.values():
            self.device.table_clear(table.index)
            action_id, params = table.initial_default
            self.device.default_set(table.driver, table.actions[action_id].driver, params)
        for meter in self.schema.meters.values():
            for i in range(meter.size):
                self.device.meter_set(meter.index, i, None)
        self.entries = {t: {} for t in self.schema.tables}

    # ------------------------------------------------------------------ writes

    def table(self, table_id):
        table = self.schema.tables.get(table_id)
        if table is None:
            raise UpdateError(code_pb2.NOT_FOUND, f"no table id {table_id:#x}")
        return table

    def action(self, table, msg):
        """(driver action name, param ints) of a TableEntry's action."""
        kind = msg.action.WhichOneof("type")
        if kind != "action":
            raise UpdateError(code_pb2.UNIMPLEMENTED if kind else code_pb2.INVALID_ARGUMENT,
                              f"table {table.name}: {'a ' + kind if kind else 'no action'}; "
                              "the tables take direct actions")
        a = table.actions.get(msg.action.action.action_id)
        if a is None:
            raise UpdateError(code_pb2.INVALID_ARGUMENT,
                              f"table {table.name} has no action id {msg.action.action.action_id:#x}")
        given = {}
        for p in msg.action.action.params:
            spec = [x for x in a.params if x[0] == p.param_id]
            if not spec:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"action {a.name} has no parameter id {p.param_id}")
            if p.param_id in given:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"action {a.name}: parameter {spec[0][1]} given twice")
            given[p.param_id] = decode(p.value, spec[0][2], f"action {a.name}, parameter {spec[0][1]}")
        missing = [n for pid, n, _ in a.params if pid not in given]
        if missing:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"action {a.name}: no value for {', '.join(missing)}")
        return a.driver, [given[pid] for pid, _, _ in a.params]

    def write_table_entry(self, kind, te):
        table = self.table(te.table_id)
        if te.is_default_action:
            return self.write_default(kind, table, te)
        if te.HasField("meter_config") or te.HasField("meter_counter_data"):
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"table {table.name} has no direct meter")
        if te.idle_timeout_ns:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"table {table.name} has no idle timeout")
        key = Schema.key(table, te.match, te.priority)
        entries = self.entries[table.id]
        entry = entries.get(key)
        if kind == p4runtime_pb2.Update.INSERT:
            if entry is not None:
                raise UpdateError(code_pb2.ALREADY_EXISTS, f"table {table.name}: the entry exists")
            action, params = self.action(table, te)
            try:
                handle = self.device.entry_add(table.driver, Schema.driver_matches(key[0]), action, params,
                                               key[1] if table.needs_priority else lm.NO_PRIORITY)
            except lm.MatchaError as e:
                raise _driver(e)
            entries[key] = Entry(handle, te.controller_metadata, te.metadata)
            if te.HasField("counter_data"):
                self.set_counters(table, entries[key], te.counter_data)
            return
        if entry is None:
            raise UpdateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
        try:
            if kind == p4runtime_pb2.Update.MODIFY:
                action, params = self.action(table, te)
                self.device.entry_modify(table.driver, entry.handle, action, params)
                entry.controller_metadata, entry.metadata = te.controller_metadata, te.metadata
                if te.HasField("counter_data"):
                    self.set_counters(table, entry, te.counter_data)
            else:
                self.device.entry_delete(table.driver, entry.handle)
                del entries[key]
        except lm.MatchaError as e:
            raise _driver(e)

    def write_default(self, kind, table, te):
        if kind != p4runtime_pb2.Update.MODIFY:
            raise UpdateError(code_pb2.INVALID_ARGUMENT,
                              f"table {table.name}: the default entry can only be modified")
        if len(te.match) or te.priority:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"table {table.name}: a default entry has no match or priority")
        if te.HasField("action"):
            action, params = self.action(table, te)
        else:  # the spec's reset to the initial default
            action_id, params = table.initial_default
            action = table.actions[action_id].driver
        try:
            self.device.default_set(table.driver, action, params)
        except lm.MatchaError as e:
            raise _driver(e)

    def set_counters(self, table, entry, data):
        if table.counter_id is None:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"table {table.name} has no direct counter")
        if data.packet_count or data.byte_count:
            raise UpdateError(code_pb2.INVALID_ARGUMENT,
                              f"table {table.name}: the hardware's counters can only be reset to 0")
        try:
            self.device.entry_counters(table.driver, entry.handle, reset=True)
        except lm.MatchaError as e:
            raise _driver(e)

    def write_direct_counter(self, kind, dc):
        table = self.table(dc.table_entry.table_id)
        if kind != p4runtime_pb2.Update.MODIFY:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, "direct counters can only be modified")
        key = Schema.key(table, dc.table_entry.match, dc.table_entry.priority)
        entry = self.entries[table.id].get(key)
        if entry is None:
            raise UpdateError(code_pb2.NOT_FOUND, f"table {table.name}: no such entry")
        self.set_counters(table, entry, dc.data)

    def meter(self, meter_id):
        meter = self.schema.meters.get(meter_id)
        if meter is None:
            raise UpdateError(code_pb2.NOT_FOUND, f"no meter id {meter_id:#x}")
        return meter

    def write_meter(self, kind, me):
        meter = self.meter(me.meter_id)
        if kind != p4runtime_pb2.Update.MODIFY:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, "meters can only be modified")
        if not me.HasField("index"):
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"meter {meter.name}: no index (a write names one meter)")
        if not 0 <= me.index.index < meter.size:
            raise UpdateError(code_pb2.OUT_OF_RANGE, f"meter {meter.name}: index {me.index.index} "
                              f"(0 to {meter.size - 1})")
        cfg = None
        if me.HasField("config"):
            c = me.config
            if c.eburst:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"meter {meter.name} is two-rate: it takes no eburst")
            cfg = lm.MeterConfig(lm.METER_TWO_RATE, c.cir, c.cburst, c.pir, c.pburst)
            for name in ("cir", "cburst", "pir", "pburst"):
                if getattr(c, name) < 0:
                    raise UpdateError(code_pb2.INVALID_ARGUMENT, f"meter {meter.name}: {name} is negative")
        try:
            self.device.meter_set(meter.index, me.index.index, cfg)
        except lm.MatchaError as e:
            raise _driver(e)

    def write(self, update):
        entity = update.entity.WhichOneof("entity")
        kind = update.type
        if kind not in (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE):
            raise UpdateError(code_pb2.INVALID_ARGUMENT, "an update with no type")
        try:
            with self.lock:
                if entity == "table_entry":
                    return self.write_table_entry(kind, update.entity.table_entry)
                if entity == "direct_counter_entry":
                    return self.write_direct_counter(kind, update.entity.direct_counter_entry)
                if entity == "meter_entry":
                    return self.write_meter(kind, update.entity.meter_entry)
        except BadValue as e:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, str(e))
        raise UpdateError(code_pb2.UNIMPLEMENTED, f"writing {entity or 'an empty entity'} is not supported")

    # ------------------------------------------------------------------- reads

    def _tables(self, table_id):
        return list(self.schema.tables.values()) if table_id == 0 else [self.table(table_id)]

    def _selected(self, table, te):
        """[(key, Entry)] a read's TableEntry selects in `table`: all, or its one match."""
        entries = self.entries[table.id]
        if not len(te.match) and not te.priority:
            return sorted(entries.items(), key=lambda kv: kv[1].handle)
        key = Schema.key(table, te.match, te.priority)
        return [(key, entries[key])] if key in entries else []

    def _entry_msg(self, table, key, entry, out):
        out.table_id = table.id
        matches, action, params, _ = self.device.entry_read(table.driver, entry.handle)
        out.match.extend(Schema.field_matches(table, key[0], p4runtime_pb2.FieldMatch))
        out.priority = key[1]
        self._action_msg(table, action, params, out)
        out.controller_metadata, out.metadata = entry.controller_metadata, entry.metadata

    @staticmethod
    def _action_msg(table, action, params, out):
        a = next(a for a in table.actions.values() if a.driver == action)
        out.action.action.action_id = a.id
        for (pid, _, _), v in zip(a.params, params):
            out.action.action.params.add(param_id=pid, value=encode(v))

    def read_table_entries(self, te):
        out = []
        for table in self._tables(te.table_id):
            if te.is_default_action:
                e = p4runtime_pb2.Entity()
                e.table_entry.table_id, e.table_entry.is_default_action = table.id, True
                self._action_msg(table, *self.device.default_get(table.driver), e.table_entry)
                out.append(e)
                continue
            for key, entry in self._selected(table, te):
                e = p4runtime_pb2.Entity()
                self._entry_msg(table, key, entry, e.table_entry)
                if te.HasField("counter_data") and table.counter_id is not None:
                    p, b = self.device.entry_counters(table.driver, entry.handle)
                    e.table_entry.counter_data.packet_count, e.table_entry.counter_data.byte_count = p, b
                out.append(e)
        return out

    def read_direct_counters(self, dc):
        tables = [t for t in self._tables(dc.table_entry.table_id) if t.counter_id is not None]
        if dc.table_entry.table_id and not tables:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"table {dc.table_entry.table_id:#x} has no direct counter")
        out = []
        for table in tables:
            for key, entry in self._selected(table, dc.table_entry):
                e = p4runtime_pb2.Entity()
                d = e.direct_counter_entry
                d.table_entry.table_id = table.id
                d.table_entry.match.extend(Schema.field_matches(table, key[0], p4runtime_pb2.FieldMatch))
                d.table_entry.priority = key[1]
                d.data.packet_count, d.data.byte_count = self.device.entry_counters(table.driver, entry.handle)
                out.append(e)
        return out

    def read_meters(self, me):
        meters = list(self.schema.meters.values()) if me.meter_id == 0 else [self.meter(me.meter_id)]
        out = []
        for meter in meters:
            if me.HasField("index"):
                if not 0 <= me.index.index < meter.size:
                    raise UpdateError(code_pb2.OUT_OF_RANGE, f"meter {meter.name}: index {me.index.index}")
                indexes = [me.index.index]
            else:
                indexes = range(meter.size)
            for i in indexes:
                e = p4runtime_pb2.Entity()
                e.meter_entry.meter_id, e.meter_entry.index.index = meter.id, i
                cfg = self.device.meter_get(meter.index, i)
                if cfg is not None:
                    c = e.meter_entry.config
                    c.cir, c.cburst, c.pir, c.pburst = cfg.cir, cfg.cburst, cfg.pir, cfg.pburst
                out.append(e)
        return out

    def read(self, entity):
        kind = entity.WhichOneof("entity")
        try:
            with self.lock:
                if kind == "table_entry":
                    return self.read_table_entries(entity.table_entry)
                if kind == "direct_counter_entry":
                    return self.read_direct_counters(entity.direct_counter_entry)
                if kind == "meter_entry":
                    return self.read_meters(entity.meter_entry)
                if kind == "counter_entry":  # the programs have no indirect counters
                    if entity.counter_entry.counter_id:
                        raise UpdateError(code_pb2.NOT_FOUND, f"no counter id {entity.counter_entry.counter_id:#x}")
                    return []
        except BadValue as e:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, str(e))
        except lm.MatchaError as e:
            raise _driver(e)
        raise UpdateError(code_pb2.UNIMPLEMENTED, f"reading {kind or 'an empty entity'} is not supported")


class Stream:
    """One StreamChannel: what it sent in its arbitration and the queue of what it is sent."""

    def __init__(self):
        self.out = queue.Queue()
        self.election_id = None  # (high, low) once it has one
        self.role = None


class Arbitration:
    """The streams of the default role and their primary (the highest election id)."""

    def __init__(self, device_id):
        self.device_id = device_id
        self.lock = threading.Lock()
        self.streams = []
        self.primary = None

    def _elect(self):
        """The stream with the highest election id, or None."""
        with_ids = [s for s in self.streams if s.election_id is not None]
        return max(with_ids, key=lambda s: s.election_id) if with_ids else None

    def _notify(self, stream):
        msg = p4runtime_pb2.StreamMessageResponse()
        a = msg.arbitration
        a.device_id = self.device_id
        if stream.role is not None:
            a.role.CopyFrom(stream.role)
        if self.primary is not None:
            a.election_id.high, a.election_id.low = self.primary.election_id
        if stream is self.primary:
            a.status.code, a.status.message = code_pb2.OK, "primary"
        elif self.primary is not None:
            a.status.code, a.status.message = code_pb2.ALREADY_EXISTS, "another client is primary"
        else:
            a.status.code, a.status.message = code_pb2.NOT_FOUND, "no primary"
        stream.out.put(msg)

    def _settle(self, asking):
        """Re-elects; tells every stream if the primary changed, else only `asking`."""
        new = self._elect()
        changed = new is not self.primary
        self.primary = new
        for s in self.streams:
            if changed or s is asking:
                self._notify(s)

    def update(self, stream, arbitration):
        """Raises UpdateError for an arbitration the stream must end on."""
        if arbitration.device_id != self.device_id:
            raise UpdateError(code_pb2.NOT_FOUND, f"no device {arbitration.device_id} (this is device {self.device_id})")
        if arbitration.role.name:
            raise UpdateError(code_pb2.UNIMPLEMENTED, f"role {arbitration.role.name!r}: only the default role is served")
        eid = (arbitration.election_id.high, arbitration.election_id.low) \
            if arbitration.HasField("election_id") else None
        with self.lock:
            if eid is not None and any(s is not stream and s.election_id == eid for s in self.streams):
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"election id {eid} is another stream's")
            if stream not in self.streams:
                self.streams.append(stream)
            stream.election_id = eid
            stream.role = arbitration.role if arbitration.HasField("role") else None
            self._settle(stream)

    def leave(self, stream):
        with self.lock:
            if stream in self.streams:
                self.streams.remove(stream)
                self._settle(None)

    def is_primary(self, election_id):
        with self.lock:
            return self.primary is not None and \
                self.primary.election_id == (election_id.high, election_id.low)

    def to_primary(self, msg):
        """Queues msg for the primary; False if there is none."""
        with self.lock:
            if self.primary is None:
                return False
            self.primary.out.put(msg)
            return True


def _status(code, message, details=()):
    """Aborts the RPC with a google.rpc.Status in the grpc-status-details-bin trailer."""
    st = status_pb2.Status(code=code, message=message)
    for d in details:
        st.details.add().Pack(d)
    return st


class P4RuntimeServicer(p4runtime_pb2_grpc.P4RuntimeServicer):

    def __init__(self, target, device_id, p4info):
        self.target, self.device_id, self.p4info = target, device_id, p4info
        self.arbitration = Arbitration(device_id)
        self.cookie = None
        self.saved = False
        self.cpu_port = None  # a CpuPort, where packet-outs go
        self.stats = {"packet_in": 0, "packet_in_dropped": 0, "packet_out": 0, "packet_out_refused": 0}
        self.stats_lock = threading.Lock()

    @staticmethod
    def _abort(context, code, message, details=()):
        st = _status(code, message, details)
        context.abort_with_status(_RpcStatus(GRPC_CODE[code], message, st))

    def _check_device(self, request, context):
        if request.device_id != self.device_id:
            self._abort(context, code_pb2.NOT_FOUND, f"no device {request.device_id} (this is device {self.device_id})")

    def _check_primary(self, request, context):
        if request.role:
            self._abort(context, code_pb2.UNIMPLEMENTED, f"role {request.role!r}: only the default role is served")
        if not self.arbitration.is_primary(request.election_id):
            self._abort(context, code_pb2.PERMISSION_DENIED,
                        f"election id ({request.election_id.high}, {request.election_id.low}) is not the primary's")

    # ----------------------------------------------------------------- RPCs

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=API_VERSION)

    def SetForwardingPipelineConfig(self, request, context):
        self._check_device(request, context)
        self._check_primary(request, context)
        A = p4runtime_pb2.SetForwardingPipelineConfigRequest
        if request.action == A.UNSPECIFIED:
            self._abort(context, code_pb2.INVALID_ARGUMENT, "no action")
        if request.action == A.COMMIT:
            if not self.saved:
                self._abort(context, code_pb2.FAILED_PRECONDITION, "COMMIT with no config saved by VERIFY_AND_SAVE")
        else:
            self._verify(request.config, context)
        if request.action in (A.VERIFY_AND_SAVE,):
            self.saved = True
        if request.action in (A.VERIFY_AND_COMMIT, A.COMMIT):
            with self.target.lock:
                try:
                    self.target.reset()
                except lm.MatchaError as e:
                    self._abort(context, code_pb2.INTERNAL, f"clearing the forwarding state: {e.message}")
        if request.action in (A.VERIFY_AND_COMMIT, A.COMMIT, A.RECONCILE_AND_COMMIT):
            self.cookie = request.config.cookie.cookie if request.config.HasField("cookie") else None
            self.saved = False
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _verify(self, config, context):
        mine = self.p4info.pkg_info
        theirs = config.p4info.pkg_info
        if config.p4info != self.p4info:
            why = (f"its P4Info is of program {theirs.name or '?'} build {theirs.version or '?'}"
                   if (theirs.name, theirs.version) != (mine.name, mine.version)
                   else f"its P4Info differs from the one generated with build {mine.version}")
            self._abort(context, code_pb2.INVALID_ARGUMENT,
                        f"the device runs program {mine.name} build {mine.version} and its pipeline is fixed "
                        f"in the bitstream; {why} (load the P4Info generated with the bitstream)")
        if config.p4_device_config:
            try:
                build = json.loads(config.p4_device_config)["buildId"]
            except (ValueError, KeyError, TypeError):
                self._abort(context, code_pb2.INVALID_ARGUMENT,
                            "p4_device_config is neither empty nor a layout.json with a buildId")
            if build != self.target.device.build_id():
                self._abort(context, code_pb2.INVALID_ARGUMENT,
                            f"p4_device_config is the layout of build {build:#010x}, "
                            f"the device's is {self.target.device.build_id():#010x}")

    def GetForwardingPipelineConfig(self, request, context):
        self._check_device(request, context)
        T = p4runtime_pb2.GetForwardingPipelineConfigRequest
        rep = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if request.response_type in (T.ALL, T.P4INFO_AND_COOKIE):
            rep.config.p4info.CopyFrom(self.p4info)
        if request.response_type in (T.ALL, T.DEVICE_CONFIG_AND_COOKIE):
            rep.config.p4_device_config = self.target.layout_text.encode()
        if self.cookie is not None:
            rep.config.cookie.cookie = self.cookie
        return rep

    def Write(self, request, context):
        self._check_device(request, context)
        self._check_primary(request, context)
        if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
            self._abort(context, code_pb2.UNIMPLEMENTED, "only CONTINUE_ON_ERROR batches are supported")
        errors, failed = [], 0
        for update in request.updates:
            err = p4runtime_pb2.Error(canonical_code=code_pb2.OK)
            try:
                self.target.write(update)
            except UpdateError as e:
                err.canonical_code, err.message = e.code, str(e)
                failed += 1
                log.info("write refused: %s: %s", code_pb2.Code.Name(e.code), e)
            errors.append(err)
        if failed:
            self._abort(context, code_pb2.UNKNOWN, f"{failed} of {len(errors)} updates failed", errors)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        self._check_device(request, context)
        for entity in request.entities:
            try:
                found = self.target.read(entity)
            except UpdateError as e:
                self._abort(context, e.code, str(e))
            for i in range(0, len(found), 1000):
                rep = p4runtime_pb2.ReadResponse()
                rep.entities.extend(found[i:i + 1000])
                yield rep

    def StreamChannel(self, request_iterator, context):
        stream = Stream()
        ended = object()

        def receive():
            try:
                for req in request_iterator:
                    kind = req.WhichOneof("update")
                    if kind == "arbitration":
                        try:
                            self.arbitration.update(stream, req.arbitration)
                        except UpdateError as e:
                            stream.out.put((e.code, str(e)))
                            return
                    elif stream not in self.arbitration.streams:
                        stream.out.put((code_pb2.FAILED_PRECONDITION, "the first message of a stream is its arbitration"))
                        return
                    elif kind == "packet":
                        refused = self.packet_out(stream, req.packet)
                        if refused is not None:
                            stream.out.put(refused)
                    else:
                        stream.out.put(_stream_error(code_pb2.UNIMPLEMENTED, f"stream message {kind} is not supported"))
            except grpc.RpcError:
                pass  # the client went away
            finally:
                stream.out.put(ended)

        threading.Thread(target=receive, daemon=True).start()
        try:
            while True:
                msg = stream.out.get()
                if msg is ended:
                    return
                if isinstance(msg, tuple):
                    self._abort(context, *msg)
                yield msg
        finally:
            self.arbitration.leave(stream)

    # ------------------------------------------------------------- packets

    def packet_out(self, stream, packet):
        """Sends a PacketOut of the primary to the CPU port; None, or the StreamError that
        refuses it (carrying the packet, as the spec asks)."""
        try:
            if stream is not self.arbitration.primary:
                raise UpdateError(code_pb2.PERMISSION_DENIED, "packet-out from a stream that is not the primary")
            if self.cpu_port is None:
                raise UpdateError(code_pb2.UNIMPLEMENTED, "the target has no injection path: packet-out needs "
                                                          "matcha-sim's CPU port (--cpu-port, docs/p4runtime.md)")
            meta = self._packet_out_metadata(packet)
            if not packet.payload:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, "packet-out with an empty payload")
            try:
                if meta["submit_to_ingress"]:
                    self.cpu_port.send(packet.payload, ingress_port=meta["ingress_port"])
                else:
                    self.cpu_port.send(packet.payload, egress_port=meta["egress_port"])
            except OSError as e:
                raise UpdateError(code_pb2.UNAVAILABLE, f"the CPU port {self.cpu_port.interface} did not take "
                                                        f"the packet-out: {e.strerror or e}")
        except UpdateError as e:
            with self.stats_lock:
                self.stats["packet_out_refused"] += 1
            log.info("packet-out refused: %s: %s", code_pb2.Code.Name(e.code), e)
            err = _stream_error(e.code, str(e))
            err.error.packet_out.packet_out.CopyFrom(packet)
            return err
        with self.stats_lock:
            self.stats["packet_out"] += 1
        return None

    def _packet_out_metadata(self, packet):
        """{name: int} of a PacketOut's metadata: every field of the P4Info's packet_out
        once, each within its width."""
        fields = {mid: (name, width) for name, (mid, width) in self.target.schema.packet_out.items()}
        got = {}
        for m in packet.metadata:
            if m.metadata_id not in fields:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"packet-out metadata: no id {m.metadata_id}")
            name, width = fields[m.metadata_id]
            if name in got:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, f"packet-out metadata: {name} given twice")
            try:
                got[name] = decode(m.value, width, f"packet-out metadata {name}")
            except BadValue as e:
                raise UpdateError(code_pb2.INVALID_ARGUMENT, str(e))
        missing = [name for name, _ in fields.values() if name not in got]
        if missing:
            raise UpdateError(code_pb2.INVALID_ARGUMENT, f"packet-out metadata: no {', '.join(missing)}")
        return got

    def packet_in(self, payload, ingress_port, reason):
        """Sends a punted frame to the primary with its ingress port and reason."""
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.packet.payload = payload
        meta = self.target.schema.packet_in
        msg.packet.metadata.add(metadata_id=meta["ingress_port"][0], value=encode(ingress_port))
        msg.packet.metadata.add(metadata_id=meta["reason"][0], value=encode(reason))
        sent = self.arbitration.to_primary(msg)
        with self.stats_lock:
            self.stats["packet_in" if sent else "packet_in_dropped"] += 1
        if not sent:
            log.warning("packet-in dropped: no primary (reason %#x, ingress port %d)", reason, ingress_port)


def _stream_error(code, message):
    msg = p4runtime_pb2.StreamMessageResponse()
    msg.error.canonical_code, msg.error.message = code, message
    return msg


class _RpcStatus(grpc.Status):
    """What context.abort_with_status takes: the code, the message and the trailer carrying
    the google.rpc.Status (grpcio-status would build the same from the Status alone)."""

    def __init__(self, code, details, status):
        self.code, self.details = code, details
        self.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)
