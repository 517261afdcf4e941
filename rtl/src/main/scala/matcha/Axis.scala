// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._
import spinal.lib._

/** One AXI4-Stream beat (tlast is the Fragment's `last`). */
case class AxisBeat(dataBytes: Int, userWidth: Int) extends Bundle {
  val data = Bits(dataBytes * 8 bits)
  val keep = Bits(dataBytes bits)
  val user = Bits(userWidth bits)
  def lane(i: Int): Bits = data(i * 8, 8 bits)
}

object Axis {
  def apply(dataBytes: Int, userWidth: Int): Stream[Fragment[AxisBeat]] = Stream(Fragment(AxisBeat(dataBytes, userWidth)))

  /** Names a stream port the AXI4-Stream way (`<prefix>_tdata`, `_tkeep`, ...); a zero-width
    * tuser is left out of the port list. */
  def renameToSpec(s: Stream[Fragment[AxisBeat]], prefix: String): Unit = {
    Component.current.addPrePopTask { () =>
      s.valid.setName(s"${prefix}_tvalid")
      s.ready.setName(s"${prefix}_tready")
      s.payload.last.setName(s"${prefix}_tlast")
      s.payload.fragment.data.setName(s"${prefix}_tdata")
      s.payload.fragment.keep.setName(s"${prefix}_tkeep")
      s.payload.fragment.user.setName(s"${prefix}_tuser")
    }
  }

  /** Byte count of a contiguous-from-bit-0 tkeep. */
  def keepCount(keep: Bits): UInt = CountOne(keep)

  /** tkeep with the `count` low lanes set. */
  def keepMask(count: UInt, lanes: Int): Bits = Cat((0 until lanes).map(i => count > i))
}

/** The output tuser: {reason, egress port, punt}. */
case class OutUser(cfg: MatchaConfig) extends Bundle {
  val punt = Bool()
  val egressPort = Bits(cfg.portWidth bits)
  val reason = Bits(8 bits)
}
