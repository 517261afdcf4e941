// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._

/** The shape of a B+tree of `fanout`-slot nodes over the boundaries of up to `results`
  * prefixes (docs/tables.md, "LPM"): every node below the root is kept at least
  * ceil(fanout/2) full, which fixes the levels and the nodes each level needs, whatever the
  * key width. */
case class LpmGeometry(fanout: Int, results: Int) {
  require(fanout >= 3, "a B+tree node has at least 3 slots (a half-full node must hold 2)")
  require(results >= 1 && results <= (1 << LpmEncoding.PointerBits), "result indices are 15 bits")
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
  require(nodes.forall(_ <= (1 << LpmEncoding.PointerBits)), "child pointers are 15 bits")
}

/** An LPM table of up to `results` prefixes of `keyWidth`-bit keys in a B+tree of
  * `fanout`-slot nodes. */
case class LpmTableConfig(keyWidth: Int, dataWidth: Int, fanout: Int, results: Int) {
  val geometry = LpmGeometry(fanout, results)
  require(nodeWidth <= 32 * WindowRegister.StagingWords,
    s"$fanout slots of $slotWidth bits exceed the ${32 * WindowRegister.StagingWords}-bit DATA a node is written through")
  def levels: Int = geometry.levels
  def nodes: Seq[Int] = geometry.nodes
  /** Bits of one slot: flags and pointer low, the key above them. */
  def slotWidth: Int = LpmEncoding.SlotKeyShift + keyWidth
  def nodeWidth: Int = fanout * slotWidth
  def indexWidth: Int = log2Up(results)
  /** Bits of a prefix length, 0 to keyWidth. */
  def lengthWidth: Int = log2Up(keyWidth + 1)
  /** One clock per level, one for the result RAM, one output register. */
  def latency: Int = levels + 2
  /** Tree bits, and result and prefix-store bits, for each prefix the table can hold. */
  def treeBitsPerPrefix: Double = nodes.sum.toDouble * nodeWidth / results
  def resultBitsPerPrefix: Int = 1 + 8 + dataWidth + keyWidth + lengthWidth
}

/** The slot of a tree node and the INDEX of an LPM window (docs/tables.md). */
object LpmEncoding extends matcha.ContractGroup("LPM_", "LPM B+tree slot and window INDEX (docs/tables.md)") {
  val SlotValid = const("SLOT_VALID", 0x1, "the slot is in use (ignored in slot 0: a node's first slot always is)")
  val SlotHasResult = const("SLOT_HAS_RESULT", 0x2, "leaf slot: the pointer is a result index (else a miss)")
  val PointerShift = const("POINTER_SHIFT", 2, "a child node (inner level) or result index (leaf level)")
  val PointerBits = const("POINTER_BITS", 15)
  val PointerMask = const("POINTER_MASK", (1 << PointerBits) - 1, "after the shift")
  val SlotKeyShift = const("SLOT_KEY_SHIFT", PointerShift + PointerBits, "the slot's key, key-width bits; a slot is SLOT_KEY_SHIFT + key bits wide, slot i at bit i * that")
  val LevelShift = const("LEVEL_SHIFT", 20, "INDEX = level << 20 | node (levels << 20 | result)")
  val AddressMask = const("ADDRESS_MASK", (1 << LevelShift) - 1)
}

/** One slot of a node, its fields from bit 0 up as LpmEncoding gives them. */
case class LpmSlot(keyWidth: Int) extends Bundle {
  val valid = Bool()
  val hasResult = Bool()
  val pointer = UInt(LpmEncoding.PointerBits bits)
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
  * slot's pointer is the result. A new key enters every clock. The driver builds the tree. */
class LpmTable(c: LpmTableConfig) extends Area with MatchUnit {
  def entries: Int = c.results
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  val tree = c.nodes.map(n => Mem(Bits(c.nodeWidth bits), n))
  val results = Mem(LpmResult(c), c.results)
  /** Bus-only: written and read with the results, never on the lookup path. */
  val prefixes = matcha.Hw.blockRamWhenDeep(Mem(LpmPrefix(c), c.results))

  case class Walk() extends Bundle {
    val valid = Bool()
    val key = Bits(c.keyWidth bits)
    val pointer = UInt(LpmEncoding.PointerBits bits)
    val hasResult = Bool()
  }

  val start = Walk()
  start.valid := lookup.valid
  start.key := lookup.payload
  start.pointer := 0
  start.hasResult := False

  /** `state` is on its way into level `i`'s RAM this clock (its pointer the node); returns
    * the state a clock later, pointing at the chosen slot's child or result. Slot 0 is taken
    * whatever its key: the level above sent the key here because it is not below the node's
    * lower bound, and a node's first key may lag its parent's during an update. */
  def level(i: Int, state: Walk): Walk = {
    val node = tree(i).readSync(state.pointer.resize(log2Up(c.nodes(i)) max 1))
    val before = RegNext(state)
    before.valid.init(False)
    val slots = (0 until c.fanout).map(j => node(j * c.slotWidth, c.slotWidth bits).as(LpmSlot(c.keyWidth)))
    val after = Walk()
    after := before
    after.allowOverride()
    after.pointer := slots(0).pointer
    after.hasResult := slots(0).hasResult
    // Valid slots come first, sorted: the last one not above the key wins.
    for (j <- 1 until c.fanout) when(slots(j).valid && slots(j).key.asUInt <= before.key.asUInt) {
      after.pointer := slots(j).pointer
      after.hasResult := slots(j).hasResult
    }
    after
  }
  val walked = c.nodes.indices.foldLeft(start)((s, i) => level(i, s))

  val answer = results.readSync(walked.pointer.resized)
  val last = RegNext(walked)
  last.valid.init(False)
  val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
  out.valid := last.valid
  out.hit := last.hasResult && answer.valid
  out.actionId := answer.actionId
  out.actionData := answer.data
  out.entryIndex := last.pointer.resized
  result << out.stage()

  /** INDEX = level << 20 | node for tree nodes, levels << 20 | r for results. */
  def indexValid(index: UInt): Bool = {
    val levelOf = (index >> LpmEncoding.LevelShift).resize(12)
    val address = index(LpmEncoding.LevelShift - 1 downto 0)
    val inTree = c.nodes.zipWithIndex.map { case (n, i) => levelOf === i && address < n }
    (inTree :+ (levelOf === c.levels && address < c.results)).reduce(_ || _)
  }

  /** The table's descriptor (kind 2, prefix store flag; geometry = levels, extra = fanout)
    * and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow =
    bus.addTable(name, TableKind.Lpm, c.keyWidth, c.results, c.dataWidth, c.levels, c.latency, c.fanout, Some(indexValid), features,
      // DATA carries a whole node, however narrow the action data: a node is written in one clock.
      stagedDataWidth = Some(c.dataWidth max c.nodeWidth))

  /** Bus side: WRITE/READ of one whole node (DATA) or result (FLAGS + DATA, and its prefix
    * in KEY and PRIORITY); CLEAR zeroes every level, result and prefix. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    val levelOf = (cmd.index >> LpmEncoding.LevelShift).resize(12)
    val address = cmd.index(LpmEncoding.LevelShift - 1 downto 0)
    val deepest = c.nodes.max max c.results
    val clearing = Reg(Bool()) init False
    val port = Reg(UInt(log2Up(deepest + 1) bits)) init 0
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
    val readPending = RegNext(reading) init False
    val readLevel = RegNext(levelOf)
    window.done := False
    window.readBack.valid := readPending
    val isResult = readLevel === c.levels
    val staged = c.dataWidth max c.nodeWidth
    window.readBack.payload.valid := isResult ? resultRead.valid | True
    window.readBack.actionId := isResult ? resultRead.actionId | B(0, 8 bits)
    window.readBack.key := isResult ? prefixRead.prefix | B(0, c.keyWidth bits)
    window.readBack.mask := 0
    window.readBack.priority := isResult ? prefixRead.length.asBits.resize(32) | B(0, 32 bits)
    val nodeReadBack = Vec(nodeRead)(readLevel.resize(log2Up(c.levels max 2)))
    window.readBack.data := isResult ? resultRead.data.resize(staged) | nodeReadBack.resize(staged)
    // A WRITE completes once every lookup that may have read the old word has left the
    // pipeline: the driver's next write (a split's shrink, a merge's free) relies on it.
    val drain = Reg(UInt(log2Up(c.latency + 1) bits)) init 0
    when(writing) { drain := c.latency }
    when(drain =/= 0) {
      drain := drain - 1
      when(drain === 1) { window.done := True }
    }
    when(readPending) { window.done := True }
    when(cmd.valid && cmd.op === TableOp.clear) { clearing := True; port := 0 }
    when(clearing) {
      port := port + 1
      when(port === deepest - 1) { clearing := False; window.done := True }
    }
    window.hit := result.valid && result.hit
    window.miss := result.valid && !result.hit
  }
}

/** A single LPM table behind its control bus, the unit tested on its own. */
object LpmTableUnit {
  def apply(c: LpmTableConfig) =
    new MatchUnitTop(s"matcha_lpm${c.keyWidth}_table", c.keyWidth, c.dataWidth, c.indexWidth, new LpmTable(c))
}

/** LPM tables in a program: `size` prefixes in a B+tree of TableSpec.lpmFanout slots a
  * node. */
object LpmKind extends MatchKind(TableKind.Lpm) {
  def config(t: TableSpec, keyWidth: Int) = LpmTableConfig(keyWidth, t.dataWidth, t.lpmFanout, t.size)
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  /** The unit, its geometry and memory per prefix printed once as it is built. */
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = {
    val c = config(t, keyWidth)
    println(f"[matcha] LPM table ${t.name}: ${c.levels} levels of ${c.fanout}-slot nodes (${c.nodes.mkString(", ")}), " +
      f"${c.treeBitsPerPrefix}%.0f tree + ${c.resultBitsPerPrefix} result bits a prefix")
    new LpmTable(c)
  }
  override def json(t: TableSpec): Seq[(String, ujson.Value)] = {
    val g = LpmGeometry(t.lpmFanout, t.size)
    Seq("lpm" -> ujson.Obj("fanout" -> g.fanout, "levels" -> g.levels, "nodes" -> ujson.Arr(g.nodes.map(n => ujson.Num(n)): _*)))
  }
}
