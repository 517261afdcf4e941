# SPDX-License-Identifier: Apache-2.0
"""A network namespace of a test's own with veth pairs in it, made by sim/netns.sh (the
script the live mode's steps in sim/README.md and README.md use), removed after the test
whatever happened, and a skip with the machine's own words where it forbids them.

Both ends of every pair are inside the namespace: the simulator takes one end (sim<N>,
simcpu), the test, PTF or matcha-p4rt the other (host<N>, hostcpu), and nothing of the test
is visible in the machine's own namespace.
"""

import contextlib
import ctypes
import itertools
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "sim" / "netns.sh"
# sim/netns.sh's exit status when the machine does not allow a namespace or a veth pair.
NOT_ALLOWED = 3
CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")
ETH_P_ALL = 0x0003
# SO_RCVBUFFORCE (asm-generic/socket.h; Python's socket module does not name it), and
# what a port's socket may hold: a few thousand frames.
SO_RCVBUFFORCE = 33
RECEIVE_BUFFER_BYTES = 8 << 20
# recvfrom's packet type of a frame this host sent on the interface (linux/if_packet.h).
PACKET_OUTGOING = 4
# Numbers the namespaces this process makes.
_made = itertools.count()


class Namespace:
    """`with Namespace([0, 2], cpu=True) as ns:` a namespace named after the test process
    (and numbered in it: one test may hold a namespace while another makes its own) with the
    pairs sim0/host0, sim2/host2 and simcpu/hostcpu in it, up (sim/netns.sh). Skips the test
    (pytest.skip) when `ip` is missing or the machine does not let it create a namespace or a
    veth pair."""

    def __init__(self, ports, cpu=True, mtu=None):
        self.name = f"matcha-test-{os.getpid()}-{next(_made)}"
        self.ports = list(ports)
        self.cpu = cpu
        self.mtu = mtu
        self.procs = []

    def __enter__(self):
        if shutil.which("ip") is None:
            pytest.skip("no `ip` command (iproute2): the test cannot create its network "
                        "namespace and veth pairs")
        # A namespace of this name left by a test process that was killed.
        if (NETNS_DIR / self.name).exists():
            subprocess.run([SCRIPT, "del", self.name], capture_output=True)
        r = subprocess.run([SCRIPT, "add", self.name, *(["--mtu", str(self.mtu)] if self.mtu else []),
                            *map(str, self.ports), *(["cpu"] if self.cpu else [])],
                           capture_output=True, text=True)
        if r.returncode == NOT_ALLOWED:
            pytest.skip(r.stderr.strip())
        if r.returncode:
            raise RuntimeError(f"{SCRIPT} add {self.name}: {r.stderr.strip()}")
        return self

    def __exit__(self, *exc):
        self.remove()

    def set_mtu(self, interface, mtu):
        r = subprocess.run(["ip", "-n", self.name, "link", "set", interface, "mtu", str(mtu)],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"ip link set {interface} mtu {mtu}: {r.stderr.strip()}")

    def command(self, *args):
        """`args` run inside the namespace."""
        return ["ip", "netns", "exec", self.name, *map(str, args)]

    def popen(self, *args, **kwargs):
        """A process inside the namespace, ended (if it still runs) when the namespace is
        removed."""
        p = subprocess.Popen(self.command(*args), **kwargs)
        self.procs.append(p)
        return p

    @contextlib.contextmanager
    def inside(self):
        """The calling thread in the namespace: sockets it opens meanwhile are the
        namespace's (and stay so)."""
        libc = ctypes.CDLL(None, use_errno=True)
        with open("/proc/thread-self/ns/net") as home, open(NETNS_DIR / self.name) as there:
            if libc.setns(there.fileno(), CLONE_NEWNET):
                raise OSError(ctypes.get_errno(), f"setns into {self.name}")
            try:
                yield
            finally:
                if libc.setns(home.fileno(), CLONE_NEWNET):
                    raise OSError(ctypes.get_errno(), "setns back home")

    def port(self, interface):
        """A packet socket on `interface` of the namespace."""
        with self.inside():
            return Port(interface)

    def remove(self):
        """Ends the processes started here that still run, then removes the namespace
        (and the pairs in it)."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
        subprocess.run([SCRIPT, "del", self.name], capture_output=True)


class Port:
    """Frames in and out of one interface through a packet socket: the standard library's,
    since scapy's own sockets look interfaces up in the namespace scapy was imported in.
    Frames this socket (or the kernel) sends on the interface are not received."""

    def __init__(self, interface):
        self.interface = interface
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        # Frames wait here while the test does something else (a live simulator draining
        # its last frames at full speed while the test waits for it to exit): the kernel's
        # default buffer (net.core.rmem_default, about 200 KB) holds fewer than 200 small
        # frames and drops the rest without a word. SO_RCVBUFFORCE may pass rmem_max, for
        # a root that may make namespaces.
        self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER_BYTES)
        self.sock.bind((interface, 0))

    def send(self, frame):
        self.sock.send(bytes(frame))

    def receive(self, timeout):
        """The next frame received within `timeout` seconds, or None."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                data, addr = self.sock.recvfrom(65536)
            except socket.timeout:
                return None
            if addr[2] != PACKET_OUTGOING:
                return data
        return None

    def pending(self):
        """The frames received so far, without waiting for more."""
        frames = []
        self.sock.setblocking(False)
        try:
            while True:
                data, addr = self.sock.recvfrom(65536)
                if addr[2] != PACKET_OUTGOING:
                    frames.append(data)
        except BlockingIOError:
            return frames
        finally:
            self.sock.setblocking(True)

    def receive_all(self, quiet):
        """Every frame received until none has come for `quiet` seconds."""
        frames = []
        while (f := self.receive(quiet)) is not None:
            frames.append(f)
        return frames

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
