# SPDX-License-Identifier: Apache-2.0
"""matcha-sim live (sim/README.md, "Live") without PTF: frames in and out through packet
sockets on the test's veth pairs (netns.Port), the expected frames built with scapy from
the entries' meaning (scenario.py), the simulator's records read after its end. Each a
named case: the clock running between frames, tables changed and read over the control
socket while frames flow, the frames the pipeline cannot take or the interfaces cannot
send (each counted by why), and SIGTERM letting the frames that have arrived finish.

Run: make test-one T="tb/ptf/test_live.py -q"
"""

import random
import subprocess
import time

import pytest
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from tb.common import cpu_header, live_sim, sim
from tb.common.netns import Namespace
from tb.ptf import scenario
from tb.sim import harness

pytestmark = pytest.mark.builds(harness.SimBinary(live_sim.CONFIG))
# Seconds a frame may take through the simulator on a loaded machine.
WAIT = 20


def ctl(s, commands):
    """matcha-ctl on the simulator's socket running `commands`; its output."""
    r = subprocess.run([harness.matcha_ctl(), f"sim:{s.socket}", "--layout",
                        sim.layout_file(live_sim.CONFIG), "-f", "-"], input=commands,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_clock_runs_between_frames(work):
    """With no frame anywhere, a live run's clock keeps running (meters refill, sessions
    age as on hardware): a second of nothing is thousands of clocks, not the few of reset."""
    live_sim.need()
    with Namespace([0], cpu=False) as ns:
        s = live_sim.LiveSim(ns, work, [0], cpu=False)
        time.sleep(1.0)
        rc, out, err = s.stop()
    assert rc == 0, out + err
    summary = s.summary()
    assert summary["frames_in"] == 0
    assert summary["clocks"] > 5000, out


def test_tables_change_while_live(work):
    """The control socket serves while frames flow: a frame with no route is punted; a
    route added then by matcha-ctl sends the same frame out of its port, rewritten;
    table_dump reads the entry back while the run goes on."""
    live_sim.need()
    route = scenario.ROUTES[0]
    frame = scenario.udp("10.1.7.7")
    reason = scenario.reasons()
    with Namespace(scenario.PORTS) as ns:
        with ns.port("host0") as p0, ns.port(f"host{route.port}") as out, \
                ns.port("hostcpu") as cpu:
            s = live_sim.LiveSim(ns, work, scenario.PORTS)
            p0.send(frame)
            assert cpu.receive(WAIT) == bytes(cpu_header.packet_in(
                frame, 0, 0, reason["ipv4_lpm.no_route"]))
            ctl(s, f"table_add ipv4_lpm route {route.prefix} => {route.port} {route.dmac} "
                   f"{route.smac}\n")
            p0.send(frame)
            assert out.receive(WAIT) == bytes(scenario.routed(frame, route))
            dump = ctl(s, "table_dump ipv4_lpm\n")
            assert route.prefix in dump and route.dmac in dump, dump
            rc, stdout, err = s.stop()
    assert rc == 0, stdout + err
    tables = {t["name"]: (t["hits"], t["misses"]) for t in s.summary()["tables"]}
    assert tables["ipv4_lpm"] == (1, 1)


def test_port_holds_a_burst_while_busy(work):
    """2,000 frames sent on one end of a pair while nothing reads the other (as a test
    waiting for the simulator to exit while it sends its last frames): all of them are
    there to read afterwards, in order."""
    frames = [bytes(scenario.udp(f"10.1.{k >> 8}.{k & 0xFF}", payload=60 - 42)) for k in range(2000)]
    with Namespace([0], cpu=False) as ns:
        with ns.port("sim0") as sim0, ns.port("host0") as p0:
            for f in frames:
                sim0.send(f)
            time.sleep(0.5)
            assert p0.receive_all(1.0) == frames


def test_frames_sent_on_the_interface_do_not_enter(work):
    """A frame another program (or the kernel) sends on the simulator's interface leaves
    by it; it is not a frame the interface received: it does not enter the pipeline. A
    routed frame from the test's end after it is the only frame out and the only one in."""
    live_sim.need()
    route = scenario.ROUTES[0]
    sent_on_sim0 = scenario.udp("10.1.7.7", src="192.0.2.7")
    received = scenario.udp("10.1.7.8")
    with Namespace([0, route.port], cpu=False) as ns:
        with ns.port("sim0") as sim0, ns.port("host0") as p0, \
                ns.port(f"host{route.port}") as out:
            s = live_sim.LiveSim(ns, work, [0, route.port], cpu=False, args=["--wait-client"])
            ctl(s, scenario.tables_text())
            sim0.send(sent_on_sim0)
            assert p0.receive(WAIT) == bytes(sent_on_sim0)  # it did leave by sim0
            p0.send(received)
            assert out.receive(WAIT) == bytes(scenario.routed(received, route))
            rc, stdout, err = s.stop()
    assert rc == 0, stdout + err
    summary = s.summary()
    assert summary["in"] == {"0": {"frames": 1, "bytes": len(received)}}
    assert summary["live"]["ports"]["0"]["received"] == 1


def test_frames_not_taken_or_not_sent(work):
    """Counted, never lost unseen: a 9217-byte frame (over the pipeline's 9216) is skipped
    as oversize, numbered on its port, and so is a 9300-byte one, of which the simulator
    captures no more than 9217 bytes; a 42-byte frame enters padded to 60 and leaves so; a
    frame routed to port 3, which has no interface, stays in port3.pcap; a 2000-byte frame
    routed to an interface with a 1500-byte MTU is not sent, with the kernel's reason. The
    same for packet-outs straight to an egress port: a 9217-byte one is refused as
    oversize, a 2000-byte one to the 1500-byte MTU is not sent."""
    live_sim.need()
    small_mac, to_port3 = "00:00:5e:00:03:03", "10.1.2.3"
    with Namespace([0, 1, 2], mtu=9500) as ns:
        ns.set_mtu("sim2", 1500)
        with ns.port("host0") as p0, ns.port("host1") as p1, ns.port("hostcpu") as cpu:
            s = live_sim.LiveSim(ns, work, [0, 1, 2], args=["--wait-client"])
            ctl(s, scenario.tables_text() + f"table_add l2_fwd forward {small_mac} => 1\n")
            oversize = scenario.udp("10.1.7.7", payload=9217 - 42)
            longer = scenario.udp("10.1.7.7", payload=9300 - 42)
            small = Ether(dst=small_mac, src=scenario.HOST_MAC, type=0x9000) / Raw(bytes(28))
            big = scenario.udp("10.1.7.7", payload=2000 - 42)
            # The frames leave in order: once the last one is out, all are.
            last = Ether(dst=small_mac, src=scenario.HOST_MAC, type=0x9000) / Raw(bytes(100))
            for f in (oversize, longer, small, scenario.udp(to_port3), big, last):
                p0.send(f)
            cpu.send(cpu_header.to_egress(oversize, 1))
            cpu.send(cpu_header.to_egress(big, 2))
            assert len(oversize) == 9217 and len(small) == 42 and len(big) == 2000
            assert p1.receive(WAIT) == bytes(small) + bytes(18)
            assert p1.receive(WAIT) == bytes(last)
            rc, out, err = s.stop()
    assert rc == 0, out + err
    summary, outputs = s.summary(), s.outputs()
    assert [(int(r["ingress_port"]), int(r["ingress_packet"]), r["reason"],
             int(r["captured_bytes"]), int(r["wire_bytes"])) for r in outputs.skipped_rows] == [
        (0, 1, "oversize", 9217, 9217), (0, 2, "oversize", 9217, 9300)]
    assert summary["padded"] == 1
    assert summary["live"]["no_interface"] == {"3": 1}
    assert outputs.ports[3] == [bytes(scenario.routed(scenario.udp(to_port3),
                                                      scenario.route_for(to_port3)))]
    port2 = summary["live"]["ports"]["2"]
    assert port2["sent"] == 0 and list(port2["not_sent"].values()) == [2], port2
    assert outputs.ports[2] == [bytes(scenario.routed(big, scenario.route_for("10.1.7.7")))]
    cpu_port = summary["live"]["cpu"]
    assert cpu_port["to_egress"] == 1 and cpu_port["ignored"] == {"oversize": 1}, cpu_port


def test_sigterm_lets_arrived_frames_finish(work, matcha_seed):
    """SIGTERM ends a live run once the frames that have arrived are out: of 300 frames
    behind 99 % back-pressure, most are still waiting when it comes (more than the 64 the
    simulator takes ahead, the rest in the kernel's buffer), and all leave, rewritten and in
    order, before the simulator exits cleanly."""
    live_sim.need()
    route = scenario.ROUTES[0]
    rng = random.Random(matcha_seed)
    frames = [scenario.udp(f"10.1.{rng.randrange(3, 256)}.{rng.randrange(256)}",
                           payload=60 - 42) for _ in range(300)]
    with Namespace([0, route.port], cpu=False) as ns:
        with ns.port("host0") as p0, ns.port(f"host{route.port}") as out:
            s = live_sim.LiveSim(ns, work, [0, route.port], cpu=False,
                             args=["--wait-client", "--backpressure", "0.99",
                                   "--seed", matcha_seed])
            ctl(s, scenario.tables_text())
            for f in frames:
                p0.send(f)
            time.sleep(0.1)
            before = out.pending()
            rc, stdout, err = s.stop()
            after = out.receive_all(1.0)
    assert rc == 0, stdout + err
    assert len(before) < len(frames), "every frame was out before SIGTERM: nothing to drain"
    assert len(before + after) == len(frames), stdout
    assert before + after == [bytes(scenario.routed(f, route)) for f in frames]
    assert s.summary()["complete"]
