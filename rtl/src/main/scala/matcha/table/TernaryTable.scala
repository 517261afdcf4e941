// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._

/** A range field of a ternary key: `width` bits from bit `offset` (docs/tables.md, "Range
  * fields"). */
case class RangeField(offset: Int, width: Int) {
  require(offset >= 0 && width >= 1 && width <= 32, "range fields of 1 to 32 bits")
  def bits: Range = offset until offset + width
}

/** A ternary table of `size` entries (a multiple of 4) matching `keyWidth`-bit keys, with
  * `ranges` matched lo <= x <= hi through `rangeSlots` boundary slots each. */
case class TernaryTableConfig(keyWidth: Int, dataWidth: Int, size: Int, ranges: Seq[RangeField] = Nil, rangeSlots: Int = 64) {
  require(keyWidth >= 1 && keyWidth <= 512, "keys of 1 to 512 bits")
  require(dataWidth >= 1 && dataWidth <= 512, "action data of 1 to 512 bits")
  require(size >= 4 && size % 4 == 0, "entries come in groups of 4")
  require(ranges.forall(_.bits.last < keyWidth), "range fields inside the key")
  require(ranges == ranges.sortBy(_.offset), "range fields numbered from the least significant (RANGE_FIELD_SHIFT)")
  require(ranges.flatMap(_.bits).distinct.size == ranges.map(_.width).sum, "range fields do not overlap")
  require(rangeSlots >= 2 && isPow2(rangeSlots) && rangeSlots <= 256, "2 to 256 boundary slots, a power of 2")
  def indexWidth: Int = log2Up(size)
  /** The key is cut into 4-bit chunks, the top one padded with zeros. */
  def chunks: Int = (keyWidth + 3) / 4
  def paddedWidth: Int = 4 * chunks
  /** Key bits the chunk memories compare: all but the range fields'. */
  def ternaryBits: BigInt = ((BigInt(1) << paddedWidth) - 1) ^ ranges.flatMap(_.bits).map(BigInt(1) << _).foldLeft(BigInt(0))(_ | _)
  /** The chunks that have a memory: those with a bit outside the range fields. */
  def matchedChunks: Seq[Int] = (0 until chunks).filter(k => ((ternaryBits >> (4 * k)) & 0xf) != 0)
  /** Interval ids of a range field: one per boundary slot at most. */
  def rangeIds: Int = rangeSlots
  def idWidth: Int = log2Up(rangeIds)
  /** Entries whose match bits share one write enable of the row memories (one
    * TRELLIS_DPR16X4 per group and chunk). */
  def groups: Int = size / 4
  /** The priority encoder: `blocks` blocks of `blockSize` entries, the first matching
    * entry of each block in one clock, the first block with a match in the next. */
  def blockSize: Int = 1 << ((log2Up(size) + 1) / 2)
  def blocks: Int = (size + blockSize - 1) / blockSize
  /** Clocks the range classifier adds before the rows are read: the slot comparisons, the
    * pick of the last slot at or below the key. */
  def rangeClocks: Int = if (ranges.isEmpty) 0 else TernaryTableConfig.RangeClocks
  /** Clocks from a key to its result: key register, (range classifier), row read (and the
    * AND of 4 rows), AND of the rest with the valid vector, first match per block, first
    * block, action RAM read, output register. */
  def latency: Int = 7 + rangeClocks
  /** Rows the entry-write engine rewrites per group: the 16 of the chunk memories and,
    * beside them, the interval rows of the range fields. */
  def rowsPerWrite: Int = if (ranges.isEmpty) 16 else 16 max rangeIds
  /** Clocks a WRITE takes, from the clock of the command to the one that sets the entry
    * valid again, both included: entry store write, 4 reads of the group's entries, the
    * last of them received, the row writes (the last one with the valid bit). */
  def writeClocks: Int = 1 + 4 + 1 + rowsPerWrite
  /** Clocks a RANGE_REBUILD takes: a store read per entry, the last one received. */
  def rebuildClocks: Int = size + 1
}

object TernaryTableConfig {
  /** Clocks the range classifier adds: the slot comparisons, the pick. */
  val RangeClocks = 2
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
  * A range field (docs/tables.md, "Range fields") is matched by an elementary-interval
  * classifier instead: its boundary slots (lo, interval id, valid), kept sorted by the
  * driver, are compared with the key's field at once, the last valid slot with lo <= x
  * gives the key's interval id, and the row `rangeRows(f)(id)` (bit e: entry e's range
  * holds that whole interval) is ANDed with the chunk rows. Chunks wholly inside range
  * fields have no memory.
  *
  * The row memories' write enables cover 4 entries (a group), so an update of one entry
  * rewrites the 16 rows of its group in every chunk (and every interval row of the range
  * fields), computed from the value and mask of the group's 4 entries, which the entry
  * store keeps; a range field's lo sits in the value's bits of the field, its hi in the
  * mask's. The rows of the other 3 entries are rewritten with what they already hold.
  */
class TernaryTable(c: TernaryTableConfig) extends Area with MatchUnit {
  def entries: Int = c.size
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))

  val rows = c.matchedChunks.map(k => k -> RowRam(c.size, 16, 4, syncRead = false))
  /** The entry store: written and read by the control window only. */
  val store = matcha.Hw.blockRamWhenDeep(Mem(TernaryEntry(c), c.size))
  /** The lookup side's copy of each entry's action id and data. */
  val actions = Mem(TernaryAction(c), c.size)
  /** Entry valid bits, ANDed into every lookup in the clock its rows are read. */
  val live = Reg(Bits(c.size bits)) init 0

  /** Per range field: its boundary slots, each interval id's row of accepting entries and
    * its span [start, end] (what the write engine compares entries' ranges with). */
  val ranges = c.ranges.map(f => new Area {
    val field = f
    val slotLo = Vec.fill(c.rangeSlots)(Reg(UInt(f.width bits)) init 0)
    val slotId = Vec.fill(c.rangeSlots)(Reg(UInt(c.idWidth bits)) init 0)
    val slotValid = Vec((0 until c.rangeSlots).map(s => Reg(Bool()) init (s == 0)))
    val rows = RowRam(c.size, c.rangeIds, 4, syncRead = true)
    val spanStart = Mem(UInt(f.width bits), c.rangeIds)
    val spanEnd = Mem(UInt(f.width bits), c.rangeIds)
  })

  def chunk(bits: Bits, k: Int): Bits = bits(4 * k, 4 bits)
  def fieldOf(bits: Bits, f: RangeField): UInt = bits(f.offset, f.width bits).asUInt

  val keyed = new Area {
    val valid = RegNext(lookup.valid) init False
    val key = RegNext(lookup.payload.resize(c.paddedWidth))
  }
  /** The range classifier: which slots are at or below the key's field (with the slots'
    * ids as they were then, so that a slot rewritten meanwhile cannot pair one slot's
    * comparison with another's id), then the last of them. */
  val classify = new Area {
    val atOrBelow = ranges.map(r => RegNext(Vec((0 until c.rangeSlots).map(s =>
      r.slotValid(s) && r.slotLo(s) <= fieldOf(keyed.key, r.field))).asBits))
    val ids = ranges.map(r => RegNext(r.slotId))
    val key = RegNext(keyed.key)
    val valid = RegNext(keyed.valid) init False
    val id = atOrBelow.zip(ids).map { case (below, slotIds) => RegNext(MuxOH(OHMasking.last(below), slotIds)) }
    val pickedKey = RegNext(key)
    val pickedValid = RegNext(valid) init False
  }
  val rowKey = if (c.ranges.isEmpty) keyed.key else classify.pickedKey
  val rowKeyValid = if (c.ranges.isEmpty) keyed.valid else classify.pickedValid
  val rowRead = new Area {
    val row = rows.map { case (k, m) => m.read(chunk(rowKey, k).asUInt) }
    val partial = row.grouped(4).map(g => RegNext(g.reduce(_ & _))).toSeq
    // Read in the same clock as the chunk rows and the valid vector.
    val intervals = ranges.zip(classify.id).map { case (r, id) => r.rows.read(id) }
    // Sampled in the clock the rows are read: a lookup sees an entry's rows and its valid
    // bit as they were in the same clock.
    val valid = RegNext(live)
    val lookupValid = RegNext(rowKeyValid) init False
  }
  val matched = new Area {
    val hits = RegNext((rowRead.partial ++ rowRead.intervals :+ rowRead.valid).reduceBalancedTree(_ & _))
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
    * 4 entries back, one clock later their value and mask are held; then the row clocks
    * write row 0 to 15 of the group in every chunk memory and, beside them, interval row 0
    * to rangeIds - 1 of every range field (each interval's acceptance computed from its
    * span), and the clock of the last row write sets the valid bit from the staged entry
    * and writes the lookup side's action copy. A lookup reads its rows and the valid
    * vector in the same clock, so it sees the entry as before the WRITE, not at all, or as
    * after it. A lookup that matched the old entry reads its action 4 clocks after its
    * rows, long before the action copy changes.
    *
    * READ reads the entry store. CLEAR clears the valid vector in its first clock, resets
    * every range field to its one interval (slot 0: lo 0, id 0; id 0 spans the field),
    * then zeroes the entry store, one entry per clock; the row memories keep what they
    * held, which no lookup sees until a WRITE has rebuilt them.
    *
    * Range commands (INDEX: field << RANGE_FIELD_SHIFT | slot or id), each on one field:
    * RANGE_SLOT writes slot (KEY: lo, MASK: id, FLAGS.VALID) and RANGE_SPAN an id's span
    * (KEY: start, MASK: end), both in one clock; RANGE_REBUILD (c.rebuildClocks clocks)
    * reads every entry from the store and rewrites the id's row, a group per 4 entries. */
  /** The table's descriptor (kind 3; geometry: range fields, extra: slots per field) and
    * control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow = {
    val rangeIndex = (i: UInt) => (i >> RangeEncoding.FieldShift) < c.ranges.size && (i & RangeEncoding.SlotMask) < c.rangeSlots
    val commands = if (c.ranges.isEmpty) Nil else Seq(Command.RangeSlot, Command.RangeSpan, Command.RangeRebuild).map(_ -> rangeIndex)
    bus.addTable(name, TableKind.Ternary, c.keyWidth, c.size, c.dataWidth, c.ranges.size, c.latency,
      extra = if (c.ranges.isEmpty) 0 else c.rangeSlots, features = features, tableCommands = commands)
  }

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
    def other(code: Int): Bool = cmd.valid && cmd.op === TableOp.other && cmd.code === code
    val rangeField = (cmd.index >> RangeEncoding.FieldShift).resize(log2Up(c.ranges.size max 2))
    val rangeSlot = (cmd.index & RangeEncoding.SlotMask).resize(c.idWidth)

    val clearing = RegInit(False)
    val clearPort = Reg(UInt(c.indexWidth bits)) init 0
    val updating = RegInit(False)
    val step = Reg(UInt(log2Up(c.writeClocks + 1) bits)) init 0
    val target = Reg(UInt(c.indexWidth bits)) init 0
    val targetValid = Reg(Bool()) init False
    val group = target >> 2
    val fetching = updating && step < 4
    // RANGE_REBUILD: every entry read in turn (`rebuildPort`), received a clock later.
    val rebuilding = RegInit(False)
    val rebuildPort = Reg(UInt(c.indexWidth bits)) init 0
    val rebuildField = Reg(UInt(rangeField.getWidth bits)) init 0
    val rebuildId = Reg(UInt(c.idWidth bits)) init 0

    val storeAddress = UInt(c.indexWidth bits)
    storeAddress := index
    when(clearing) { storeAddress := clearPort } elsewhen (fetching) { storeAddress := group @@ step(1 downto 0) } elsewhen
      (rebuilding) { storeAddress := rebuildPort }
    val storeRead = store.readWriteSync(
      address = storeAddress,
      data = clearing ? TernaryEntry(c).getZero | staged,
      enable = clearing || fetching || rebuilding || reading || writing,
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

    // Rows of the group: 0..15 in every chunk memory, 0..rangeIds-1 of every range field.
    val rowPhase = updating && step >= 5
    val row = (step - 5).resize(log2Up(c.rowsPerWrite))
    /** `row` is below `n` (always, when n is every row). */
    def rowBelow(n: Int): Bool = if (n >= c.rowsPerWrite) True else row < n
    val ternaryBits = B(c.ternaryBits, c.paddedWidth bits)
    // accepts(k)(j): entry j of the group accepts `row` in chunk k (range field bits ignored).
    for ((k, m) <- rows) {
      val accepts = Vec((0 until 4).map(j =>
        (row.resize(4).asBits & chunk(groupMask(j) & ternaryBits, k)) === chunk(groupValue(j) & ternaryBits, k))).asBits
      m.write(row.resize(4), group, accepts, enable = rowPhase && rowBelow(16))
    }
    /** Whether a range lo..hi holds the whole interval start..end. */
    def holds(value: Bits, mask: Bits, f: RangeField, start: UInt, end: UInt): Bool =
      fieldOf(value, f) <= start && end <= fieldOf(mask, f)
    val rebuildCapture = RegNext(rebuilding) init False
    val rebuildEntry = RegNext(rebuildPort)
    val rebuildBits = Reg(Bits(3 bits)) init 0
    val rebuildDone = rebuildCapture && rebuildEntry === c.size - 1
    for ((r, f) <- ranges.zipWithIndex) {
      val mine = rebuildField === f
      val spanAddress = (rebuilding || rebuildCapture) ? rebuildId | row.resize(c.idWidth)
      val start = r.spanStart.readAsync(spanAddress)
      val end = r.spanEnd.readAsync(spanAddress)
      val accepts = Vec((0 until 4).map(j => holds(groupValue(j), groupMask(j), r.field, start, end))).asBits
      val entryAccepts = holds(storeRead.value, storeRead.mask, r.field, start, end)
      val rebuildWrite = rebuildCapture && mine && rebuildEntry(1 downto 0) === 3
      r.rows.write(
        address = rebuildCapture ? rebuildId | row.resize(c.idWidth),
        symbol = rebuildCapture ? (rebuildEntry >> 2) | group,
        data = rebuildCapture ? (entryAccepts ## rebuildBits) | accepts,
        enable = rebuildWrite || rowPhase && rowBelow(c.rangeIds))
      when(rebuildCapture && mine) {
        switch(rebuildEntry(1 downto 0)) {
          for (j <- 0 until 3) is(j) { rebuildBits(j) := entryAccepts }
          default {}
        }
      }

      val spanWrite = other(Command.RangeSpan) && rangeField === f
      val clearSpan = cmd.valid && cmd.op === TableOp.clear
      val spanId = clearSpan ? U(0, c.idWidth bits) | rangeSlot
      r.spanStart.write(spanId, clearSpan ? U(0, r.field.width bits) | cmd.entry.key.resize(r.field.width).asUInt, spanWrite || clearSpan)
      r.spanEnd.write(spanId, clearSpan ? U(r.field.width bits, default -> True) | cmd.entry.mask.resize(r.field.width).asUInt,
        spanWrite || clearSpan)

      for (s <- 0 until c.rangeSlots) {
        when(other(Command.RangeSlot) && rangeField === f && rangeSlot === s) {
          r.slotLo(s) := cmd.entry.key.resize(r.field.width).asUInt
          r.slotId(s) := cmd.entry.mask.resize(c.idWidth).asUInt
          r.slotValid(s) := cmd.entry.valid
        }
        when(clearSpan) {
          r.slotLo(s) := 0
          r.slotId(s) := 0
          r.slotValid(s) := Bool(s == 0)
        }
      }
    }
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
    when(other(Command.RangeSlot) || other(Command.RangeSpan)) { window.done := True }
    when(other(Command.RangeRebuild)) {
      rebuilding := True
      rebuildPort := 0
      rebuildField := rangeField
      rebuildId := rangeSlot
    }
    when(rebuilding) {
      rebuildPort := rebuildPort + 1
      when(rebuildPort === c.size - 1) { rebuilding := False }
    }
    when(rebuildDone) { window.done := True }
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

/** How the range commands address a field's slots and ids (docs/tables.md, "Range
  * fields"). */
object RangeEncoding extends matcha.ContractGroup("RANGE_", "Ternary range fields: INDEX of RANGE_SLOT, RANGE_SPAN, RANGE_REBUILD (docs/tables.md)") {
  val FieldShift = const("FIELD_SHIFT", 16, "INDEX: the range field (0 = least significant in the key) from this bit")
  val SlotMask = const("SLOT_MASK", 0xffff, "INDEX: the slot or interval id")
}

/** A single ternary table behind its control bus, the unit tested on its own. */
object TernaryTableUnit {
  def apply(c: TernaryTableConfig, name: String = "matcha_ternary_table") =
    new MatchUnitTop(name, c.keyWidth, c.dataWidth, c.indexWidth, new TernaryTable(c))
}

/** Ternary tables in a program: `size` entries, the lowest matching index wins. */
object TernaryKind extends MatchKind(TableKind.Ternary) {
  /** The key's fields are laid out first most significant (Hw.msbFirst). */
  def config(t: TableSpec, fieldWidths: Seq[Int]) = {
    val offsets = fieldWidths.scanRight(0)(_ + _).tail
    val ranges = t.key.indices.filter(t.key(_).range).map(i => RangeField(offsets(i), fieldWidths(i))).sortBy(_.offset)
    TernaryTableConfig(fieldWidths.sum, t.dataWidth, t.size, ranges, t.rangeSlots)
  }
  def latency(t: TableSpec, keyWidth: Int): Int =
    TernaryTableConfig(keyWidth, t.dataWidth, t.size).latency + (if (t.key.exists(_.range)) TernaryTableConfig.RangeClocks else 0)
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = unit(t, Seq(keyWidth))
  override def unit(t: TableSpec, fieldWidths: Seq[Int]): MatchUnit = new TernaryTable(config(t, fieldWidths))
  override def json(t: TableSpec): Seq[(String, ujson.Value)] =
    if (t.key.exists(_.range)) Seq("rangeSlots" -> ujson.Num(t.rangeSlots)) else Nil
}
