# SPDX-License-Identifier: Apache-2.0
"""Packet-in and packet-out through matcha-sim's CPU port (sim/README.md, "The CPU port"):
the simulator sends every punted frame on its CPU interface behind an 18-byte header, and
takes frames written to it behind the same header, to enter the pipeline on an ingress port
or to leave by an egress port as they are.

The server holds the other end of the CPU interface (the peer of the simulator's veth) with
a packet socket bound to the header's EtherType, so it receives only those frames, as the
pipeline punts them.
"""

import logging
import socket
import struct
import threading
from collections import Counter

log = logging.getLogger("matcha-p4rt")

ETHERTYPE = 0x88B5
# Ethernet destination, source and type, then type, ingress port, egress port, reason.
HEADER = struct.Struct("!6s6sHBBBB")
PACKET_IN, PACKET_OUT, TO_EGRESS = 1, 2, 3
BROADCAST = b"\xff" * 6
# recvfrom's packet type of a frame sent on the interface (linux/if_packet.h).
PACKET_OUTGOING = 4


class CpuPort:
    """The CPU interface `interface`: calls deliver(payload, ingress_port, reason) for every
    packet-in from a thread of its own, and sends packet-outs. The frames it takes for no
    packet-in are counted in `ignored` by why. Raises OSError (no such interface, no
    CAP_NET_RAW) when it cannot open it."""

    def __init__(self, interface, deliver, ports):
        self.interface, self.deliver, self.ports = interface, deliver, ports
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
        try:
            self.sock.bind((interface, ETHERTYPE))
            # The interface's own address, the source of the frames it sends.
            self.mac = self.sock.getsockname()[4]
            # Wakes the receiving thread to see whether it is to stop.
            self.sock.settimeout(0.2)
        except OSError:
            self.sock.close()
            raise
        self.ignored = Counter()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._receive, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join()
        self.sock.close()

    def _receive(self):
        while not self.stop_event.is_set():
            try:
                frame, addr = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError as e:
                log.warning("--cpu-port %s: %s; no more packet-ins", self.interface, e)
                return
            if addr[2] != PACKET_OUTGOING:
                self.take(frame)

    def take(self, frame):
        if len(frame) < HEADER.size:
            self.ignored["short"] += 1
            return
        _, _, _, kind, ingress_port, _, reason = HEADER.unpack_from(frame)
        if kind != PACKET_IN:
            self.ignored["not_packet_in"] += 1
        elif ingress_port >= self.ports:
            # An output no input frame explains (a PROBLEM of the simulator's summary).
            self.ignored["no_ingress_port"] += 1
        else:
            self.deliver(frame[HEADER.size:], ingress_port, reason)

    def send(self, payload, ingress_port=None, egress_port=None):
        """`payload` into the pipeline on `ingress_port`, or out of `egress_port` as it is.
        Raises OSError when the interface does not take it (longer than its MTU, down)."""
        if ingress_port is not None:
            header = HEADER.pack(BROADCAST, self.mac, ETHERTYPE, PACKET_OUT, ingress_port, 0, 0)
        else:
            header = HEADER.pack(BROADCAST, self.mac, ETHERTYPE, TO_EGRESS, 0, egress_port, 0)
        self.sock.send(header + payload)
