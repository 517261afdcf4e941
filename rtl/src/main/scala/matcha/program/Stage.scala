// SPDX-License-Identifier: Apache-2.0
package matcha.program

import matcha.{Hw, PhvAccess, PhvLayout}
import matcha.table._
import spinal.core._
import spinal.lib._
import spinal.lib.bus.amba4.axi.Axi4

object Stage {
  /** The valid bit of the header a field belongs to (`hdr.ipv4.dst` → `hdr.ipv4.valid`);
    * metadata fields are always valid. */
  def validOf(field: String): String =
    if (field.startsWith("hdr.") || field.startsWith("push.")) field.substring(0, field.lastIndexOf('.')) + ".valid"
    else field

  /** A PHV field as a key reads it: 0 when its header is not valid. */
  def field(phv: PhvAccess, name: String): Bits = {
    val v = validOf(name)
    if (v == name) phv(name) else phv.bool(v) ? phv(name) | B(0, phv.width(name) bits)
  }

  /** Whether a frame meets a condition (`Condition`): every term holds. */
  def holds(phv: PhvAccess, terms: Seq[String]): Bool =
    terms.map(t => if (Condition.negated(t)) !phv.bool(Condition.field(t)) else phv.bool(t)).foldLeft(True)(_ && _)

  /** One key part: its field, or the first of its fields whose header is valid (0 if none). */
  def keyField(phv: PhvAccess, k: KeyField): Bits =
    if (k.fields.size == 1) field(phv, k.fields.head)
    else PriorityMux(k.fields.map(f => phv.bool(validOf(f)) -> phv(f)) :+ (True -> B(0, phv.width(k.fields.head) bits)))

  /** The widths of the table's key fields, first (most significant) first. */
  def fieldWidths(t: TableSpec, layout: PhvLayout): Seq[Int] = t.key.map { k =>
    val widths = k.fields.map(layout(_).width).distinct
    require(widths.size == 1, s"table ${t.name}: firstValid fields ${k.fields.mkString(", ")} differ in width")
    widths.head
  }

  def keyWidth(t: TableSpec, layout: PhvLayout): Int = fieldWidths(t, layout).sum

  /** Whether a header whose field the check reads (IpCheck.fields) holds `v` fails it. */
  def fails(check: IpCheck, v: UInt): Bool = check match {
    case IpCheck.Checksum | IpCheck.Length => v === 0
    case IpCheck.Options => v =/= 5
    case IpCheck.Ttl => v <= 1
  }

  def tableLatency(t: TableSpec, layout: PhvLayout): Int = t.kind.latency(t, keyWidth(t, layout))

  /** Clocks a stage's meter adds: its request leaves with the lookup results, its colour
    * meets the PHV before the actions apply. */
  def meterLatency(tables: Seq[TableSpec]): Int =
    if (tables.exists(_.meters.nonEmpty)) MeterTableConfig(meters = 2).latency else 0

  /** A clock to form the keys, the slowest lookup, the meter if any, a clock to apply the
    * actions. */
  def latency(tables: Seq[TableSpec], layout: PhvLayout): Int =
    tables.map(tableLatency(_, layout)).max + meterLatency(tables) + 2
}

/** A stage of the chain between parser and deparser: a PHV in every clock, the same PHV
  * (as the stage leaves it) a fixed `latency` clocks later. The PHV comes in as `phv.in`
  * lays it out, waits for the lookups as `phv.carried` and leaves as `phv.out` (PhvPlan):
  * fields nothing after the keys reads are not carried, and writes to fields nothing after
  * the stage reads are not made. */
trait PipelineStage extends Area {
  def input: Flow[Bits]
  def output: Flow[Bits]
  def latency: Int
  /** The memory ports of its memory-backed tables, by port name (TableMemory.portNames). */
  def memories: Seq[(String, Axi4)] = Nil
}

/** `input` `latency` clocks later, the PHV in a small RAM (distributed RAM on an FPGA)
  * rather than a register per bit per clock. The RAM is one entry deeper than the delay, so
  * the entry read is never the one being written. */
class DelayLine(width: Int, latency: Int) extends Area {
  require(latency >= 1)
  val input = Flow(Bits(width bits))
  val depth = 1 << log2Up(latency + 1)
  val ram = Mem(Bits(width bits), depth)
  val pointer = Reg(UInt(log2Up(depth) bits)) init 0
  pointer := pointer + 1
  ram.write(pointer, input.payload)
  val output = Flow(Bits(width bits))
  output.valid := Delay(input.valid, latency, init = False)
  output.payload := ram.readAsync(pointer - latency)
}

/** One match unit of a stage: the table of its kind, its control window and, if the
  * description asks for them, its per-entry counters. */
class StageTable(val spec: TableSpec, layout: PhvLayout, bus: ControlBus) extends Area {
  val keyWidth = Stage.keyWidth(spec, layout)
  val latency = Stage.tableLatency(spec, layout)
  val features = WindowFeatures(spec.counters, Some(spec.actionId(spec.default) -> spec.defaultData))
  val lookup = Flow(Bits(keyWidth bits))
  val frameLen = UInt(layout("meta.frameLen").width bits)

  val BuiltTable(result, window, entries, late, memories) = spec.kind.build(spec, Stage.fieldWidths(spec, layout), bus, features, lookup)

  /** The action id and data a lookup's result applies: the entry's on a hit, the default on a miss. */
  def chosenAction(result: Flow[LookupResult]): (Bits, Bits) =
    (result.hit ? result.actionId | window.defaultAction.get, result.hit ? result.actionData | window.defaultData.get)

  val counters = spec.counters generate new Area {
    val unit = new EntryCounters(entries, frameLen.getWidth, drain = latency + 2)
    unit.events.valid := result.valid && result.hit
    unit.events.index := result.entryIndex.resized
    unit.events.bytes := Delay(frameLen, latency)
    unit.restart := False
    unit.attach(window)
  }
}

/** The PHV that waits for a step's lookups: the fields `phv.carried` holds, as the step
  * receives them. It goes into the delay line in the clock the keys are taken, so the key
  * clock needs no register of its own for it (the delay line is one clock longer). */
object StageKeys {
  def carried(input: Flow[Bits], phv: StepPhv): Flow[Bits] = {
    val out = Flow(Bits(phv.carried.width bits))
    out.valid := input.valid
    out.payload := PhvLayout.convert(input.payload, phv.in, phv.carried)
    out
  }
}

/** A stage of the pipeline: every table's lookup starts in the same clock from the stage's
  * input PHV, the PHV waits for the slowest lookup, then each table's action (its hit's, or
  * the default on a miss) is applied in table order (docs/pipeline.md). */
class MatchStage(specs: Seq[TableSpec], val phv: StepPhv, bus: ControlBus, meterSpecs: Seq[MeterSpec] = Nil)
    extends PipelineStage {
  val layout = phv.full
  val input = Flow(Bits(phv.in.width bits))
  val tables = specs.map(s => new StageTable(s, layout, bus))
  val lookupLatency = tables.map(_.latency).max
  val meterLatency = Stage.meterLatency(specs)
  def latency: Int = lookupLatency + meterLatency + 2
  override def memories: Seq[(String, Axi4)] =
    tables.flatMap(t => TableMemory.portNames(s"m_axi_${t.spec.name}", t.memories.size).zip(t.memories))

  /** Clock 0: the keys. */
  val keys = new Area {
    val fields = new PhvAccess(input.payload, phv.in)
    val parsed = fields("meta.parseError") === 0
    val active = specs.map(s => RegNext(input.valid && parsed && Stage.holds(fields, s.applyIf)) init False)
    for ((t, a) <- tables.zip(active)) {
      t.lookup.valid := a
      t.lookup.payload := RegNext(Hw.msbFirst(t.spec.key.map(Stage.keyField(fields, _))))
      if (t.spec.counters) t.frameLen := RegNext(fields.u("meta.frameLen")) else t.frameLen.assignDontCare()
    }
    val out = StageKeys.carried(input, phv)
  }

  /** Clocks 1 .. lookupLatency: the lookups; the PHV (from clock 0) and each table's result
    * meet at the end. */
  val delayLine = new DelayLine(phv.carried.width, lookupLatency + 1)
  delayLine.input << keys.out
  val waited = delayLine.output
  val results = tables.map(t => (t.latency until lookupLatency).foldLeft(t.result)((r, _) => r.stage()))
  val lates = tables.map(t => t.late.map(l => Delay(l, lookupLatency - t.latency)))

  /** The stage's meter array, if a table's actions execute one (at most one per stage: such
    * a table reads the colour an earlier one writes, so it starts a stage of its own): a
    * request for every packet whose action (of a hit or the default) has the `meter` op,
    * with the index from its parameter, meta.frameLen bytes and meta.color as the colour
    * in; the PHV and the results wait for the colour. */
  private val meteredTable = specs.indexWhere(_.meters.nonEmpty)
  val metering = (meteredTable >= 0) generate new MeterStage(tables(meteredTable), results(meteredTable),
    meterSpecs.find(m => specs(meteredTable).meters.contains(m.name)).get)
  class MeterStage(t: StageTable, result: Flow[LookupResult], val spec: MeterSpec) extends Area {
    val unit = new MeterTable(spec.config)
    val fields = new PhvAccess(waited.payload, MatchStage.this.phv.carried)
    val (actionId, data) = t.chosenAction(result)
    val metered = t.spec.actions.zipWithIndex.collect { case (a, id) if a.ops.exists(_.isInstanceOf[Op.Meter]) => (a, id) }
    unit.request.valid := result.valid && metered.map { case (_, id) => actionId === id }.reduce(_ || _)
    unit.request.index := 0
    for ((a, id) <- metered; param <- a.ops.collectFirst { case Op.Meter(_, p) => p })
      when(actionId === id) { unit.request.index := data(a.offsets(param), spec.indexWidth bits).asUInt }
    unit.request.bytes := fields.u("meta.frameLen").resized
    unit.request.colour := fields("meta.color").asUInt

    /** Adds the array's window to `bus`, after every table's (the program's descriptor order). */
    def attach(bus: ControlBus): Unit = unit.attach(unit.addWindow(bus, spec.name).setCompositeName(this, "window"))
  }
  /** The PHV and the lookup results once the colour has come. */
  val metered = new Area {
    val phv = if (meterLatency == 0) waited else {
      val line = new DelayLine(MatchStage.this.phv.carried.width, meterLatency)
      line.input << waited
      line.output
    }
    val results = MatchStage.this.results.map(r => (0 until meterLatency).foldLeft(r)((x, _) => x.stage()))
    val lates = MatchStage.this.lates.map(_.map(l => Delay(l, meterLatency)))
  }

  /** The last clock: the actions, on the PHV as the stage hands it on. */
  val applied = new Area {
    /** The PHV as it entered the stage: what copies read. */
    val entered = new PhvAccess(metered.phv.payload, phv.carried)
    val handed = PhvLayout.convert(metered.phv.payload, phv.carried, phv.out)
    val fields = tables.indices.foldLeft(handed)((before, i) => apply(tables(i), metered.results(i), metered.lates(i), before, entered))
    val out = Flow(Bits(phv.out.width bits))
    out.valid := RegNext(metered.phv.valid) init False
    out.payload := RegNext(fields)
  }
  val output: Flow[Bits] = applied.out

  private def apply(t: StageTable, result: Flow[LookupResult], late: Option[Bool], before: Bits, entered: PhvAccess): Bits = {
    val spec = t.spec
    val outLayout = phv.out
    val in = new PhvAccess(before, outLayout)
    val after = Bits(outLayout.width bits)
    after := before
    val (actionId, data) = t.chosenAction(result)
    // A lookup with no answer in time punts the frame; no action applies.
    val lateReason = spec.memory.map(_.lateReason)
    def setLate(f: String, v: Bits): Unit = if (outLayout.carries(f)) after(outLayout(f).offset, outLayout(f).width bits) := v
    for (l <- late; r <- lateReason) when(result.valid && l) {
      setLate("meta.punt", B(1, 1 bits))
      setLate("meta.reason", B(r, 8 bits))
    }
    when(result.valid && !late.getOrElse(False)) {
      for ((action, id) <- spec.actions.zipWithIndex) when(actionId === id) {
        // Ops apply in order: each sees the fields as the ops before it left them.
        // A field the stage does not hand on is read by nothing after it: not written.
        val written = scala.collection.mutable.LinkedHashMap[String, Bits]()
        def value(f: String): Bits = written.getOrElse(f, in(f))
        def set(f: String, v: => Bits): Unit = if (outLayout.carries(f)) written(f) = v.resize(outLayout(f).width)
        def write(): Unit = for ((f, v) <- written) after(outLayout(f).offset, outLayout(f).width bits) := v
        // The checks come first (Action): the first that fails decides, and the action does
        // nothing else.
        val checks = action.ops.collect { case c: Op.Check => c }
        val failures = checks.map(c => c -> (entered.bool(Stage.validOf(c.field)) && Stage.fails(c.check, entered.u(c.field))))
        def fail(c: Op.Check): Unit = {
          set(c.fate.flag, B(1, 1 bits)); set("meta.reason", B(c.check.code, 8 bits)); write(); written.clear()
        }
        val offsets = action.offsets
        failures.foldLeft(None: Option[WhenContext]) {
          case (None, (c, failed)) => Some(when(failed)(fail(c)))
          case (Some(chain), (c, failed)) => Some(chain.elsewhen(failed)(fail(c)))
        }
        when(!failures.map(_._2).foldLeft(False)(_ || _)) {
          for (op <- action.ops) op match {
            case Op.SetField(f, p) => set(f, data(offsets(p), action.params.find(_.name == p).get.width bits))
            case Op.SetConst(f, v) => set(f, B(v, layout(f).width bits))
            case Op.Decrement(f) => set(f, (value(f).asUInt - 1).asBits)
            case Op.Copy(f, from) =>
              require(layout(from).width == layout(f).width, s"table ${spec.name}: copy of $from into $f of another width")
              // As a key reads it, with what the action's earlier ops wrote, the value or the
              // header's valid bit, seen as written.
              val v = Stage.validOf(from)
              val raw = written.getOrElse(from, entered(from))
              set(f, if (v == from) raw else written.get(v).map(_(0)).getOrElse(entered.bool(v)) ? raw | B(0, raw.getWidth bits))
            case Op.Drop(r) => set("meta.drop", B(1, 1 bits)); set("meta.reason", B(r, 8 bits))
            case Op.Punt(r) => set("meta.punt", B(1, 1 bits)); set("meta.reason", B(r, 8 bits))
            case Op.Meter(_, _) => set("meta.color", metering.unit.result.colour.asBits)
            case _: Op.Check =>
          }
          write()
        }
      }
    }
    after
  }
}

/** The session table as a stage (docs/pipeline.md, "The session stage"): clock 0 takes the
  * table's inputs from the PHV, the table answers `latency` clocks later while the PHV
  * waits, and the last clock writes the result into the meta.session* fields and, for a
  * frame refused by a full table, the punt or drop of the table's policy with the spec's
  * reason. With the sessions in memory, a frame whose result came late or busy is punted
  * with the memory's late or busy reason. */
class SessionStage(val spec: SessionSpec, val phv: StepPhv) extends PipelineStage {
  spec.check(phv.full)
  val input = Flow(Bits(phv.in.width bits))
  def latency: Int = spec.stageLatency
  val tableLatency = spec.stageLatency - 2

  /** The table, its inputs, and its result as the on-chip table's plus late and busy. */
  val packetIn = Flow(SessionPacket(spec.keyConfig))
  val result = Flow(MemSessionResult(spec.memoryConfig.map(_.indexWidth).getOrElse(spec.config.indexWidth)))
  val onChip = spec.memoryConfig.isEmpty generate new Area {
    val table = new SessionTable(spec.config)
    table.packet << packetIn
    result.valid := table.result.valid
    result.session := table.result.payload
    result.late := False
    result.busy := False
  }
  val inMemory = spec.memoryConfig.map(c => new Area {
    val table = new MemSessionTable(c)
    table.packet << packetIn
    result << table.result
  })
  override def memories: Seq[(String, Axi4)] = inMemory.map(s"m_axi_${spec.name}" -> _.table.port).toSeq

  /** The table's window: the program's last descriptor, after the meter arrays'. */
  def attach(bus: ControlBus): Unit = inMemory match {
    case Some(m) => m.table.attach(m.table.addWindow(bus, spec.name))
    case None =>
      val c = spec.config
      onChip.table.attach(bus.addTable(spec.name, TableKind.Session, c.keyWidth, c.size, c.dataWidth, c.ways, c.latency,
        features = WindowFeatures(counters = true)))
  }

  /** Clock 0: the packet. */
  val packet = new Area {
    val fields = new PhvAccess(input.payload, phv.in)
    val parsed = fields("meta.parseError") === 0
    val p = packetIn
    p.valid := RegNext(input.valid && parsed && Stage.holds(fields, spec.applyIf)) init False
    val parts = spec.inputs.map { case (_, k, w) => Stage.keyField(fields, k).resize(w) }
    p.zone := RegNext(parts(0))
    p.protocol := RegNext(parts(1))
    p.srcAddr := RegNext(parts(2))
    p.dstAddr := RegNext(parts(3))
    p.srcPort := RegNext(parts(4))
    p.dstPort := RegNext(parts(5))
    p.tcpFlags := RegNext(parts(6))
    p.learn := RegNext(fields.bool(spec.learn))
    p.frameLen := RegNext(fields.u("meta.frameLen").resize(16 bits))
    val out = StageKeys.carried(input, phv)
  }

  /** The PHV (from clock 0) meets the result `tableLatency` clocks after the packet. */
  val delayLine = new DelayLine(phv.carried.width, tableLatency + 1)
  delayLine.input << packet.out

  /** The last clock: the result into the PHV. */
  val applied = new Area {
    val before = PhvLayout.convert(delayLine.output.payload, phv.carried, phv.out)
    val r = result.session
    val layout = phv.out
    val after = Bits(layout.width bits)
    after := before
    // A field the stage does not hand on is read by nothing after it: not written.
    def set(f: String, v: Bits): Unit = if (layout.carries(f)) after(layout(f).offset, layout(f).width bits) := v.resize(layout(f).width)
    when(result.valid) {
      set("meta.sessionHit", r.hit.asBits)
      set("meta.sessionReply", r.reply.asBits)
      set("meta.sessionState", r.state.asBits)
      set("meta.sessionLearned", r.learned.asBits)
      set("meta.sessionFailed", r.insertFailed.asBits)
      when(r.drop) { set("meta.drop", B(1, 1 bits)); set("meta.reason", B(spec.reason, 8 bits)) }
      when(r.punt) { set("meta.punt", B(1, 1 bits)); set("meta.reason", B(spec.reason, 8 bits)) }
      for (m <- spec.memory) {
        when(result.late) { set("meta.punt", B(1, 1 bits)); set("meta.reason", B(m.table.lateReason, 8 bits)) }
        when(result.busy) { set("meta.punt", B(1, 1 bits)); set("meta.reason", B(m.busyReason, 8 bits)) }
      }
    }
    val out = Flow(Bits(layout.width bits))
    out.valid := RegNext(delayLine.output.valid) init False
    out.payload := RegNext(after)
  }
  val output: Flow[Bits] = applied.out
}
