#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Overlay pipeline benchmark: runs bench/overlay/overlay_bench_tb.py on matcha_overlay
(docs/overlay.md) in Verilator and writes a Markdown results file (and the raw JSON):
frames per clock with features added cumulatively and per frame size, sessions learned per
clock under 100 % new flows, latency in clocks with the tables nearly empty and filled and
with 1/64 and 7/8 of the session table's flows established, and those figures at an assumed 250 MHz against
the VPP pipeline's and a P4 DPU's.

usage: python bench/overlay/run_bench.py [--config w512] [--out bench/results/overlay.md]
"""

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))

from bench.provenance import invocation, write_report  # noqa: E402
from tb.common import driver, sim  # noqa: E402

TOPLEVEL = "matcha_overlay"
LAYOUT = "layout-overlay.json"
TESTS = ("features", "learning", "latency", "rewrite")
ASSUMED_HZ = 250e6
# The figures the benchmark is compared with: the VPP pipeline (128-byte packets, new
# connections per second) and a P4 DPU, 7 and 100 times those.
VPP_MPPS, VPP_CPS = 7.1, 40_000
DPU_MPPS, DPU_CPS = 7 * VPP_MPPS, 100 * VPP_CPS


def lat(r):
    if "latency_min" not in r:
        return "—"
    return f"{r['latency_min']} / {r['latency_mean']:.1f} / {r['latency_max']}"


def queued(r):
    """Latency of a back-to-back run: the first frame's, and the largest."""
    if "latency_min" not in r:
        return "—"
    return f"{r['latency_first']} / {r['latency_max']}"


def rate_cells(r):
    return (f"{r['frames_per_clock']:.4f} | {r['ideal_frames_per_clock']:.4f} "
            f"| {100 * r['bus_efficiency']:.1f} % | {1 / r['frames_per_clock']:.2f} "
            f"| {r['beats_per_frame']}")


RATE_HEAD = ("frames/clock | ideal | of ideal | clocks per frame | input beats per frame")
RATE_ALIGN = "---: | ---: | ---: | ---: | ---:"


def features_md(f):
    steps = {s["step"]: s for s in f["steps"]}
    fwd = steps["forwarding only"]
    lines = [
        "## 1. Frames per clock, features added cumulatively",
        "",
        f"128-byte inner frames ({fwd['in_bytes']} bytes in, "
        f"{'/'.join(map(str, fwd['out_bytes']))} bytes out), {fwd['frames']} frames per row "
        f"over {f['flows']} flows, back to back. Ideal: one frame per ceil({fwd['in_bytes']} / "
        f"64) = {fwd['beats_per_frame']} clocks on the input bus. Latency: the first frame's "
        "and the largest, in clocks; at full input rate the frames the pipeline has not yet "
        "taken wait in the packet path's input buffer, so it grows until the buffer is full "
        "and `s_axis_tready` stalls the source (section 3 has the latency without waiting).",
        "",
        f"| step | what the tables hold | {RATE_HEAD} | input stalls | frames checked "
        "| latency first / largest |",
        f"| --- | --- | {RATE_ALIGN} | ---: | ---: | --- |",
    ]
    what = {
        "forwarding only": "ACL empty, a miss permits; no policer; every destination routed "
                           "and mapped; frames of no session (TCP ACKs, which do not learn: "
                           "the session stage looks each up and misses)",
        "+ ACL": f"{f['acl_rules']} ACL rules, the only matching one last (lowest priority); "
                 "a miss denies",
        "+ policer": "the ENI's two-rate policer, 200 Gb/s CIR and PIR, 10^9-byte bursts: "
                     "every frame green",
        "+ sessions": f"{f['flows']} sessions learned by the flows' SYNs; every frame hits "
                      "one",
    }
    for name in ["forwarding only", "+ decap/encap", "+ ACL", "+ policer", "+ sessions"]:
        if name == "+ decap/encap":
            lines.append("| + decap/encap | the pipeline itself: every row's frames are "
                         "decapsulated and encapsulated again; the forwarding-only run "
                         f"| {rate_cells(fwd)} | {fwd['input_stalls']} | {fwd['checked']} "
                         f"| {queued(fwd)} |")
            continue
        s = steps[name]
        lines.append(f"| {name} | {what[name]} | {rate_cells(s)} | {s['input_stalls']} "
                     f"| {s['checked']} | {queued(s)} |")
    rates = {round(st["frames_per_clock"], 4) for st in f["steps"] if st["label"] != "syn"}
    if len(rates) == 1:
        extra = 1 / fwd["frames_per_clock"] - fwd["beats_per_frame"]
        lines += ["", f"Every step measures the same {rates.pop():.4f} frames per clock: "
                  f"{1 / fwd['frames_per_clock']:.2f} clocks per frame, {extra:.2f} more than "
                  "the input bus needs (see \"Where the clocks go\")."]
    else:
        lines += ["", "The steps measure different rates: " + ", ".join(
            f"{st['step']} {st['frames_per_clock']:.4f}" for st in f["steps"]) + "."]
    lines += [
        "",
        "### Frame sizes, all features on",
        "",
        f"The `+ sessions` configuration: {f['acl_rules']} ACL rules, the policer, every "
        "frame of a learned session, back to back.",
        "",
        f"| inner frame bytes | input = output bytes | frames | {RATE_HEAD} "
        "| input bits/clock | input stalls | latency first / largest |",
        f"| ---: | ---: | ---: | {RATE_ALIGN} | ---: | ---: | --- |",
    ]
    for r in f["sizes"]:
        out = "/".join(map(str, r["out_bytes"]))
        lines.append(f"| {r['inner_bytes']} | {r['in_bytes']} = {out} | {r['frames']} "
                     f"| {rate_cells(r)} | {r['frames_per_clock'] * r['in_bytes'] * 8:.1f} "
                     f"| {r['input_stalls']} | {queued(r)} |")
    return lines


def rewrite_md(rw, f):
    fwd = next(s for s in f["steps"] if s["step"] == "+ sessions") if f else None
    lines = [
        "### Where the clocks go",
        "",
        "The same tables, frames of the same input length, back to back: frames the "
        "deparser emits as they arrived, frames only decapsulated (a `route_direct` route: "
        "the outer 50 bytes popped, nothing pushed), and the overlay path (popped and pushed).",
        "",
        f"| frames | input bytes | output bytes | output beats | {RATE_HEAD} | input stalls "
        "| frames checked |",
        f"| --- | ---: | ---: | ---: | {RATE_ALIGN} | ---: | ---: |",
    ]
    runs = list(rw["runs"])
    if fwd:
        runs.append(dict(case="overlay path, decapsulated and encapsulated (section 1)", **fwd))
    for r in runs:
        out = r["out_bytes"][0]
        lines.append(f"| {r['case']} | {r['in_bytes']} | {out} | {-(-out // 64)} "
                     f"| {rate_cells(r)} | {r['input_stalls']} | {r['checked']} |")
    return lines


def learning_md(le):
    lines = [
        "## 2. Connections learned per clock, 100 % new flows",
        "",
        "Every frame a TCP SYN of a new 5-tuple (64-byte inner frame, "
        f"{le['runs'][0]['in_bytes']} bytes in) that the ACL permits ({le['acl_rules']} rules, "
        "policer on), back to back. Learned and insert failures: the session table's "
        "LEARNED and INSERT_FAILED counts read through the driver (`session_stats`) before "
        "and after the run, each equal to the model's. Learned per clock: sessions learned "
        "over the clocks from the first output beat of the run's first frame to the last "
        "output beat of its last (every frame meets the session stage a fixed number of "
        "clocks before its output, and m_axis never stalls; the input clocks are fewer, as "
        "the input buffer takes the first frames faster than the pipeline). A learned SYN "
        "passes; one that finds its four ways taken is punted with reason 0x39 and its "
        "flow is not learned.",
        "",
        "| run | sessions before | new flows | learned | insert failures "
        "| input clocks | output clocks | learned per clock | ideal (one per frame on the "
        "input bus) | frames checked |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in le["runs"]:
        lines.append(f"| {r['label']} | {r['occupancy_before']} | {r['flows']} "
                     f"| {r['learned']} | {r['insert_failed']} | {r['input_clocks']} "
                     f"| {r['output_clocks']} "
                     f"| {r['learned_per_clock']:.4f} | {r['ideal_learned_per_clock']:.4f} "
                     f"| {r['checked']} |")
    first = le["runs"][0]
    per_clock = first["learned_per_clock"]
    lines += ["", f"At 64-byte inner frames the session stage learns {per_clock:.4f} per clock, "
              f"{'at or above' if per_clock >= 0.5 else 'below'} 0.5: every SYN of a new "
              "flow is learned as its frame passes the session stage, so learning runs at the "
              f"pipeline's frame rate ({first['frames_per_clock']:.4f} frames per clock "
              f"for {first['in_bytes']}-byte frames of {first['beats_per_frame']} beats); the "
              "session table alone learns one per clock (bench/results/sessions.md)."]
    return lines


def latency_md(la):
    r0 = la["runs"][0]
    lines = [
        "## 3. Latency",
        "",
        "Clocks from a frame's first input beat to its first output beat, for every frame "
        f"of the run: 128-byte inner frames, one every {r0['period']} clocks (its beats back "
        "to back), the rate the pipeline sustains (section 1), so that no frame waits behind "
        "another. The generated program's latency is "
        f"{la['program_latency']} clocks (`program.latency` in `{LAYOUT}`); the rest is the "
        "packet path's parser, deparser and buffering.",
        "",
        "| case | entries: vip, direction, eni_out, eni_in, inbound_routing, pa_validation, "
        "acl, route, mapping | sessions in the table | frames | frames checked "
        "| latency min / mean / max |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for r in la["runs"]:
        t = r["tables"]
        ent = ", ".join(str(t[k]) for k in ("vip", "direction", "eni_out", "eni_in",
                                            "inbound_routing", "pa_validation", "acl",
                                            "route", "mapping"))
        lines.append(f"| {r['case']} | {ent} | {r['sessions']} | {r['frames']} "
                     f"| {r['checked']} | {lat(r)} |")
    learn = la["learn"]
    offered = sum(r["frames"] for r in learn)
    learned = sum(r["passed"] for r in learn)
    failed = sum(r["punted"] for r in learn)
    lines += [
        "",
        f"The tables were filled in {la['load_s']:.0f} s of simulation through the driver "
        "(ACL rules in front of the matching one; routes 10.k.0.0/16 in the flows' routing "
        "group; random mappings, ENI MACs and PAs; the counts are what the driver placed). "
        f"The sessions were learned by {offered} SYNs of new flows (64-byte inner frames, back "
        f"to back, in batches of up to 4000, every output checked): {learned} learned, "
        f"{failed} insert failures (punted, their flows not established); the "
        f"{la['runs'][-1]['frames']} frames of the last row are one per established flow.",
        "",
        "The session table as it filled, batch by batch (flow n goes to 192.168.1.(n mod 16 "
        "+ 1) from source port 10,000 + n div 16; a SYN that finds the four ways of its key "
        "taken is punted and its flow is not learned):",
        "",
        "| flows offered before the batch | sessions before it | SYNs | learned | of the batch |",
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    before = held = 0
    for r in learn:
        lines.append(f"| {before:,} | {held:,} | {r['frames']:,} | {r['passed']:,} "
                     f"| {100 * r['passed'] / r['frames']:.1f} % |")
        before += r["frames"]
        held += r["passed"]
    return lines


def compare_md(f, le):
    r128 = next(r for r in f["sizes"] if r["inner_bytes"] == 128)
    first = le["runs"][0]
    mpps = r128["frames_per_clock"] * ASSUMED_HZ / 1e6
    cps = first["learned_per_clock"] * ASSUMED_HZ
    return [
        "## 4. At 250 MHz, against VPP and a P4 DPU",
        "",
        "The measured per-clock figures times 250 MHz, Corundum's core clock. The clock is an "
        "assumption: the Fmax of `matcha_overlay` at 512 bits is not measured. Reference "
        f"figures (not measured here): VPP {VPP_MPPS} Mpps with 128-byte packets and "
        f"{VPP_CPS // 1000}K new connections per second; a P4 DPU 7 × and 100 × those "
        f"({DPU_MPPS:.1f} Mpps, {DPU_CPS / 1e6:.0f} M connections per second).",
        "",
        "| figure | measured | at 250 MHz | VPP | × VPP | P4 DPU | × P4 DPU |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| 128-byte inner frames, all features on | {r128['frames_per_clock']:.4f} frames/clock "
        f"| {mpps:.1f} Mpps | {VPP_MPPS} Mpps | {mpps / VPP_MPPS:.1f} | {DPU_MPPS:.1f} Mpps "
        f"| {mpps / DPU_MPPS:.2f} |",
        f"| new connections, 64-byte SYNs into the empty table "
        f"| {first['learned_per_clock']:.4f} learned/clock | {cps / 1e6:.1f} M/s "
        f"| {VPP_CPS // 1000}K/s | {cps / VPP_CPS:.0f} | {DPU_CPS / 1e6:.0f} M/s "
        f"| {cps / DPU_CPS:.1f} |",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="w512")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "overlay.md"))
    ap.add_argument("--raw-dir", default=str(REPO / "build" / "bench" / "overlay"))
    args = ap.parse_args()

    for p in (sim.rtl_file(args.config, TOPLEVEL), sim.RTL_DIR / args.config / LAYOUT):
        if not p.exists():
            sys.exit(f"bench: {p.relative_to(REPO)} not found (run `make rtl`)")
    raw = Path(args.raw_dir)
    shutil.rmtree(raw, ignore_errors=True)
    raw.mkdir(parents=True)
    driver.build_library()
    problems = []
    t0 = time.time()
    try:
        sim.run(args.config, TOPLEVEL, "overlay_bench_tb", run_name="bench",
                env={"MATCHA_BENCH_OUT": raw,
                     "MATCHA_TB_LAYOUT": sim.RTL_DIR / args.config / LAYOUT},
                pythonpath=[HERE])
    except AssertionError as e:
        problems.append(str(e).splitlines()[0] + " (" + "; ".join(
            ln.strip() for ln in str(e).splitlines()[1:4]) + ")")
    wall = time.time() - t0
    print(f"bench: {args.config} overlay done in {wall:.0f} s", flush=True)
    res = {t: json.loads((raw / f"{t}.json").read_text())
           for t in TESTS if (raw / f"{t}.json").exists()}
    for t in TESTS:
        if t not in res:
            problems.append(f"no results of bench_{t}")

    md = [
        "# Overlay pipeline benchmark",
        "",
        f"`{TOPLEVEL}` ({args.config}: 512-bit data path, the overlay program of "
        "docs/overlay.md) in Verilator, cocotb bench `bench/overlay/overlay_bench_tb.py`. "
        "Tables loaded through the C driver: tb/overlay's DASH configuration (`overlay_setup`) "
        "and mappings of the sixteen destinations the flows use. Every frame is an outbound "
        "TCP frame of the TX VM in its host's VXLAN (outer Ethernet, IPv4, UDP and VXLAN: "
        "50 bytes around the inner frame); the pipeline decapsulates it, looks it up in "
        "every table and the session table, polices it and encapsulates it again in outer "
        "headers of the same length. No output back-pressure. Every frame's output (bytes, "
        "tuser, or drop and reason) is checked against the program model in the order sent "
        "(`PipelineTb.check`), in every run. Frames per clock are measured between the ends "
        "of the first and the last output frame; input stalls are clocks with "
        "`s_axis_tvalid` and not `s_axis_tready`; the ideal is one frame per "
        "ceil(input bytes / 64) clocks. Random table contents are drawn from seed 0.",
        "",
    ]
    if "features" in res:
        md += features_md(res["features"]) + [""]
    if "rewrite" in res:
        md += rewrite_md(res["rewrite"], res.get("features")) + [""]
    if "learning" in res:
        md += learning_md(res["learning"]) + [""]
    if "latency" in res:
        md += latency_md(res["latency"]) + [""]
    if "features" in res and "learning" in res:
        md += compare_md(res["features"], res["learning"]) + [""]
    where = raw.relative_to(REPO) if raw.is_relative_to(REPO) else raw
    md += [f"Raw numbers: `{where}/*.json`; simulation wall time {wall:.0f} s.", "", ""]
    (raw / "overlay.json").write_text(json.dumps(res, indent=1))
    write_report("\n".join(md), args.out, invocation(), problems)


if __name__ == "__main__":
    main()
