// SPDX-License-Identifier: Apache-2.0
package matcha.corundum

import matcha.Axis
import spinal.core._
import spinal.lib._

/** matcha-sim's CPU port header (sim/README.md, "The CPU port"), which the block puts in
  * front of punted frames and takes off packet-outs when CONTROL_CPU_PORT is set, so that
  * matcha-p4rt reads and writes the card's netdev as it does the simulator's CPU interface:
  * destination MAC, source MAC, EtherType 0x88B5, then type, ingress port, egress port and
  * reason, a byte each. Byte `i` of a header is lane `i` of a beat (bits `8i+7..8i`). */
object CpuHeader {
  val Bytes = 18
  val EtherType = 0x88b5
  val PacketIn = 1
  /** A packet-out to enter the pipeline. */
  val PacketOut = 2
  /** A packet-out to leave by its egress port as it is. */
  val ToEgress = 3
  val EtherTypeOffset = 12
  val TypeOffset = 14
  val IngressOffset = 15
  val EgressOffset = 16
  /** A packet-in's destination and source: broadcast, so that any reader takes it, and the
    * simulator's locally administered source. */
  val InDst = BigInt("ffffffffffff", 16)
  val InSrc = BigInt("020000000000", 16)

  /** The header of a packet-in, as lanes. */
  def packetIn(ingress: UInt, egress: Bits, reason: Bits): Bits = {
    def bytesOf(v: BigInt, n: Int): Seq[Bits] = (0 until n).map(i => B((v >> (8 * (n - 1 - i))) & 0xff, 8 bits))
    val bytes = bytesOf(InDst, 6) ++ bytesOf(InSrc, 6) ++ bytesOf(EtherType, 2) ++
      Seq(B(PacketIn, 8 bits), ingress.asBits.resize(8), egress.resize(8), reason.resize(8))
    Cat(bytes)
  }
}

/** The beat a frame shifter takes and gives: lanes, `keep` contiguous from lane 0 and full
  * on every beat but the last, and `side`, per frame: what the first beat carries is on
  * every beat that leaves. */
case class ShiftBeat[T <: Data](dataBytes: Int, sideType: HardType[T]) extends Bundle {
  val data = Bits(dataBytes * 8 bits)
  val keep = Bits(dataBytes bits)
  val side = sideType()
}

/** A beat into HeaderInsert: `insert` and `header` count on a frame's first beat. */
case class InsertBeat[T <: Data](lanes: Int, headerBytes: Int, sideType: HardType[T]) extends Bundle {
  val beat = ShiftBeat(lanes, sideType)
  val insert = Bool()
  val header = Bits(headerBytes * 8 bits)
}

/** Puts `headerBytes` bytes in front of the frames whose first beat has `insert` set (the
  * others pass unchanged, with no clock added): whole header beats first, then every
  * input beat shifted up by `headerBytes % lanes` lanes, the lanes pushed out carried to
  * the next output beat. A frame whose last beat does not fit after the shift takes one
  * beat more; otherwise one beat in gives one beat out, frames back to back. `header` and
  * `insert` are read from a frame's first beat while it waits, so the header is not stored. */
class HeaderInsert[T <: Data](lanes: Int, headerBytes: Int, sideType: HardType[T]) extends Area {
  /** Header lanes that do not fill a beat: what each beat carries over. Corundum's widths
    * (8 and 64 lanes) and the 18-byte header always leave some. */
  val carried = headerBytes % lanes
  require(carried != 0, "built for a header that ends inside a beat")
  val wholeBeats = headerBytes / lanes

  val input = Stream(Fragment(InsertBeat(lanes, headerBytes, sideType)))
  val output = Stream(Fragment(ShiftBeat(lanes, sideType)))

  val inFrame = Reg(Bool()) init False
  val inserting = Reg(Bool()) init False
  val headerBeat = Reg(UInt(log2Up(wholeBeats + 1) max 1 bits)) init 0
  val carry = Reg(Bits(carried * 8 bits))
  val flush = Reg(Bool()) init False
  val flushKeep = Reg(Bits(lanes bits))
  val side = Reg(sideType())

  val first = !inFrame
  val in = input.fragment.beat
  val insertNow = first ? input.fragment.insert | inserting
  val headerPhase = if (wholeBeats == 0) False else insertNow && first && headerBeat < wholeBeats
  val carryNow = first ? input.fragment.header(wholeBeats * lanes * 8, carried * 8 bits) | carry
  val count = Axis.keepCount(in.keep)
  /** The last beat's bytes do not all fit after the carried ones: one beat more. */
  val spill = input.last && count > lanes - carried

  output.fragment.side := first ? in.side | side
  output.valid := input.valid
  output.fragment.data := in.data
  output.fragment.keep := in.keep
  output.last := input.last
  input.ready := output.ready
  when(flush) {
    output.valid := True
    output.fragment.data := carry.resize(lanes * 8)
    output.fragment.keep := flushKeep
    output.last := True
    output.fragment.side := side
    input.ready := False
    when(output.fire) { flush := False }
  } elsewhen (headerPhase) {
    if (wholeBeats > 0) {
      val headerBeats = (0 until wholeBeats).map(i => input.fragment.header(i * lanes * 8, lanes * 8 bits))
      output.fragment.data := (if (wholeBeats == 1) headerBeats.head else Vec(headerBeats)(headerBeat.resize(log2Up(wholeBeats))))
    }
    output.fragment.keep.setAll()
    output.last := False
    input.ready := False
    when(output.fire) { headerBeat := headerBeat + 1 }
  } elsewhen (insertNow) {
    output.fragment.data := in.data((lanes - carried) * 8 - 1 downto 0) ## carryNow
    output.fragment.keep := (input.last && !spill) ? Axis.keepMask(count + carried, lanes) | B(lanes bits, default -> True)
    output.last := input.last && !spill
    when(input.fire) {
      carry := in.data(lanes * 8 - 1 downto (lanes - carried) * 8)
      when(spill) {
        flush := True
        flushKeep := Axis.keepMask(count - (lanes - carried), lanes)
      }
    }
  }
  when(input.fire) {
    when(first) {
      inserting := input.fragment.insert
      side := in.side
    }
    inFrame := !input.last
    when(input.last) { headerBeat := 0 }
  }
}

/** Holds each frame's first beats until its first `headerBytes` bytes are in, and gives them
  * (`head`, lanes beyond the frame's end zero) with every beat of the frame, so that what
  * becomes of a frame can be decided from its header before its first beat leaves.
  * `longer`: the frame has bytes beyond `headerBytes`. `inputSide`, read with a frame's
  * first beat, comes out as `side` with all of it. Frames keep their beats and order; once a
  * frame's header is in, its beats leave one per clock, and the next frame's header beats
  * come in meanwhile. Every beat but a frame's last must be full. */
class FrameHead[T <: Data](beat: TapBeat, headerBytes: Int, sideType: HardType[T]) extends Area {
  val lanes = beat.dataBytes
  /** Beats that hold the header, and the header's bytes in the last of them. */
  val headBeats = (headerBytes + lanes - 1) / lanes
  val inLastHeadBeat = headerBytes - (headBeats - 1) * lanes

  val input = Stream(Fragment(beat))
  val output = Stream(Fragment(beat))
  val inputSide = sideType()
  val head = Bits(headerBytes * 8 bits)
  val longer = Bool()
  val side = sideType()

  case class Head() extends Bundle {
    val bytes = Bits(headerBytes * 8 bits)
    val longer = Bool()
    val side = sideType()
  }
  /** Room for a frame's header beats and one more, so the next frame's header comes in
    * while the last beat of the one before leaves. */
  val beats = StreamFifo(Fragment(beat), headBeats + 1)
  val heads = StreamFifo(Head(), headBeats + 1)

  val index = Reg(UInt(log2Up(headBeats + 1) bits)) init 0
  val captured = Seq.fill(headBeats - 1)(Reg(Bits(lanes * 8 bits)))
  val firstSide = Reg(sideType())
  val masked = Cat((0 until lanes).map(i => input.fragment.keep(i) ? input.fragment.data(i * 8, 8 bits) | B(0, 8 bits)))
  val headNow = Cat((0 until headBeats).map { i =>
    val fromInput = (index === i) ? masked | B(0, lanes * 8 bits)
    if (i < headBeats - 1) (index > i) ? captured(i) | fromInput else fromInput
  }).resize(headerBytes * 8)
  /** This beat completes the frame's header (or ends a frame shorter than one). */
  val completes = index < headBeats && (index === headBeats - 1 || input.last)

  heads.io.push.valid := input.fire && completes
  heads.io.push.bytes := headNow
  heads.io.push.longer := !input.last || (index === headBeats - 1 && Axis.keepCount(input.fragment.keep) > inLastHeadBeat)
  heads.io.push.side := (index === 0) ? inputSide | firstSide
  beats.io.push.valid := input.valid && (!completes || heads.io.push.ready)
  beats.io.push.payload := input.payload
  input.ready := beats.io.push.ready && (!completes || heads.io.push.ready)
  when(input.fire) {
    for (i <- 0 until headBeats - 1) when(index === i) { captured(i) := masked }
    when(index === 0) { firstSide := inputSide }
    when(index < headBeats) { index := index + 1 }
    when(input.last) { index := 0 }
  }

  output << beats.io.pop.continueWhen(heads.io.pop.valid)
  head := heads.io.pop.bytes
  longer := heads.io.pop.longer
  side := heads.io.pop.side
  heads.io.pop.ready := output.fire && output.last
}

/** A beat into HeaderStrip: `strip` and `side` count on a frame's first beat. */
case class StripBeat[T <: Data](tap: TapBeat, sideType: HardType[T]) extends Bundle {
  val beat = TapBeat(tap.dataBytes, tap.userWidth)
  val strip = Bool()
  val side = sideType()
}

case class StrippedBeat[T <: Data](tap: TapBeat, sideType: HardType[T]) extends Bundle {
  val beat = TapBeat(tap.dataBytes, tap.userWidth)
  val side = sideType()
}

/** Takes `headerBytes` bytes off the front of the frames whose first beat has `strip` set
  * (the others pass unchanged, with no clock added): the beats that hold only header are
  * taken and give nothing; the rest of the beat that ends the header is kept, and every
  * later beat gives an output beat of the kept lanes and its own first ones. One beat in
  * gives one beat out, but for the beats of the header and one more at the end when the
  * last beat's bytes do not fit after the kept ones. Per-beat `user` follows the bytes
  * (bad_frame stays on the last output beat); `side` is the first beat's, as `strip`. Every
  * beat but a frame's last must be full, and a stripped frame longer than the header. */
class HeaderStrip[T <: Data](beat: TapBeat, headerBytes: Int, sideType: HardType[T]) extends Area {
  val lanes = beat.dataBytes
  val headBeats = (headerBytes + lanes - 1) / lanes
  /** Header bytes in the last beat that holds any; the lanes after them are kept. */
  val inLastHeadBeat = headerBytes - (headBeats - 1) * lanes
  val keptLanes = lanes - inLastHeadBeat

  val input = Stream(Fragment(StripBeat(beat, sideType)))
  val output = Stream(Fragment(StrippedBeat(beat, sideType)))

  val inFrame = Reg(Bool()) init False
  val stripping = Reg(Bool()) init False
  val index = Reg(UInt(log2Up(headBeats + 1) bits)) init 0
  val kept = Reg(Bits(keptLanes * 8 bits))
  val keptUser = Reg(Bits(beat.user.getWidth bits))
  val flush = Reg(Bool()) init False
  val flushKeep = Reg(Bits(lanes bits))
  val side = Reg(sideType())

  val first = !inFrame
  val in = input.fragment.beat
  val stripNow = first ? input.fragment.strip | stripping
  val count = Axis.keepCount(in.keep)
  val inHeader = index < headBeats - 1
  val endsHeader = index === headBeats - 1
  val spill = input.last && count > inLastHeadBeat

  output.fragment.side := first ? input.fragment.side | side
  output.valid := input.valid
  output.fragment.beat := in
  output.last := input.last
  input.ready := output.ready
  when(flush) {
    output.valid := True
    output.fragment.beat.data := kept.resize(lanes * 8)
    output.fragment.beat.keep := flushKeep
    output.fragment.beat.user := keptUser
    output.last := True
    output.fragment.side := side
    input.ready := False
    when(output.fire) { flush := False }
  } elsewhen (stripNow && (inHeader || endsHeader && !input.last)) {
    output.valid := False
    input.ready := True
  } elsewhen (stripNow && endsHeader) {
    // The frame ends in the beat that ends its header.
    output.fragment.beat.data := (in.data >> (inLastHeadBeat * 8)).resize(lanes * 8)
    output.fragment.beat.keep := Axis.keepMask(count - inLastHeadBeat, lanes)
  } elsewhen (stripNow) {
    output.fragment.beat.data := in.data(inLastHeadBeat * 8 - 1 downto 0) ## kept
    output.fragment.beat.keep := (input.last && !spill) ? Axis.keepMask(count + keptLanes, lanes) | B(lanes bits, default -> True)
    output.last := input.last && !spill
    when(input.fire && spill) {
      flush := True
      flushKeep := Axis.keepMask(count - inLastHeadBeat, lanes)
    }
  }
  when(input.fire) {
    kept := in.data(lanes * 8 - 1 downto inLastHeadBeat * 8)
    keptUser := in.user
    when(first) {
      stripping := input.fragment.strip
      side := input.fragment.side
    }
    when(index < headBeats) { index := index + 1 }
    inFrame := !input.last
    when(input.last) { index := 0 }
  }
}
