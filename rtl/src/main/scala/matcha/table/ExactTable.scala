// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.misc.BusSlaveFactory

case class ExactTableConfig(keyWidth: Int, dataWidth: Int, size: Int, ways: Int = 4) {
  require(ways >= 2 && ways <= 4, "2 to 4 ways")
  require(isPow2(size / ways) && size % ways == 0 && size / ways <= 65536, "slots per way: a power of two, at most 65536")
  def slots: Int = size / ways
  def indexWidth: Int = log2Up(size)
  /** Clocks from a key to its result. */
  def latency: Int = 3
}

case class ExactEntry(c: ExactTableConfig) extends Bundle {
  val valid = Bool()
  val key = Bits(c.keyWidth bits)
  val actionId = Bits(8 bits)
  val data = Bits(c.dataWidth bits)
}

/** Exact match: a cuckoo hash table of `ways` block RAMs read in parallel (docs/tables.md).
  * Clock 0 hashes the key, clock 1 reads every way, clock 2 compares and picks the first
  * way that holds the key. The driver places entries; the table only writes where told. */
class ExactTable(c: ExactTableConfig) extends Area with MatchUnit {
  def entries: Int = c.size
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  val ways = Seq.fill(c.ways)(Mem(ExactEntry(c), c.slots))
  val slotBits = log2Up(c.slots)

  val hashed = new Area {
    val crc = Crc64.hardware(lookup.payload, 0 until 16 * c.ways)
    val slots = (0 until c.ways).map(w => RegNext(crc(16 * w, slotBits bits).asUInt))
    val key = RegNext(lookup.payload)
    val valid = RegNext(lookup.valid) init False
  }
  val read = new Area {
    val entries = ways.zip(hashed.slots).map { case (m, s) => m.readSync(s) }
    val key = RegNext(hashed.key)
    val slots = hashed.slots.map(RegNext(_))
    val valid = RegNext(hashed.valid) init False
  }
  val matched = new Area {
    val hits = read.entries.map(e => e.valid && e.key === read.key)
    val first = OHMasking.first(Cat(hits))
    val entry = MuxOH(first, read.entries)
    val slot = MuxOH(first, read.slots)
    val way = OHToUInt(first)
    val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
    out.valid := read.valid
    out.hit := hits.reduce(_ || _)
    out.actionId := entry.actionId
    out.actionData := entry.data
    out.entryIndex := (way @@ slot).resized
  }
  result << matched.out.stage()

  /** The table's descriptor (kind 1) and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow =
    bus.addTable(name, TableKind.Exact, c.keyWidth, c.size, c.dataWidth, c.ways, c.latency, features = features)

  def attach(window: TableWindow): Unit = {
    val ctl = control(window.commands, window.commands.index)
    window.done := ctl.done
    window.readBack := ctl.readBack
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit
  }

  /** The table's side of a control window's commands `cmd`: WRITE/READ at `index` (way *
    * slots + slot), CLEAR walks every slot of every way; `done` pulses when one has
    * finished, `readBack` gives a READ's entry. A memory-backed exact table drives its
    * stash with the commands of its own window that address it (MemExactTable). */
  def control(cmd: Flow[TableCommand], index: UInt): TableControl = new TableControl(cmd.payload.keyWidth, cmd.payload.dataWidth) {
    val port = Reg(UInt(slotBits bits)) init 0
    val clearing = Reg(Bool()) init False
    val readPending = RegInit(False)
    val readWay = Reg(UInt(log2Up(c.ways) bits))
    val way = index(slotBits, log2Up(c.ways) bits)
    val slot = index(0, slotBits bits)
    val entry = ExactEntry(c)
    entry.valid := cmd.entry.valid
    entry.key := cmd.entry.key
    entry.actionId := cmd.entry.actionId
    entry.data := cmd.entry.data.resized
    val empty = ExactEntry(c)
    empty.assignFromBits(B(0, empty.getBitsWidth bits))

    val reading = cmd.valid && cmd.op === TableOp.read
    val writing = cmd.valid && cmd.op === TableOp.write
    // One read/write port per way for the bus, the other port for lookups: a true dual-port RAM.
    val readData = ways.zipWithIndex.map { case (m, w) =>
      m.readWriteSync(
        address = clearing ? port | slot,
        data = clearing ? empty | entry,
        enable = clearing || ((reading || writing) && way === w),
        write = clearing || writing
      )
    }
    done := False
    readBack.valid := readPending
    val chosen = Vec(readData)(readWay)
    readBack.payload.valid := chosen.valid
    readBack.actionId := chosen.actionId
    readBack.key := chosen.key
    readBack.mask := 0
    readBack.priority := 0
    readBack.data := chosen.data.resized
    readPending := False
    when(cmd.valid) {
      switch(cmd.op) {
        is(TableOp.write) { done := True }
        is(TableOp.read) { readPending := True; readWay := way }
        is(TableOp.clear) { clearing := True; port := 0 }
      }
    }
    when(readPending) { done := True }
    when(clearing) {
      port := port + 1
      when(port === c.slots - 1) { clearing := False; done := True }
    }
  }
}

/** What a table's side of its window commands answers: `done` when a command has finished,
  * `readBack` a READ's entry. */
class TableControl(keyWidth: Int, dataWidth: Int) extends Area {
  val done = Bool()
  val readBack = Flow(StagedEntry(keyWidth, dataWidth))
}

/** Exact tables in a program: `size` entries in `ways` ways (TableSpec.ways). */
object ExactKind extends MatchKind(TableKind.Exact) {
  def config(t: TableSpec, keyWidth: Int) = ExactTableConfig(keyWidth, t.dataWidth, t.size, t.ways)
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = new ExactTable(config(t, keyWidth))
  override def json(t: TableSpec): Seq[(String, ujson.Value)] = Seq("ways" -> ujson.Num(t.ways))
}
