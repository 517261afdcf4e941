# SPDX-License-Identifier: Apache-2.0
"""The traffic of the scale benchmarks (bench/scale/run.py, run_w512.py) and their runs of
matcha-sim: ENI 0's outbound UDP flows to CA->PA mappings of one VNET, all routed by one
prefix (sim/examples/make_overlay_scale.py's one_route_tables), the mapped destinations
placed as the driver places them, the frames built fast, and the simulator run with the
tables loaded by matcha-ctl."""

import ipaddress
import struct
import subprocess
import sys
import time
from pathlib import Path

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw

from tb.model.hashing import exact_index
from tb.pipeline.control import descriptor_of
from tb.sim import harness

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "sim" / "examples"))
import make_overlay_scale as scale  # noqa: E402  (addressing and frames of the scale example)

VNET = 3
NET = ipaddress.ip_network("10.0.0.0/8")


def tables(mapped):
    """The tables file's lines: the one route to VNET, a mapping of each of `mapped`."""
    return scale.one_route_tables(NET, VNET, mapped)


def checksum(data):
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s & 0xFFFF) + (s >> 16)
    return ~((s & 0xFFFF) + (s >> 16)) & 0xFFFF


def udp_checksum(ip_header, udp):
    return checksum(ip_header[12:20] + struct.pack("!BBH", 0, 17, len(udp)) + udp) or 0xFFFF


class FlowFrames:
    """ENI 0's outbound frames of `inner_bytes`-byte inner frames, which differ from one
    frame scapy built in their inner destination address and UDP ports, and in the
    checksums that cover them: scapy building every frame from its layers is too slow for
    a million flows' capture. The first frames are built by scapy too and compared byte
    for byte (`check`)."""

    def __init__(self, inner_bytes):
        payload = Raw(b"s" * (inner_bytes - 14 - 20 - 8))
        # (destination, sport, dport) -> ENI 0's frame, by scapy
        self.build = lambda d, sp, dp: bytes(scale.outbound(  # noqa: E731
            0, str(ipaddress.ip_address(d)), UDP(sport=sp, dport=dp), payload))
        self.frame_bytes = bytearray(self.build(0, 1, 1))
        outer = Ether(bytes(self.frame_bytes))
        self.outer_udp = 14 + outer[IP].ihl * 4
        inner_ether = outer[VXLAN].payload
        self.inner_ip = len(self.frame_bytes) - len(inner_ether) + 14
        self.inner_udp = self.inner_ip + inner_ether[IP].ihl * 4

    def frame(self, dst, sport, dport):
        f, i, u, o = self.frame_bytes, self.inner_ip, self.inner_udp, self.outer_udp
        f[i + 16:i + 20] = dst.to_bytes(4, "big")
        f[i + 10:i + 12] = bytes(2)
        f[i + 10:i + 12] = checksum(bytes(f[i:u])).to_bytes(2, "big")
        f[u:u + 4] = struct.pack("!HH", sport, dport)
        f[u + 6:u + 8] = bytes(2)
        f[u + 6:u + 8] = udp_checksum(bytes(f[i:u]), bytes(f[u:])).to_bytes(2, "big")
        f[o + 6:o + 8] = bytes(2)
        f[o + 6:o + 8] = udp_checksum(bytes(f[14:o]), bytes(f[o:])).to_bytes(2, "big")
        return bytes(f)

    def check(self, flows, count=200):
        for dst, sport, dport in flows[:count]:
            if self.frame(dst, sport, dport) != self.build(dst, sport, dport):
                raise SystemExit(f"bench: the frame to {ipaddress.ip_address(dst)} {sport}->{dport} "
                                 "differs from scapy's")


def destinations(program, count, rng):
    """`count` destinations of NET in VNET; in memory, none in a bucket whose entries are
    taken (the driver would refuse it): placed as the driver places them, from the key's
    CRC."""
    mapping = program["mapping"]
    if mapping.kind != "mem_exact":
        return [int(NET.network_address) + o for o in rng.sample(range(NET.num_addresses), count)]
    slots = descriptor_of(mapping.desc).geometry
    buckets = mapping.size // slots
    used = {}
    out = []
    for offset in rng.sample(range(NET.num_addresses), min(NET.num_addresses, count * 2)):
        d = int(NET.network_address) + offset
        b = exact_index(mapping.key(dstVnet=VNET, dst=d), mapping.key_width, 0, buckets)
        if used.get(b, 0) < slots:
            used[b] = used.get(b, 0) + 1
            out.append(d)
            if len(out) == count:
                return out
    raise SystemExit(f"bench: only {len(out)} of {count} destinations placed")


def traffic(flow_count, passes, mapped, rng):
    """`flow_count` UDP flows (each its own source and destination port) to destinations of
    `mapped` drawn at random, in `passes` passes: the first in flow order, each flow's
    first packet learning its session; each later one the same flows shuffled, every
    packet a session hit. Returns [(destination, sport, dport)], frame by frame."""
    flows = [(rng.choice(mapped), 1024 + k % 60000, 53 + k // 60000) for k in range(flow_count)]
    frames = list(flows)
    for _ in range(passes - 1):
        again = list(flows)
        rng.shuffle(again)
        frames += again
    return frames


def regions(layout):
    """(table, entries, [(port, beats)], first byte, end byte, address bits, bytes a bucket or
    node) of each table in memory, by address, in beats of its ports: the buckets of an exact
    or session table (`bucketBytes` each, one port), the nodes of each LPM level in memory (a
    beat each, a port a level, the highest first)."""
    program = layout["program"]
    entries_a_bucket = {o.get("name"): o.get("geometry") for o in layout["objects"]}  # the descriptor's geometry word
    out = []
    for t in program["tables"] + program["sessions"]:
        memory = t.get("memory")
        if not memory:
            continue
        if t.get("kind") == "lpm":
            beats = t["lpm"]["nodes"][-t["lpm"]["memoryLevels"]:]
        else:
            beats = [t["size"] // t.get("ways", entries_a_bucket[t["name"]])]
        beats = [n * memory["bucketBytes"] // (memory["dataWidth"] // 8) for n in beats]
        start = memory["baseAddress"]
        out.append((t["name"], t["size"], list(zip(memory["ports"], beats)), start,
                    start + sum(beats) * memory["dataWidth"] // 8, memory["addressWidth"],
                    memory["bucketBytes"]))
    return sorted(out, key=lambda r: r[3])


def simulate(work, config, program, layout, inputs, latency, interval=1, timeout=3600, settle=0):
    """matcha-sim of `program` on the captures `inputs`, its memory answering `latency`
    clocks late (a program without memory: 0), after `settle` clocks from reset
    (--settle-clocks) and `matcha-ctl --cleared` has run `work/ctl.txt` over its socket;
    the outputs in `work/out`. Returns the seconds matcha-ctl took."""
    sock, out = work / "ctl.sock", work / "out"
    out.mkdir()
    with harness.Simulator(config, "--socket", sock, "--wait-client", *inputs, "--out", out,
                           "--layout", layout, "--max-clocks", 400_000_000,
                           *(["--memory-latency", latency, "--memory-interval", interval] if latency else []),
                           *(["--settle-clocks", settle] if settle else []),
                           program=program) as s:
        s.wait_socket(sock, timeout=30 + settle / 10_000)  # the socket opens after the settle clocks
        t0 = time.time()
        ctl = subprocess.run([str(harness.matcha_ctl()), f"sim:{sock}", "--layout", str(layout),
                              "--cleared", "-f", str(work / "ctl.txt")], capture_output=True, text=True,
                             timeout=timeout)
        load_seconds = time.time() - t0
        if ctl.returncode:
            raise SystemExit(f"bench: matcha-ctl failed:\n{ctl.stdout}\n{ctl.stderr}")
        rc, stdout, stderr = s.finish(timeout=timeout)
    if rc:
        raise SystemExit(f"bench: matcha-sim failed ({rc}):\n{stdout}\n{stderr}")
    return load_seconds


def prepare(work, program, mappings, settings, inner_bytes, flow_count, passes, rng):
    """Writes `work/tables.txt` (the one route and `mappings` mappings placed as the driver
    places them), `work/ctl.txt` (the matcha-ctl commands `settings`, then those tables) and
    the capture of `flow_count` flows in `passes` passes (`traffic`) of `inner_bytes`-byte
    inner frames. Returns the simulator's --in arguments and the Sent records."""
    mapped = destinations(program, mappings, rng)
    lines = tables(mapped)
    (work / "tables.txt").write_text("\n".join(lines) + "\n")
    (work / "ctl.txt").write_text("\n".join(settings + lines) + "\n")
    frames = FlowFrames(inner_bytes)
    sent_flows = traffic(flow_count, passes, mapped, rng)
    frames.check(sent_flows)
    return harness.write_captures(work, [(0, frames.frame(*f)) for f in sent_flows])


def settle_clocks(layout):
    """Clocks from reset through the clear of every table in memory (the largest table's
    beats, its ports writing a beat a clock at once), and 10,000 more for its last writes
    and the reads out then: --settle-clocks for a run whose load should not wait for it."""
    return max((beats for r in regions(layout) for _, beats in r[2]), default=0) + 10_000
