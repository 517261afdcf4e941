# SPDX-License-Identifier: Apache-2.0
"""matcha-sim and matcha-p4rt as processes, and p4runtime-shell connected to them.

The simulators are tb/sim's (the w64 l2l3 and overlay builds of tb/sim/harness.py); the
server is sw/p4rt/matcha-p4rt on the driver's `sim:` backend, listening on a port of the
loopback interface the kernel picks, or, inside a test's network namespace (the live
simulator's, tb/common/netns.py), on a Unix socket, which the test reaches from its own.
p4runtime-shell keeps its client in module state, so one test drives one shell session at a
time (`shell_session`).
"""

import contextlib
import select
import signal
import subprocess
import sys

import grpc
import p4runtime_sh.shell as sh
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2

from tb.common import driver as drv
from tb.common import sim
from tb.sim import harness

SERVER = harness.REPO / "sw" / "p4rt" / "matcha-p4rt"
L2L3 = harness.SimBinary("w64")
OVERLAY = harness.SimBinary("w64", "overlay")
OVERLAY_MEM = harness.SimBinary("w64", "overlay_mem")


def layout(program="l2l3"):
    return sim.RTL_DIR / "w64" / ("layout.json" if program == "l2l3" else f"layout-{program}.json")


def p4info(program="l2l3"):
    return sim.RTL_DIR / "w64" / ("p4info.txt" if program == "l2l3" else f"p4info-{program}.txt")


def start_sim(work, *args, program="l2l3"):
    """A matcha-sim serving its control socket `work/sim.sock`, outputs in `work/out`;
    returns (Simulator, socket path) once the socket is there."""
    sock = work / "sim.sock"
    s = harness.Simulator("w64", "--socket", sock, "--out", work / "out", *args, program=program)
    s.wait_socket(sock)
    return s, sock


class Server:
    """matcha-p4rt on `sim:<sock>` (or the device URI `device`), or inside namespace `ns`
    listening on `listen`; `address` once it serves."""

    def __init__(self, sock, program="l2l3", *args, ns=None, listen="127.0.0.1:0", timeout=60, device=None):
        drv.build_library()
        cmd = [sys.executable, str(SERVER), "--device", device or f"sim:{sock}", "--layout", str(layout(program)),
               "--listen", listen, "--library", str(drv.LIBRARY), *map(str, args)]
        pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.proc = subprocess.Popen(cmd, **pipes) if ns is None else ns.popen(*cmd, **pipes)
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("matcha-p4rt: serving"):
            out, err = self.stop()
            raise AssertionError(f"matcha-p4rt did not start: {line}{out}\n{err}")
        self.address = line.rsplit(" on ", 1)[1].strip()

    def stop(self, timeout=30):
        """SIGTERM, then its remaining (stdout, stderr)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.communicate()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


@contextlib.contextmanager
def shell_session(server, program="l2l3", election_id=(1, 0), push_config=True):
    """p4runtime-shell connected to `server` as the given election id, having pushed the
    build's P4Info and layout as the pipeline config (or only fetched the P4Info)."""
    config = sh.FwdPipeConfig(str(p4info(program)), str(layout(program))) if push_config else None
    sh.setup(device_id=1, grpc_addr=server.address, election_id=election_id, config=config, verbose=False)
    try:
        yield sh
    finally:
        sh.teardown()


def write_errors(stub, updates, election_id=(1, 0)):
    """Sends one WriteRequest; returns [(canonical code, message)] per update ([] if all
    went through). Reads the google.rpc.Status details itself: p4runtime-shell's iterator
    over them does not advance past an OK entry."""
    req = p4runtime_pb2.WriteRequest(device_id=1, updates=updates)
    req.election_id.high, req.election_id.low = election_id
    try:
        stub.Write(req)
        return []
    except grpc.RpcError as e:
        assert e.code() == grpc.StatusCode.UNKNOWN, f"{e.code()}: {e.details()}"
        details = dict(e.trailing_metadata())["grpc-status-details-bin"]
        st = status_pb2.Status.FromString(details)
        out = []
        for d in st.details:
            err = p4runtime_pb2.Error()
            assert d.Unpack(err)
            out.append((err.canonical_code, err.message))
        return out


def update(kind, entity_msg, field):
    """An Update of `kind` (INSERT, MODIFY, DELETE) of an entity message."""
    u = p4runtime_pb2.Update(type=getattr(p4runtime_pb2.Update, kind))
    getattr(u.entity, field).CopyFrom(entity_msg)
    return u


def code_name(code):
    return code_pb2.Code.Name(code)
