// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._

/** A ternary table of `size` entries (a multiple of 4) matching `keyWidth`-bit keys. */
case class TernaryTableConfig(keyWidth: Int, dataWidth: Int, size: Int) {
  require(keyWidth >= 1 && keyWidth <= 512, "keys of 1 to 512 bits")
  require(dataWidth >= 1 && dataWidth <= 512, "action data of 1 to 512 bits")
  require(size >= 4 && size % 4 == 0, "entries come in groups of 4")
  def indexWidth: Int = log2Up(size)
  /** The key is cut into 4-bit chunks, the top one padded with zeros. */
  def chunks: Int = (keyWidth + 3) / 4
  def paddedWidth: Int = 4 * chunks
  /** Entries whose match bits share one write enable of the row memories (one
    * TRELLIS_DPR16X4 per group and chunk). */
  def groups: Int = size / 4
  /** The priority encoder: `blocks` blocks of `blockSize` entries, the first matching
    * entry of each block in one clock, the first block with a match in the next. */
  def blockSize: Int = 1 << ((log2Up(size) + 1) / 2)
  def blocks: Int = (size + blockSize - 1) / blockSize
  /** Clocks from a key to its result: key register, row read (and the AND of 4 rows),
    * AND of the rest with the valid vector, first match per block, first block, action
    * RAM read, output register. */
  def latency: Int = 7
  /** Clocks a WRITE takes, from the clock of the command to the one that sets the entry
    * valid again, both included: entry store write, 4 reads of the group's entries, the
    * last of them received, 16 row writes (the last one with the valid bit). */
  def writeClocks: Int = 1 + 4 + 1 + 16
}

/** What the entry store keeps of an entry: everything READ gives back, and the value and
  * mask the row memories are rebuilt from. */
case class TernaryEntry(c: TernaryTableConfig) extends Bundle {
  val valid = Bool()
  val actionId = Bits(8 bits)
  val priority = Bits(32 bits)
  val value = Bits(c.paddedWidth bits)
  val mask = Bits(c.paddedWidth bits)
  val data = Bits(c.dataWidth bits)
}

/** The lookup side's copy of an entry's action. */
case class TernaryAction(c: TernaryTableConfig) extends Bundle {
  val actionId = Bits(8 bits)
  val data = Bits(c.dataWidth bits)
}

/** Ternary match in LUT RAM (docs/tables.md, "Ternary (TCAM)").
  *
  * The key is cut into 4-bit chunks. Chunk k has a memory `rows(k)` of 16 rows of `size`
  * bits: bit e of row v is set when entry e accepts the value v in that chunk, that is
  * when (v & mask_e[k]) == value_e[k]. A lookup reads the row its key chunk selects from
  * every chunk memory at once (asynchronous reads, so the memories map to distributed
  * RAM), ANDs the rows and the entry valid vector, and the lowest set bit is the answer;
  * its action comes from a block RAM indexed by it. One key per clock, `c.latency` clocks;
  * a miss gives action id, action data and entryIndex 0.
  *
  * The row memories' write enables cover 4 entries (a group), so an update of one entry
  * rewrites the 16 rows of its group in every chunk, computed from the value and mask of
  * the group's 4 entries, which the entry store keeps. The rows of the other 3 entries are
  * rewritten with what they already hold.
  */
class TernaryTable(c: TernaryTableConfig) extends Area with MatchUnit {
  def entries: Int = c.size
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))

  val rows = Seq.fill(c.chunks)(Mem(Bits(c.size bits), 16))
  /** The entry store: written and read by the control window only. */
  val store = Mem(TernaryEntry(c), c.size)
  /** The lookup side's copy of each entry's action id and data. */
  val actions = Mem(TernaryAction(c), c.size)
  /** Entry valid bits, ANDed into every lookup in the clock its rows are read. */
  val live = Reg(Bits(c.size bits)) init 0

  def chunk(bits: Bits, k: Int): Bits = bits(4 * k, 4 bits)

  val keyed = new Area {
    val valid = RegNext(lookup.valid) init False
    val key = RegNext(lookup.payload.resize(c.paddedWidth))
  }
  val rowRead = new Area {
    val row = rows.zipWithIndex.map { case (m, k) => m.readAsync(chunk(keyed.key, k).asUInt, readUnderWrite = writeFirst) }
    val partial = row.grouped(4).map(g => RegNext(g.reduce(_ & _))).toSeq
    // Sampled in the clock the rows are read: a lookup sees an entry's rows and its valid
    // bit as they were in the same clock.
    val valid = RegNext(live)
    val lookupValid = RegNext(keyed.valid) init False
  }
  val matched = new Area {
    val hits = RegNext((rowRead.partial :+ rowRead.valid).reduceBalancedTree(_ & _))
    val lookupValid = RegNext(rowRead.lookupValid) init False
  }
  val blocks = new Area {
    val padded = matched.hits.resize(c.blocks * c.blockSize)
    val any = Reg(Bits(c.blocks bits))
    val first = Vec.fill(c.blocks)(Reg(UInt(log2Up(c.blockSize) bits)))
    for (b <- 0 until c.blocks) {
      val block = padded(b * c.blockSize, c.blockSize bits)
      any(b) := block.orR
      first(b) := OHToUInt(OHMasking.first(block))
    }
    val lookupValid = RegNext(matched.lookupValid) init False
  }
  val winner = new Area {
    val firstBlock = OHMasking.first(blocks.any)
    val hit = RegNext(blocks.any.orR)
    val index = RegNext((OHToUInt(firstBlock).resize(log2Up(c.blocks)) @@ MuxOH(firstBlock, blocks.first)).resize(c.indexWidth))
    val lookupValid = RegNext(blocks.lookupValid) init False
  }
  val answer = new Area {
    val action = actions.readSync(winner.index)
    val hit = RegNext(winner.hit)
    val index = RegNext(winner.index)
    val lookupValid = RegNext(winner.lookupValid) init False
  }
  val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
  out.valid := answer.lookupValid
  out.hit := answer.hit
  out.actionId := answer.hit ? answer.action.actionId | B(0, 8 bits)
  out.actionData := answer.hit ? answer.action.data | B(0, c.dataWidth bits)
  out.entryIndex := answer.hit ? answer.index | U(0, c.indexWidth bits)
  result << out.stage()

  /** Connects the table to its control window.
    *
    * WRITE (c.writeClocks clocks): in the command's clock the staged entry goes into the
    * entry store and the entry's valid bit is cleared; the next 4 clocks read the group's
    * 4 entries back, one clock later their value and mask are held; then 16 clocks write
    * row 0 to 15 of the group in every chunk memory, and the clock of the last row write
    * sets the valid bit from the staged entry and writes the lookup side's action copy.
    * A lookup reads its rows and the valid vector in the same clock, so it sees the entry
    * as before the WRITE, not at all, or as after it. A lookup that matched the old entry
    * reads its action 4 clocks after its rows, long before the action copy changes.
    *
    * READ reads the entry store. CLEAR clears the valid vector in its first clock, then
    * zeroes the entry store, one entry per clock; the row memories keep what they held,
    * which no lookup sees until a WRITE has rebuilt them. */
  /** The table's descriptor (kind 3) and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow =
    bus.addTable(name, TableKind.Ternary, c.keyWidth, c.size, c.dataWidth, 0, c.latency, features = features)

  def attach(window: TableWindow): Unit = new Area {
    require(c.writeClocks - 1 > 4, "a lookup that matched the old entry must read its action before the copy changes")
    val cmd = window.commands
    val index = cmd.index.resize(c.indexWidth)
    val reading = cmd.valid && cmd.op === TableOp.read
    val writing = cmd.valid && cmd.op === TableOp.write
    val staged = TernaryEntry(c)
    staged.valid := cmd.entry.valid
    staged.actionId := cmd.entry.actionId
    staged.priority := cmd.entry.priority
    staged.value := cmd.entry.key.resize(c.paddedWidth)
    staged.mask := cmd.entry.mask.resize(c.paddedWidth)
    staged.data := cmd.entry.data

    val clearing = RegInit(False)
    val clearPort = Reg(UInt(c.indexWidth bits)) init 0
    val updating = RegInit(False)
    val step = Reg(UInt(5 bits)) init 0
    val target = Reg(UInt(c.indexWidth bits)) init 0
    val targetValid = Reg(Bool()) init False
    val group = target >> 2
    val fetching = updating && step < 4

    val storeAddress = UInt(c.indexWidth bits)
    storeAddress := index
    when(clearing) { storeAddress := clearPort } elsewhen (fetching) { storeAddress := group @@ step(1 downto 0) }
    val storeRead = store.readWriteSync(
      address = storeAddress,
      data = clearing ? TernaryEntry(c).getZero | staged,
      enable = clearing || fetching || reading || writing,
      write = clearing || writing
    )

    // The group's 4 entries as the store gives them back, one per clock.
    val capturing = RegNext(fetching) init False
    val captureSlot = RegNext(step(1 downto 0))
    val groupValue = Vec.fill(4)(Reg(Bits(c.paddedWidth bits)))
    val groupMask = Vec.fill(4)(Reg(Bits(c.paddedWidth bits)))
    val action = Reg(TernaryAction(c))
    when(capturing) {
      groupValue(captureSlot) := storeRead.value
      groupMask(captureSlot) := storeRead.mask
      when(captureSlot === target(1 downto 0)) {
        action.actionId := storeRead.actionId
        action.data := storeRead.data
      }
    }

    // Rows 0..15 of the group in every chunk memory.
    val rebuilding = updating && step >= 5
    val row = (step - 5).resize(4)
    val groupSelect = UIntToOh(group, c.groups)
    // accepts(k)(j): entry j of the group accepts `row` in chunk k.
    val accepts = rows.indices.map(k =>
      Vec((0 until 4).map(j => (row.asBits & chunk(groupMask(j), k)) === chunk(groupValue(j), k))).asBits)
    for ((m, k) <- rows.zipWithIndex)
      m.write(row, Cat(Seq.fill(c.groups)(accepts(k))), enable = rebuilding, mask = groupSelect)
    val finishing = updating && step === c.writeClocks - 2
    actions.write(target, action, enable = finishing)

    window.done := False
    when(updating) {
      step := step + 1
      when(finishing) {
        live(target) := targetValid
        updating := False
        window.done := True
      }
    }
    when(writing) {
      live(index) := False
      updating := True
      step := 0
      target := index
      targetValid := cmd.entry.valid
    }
    when(cmd.valid && cmd.op === TableOp.clear) {
      live := 0
      clearing := True
      clearPort := 0
    }
    when(clearing) {
      clearPort := clearPort + 1
      when(clearPort === c.size - 1) { clearing := False; window.done := True }
    }

    val readPending = RegNext(reading) init False
    when(readPending) { window.done := True }
    window.readBack.valid := readPending
    window.readBack.payload.valid := storeRead.valid
    window.readBack.actionId := storeRead.actionId
    window.readBack.priority := storeRead.priority
    window.readBack.key := storeRead.value.resize(c.keyWidth)
    window.readBack.mask := storeRead.mask.resize(c.keyWidth)
    window.readBack.data := storeRead.data
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit
  }.setCompositeName(this, "control")
}

/** A single ternary table behind its control bus, the unit tested on its own. */
object TernaryTableUnit {
  def apply(c: TernaryTableConfig, name: String = "matcha_ternary_table") =
    new MatchUnitTop(name, c.keyWidth, c.dataWidth, c.indexWidth, new TernaryTable(c))
}

/** Ternary tables in a program: `size` entries, the lowest matching index wins. */
object TernaryKind extends MatchKind(TableKind.Ternary) {
  def config(t: TableSpec, keyWidth: Int) = TernaryTableConfig(keyWidth, t.dataWidth, t.size)
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = new TernaryTable(config(t, keyWidth))
}
