// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** How a memory-backed exact table lays its entries out in memory, and the registers its
  * window adds (docs/tables.md, "Memory-backed exact tables"). A bucket is one beat of the
  * memory port or more; its entries lie in its beats as BucketLayout places them, an
  * entry's bytes being ENTRY_KEY_BYTE + whole bytes of key + whole bytes of action data
  * (the descriptor's EXTRA word). */
object MemExactEncoding extends matcha.ContractGroup("MEMX_", "Memory-backed exact table: bucket and entry encoding (docs/tables.md)") {
  val SlotBits = const("INDEX_SLOT_BITS", 4, "a window INDEX is bucket << INDEX_SLOT_BITS | slot")
  val MaxSlots = const("MAX_SLOTS", 16, "entries a bucket holds at most")
  val FlagsByte = const("ENTRY_FLAGS_BYTE", 0, "byte of the entry's flags")
  val ValidFlag = const("ENTRY_VALID", 0x1, "flags: the entry is in use")
  val ActionByte = const("ENTRY_ACTION_BYTE", 1, "byte of the action id")
  val KeyByte = const("ENTRY_KEY_BYTE", 2, "the key from here, little-endian, then the action data, little-endian")
  val Late = const("WIN_LATE", WindowRegister.End, "64 bits: lookups whose bucket was not back in time (reading the low word latches the high word)")
  val Stash = const("WIN_STASH", WindowRegister.End + 8, "read-only: the entries of the table's on-chip stash, 0 if it has none")
  val StashWays = const("STASH_WAYS", 4, "ways of the stash, an on-chip exact table: its INDEX after the buckets' is way * (stash entries / STASH_WAYS) + slot")
  val WindowEnd = const("WIN_END", WindowRegister.End + 12, "the first offset past the window's registers")
}

/** Where a bucket of `beats` beats of the memory port (`bucketBytes` in all) holds its
  * entries of `entryBytes`: as many whole entries in each beat as fit, from the beat's first
  * byte, so that no entry crosses a beat and a write of one entry is one beat's, as a read
  * of it is (docs/tables.md, "Layout and hash"). */
case class BucketLayout(bucketBytes: Int, beats: Int, entryBytes: Int) {
  def beatBytes: Int = bucketBytes / beats
  def perBeat: Int = beatBytes / entryBytes
  def slots: Int = (beats * perBeat) min MemExactEncoding.MaxSlots
  /** The first byte of entry `slot`. */
  def offset(slot: Int): Int = slot / perBeat * beatBytes + slot % perBeat * entryBytes
  /** The strobes of entry `slot`'s bytes. */
  def strobes(slot: Int): BigInt = ((BigInt(1) << entryBytes) - 1) << offset(slot)
}

/** A memory-backed exact table of `buckets` buckets of one `axi` data beat each, from
  * `baseAddress` on; results leave `latency` clocks after their key. `memoryLatency`: the
  * clocks from a read's address to its data the table is dimensioned for: a lookup waits
  * for the read port at most `latency - memoryLatency` clocks less the table's own
  * (`MemoryReadPath.MinLatency`), so that after the port held reads back, the lookups behind them are in
  * time again. `outstanding`: memory reads in flight at most (one a clock needs as many
  * as the memory's latency in clocks). `answerClocks`: clocks the port takes to bring a
  * bucket back at most (its beats, on a memory of narrower beats). `stash`: entries of an
  * on-chip exact table for keys whose bucket is full, looked up beside the bucket (0: none;
  * docs/tables.md, "The stash"). */
case class MemExactTableConfig(keyWidth: Int, dataWidth: Int, buckets: Int, latency: Int = 512, memoryLatency: Int = 320,
    axi: Axi4Config = MemExactTableConfig.corundumAxi, baseAddress: BigInt = 0, outstanding: Int = 512,
    answerClocks: Int = 1, stash: Int = 0) {
  def keyBytes: Int = (keyWidth + 7) / 8
  def dataBytes: Int = (dataWidth + 7) / 8
  def entryBytes: Int = MemExactEncoding.KeyByte + keyBytes + dataBytes
  def bucketBytes: Int = axi.dataWidth / 8
  /** A bucket's entries, on `answerClocks` beats of the memory port. */
  def layout: BucketLayout = BucketLayout(bucketBytes, answerClocks, entryBytes)
  def slots: Int = layout.slots
  def bucketBits: Int = log2Up(buckets)
  /** The window INDEX of the stash's first entry: the one after the last bucket's. */
  def stashBase: BigInt = BigInt(buckets) << MemExactEncoding.SlotBits
  def indexWidth: Int = bucketBits + MemExactEncoding.SlotBits + (if (stash > 0) 1 else 0)
  /** The entries in memory (the descriptor's size); the stash's are besides them. */
  def entries: Int = buckets * slots
  val timing = MemoryTiming(latency, memoryLatency, outstanding, answerClocks)
  require(slots >= 1, s"an entry of $entryBytes bytes does not fit a $bucketBytes-byte bucket")
  require(isPow2(buckets), "buckets: a power of two")
  require(bucketBits <= 64, "bucket bits come from the 64-bit hash")
  require(baseAddress % (BigInt(buckets) * bucketBytes) == 0, "the table's memory: aligned to its size")
  require(baseAddress + BigInt(buckets) * bucketBytes <= (BigInt(1) << axi.addressWidth), "the table's memory: inside the address space")
  require(axi.idWidth >= 1, "lookups and the window's reads need two read ids")
  require(stash == 0 || (stash % MemExactEncoding.StashWays == 0 && isPow2(stash / MemExactEncoding.StashWays) &&
    stash / MemExactEncoding.StashWays <= 65536), s"stash: 0, or ${MemExactEncoding.StashWays} ways of a power of two entries (at most 65536) each")
  require(stashBase + stash <= (BigInt(1) << 32), "the stash's INDEX: inside the window's 32 bits")
}

object MemExactTableConfig {
  /** Corundum's application block memory ports: 256-bit data, 8-bit ids, 32-bit addresses
    * (m_axi_ddr_* and m_axi_hbm_*), without region. */
  val corundumAxi: Axi4Config = Axi4Config(addressWidth = 32, dataWidth = 256, idWidth = 8, useRegion = false)
}

/** What a memory-backed exact table answers a lookup, `latency` clocks after its key: the
  * lookup's result, or `late` when its bucket did not come back from memory in time (then
  * the rest says nothing). */
case class MemLookupResult(dataWidth: Int, indexWidth: Int) extends Bundle {
  val late = Bool()
  val hit = Bool()
  val actionId = Bits(8 bits)
  val actionData = Bits(dataWidth bits)
  val entryIndex = UInt(indexWidth bits)
}

/** Exact match in a bucketed hash table in memory behind an AXI4 master (docs/tables.md,
  * "Memory-backed exact tables"). A key's bucket is the low bits of its CRC-64 (the hash of
  * the on-chip exact table); one read of one beat answers a lookup, through the read path
  * every memory-backed table shares (MemoryReadPath): results leave exactly `latency`
  * clocks after the key, late when the bucket did not come back in time. Nothing stalls
  * the next lookup.
  *
  * As a match unit, `result` is the lookup's answer and `late` (valid with it) says that it
  * has none: then `result` is a miss that means nothing. */
class MemExactTable(val c: MemExactTableConfig) extends Area with MatchUnit {
  import MemoryReadPath._
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  val isLate = Bool()
  /** The table's side of its memory: a bucket a beat. */
  val mem = Axi4(c.axi)
  /** The memory's side: `c.answerClocks` beats a bucket. */
  val port: Axi4 = MemoryPortNarrower.port(mem, c.answerClocks)
  def entries: Int = c.entries
  override def late: Option[Bool] = Some(isLate)
  override def memories: Seq[Axi4] = Seq(port)
  /** Lookups that left late. */
  val lateEvent = Bool()

  case class Answer() extends Bundle {
    val hit = Bool()
    val actionId = Bits(8 bits)
    val actionData = Bits(c.dataWidth bits)
    val entryIndex = UInt(c.indexWidth bits)
  }
  case class Entry() extends Bundle {
    val valid = Bool()
    val actionId = Bits(8 bits)
    val key = Bits(c.keyWidth bits)
    val data = Bits(c.dataWidth bits)
  }

  /** Entry `slot` of a bucket's beat. */
  def decode(beat: Bits, slot: Int): Entry = {
    val e = Entry()
    val at = 8 * c.layout.offset(slot)
    e.valid := beat(at + 8 * MemExactEncoding.FlagsByte)
    e.actionId := beat(at + 8 * MemExactEncoding.ActionByte, 8 bits)
    e.key := beat(at + 8 * MemExactEncoding.KeyByte, c.keyWidth bits)
    e.data := beat(at + 8 * (MemExactEncoding.KeyByte + c.keyBytes), c.dataWidth bits)
    e
  }
  /** An entry's bytes, zero-padded. */
  def encode(e: Entry): Bits = {
    val b = B(0, c.entryBytes * 8 bits)
    b(8 * MemExactEncoding.FlagsByte) := e.valid
    b(8 * MemExactEncoding.ActionByte, 8 bits) := e.actionId
    b(8 * MemExactEncoding.KeyByte, c.keyWidth bits) := e.key
    b(8 * (MemExactEncoding.KeyByte + c.keyBytes), c.dataWidth bits) := e.data
    b
  }
  def bucketAddress(bucket: UInt): UInt = MemoryReadPath.bucketAddress(c.axi, c.baseAddress, c.bucketBytes, bucket)

  /** Clock 0 hashes the key into its bucket. */
  val path = new MemoryReadPath(c.timing, c.bucketBits, Bits(c.keyWidth bits), Answer())
  path.enter.valid := lookup.valid
  path.enter.payload.payload := lookup.payload
  path.enter.bucket := Crc64.hardware(lookup.payload, 0 until c.bucketBits).asUInt
  path.enter.timed := True

  /** Answer: the bucket's beat is compared with the key of the oldest read out. */
  val answer = new Area {
    val beat = path.returned(mem.r)
    val entries = (0 until c.slots).map(decode(beat.data, _))
    val hits = entries.map(e => e.valid && e.key === beat.op.payload)
    val first = OHMasking.first(Cat(hits))
    val entry = MuxOH(first, entries)
    val a = Answer()
    a.hit := hits.reduce(_ || _)
    a.actionId := entry.actionId
    a.actionData := entry.data
    a.entryIndex := (beat.op.bucket @@ OHToUInt(first).resize(MemExactEncoding.SlotBits)).resized
    path.answer(beat.valid && beat.okay && beat.inTime, beat.op.stamp, a)
  }

  /** The stash: an on-chip cuckoo table (ExactTable) of the keys the driver found no room
    * for in their bucket, looked up with the key as it enters. Its answer waits in a queue
    * for the clock in which the lookup's result leaves (it comes 3 clocks after the key,
    * the result `latency` clocks after it, and both keep the order of the keys). A key is
    * in its bucket or in the stash, never in both (the driver's placement); a late lookup
    * stays late whatever the stash holds, so that its result never depends on where the
    * driver put its key. */
  val stash = (c.stash > 0) generate new Area {
    val table = new ExactTable(ExactTableConfig(c.keyWidth, c.dataWidth, c.stash, MemExactEncoding.StashWays))
    table.lookup << lookup
    val answers = StreamFifo(LookupResult(c.dataWidth, log2Up(c.stash)), c.timing.inFlight)
    answers.io.push << table.result.toStream
    answers.io.pop.ready := path.due.now
    val due = RegNext(answers.io.pop.payload)
  }

  val inMemory = !path.due.late && path.due.answer.hit
  val inStash = if (c.stash > 0) !path.due.late && stash.due.hit else False
  result.valid := path.due.valid
  result.hit := inMemory || inStash
  result.actionId := path.due.answer.actionId
  result.actionData := path.due.answer.actionData
  result.entryIndex := path.due.answer.entryIndex
  if (c.stash > 0) when(!inMemory) {
    result.actionId := stash.due.actionId
    result.actionData := stash.due.actionData
    result.entryIndex := (U(c.stashBase, c.indexWidth bits) | stash.due.entryIndex.resized)
  }
  isLate := path.due.late
  lateEvent := result.valid && isLate

  /** The window's accesses: a WRITE is one masked beat (WSTRB covers the entry's bytes
    * only, so the bucket's other entries are not read or touched), a READ one beat under
    * the window's read id, a CLEAR a beat of zeros to every bucket. */
  val control = new Area {
    val beats = new WindowBeats(mem, c.bucketBytes)
    /** Writes of the running command, and how many of them have been answered. */
    val writes = Reg(UInt(c.bucketBits + 1 bits)) init 0
    val answeredWrites = Reg(UInt(c.bucketBits + 1 bits)) init 0
    val writing = RegInit(False)
    when(mem.b.fire) { answeredWrites := answeredWrites + 1 }
    val clearing = RegInit(False)
    val clearBucket = Reg(UInt(c.bucketBits bits))
    val reading = RegInit(False)
    val readSlot = Reg(UInt(MemExactEncoding.SlotBits bits))
  }
  control.beats.drive(Seq(path.issue.read.translateWith(bucketAddress(path.issue.read.payload) ## B(LookupId, c.axi.idWidth bits))))

  def addWindow(bus: ControlBus, name: String, features: WindowFeatures = WindowFeatures()): TableWindow = {
    require(!features.counters, s"table $name: a memory-backed table has no per-entry counters")
    val w = bus.addTable(name, TableKind.MemExact, c.keyWidth, c.entries, c.dataWidth, c.slots, c.latency, c.entryBytes,
      indexValid = Some((i: UInt) => (i < c.stashBase && i(0, MemExactEncoding.SlotBits bits) < c.slots) ||
        (i >= c.stashBase && i < c.stashBase + c.stash)),
      features = features)
    w.addRegisters(MemExactEncoding.Late, MemExactEncoding.WindowEnd)
    w.counter64(lateEvent, MemExactEncoding.Late)
    w.bus.read(U(c.stash, 32 bits), w.base + MemExactEncoding.Stash)
    w
  }

  def attach(window: TableWindow): Unit = new Area {
    import control._
    val cmd = window.commands
    val bucket = (cmd.index >> MemExactEncoding.SlotBits).resize(c.bucketBits)
    val slot = cmd.index(0, MemExactEncoding.SlotBits bits)
    val entry = Entry()
    entry.valid := cmd.entry.valid
    entry.actionId := cmd.entry.actionId
    entry.key := cmd.entry.key
    entry.data := cmd.entry.data
    val placed = Vec((0 until c.slots).map(s => (encode(entry).resize(c.axi.dataWidth) |<< (8 * c.layout.offset(s)))))
    val strbs = Vec((0 until c.slots).map(s => B(c.layout.strobes(s), c.bucketBytes bits)))
    val slotIndex = slot.resize(log2Up(c.slots))

    /** Commands at the stash's INDEX go to it, a CLEAR to both; the window's command ends
      * when both have finished it. */
    val toStash = if (c.stash > 0) cmd.index >= c.stashBase && cmd.op =/= TableOp.clear else False
    val stashClearing = if (c.stash > 0) RegInit(False) else False
    val stashSide = (c.stash > 0) generate new Area {
      val commands = cmd.takeWhen(toStash || cmd.op === TableOp.clear)
      val ctl = stash.table.control(commands, (cmd.index - c.stashBase).resize(log2Up(c.stash)))
      when(commands.valid && commands.op === TableOp.clear) { stashClearing := True }
      when(ctl.done) { stashClearing := False }
    }
    val memoryDone = Bool()
    memoryDone := False
    window.done := memoryDone
    if (c.stash > 0) when(stashSide.ctl.done && !stashClearing) { window.done := True }
    when(cmd.valid && !toStash) {
      switch(cmd.op) {
        is(TableOp.write) {
          beats.write(bucketAddress(bucket), placed(slotIndex), strbs(slotIndex))
          writes := 1
          answeredWrites := 0
          writing := True
        }
        is(TableOp.read) {
          beats.read(bucketAddress(bucket))
          readSlot := slot
          reading := True
        }
        is(TableOp.clear) {
          clearing := True
          clearBucket := 0
          writes := c.buckets
          answeredWrites := 0
          writing := True
        }
      }
    }
    when(clearing && beats.free) {
      beats.write(bucketAddress(clearBucket), B(0, c.axi.dataWidth bits), B((BigInt(1) << c.bucketBytes) - 1, c.bucketBytes bits))
      clearBucket := clearBucket + 1
      when(clearBucket === c.buckets - 1) { clearing := False }
    }
    when(writing && answeredWrites === writes && !stashClearing) {
      writing := False
      memoryDone := True
    }

    val read = Vec((0 until c.slots).map(decode(beats.readData, _)))(readSlot.resize(log2Up(c.slots)))
    when(beats.readBack) {
      reading := False
      memoryDone := True
    }
    window.readBack.valid := beats.readBack
    window.readBack.payload.valid := read.valid
    window.readBack.actionId := read.actionId
    window.readBack.key := read.key
    window.readBack.mask := 0
    window.readBack.priority := 0
    window.readBack.data := read.data
    if (c.stash > 0) when(stashSide.ctl.readBack.valid) { window.readBack := stashSide.ctl.readBack }
    window.hit := result.valid && !isLate && result.hit
    window.miss := result.valid && !isLate && !result.hit
  }
}

/** A memory-backed exact table behind its own control bus: the unit its testbench drives,
  * with the AXI4 master its memory hangs on (`m_axi_*`); with `c.answerClocks` above 1, of
  * that many beats a bucket (through a MemoryPortNarrower). */
class MemExactTableUnit(c: MemExactTableConfig, definitionName: String = "matcha_mem_exact_table") extends Component {
  setDefinitionName(definitionName)
  val table = new MemExactTable(c)
  val io = new Bundle {
    val ctrl = slave(spinal.lib.bus.amba4.axilite.AxiLite4(ControlBus.axiConfig))
    val lookup = slave(Flow(Bits(c.keyWidth bits)))
    val result = master(Flow(MemLookupResult(c.dataWidth, c.indexWidth)))
    val mem = master(Axi4(table.port.config))
  }
  noIoPrefix()
  spinal.lib.bus.amba4.axilite.AxiLite4SpecRenamer(io.ctrl)
  io.ctrl.setName("s_axil")
  Axi4SpecRenamer(io.mem)
  io.mem.setName("m_axi")
  val bus = new ControlBus(io.ctrl)
  val window = table.addWindow(bus, "table")
  bus.build()
  table.attach(window)
  table.lookup << io.lookup
  io.result.valid := table.result.valid
  io.result.late := table.isLate
  io.result.hit := table.result.hit
  io.result.actionId := table.result.actionId
  io.result.actionData := table.result.actionData
  io.result.entryIndex := table.result.entryIndex
  io.mem << table.port
}

/** Memory-backed exact tables in a program: `size` entries in buckets of `bucketBeats`
  * beats of the table's memory port (TableSpec.memory), as many entries a bucket as fit
  * its beats whole. */
object MemExactKind extends MatchKind(TableKind.MemExact) {
  def config(t: TableSpec, keyWidth: Int): MemExactTableConfig = {
    val m = t.memory.get
    def sized(buckets: Int) = MemExactTableConfig(keyWidth, t.dataWidth, buckets, m.latency, m.memoryLatency, m.bucketAxi,
      m.baseAddress, m.outstanding, m.bucketBeats, m.stash)
    val slots = sized(1).slots
    require(t.size % slots == 0 && isPow2(t.size / slots),
      s"table ${t.name}: $slots entries a bucket, so its size is a power of two times $slots")
    sized(t.size / slots)
  }
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = new MemExactTable(config(t, keyWidth))
  override def json(t: TableSpec): Seq[(String, ujson.Value)] =
    Seq("memory" -> matcha.program.ProgramJson.memoryJson(t.name, 1, t.memory.get), "stash" -> ujson.Num(t.memory.get.stash))
}
