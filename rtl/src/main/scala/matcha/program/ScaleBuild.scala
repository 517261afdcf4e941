// SPDX-License-Identifier: Apache-2.0
package matcha.program

import matcha.{Contract, Generate}

/** The overlay with its mappings and sessions in memory at a DPU's mapping count, for the
  * scale benchmark (bench/scale/run.py): the 64-bit `overlay_mem` pipeline with room for 2^20
  * CA→PA mappings (2^20 buckets of six, 128 MiB of memory) and 393,216 sessions (2^16
  * buckets of six, 8 MiB), the rest at the board scale; and beside it, to compare with,
  * `overlay` with the same tables but its 256 mappings on chip and the largest on-chip
  * session table (262,144 sessions, four ways of 65,536). Writes
  * `--out DIR/w64/matcha_<program>.v` with their layout-<program>.json, and the contract
  * headers in `DIR/contract`, the tree matcha-sim's build reads (MATCHA_RTL_DIR).
  * `--sessions N` gives the memory pipeline room for 1.5 N sessions (N / 4 buckets of
  * six) instead, for runs of more flows (bench/scale/run.py --sessions). `--routes N`
  * gives its route table room for N prefixes, its lowest Overlay.RouteMemoryLevels levels in
  * memory, instead of the board's on chip (bench/scale/run_routes.py). `--dash` builds
  * SONiC DASH's scale instead (`Dash`). */
object ScaleBuild {
  val Dpu: OverlayScale = Overlay.Board.copy(name = "dpu", mappings = 1 << 20, sessions = 1 << 18)
  /** SONiC DASH's scale for a card (32M sessions, 8M CA→PA mappings, 1M routes) laid out as
    * docs/tables.md, "Capacity at DPU scale", sizes it: 2^25 session buckets of six (32M
    * sessions a sixth full, 4 GiB), 2^23 mapping buckets of six (8M mappings a sixth
    * full, 1 GiB) and the
    * route table's two lowest levels (32 MB), one region after another in the 8 GiB of a
    * 33-bit port: an Alveo U280's HBM (Corundum's AXI_HBM_ADDR_WIDTH 33) or a DDR4 channel
    * (AXI_DDR_ADDR_WIDTH 34). */
  val Dash: OverlayScale = Dpu.copy(name = "dash", mappings = 1 << 23, sessions = 1 << 27, routes = 1 << 20)
  val DashAddressWidth = 33
  val DashRegions: Map[String, BigInt] = Map("sessions" -> BigInt(0), "mapping" -> (BigInt(4) << 30),
    "route" -> (BigInt(5) << 30))
  def dashMemory(m: TableMemory, region: String): TableMemory =
    m.copy(axi = m.axi.copy(addressWidth = DashAddressWidth), baseAddress = DashRegions(region))

  /** The programs `args` ask for (`--dash`, `--routes N`), the memory pipeline's with room
    * for 1.5 `sessions` sessions unless `--dash`. */
  def programs(args: Seq[String], sessions: Int): Seq[Program] = {
    val routes = args.sliding(2).collectFirst { case Seq("--routes", n) => n.toInt }
    val memoryScale = Dpu.copy(sessions = sessions, routes = routes.getOrElse(Dpu.routes))
    if (args.contains("--dash"))
      Seq(Programs.overlay(Dash, Some(dashMemory(Overlay.MappingMemory, "mapping")),
        Some(Overlay.SessionMemory.copy(table = dashMemory(Overlay.SessionMemory.table, "sessions"))),
        Some(dashMemory(Overlay.RouteMemory, "route"))))
    else
      Seq(Programs.overlay(memoryScale, Some(Overlay.MappingMemory), Some(Overlay.SessionMemory),
        routes.map(_ => Overlay.RouteMemory)),
        Programs.overlay(Dpu.copy(mappings = Overlay.Board.mappings)))
  }

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/scale/rtl")
    val sessions = args.sliding(2).collectFirst { case Array("--sessions", n) => n.toInt }.getOrElse(Dpu.sessions)
    val cfg = Generate.configs.find(_.name == "w64").get
    val dir = s"$out/${cfg.name}"
    new java.io.File(dir).mkdirs()
    for (program <- programs(args, sessions)) {
      val layout = new Generate.Layout(cfg, program)
      Generate.spinal(dir).generateVerilog(Generate.top(new matcha.PacketPath(cfg, Some(program), layout.identify))())
      Generate.write(s"$dir/layout-${program.name}.json", layout.text)
    }
    new java.io.File(s"$out/contract").mkdirs()
    Generate.write(s"$out/contract/matcha_contract.h", Contract.cHeader)
    Generate.write(s"$out/contract/matcha_contract.py", Contract.python)
  }
}
