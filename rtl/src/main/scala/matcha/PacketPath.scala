package matcha

import spinal.core._
import spinal.lib._

/** A match-action stage: takes a PHV every clock, hands it on `latency` clocks later. */
trait PhvStage {
  def latency: Int
  def build(phv: Flow[Bits], cfg: MatchaConfig): Flow[Bits]
}

/** AXI4-Stream in → input stage (packet buffer + header window) → parser → stages → PHV FIFO
  * → deparser → AXI4-Stream out. */
class PacketPath(cfg: MatchaConfig, stages: Seq[PhvStage] = Nil) extends Component {
  setDefinitionName("matcha_packet_path")
  val io = new Bundle {
    val frames = slave(Axis(cfg.dataBytes, cfg.inUserWidth))
    val out = master(Axis(cfg.dataBytes, cfg.outUserWidth))
    val drop = master(Flow(UInt(8 bits)))
  }
  noIoPrefix()
  Axis.renameToSpec(io.frames, "s_axis")
  Axis.renameToSpec(io.out, "m_axis")
  io.drop.setName("drop")

  val parser = new Parser(cfg)
  /** Enough PHV slots for everything the stage chain can hold, plus slack for the deparser. */
  val phvSlots = 1 << log2Up(parser.latency + stages.map(_.latency).sum + 8)
  val inputStage = new InputStage(cfg, phvSlots)
  val packetBuffer = StreamFifo(Fragment(AxisBeat(cfg.dataBytes, 0)), cfg.bufferBytes / cfg.dataBytes)
  val phvFifo = StreamFifo(Bits(cfg.layout.width bits), phvSlots)
  val deparser = new Deparser(cfg)

  inputStage.io.frames << io.frames
  packetBuffer.io.push << inputStage.io.buffer
  parser.io.record << inputStage.io.records
  val staged = stages.foldLeft(parser.io.phv)((phv, stage) => stage.build(phv, cfg))
  phvFifo.io.push << staged.toStream
  deparser.io.phv << phvFifo.io.pop
  deparser.io.frames << packetBuffer.io.pop
  inputStage.io.creditReturn := phvFifo.io.pop.fire
  io.out << deparser.io.out
  io.drop << deparser.io.drop

  def latencyStages: Int = parser.latency + stages.map(_.latency).sum
}
