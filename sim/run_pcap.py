#!/usr/bin/env python3
"""Run a pcap through matcha_packet_path in Verilator.

usage: python sim/run_pcap.py IN.pcap [OUTDIR] [--config w64|w512] [--port N]

Every packet of IN.pcap enters on ingress port N (default 0), back to back, with no
output back-pressure. Frames the path emits go to OUTDIR/out.pcap, punted ones (tuser
punt set) to OUTDIR/punt.pcap (default OUTDIR: build/run). Prints packets in/out, drops
and punts per reason, clocks and packets per clock, and how many outputs differ from
the reference model (tb/model).

This file is also the cocotb test module the simulation runs (run_pcap_tb below).
"""

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

REASONS = {0: "NONE", 1: "RUNT", 2: "TRUNCATED", 3: "IPV4_IHL", 4: "BAD_FRAME",
           5: "TOO_DEEP", 6: "IP_VERSION", 7: "OVERSIZE", 8: "EMPTY"}


# ------------------------------------------------------------------- inside the simulator

try:
    import cocotb
except ImportError:  # the command line part does not need it
    cocotb = None

if cocotb is not None:

    @cocotb.test()
    async def run_pcap_tb(dut):
        from cocotb.triggers import ClockCycles
        from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource
        from scapy.utils import rdpcap, wrpcap
        from scapy.layers.l2 import Ether

        from tb.common import cocotb_util
        from tb.common.axis import DropMonitor, check_beats, decode_out_tuser, in_tuser_bytes
        from tb.model import deparse, parse

        lay = cocotb_util.layout()
        lanes = lay.data_width // 8
        port = int(os.environ.get("MATCHA_PCAP_PORT", "0"))
        outdir = Path(os.environ["MATCHA_PCAP_OUTDIR"])
        pkts = rdpcap(os.environ["MATCHA_PCAP_IN"])
        frames = [bytes(p) for p in pkts]

        cocotb_util.quiet_cocotbext(dut)
        src = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_axis"), dut.clk, dut.rst)
        sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_axis"), dut.clk, dut.rst)
        drops = DropMonitor(dut)
        counter = cocotb_util.CycleCounter(dut)
        await cocotb_util.start(dut)

        expected = [deparse(f, parse(f, ingress_port=port)) for f in frames]
        n_out = sum(1 for e in expected if e[0] is not None)
        start = counter.cycle
        for f in frames:
            src.send_nowait(AxiStreamFrame(f, tuser=in_tuser_bytes(len(f), lanes, port)))

        got = []
        last_activity = counter.cycle
        budget = 2000 + sum(len(f) // lanes + 16 for f in frames) * 4
        while counter.cycle - start < budget:
            if not sink.empty():
                got.append((counter.cycle, sink.recv_nowait(compact=False)))
                last_activity = counter.cycle
                continue
            if len(got) >= n_out and len(drops.drops) >= len(expected) - n_out:
                break
            if src.idle() and counter.cycle - last_activity > 2000 and \
                    len(got) + len(drops.drops) >= len(frames):
                break
            await ClockCycles(dut.clk, 1)
        await ClockCycles(dut.clk, 20)
        while not sink.empty():
            got.append((counter.cycle, sink.recv_nowait(compact=False)))
        end_cycle = max([c for c, _ in got] + [c for c, _ in drops.drops] + [start])

        out_pkts, punt_pkts = [], []
        punts, mismatches, malformed = Counter(), 0, 0
        want = [e for e in expected if e[0] is not None]
        clock_ns = cocotb_util.CLOCK_NS
        t0 = float(pkts[0].time) if len(pkts) else 0.0
        for i, (cyc, fr) in enumerate(got):
            data, tu, problems = check_beats(fr, lanes)
            malformed += bool(problems)
            tuser = decode_out_tuser(tu, lay.port_width)
            p = Ether(data)
            p.time = t0 + (cyc - start) * clock_ns * 1e-9
            if tuser["punt"]:
                punts[REASONS.get(tuser["reason"], str(tuser["reason"]))] += 1
                punt_pkts.append(p)
            else:
                out_pkts.append(p)
            if i >= len(want) or want[i][0] != data or want[i][1] != tuser:
                mismatches += 1
        outdir.mkdir(parents=True, exist_ok=True)
        wrpcap(str(outdir / "out.pcap"), out_pkts)
        wrpcap(str(outdir / "punt.pcap"), punt_pkts)
        drop_counts = Counter(REASONS.get(r, str(r)) for _, r in drops.drops)
        clocks = end_cycle - start
        summary = {
            "config": lay.config, "ingress_port": port, "packets_in": len(frames),
            "bytes_in": sum(map(len, frames)), "packets_out": len(out_pkts),
            "punted": len(punt_pkts), "dropped": len(drops.drops),
            "punt_reasons": dict(punts), "drop_reasons": dict(drop_counts),
            "clocks": clocks,
            "packets_per_clock": (len(frames) / clocks) if clocks else 0.0,
            "model_mismatches": mismatches + abs(len(got) - len(want)),
            "model_expected_drops": len(expected) - n_out,
            "beat_problems": malformed,
        }
        (outdir / "summary.json").write_text(json.dumps(summary, indent=1))


# ------------------------------------------------------------------- command line

def main(argv=None):
    ap = argparse.ArgumentParser(description="Run a pcap through matcha_packet_path.")
    ap.add_argument("pcap", help="input pcap")
    ap.add_argument("outdir", nargs="?", default=str(REPO / "build" / "run"),
                    help="output directory (default build/run)")
    ap.add_argument("--config", default="w64", choices=["w64", "w512"])
    ap.add_argument("--port", type=int, default=0, help="ingress port (0..15)")
    ap.add_argument("--strict", action="store_true",
                    help="exit 1 if any output differs from the reference model")
    args = ap.parse_args(argv)

    from tb.common import sim

    missing = sim.rtl_missing(args.config, "matcha_packet_path")
    if missing:
        sys.exit(f"run_pcap: {missing}")
    outdir = Path(args.outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    summary_file = outdir / "summary.json"
    if summary_file.exists():
        summary_file.unlink()
    try:
        sim.run(args.config, "matcha_packet_path", "run_pcap", run_name="run_pcap",
                env={"MATCHA_PCAP_IN": Path(args.pcap).resolve(),
                     "MATCHA_PCAP_OUTDIR": outdir, "MATCHA_PCAP_PORT": args.port},
                pythonpath=[HERE])
    except AssertionError as e:
        sys.exit(f"run_pcap: simulation failed: {e}")
    s = json.loads(summary_file.read_text())
    print(f"config {s['config']}, ingress port {s['ingress_port']}")
    print(f"packets in   {s['packets_in']} ({s['bytes_in']} bytes)")
    print(f"packets out  {s['packets_out']} -> {outdir / 'out.pcap'}")
    print(f"punted       {s['punted']} -> {outdir / 'punt.pcap'}")
    for r, n in sorted(s["punt_reasons"].items()):
        print(f"  punt {r:<12} {n}")
    print(f"dropped      {s['dropped']}")
    for r, n in sorted(s["drop_reasons"].items()):
        print(f"  drop {r:<12} {n}")
    print(f"clocks       {s['clocks']}")
    print(f"packets/clk  {s['packets_per_clock']:.4f}")
    print(f"differences from the reference model: {s['model_mismatches']}"
          + (f", beats with tkeep/tuser problems: {s['beat_problems']}"
             if s["beat_problems"] else ""))
    if args.strict and (s["model_mismatches"] or s["beat_problems"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
