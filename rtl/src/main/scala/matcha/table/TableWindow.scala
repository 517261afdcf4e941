// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.misc.BusSlaveFactory

/** Table kinds as the self-describing block numbers them (descriptor word 0). */
object TableKind extends matcha.ContractGroup("KIND_", "Descriptor word 0: the kind code and its flags (docs/tables.md)") {
  val Exact = const("EXACT", 1)
  val Lpm = const("LPM", 2)
  val Ternary = const("TERNARY", 3)
  val Meter = const("METER", 4)
  val Session = const("SESSION", 5)
  val Direct = const("DIRECT", 6, "the key is the entry's index")
  val MemExact = const("MEM_EXACT", 7, "exact match in buckets in memory behind an AXI4 port (MEMX_*)")
  val MemSession = const("MEM_SESSION", 8, "sessions in buckets in memory behind an AXI4 port (MEMS_*)")
  val CodeMask = const("CODE_MASK", 0xff, "the kind code's bits")
  val CountersFlag = const("COUNTERS", 1 << 8, "per-entry counters")
  val DefaultActionFlag = const("DEFAULT_ACTION", 1 << 9, "a default action")
  val PrefixStoreFlag = const("PREFIX_STORE", 1 << 10, "LPM: each result's prefix is kept beside it")
  /** Kind flags every table of a kind has, whatever its window features. */
  def flags(kind: Int): Int = if (kind == Lpm) PrefixStoreFlag else 0
  /** The kinds' names, as layout.json and the tools spell them, by code. */
  val names: Map[Int, String] = Map(Exact -> "exact", Lpm -> "lpm", Ternary -> "ternary", Meter -> "meter", Session -> "session",
    Direct -> "direct", MemExact -> "mem_exact", MemSession -> "mem_session")
}

/** Offsets in a table's window (docs/tables.md, "Table window"). */
object WindowRegister extends matcha.ContractGroup("WIN_", "Table window offsets (docs/tables.md)") {
  val Command = const("CMD", 0x000, "write: a command code")
  val Status = const("STATUS", 0x000, "read: busy and the last command's error")
  val Index = const("INDEX", 0x004)
  val Flags = const("FLAGS", 0x008)
  val Priority = const("PRIORITY", 0x00c)
  val Key = const("KEY", 0x040)
  val Mask = const("MASK", 0x080)
  val Data = const("DATA", 0x0c0)
  val Hits = const("HITS", 0x100, "64 bits: reading the low word latches the high word")
  val Misses = const("MISSES", 0x108)
  val Packets = const("PACKETS", 0x110, "a READ's per-entry packet count, 64 bits")
  val Bytes = const("BYTES", 0x118, "a READ's per-entry byte count, 64 bits")
  val End = const("END", 0x120, "the first offset past the common registers")
  val StagingWords = const("STAGING_WORDS", 16, "32-bit words of KEY, MASK and DATA each")
}

/** Command codes written to a window's CMD. */
object Command extends matcha.ContractGroup("CMD_", "Table window command codes (docs/tables.md)") {
  val Write = const("WRITE", 1)
  val Read = const("READ", 2)
  val Clear = const("CLEAR", 3)
  val Zero = const("ZERO", 4, "zero an entry's counters")
  val Default = const("DEFAULT", 5, "set the default action")
  val ReadDefault = const("READ_DEFAULT", 6)
  val RangeSlot = const("RANGE_SLOT", 7, "ternary range fields: write a boundary slot (RANGE_*)")
  val RangeSpan = const("RANGE_SPAN", 8, "ternary range fields: write an interval's span")
  val RangeRebuild = const("RANGE_REBUILD", 9, "ternary range fields: rebuild an interval's row from the entries")
}

/** STATUS of a window: busy in bit 0, the last command's error in bits 15..8. */
object Status extends matcha.ContractGroup("STATUS_", "Table window STATUS (docs/tables.md)") {
  val Busy = const("BUSY", 0x1)
  val ErrorShift = const("ERROR_SHIFT", 8)
  val ErrorMask = const("ERROR_MASK", 0xff, "after the shift")
  val ErrorNone = const("ERROR_NONE", 0)
  val ErrorIndexRange = const("ERROR_INDEX_RANGE", 1, "INDEX addresses no entry of the table")
  val ErrorUnknownCommand = const("ERROR_UNKNOWN_CMD", 2, "a code the table does not have")
}

/** FLAGS of a window: the entry's valid bit and action id. */
object EntryFlags extends matcha.ContractGroup("FLAGS_", "Table window FLAGS (docs/tables.md)") {
  val Valid = const("VALID", 0x1)
  val ActionShift = const("ACTION_SHIFT", 8, "the action id")
  val ActionMask = const("ACTION_MASK", 0xff, "the action id's bits, after the shift")
}

/** What every match unit hands its stage. */
case class LookupResult(dataWidth: Int, indexWidth: Int) extends Bundle {
  val hit = Bool()
  val actionId = Bits(8 bits)
  val actionData = Bits(dataWidth bits)
  val entryIndex = UInt(indexWidth bits)
}

/** A table entry as the control window stages it. */
case class StagedEntry(keyWidth: Int, dataWidth: Int) extends Bundle {
  val valid = Bool()
  val actionId = Bits(8 bits)
  val priority = Bits(32 bits)
  val key = Bits(keyWidth bits)
  val mask = Bits(keyWidth bits)
  val data = Bits(dataWidth bits)
}

/** `other`: a command code only some tables have (WindowFeatures.tableCommands), in
  * TableCommand.code. */
object TableOp extends SpinalEnum(binarySequential) {
  val write, read, clear, other = newElement()
}

case class TableCommand(keyWidth: Int, dataWidth: Int) extends Bundle {
  val op = TableOp()
  val code = Bits(8 bits)
  val index = UInt(32 bits)
  val entry = StagedEntry(keyWidth, dataWidth)
}

/** What a table's counters are asked to do (docs/tables.md, "Per-entry counters"). */
object CounterOp extends SpinalEnum(binarySequential) {
  val read, zero, clear = newElement()
}

case class CounterCommand() extends Bundle {
  val op = CounterOp()
  val index = UInt(32 bits)
}

case class CounterValues() extends Bundle {
  val packets = UInt(64 bits)
  val bytes = UInt(64 bits)
}

/** What a table in a pipeline has beyond its entries: per-entry counters, and a default
  * action whose reset value the pipeline description gives. */
case class WindowFeatures(counters: Boolean = false, defaultAction: Option[(Int, BigInt)] = None) {
  def kindFlags: Int =
    (if (counters) TableKind.CountersFlag else 0) | (if (defaultAction.isDefined) TableKind.DefaultActionFlag else 0)
}

/** The control window of one table (docs/tables.md, "Table window"): staging registers, the
  * command register, status, the 64-bit hit/miss counters read through a snapshot, and,
  * with `features`, the per-entry counter registers and the default action.
  * The table answers a command on `commands` with `done` (and, for a read, the entry in
  * `readBack`); the counters answer theirs on `counterCommands` with `counterRead`; a command
  * is busy until everything it was sent to has answered. `stagedDataWidth`: the DATA its
  * commands carry, when a table writes words wider than its action data through it (an LPM
  * table's 32-bit trie entries); the default action's data stays `dataWidth` bits.
  * `tableCommands`: command codes only this table has, each with the INDEX values it
  * accepts (others answer ERROR_INDEX_RANGE); they reach the table as TableOp.other. */
class TableWindow(val bus: BusSlaveFactory, val base: BigInt, keyWidth: Int, dataWidth: Int, indexValid: UInt => Bool,
    features: WindowFeatures = WindowFeatures(), stagedDataWidth: Option[Int] = None,
    tableCommands: Seq[(Int, UInt => Bool)] = Nil) extends Area {
  /** The window's offsets. */
  private val at = WindowRegister
  private def words(bits: Int) = (bits + 31) / 32
  val staged: Int = stagedDataWidth.getOrElse(dataWidth)
  require(staged >= dataWidth)
  require(words(keyWidth) <= at.StagingWords && words(staged) <= at.StagingWords, "keys and action data are at most 512 bits")

  val commands = Flow(TableCommand(keyWidth, staged))
  val done = Bool()
  val readBack = Flow(StagedEntry(keyWidth, staged))
  val hit = Bool()
  val miss = Bool()
  val counterCommands = Flow(CounterCommand())
  val counterRead = Flow(CounterValues())

  val index = Reg(UInt(32 bits)) init 0
  val valid = Reg(Bool()) init False
  val actionId = Reg(Bits(log2Up(EntryFlags.ActionMask + 1) bits)) init 0
  val priority = Reg(Bits(32 bits)) init 0
  val key = Vec.fill(words(keyWidth))(Reg(Bits(32 bits)) init 0)
  val mask = Vec.fill(words(keyWidth))(Reg(Bits(32 bits)) init 0)
  val data = Vec.fill(words(staged))(Reg(Bits(32 bits)) init 0)
  val packets = Reg(UInt(64 bits)) init 0
  val bytes = Reg(UInt(64 bits)) init 0
  val tablePending = Reg(Bool()) init False
  val counterPending = Reg(Bool()) init False
  val error = Reg(Bits(8 bits)) init 0
  /** The miss action, for tables that have one. */
  val defaultAction = features.defaultAction.map { case (id, d) => Reg(Bits(8 bits)) init id }
  val defaultData = features.defaultAction.map { case (id, d) => Reg(Bits(dataWidth bits)) init d }

  bus.readAndWrite(index, base + at.Index)
  bus.readAndWrite(valid, base + at.Flags, 0)
  bus.readAndWrite(actionId, base + at.Flags, EntryFlags.ActionShift)
  bus.readAndWrite(priority, base + at.Priority)
  for (i <- key.indices) bus.readAndWrite(key(i), base + at.Key + 4 * i)
  for (i <- mask.indices) bus.readAndWrite(mask(i), base + at.Mask + 4 * i)
  for (i <- data.indices) bus.readAndWrite(data(i), base + at.Data + 4 * i)
  /** Memories power up holding anything (X in simulation) and rst does not reach them, so
    * the window runs a CLEAR of its own in the first clock after reset; STATUS is busy until
    * it is done. A command written meanwhile waits for it (`deferred`), so a host that
    * starts right after reset loses nothing. */
  val clearAfterReset = RegNext(False) init True
  /** The CLEAR after reset has not finished: lookups must wait (ControlBus.clearing). */
  val resetClearing = Reg(Bool()) init True
  when(!clearAfterReset && !tablePending && !counterPending) { resetClearing := False }
  val deferred = Reg(Bool()) init False
  val deferredOp = Reg(Bits(32 bits))
  bus.read(tablePending || counterPending || resetClearing || deferred, base + at.Status, 0)
  bus.read(error, base + at.Status, Status.ErrorShift)
  bus.readMultiWord(packets, base + at.Packets)
  bus.readMultiWord(bytes, base + at.Bytes)

  val opCode = Bits(32 bits)
  val start = Bool()
  start := False
  bus.nonStopWrite(opCode, 0)
  /** The command that starts in this clock: written now, or deferred until the CLEAR after
    * reset is done. */
  val command = Bits(32 bits)
  command := opCode
  val launch = Bool()
  launch := False
  bus.onWrite(base + at.Command) {
    when(resetClearing && !deferred) {
      deferred := True
      deferredOp := opCode
    }.elsewhen(!tablePending && !counterPending && !resetClearing && !deferred) {
      launch := True
    }
  }
  when(deferred && !resetClearing) {
    deferred := False
    command := deferredOp
    launch := True
  }
  when(launch) {
    val known = command === Command.Write || command === Command.Read || command === Command.Clear ||
      Bool(features.counters) && command === Command.Zero ||
      Bool(features.defaultAction.isDefined) && (command === Command.Default || command === Command.ReadDefault) ||
      tableCommands.map { case (code, _) => command === code }.foldLeft(False)(_ || _)
    val needsIndex = command === Command.Write || command === Command.Read || command === Command.Zero
    val inRange = (indexValid(index) || !needsIndex) &&
      tableCommands.map { case (code, valid) => command =/= code || valid(index) }.foldLeft(True)(_ && _)
    error := ((!known) ? B(Status.ErrorUnknownCommand, 8 bits) |
      ((!inRange) ? B(Status.ErrorIndexRange, 8 bits) | B(Status.ErrorNone, 8 bits)))
    when(known && inRange) { start := True }
  }
  val tableOther = tableCommands.map { case (code, _) => command === code }.foldLeft(False)(_ || _)
  val toTable = command === Command.Write || command === Command.Read || command === Command.Clear || tableOther
  val toCounters = Bool(features.counters) && (command === Command.Read || command === Command.Clear || command === Command.Zero)
  commands.valid := start && toTable || clearAfterReset
  commands.op := TableOp.clear
  when(!clearAfterReset && command === Command.Write) { commands.op := TableOp.write }
  when(!clearAfterReset && command === Command.Read) { commands.op := TableOp.read }
  when(!clearAfterReset && tableOther) { commands.op := TableOp.other }
  commands.code := command(7 downto 0)
  commands.index := index
  commands.entry.valid := valid
  commands.entry.actionId := actionId
  commands.entry.priority := priority
  commands.entry.key := Cat(key).resize(keyWidth)
  commands.entry.mask := Cat(mask).resize(keyWidth)
  commands.entry.data := Cat(data).resize(staged)
  counterCommands.valid := start && toCounters || clearAfterReset && Bool(features.counters)
  counterCommands.op := CounterOp.zero
  when(command === Command.Read) { counterCommands.op := CounterOp.read }
  when(command === Command.Clear || clearAfterReset) { counterCommands.op := CounterOp.clear }
  counterCommands.index := index
  if (!features.counters) counterRead.setIdle()

  // The factory's write logic is built last, so the pending flags are computed here in one
  // place: a command that completes in its own clock never shows busy.
  tablePending := (tablePending || commands.valid) && !done
  counterPending := (counterPending || counterCommands.valid) && !counterRead.valid
  when(start && command === Command.Read) { packets := 0; bytes := 0 }
  when(counterRead.valid) { packets := counterRead.packets; bytes := counterRead.bytes }
  when(readBack.valid) {
    valid := readBack.payload.valid
    actionId := readBack.actionId
    priority := readBack.priority
    for (i <- key.indices) key(i) := readBack.key.resize(words(keyWidth) * 32)(32 * i, 32 bits)
    for (i <- mask.indices) mask(i) := readBack.mask.resize(words(keyWidth) * 32)(32 * i, 32 bits)
    for (i <- data.indices) data(i) := readBack.data.resize(words(staged) * 32)(32 * i, 32 bits)
  }
  for (action <- defaultAction; actionData <- defaultData) {
    when(start && command === Command.Default) {
      action := actionId
      actionData := Cat(data).resize(dataWidth)
    }
    when(start && command === Command.ReadDefault) {
      valid := True
      actionId := action
      for (i <- data.indices) data(i) := actionData.resize(words(staged) * 32)(32 * i, 32 bits)
    }
  }

  /** A 64-bit counter at `offset`: reading the low word latches the high word. */
  def counter64(event: Bool, offset: Int): UInt = counter64(event.asUInt, offset)

  /** A 64-bit count that grows by `increment` a clock, readable as `counter64`'s. */
  def counter64(increment: UInt, offset: Int): UInt = {
    val count = Reg(UInt(64 bits)) init 0
    val high = Reg(UInt(32 bits)) init 0
    count := count + increment.resized
    bus.read(count(31 downto 0), base + offset)
    bus.onRead(base + offset) { high := count(63 downto 32) }
    bus.read(high, base + offset + 4)
    count
  }
  val hits = counter64(hit, at.Hits)
  val misses = counter64(miss, at.Misses)

  /** Registers a table adds to its window beyond these, as [from, until) offset ranges. */
  private val added = scala.collection.mutable.ArrayBuffer[(Int, Int)]()
  def addRegisters(from: Int, until: Int): Unit = added += from -> until

  /** Offsets of this window that answer; everything else in it is an error. */
  def mapped(offset: UInt): Bool = {
    val o = offset
    o === at.Status || o === at.Index || o === at.Flags || o === at.Priority ||
    (o >= at.Key && o < at.Key + 4 * key.size) || (o >= at.Mask && o < at.Mask + 4 * mask.size) ||
    (o >= at.Data && o < at.Data + 4 * data.size) || (o >= at.Hits && o < at.End) ||
    added.map { case (from, until) => o >= from && o < until }.foldLeft(False)(_ || _)
  }
}

/** A match unit: keys in, results out a fixed latency later, its descriptor and control
  * window on a bus (ExactTable, LpmTable, TernaryTable, DirectTable). */
trait MatchUnit {
  def lookup: Flow[Bits]
  def result: Flow[LookupResult]
  /** How many entries its per-entry counters count. */
  def entries: Int
  /** Its descriptor and window on `bus`, table `name`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures = WindowFeatures()): TableWindow
  /** Connects the unit to its window's commands. */
  def attach(window: TableWindow): Unit
  /** Valid with `result`: the unit has no answer for the lookup, and the result means
    * nothing (a memory-backed table whose bucket did not come back in time). */
  def late: Option[Bool] = None
  /** The AXI4 masters of a unit whose entries live in memory: one, or an LPM table's one a
    * level in memory. */
  def memories: Seq[spinal.lib.bus.amba4.axi.Axi4] = Nil
}

/** One match unit behind a control bus of its own: the top a unit's testbench drives. */
class MatchUnitTop[T <: MatchUnit](definitionName: String, keyWidth: Int, dataWidth: Int, indexWidth: Int, unit: => T)
    extends Component {
  setDefinitionName(definitionName)
  val io = new Bundle {
    val ctrl = slave(spinal.lib.bus.amba4.axilite.AxiLite4(ControlBus.axiConfig))
    val lookup = slave(Flow(Bits(keyWidth bits)))
    val result = master(Flow(LookupResult(dataWidth, indexWidth)))
  }
  noIoPrefix()
  spinal.lib.bus.amba4.axilite.AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  val bus = new ControlBus(io.ctrl)
  val table: T = unit
  val window = table.addWindow(bus, "table")
  bus.build()
  table.attach(window)
  table.lookup << io.lookup
  io.result << table.result
  /** A unit with entries in memory: its AXI4 masters (`m_axi_*`, or `m_axi_<j>_*` with
    * several) and, valid with the result, whether it is late (`result_late`). */
  val mems = for ((m, name) <- table.memories.zip(matcha.program.TableMemory.portNames("m_axi", table.memories.size))) yield {
    val port = master(spinal.lib.bus.amba4.axi.Axi4(m.config)).setName(name)
    spinal.lib.bus.amba4.axi.Axi4SpecRenamer(port)
    port << m
    port
  }
  val resultLate = table.late.map(l => out(CombInit(l)).setName("result_late"))
}
