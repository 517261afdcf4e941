# SPDX-License-Identifier: Apache-2.0
"""A client of the simulator's control socket, written from docs/sim-socket.md.

`SocketBus` has the register interface of a driver backend (`read32`, `write32`, raising
`driver.BusError` on a bus error), so `driver.Device(SocketBus(path))` is the real C
driver programming a simulated pipeline over the socket. `transact` sends any request
and returns the raw answer, for tests of the protocol itself.
"""

import socket
import struct
import time

from tb.common.driver import BusError

OP_READ, OP_WRITE = ord("R"), ord("W")
# Requests to the simulator itself, no bus transaction (docs/sim-socket.md).
OP_CLOCK, OP_RESET = ord("C"), ord("X")
OKAY, SLVERR, DECERR, CANNOT_RUN = 0, 2, 3, 0xFF
RESPONSES = {OKAY: "OKAY", SLVERR: "SLVERR", DECERR: "DECERR", CANNOT_RUN: "cannot run"}

# Little-endian: op, three zero bytes, addr, data / op, resp, two zero bytes, data.
REQUEST = struct.Struct("<B3xII")
ANSWER = struct.Struct("<BBHI")


class ProtocolError(Exception):
    """An answer that breaks docs/sim-socket.md."""


def connect(path, timeout=30.0):
    """A socket connected to `path`, retried until the simulator listens (or timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(str(path))
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class SocketBus:
    def __init__(self, path, timeout=30.0):
        self.path = str(path)
        self.sock = connect(path, timeout)
        self.transactions = 0

    def _recv(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError(f"{self.path}: connection closed after {len(data)} of "
                                      f"{n} answer bytes")
            data += chunk
        return data

    def send_raw(self, data):
        self.sock.sendall(data)

    def transact(self, op, addr, data=0):
        """Sends one request; returns the answer (op, resp, data), its padding checked."""
        self.sock.sendall(REQUEST.pack(op, addr, data))
        return self.receive(op)

    def receive(self, op):
        """The answer to a request already sent."""
        a_op, resp, pad, value = ANSWER.unpack(self._recv(ANSWER.size))
        self.transactions += 1
        if a_op != op or pad != 0:
            raise ProtocolError(f"answer op {a_op:#x} padding {pad:#x} to a request with op "
                                f"{op:#x}")
        return a_op, resp, value

    def read32(self, addr):
        _, resp, value = self.transact(OP_READ, addr)
        if resp != OKAY:
            raise BusError(f"read of {addr:#08x}: {RESPONSES.get(resp, resp)}")
        return value

    def write32(self, addr, value):
        _, resp, read = self.transact(OP_WRITE, addr, value)
        if resp != OKAY:
            raise BusError(f"write of {value:#010x} to {addr:#08x}: {RESPONSES.get(resp, resp)}")
        if read != 0:
            raise ProtocolError(f"write answer carries data {read:#x}")

    def clock(self):
        """The simulator's clock now, as its CSV files count clocks (OP_CLOCK)."""
        return self._simulator_request(OP_CLOCK)

    def reset(self):
        """Resets the pipeline in the middle of the traffic (OP_RESET); returns how many
        frames had begun to enter before it. The traffic waits until this connection
        closes."""
        return self._simulator_request(OP_RESET)

    def _simulator_request(self, op):
        _, resp, value = self.transact(op, 0)
        if resp != OKAY:
            raise ProtocolError(f"request {chr(op)!r} answered {RESPONSES.get(resp, resp)}")
        return value

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
