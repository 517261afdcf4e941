// SPDX-License-Identifier: Apache-2.0
package matcha.board

import matcha.{Axis, AxisBeat}
import spinal.core._
import spinal.lib._

/** Per-port events, one-cycle pulses in the clock domain of the MAC's user side. */
case class MacEvents() extends Bundle {
  val rxGood = Bool()
  val rxFcsError = Bool()
  val rxOverflow = Bool()
  val txFrame = Bool()
}

/** A gigabit RGMII MAC: DDR I/O, GMII framing, and an asynchronous FIFO (Gray-coded
  * pointers, StreamFifoCC) each way between the PHY's clocks and the clock of this
  * component (the user side).
  *
  * Receive: beats arrive at line rate with no back-pressure. When the receive FIFO is full
  * the rest of the frame is discarded and the frame, if part of it is already in the FIFO,
  * is ended with a one-byte beat marked bad, so the parser drops it (`rxOverflow`).
  * Transmit: the FIFO holds `txDepth` beats, at least one maximum-size frame; a frame is
  * sent only once its last beat is in, counted across the clock domains in Gray code. */
class RgmiiMac(txClockDomain: ClockDomain, rxDelayTaps: Int, rxDepth: Int = 512, txDepth: Int = 2048,
    maxFrameBytes: Int = 9216) extends Component {
  require(txDepth * 8 >= maxFrameBytes + 8, "the transmit FIFO must hold a maximum-size frame")
  val io = new Bundle {
    val pins = master(RgmiiPins())
    val txClock90 = in Bool()
    /** Received frames, tuser bit 0 = bad frame (on the last beat). */
    val rx = master(Axis(8, 1))
    val tx = slave(Axis(8, 0))
    val events = out(MacEvents())
  }
  val userDomain = ClockDomain.current

  val ddr = txClockDomain(new RgmiiDdrIo(rxDelayTaps))
  io.pins <> ddr.io.pins
  ddr.io.txClock90 := io.txClock90
  val rxDomain = ClockDomain(io.pins.rxc, ResetCtrl.asyncAssertSyncDeassert(userDomain.isResetActive,
    ClockDomain(io.pins.rxc)))

  val rxFifo = StreamFifoCC(Fragment(AxisBeat(8, 1)), rxDepth, rxDomain, userDomain)
  val rxArea = new ClockingArea(rxDomain) {
    val gmii = new GmiiRx
    gmii.io.gmii := ddr.io.rx
    /** Registered, so that the FCS check and the FIFO's write (its block RAM may be placed
      * far away) each get a clock of their own. */
    val beats = gmii.io.beats.stage()
    val push = rxFifo.io.push

    /** The frame in progress is being discarded. */
    val discarding = RegInit(False)
    /** Part of a discarded frame is in the FIFO and still needs its bad last beat. */
    val owesEnd = RegInit(False)
    val inFrame = RegInit(False)
    when(beats.valid) { inFrame := !beats.last }
    val first = !inFrame

    push.valid := False
    push.payload := beats.payload
    val overflow = CombInit(False)
    when(beats.valid) {
      val keep = (first && !owesEnd) || (!first && !discarding)
      when(keep && push.ready) {
        push.valid := True
        discarding := False
      } otherwise {
        discarding := !beats.last
        when(keep && !first) { owesEnd := True }
        when(keep || first) { overflow := True }
      }
    } elsewhen (owesEnd) {
      push.valid := True
      push.payload.last := True
      push.payload.fragment.keep := B(1, 8 bits)
      push.payload.fragment.user := B(1, 1 bits)
      when(push.ready) { owesEnd := False }
    }
  }
  io.rx << rxFifo.io.pop

  val txFifo = StreamFifoCC(Fragment(AxisBeat(8, 0)), txDepth, userDomain, txClockDomain)
  txFifo.io.push << io.tx
  /** Frames whose last beat is in the transmit FIFO, as a Gray code for the other domain. */
  val framesIn = Reg(UInt(12 bits)) init 0
  when(io.tx.fire && io.tx.last) { framesIn := framesIn + 1 }
  val framesInGray = RegNext(toGray(framesIn)) init 0

  val txArea = new ClockingArea(txClockDomain) {
    val gmii = new GmiiTx
    // Registered both ways: the transmitter takes a beat when its last byte goes out, and
    // that decision must not have to reach the FIFO's block RAM in the same clock.
    gmii.io.beats << txFifo.io.pop.s2mPipe().m2sPipe()
    /** Registered: the Gray decode is a chain of 12 XORs. */
    val framesAvailable = RegNext(fromGray(BufferCC(framesInGray, init = B(0, 12 bits)))) init 0
    val framesStarted = Reg(UInt(12 bits)) init 0
    when(gmii.io.frameStart) { framesStarted := framesStarted + 1 }
    gmii.io.frameReady := framesAvailable =/= framesStarted
    ddr.io.tx := gmii.io.gmii
  }

  io.events.rxGood := PulseCCByToggle(rxArea.gmii.io.goodFrame, rxDomain, userDomain)
  io.events.rxFcsError := PulseCCByToggle(rxArea.gmii.io.fcsError, rxDomain, userDomain)
  io.events.rxOverflow := PulseCCByToggle(rxArea.overflow, rxDomain, userDomain)
  io.events.txFrame := PulseCCByToggle(txArea.gmii.io.frameStart, txClockDomain, userDomain)
}
