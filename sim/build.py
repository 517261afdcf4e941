#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Build matcha-sim, the Verilator harness of a program's pipeline, for one configuration.

    python sim/build.py [--config w64|w512] [--program l2l3|policer|conntrack|...] [--waves]

Writes build/sim/<config>/<program>/matcha-sim (with --waves: matcha-sim-waves, which
records FST waveforms with --trace). The generator writes every program of a
configuration as matcha_<program> with its layout (layout.json for the built-in program,
layout-<program>.json for the others); the program's layout gives the top level's name,
the widths the harness needs (data, port number, control addresses), the maximum frame
size, the parse error names and the build id, which go into a generated
matcha_sim_config.h (the harness's compile checks the data width against the model's
s_axis_tdata). The pipeline's Verilator model is the cocotb tests' (tb/common/sim.py
builds it, or finds it built), and the harness is linked with it (matcha_sim.mk). The
harness's build is skipped when a stamp holds the hash of every input (the model's own
stamp, layout, harness sources, options); fcntl locks keep parallel test workers from
building the same model or binary at once. Prints the binary's path.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tb.common import sim  # noqa: E402

# The harness's C++ files, each a class of sim/matcha_sim.mk's link.
HARNESS = ["matcha_sim", "pcap_io", "control_socket", "live_interface", "axi_memory"]
SOURCES = [f"{name}.cpp" for name in HARNESS]
HEADERS = ["pcap_io.h", "control_socket.h", "live_interface.h", "axi_memory.h"]
# The link against the test model (tb/common/sim.py), which also makes the deparser's PHV
# handshake readable (matcha_sim.vlt: it tells which frame a drop belongs to).
MAKEFILE = "matcha_sim.mk"
CONFIG_FILE = "matcha_sim.vlt"
# The C++ optimization of the harness. The model is the cocotb tests' (its own code at -O1,
# its constructors at -O0, tb/common/sim.py TEST_OPT), built once for both; MATCHA_SIM_OPT
# (say -O2, which the simulator's speed benchmark bench/sim/run_speed.py uses) compiles a
# model of its own, all of it at that optimization.
OPT = os.environ.get("MATCHA_SIM_OPT")


# The program `make sim` and `make run` build when none is named.
DEFAULT_PROGRAM = "l2l3"


def toplevel(program):
    """The generator names a program's pipeline after the program (rtl PacketPath)."""
    return f"matcha_{program}"


def binary_path(config, program=DEFAULT_PROGRAM, waves=False):
    return sim.SIM_DIR / config / program / ("matcha-sim-waves" if waves else "matcha-sim")


def layout_path(config, program):
    """The layout of `program` in `config`: layout-<program>.json, or layout.json when it
    describes `program` (the built-in program's); None when neither does."""
    rtl = sim.RTL_DIR / config
    own = rtl / f"layout-{program}.json"
    if own.exists():
        return own
    built_in = rtl / "layout.json"
    if built_in.exists() and json.loads(built_in.read_text())["program"]["name"] == program:
        return built_in
    return None


def programs(config):
    """Names of the programs generated for `config`."""
    rtl = sim.RTL_DIR / config
    names = {p.name[len("layout-"):-len(".json")] for p in rtl.glob("layout-*.json")}
    if (rtl / "layout.json").exists():
        names.add(json.loads((rtl / "layout.json").read_text())["program"]["name"])
    return sorted(names)


def missing(config, program=DEFAULT_PROGRAM):
    """None if the Verilog and the layout of `program` in `config` exist, else why not."""
    layout = layout_path(config, program)
    if layout is None:
        rtl = sim.RTL_DIR / config
        there = ", ".join(programs(config)) or "none"
        return (f"no layout of program {program} in {rtl.relative_to(REPO)} (programs there: "
                f"{there}; run `make rtl`)")
    verilog = sim.rtl_file(config, toplevel(program))
    if not verilog.exists():
        return f"{verilog.relative_to(REPO)} not found (run `make rtl`)"
    return None


def config_header(config, program):
    """The text of matcha_sim_config.h for a program in a configuration."""
    path = layout_path(config, program)
    layout = json.loads(path.read_text())
    where = path.relative_to(REPO)
    if layout["program"]["name"] != program:
        raise RuntimeError(f"{where} describes program {layout['program']['name']}, "
                           f"not {program}")

    def number(*keys):
        value = layout
        for k in keys:
            if not isinstance(value, dict) or k not in value:
                raise RuntimeError(f"{where}: no {'.'.join(keys)} (run `make rtl`)")
            value = value[k]
        if not isinstance(value, int) or value < 0:
            raise RuntimeError(f"{where}: {'.'.join(keys)} is {value!r}, not a number")
        return value

    data_bits = number("dataWidth")
    if data_bits % 64 or not 64 <= data_bits <= 512:
        raise RuntimeError(f"{where}: data width {data_bits}; the harness takes 64..512 "
                           f"bits in steps of 64")
    top = toplevel(program)
    # The memory-backed tables' AXI4 master ports (m_axi_<table>, or an LPM table's
    # m_axi_<table>_<level>), each with its data bytes.
    prog = layout["program"]
    memories = " ".join(f"X({port}, {t['memory']['dataWidth'] // 8})"
                        for t in prog["tables"] + prog.get("sessions", []) if "memory" in t
                        for port in t["memory"]["ports"])
    # The packet path's own reasons: parse errors and forwarding checks.
    own = {**layout["parseErrors"], **layout["checkReasons"]}
    errors = ", ".join(f'{{{code}, "{name}"}}'
                       for name, code in sorted(own.items(), key=lambda kv: kv[1]))
    return "\n".join([
        f"// Generated by sim/build.py from {where}.",
        "#pragma once",
        f'#define MATCHA_PROGRAM "{program}"',
        f'#define MATCHA_CONFIG "{config}"',
        f'#define MATCHA_TOPLEVEL "{top}"',
        f"#define MATCHA_DATA_BYTES {data_bits // 8}",
        f"#define MATCHA_PORT_BITS {number('portWidth')}",
        f"#define MATCHA_AXIL_ADDR_BITS {number('control', 'addressWidth')}",
        f"#define MATCHA_MAX_FRAME_BYTES {number('maxFrameBytes')}",
        f"#define MATCHA_BUILD_ID {number('buildId')}u",
        f"#define MATCHA_LAYOUT_PATH {json.dumps(str(path.resolve()))}",
        "// A signal of the deparser (made readable by matcha_sim.vlt) in the model's root,",
        "// where Verilator names it after the top level.",
        f"#define MATCHA_DEPARSER(root, signal) (root).{top}__DOT__deparser__DOT__##signal",
        "// X(port, data bytes) for each memory-backed table's AXI4 master port.",
        f"#define MATCHA_MEMORY_PORTS(X) {memories}",
        "struct MatchaParseError { unsigned code; const char* name; };",
        f"static const MatchaParseError MATCHA_PARSE_ERRORS[] = {{{errors}}};",
        "",
    ])


def command(model, obj_dir, binary):
    """The make command that compiles the harness into obj_dir and links it with `model`."""
    return ["make", "-s", "-j", os.environ.get("MATCHA_SIM_JOBS", "2"), "-C", str(obj_dir),
            "-f", str(HERE / MAKEFILE), f"VERILATOR_ROOT={sim.setup_environment().parent}",
            f"MODEL={model}", f"HARNESS_DIR={HERE}", f"HARNESS={' '.join(HARNESS)}",
            f"BINARY={binary}", f"OPT_FAST={OPT or '-O1'}",
            f"HARNESS_CPPFLAGS=-std=c++17 -I{HERE} -I{sim.RTL_DIR / 'contract'} -I{obj_dir}", *sim.make_vars()]


def build(config="w64", program=DEFAULT_PROGRAM, waves=False, quiet=False):
    """Build (or reuse) the harness of `program` in `config`; returns the binary's path."""
    why = missing(config, program)
    if why:
        raise RuntimeError(why)
    binary = binary_path(config, program, waves)
    obj_dir = binary.with_name(binary.name + ".obj")
    header = config_header(config, program)
    with sim.locked(binary.parent / f".{binary.name}.lock"):
        model = sim.build(config, toplevel(program), waves=waves, opt=OPT)
        cmd = command(model, obj_dir, binary)
        h = hashlib.sha256()
        h.update((model / ".matcha-build").read_bytes())
        h.update(header.encode())
        for name in SOURCES + HEADERS + [MAKEFILE, "build.py"]:
            h.update((HERE / name).read_bytes())
        h.update("\0".join(cmd).encode())
        key = h.hexdigest()
        stamp = obj_dir / ".matcha-build"
        if stamp.exists() and stamp.read_text() == key and binary.exists():
            return binary
        if obj_dir.exists():
            shutil.rmtree(obj_dir)
        obj_dir.mkdir(parents=True)
        (obj_dir / "matcha_sim_config.h").write_text(header)
        log = obj_dir / "build.log"
        if not quiet:
            print(f"sim/build.py: building {binary.relative_to(REPO)} (log {log.relative_to(REPO)})",
                  flush=True)
        with open(log, "w") as f:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
        if r.returncode or not binary.exists():
            tail = log.read_text(errors="replace")[-4000:]
            raise RuntimeError(f"building {binary} failed; log {log}:\n{tail}")
        stamp.write_text(key)
    return binary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", default="w64", choices=sim.CONFIGS)
    ap.add_argument("--program", default=DEFAULT_PROGRAM,
                    help=f"the program's pipeline, matcha_<program> (default {DEFAULT_PROGRAM})")
    ap.add_argument("--waves", action="store_true", help="build with FST tracing (--trace)")
    args = ap.parse_args(argv)
    try:
        print(build(args.config, args.program, args.waves))
    except RuntimeError as e:
        sys.exit(f"sim/build.py: {e}")


if __name__ == "__main__":
    main()
