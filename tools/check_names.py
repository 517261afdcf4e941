#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that the generated Verilog kept its names and matches docs/packet-path.md.

    tools/check_names.py build/rtl [--configs w64,w512] [--max-anon 0.2]

SpinalHDL names signals through its idsl compiler plugin. Without the plugin a design
may still generate, but ports and signals are named `_zz_N` and instances after their
type; this check catches that (and any drift from the port contract) right after
generation. For every configuration directory it checks:

  * matcha_packet_path.v, matcha_parser.v, matcha_deparser.v and layout.json exist,
    and layout.json is valid JSON;
  * each top module has the ports of docs/packet-path.md, with their directions and,
    where the contract fixes them, their widths (W from the directory name `w<W>`; the
    header window H, also layout.json's headerBytes, as docs/packet-path.md gives it);
  * matcha_packet_path instantiates inputStage, parser, deparser, packetBuffer, phvFifo;
  * the parser's PHV output is as wide as the deparser's PHV input;
  * for a Corundum build (a directory with mqnic_app_block.v): the module
    `mqnic_app_block` declares every port of Corundum's template application block, with
    its direction (docs: ip/corundum/README.md), and instantiates the core
    `matcha_corundum_app`, which instantiates the pipeline `pipeline`;
  * at most --max-anon of all declared wires/regs have anonymous names: `_zz_` and a
    number only (`_zz_7`, `_zz__zz_8_1`). With the plugin SpinalHDL still emits many
    `_zz_*` temporaries, but they carry the name of what they feed
    (`_zz_context_bodyLen`), so the plain `_zz_*` share is reported, not limited.

and in build/rtl/board that matcha_versa's ports are the pins constraints/versa_ecp5.lpf
places and that matcha_board names its MACs, pipeline and bridge (check_board).

Exit status 0 when everything holds, 1 otherwise (every problem is listed).
"""
import argparse
import json
import os
import re
import sys

# Fixed by docs/packet-path.md for every configuration.
PORT_BITS = 4  # P: port number width
WINDOW_BYTES = {"w64": 128, "w512": 192}  # H: header window of each configuration
REASON_BITS = 8

INSTANCES = ["inputStage", "parser", "deparser", "packetBuffer", "phvFifo"]

KEYWORDS = {
    "always", "assign", "begin", "end", "if", "else", "case", "casez", "casex", "endcase",
    "for", "initial", "wire", "reg", "integer", "genvar", "generate", "endgenerate",
    "function", "endfunction", "task", "endtask", "localparam", "parameter", "input",
    "output", "inout", "module", "endmodule", "default", "posedge", "negedge", "or",
    "and", "not", "while", "repeat", "forever", "fork", "join", "return",
}


def axis_ports(prefix, w, inbound, tuser_bits):
    """AXI4-Stream ports; inbound=True for a slave (s_axis) interface."""
    d_in, d_out = ("input", "output") if inbound else ("output", "input")
    ports = {
        f"{prefix}_tdata": (d_in, w),
        f"{prefix}_tkeep": (d_in, w // 8 if w else None),
        f"{prefix}_tvalid": (d_in, 1),
        f"{prefix}_tready": (d_out, 1),
        f"{prefix}_tlast": (d_in, 1),
    }
    if tuser_bits is not None:
        ports[f"{prefix}_tuser"] = (d_in, tuser_bits)
    return ports


# Corundum's mqnic_app_block (fpga/app/template/rtl/mqnic_app_block.v): every port, by
# interface. Widths are parameters there, so only directions are checked. An entry
# "prefix: a b c" with `<` (slave) or `>` (master) expands to prefix_a, prefix_b, ... with
# the direction an AXI slave (<) or master (>) gives each signal.
_AXIL = "awaddr awprot awvalid awready wdata wstrb wvalid wready bresp bvalid bready " \
        "araddr arprot arvalid arready rdata rresp rvalid rready"
_AXIS = "tdata tkeep tvalid tready tlast tuser"
_AXIS_IF = "tdata tkeep tvalid tready tlast tid tdest tuser"
_CPL = "ts tag valid ready"
_RD_DESC = "dma_addr ram_sel ram_addr len tag valid ready"
_WR_DESC = "dma_addr ram_sel ram_addr imm imm_en len tag valid ready"
_DESC_STATUS = "tag error valid"
_RAM = "wr_cmd_sel wr_cmd_be wr_cmd_addr wr_cmd_data wr_cmd_valid wr_cmd_ready wr_done " \
       "rd_cmd_sel rd_cmd_addr rd_cmd_valid rd_cmd_ready rd_resp_data rd_resp_valid rd_resp_ready"
_AXI = "awid awaddr awlen awsize awburst awlock awcache awprot awqos awuser awvalid awready " \
       "wdata wstrb wlast wuser wvalid wready bid bresp buser bvalid bready " \
       "arid araddr arlen arsize arburst arlock arcache arprot arqos aruser arvalid arready " \
       "rid rdata rresp rlast ruser rvalid rready"
# Signals a master drives; everything else in an interface goes the other way.
_MASTER_DRIVES = set(("awaddr awprot awvalid wdata wstrb wvalid bready araddr arprot arvalid "
                      "rready tdata tkeep tvalid tlast tid tdest tuser ts tag valid dma_addr "
                      "ram_sel ram_addr len imm imm_en error awid awlen awsize awburst awlock "
                      "awcache awqos awuser wlast wuser arid arlen arsize arburst arlock "
                      "arcache arqos aruser").split())
CORUNDUM_INTERFACES = [
    ("s_axil_app_ctrl", "<", _AXIL), ("m_axil_ctrl", ">", _AXIL),
    ("m_axis_ctrl_dma_read_desc", ">", _RD_DESC), ("s_axis_ctrl_dma_read_desc_status", "<", _DESC_STATUS),
    ("m_axis_ctrl_dma_write_desc", ">", _WR_DESC), ("s_axis_ctrl_dma_write_desc_status", "<", _DESC_STATUS),
    ("m_axis_data_dma_read_desc", ">", _RD_DESC), ("s_axis_data_dma_read_desc_status", "<", _DESC_STATUS),
    ("m_axis_data_dma_write_desc", ">", _WR_DESC), ("s_axis_data_dma_write_desc_status", "<", _DESC_STATUS),
    ("s_axis_direct_tx", "<", _AXIS), ("m_axis_direct_tx", ">", _AXIS),
    ("s_axis_direct_tx_cpl", "<", _CPL), ("m_axis_direct_tx_cpl", ">", _CPL),
    ("s_axis_direct_rx", "<", _AXIS), ("m_axis_direct_rx", ">", _AXIS),
    ("s_axis_sync_tx", "<", _AXIS), ("m_axis_sync_tx", ">", _AXIS),
    ("s_axis_sync_tx_cpl", "<", _CPL), ("m_axis_sync_tx_cpl", ">", _CPL),
    ("s_axis_sync_rx", "<", _AXIS), ("m_axis_sync_rx", ">", _AXIS),
    ("s_axis_if_tx", "<", _AXIS_IF), ("m_axis_if_tx", ">", _AXIS_IF),
    ("s_axis_if_tx_cpl", "<", _CPL), ("m_axis_if_tx_cpl", ">", _CPL),
    ("s_axis_if_rx", "<", _AXIS_IF), ("m_axis_if_rx", ">", _AXIS_IF),
    ("m_axi_ddr", ">", _AXI), ("m_axi_hbm", ">", _AXI),
    ("m_axis_stat", ">", "tdata tid tvalid tready"),
]
CORUNDUM_INPUTS = ("clk rst ptp_clk ptp_rst ptp_sample_clk ptp_td_sd ptp_pps ptp_pps_str "
                   "ptp_sync_locked ptp_sync_ts_rel ptp_sync_ts_rel_step ptp_sync_ts_tod "
                   "ptp_sync_ts_tod_step ptp_sync_pps ptp_sync_pps_str ptp_perout_locked "
                   "ptp_perout_error ptp_perout_pulse direct_tx_clk direct_tx_rst direct_rx_clk "
                   "direct_rx_rst ddr_clk ddr_rst ddr_status hbm_clk hbm_rst hbm_status gpio_in "
                   "jtag_tdi jtag_tms jtag_tck").split()
CORUNDUM_OUTPUTS = ["gpio_out", "jtag_tdo"]


def corundum_ports():
    """{port: direction} of Corundum's mqnic_app_block."""
    ports = {p: "input" for p in CORUNDUM_INPUTS}
    ports.update({p: "output" for p in CORUNDUM_OUTPUTS})
    for prefix, side, signals in CORUNDUM_INTERFACES:
        for sig in signals.split():
            drives = sig in _MASTER_DRIVES
            ports[f"{prefix}_{sig}"] = "output" if drives == (side == ">") else "input"
    for ram in ("ctrl_dma_ram", "data_dma_ram"):
        for sig in _RAM.split():
            ports[f"{ram}_{sig}"] = ("output" if sig.endswith(("_ready", "_done")) and sig != "rd_resp_ready"
                                     or sig in ("rd_resp_data", "rd_resp_valid") else "input")
    return ports


def check_corundum(cdir):
    """Returns (problems, summary line) of a Corundum build directory."""
    summary = f"mqnic_app_block: {len(corundum_ports())} Corundum ports"
    path = os.path.join(cdir, "mqnic_app_block.v")
    if not os.path.isfile(path):
        return [f"{path} does not exist"], summary
    with open(path, errors="replace") as f:
        mods = parse_verilog(f.read())
    problems = []
    shell = mods.get("mqnic_app_block")
    if shell is None:
        return [f"{path}: no module mqnic_app_block"], summary
    for pname, pdir in corundum_ports().items():
        got = shell["ports"].get(pname)
        if got is None:
            problems.append(f"mqnic_app_block: Corundum port {pname} missing")
        elif got[0] != pdir:
            problems.append(f"mqnic_app_block: port {pname} is {got[0]}, Corundum's is {pdir}")
    extra = sorted(set(shell["ports"]) - set(corundum_ports()))
    if extra:
        problems.append(f"mqnic_app_block: ports Corundum does not connect: {', '.join(extra)}")
    if "matcha_corundum_app" not in shell["instances"].values():
        problems.append("mqnic_app_block: no matcha_corundum_app instance")
    core = mods.get("matcha_corundum_app")
    if core is None or core["instances"].get("pipeline") is None:
        problems.append("matcha_corundum_app: no submodule instance named pipeline")
    return problems, summary


def expected_ports(w, h):
    """module -> {port: (direction, width or None)}; w and h (the header window) are None
    when unknown."""
    drop = {"drop_valid": ("output", 1), "drop_payload": ("output", REASON_BITS),
            "decision_valid": ("output", 1), "decision_payload": ("output", 1)}
    m_axis = axis_ports("m_axis", w, False, 1 + PORT_BITS + REASON_BITS)
    return {
        "matcha_packet_path": {
            "clk": ("input", 1),
            "rst": ("input", 1),
            **axis_ports("s_axis", w, True, 1 + PORT_BITS),
            **m_axis,
            **drop,
        },
        "matcha_parser": {
            "in_valid": ("input", 1),
            "in_payload_window": ("input", h * 8 if h else None),
            "in_payload_frameLen": ("input", 16),
            "in_payload_ingressPort": ("input", PORT_BITS),
            "in_payload_badFrame": ("input", 1),
            "in_payload_oversize": ("input", 1),
            "out_valid": ("output", 1),
            "out_payload": ("output", None),
        },
        "matcha_deparser": {
            "s_phv_valid": ("input", 1),
            "s_phv_ready": ("output", 1),
            "s_phv_payload": ("input", None),
            **axis_ports("s_axis", w, True, None),
            **m_axis,
            **drop,
        },
    }


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


RANGE = r"\[\s*([^\]:]+?)\s*:\s*([^\]]+?)\s*\]"
MODULE_RE = re.compile(
    r"\bmodule\s+([A-Za-z_]\w*)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\)\s*)?\((.*?)\)\s*;(.*?)\bendmodule\b",
    re.S,
)
PORT_RE = re.compile(
    r"\b(input|output|inout)\s+(?:(?:wire|reg|logic)\s+)?(?:signed\s+)?(?:" + RANGE + r"\s*)?([A-Za-z_]\w*)"
)
DECL_RE = re.compile(r"(?m)^\s*(?:wire|reg)\s+(?:signed\s+)?(?:\[[^\]]*\]\s*)?([A-Za-z_$][\w$]*)")
INST_RE = re.compile(
    r"(?m)^\s*([A-Za-z_]\w*)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\)\s*)?([A-Za-z_]\w*)\s*\(\s*[.)]"
)


def width(hi, lo):
    try:
        return abs(int(hi, 0) - int(lo, 0)) + 1
    except ValueError:
        return None  # parameterised range


def parse_verilog(text):
    """module name -> {"ports": {name: (dir, width)}, "decls": [names], "instances": {inst: type}}"""
    modules = {}
    for m in MODULE_RE.finditer(strip_comments(text)):
        name, header, body = m.groups()
        ports = {}
        for p in PORT_RE.finditer(header):
            direction, hi, lo, pname = p.groups()
            ports[pname] = (direction, width(hi, lo) if hi is not None else 1)
        decls = DECL_RE.findall(body)
        instances = {}
        for i in INST_RE.finditer(body):
            mtype, inst = i.groups()
            if mtype not in KEYWORDS and inst not in KEYWORDS:
                instances[inst] = mtype
        modules[name] = {"ports": ports, "decls": decls, "instances": instances}
    return modules


ANON_RE = re.compile(r"(?:_zz_)+[0-9_]*")


def check_config(cdir, max_anon):
    """Returns (problems, summary line)."""
    cfg = os.path.basename(os.path.normpath(cdir))
    problems = []
    mw = re.fullmatch(r"w(\d+)", cfg)
    w = int(mw.group(1)) if mw else None
    h = WINDOW_BYTES.get(cfg)
    expect = expected_ports(w, h)

    layout = os.path.join(cdir, "layout.json")
    if not os.path.isfile(layout):
        problems.append("layout.json missing")
    else:
        try:
            with open(layout) as f:
                header_bytes = json.load(f).get("headerBytes")
            if h is not None and header_bytes != h:
                problems.append(f"layout.json: headerBytes {header_bytes}, expected {h}")
        except ValueError as e:
            problems.append(f"layout.json is not valid JSON: {e}")

    all_modules = {}
    decls = []
    for top in expect:
        path = os.path.join(cdir, top + ".v")
        if not os.path.isfile(path):
            problems.append(f"{top}.v missing")
            continue
        with open(path, errors="replace") as f:
            mods = parse_verilog(f.read())
        for mname, mod in mods.items():
            if mname not in all_modules:  # a submodule may be repeated in several files
                decls += mod["decls"]
            # ... and differ: a path's matcha_deparser takes the path's PHV, only the live
            # fields (docs/packet-path.md), so a module is taken from its own file first.
            if mname not in all_modules or mname == top:
                all_modules[mname] = mod
        if top not in mods:
            problems.append(f"{top}.v: no module {top} (modules: {', '.join(sorted(mods)) or 'none'})")
            continue
        ports = mods[top]["ports"]
        for pname, (pdir, pwidth) in expect[top].items():
            if pname not in ports:
                problems.append(f"{top}: port {pname} missing")
                continue
            adir, awidth = ports[pname]
            if adir != pdir:
                problems.append(f"{top}: port {pname} is {adir}, expected {pdir}")
            if pwidth is not None and awidth is not None and awidth != pwidth:
                problems.append(f"{top}: port {pname} is {awidth} bits, expected {pwidth}")
        extra = sorted(set(ports) - set(expect[top]) - {"clk", "rst"})
        if extra:
            print(f"check_names: {cfg}: note: {top} has ports beyond the contract: {', '.join(extra)}")

    pp = all_modules.get("matcha_packet_path")
    if pp is not None:
        for inst in INSTANCES:
            if inst not in pp["instances"]:
                problems.append(f"matcha_packet_path: no submodule instance named {inst}"
                                f" (instances: {', '.join(sorted(pp['instances'])) or 'none'})")

    par, dep = all_modules.get("matcha_parser"), all_modules.get("matcha_deparser")
    if par and dep:
        a = par["ports"].get("out_payload", (None, None))[1]
        b = dep["ports"].get("s_phv_payload", (None, None))[1]
        if a is not None and b is not None and a != b:
            problems.append(f"PHV width differs: matcha_parser.out_payload {a} bits, "
                            f"matcha_deparser.s_phv_payload {b} bits")

    zz = sum(1 for d in decls if d.startswith("_zz_"))
    anon = sum(1 for d in decls if ANON_RE.fullmatch(d))
    frac = zz / len(decls) if decls else 0.0
    afrac = anon / len(decls) if decls else 0.0
    if afrac > max_anon:
        problems.append(f"{anon} of {len(decls)} wires/regs ({afrac:.0%}) have anonymous names"
                        f" (_zz_<number>, limit {max_anon:.0%}): is the SpinalHDL idsl"
                        f" compiler plugin active?")
    summary = (f"{len(all_modules)} modules, {len(decls)} wires/regs, {frac:.0%} _zz_*, "
               f"{afrac:.1%} anonymous, "
               f"PHV {par['ports'].get('out_payload', (None, '?'))[1] if par else '?'} bits")
    return problems, summary


BOARD_LPF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "constraints",
                         "versa_ecp5.lpf")
BOARD_INSTANCES = ["mac0", "mac1", "pipeline", "bridge"]


def check_board(bdir):
    """The board tops (README "The Versa ECP5 board"): matcha_versa's ports are exactly the
    pins constraints/versa_ecp5.lpf places (bit by bit), and matcha_board keeps the names
    of its MACs, pipeline and bridge. Returns (problems, summary line)."""
    problems = []
    mods = {}
    for top in ("matcha_versa", "matcha_board"):
        path = os.path.join(bdir, top + ".v")
        if not os.path.isfile(path):
            problems.append(f"{top}.v missing")
            continue
        with open(path, errors="replace") as f:
            mods[top] = parse_verilog(f.read()).get(top)
        if mods[top] is None:
            problems.append(f"{top}.v: no module {top}")
    versa = mods.get("matcha_versa")
    if versa:
        bits = set()
        for name, (_, w) in versa["ports"].items():
            bits |= {name} if w == 1 else {f"{name}[{i}]" for i in range(w)}
        with open(BOARD_LPF) as f:
            placed = set(re.findall(r'^\s*LOCATE\s+COMP\s+"([^"]+)"', f.read(), re.M))
        for b in sorted(bits - placed):
            problems.append(f"matcha_versa: port {b} has no LOCATE in {os.path.basename(BOARD_LPF)}")
        for b in sorted(placed - bits):
            problems.append(f"{os.path.basename(BOARD_LPF)} places {b}, not a port of matcha_versa")
    core = mods.get("matcha_board")
    if core:
        for inst in BOARD_INSTANCES:
            if inst not in core["instances"]:
                problems.append(f"matcha_board: no submodule instance named {inst}")
    summary = f"matcha_versa {len(versa['ports']) if versa else '?'} ports placed by the LPF"
    return problems, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rtl_dir", help="generator output, e.g. build/rtl")
    ap.add_argument("--configs", default="w64,w512",
                    help="comma-separated configuration directories that must exist")
    ap.add_argument("--corundum", default="",
                    help="comma-separated Corundum build directories that must exist")
    ap.add_argument("--max-anon", type=float, default=0.2,
                    help="largest allowed fraction of wires/regs named _zz_<number> (default 0.2)")
    args = ap.parse_args()

    builds = [(c, lambda d: check_config(d, args.max_anon)) for c in args.configs.split(",") if c]
    builds += [(c, check_corundum) for c in args.corundum.split(",") if c]
    builds.append(("board", check_board))
    failed = False
    for cfg, check in builds:
        cdir = os.path.join(args.rtl_dir, cfg)
        if not os.path.isdir(cdir):
            print(f"check_names: {cfg}: FAIL: {cdir} does not exist")
            failed = True
            continue
        problems, summary = check(cdir)
        if problems:
            failed = True
            print(f"check_names: {cfg}: FAIL ({summary})")
            for p in problems:
                print(f"  - {p}")
        else:
            print(f"check_names: {cfg}: ok ({summary})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
