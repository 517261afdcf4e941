// SPDX-License-Identifier: Apache-2.0
package matcha.corundum

import spinal.core._
import spinal.lib._

/** Store-and-forward buffer of one RX sync tap: it takes a beat in every clock (`input` has
  * no ready) and passes on only whole frames, so the pipeline's input arbiter can serve the
  * ports one frame at a time without ever holding a port's tap.
  *
  * Corundum cannot hold its MACs off (mqnic_port_rx.v: a 32-beat FIFO in front of the tap
  * that cuts a frame and marks it bad when full), so a frame that finds no room here is
  * dropped whole instead: every beat already written is given back, the rest of the frame
  * is ignored and `dropped` pulses once. A frame needs room for all its beats in `beats`
  * and one slot in the per-frame FIFO of first-beat tuser fields (`frameSlots`). */
class IngressBuffer(beat: TapBeat, beats: Int, frameSlots: Int) extends Area {
  require(isPow2(beats) && isPow2(frameSlots))
  /** Beats as Corundum's tap presents them (ready is always high). */
  val input = Flow(Fragment(beat))
  val output = Stream(Fragment(beat))
  val dropped = Bool()

  case class Stored() extends Bundle {
    val data = Bits(beat.dataBytes * 8 bits)
    val keep = Bits(beat.dataBytes bits)
    val last = Bool()
    val bad = Bool()
  }
  val ram = Mem(Stored(), beats)
  val ptrWidth = log2Up(beats) + 1
  /** Next beat to write (of the frame being written), end of the last whole frame, next
    * beat to read. */
  val writePtr, commitPtr, readPtr = Reg(UInt(ptrWidth bits)) init 0
  /** The rest of the current frame is being dropped. */
  val dropping = Reg(Bool()) init False
  val firstBeat = Reg(Bool()) init True
  /** tuser of each whole frame's first beat (Corundum's PTP timestamp), bad_frame aside. */
  val frameUser = StreamFifo(Bits(beat.userWidth - 1 bits), frameSlots)
  val heldUser = Reg(Bits(beat.userWidth - 1 bits))

  val full = writePtr - readPtr === beats
  val noFrameSlot = firstBeat && frameUser.io.availability === 0
  val overflow = input.valid && !dropping && (full || noFrameSlot)
  dropped := overflow
  frameUser.io.push.valid := False
  frameUser.io.push.payload := firstBeat ? input.fragment.user(1, beat.userWidth - 1 bits) | heldUser
  when(input.valid) {
    firstBeat := input.last
    when(dropping || overflow) {
      writePtr := commitPtr
      dropping := !input.last
    } otherwise {
      val stored = Stored()
      stored.data := input.fragment.data
      stored.keep := input.fragment.keep
      stored.last := input.last
      stored.bad := input.fragment.user(0)
      ram(writePtr.resize(log2Up(beats))) := stored
      writePtr := writePtr + 1
      when(firstBeat) { heldUser := input.fragment.user(1, beat.userWidth - 1 bits) }
      when(input.last) {
        commitPtr := writePtr + 1
        frameUser.io.push.valid := True
      }
    }
  }

  val readCmd = Stream(UInt(log2Up(beats) bits))
  readCmd.valid := readPtr =/= commitPtr
  readCmd.payload := readPtr.resized
  when(readCmd.fire) { readPtr := readPtr + 1 }
  val read = ram.streamReadSync(readCmd)
  val user = frameUser.io.pop
  output.valid := read.valid && user.valid
  read.ready := output.ready && user.valid
  output.last := read.last
  output.fragment.data := read.data
  output.fragment.keep := read.keep
  output.fragment.user := user.payload ## read.bad
  user.ready := output.fire && read.last
}
