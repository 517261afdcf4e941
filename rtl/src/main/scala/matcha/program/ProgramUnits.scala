// SPDX-License-Identifier: Apache-2.0
package matcha.program

import matcha.{MatchaConfig, PhvLayout}
import matcha.table.{ControlBus, MemSessionTableUnit, MeterTableUnit, SessionTableUnit}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axilite.{AxiLite4, AxiLite4SpecRenamer}

/** One table of a program behind a control bus of its own, built as the pipeline builds it
  * (StageTable: the match unit, its window, its default action and per-entry counters), so
  * that its resources can be measured apart from the rest (bench/synth/units.sh). */
class ProgramTableUnit(program: Program, spec: TableSpec, layout: PhvLayout) extends Component {
  setDefinitionName(s"matcha_${program.name}_${spec.name}")
  val keyWidth = Stage.keyWidth(spec, layout)
  val io = new Bundle {
    val ctrl = slave(AxiLite4(ControlBus.axiConfig))
    val lookup = slave(Flow(Bits(keyWidth bits)))
    val frameLen = in UInt (layout("meta.frameLen").width bits)
  }
  noIoPrefix()
  AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  val bus = new ControlBus(io.ctrl)
  val table = new StageTable(spec, layout, bus)
  bus.build()
  table.lookup << io.lookup
  table.frameLen := io.frameLen
  val result = master(cloneOf(table.result))
  result << table.result
}

/** Every table, session table and meter array of the overlay program at each of its scales
  * as a unit of its own, `matcha_overlay_<name>` in `--out DIR/<scale>/`: the tops of the
  * resource study (bench/synth/units.sh); and the whole 64-bit pipeline at the least scale
  * (`Overlay.Least`), `--out DIR/least/matcha_overlay.v`. */
object ProgramUnits {
  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/units/rtl")
    val cfg = MatchaConfig("units", dataWidth = 64)
    for (scale <- Overlay.scales) {
      val program = Programs.overlay(scale)
      val layout = program.phv(cfg)
      val dir = s"$out/${scale.name}"
      new java.io.File(dir).mkdirs()
      def emit[T <: Component](c: => T): Unit = matcha.Generate.spinal(dir).generateVerilog(matcha.Generate.top(c)())
      for (t <- program.tables) emit(new ProgramTableUnit(program, t, layout))
      for (s <- program.session) emit(s.memoryConfig match {
        case Some(c) => new MemSessionTableUnit(c, s"matcha_${program.name}_${s.name}")
        case None => new SessionTableUnit(s.config, s"matcha_${program.name}_${s.name}")
      })
      for (m <- program.meters) emit(new MeterTableUnit(m.config, s"matcha_${program.name}_${m.name}"))
    }
    val least = Programs.overlay(Overlay.Least)
    val dir = s"$out/${Overlay.Least.name}"
    new java.io.File(dir).mkdirs()
    matcha.Generate.spinal(dir).generateVerilog(matcha.Generate.top(
      new matcha.PacketPath(cfg, Some(least), new matcha.Generate.Layout(cfg, least).identify))())
  }
}
