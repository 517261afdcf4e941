// SPDX-License-Identifier: Apache-2.0
package matcha

import matcha.program.{MatchStage, PhvPlan, PipelineStage, Program, SessionStage}
import matcha.table.ControlBus
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi.{Axi4, Axi4SpecRenamer}
import spinal.lib.bus.amba4.axilite.{AxiLite4, AxiLite4SpecRenamer}

/** AXI4-Stream in → input stage (packet buffer + header window) → parser → the program's
  * match-action stages → PHV FIFO → deparser → AXI4-Stream out. Past the parser the PHV
  * carries only the fields still live (`plan`); the deparser takes the rest of each frame
  * from the packet buffer. With a program, its tables' control windows sit behind an
  * AXI4-Lite slave (docs/tables.md); `identify` gives the build id of the layout.json that
  * describes them. */
class PacketPath(cfg: MatchaConfig, program: Option[Program] = None, identify: ControlBus.Identify = ControlBus.anonymous)
    extends Component {
  setDefinitionName(program.map(p => s"matcha_${p.name}").getOrElse("matcha_packet_path"))
  val io = new Bundle {
    val frames = slave(Axis(cfg.dataBytes, cfg.inUserWidth))
    val out = master(Axis(cfg.dataBytes, cfg.outUserWidth))
    val drop = master(Flow(UInt(8 bits)))
    /** Per frame, in frame order, before any of its bytes leave: dropped or not (Deparser). */
    val decision = master(Flow(Bool()))
    val ctrl = program.isDefined generate slave(AxiLite4(ControlBus.axiConfig))
  }
  noIoPrefix()
  Axis.renameToSpec(io.frames, "s_axis")
  Axis.renameToSpec(io.out, "m_axis")
  io.drop.setName("drop")
  io.decision.setName("decision")
  for (ctrl <- Option(io.ctrl)) {
    AxiLite4SpecRenamer(ctrl)
    ctrl.setName("s_axil")
  }

  val parser = new Parser(cfg)
  val plan = program.map(PhvPlan(cfg, _)).getOrElse(PhvPlan(cfg, Nil))
  /** Enough PHV slots for everything the stage chain can hold, plus slack for the deparser. */
  val phvSlots = 1 << log2Up(PacketPath.latency(cfg, program))
  val inputStage = new InputStage(cfg, phvSlots)
  val packetBuffer = StreamFifo(Fragment(AxisBeat(cfg.dataBytes, 0)), PacketPath.bufferBytes(cfg, program) / cfg.dataBytes)
  val phvFifo = StreamFifo(Bits(plan.deparser.width bits), phvSlots)
  val deparser = new Deparser(cfg, plan.deparser, plan.changed)

  packetBuffer.io.push << inputStage.io.buffer
  parser.io.record << inputStage.io.records

  val control = Option(io.ctrl).map(ctrl => new ControlBus(ctrl, identify))
  val stages: Seq[PipelineStage] = for (p <- program.toSeq; bus <- control.toSeq; (step, phv) <- p.steps.zip(plan.stepPhv))
    yield step.build(phv, bus, p.meters)
  // Meter arrays' windows follow the tables', in the program's order, and the session
  // table's comes last (docs/pipeline.md).
  for (p <- program; bus <- control; m <- p.meters; stage <- stages) stage match {
    case s: MatchStage if s.metering != null && s.metering.spec == m => s.metering.attach(bus)
    case _ =>
  }
  for (bus <- control; stage <- stages) stage match {
    case s: SessionStage => s.attach(bus)
    case _ =>
  }
  control.foreach(_.build())
  /** A memory-backed table's memory ports, `m_axi_<table>_*` (TableMemory.portNames). */
  val memoryPorts = for (stage <- stages; (name, mem) <- stage.memories) yield {
    val port = master(Axi4(mem.config)).setName(name)
    Axi4SpecRenamer(port)
    port.ar << mem.ar
    port.aw << mem.aw
    port.w << mem.w
    mem.r << port.r
    mem.b << port.b
    port
  }
  // Frames wait while the tables clear themselves after reset: a lookup before then could
  // match whatever the memories powered up holding.
  inputStage.io.frames << control.map(bus => io.frames.haltWhen(bus.clearing)).getOrElse(io.frames)
  val parsed = parser.io.phv.translateWith(PhvLayout.convert(parser.io.phv.payload, cfg.layout, plan.boundaries.head))
  val staged = stages.foldLeft(parsed) { (phv, stage) => stage.input << phv; stage.output }
  phvFifo.io.push << staged.toStream
  deparser.io.phv << phvFifo.io.pop
  deparser.io.frames << packetBuffer.io.pop
  inputStage.io.creditReturn := phvFifo.io.pop.fire
  io.out << deparser.io.out
  io.drop << deparser.io.drop
  io.decision << deparser.io.decision
}

object PacketPath {
  /** Clocks from a frame's first beat at the parser to its PHV at the deparser, at most:
    * the parser's, the program's stages' and the deparser's slack. */
  def latency(cfg: MatchaConfig, program: Option[Program]): Int =
    cfg.graph.levels + 1 + program.map(p => p.latency(PhvPlan(cfg, p).full)).getOrElse(0) + 8

  /** The packet buffer's bytes: a maximum-size frame (`cfg.bufferBytes`), or, when more,
    * every beat that enters a beat a clock while a frame's PHV crosses the pipeline, to a
    * power of two; so that the input never waits for room while the deparser waits for
    * PHVs. A program with tables in memory (a latency of about 1,200 clocks) at 512 bits
    * needs 128 KiB; every other build keeps 16 KiB. */
  def bufferBytes(cfg: MatchaConfig, program: Option[Program]): Int =
    cfg.bufferBytes max (1 << log2Up(latency(cfg, program) * cfg.dataBytes))
}
