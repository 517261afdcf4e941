// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** A memory-backed table's port (`wide`: a bucket or node a beat) on a memory whose beats
  * are narrower, as an HBM pseudo-channel's 256 bits are against a 64-byte bucket: each
  * access of one wide beat becomes a burst of `ratio` narrow beats at the same address, the
  * lowest bytes first, and its answer one wide beat again (docs/tables.md, "Memories
  * narrower than a bucket").
  *
  * The tables make incrementing bursts of whole beats (MemoryReadPath.singleBeat, or a
  * bucket of several beats through a narrower of their own), so a burst of n wide beats
  * becomes one of n × `ratio` narrow beats, each wide beat's slices in order; n is at most
  * 256 / `ratio`. A wide beat's narrow beats are gathered in one register: the memory may answer bursts of different ids in any order, but returns
  * the beats of one burst together, as the memory controllers Corundum's boards use do (no
  * read data interleaving). SpinalHDL's Axi4Downsizer splits a beat as well, but gathers the
  * answers in the order of the reads, which a memory that answers another id first breaks;
  * the tables read under several ids. */
class MemoryPortNarrower(wideConfig: Axi4Config, narrowDataWidth: Int,
    definitionName: String = "matcha_memory_narrower") extends Component {
  require(wideConfig.dataWidth % narrowDataWidth == 0 && isPow2(wideConfig.dataWidth / narrowDataWidth) &&
    wideConfig.dataWidth > narrowDataWidth, "the wide beat: a power of two of narrow beats, more than one")
  val ratio: Int = wideConfig.dataWidth / narrowDataWidth
  val narrowConfig: Axi4Config = wideConfig.copy(dataWidth = narrowDataWidth)
  val io = new Bundle {
    /** The table's side. */
    val s_axi = slave(Axi4(wideConfig))
    /** The memory's side. */
    val m_axi = master(Axi4(narrowConfig))
  }
  noIoPrefix()
  Axi4SpecRenamer(io.s_axi)
  Axi4SpecRenamer(io.m_axi)
  setDefinitionName(definitionName)
  private def wide = io.s_axi
  private def narrow = io.m_axi
  val narrowBytes = narrowDataWidth / 8

  /** A burst of wide beats as one of `ratio` times as many narrow beats. */
  private def burst[T <: Axi4Ax](from: Stream[T], to: Stream[T]): Unit = {
    to.arbitrationFrom(from)
    to.payload := from.payload
    to.len.allowOverride := (from.len << log2Up(ratio)).resize(8 bits) | (ratio - 1)
    to.size.allowOverride := log2Up(narrowBytes)
  }
  burst(wide.ar, narrow.ar)
  burst(wide.aw, narrow.aw)

  /** Writes: each wide beat's slices in order, its strobes with them; the burst's last
    * narrow beat is the last wide beat's last slice. */
  val write = new Area {
    val slice = Reg(UInt(log2Up(ratio) bits)) init 0
    val last = slice === ratio - 1
    narrow.w.valid := wide.w.valid
    narrow.w.data := wide.w.data.subdivideIn(ratio slices)(slice)
    narrow.w.strb := wide.w.strb.subdivideIn(ratio slices)(slice)
    narrow.w.last := last && wide.w.last
    wide.w.ready := narrow.w.ready && last
    when(narrow.w.fire) { slice := slice + 1 }
    wide.b << narrow.b
  }

  /** Reads: each wide beat's narrow beats gathered; it leaves with its last, SLVERR or
    * DECERR if any of them had one, the burst's last with the narrow burst's last. */
  val read = new Area {
    val slice = Reg(UInt(log2Up(ratio) bits)) init 0
    val last = slice === ratio - 1
    /** The wide beat's narrow beats but the last (the last leaves as it comes). */
    val gathered = Vec.fill(ratio)(Reg(Bits(narrowDataWidth bits)))
    val error = Reg(Bits(2 bits)) init Axi4.resp.OKAY
    narrow.r.ready := !last || wide.r.ready
    wide.r.valid := narrow.r.valid && last
    wide.r.data := narrow.r.data ## gathered.take(ratio - 1).reverse.reduce(_ ## _)
    wide.r.id := narrow.r.id
    wide.r.resp := (error =/= Axi4.resp.OKAY) ? error | narrow.r.resp
    wide.r.last := narrow.r.last
    when(narrow.r.fire) {
      slice := slice + 1
      when(!last) {
        gathered(slice) := narrow.r.data
        when(narrow.r.resp =/= Axi4.resp.OKAY) { error := narrow.r.resp }
      } otherwise {
        error := Axi4.resp.OKAY
      }
    }
  }
}

object MemoryPortNarrower {
  /** The memory port of a table whose bus `table` carries a bucket a beat, on a memory
    * whose beats are `beats` times narrower: `table` itself for one beat, else the narrow
    * side of a MemoryPortNarrower between them. */
  def port(table: Axi4, beats: Int): Axi4 =
    if (beats == 1) table
    else {
      val narrower = new MemoryPortNarrower(table.config, table.config.dataWidth / beats)
      narrower.io.s_axi << table
      narrower.io.m_axi
    }
}
