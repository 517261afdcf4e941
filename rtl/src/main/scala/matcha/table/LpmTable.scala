// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi._

/** The shape of a B+tree of `fanout`-slot nodes over the boundaries of up to `results`
  * prefixes (docs/tables.md, "LPM"): every node below the root is kept at least
  * ceil(fanout/2) full, which fixes the levels and the nodes each level needs, whatever the
  * key width. */
case class LpmGeometry(fanout: Int, results: Int) {
  require(fanout >= 3, "a B+tree node has at least 3 slots (a half-full node must hold 2)")
  require(results >= 1 && results <= (1 << LpmEncoding.LevelShift), s"result indices stay below 2^${LpmEncoding.LevelShift}")
  /** The fewest slots a node other than the root holds. */
  def halfFull: Int = (fanout + 1) / 2
  /** N prefixes start and end at most 2N distinct keys, and key 0 is always a boundary. */
  def boundaries: Int = 2 * results + 1
  /** The fewest levels whose fullest tree of half-full nodes under a full root holds every
    * boundary: fanout * ceil(fanout/2)^(levels-1) >= 2N+1. */
  val levels: Int = Iterator.from(1).find(l => BigInt(fanout) * BigInt(halfFull).pow(l - 1) >= boundaries).get
  /** Nodes of each level, the root's one first: each level below the root holds at most
    * its slots over ceil(fanout/2). The update order needs no spare node: a split's new
    * node belongs to the tree it leaves behind, which keeps these bounds. */
  val nodes: Seq[Int] = {
    val leaves = (boundaries + halfFull - 1) / halfFull
    val upward = Iterator.iterate(leaves)(n => (n + halfFull - 1) / halfFull).take(levels).toSeq.reverse
    1 +: upward.tail
  }
  require(nodes.forall(_ <= (1 << LpmEncoding.LevelShift)), s"a level holds at most 2^${LpmEncoding.LevelShift} nodes")
  /** Bits of a slot's pointer: enough for every node of a level and every result, and never
    * fewer than LPM_MIN_POINTER_BITS, so that every table up to 32,768 prefixes has the same
    * slot layout. */
  val pointerBits: Int = LpmEncoding.MinPointerBits max log2Up(nodes.max max results)
}

/** The lowest `levels` levels of an LPM tree kept in memory, node `n` of each in one beat
  * (docs/tables.md, "LPM levels in memory"): each such level is one read whose address the
  * level above chose, given `timing.latency` clocks, through an AXI4 master of its own, so
  * that a lookup a clock is served. The levels' nodes lie one after another from
  * `baseAddress` on, so that their ports may share one memory. */
case class LpmMemory(levels: Int, timing: MemoryTiming, axi: Axi4Config, baseAddress: BigInt = 0) {
  require(levels >= 1)
  require(axi.idWidth >= 1, "lookups and the window read under ids of their own")
}

/** An LPM table of up to `results` prefixes of `keyWidth`-bit keys in a B+tree of
  * `fanout`-slot nodes, its lowest levels in memory if `memory` says so. */
case class LpmTableConfig(keyWidth: Int, dataWidth: Int, fanout: Int, results: Int, memory: Option[LpmMemory] = None) {
  val geometry = LpmGeometry(fanout, results)
  require(nodeWidth <= 32 * WindowRegister.StagingWords,
    s"$fanout slots of $slotWidth bits exceed the ${32 * WindowRegister.StagingWords}-bit DATA a node is written through")
  def levels: Int = geometry.levels
  def nodes: Seq[Int] = geometry.nodes
  def pointerBits: Int = geometry.pointerBits
  /** Bits of one slot: flags and pointer low, the key above them. */
  def slotKeyShift: Int = LpmEncoding.PointerShift + pointerBits
  def slotWidth: Int = slotKeyShift + keyWidth
  def nodeWidth: Int = fanout * slotWidth
  def indexWidth: Int = log2Up(results)
  /** Bits of a prefix length, 0 to keyWidth. */
  def lengthWidth: Int = log2Up(keyWidth + 1)
  def memoryLevels: Int = memory.map(_.levels).getOrElse(0)
  def chipLevels: Int = levels - memoryLevels
  require(chipLevels >= 1, "the root level stays on chip")
  memory.foreach { m =>
    require(nodeWidth <= m.axi.dataWidth, s"a $nodeWidth-bit node is one beat of the ${m.axi.dataWidth}-bit memory port")
    require(m.baseAddress % beatBytes == 0 && m.baseAddress + BigInt(memoryNodes.sum) * beatBytes <= (BigInt(1) << m.axi.addressWidth),
      "the tree's memory: beat-aligned, inside the address space")
  }
  def beatBytes: Int = memory.map(_.axi.dataWidth / 8).getOrElse(0)
  /** Nodes of the levels in memory, the highest first: level j's node n is the beat at
    * baseAddress + (the nodes of the memory levels above it + n) * beatBytes. */
  def memoryNodes: Seq[Int] = nodes.drop(chipLevels)
  def memoryLevelBase(j: Int): BigInt = memory.get.baseAddress + BigInt(memoryNodes.take(j).sum) * beatBytes
  /** One clock per level on chip, the read budget of each level in memory, one clock for
    * the result RAM, one output register. */
  def latency: Int = chipLevels + memory.map(_.timing.latency * memoryLevels).getOrElse(0) + 2
  /** Tree bits, and result and prefix-store bits, for each prefix the table can hold. */
  def treeBitsPerPrefix: Double = nodes.sum.toDouble * nodeWidth / results
  def chipTreeBits: BigInt = BigInt(nodes.take(chipLevels).sum) * nodeWidth
  def resultBitsPerPrefix: Int = 1 + 8 + dataWidth + keyWidth + lengthWidth
}

/** The slot of a tree node and the INDEX of an LPM window (docs/tables.md). */
object LpmEncoding extends matcha.ContractGroup("LPM_", "LPM B+tree slot and window INDEX (docs/tables.md)") {
  val SlotValid = const("SLOT_VALID", 0x1, "the slot is in use (ignored in slot 0: a node's first slot always is)")
  val SlotHasResult = const("SLOT_HAS_RESULT", 0x2, "leaf slot: the pointer is a result index (else a miss)")
  val PointerShift = const("POINTER_SHIFT", 2, "a child node (inner level) or result index (leaf level), the table's pointer bits wide; its key above it")
  val MinPointerBits = const("MIN_POINTER_BITS", 15, "the fewest pointer bits a table has; a slot is POINTER_SHIFT + pointer bits + key bits wide, slot i at bit i * that")
  val ExtraFanoutMask = const("EXTRA_FANOUT_MASK", 0xff, "descriptor EXTRA: the slots of a node")
  val ExtraPointerShift = const("EXTRA_POINTER_SHIFT", 8, "descriptor EXTRA: the pointer bits of a slot")
  val ExtraMemoryShift = const("EXTRA_MEMORY_SHIFT", 16, "descriptor EXTRA: the levels kept in memory, the lowest ones")
  val ExtraFieldMask = const("EXTRA_FIELD_MASK", 0xff, "after either shift")
  val LevelShift = const("LEVEL_SHIFT", 20, "INDEX = level << 20 | node (levels << 20 | result)")
  val AddressMask = const("ADDRESS_MASK", (1 << LevelShift) - 1)
  val Late = const("WIN_LATE", WindowRegister.End, "64 bits, a table with levels in memory: lookups a level of which was not back in time (reading the low word latches the high word)")
  val WindowEnd = const("WIN_END", WindowRegister.End + 8, "the first offset past the window's registers")
  /** The descriptor's EXTRA word of a table. */
  def extra(c: LpmTableConfig): Int = c.fanout | c.pointerBits << ExtraPointerShift | c.memoryLevels << ExtraMemoryShift
}

/** One slot of a node, its fields from bit 0 up as LpmEncoding gives them. */
case class LpmSlot(keyWidth: Int, pointerBits: Int) extends Bundle {
  val valid = Bool()
  val hasResult = Bool()
  val pointer = UInt(pointerBits bits)
  val key = Bits(keyWidth bits)
}

case class LpmResult(c: LpmTableConfig) extends Bundle {
  val valid = Bool()
  val actionId = Bits(8 bits)
  val data = Bits(c.dataWidth bits)
}

/** The prefix a result belongs to, as the driver wrote it beside the result. The tree
  * holds boundaries, not prefixes, so a driver that opens a loaded table reads this. */
case class LpmPrefix(c: LpmTableConfig) extends Bundle {
  val prefix = Bits(c.keyWidth bits)
  val length = UInt(c.lengthWidth bits)
}

/** Longest-prefix match as a range search: one B+tree level per clock (docs/tables.md,
  * "LPM"). Each level reads the node the level above chose, compares the key with its slot
  * keys in parallel and passes the pointer of the last slot not above the key down; the leaf
  * slot's pointer is the result. A new key enters every clock. The driver builds the tree.
  *
  * With `c.memory`, the lowest levels are in memory: each is one read of the chosen node
  * through the read path every memory-backed table shares (MemoryReadPath), given a fixed
  * number of clocks; a lookup one of whose nodes was not back in time leaves `late`, a
  * miss that means nothing. Nothing stalls the next lookup. */
class LpmTable(val c: LpmTableConfig) extends Area with MatchUnit {
  import MemoryReadPath._
  def entries: Int = c.results
  val lookup = Flow(Bits(c.keyWidth bits))
  /** Clocks since a lookup last entered, up to `latency - 1`: every lookup in flight
    * leaves within `latency - quiet` clocks. */
  val quiet = Reg(UInt(log2Up(c.latency) bits)) init c.latency - 1
  when(lookup.valid) { quiet := 0 } elsewhen (quiet =/= c.latency - 1) { quiet := quiet + 1 }
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  val tree = c.nodes.take(c.chipLevels).map(n => Mem(Bits(c.nodeWidth bits), n))
  val results = Mem(LpmResult(c), c.results)
  /** Bus-only: written and read with the results, never on the lookup path. */
  val prefixes = matcha.Hw.blockRamWhenDeep(Mem(LpmPrefix(c), c.results))
  /** A port for each level in memory, the highest first. */
  val mems = c.memory.toSeq.flatMap(m => Seq.fill(m.levels)(Axi4(m.axi)))
  val isLate = c.memory.map(_ => Bool())
  override def late: Option[Bool] = isLate
  override def memories: Seq[Axi4] = mems

  case class Walk() extends Bundle {
    val valid = Bool()
    /** A level in memory did not answer in time: the rest says nothing. */
    val late = Bool()
    val key = Bits(c.keyWidth bits)
    val pointer = UInt(c.pointerBits bits)
    val hasResult = Bool()
  }

  val start = Walk()
  start.valid := lookup.valid
  start.late := False
  start.key := lookup.payload
  start.pointer := 0
  start.hasResult := False

  /** The pointer and result flag of `node`'s slot for `key`: the last valid slot whose key
    * is not above it. Slot 0 is taken whatever its key: the level above sent the key here
    * because it is not below the node's lower bound, and a node's first key may lag its
    * parent's during an update. */
  def choose(node: Bits, key: Bits): (UInt, Bool) = {
    val slots = (0 until c.fanout).map(j => node(j * c.slotWidth, c.slotWidth bits).as(LpmSlot(c.keyWidth, c.pointerBits)))
    val pointer = CombInit(slots(0).pointer)
    val hasResult = CombInit(slots(0).hasResult)
    for (j <- 1 until c.fanout) when(slots(j).valid && slots(j).key.asUInt <= key.asUInt) {
      pointer := slots(j).pointer
      hasResult := slots(j).hasResult
    }
    (pointer, hasResult)
  }

  /** `state` is on its way into on-chip level `i`'s RAM this clock (its pointer the node);
    * returns the state a clock later, pointing at the chosen slot's child or result. */
  def level(i: Int, state: Walk): Walk = {
    val node = tree(i).readSync(state.pointer.resize(log2Up(c.nodes(i)) max 1))
    val before = RegNext(state)
    before.valid.init(False)
    val after = Walk()
    after := before
    after.allowOverride()
    val (pointer, hasResult) = choose(node, before.key)
    after.pointer := pointer
    after.hasResult := hasResult
    after
  }

  case class Carried() extends Bundle {
    val key = Bits(c.keyWidth bits)
    val late = Bool()
  }
  case class Chosen() extends Bundle {
    val key = Bits(c.keyWidth bits)
    val late = Bool()
    val pointer = UInt(c.pointerBits bits)
    val hasResult = Bool()
  }

  /** Level `j` in memory: the node `state` points at is read through its port, and the state leaves
    * `timing.latency` clocks later pointing at the chosen slot's child or result, late if
    * the node was not back in time. A lookup already late reads node 0 and stays late. */
  class MemoryLevel(j: Int, m: LpmMemory, state: Walk) extends Area {
    val nodes = c.memoryNodes(j)
    val path = new MemoryReadPath(m.timing, log2Up(nodes) max 1, Carried(), Chosen())
    path.enter.valid := state.valid
    path.enter.payload.payload.key := state.key
    path.enter.payload.payload.late := state.late
    path.enter.bucket := state.late ? U(0, path.enter.bucket.getWidth bits) | state.pointer.resize(path.enter.bucket.getWidth)
    path.enter.timed := True

    val beat = path.returned(mems(j).r)
    val chosen = Chosen()
    chosen.key := beat.op.payload.key
    chosen.late := beat.op.payload.late
    val (pointer, hasResult) = choose(beat.data.resize(c.nodeWidth), beat.op.payload.key)
    chosen.pointer := pointer
    chosen.hasResult := hasResult
    path.answer(beat.valid && beat.okay && beat.inTime, beat.op.stamp, chosen)

    val out = Walk()
    out.valid := path.due.valid
    out.late := path.due.late || path.due.answer.late
    out.key := path.due.answer.key
    out.pointer := path.due.answer.pointer
    out.hasResult := path.due.answer.hasResult

    /** The read of the chosen node: its byte address and the lookups' read id. */
    val read = path.issue.read.translateWith(
      (U(c.memoryLevelBase(j), m.axi.addressWidth bits) + (path.issue.read.payload << log2Up(c.beatBytes)).resize(m.axi.addressWidth)) ##
        B(LookupId, m.axi.idWidth bits))
  }

  val onChip = (0 until c.chipLevels).foldLeft(start)((s, i) => level(i, s))
  val memoryWalk: Seq[MemoryLevel] = c.memory.toSeq.flatMap(m => (0 until m.levels).foldLeft(Seq.empty[MemoryLevel]) {
    (above, j) => above :+ new MemoryLevel(j, m, above.lastOption.map(_.out).getOrElse(onChip)).setName(s"memoryLevel_$j")
  })
  val walked = memoryWalk.lastOption.map(_.out).getOrElse(onChip)

  val answer = results.readSync(walked.pointer.resized)
  val last = RegNext(walked)
  last.valid.init(False)
  val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
  out.valid := last.valid
  out.hit := last.hasResult && answer.valid && !last.late
  out.actionId := answer.actionId
  out.actionData := answer.data
  out.entryIndex := last.pointer.resized
  result << out.stage()
  isLate.foreach(_ := RegNext(last.late))
  /** Lookups that left late. */
  val lateEvent = isLate.map(result.valid && _)

  /** INDEX = level << 20 | node for tree nodes, levels << 20 | r for results. */
  def indexValid(index: UInt): Bool = {
    val levelOf = (index >> LpmEncoding.LevelShift).resize(12)
    val address = index(LpmEncoding.LevelShift - 1 downto 0)
    // A count of 2^LevelShift takes every address (no 20-bit compare with it).
    def below(n: Int): Bool = if (n >= (1 << LpmEncoding.LevelShift)) True else address < n
    val inTree = c.nodes.zipWithIndex.map { case (n, i) => levelOf === i && below(n) }
    (inTree :+ (levelOf === c.levels && below(c.results))).reduce(_ || _)
  }

  /** The table's descriptor (kind 2, prefix store flag; geometry = levels, extra = fanout,
    * pointer bits and levels in memory) and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow = {
    require(c.memory.isEmpty || !features.counters, s"table $name: an LPM table with levels in memory has no per-entry counters")
    val w = bus.addTable(name, TableKind.Lpm, c.keyWidth, c.results, c.dataWidth, c.levels, c.latency, LpmEncoding.extra(c),
      Some(indexValid), features,
      // DATA carries a whole node, however narrow the action data: a node is written in one clock.
      stagedDataWidth = Some(c.dataWidth max c.nodeWidth))
    lateEvent.foreach { e =>
      w.addRegisters(LpmEncoding.Late, LpmEncoding.WindowEnd)
      w.counter64(e, LpmEncoding.Late)
    }
    w
  }

  /** Bus side: WRITE/READ of one whole node (DATA) or result (FLAGS + DATA, and its prefix
    * in KEY and PRIORITY); CLEAR zeroes every level, result and prefix. A node in memory is
    * one beat: written whole, read under the window's id; CLEAR writes every such beat
    * with zeros. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    val levelOf = (cmd.index >> LpmEncoding.LevelShift).resize(12)
    val address = cmd.index(LpmEncoding.LevelShift - 1 downto 0)
    val deepest = c.nodes.take(c.chipLevels).max max c.results
    val clearing = Reg(Bool()) init False
    val port = Reg(UInt(log2Up(deepest + 1) bits)) init 0
    val inMemory = levelOf >= c.chipLevels && levelOf < c.levels
    val reading = cmd.valid && cmd.op === TableOp.read
    val writing = cmd.valid && cmd.op === TableOp.write
    /** A RAM's bus port: its word at `address` for a READ or WRITE of `level`; CLEAR zeroes
      * its `words` words. */
    def busPort[T <: Data](ram: Mem[T], words: Int, level: Int, word: T): T = ram.readWriteSync(
      address = (clearing ? port | address).resized,
      data = clearing ? word.getZero | word,
      enable = (clearing && port < words) || ((reading || writing) && levelOf === level),
      write = clearing || writing
    )
    val nodeWord = cmd.entry.data.resize(c.nodeWidth)
    val nodeRead = tree.zipWithIndex.map { case (m, i) => busPort(m, c.nodes(i), i, nodeWord) }
    val resultWord = LpmResult(c)
    resultWord.valid := cmd.entry.valid
    resultWord.actionId := cmd.entry.actionId
    resultWord.data := cmd.entry.data.resized
    val resultRead = busPort(results, c.results, c.levels, resultWord)
    val prefixWord = LpmPrefix(c)
    prefixWord.prefix := cmd.entry.key
    prefixWord.length := cmd.entry.priority.asUInt.resized
    val prefixRead = busPort(prefixes, c.results, c.levels, prefixWord)
    val readPending = RegNext(reading && !inMemory) init False
    val readLevel = RegNext(levelOf)
    window.done := False
    val isResult = readLevel === c.levels
    val staged = c.dataWidth max c.nodeWidth
    window.readBack.payload.valid := isResult ? resultRead.valid | True
    window.readBack.actionId := isResult ? resultRead.actionId | B(0, 8 bits)
    window.readBack.key := isResult ? prefixRead.prefix | B(0, c.keyWidth bits)
    window.readBack.mask := 0
    window.readBack.priority := isResult ? prefixRead.length.asBits.resize(32) | B(0, 32 bits)
    val nodeReadBack = if (tree.size > 1) Vec(nodeRead)(readLevel.resize(log2Up(tree.size))) else nodeRead.head
    // A WRITE completes once every lookup that may have read the old word has left the
    // pipeline: the driver's next write (a split's shrink, a merge's free) relies on it.
    // Those in flight entered `quiet` clocks ago or earlier (or now, and may read the old
    // word), so they are gone in `latency - quiet` clocks: on a table that no lookup
    // reached for `latency` clocks, the next clock.
    val drain = Reg(UInt(log2Up(c.latency + 1) bits)) init 0
    def drainInFlight(): Unit = drain := c.latency - (lookup.valid ? U(0) | quiet)
    when(writing && !inMemory) { drainInFlight() }
    when(drain =/= 0) {
      drain := drain - 1
      when(drain === 1) { window.done := True }
    }
    when(readPending) { window.done := True }
    val chipCleared = RegInit(False)
    when(cmd.valid && cmd.op === TableOp.clear) { clearing := True; port := 0; chipCleared := False }
    when(clearing) {
      port := port + 1
      when(port === deepest - 1) { clearing := False; chipCleared := True }
    }

    /** The levels in memory, each through its own port: a node's beat is written (all its
      * bytes) or read; CLEAR writes zeros to every node of every level in memory, the levels
      * at once. A write completes when its response is back and then, as on chip, once the
      * lookups that may have read the old beat have left. */
    val inMemoryAccess = c.memory.map { m => new Area {
      val memoryLevel = (levelOf - c.chipLevels).resize(log2Up(c.memoryLevels + 1))
      val fullBeat = B((BigInt(1) << c.beatBytes) - 1, c.beatBytes bits)
      /** CLEAR's writes are out or being made. */
      val clearWrites = RegInit(False)
      val levels = memoryWalk.zipWithIndex.map { case (walk, j) => new Area {
        val axi = mems(j)
        val nodes = c.memoryNodes(j)
        val base = U(c.memoryLevelBase(j), m.axi.addressWidth bits)
        val addressed = cmd.valid && inMemory && memoryLevel === j
        val nodeAddress = base + (address << log2Up(c.beatBytes)).resize(m.axi.addressWidth)
        val beats = new WindowBeats(axi, c.beatBytes)
        /** Writes of the running command on this port, and how many have been answered. */
        val writes = Reg(UInt(log2Up(nodes + 1) bits)) init 0
        val answered = Reg(UInt(log2Up(nodes + 1) bits)) init 0
        val clearing = RegInit(False)
        val clearAddress = Reg(UInt(m.axi.addressWidth bits))
        val clearLeft = Reg(UInt(log2Up(nodes + 1) bits))
        when(axi.b.fire) { answered := answered + 1 }
        when(addressed && cmd.op === TableOp.write) {
          beats.write(nodeAddress, nodeWord.resized, fullBeat)
          writes := 1
          answered := 0
        }
        when(addressed && cmd.op === TableOp.read) { beats.read(nodeAddress) }
        when(cmd.valid && cmd.op === TableOp.clear) {
          clearing := True
          clearAddress := base
          clearLeft := nodes
          writes := nodes
          answered := 0
        }
        when(clearing && beats.free) {
          beats.write(clearAddress, B(0, m.axi.dataWidth bits), fullBeat)
          clearAddress := clearAddress + c.beatBytes
          clearLeft := clearLeft - 1
          when(clearLeft === 1) { clearing := False }
        }
        /** Every write of the running command is made and answered. */
        val written = !clearing && answered === writes
        beats.drive(Seq(walk.read))
      }.setName(s"level_$j")}
      /** A node write waits for its response. */
      val nodeWrite = RegInit(False)
      when(cmd.valid && inMemory && cmd.op === TableOp.write) { nodeWrite := True }
      val allWritten = levels.map(_.written).reduce(_ && _)
      when(nodeWrite && allWritten) {
        nodeWrite := False
        drainInFlight()
      }
      when(cmd.valid && cmd.op === TableOp.clear) { clearWrites := True }
      val cleared = clearWrites && allWritten
      val readBack = levels.map(_.beats.readBack).reduce(_ || _)
      when(readBack) { window.done := True }
    }}
    // CLEAR is done when the chip's RAMs are, and every beat in memory is written.
    when(chipCleared && inMemoryAccess.map(_.cleared).getOrElse(True)) {
      chipCleared := False
      inMemoryAccess.foreach(_.clearWrites := False)
      window.done := True
    }

    window.readBack.valid := readPending || inMemoryAccess.map(_.readBack).getOrElse(False)
    window.readBack.data := (isResult ? resultRead.data.resize(staged) | nodeReadBack.resize(staged))
    for (a <- inMemoryAccess; l <- a.levels) when(l.beats.readBack) { window.readBack.data := l.beats.readData.resize(staged) }
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit && !isLate.getOrElse(False)
  }
}

/** A single LPM table behind its control bus, the unit tested on its own. */
object LpmTableUnit {
  def apply(c: LpmTableConfig, definitionName: String = "") =
    new MatchUnitTop(if (definitionName.nonEmpty) definitionName else s"matcha_lpm${c.keyWidth}_table", c.keyWidth, c.dataWidth,
      c.indexWidth, new LpmTable(c))
}

/** LPM tables in a program: `size` prefixes in a B+tree of TableSpec.lpmFanout slots a
  * node. */
object LpmKind extends MatchKind(TableKind.Lpm) {
  def config(t: TableSpec, keyWidth: Int) = LpmTableConfig(keyWidth, t.dataWidth, t.lpmFanout, t.size,
    t.memory.map { m =>
      require(m.bucketBeats == 1, s"LPM table ${t.name}: a node is one beat of its memory port")
      LpmMemory(t.lpmMemoryLevels, MemoryTiming(m.latency, m.memoryLatency, m.outstanding), m.axi, m.baseAddress)
    })
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  /** The unit, its geometry and memory per prefix printed once as it is built. */
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = {
    val c = config(t, keyWidth)
    println(f"[matcha] LPM table ${t.name}: ${c.levels} levels of ${c.fanout}-slot nodes (${c.nodes.mkString(", ")}), " +
      f"${c.treeBitsPerPrefix}%.0f tree + ${c.resultBitsPerPrefix} result bits a prefix" +
      (if (c.memoryLevels > 0) s", the lowest ${c.memoryLevels} levels in memory" else ""))
    new LpmTable(c)
  }
  override def json(t: TableSpec): Seq[(String, ujson.Value)] = {
    val g = LpmGeometry(t.lpmFanout, t.size)
    Seq("lpm" -> ujson.Obj("fanout" -> g.fanout, "levels" -> g.levels, "nodes" -> ujson.Arr(g.nodes.map(n => ujson.Num(n)): _*),
      "pointerBits" -> g.pointerBits, "memoryLevels" -> t.lpmMemoryLevels)) ++
      t.memory.map(m => "memory" -> matcha.program.ProgramJson.memoryJson(t.name, t.lpmMemoryLevels, m))
  }
}

/** The LPM unit of the scale benchmark (bench/scale/run_lpm.py): 512 IPv4 prefixes in
  * 10-slot nodes (4 levels), the two lowest each on a 512-bit port like a DDR4 channel's, each
  * level given 512 clocks for a memory of up to 320, under `--out DIR`. */
object LpmMemSweep {
  val config = LpmTableConfig(32, 32, fanout = 10, results = 512, memory = Some(LpmMemory(2,
    MemoryTiming(latency = 512, memoryLatency = 320, outstanding = 512),
    Axi4Config(addressWidth = 34, dataWidth = 512, idWidth = 8, useRegion = false))))

  def main(args: Array[String]): Unit = {
    val out = args.sliding(2).collectFirst { case Array("--out", d) => d }.getOrElse("../build/bench/lpm-mem-sweep/rtl")
    new java.io.File(out).mkdirs()
    matcha.Generate.spinal(out).generateVerilog(matcha.Generate.top(LpmTableUnit(config, "matcha_lpm32_mem_bench"))())
  }
}
