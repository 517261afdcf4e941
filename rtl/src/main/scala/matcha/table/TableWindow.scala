package matcha.table

import spinal.core._
import spinal.lib._
import spinal.lib.bus.misc.BusSlaveFactory

/** Table kinds as the self-describing block numbers them. */
object TableKind {
  val Exact = 1
  val Lpm = 2
  val Ternary = 3
  val Meter = 4
  val Session = 5
  /** Descriptor word 0, bit 10: an LPM table keeps each result's prefix (its prefix store). */
  val PrefixStoreFlag = 1 << 10
  /** Kind flags every table of a kind has, whatever its window features. */
  def flags(kind: Int): Int = if (kind == Lpm) PrefixStoreFlag else 0
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

object TableOp extends SpinalEnum(binarySequential) {
  val write, read, clear = newElement()
}

case class TableCommand(keyWidth: Int, dataWidth: Int) extends Bundle {
  val op = TableOp()
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
  def kindFlags: Int = (if (counters) 1 << 8 else 0) | (if (defaultAction.isDefined) 1 << 9 else 0)
}

/** The control window of one table (docs/tables.md, "Table window"): staging registers, the
  * command register, status, the 64-bit hit/miss counters read through a snapshot, and,
  * with `features`, the per-entry counter registers and the default action.
  * The table answers a command on `commands` with `done` (and, for a read, the entry in
  * `readBack`); the counters answer theirs on `counterCommands` with `counterRead`; a command
  * is busy until everything it was sent to has answered. */
class TableWindow(val bus: BusSlaveFactory, val base: BigInt, keyWidth: Int, dataWidth: Int, indexValid: UInt => Bool,
    features: WindowFeatures = WindowFeatures()) extends Area {
  private def words(bits: Int) = (bits + 31) / 32
  require(words(keyWidth) <= 16 && words(dataWidth) <= 16, "keys and action data are at most 512 bits")

  val commands = Flow(TableCommand(keyWidth, dataWidth))
  val done = Bool()
  val readBack = Flow(StagedEntry(keyWidth, dataWidth))
  val hit = Bool()
  val miss = Bool()
  val counterCommands = Flow(CounterCommand())
  val counterRead = Flow(CounterValues())

  val index = Reg(UInt(32 bits)) init 0
  val valid = Reg(Bool()) init False
  val actionId = Reg(Bits(8 bits)) init 0
  val priority = Reg(Bits(32 bits)) init 0
  val key = Vec.fill(words(keyWidth))(Reg(Bits(32 bits)) init 0)
  val mask = Vec.fill(words(keyWidth))(Reg(Bits(32 bits)) init 0)
  val data = Vec.fill(words(dataWidth))(Reg(Bits(32 bits)) init 0)
  val packets = Reg(UInt(64 bits)) init 0
  val bytes = Reg(UInt(64 bits)) init 0
  val tablePending = Reg(Bool()) init False
  val counterPending = Reg(Bool()) init False
  val error = Reg(Bits(8 bits)) init 0
  /** The miss action, for tables that have one. */
  val defaultAction = features.defaultAction.map { case (id, d) => Reg(Bits(8 bits)) init id }
  val defaultData = features.defaultAction.map { case (id, d) => Reg(Bits(dataWidth bits)) init d }

  bus.readAndWrite(index, base + 0x04)
  bus.readAndWrite(valid, base + 0x08, 0)
  bus.readAndWrite(actionId, base + 0x08, 8)
  bus.readAndWrite(priority, base + 0x0c)
  for (i <- key.indices) bus.readAndWrite(key(i), base + 0x40 + 4 * i)
  for (i <- mask.indices) bus.readAndWrite(mask(i), base + 0x80 + 4 * i)
  for (i <- data.indices) bus.readAndWrite(data(i), base + 0xc0 + 4 * i)
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
  bus.read(tablePending || counterPending || resetClearing || deferred, base + 0x00, 0)
  bus.read(error, base + 0x00, 8)
  bus.readMultiWord(packets, base + 0x110)
  bus.readMultiWord(bytes, base + 0x118)

  object Cmd { val Write = 1; val Read = 2; val Clear = 3; val Zero = 4; val Default = 5; val ReadDefault = 6 }
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
  bus.onWrite(base + 0x00) {
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
    val known = command === Cmd.Write || command === Cmd.Read || command === Cmd.Clear ||
      Bool(features.counters) && command === Cmd.Zero ||
      Bool(features.defaultAction.isDefined) && (command === Cmd.Default || command === Cmd.ReadDefault)
    val needsIndex = command === Cmd.Write || command === Cmd.Read || command === Cmd.Zero
    val inRange = indexValid(index) || !needsIndex
    error := ((!known) ? B(2, 8 bits) | ((!inRange) ? B(1, 8 bits) | B(0, 8 bits)))
    when(known && inRange) { start := True }
  }
  val toTable = command === Cmd.Write || command === Cmd.Read || command === Cmd.Clear
  val toCounters = Bool(features.counters) && (command === Cmd.Read || command === Cmd.Clear || command === Cmd.Zero)
  commands.valid := start && toTable || clearAfterReset
  commands.op := TableOp.clear
  when(!clearAfterReset && command === Cmd.Write) { commands.op := TableOp.write }
  when(!clearAfterReset && command === Cmd.Read) { commands.op := TableOp.read }
  commands.index := index
  commands.entry.valid := valid
  commands.entry.actionId := actionId
  commands.entry.priority := priority
  commands.entry.key := Cat(key).resize(keyWidth)
  commands.entry.mask := Cat(mask).resize(keyWidth)
  commands.entry.data := Cat(data).resize(dataWidth)
  counterCommands.valid := start && toCounters || clearAfterReset && Bool(features.counters)
  counterCommands.op := CounterOp.zero
  when(command === Cmd.Read) { counterCommands.op := CounterOp.read }
  when(command === Cmd.Clear || clearAfterReset) { counterCommands.op := CounterOp.clear }
  counterCommands.index := index
  if (!features.counters) counterRead.setIdle()

  // The factory's write logic is built last, so the pending flags are computed here in one
  // place: a command that completes in its own clock never shows busy.
  tablePending := (tablePending || commands.valid) && !done
  counterPending := (counterPending || counterCommands.valid) && !counterRead.valid
  when(start && command === Cmd.Read) { packets := 0; bytes := 0 }
  when(counterRead.valid) { packets := counterRead.packets; bytes := counterRead.bytes }
  when(readBack.valid) {
    valid := readBack.payload.valid
    actionId := readBack.actionId
    priority := readBack.priority
    for (i <- key.indices) key(i) := readBack.key.resize(words(keyWidth) * 32)(32 * i, 32 bits)
    for (i <- mask.indices) mask(i) := readBack.mask.resize(words(keyWidth) * 32)(32 * i, 32 bits)
    for (i <- data.indices) data(i) := readBack.data.resize(words(dataWidth) * 32)(32 * i, 32 bits)
  }
  for (action <- defaultAction; actionData <- defaultData) {
    when(start && command === Cmd.Default) {
      action := actionId
      actionData := Cat(data).resize(dataWidth)
    }
    when(start && command === Cmd.ReadDefault) {
      valid := True
      actionId := action
      for (i <- data.indices) data(i) := actionData.resize(words(dataWidth) * 32)(32 * i, 32 bits)
    }
  }

  /** A 64-bit counter at `offset`: reading the low word latches the high word. */
  def counter64(event: Bool, offset: Int): UInt = {
    val count = Reg(UInt(64 bits)) init 0
    val high = Reg(UInt(32 bits)) init 0
    when(event) { count := count + 1 }
    bus.read(count(31 downto 0), base + offset)
    bus.onRead(base + offset) { high := count(63 downto 32) }
    bus.read(high, base + offset + 4)
    count
  }
  val hits = counter64(hit, 0x100)
  val misses = counter64(miss, 0x108)

  /** Registers a table adds to its window beyond these, as [from, until) offset ranges. */
  private val added = scala.collection.mutable.ArrayBuffer[(Int, Int)]()
  def addRegisters(from: Int, until: Int): Unit = added += from -> until

  /** Offsets of this window that answer; everything else in it is an error. */
  def mapped(offset: UInt): Bool = {
    val o = offset
    o === 0x00 || o === 0x04 || o === 0x08 || o === 0x0c ||
    (o >= 0x40 && o < 0x40 + 4 * key.size) || (o >= 0x80 && o < 0x80 + 4 * mask.size) ||
    (o >= 0xc0 && o < 0xc0 + 4 * data.size) || (o >= 0x100 && o < 0x120) ||
    added.map { case (from, until) => o >= from && o < until }.foldLeft(False)(_ || _)
  }
}
