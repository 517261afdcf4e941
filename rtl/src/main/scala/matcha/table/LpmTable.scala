// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.{MatchKind, TableSpec}
import spinal.core._
import spinal.lib._

/** A multibit trie of `levels` equal strides; every level below the first has `nodes`
  * nodes; `results` entries hold the action of each prefix. */
case class LpmTableConfig(keyWidth: Int, dataWidth: Int, levels: Int, nodes: Int, results: Int) {
  require(keyWidth % levels == 0 && keyWidth / levels <= 16, "equal strides of at most 16 bits")
  require(nodes <= (1 << LpmEncoding.FieldBits) && results <= (1 << LpmEncoding.FieldBits), "child and result pointers are 15 bits")
  def stride: Int = keyWidth / levels
  def entries(level: Int): Int = (if (level == 0) 1 else nodes) << stride
  def indexWidth: Int = log2Up(results)
  /** Bits of a prefix length, 0 to keyWidth. */
  def lengthWidth: Int = log2Up(keyWidth + 1)
  /** One clock per level, one for the result RAM, one output register. */
  def latency: Int = levels + 2
}

/** The 32-bit trie entry (TrieEntry) and the INDEX of an LPM window (docs/tables.md). */
object LpmEncoding extends matcha.ContractGroup("LPM_", "LPM trie entry word and window INDEX (docs/tables.md)") {
  val FieldBits = const("FIELD_BITS", 15, "a child node or a result index")
  val FieldMask = const("FIELD_MASK", (1 << FieldBits) - 1)
  val HasResult = const("HAS_RESULT", 1 << FieldBits, "the result index is bits 14..0")
  val ChildShift = const("CHILD_SHIFT", FieldBits + 1)
  val HasChild = constLong("HAS_CHILD", 1L << (2 * FieldBits + 1))
  val LevelShift = const("LEVEL_SHIFT", 20, "INDEX = level << 20 | address")
  val AddressMask = const("ADDRESS_MASK", (1 << LevelShift) - 1)
}

/** The 32-bit trie entry: its fields from bit 0 up, as LpmEncoding gives them. */
case class TrieEntry() extends Bundle {
  val result = UInt(LpmEncoding.FieldBits bits)
  val hasResult = Bool()
  val child = UInt(LpmEncoding.FieldBits bits)
  val hasChild = Bool()
}

case class LpmResult(c: LpmTableConfig) extends Bundle {
  val valid = Bool()
  val actionId = Bits(8 bits)
  val data = Bits(c.dataWidth bits)
}

/** The prefix a result belongs to, as the driver wrote it beside the result. The trie
  * alone cannot give the prefix set back (a prefix covered by longer ones of its level
  * leaves no entry), so a driver that opens a loaded table reads this instead. */
case class LpmPrefix(c: LpmTableConfig) extends Bundle {
  val prefix = Bits(c.keyWidth bits)
  val length = UInt(c.lengthWidth bits)
}

/** Longest-prefix match: one trie level per clock (docs/tables.md, "LPM"). Each level's RAM
  * is read with the address the previous level's entry gives, so a new key enters every
  * clock; the best result seen so far travels with the key. The driver builds the image. */
class LpmTable(c: LpmTableConfig) extends Area with MatchUnit {
  def entries: Int = c.results
  val lookup = Flow(Bits(c.keyWidth bits))
  val result = Flow(LookupResult(c.dataWidth, c.indexWidth))
  val trie = (0 until c.levels).map(i => Mem(TrieEntry(), c.entries(i)))
  val results = Mem(LpmResult(c), c.results)
  /** Bus-only: written and read with the results, never on the lookup path. */
  val prefixes = Mem(LpmPrefix(c), c.results)
  def chunk(key: Bits, level: Int): UInt = key(c.keyWidth - (level + 1) * c.stride, c.stride bits).asUInt

  case class Walk() extends Bundle {
    val valid = Bool()
    val key = Bits(c.keyWidth bits)
    val active = Bool()
    val node = UInt(LpmEncoding.FieldBits bits)
    val hasBest = Bool()
    val best = UInt(LpmEncoding.FieldBits bits)
  }

  val start = Walk()
  start.valid := lookup.valid
  start.key := lookup.payload
  start.active := True
  start.node := 0
  start.hasBest := False
  start.best := 0

  /** `state` is on its way into level `i`'s RAM this clock; returns the state a clock later,
    * updated with that level's entry. */
  def level(i: Int, state: Walk): Walk = {
    val address = if (i == 0) chunk(state.key, 0) else (state.node.resize(log2Up(c.nodes)) @@ chunk(state.key, i))
    val entry = trie(i).readSync(address.resized)
    val before = RegNext(state)
    before.valid.init(False)
    val after = Walk()
    after := before
    after.allowOverride()
    when(before.active) {
      when(entry.hasResult) { after.hasBest := True; after.best := entry.result }
      after.active := entry.hasChild
      after.node := entry.child
    }
    after
  }
  val walked = (0 until c.levels).foldLeft(start)((s, i) => level(i, s))

  val answer = results.readSync(walked.best.resized)
  val last = RegNext(walked)
  last.valid.init(False)
  val out = Flow(LookupResult(c.dataWidth, c.indexWidth))
  out.valid := last.valid
  out.hit := last.hasBest && answer.valid
  out.actionId := answer.actionId
  out.actionData := answer.data
  out.entryIndex := last.best.resized
  result << out.stage()

  /** INDEX = level << 20 | address for trie entries, levels << 20 | r for results. */
  def indexValid(index: UInt): Bool = {
    val levelOf = (index >> LpmEncoding.LevelShift).resize(8)
    val address = index(LpmEncoding.LevelShift - 1 downto 0)
    val inTrie = (0 until c.levels).map(i => levelOf === i && address < c.entries(i))
    (inTrie :+ (levelOf === c.levels && address < c.results)).reduce(_ || _)
  }

  /** The table's descriptor (kind 2, prefix store flag) and control window on `bus`. */
  def addWindow(bus: ControlBus, name: String, features: WindowFeatures): TableWindow =
    bus.addTable(name, TableKind.Lpm, c.keyWidth, c.results, c.dataWidth, c.levels, c.latency, c.nodes, Some(indexValid), features,
      // DATA carries a whole trie entry, however narrow the action data.
      stagedDataWidth = Some(c.dataWidth max 32))

  /** Bus side: WRITE/READ of one trie entry (DATA[0]) or result (FLAGS + DATA, and its
    * prefix in KEY and PRIORITY); CLEAR zeroes every level, result and prefix. */
  def attach(window: TableWindow): Unit = new Area {
    val cmd = window.commands
    val levelOf = (cmd.index >> LpmEncoding.LevelShift).resize(8)
    val address = cmd.index(LpmEncoding.LevelShift - 1 downto 0)
    val deepest = (0 until c.levels).map(c.entries).max max c.results
    val clearing = Reg(Bool()) init False
    val port = Reg(UInt(log2Up(deepest) bits)) init 0
    val reading = cmd.valid && cmd.op === TableOp.read
    val writing = cmd.valid && cmd.op === TableOp.write
    /** A RAM's bus port: its word at `address` for a READ or WRITE of `level`; CLEAR zeroes
      * its `words` words. */
    def busPort[T <: Data](ram: Mem[T], words: Int, level: Int, word: T): T = ram.readWriteSync(
      address = (clearing ? port | address).resized,
      data = clearing ? word.getZero | word,
      enable = (clearing && port.resize(port.getWidth + 1) < words) || ((reading || writing) && levelOf === level),
      write = clearing || writing
    )
    val trieWord = TrieEntry()
    trieWord.assignFromBits(cmd.entry.data.resize(32))
    val trieRead = trie.zipWithIndex.map { case (m, i) => busPort(m, c.entries(i), i, trieWord) }
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
    window.readBack.payload.valid := isResult ? resultRead.valid | True
    window.readBack.actionId := isResult ? resultRead.actionId | B(0, 8 bits)
    window.readBack.key := isResult ? prefixRead.prefix | B(0, c.keyWidth bits)
    window.readBack.mask := 0
    window.readBack.priority := isResult ? prefixRead.length.asBits.resize(32) | B(0, 32 bits)
    val trieWordRead = Vec(trieRead.map(_.asBits))(readLevel.resize(log2Up(c.levels max 2)))
    window.readBack.data := isResult ? resultRead.data.resize(c.dataWidth max 32) | trieWordRead.resize(c.dataWidth max 32)
    // A WRITE completes once every lookup that may have read the old word has left the
    // pipeline, so that the driver's next command cannot change what it still points at.
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

/** LPM tables in a program: `size` prefixes (results) in a trie of TableSpec.lpmLevels
  * levels with TableSpec.lpmNodes nodes each below the first. */
object LpmKind extends MatchKind(TableKind.Lpm) {
  def config(t: TableSpec, keyWidth: Int) = LpmTableConfig(keyWidth, t.dataWidth, t.lpmLevels, t.lpmNodes, t.size)
  def latency(t: TableSpec, keyWidth: Int): Int = config(t, keyWidth).latency
  def unit(t: TableSpec, keyWidth: Int): MatchUnit = new LpmTable(config(t, keyWidth))
  override def json(t: TableSpec): Seq[(String, ujson.Value)] =
    Seq("lpm" -> ujson.Obj("levels" -> t.lpmLevels, "nodes" -> t.lpmNodes))
}
