// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._
import spinal.lib._

/** What the parser receives per frame: the first `headerBytes` bytes (zero past the frame's
  * end) and what is known once the frame has been received. */
case class HeaderRecord(cfg: MatchaConfig) extends Bundle {
  val window = Bits(cfg.headerBytes * 8 bits)
  val frameLen = UInt(cfg.frameLenWidth bits)
  val ingressPort = Bits(cfg.portWidth bits)
  val badFrame = Bool()
  val oversize = Bool()
}

/** Splits incoming frames: every beat goes to the packet buffer, and the header window of
  * each frame goes to the parser once the frame's last beat is in.
  *
  * The stage chain has no back-pressure, so a frame is only admitted to the parser while the
  * PHV FIFO in front of the deparser has room for it: one credit per FIFO entry, taken when a
  * header record is issued and returned when the deparser pops the PHV. Without a credit the
  * last beat of a frame waits. Frames longer than `maxFrameBytes` are cut in the buffer (its
  * last buffered beat is marked last) and reported as oversize, so the buffer never has to
  * hold more than one maximum-size frame to make progress. */
class InputStage(cfg: MatchaConfig, credits: Int) extends Component {
  setDefinitionName("matcha_input_stage")
  val io = new Bundle {
    val frames = slave(Axis(cfg.dataBytes, cfg.inUserWidth))
    val buffer = master(Axis(cfg.dataBytes, 0))
    val records = master(Flow(HeaderRecord(cfg)))
    val creditReturn = in Bool()
  }
  val lanes = cfg.dataBytes
  val windowBeats = (cfg.headerBytes + lanes - 1) / lanes

  val creditCount = Reg(UInt(log2Up(credits + 1) bits)) init credits
  val beatIndex = Reg(UInt(log2Up(windowBeats + 1) bits)) init 0
  val byteCount = Reg(UInt(cfg.frameLenWidth bits)) init 0
  val discarding = Reg(Bool()) init False
  val ingressPort = Reg(Bits(cfg.portWidth bits))
  val window = Reg(Bits(cfg.headerBytes * 8 bits))

  val beat = io.frames.payload
  val isLast = beat.last
  val canFinish = !isLast || creditCount =/= 0
  io.buffer.valid := io.frames.valid && !discarding && canFinish
  io.frames.ready := canFinish && (discarding || io.buffer.ready)
  io.buffer.payload.last := isLast
  io.buffer.payload.fragment.data := beat.data
  io.buffer.payload.fragment.keep := beat.keep
  val fire = io.frames.fire

  val beatBytes = Axis.keepCount(beat.keep)
  val sum = byteCount.resize(cfg.frameLenWidth + 1) + beatBytes
  val frameLen = Hw.min(sum, U((1 << cfg.frameLenWidth) - 1)).resize(cfg.frameLenWidth)
  val overflowNow = sum > cfg.maxFrameBytes
  when(overflowNow && !discarding) { io.buffer.payload.last := True }

  val first = beatIndex === 0
  val portNow = first ? beat.user(1, cfg.portWidth bits) | ingressPort

  // The window as it is after this beat: lanes of beat k land at bytes k*lanes.., and the first
  // beat of a frame clears what the previous frame left.
  val windowNext = Bits(cfg.headerBytes * 8 bits)
  for (b <- 0 until cfg.headerBytes) {
    val k = b / lanes
    val lane = b % lanes
    val byte = windowNext(b * 8, 8 bits)
    byte := window(b * 8, 8 bits)
    when(beatIndex === k) {
      byte := beat.keep(lane) ? beat.lane(lane) | B(0, 8 bits)
    }.elsewhen(first) {
      byte := 0
    }
  }

  val issue = fire && isLast
  when(fire) {
    window := windowNext
    ingressPort := portNow
    byteCount := frameLen
    when(beatIndex =/= windowBeats) { beatIndex := beatIndex + 1 }
    when(overflowNow) { discarding := True }
    when(isLast) {
      beatIndex := 0
      byteCount := 0
      discarding := False
    }
  }
  creditCount := creditCount - U(issue) + U(io.creditReturn)

  val record = Flow(HeaderRecord(cfg))
  record.valid := RegNext(issue) init False
  record.payload.window := RegNextWhen(windowNext, issue)
  record.payload.frameLen := RegNextWhen(frameLen, issue)
  record.payload.ingressPort := RegNextWhen(portNow, issue)
  record.payload.badFrame := RegNextWhen(beat.user(0), issue)
  record.payload.oversize := RegNextWhen(overflowNow || discarding, issue)
  io.records << record
}
