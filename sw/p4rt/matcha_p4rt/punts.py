# SPDX-License-Identifier: Apache-2.0
"""Packet-in from matcha-sim: the punted frames it writes into its output directory
(sim/README.md, "Output"): `punt.pcap` holds each punted frame, `punt.csv` a row per frame in
the same order with its ingress port and reason.

The simulator writes both through stdio buffers, so a frame reaches the files when a buffer
fills or the run ends; this follows them as they grow and hands on each frame once both its
capture record and its row are whole. A growing capture ends in a partial record at times,
which scapy's readers treat as the end of the file and do not resume from, hence the small
reader of the pcap record format here.
"""

import csv
import io
import logging
import os
import struct
import threading

log = logging.getLogger("matcha-p4rt")
PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1": "<", b"\x4d\x3c\xb2\xa1": "<", b"\xa1\xb2\xc3\xd4": ">",
               b"\xa1\xb2\x3c\x4d": ">"}
PCAP_HEADER, RECORD_HEADER = 24, 16


class SimPunts:
    """Calls deliver(payload, ingress_port, reason) for every frame matcha-sim punts into
    `out_dir`, from a thread polling every `interval` seconds; a run that starts again
    (files made anew) is followed from its first frame."""

    def __init__(self, out_dir, deliver, interval=0.1):
        self.pcap, self.csv = os.path.join(out_dir, "punt.pcap"), os.path.join(out_dir, "punt.csv")
        self.deliver, self.interval = deliver, interval
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self._restart(None)

    def _restart(self, inode):
        self.inode, self.pcap_pos, self.csv_pos = inode, 0, 0
        self.order = None
        self.frames, self.rows = [], []
        self.csv_header = None

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join()

    def _run(self):
        while not self.stop_event.wait(self.interval):
            try:
                self.poll()
            except (OSError, ValueError) as e:
                log.warning("reading %s: %s", self.pcap, e)

    def poll(self):
        try:
            inode = os.stat(self.pcap).st_ino
        except FileNotFoundError:
            return
        if inode != self.inode:
            self._restart(inode)
        self._read_pcap()
        self._read_csv()
        n = min(len(self.frames), len(self.rows))
        for frame, row in zip(self.frames[:n], self.rows[:n]):
            self.deliver(frame, int(row["ingress_port"]), int(row["reason"]))
        del self.frames[:n], self.rows[:n]

    def _read_pcap(self):
        with open(self.pcap, "rb") as f:
            f.seek(self.pcap_pos)
            data = f.read()
        pos = 0
        if self.order is None:
            if len(data) < PCAP_HEADER:
                return
            self.order = PCAP_MAGICS.get(data[:4])
            if self.order is None:
                raise ValueError("not a pcap capture")
            pos = PCAP_HEADER
        while len(data) - pos >= RECORD_HEADER:
            incl = struct.unpack_from(self.order + "IIII", data, pos)[2]
            if len(data) - pos - RECORD_HEADER < incl:
                break
            self.frames.append(data[pos + RECORD_HEADER:pos + RECORD_HEADER + incl])
            pos += RECORD_HEADER + incl
        self.pcap_pos += pos

    def _read_csv(self):
        with open(self.csv, "rb") as f:
            f.seek(self.csv_pos)
            data = f.read()
        whole = data[:data.rfind(b"\n") + 1]
        self.csv_pos += len(whole)
        lines = whole.decode().splitlines()
        if self.csv_header is None and lines:
            self.csv_header = next(csv.reader([lines.pop(0)]))
        self.rows += list(csv.DictReader(io.StringIO("\n".join(lines)), fieldnames=self.csv_header)) \
            if lines else []
