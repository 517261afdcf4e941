# SPDX-License-Identifier: Apache-2.0
"""matcha-p4rt (sw/p4rt, docs/p4runtime.md) serving matcha-sim, driven by p4runtime-shell:
tables written and read back by name, defaults, wrong entries answered with the spec's
status codes, a batch with an error per update, primary election between two clients, the
pipeline config (the device's P4Info accepted, another refused), meters, a packet-out
refused where there is no CPU port. On the simulator's live ports (a network namespace of
the test's own, sim/netns.sh): frames sent on veths forwarded and counted, the punted ones
reaching the primary as packet-ins as they are punted, packet-outs leaving by their egress
port or entering the pipeline, the wrong ones refused. On a Corundum card, modelled by a
resource file the driver maps: the app block's CPU port turned on while the server runs.

The oracles: what the test wrote (entries read back must mean the same match, action and
parameters, whatever bytes the server chose for them), P4Runtime's rules for the status of
each wrong update, the P4Info's sizes, and for traffic the reference model (tb/model)
holding the same entries: the frames out of each port, its per-entry counts and its
punted frames with their reasons.

Run one: pytest tb/p4rt/test_p4rt.py -k tables
"""

import ipaddress
import json
import random
import shutil
import subprocess
import sys
import queue
import time
from collections import Counter

import grpc
import pytest
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2
from p4runtime_sh.p4runtime import P4RuntimeClient, P4RuntimeWriteException
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import ARP, Ether

from tb.common import contract, cpu_header, live_sim
from tb.common import driver as drv
from tb.common.netns import Namespace
from tb.common.phv import Layout
from tb.model.program import Program
from tb.p4rt import harness as ph
from tb.sim import harness
# The server's package, on the path tb/common/driver.py puts it on.
from matcha_p4rt.cpu_port import CpuPort  # noqa: E402  isort: skip

pytestmark = pytest.mark.builds(ph.L2L3, ph.OVERLAY, ph.OVERLAY_MEM)


@pytest.fixture
def l2l3(work):
    """matcha-sim of l2l3 serving its socket until stopped, and matcha-p4rt on it."""
    sim, sock = ph.start_sim(work)
    try:
        with ph.Server(sock) as server:
            yield server
    finally:
        sim.stop()


def ints(te):
    """What a TableEntry message means: {field id: (kind, ints)}, action id, {param id:
    int}, priority, default flag; bytestrings as numbers, so that any encoding of a value
    is the same value."""
    def n(b):
        return int.from_bytes(b, "big")
    match = {}
    for fm in te.match:
        kind = fm.WhichOneof("field_match_type")
        m = getattr(fm, kind)
        match[fm.field_id] = {"exact": lambda: (kind, n(m.value)), "lpm": lambda: (kind, n(m.value), m.prefix_len),
                              "ternary": lambda: (kind, n(m.value), n(m.mask)),
                              "range": lambda: (kind, n(m.low), n(m.high))}[kind]()
    a = te.action.action
    return match, a.action_id, {p.param_id: n(p.value) for p in a.params}, te.priority, te.is_default_action


def entries(sh, table):
    return sorted((ints(e.msg()) for e in sh.TableEntry(table).read()), key=repr)


def l2(sh, mac, port):
    te = sh.TableEntry("l2_fwd")(action="forward")
    te.match["hdr.eth.dst"] = mac
    te.action["port"] = str(port)
    return te


def route(sh, prefix, port, dmac="02:00:00:00:00:02", smac="02:00:00:00:00:01"):
    te = sh.TableEntry("ipv4_lpm")(action="route")
    te.match["hdr.ipv4.dst"] = prefix
    te.action["port"], te.action["dmac"], te.action["smac"] = str(port), dmac, smac
    return te


def acl(sh, action, priority, **match):
    te = sh.TableEntry("acl")(action=action)
    for f, v in match.items():
        te.match[f] = v
    te.priority = priority
    return te


def refused(te_call):
    """The (code, message) of the one update a shell write sent."""
    with pytest.raises(P4RuntimeWriteException) as e:
        te_call()
    (idx, err), = e.value.errors
    return err.canonical_code, err.message


# ------------------------------------------------------------------------ tables


def test_tables_written_and_read_back_by_name(l2l3):
    with ph.shell_session(l2l3) as sh:
        written = {"l2_fwd": [l2(sh, "02:00:00:00:01:01", 3), l2(sh, "02:00:00:00:01:02", 7)],
                   "ipv4_lpm": [route(sh, "10.1.0.0/16", 2), route(sh, "10.1.2.0/24", 5), route(sh, "0.0.0.0/1", 1)],
                   "acl": [acl(sh, "deny", 10, **{"hdr.ipv4.src": "10.0.0.0&&&0xff000000",
                                                   "hdr.ipv4.protocol": "6&&&0xff"}),
                           acl(sh, "to_host", 20, **{"hdr.tcp.dstPort|hdr.udp.dstPort": "22&&&0xffff"})]}
        for tes in written.values():
            for te in tes:
                te.insert()
        for table, tes in written.items():
            assert entries(sh, table) == sorted((ints(te.msg()) for te in tes), key=repr), table

        # A modify changes the action and keeps the match; a delete removes only its entry.
        new = l2(sh, "02:00:00:00:01:01", 9)
        new.modify()
        gone = written["ipv4_lpm"][1]
        gone.delete()
        assert entries(sh, "l2_fwd") == sorted([ints(new.msg()), ints(written["l2_fwd"][1].msg())], key=repr)
        assert entries(sh, "ipv4_lpm") == sorted((ints(te.msg()) for te in written["ipv4_lpm"] if te is not gone),
                                                 key=repr)
        # One entry read by its match (a ternary entry with its priority).
        one = sh.TableEntry("acl")
        one.match["hdr.tcp.dstPort|hdr.udp.dstPort"] = "22&&&0xffff"
        one.priority = 20
        assert [ints(e.msg()) for e in one.read()] == [ints(written["acl"][1].msg())]

        # Default entries: read, modified with parameters, reset by a modify with no action.
        default = sh.TableEntry("ipv4_lpm")
        default.is_default = True
        (initial,) = [ints(e.msg()) for e in default.read()]
        assert initial[1] == sh.context.get_obj_id(sh.P4Type.action, "no_route")
        dflt = route(sh, "10.0.0.0/8", 4)
        dflt.match.clear()
        dflt.is_default = True
        dflt.modify()
        assert [ints(e.msg()) for e in default.read()] == [ints(dflt.msg())]
        reset = sh.TableEntry("ipv4_lpm")
        reset.is_default = True
        reset.modify()
        assert [ints(e.msg()) for e in default.read()] == [initial]


def test_wrong_entries_answered_with_their_status(l2l3):
    with ph.shell_session(l2l3) as sh:
        l2(sh, "02:00:00:00:01:01", 3).insert()
        assert refused(l2(sh, "02:00:00:00:01:01", 4).insert)[0] == code_pb2.ALREADY_EXISTS
        assert refused(l2(sh, "02:00:00:00:09:09", 4).modify)[0] == code_pb2.NOT_FOUND
        assert refused(l2(sh, "02:00:00:00:09:09", 4).delete)[0] == code_pb2.NOT_FOUND
        # A ternary entry needs a priority; exact and LPM entries take none.
        code, msg = refused(acl(sh, "deny", 0, **{"hdr.ipv4.protocol": "6&&&0xff"}).insert)
        assert code == code_pb2.INVALID_ARGUMENT and "priority" in msg
        with_priority = l2(sh, "02:00:00:00:01:05", 1)
        with_priority.priority = 3
        assert refused(with_priority.insert)[0] == code_pb2.INVALID_ARGUMENT
        # Fields the shell would not send: a value wider than the field, a ternary value
        # with bits outside its mask, a prefix with bits beyond its length, a missing exact
        # field, an action of another table.
        stub = sh.client.stub
        te = l2(sh, "02:00:00:00:01:06", 1).msg()
        te.match[0].exact.value = bytes(7)
        wide = ph.update("INSERT", te, "table_entry")
        te = acl(sh, "deny", 5, **{"hdr.ipv4.protocol": "6&&&0xff"}).msg()
        te.match[0].ternary.value = b"\x07"
        te.match[0].ternary.mask = b"\x06"
        outside = ph.update("INSERT", te, "table_entry")
        te = route(sh, "10.3.0.0/16", 1).msg()
        te.match[0].lpm.value = bytes([10, 3, 0, 1])
        beyond = ph.update("INSERT", te, "table_entry")
        te = l2(sh, "02:00:00:00:01:07", 1).msg()
        del te.match[:]
        missing = ph.update("INSERT", te, "table_entry")
        te = l2(sh, "02:00:00:00:01:08", 1).msg()
        te.action.action.action_id = sh.context.get_obj_id(sh.P4Type.action, "route")
        foreign = ph.update("INSERT", te, "table_entry")
        for u in (wide, outside, beyond, missing, foreign):
            (code, msg), = ph.write_errors(stub, [u])
            assert code == code_pb2.INVALID_ARGUMENT, msg
        # Nothing of the refused updates reached the table.
        assert entries(sh, "l2_fwd") == [ints(l2(sh, "02:00:00:00:01:01", 3).msg())]


def test_full_table_is_resource_exhausted(l2l3):
    """An LPM table holds any `size` prefixes (docs/tables.md): the P4Info's size are
    taken, the next is RESOURCE_EXHAUSTED, and a delete makes room again."""
    with ph.shell_session(l2l3) as sh:
        size = sh.context.get_obj(sh.P4Type.table, "ipv4_lpm").size
        rng = random.Random(7)
        prefixes = set()
        while len(prefixes) <= size:
            n = rng.randrange(8, 33)
            prefixes.add(str(ipaddress.ip_network((rng.getrandbits(32) >> (32 - n) << (32 - n), n))))
        prefixes = sorted(prefixes)
        updates = [ph.update("INSERT", route(sh, p, 1).msg(), "table_entry") for p in prefixes]
        errors = ph.write_errors(sh.client.stub, updates)
        assert [c for c, _ in errors] == [code_pb2.OK] * size + [code_pb2.RESOURCE_EXHAUSTED], errors[size:]
        route(sh, prefixes[0], 1).delete()
        route(sh, prefixes[-1], 1).insert()
        assert len(entries(sh, "ipv4_lpm")) == size


def test_batch_answers_each_update(l2l3):
    with ph.shell_session(l2l3) as sh:
        first, second = l2(sh, "02:00:00:00:02:01", 1), l2(sh, "02:00:00:00:02:02", 2)
        bad = l2(sh, "02:00:00:00:02:03", 3).msg()
        bad.action.action.params[0].value = b"\x10"  # 16 in a 4-bit port
        updates = [ph.update("INSERT", first.msg(), "table_entry"),
                   ph.update("INSERT", first.msg(), "table_entry"),
                   ph.update("INSERT", bad, "table_entry"),
                   ph.update("MODIFY", l2(sh, "02:00:00:00:02:09", 1).msg(), "table_entry"),
                   ph.update("INSERT", second.msg(), "table_entry")]
        codes = [c for c, _ in ph.write_errors(sh.client.stub, updates)]
        assert codes == [code_pb2.OK, code_pb2.ALREADY_EXISTS, code_pb2.INVALID_ARGUMENT, code_pb2.NOT_FOUND,
                         code_pb2.OK]
        assert entries(sh, "l2_fwd") == sorted([ints(first.msg()), ints(second.msg())], key=repr)


# ------------------------------------------------------------ arbitration, config


def arbitration(client, timeout=5):
    msg = client.get_stream_packet("arbitration", timeout=timeout)
    assert msg is not None, "no arbitration update"
    return msg.arbitration.status.code


def test_second_client_takes_primary(l2l3):
    with ph.shell_session(l2l3, election_id=(0, 5)) as sh:
        l2(sh, "02:00:00:00:03:01", 1).insert()
        other = P4RuntimeClient(1, l2l3.address, (0, 9))
        try:
            # The higher election id is the primary now; the first client is told so.
            assert arbitration(sh.client) == code_pb2.ALREADY_EXISTS
            with pytest.raises(grpc.RpcError) as e:
                l2(sh, "02:00:00:00:03:02", 2).insert()
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert ph.write_errors(other.stub, [ph.update("INSERT", l2(sh, "02:00:00:00:03:03", 3).msg(),
                                                          "table_entry")], election_id=(0, 9)) == []
            # Reads are anyone's.
            assert len(entries(sh, "l2_fwd")) == 2
            # A third stream may not take an election id that is in use.
            with pytest.raises(SystemExit):
                P4RuntimeClient(1, l2l3.address, (0, 9))
        finally:
            other.tear_down()
        # The primary gone, the first client is primary again and writes.
        assert arbitration(sh.client) == code_pb2.OK
        l2(sh, "02:00:00:00:03:04", 4).insert()
        assert len(entries(sh, "l2_fwd")) == 3


def set_config(stub, p4info_msg, device_config=b"", election_id=(1, 0),
               action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT):
    req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=1, action=action)
    req.election_id.high, req.election_id.low = election_id
    req.config.p4info.CopyFrom(p4info_msg)
    req.config.p4_device_config = device_config
    req.config.cookie.cookie = 42
    return stub.SetForwardingPipelineConfig(req)


def test_pipeline_config_is_the_devices(l2l3):
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2
    mine = text_format.Parse(ph.p4info().read_text(), p4info_pb2.P4Info())
    other = text_format.Parse(ph.p4info("policer").read_text(), p4info_pb2.P4Info())
    with ph.shell_session(l2l3) as sh:
        stub = sh.client.stub
        assert sh.client.api_version() == "1.4.1"
        l2(sh, "02:00:00:00:04:01", 1).insert()
        # RECONCILE_AND_COMMIT of the device's own config keeps the entries.
        set_config(stub, mine, ph.layout().read_bytes(),
                   action=p4runtime_pb2.SetForwardingPipelineConfigRequest.RECONCILE_AND_COMMIT)
        assert len(entries(sh, "l2_fwd")) == 1
        for p4info_msg, device_config, why in ((other, b"", "program policer"),
                                               (mine, ph.layout("policer").read_bytes(), "p4_device_config")):
            with pytest.raises(grpc.RpcError) as e:
                set_config(stub, p4info_msg, device_config)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert why in e.value.details()
        changed = p4info_pb2.P4Info()
        changed.CopyFrom(mine)
        changed.tables[0].size += 1
        with pytest.raises(grpc.RpcError) as e:
            set_config(stub, changed)
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert len(entries(sh, "l2_fwd")) == 1
        # VERIFY_AND_COMMIT starts from a clean forwarding state, as the spec says.
        set_config(stub, mine)
        assert entries(sh, "l2_fwd") == []
        req = p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=1)
        got = stub.GetForwardingPipelineConfig(req).config
        assert got.p4info == mine and got.cookie.cookie == 42 and got.p4_device_config == ph.layout().read_bytes()


def test_packet_out_refused_without_cpu_port(l2l3):
    with ph.shell_session(l2l3) as sh:
        payload = bytes(Ether(dst="02:00:00:00:05:01") / IP(dst="10.9.9.9") / UDP())
        sh.PacketOut(payload, egress_port="1").send()
        msg = sh.client.get_stream_packet("unknown", timeout=5)
        assert msg is not None and msg.HasField("error")
        assert msg.error.canonical_code == code_pb2.UNIMPLEMENTED
        assert msg.error.packet_out.packet_out.payload == payload
        # The stream stays up: the client is still primary and writes.
        l2(sh, "02:00:00:00:05:01", 1).insert()


# ---------------------------------------------------------------- the overlay


@pytest.fixture
def overlay(work):
    sim, sock = ph.start_sim(work, program="overlay")
    try:
        with ph.Server(sock, "overlay") as server:
            yield server
    finally:
        sim.stop()


def meter_config(sh, index):
    me = sh.MeterEntry("policers")
    me.index = index
    (got,) = me.read()
    m = got.msg()
    return (m.config.cir, m.config.cburst, m.config.pir, m.config.pburst) if m.HasField("config") else None


def test_overlay_meter_and_tables(overlay):
    with ph.shell_session(overlay, "overlay") as sh:
        size = sh.context.get_obj(sh.P4Type.meter, "policers").size
        me = sh.MeterEntry("policers")
        me.index = 5
        me.cir, me.cburst, me.pir, me.pburst = 1_000_000, 10_000, 2_500_000, 30_000
        me.modify()
        cir, cburst, pir, pburst = meter_config(sh, 5)
        # Rates are rounded up to the hardware's units and held within 0.1 % (docs/tables.md,
        # "Meters"); bursts are whole bytes.
        assert 1_000_000 <= cir <= 1_001_000 and 2_500_000 <= pir <= 2_502_500
        assert (cburst, pburst) == (10_000, 30_000)
        assert meter_config(sh, 6) is None
        configured = [m.msg().index.index for m in sh.MeterEntry("policers").read() if m.msg().HasField("config")]
        assert configured == [5]
        # RFC 2698 wants PIR >= CIR; an index beyond the array is out of range.
        bad = sh.MeterEntry("policers")
        bad.index = 6
        bad.cir, bad.cburst, bad.pir, bad.pburst = 2_000_000, 10_000, 1_000_000, 10_000
        assert refused(bad.modify)[0] == code_pb2.INVALID_ARGUMENT
        beyond = bad.msg()
        beyond.index.index = size
        (code, _), = ph.write_errors(sh.client.stub, [ph.update("MODIFY", beyond, "meter_entry")])
        assert code == code_pb2.OUT_OF_RANGE
        # A modify with no config unconfigures the meter.
        off = sh.MeterEntry("policers")
        off.index = 5
        off.modify()
        assert meter_config(sh, 5) is None

        # The ACL's ports are range fields, the route's key an exact group and an LPM prefix.
        rule = sh.TableEntry("acl")(action="acl.permit")
        rule.match["meta.eni"] = "7&&&0x3ff"
        rule.match["hdr.inner_tcp.dstPort|hdr.inner_udp.dstPort"] = "1000..2000"
        rule.priority = 100
        rule.insert()
        rt = sh.TableEntry("route")(action="route_vnet")
        rt.match["meta.routingGroup"] = "3"
        rt.match["hdr.inner_ipv4.dst"] = "10.20.0.0/16"
        rt.action["dst_vnet"] = "12"
        rt.insert()
        assert entries(sh, "acl") == [ints(rule.msg())]
        assert entries(sh, "route") == [ints(rt.msg())]


def test_overlay_mem_mappings_over_p4runtime(work):
    """The overlay with its mappings in memory (docs/overlay.md, "Mappings in memory")
    behind matcha-p4rt: mappings inserted, modified and deleted as P4Runtime table entries
    of `mapping` land in the memory-backed table and read back as written, through the
    server and, once it has closed, by matcha-ctl's table_dump (which reads every entry of
    the table back from the memory); a second insert of a key is ALREADY_EXISTS."""
    sim, sock = ph.start_sim(work, program="overlay_mem")
    try:
        with ph.Server(sock, "overlay_mem") as server, ph.shell_session(server, "overlay_mem") as sh:
            written, pas = [], {}
            for k in range(5):
                te = sh.TableEntry("mapping")(action="set_mapping")
                te.match["meta.dstVnet"] = "3"
                te.match["hdr.inner_ipv4.dst"] = f"172.16.0.{k + 1}"
                te.action["underlay_ip"] = f"10.20.0.{k + 1}"
                te.action["overlay_dmac"] = f"02:ca:00:03:00:{k + 1:02x}"
                te.insert()
                written.append(te)
                pas[f"172.16.0.{k + 1}"] = f"10.20.0.{k + 1}"
            assert entries(sh, "mapping") == sorted((ints(te.msg()) for te in written), key=repr)
            assert refused(written[0].insert)[0] == code_pb2.ALREADY_EXISTS
            written[1].action["underlay_ip"] = pas["172.16.0.2"] = "10.20.9.9"
            written[1].modify()
            written[2].delete()
            del written[2], pas["172.16.0.3"]
            assert entries(sh, "mapping") == sorted((ints(te.msg()) for te in written), key=repr)
        dump = subprocess.run([str(harness.matcha_ctl()), f"sim:{sock}", "--layout", str(ph.layout("overlay_mem")),
                               "-f", "-"], input="table_dump mapping\n", capture_output=True, text=True, timeout=60)
        assert dump.returncode == 0, dump.stderr
        rows = [line for line in dump.stdout.splitlines() if "set_mapping" in line]
        assert len(rows) == len(pas), dump.stdout
        for dst, pa in pas.items():
            assert any(f" {dst} " in row and f"underlay_ip={pa}," in row for row in rows), (dst, pa, dump.stdout)
    finally:
        sim.stop()


# ------------------------------------------------- the simulator's live ports

# The live simulator's ports, on sim0-sim3 / host0-host3; its CPU port on simcpu / hostcpu.
LIVE_PORTS = (0, 1, 2, 3)
# Seconds a frame may take through the simulator, the CPU port and the server on a loaded
# machine (it takes milliseconds on an idle one).
WAIT = 20
MAC_A, MAC_B = "02:00:00:00:0a:01", "02:00:00:00:0b:01"
ROUTE_DMAC, ROUTE_SMAC = "02:00:00:00:00:02", "02:00:00:00:00:01"


@pytest.fixture(scope="module")
def live():
    """matcha-sim of l2l3 live in a network namespace of the test's own (tb/common/netns.py,
    skipped where the machine forbids one), ports 0-3 on veth pairs, its CPU port on simcpu;
    matcha-p4rt inside the namespace on the CPU port's peer hostcpu, serving on a Unix
    socket the test reaches from its own namespace. Yields (namespace, simulator, server)."""
    live_sim.need()
    work = harness.short_dir()
    try:
        with Namespace(LIVE_PORTS) as ns:
            sim = live_sim.LiveSim(ns, work, LIVE_PORTS)
            try:
                with ph.Server(sim.socket, "l2l3", "--cpu-port", "hostcpu", ns=ns,
                               listen=f"unix:{work}/p4rt.sock") as server:
                    yield ns, sim, server
            finally:
                sim.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def live_model(*, with_l2=False, with_acl=False):
    """The reference model of l2l3 holding what write_live_entries writes: the route always,
    the L2 entry and the ACL rule when asked."""
    program = Program(ph.layout())
    lpm = program["ipv4_lpm"]
    lpm.add(0x0A010000, 16, lpm.action_id("route"),
            lpm.data("route", port=2, dmac=int(ROUTE_DMAC.replace(":", ""), 16),
                     smac=int(ROUTE_SMAC.replace(":", ""), 16)))
    if with_l2:
        l2t = program["l2_fwd"]
        l2t.add(int(MAC_A.replace(":", ""), 16), l2t.action_id("forward"), l2t.data("forward", port=3))
    if with_acl:
        aclt = program["acl"]
        aclt.add(aclt.key(dstPort=9999), aclt.key(dstPort=0xFFFF), 10, aclt.action_id("to_host"), 0)
    return program


def write_live_entries(sh, *, with_l2=False, with_acl=False):
    """10.1.0.0/16 routed out of port 2; MAC_A forwarded to port 3; UDP and TCP to port 9999
    sent to the host by the ACL. Returns the entries as written, by table."""
    written = {"ipv4_lpm": route(sh, "10.1.0.0/16", 2, dmac=ROUTE_DMAC, smac=ROUTE_SMAC)}
    if with_l2:
        written["l2_fwd"] = l2(sh, MAC_A, 3)
    if with_acl:
        written["acl"] = acl(sh, "to_host", 10, **{"hdr.tcp.dstPort|hdr.udp.dstPort": "9999&&&0xffff"})
    for te in written.values():
        te.insert()
    return written


def live_traffic(rng):
    """[(ingress port, frame)]: L2 frames to MAC_A, UDP to 10.1.0.0/16 (port 53 routed, port
    9999 routed and sent to the host by the ACL), TCP to 192.168.0.0/16 (no route: punted),
    broadcast ARP (no entry: back out of its own port), on ports 0 and 1, in a random order."""
    def pad():
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    frames = [Ether(dst=MAC_A) / ARP(pdst="10.0.0.1") / pad() for _ in range(3)]
    frames += [Ether(dst=MAC_B) / IP(src="10.2.0.1", dst=f"10.1.2.{i}") / UDP(dport=53) / pad() for i in range(4)]
    frames += [Ether(dst=MAC_B) / IP(src="10.2.0.1", dst="10.1.9.9") / UDP(sport=i, dport=9999) / pad()
               for i in range(2)]
    frames += [Ether(dst=MAC_B) / IP(src="10.2.0.1", dst="192.168.1.1") / TCP(dport=80 + i) / pad() for i in range(2)]
    frames += [Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="10.0.0.2") for _ in range(2)]
    rng.shuffle(frames)
    return [(rng.randrange(2), bytes(f)) for f in frames]


def packet_in(msg):
    """(payload, ingress port, reason) of a PacketIn, its metadata by the P4Info's ids."""
    meta = {m.metadata_id: int.from_bytes(m.value, "big") for m in msg.packet.metadata}
    return msg.packet.payload, meta[1], meta[2]


def test_cpu_port_against_the_encapsulation():
    """matcha-p4rt's side of the CPU port (sw/p4rt/matcha_p4rt/cpu_port.py) on a veth pair of
    its own, no simulator, against the encapsulation's scapy layer written from sim/README.md
    (tb/common/cpu_header.py): packet-ins of any port and reason delivered with their frame;
    frames that are no packet-in (cut short of the header, another type, the ingress port
    0xFF of an output the simulator could not explain) counted by why and not delivered;
    packet-outs written as type 3 to their egress port or type 2 into the pipeline on their
    ingress port."""
    frame = bytes(Ether(dst=MAC_B, src=MAC_A) / IP(src="10.2.0.1", dst="10.1.2.3") / UDP() / bytes(30))
    delivered = queue.Queue()
    with Namespace([], cpu=True) as ns:
        with ns.inside():  # the packet socket is the namespace's from then on
            port = CpuPort("hostcpu", lambda *a: delivered.put(a), 16)
        port.start()
        try:
            with ns.port("simcpu") as sim_end:
                sim_end.send(cpu_header.packet_in(frame, 0, 7, 0x22))
                sim_end.send(bytes(cpu_header.packet_in(frame, 0, 0, 1))[:17])  # the header is 18 bytes
                sim_end.send(cpu_header.packet_out(frame, 1))
                sim_end.send(cpu_header.packet_in(frame, 0xFF, 0, 1))
                sim_end.send(cpu_header.packet_in(frame, 15, 3, 0x40))
                assert [delivered.get(timeout=WAIT) for _ in range(2)] == [(frame, 0, 0x22), (frame, 15, 0x40)]
                assert port.ignored == {"short": 1, "not_packet_in": 1, "no_ingress_port": 1}
                port.send(frame, egress_port=5)
                port.send(frame, ingress_port=2)
                got = [Ether(sim_end.receive(WAIT)) for _ in range(2)]
        finally:
            port.stop()
    assert [(p[cpu_header.MatchaCpu].type, p[cpu_header.MatchaCpu].ingress_port,
             p[cpu_header.MatchaCpu].egress_port, p[cpu_header.MatchaCpu].reason,
             bytes(p[cpu_header.MatchaCpu].payload)) for p in got] == [
        (cpu_header.TO_EGRESS, 0, 5, 0, frame), (cpu_header.PACKET_OUT, 2, 0, 0, frame)]
    assert delivered.empty()


def test_live_counters_and_packet_in(live, matcha_seed):
    """matcha-sim live, matcha-p4rt on its CPU port, p4runtime-shell as the primary: the
    entries it writes forward the frames sent on the veths out of the ports the model says,
    as the model rewrites them; the direct counters read through P4Runtime move by exactly
    the model's frames and bytes; every punted frame reaches the primary as a PacketIn with
    its ingress port and reason while the simulator runs; a backup controller gets none."""
    ns, sim, server = live
    rng = random.Random(matcha_seed)
    traffic = live_traffic(rng)
    program = live_model(with_l2=True, with_acl=True)
    sent, numbers = [], Counter()
    for port, frame in traffic:
        numbers[port] += 1
        sent.append(harness.Sent(port, numbers[port], frame))
    exp = harness.expected(program, sent, Layout(ph.layout()).header_bytes)
    assert exp.punt and {2, 3} <= set(exp.ports)
    want = {name: {e: program[name].entry_counters(e) for e in program[name].entries()}
            for name in ("l2_fwd", "ipv4_lpm", "acl")}

    ports = {p: ns.port(f"host{p}") for p in LIVE_PORTS}
    try:
        with ph.shell_session(server) as sh:
            backup = P4RuntimeClient(1, server.address, (0, 1))
            try:
                written = {name: ints(te.msg()) for name, te in write_live_entries(sh, with_l2=True, with_acl=True).items()}
                start = time.monotonic()
                for s in sent:
                    ports[s.port].send(s.frame)
                punted = []
                for _ in exp.punt:
                    msg = sh.client.get_stream_packet("packet", timeout=WAIT)
                    assert msg is not None, f"{len(punted)} packet-ins of {len(exp.punt)}"
                    punted.append(packet_in(msg))
                # Delivered as the pipeline punts them, not when the run ends.
                assert sim.proc.poll() is None, "the simulator ended"
                print(f"{len(punted)} packet-ins within {time.monotonic() - start:.2f} s of the first frame sent")
                assert sorted(punted) == sorted((out, s.port, reason) for s, out, _, reason in exp.punt)
                for p, frames in exp.ports.items():
                    got = [ports[p].receive(WAIT) for _ in frames]
                    assert sorted(got, key=repr) == sorted(frames, key=repr), f"port {p}"

                def model_entry(name, te):
                    m = {f: v for f, (_, *v) in ints(te)[0].items()}
                    if name == "l2_fwd":
                        return m[1][0]
                    if name == "ipv4_lpm":
                        return tuple(m[1])
                    return next(e for e in program[name].entries() if e[2] == te.priority)

                deadline = time.monotonic() + WAIT
                while True:
                    got = {name: {model_entry(name, c.msg().table_entry): (c.msg().data.packet_count,
                                                                          c.msg().data.byte_count)
                                  for c in sh.DirectCounterEntry(f"{name}.counter").read()}
                           for name in want}
                    if got == want or time.monotonic() > deadline:
                        break
                    time.sleep(0.2)
                assert got == want
                assert all(p for counts in want.values() for p, _ in counts.values())
                assert {name: entries(sh, name) for name in written} == {n: [e] for n, e in written.items()}
                # Nothing more out of any port; the backup got no packet-in.
                assert {p: port.receive_all(0.5) for p, port in ports.items()} == {p: [] for p in LIVE_PORTS}
                assert backup.get_stream_packet("packet", timeout=0.5) is None
            finally:
                backup.tear_down()
    finally:
        for port in ports.values():
            port.close()


def packet_out_msg(sh, payload, **metadata):
    """A PacketOut message with `metadata` {name: int}, numbered as the P4Info numbers them."""
    header = sh.context.get_obj(sh.P4Type.controller_packet_metadata, "packet_out")
    ids = {m.name: m.id for m in header.metadata}
    po = p4runtime_pb2.PacketOut(payload=payload)
    for name, value in metadata.items():
        po.metadata.add(metadata_id=ids[name], value=bytes([value]))
    return po


def stream_error(client):
    """The next StreamError on a client's stream: (code, the packet-out it carries)."""
    msg = client.get_stream_packet("unknown", timeout=WAIT)
    assert msg is not None and msg.HasField("error"), msg
    return msg.error.canonical_code, msg.error.packet_out.packet_out


def test_live_packet_out(live):
    """PacketOut from the primary through matcha-p4rt's CPU port: with submit_to_ingress 0
    the payload leaves by its egress_port as it is, although the tables would punt it; with
    1 it enters the pipeline on its ingress_port, routed out of the route's port as the model
    says, or punted back to the controller as a PacketIn from that port. Refused on the
    stream, each carrying its packet, and sent nowhere: a metadata field missing, one given
    twice, an unknown id, a value wider than its field, an empty payload
    (INVALID_ARGUMENT), a backup's packet-out (PERMISSION_DENIED)."""
    ns, sim, server = live
    straight = bytes(Ether(dst=MAC_B) / IP(dst="192.168.7.7") / TCP(dport=7) / bytes(30))
    routed = bytes(Ether(dst=MAC_B) / IP(src="10.2.0.1", dst="10.1.3.3") / UDP(dport=53) / bytes(30))
    unrouted = bytes(Ether(dst=MAC_B) / IP(src="10.2.0.1", dst="192.168.7.8") / TCP(dport=8) / bytes(30))
    exp = harness.expected(live_model(), [harness.Sent(1, 1, routed), harness.Sent(1, 2, unrouted)],
                           Layout(ph.layout()).header_bytes)
    ports = {p: ns.port(f"host{p}") for p in LIVE_PORTS}
    try:
        with ph.shell_session(server) as sh:
            write_live_entries(sh)
            # p4runtime-shell sends every field of the packet_out header, 0 unless given.
            sh.PacketOut(straight, egress_port="3").send()
            assert ports[3].receive(WAIT) == straight
            for payload in (routed, unrouted):
                sh.PacketOut(payload, submit_to_ingress="1", ingress_port="1").send()
            assert ports[2].receive(WAIT) == exp.ports[2][0]
            msg = sh.client.get_stream_packet("packet", timeout=WAIT)
            assert msg is not None and packet_in(msg) == (exp.punt[0][1], 1, exp.punt[0][3])

            good = packet_out_msg(sh, straight, egress_port=1, submit_to_ingress=0, ingress_port=0)
            refused = []
            for change in ("missing", "twice", "unknown", "wide", "empty"):
                po = p4runtime_pb2.PacketOut()
                po.CopyFrom(good)
                if change == "missing":
                    del po.metadata[1]
                elif change == "twice":
                    po.metadata.add().CopyFrom(po.metadata[0])
                elif change == "unknown":
                    po.metadata.add(metadata_id=9, value=b"\x01")
                elif change == "wide":
                    po.metadata[0].value = b"\x10"  # 16 in the 4-bit egress_port
                else:
                    po.payload = b""
                sh.client.stream_out_q.put(p4runtime_pb2.StreamMessageRequest(packet=po))
                refused.append(po)
            for po in refused:
                assert stream_error(sh.client) == (code_pb2.INVALID_ARGUMENT, po)
            backup = P4RuntimeClient(1, server.address, (0, 1))
            try:
                backup.stream_out_q.put(p4runtime_pb2.StreamMessageRequest(packet=good))
                assert stream_error(backup) == (code_pb2.PERMISSION_DENIED, good)
            finally:
                backup.tear_down()
            # None of them left: the next frame out of any port is a packet-out sent after them.
            sh.PacketOut(routed, egress_port="0").send()
            assert ports[0].receive(WAIT) == routed
            assert {p: port.receive_all(0.5) for p, port in ports.items()} == {p: [] for p in LIVE_PORTS}
    finally:
        for port in ports.values():
            port.close()


def test_server_refuses_another_builds_files(work):
    """matcha-p4rt stops before serving, with exit status 2 and both build ids, when the
    layout or the P4Info is not the device's."""
    sim, sock = ph.start_sim(work)
    try:
        for extra in (["--layout", ph.layout("policer")],
                      ["--layout", ph.layout(), "--p4info", ph.p4info("policer")]):
            r = subprocess.run([sys.executable, str(ph.SERVER), "--device", f"sim:{sock}", "--listen", "127.0.0.1:0",
                                "--library", str(drv.LIBRARY), *map(str, extra)],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 2 and r.stderr.startswith("matcha-p4rt:"), (r.returncode, r.stderr)
            for path in (ph.layout(), ph.layout("policer")):
                assert f"{json.loads(path.read_text())['buildId']:08x}" in r.stderr, r.stderr
            assert not r.stdout
    finally:
        sim.stop()


def test_server_refuses_a_cpu_port_it_cannot_open(work):
    """matcha-p4rt stops before serving, with exit status 2 naming the option and the
    system's reason, when the --cpu-port interface is not there."""
    sim, sock = ph.start_sim(work)
    try:
        r = subprocess.run([sys.executable, str(ph.SERVER), "--device", f"sim:{sock}", "--listen", "127.0.0.1:0",
                            "--library", str(drv.LIBRARY), "--layout", ph.layout(), "--cpu-port", "matcha-none"],
                           capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout) == (2, ""), (r.returncode, r.stdout, r.stderr)
        assert r.stderr.startswith("matcha-p4rt: --cpu-port matcha-none: No such device"), r.stderr
    finally:
        sim.stop()


def write_card(path, layout, app_id, control):
    """A Corundum card's app BAR as a file, which the driver's pci: backend maps as it maps
    BAR 2: the self-describing block of `layout`'s build as docs/tables.md lays it out (its
    tables' windows read idle and empty) and the app block's APP_ID, VERSION and CONTROL."""
    words = {contract.INFO_MAGIC: contract.INFO_MAGIC_VALUE, contract.INFO_VERSION: contract.INFO_VERSION_VALUE,
             contract.INFO_BUILD_ID: layout["buildId"], contract.INFO_OBJECTS: len(layout["objects"])}
    for i, o in enumerate(layout["objects"]):
        desc = {contract.DESC_KIND_WORD: o["kind"], contract.DESC_KEY_BITS_WORD: o["keyWidth"],
                contract.DESC_SIZE_WORD: o["size"], contract.DESC_DATA_BITS_WORD: o["dataWidth"],
                contract.DESC_BASE_WORD: o["base"], contract.DESC_GEOMETRY_WORD: o["geometry"],
                contract.DESC_LATENCY_WORD: o["latency"], contract.DESC_EXTRA_WORD: o["extra"]}
        words.update({contract.INFO_DESCRIPTORS + contract.INFO_DESCRIPTOR_BYTES * i + 4 * w: v
                      for w, v in desc.items()})
    words.update({contract.APP_BASE + contract.APP_ID: app_id,
                  contract.APP_BASE + contract.APP_VERSION: contract.APP_VERSION_VALUE,
                  contract.APP_BASE + contract.APP_CONTROL: control})
    with open(path, "wb") as f:
        f.truncate(contract.APP_BASE + contract.APP_PACKET_OUT_MALFORMED + 4)
        for addr, value in words.items():
            f.seek(addr)
            f.write(value.to_bytes(4, "little"))


def card_control(path):
    with open(path, "rb") as f:
        f.seek(contract.APP_BASE + contract.APP_CONTROL)
        return int.from_bytes(f.read(4), "little")


def test_server_turns_a_corundum_cards_cpu_port_on(work):
    """With --cpu-port on a Corundum card, matcha-p4rt turns the app block's CONTROL_CPU_PORT
    on before it serves and off again at exit if it was off, CONTROL_TX_PIPELINE left as it
    was; a block of another APP_ID (not Matcha's) is left alone, as the simulator is. The
    policer build is used: its tables adopt from a file that holds no entries."""
    tx, cpu = contract.APP_CONTROL_TX_PIPELINE, contract.APP_CONTROL_CPU_PORT
    path = work / "resource2"
    layout = json.loads(ph.layout("policer").read_text())
    # (APP_ID, CONTROL before, while serving, after)
    for app_id, before, serving, after in ((contract.APP_ID_VALUE, tx, tx | cpu, tx),
                                           (contract.APP_ID_VALUE, 0, cpu, 0),
                                           (contract.APP_ID_VALUE, cpu, cpu, cpu),
                                           (0x12340001, tx, tx, tx)):
        write_card(path, layout, app_id, before)
        server = ph.Server(None, "policer", "--cpu-port", "lo", device=f"pci:{path}")
        try:
            assert card_control(path) == serving, (hex(app_id), before)
        finally:
            out, err = server.stop()
        assert card_control(path) == after, (hex(app_id), before, out, err)
        assert "stopped" in out and not err, (out, err)
