// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._

/** A direct-index table: the key is the entry's index (docs/tables.md, "Direct"). For state
  * kept per small id, such as an overlay's per-ENI settings, where a hash would only cost
  * RAM and a clock. Keys from `size` up miss. */
case class DirectTableConfig(keyWidth: Int, dataWidth: Int, size: Int) {
  require(keyWidth >= 1 && keyWidth <= 20, "a direct table's key is 1 to 20 bits")
  require(size >= 2 && size <= (1 << keyWidth), s"2 to 2^$keyWidth entries")
  def indexWidth: Int = log2Up(size)
  /** Clocks from a key to its result: the RAM read, the output register. */
  def latency: Int = 2
}

case class DirectEntry(c: DirectTableConfig) extends Bundle {
  val valid = Bool()
  val actionId = Bits(8 bits)
  val data = Bits(c.dataWidth bits)
}

class DirectTable(c: DirectTableConfig) extends Area with MatchUnit {
  def entries: Int = c.size
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  /** As deep as the block RAM it becomes (2^indexWidth): the entries from `size` up are
    * never written, not even by CLEAR, and hold what the RAM powered up with, in simulation
    * (random initial contents) as in hardware; `read.inRange` keeps lookups from them. */
  val ram = Mem(DirectEntry(c), 1 << c.indexWidth)

  val read = new Area {
    val inRange = if (c.size == (1 << c.keyWidth)) True else lookup.payload.asUInt < c.size
    val entry = ram.readSync(lookup.payload.asUInt.resize(c.indexWidth))
    val index = RegNext(lookup.payload.asUInt.resize(c.indexWidth))
    val valid = RegNext(lookup.valid) init False
    val hit = RegNext(inRange)
  }
  val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
  out.valid := read.valid
  out.hit := read.hit && read.entry.valid
  out.actionId := read.entry.actionId
  out.actionData := read.entry.data
  out.entryIndex := read.index
  result << out.stage()

  /** The table's descriptor and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow =
    bus.addTable(name, TableKind.Direct, c.keyWidth, c.size, c.dataWidth, 0, c.latency, features = features)

  /** Connects the table to its window: WRITE/READ of the entry at INDEX (the key), CLEAR
    * walks every entry. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    val port = Reg(UInt(c.indexWidth bits)) init 0
    val clearing = Reg(Bool()) init False
    val readPending = RegInit(False)
    val entry = DirectEntry(c)
    entry.valid := cmd.entry.valid
    entry.actionId := cmd.entry.actionId
    entry.data := cmd.entry.data
    val empty = DirectEntry(c)
    empty.assignFromBits(B(0, empty.getBitsWidth bits))
    val reading = cmd.valid && cmd.op === TableOp.read
    val writing = cmd.valid && cmd.op === TableOp.write
    // The bus has the RAM's second port; lookups keep the first.
    val readData = ram.readWriteSync(
      address = clearing ? port | cmd.index.resize(c.indexWidth),
      data = clearing ? empty | entry,
      enable = clearing || reading || writing,
      write = clearing || writing)
    window.done := False
    window.readBack.valid := readPending
    window.readBack.payload.valid := readData.valid
    window.readBack.actionId := readData.actionId
    window.readBack.key := 0
    window.readBack.mask := 0
    window.readBack.priority := 0
    window.readBack.data := readData.data
    readPending := False
    when(cmd.valid) {
      switch(cmd.op) {
        is(TableOp.write) { window.done := True }
        is(TableOp.read) { readPending := True }
        is(TableOp.clear) { clearing := True; port := 0 }
      }
    }
    when(readPending) { window.done := True }
    when(clearing) {
      port := port + 1
      when(port === c.size - 1) { clearing := False; window.done := True }
    }
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit
  }.setCompositeName(this, "control")
}

/** A single direct table behind its control bus, the unit tested on its own. */
object DirectTableUnit {
  def apply(c: DirectTableConfig) = new MatchUnitTop("matcha_direct_table", c.keyWidth, c.dataWidth, c.indexWidth, new DirectTable(c))
}

/** Direct tables in a program: `size` entries, the key (at most 20 bits) their index. */
object DirectKind extends MatchKind(TableKind.Direct) {
  def config(t: TableSpec, keyWidth: Int) = DirectTableConfig(keyWidth, t.dataWidth, t.size)
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = new DirectTable(config(t, keyWidth))
}
