# SPDX-License-Identifier: Apache-2.0
"""matcha-p4rt: serves P4Runtime for one Matcha device (docs/p4runtime.md).

    matcha-p4rt --device sim:build/run/matcha.sock --layout build/rtl/w64/layout.json

Opens the device with the C driver, loads its layout (refused unless its buildId is the
device's BUILD_ID), takes the P4Info generated beside it (refused unless it is that build's
and names what the layout names), adopts the tables the hardware holds, and serves until
SIGINT or SIGTERM. Prints `matcha-p4rt: serving ... on HOST:PORT` once it listens.
"""

import argparse
import logging
import signal
import sys
import threading
from concurrent import futures
from pathlib import Path

import grpc
from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2_grpc

from . import libmatcha as lm
from .punts import SimPunts
from .schema import Schema, SchemaError
from .server import P4RuntimeServicer, Target

REPO = Path(__file__).resolve().parents[3]


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
    p.add_argument("--listen", default="127.0.0.1:9559", help="address:port to serve on (default %(default)s)")
    p.add_argument("--device-id", type=int, default=1, help="the P4Runtime device id (default %(default)s)")
    p.add_argument("--clock-hz", type=int, default=250_000_000,
                   help="the pipeline's clock, for meter rates (default %(default)s, matcha-sim's)")
    p.add_argument("--sim-out", help="matcha-sim's --out directory: its punted frames become packet-ins")
    p.add_argument("--library", default=str(REPO / "build" / "sw" / "libmatcha.so"),
                   help="libmatcha.so (make -C sw/driver shared; default %(default)s)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every refused update")
    return p.parse_args(argv)


def fail(message):
    print(f"matcha-p4rt: {message}", file=sys.stderr)
    sys.exit(2)


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
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16))
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
    port = server.add_insecure_port(args.listen)
    if not port:
        fail(f"cannot listen on {args.listen}")
    server.start()
    punts = SimPunts(args.sim_out, servicer.packet_in).start() if args.sim_out else None
    host = args.listen.rsplit(":", 1)[0]
    print(f"matcha-p4rt: serving {device.program()} build {build} of {args.device} as device "
          f"{args.device_id} on {host}:{port}", flush=True)

    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    server.stop(grace=1).wait()
    if punts:
        punts.stop()
    with target.lock:
        device.close()
    print(f"matcha-p4rt: stopped; packet-ins sent {servicer.stats['packet_in']}, dropped for want of a "
          f"primary {servicer.stats['packet_in_dropped']}, packet-outs refused "
          f"{servicer.stats['packet_out_refused']}", flush=True)


if __name__ == "__main__":
    main()
