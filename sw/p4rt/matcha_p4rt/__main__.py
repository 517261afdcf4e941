# SPDX-License-Identifier: Apache-2.0
"""matcha-p4rt: serves P4Runtime for one Matcha device (docs/p4runtime.md).

    matcha-p4rt --device sim:build/run/matcha.sock --layout build/rtl/w64/layout.json

Opens the device with the C driver, loads its layout (refused unless its buildId is the
device's BUILD_ID), takes the P4Info generated beside it (refused unless it is that build's
and names what the layout names), adopts the tables the hardware holds, opens matcha-sim's
CPU port if given (or a Corundum card's netdev: then it turns the card's CPU port on, and off
again at exit if it was off), and serves until SIGINT or SIGTERM. Prints `matcha-p4rt:
serving ... on ADDRESS` once it listens.
"""

import argparse
import logging
import signal
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2_grpc

from . import libmatcha as lm
from .cpu_port import CpuPort
from .schema import Schema, SchemaError
from .server import P4RuntimeServicer, Target

REPO = Path(__file__).resolve().parents[3]
CONTRACT = REPO / "build" / "rtl" / "contract" / "matcha_contract.py"


def p4info_beside(layout):
    """The P4Info the generator wrote beside a layout (layout.json: p4info.txt,
    layout-<p>.json: p4info-<p>.txt)."""
    layout = Path(layout)
    return layout.with_name(layout.name.replace("layout", "p4info", 1)).with_suffix(".txt")


def arguments(argv):
    p = argparse.ArgumentParser(prog="matcha-p4rt", description=__doc__.splitlines()[0])
    p.add_argument("--device", required=True,
                   help="device URI as the driver opens it: sim:PATH, mqnic:/dev/mqnic0, pci:BDF, serial:TTY")
    p.add_argument("--layout", required=True, help="the build's layout.json")
    p.add_argument("--p4info", help="the build's P4Info in text format (default: the one beside --layout)")
    p.add_argument("--listen", default="127.0.0.1:9559",
                   help="HOST:PORT or unix:PATH to serve on (default %(default)s; port 0: one the kernel picks)")
    p.add_argument("--device-id", type=int, default=1, help="the P4Runtime device id (default %(default)s)")
    p.add_argument("--clock-hz", type=int, default=250_000_000,
                   help="the pipeline's clock, for meter rates (default %(default)s, matcha-sim's)")
    p.add_argument("--cpu-port", metavar="IF",
                   help="the peer of matcha-sim's --cpu-port interface, or a Corundum card's netdev: "
                        "packet-in and packet-out through it")
    p.add_argument("--library", default=str(REPO / "build" / "sw" / "libmatcha.so"),
                   help="libmatcha.so (make -C sw/driver shared; default %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every refused update")
    return p.parse_args(argv)


def fail(message):
    print(f"matcha-p4rt: {message}", file=sys.stderr)
    sys.exit(2)


def cpu_port_on(device, bit):
    """Sets CONTROL_CPU_PORT (`bit`) of a Corundum card's app block, so that its netdevs carry
    packet-ins and packet-outs; True if it was clear, to be cleared again at exit. A device
    without the block (the simulator: its CPU port is an interface of its own) is left as it
    is."""
    try:
        was = device.app_control()
    except lm.MatchaError as e:
        if e.code != lm.ENODEV:
            raise
        logging.info("%s; the CPU port is the simulator's", e.message)
        return False
    device.app_control(set_bits=bit)
    return not was & bit


def main(argv=None):
    args = arguments(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="matcha-p4rt: %(message)s")
    p4info_path = Path(args.p4info) if args.p4info else p4info_beside(args.layout)
    try:
        p4info = text_format.Parse(p4info_path.read_text(), p4info_pb2.P4Info())
        layout_text = Path(args.layout).read_text()
    except (OSError, text_format.ParseError) as e:
        fail(f"{e}")
    try:
        lib = lm.load(args.library)
    except OSError as e:
        fail(f"{args.library}: {e} (make -C sw/driver shared)")
    try:
        device = lm.Device(lib, args.device)
    except lm.MatchaError as e:
        fail(str(e))
    try:
        device.load_layout(args.layout)
        build = f"0x{device.build_id():08x}"
        if p4info.pkg_info.version != build:
            fail(f"{p4info_path} is the P4Info of build {p4info.pkg_info.version}, the device's is {build}")
        schema = Schema(p4info)
        schema.check(device)
        device.set_clock_hz(args.clock_hz)
        device.adopt()
        target = Target(device, schema, layout_text)
    except lm.MatchaError as e:
        fail(f"{args.device}: {e}")
    except SchemaError as e:
        fail(f"{p4info_path}: {e}")

    servicer = P4RuntimeServicer(target, args.device_id, p4info)
    if args.cpu_port:
        try:
            cpu_port_bit = lm.load_contract(CONTRACT).APP_CONTROL_CPU_PORT
        except OSError as e:
            fail(f"{CONTRACT}: {e.strerror or e} (make rtl writes it)")
        try:
            servicer.cpu_port = CpuPort(args.cpu_port, servicer.packet_in,
                                        1 << schema.packet_in["ingress_port"][1])
        except OSError as e:
            fail(f"--cpu-port {args.cpu_port}: {e.strerror or e}")
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
    try:
        port = server.add_insecure_port(args.listen)
    except RuntimeError:  # grpcio's way of saying the address cannot be bound
        port = 0
    if not port:
        fail(f"cannot listen on {args.listen}")
    # From here on a SIGINT or SIGTERM stops the server through the cleanup below, which
    # turns a card's CPU port off again. The handler only notes the signal: one that took a
    # lock (threading.Event.set) could deadlock on the lock the main thread holds for an
    # instant entering Event.wait, and the server would hang instead of stopping.
    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    clear_cpu_port = False
    if args.cpu_port:
        try:
            clear_cpu_port = cpu_port_on(device, cpu_port_bit)
        except lm.MatchaError as e:
            fail(f"{args.device}: {e}")
    server.start()
    if servicer.cpu_port:
        servicer.cpu_port.start()
    address = args.listen if args.listen.startswith("unix:") else f"{args.listen.rsplit(':', 1)[0]}:{port}"
    print(f"matcha-p4rt: serving {device.program()} build {build} of {args.device} as device "
          f"{args.device_id} on {address}", flush=True)

    while not stopping:
        time.sleep(0.1)
    server.stop(grace=1).wait()
    cpu = ""
    if servicer.cpu_port:
        servicer.cpu_port.stop()
        ignored = servicer.cpu_port.ignored
        cpu = f"; frames on the CPU port that are no packet-in {sum(ignored.values())}" + \
            "".join(f", {why} {n}" for why, n in sorted(ignored.items()))
    with target.lock:
        if clear_cpu_port:
            try:
                device.app_control(clear_bits=cpu_port_bit)
            except lm.MatchaError as e:
                print(f"matcha-p4rt: {args.device}: the CPU port stays on: {e}", file=sys.stderr)
        device.close()
    stats = servicer.stats
    print(f"matcha-p4rt: stopped; packet-ins sent {stats['packet_in']}, dropped for want of a primary "
          f"{stats['packet_in_dropped']}; packet-outs sent {stats['packet_out']}, refused "
          f"{stats['packet_out_refused']}{cpu}", flush=True)


if __name__ == "__main__":
    main()
