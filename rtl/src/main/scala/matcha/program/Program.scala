// SPDX-License-Identifier: Apache-2.0
package matcha.program

import matcha.{MatchaConfig, PhvLayout}
import matcha.table.{ControlBus, LookupResult, MatchUnit, ObjectDescriptor, TableWindow, WindowFeatures}
import spinal.core.{Bits, isPow2, log2Up}
import spinal.lib.Flow

/** A pipeline program as data (docs/pipeline.md): tables in the order they apply, the
  * meter arrays their actions' `meter` ops execute, the session table extern with the
  * place it takes among the tables, and the metadata fields of its own (`meta.<name>` and a
  * width) that its tables pass to one another: 0 when a frame enters, written by actions. */
case class Program(name: String, tables: Seq[TableSpec], meters: Seq[MeterSpec] = Nil, session: Option[SessionSpec] = None,
    metadata: Seq[(String, Int)] = Nil) {
  for ((f, w) <- metadata) require(f.startsWith("meta.") && w >= 1 && w <= 512, s"program $name: metadata $f must be meta.<name>, 1 to 512 bits")
  require(metadata.map(_._1).distinct.size == metadata.size, s"program $name: metadata names must be unique")
  require(tables.map(_.name).distinct.size == tables.size, s"program $name: table names must be unique")
  require(meters.map(_.name).distinct.size == meters.size, s"program $name: meter array names must be unique")
  for (t <- tables; a <- t.actions; Op.Meter(m, p) <- a.ops) {
    val array = meters.find(_.name == m)
    require(array.isDefined, s"table ${t.name}, action ${a.name}: no meter array $m")
    require(a.params.find(_.name == p).get.width == array.get.indexWidth,
      s"table ${t.name}, action ${a.name}: meter index $p must be ${array.get.indexWidth} bits, one per meter of $m")
  }
  // A table with meter ops reads meta.color (TableSpec.reads), so it starts a new stage after
  // any table that meters: a stage holds at most one, as MatchStage needs.
  for (m <- meters)
    require(stages.count(_.exists(_.meters.contains(m.name))) == 1, s"program $name: meter array ${m.name} must be used by exactly one stage")
  for (s <- session) {
    require(tables.exists(_.name == s.after), s"program $name: session table ${s.name} follows no table ${s.after}")
    require(!tables.exists(_.name == s.name) && !meters.exists(_.name == s.name), s"program $name: ${s.name} names two things")
  }

  /** Tables grouped into stages: a table starts a new stage when its key or applyIf reads a
    * field that an earlier table of the current stage writes, or when the session stage
    * comes between it and the stage's tables. */
  def stages: Seq[Seq[TableSpec]] = tables.foldLeft(Vector.empty[Vector[TableSpec]]) { (done, t) =>
    done.lastOption match {
      case Some(stage) if !stage.exists(_.writes.exists(t.reads.contains)) && !session.exists(_.after == stage.last.name) =>
        done.init :+ (stage :+ t)
      case _ => done :+ Vector(t)
    }
  }

  /** The stages in pipeline order: the table stages, with the session stage right after
    * the stage that ends with its `after` table. */
  def steps: Seq[Step] = stages.flatMap(s => TableStep(s) +: session.filter(_.after == s.last.name).toSeq)


  /** The whole PHV of the program on `cfg`: the configuration's fields, then the program's
    * metadata. */
  def phv(cfg: MatchaConfig): PhvLayout = {
    val named = cfg.layout.fields.map(f => f.name -> f.width)
    for ((f, _) <- metadata) require(!cfg.layout.carries(f), s"program $name: metadata $f is a field of every PHV already")
    PhvLayout.pack(named ++ metadata)
  }

  /** Clocks from the parser's PHV to the last stage's. */
  def latency(layout: PhvLayout): Int = steps.map(_.latency(layout)).sum
}

/** When a table or the session stage applies to a frame: every term holds. A term is a
  * 1-bit PHV field that must be 1, or `!field`, which must be 0 (docs/pipeline.md). */
object Condition {
  def field(term: String): String = term.stripPrefix("!")
  def negated(term: String): Boolean = term.startsWith("!")
  def fields(terms: Seq[String]): Seq[String] = terms.map(field)
}

/** A step of the stage chain between parser and deparser, one kind of stage: a stage of
  * tables, the session stage, and whatever kind comes next (docs/architecture.md). */
trait Step {
  def label: String
  /** Clocks from its input PHV to its output PHV. */
  def latency(layout: PhvLayout): Int
  /** The PHV fields it reads and writes (PhvPlan). */
  def use: StepUse
  /** The stage, its tables' windows on `bus`; `meters` are the program's meter arrays. */
  def build(phv: StepPhv, bus: ControlBus, meters: Seq[MeterSpec]): PipelineStage
}

/** Tables looked up in the same clock, their actions applied in order (MatchStage). */
case class TableStep(tables: Seq[TableSpec]) extends Step {
  def label: String = tables.map(_.name).mkString(",")
  def latency(layout: PhvLayout): Int = Stage.latency(tables, layout)
  def use: StepUse = StepUse(tables)
  def build(phv: StepPhv, bus: ControlBus, meters: Seq[MeterSpec]): PipelineStage = new MatchStage(tables, phv, bus, meters)
}

/** The session table as a stage extern (docs/pipeline.md, "The session stage"): a stage of
  * its own right after table `after`'s stage. Each frame the stage is applied to (a parsed
  * frame whose `applyIf` bit is 1) hands the table the zone, the 5-tuple and the TCP flags
  * from the named PHV fields (a field of a header that is not valid reads as 0, a
  * `firstValid` part takes the first valid one) and `learn`, a 1-bit field an earlier action
  * sets; the result goes into the meta.session* fields, and a frame that could learn but
  * found no free way is punted or dropped (the window's CONTROL) with `reason`. */
case class SessionSpec(
    name: String,
    size: Int,
    after: String,
    reason: Int,
    ways: Int = 4,
    zone: KeyField = KeyField("hdr.vxlan.vni"),
    protocol: KeyField = KeyField("hdr.ipv4.protocol"),
    srcAddr: KeyField = KeyField("hdr.ipv4.src"),
    dstAddr: KeyField = KeyField("hdr.ipv4.dst"),
    srcPort: KeyField = KeyField.firstValid("hdr.tcp.srcPort", "hdr.udp.srcPort"),
    dstPort: KeyField = KeyField.firstValid("hdr.tcp.dstPort", "hdr.udp.dstPort"),
    tcpFlags: KeyField = KeyField("hdr.tcp.flags"),
    learn: String = "meta.learn",
    applyIf: Seq[String] = Seq("hdr.ipv4.valid"),
    /** The sessions in memory (docs/sessions.md, "Sessions in memory"): `size` of them in
      * buckets of as many as the bucket's beats of the port hold (BucketLayout). */
    memory: Option[SessionMemory] = None
) extends Step {
  def label: String = name
  def latency(layout: PhvLayout): Int = stageLatency
  def use: StepUse = StepUse(this)
  /** Its window is added later, after the meter arrays' (PacketPath). */
  def build(phv: StepPhv, bus: ControlBus, meters: Seq[MeterSpec]): PipelineStage = new SessionStage(this, phv)
  require(reason >= 0x10 && reason < 256, s"session table $name: reasons are 0x10..0xff (parse errors own 1..15)")
  /** The on-chip table's (a session table without `memory`). */
  def config = matcha.table.SessionTableConfig(size, ways)
  def memoryConfig: Option[matcha.table.MemSessionTableConfig] = memory.map { m =>
    val t = m.table
    def sized(buckets: Int) = matcha.table.MemSessionTableConfig(buckets, matcha.table.MemoryTiming(t.latency, t.memoryLatency,
      t.outstanding, t.bucketBeats), t.bucketAxi, t.baseAddress, m.writesTracked)
    val slots = sized(1).slots
    require(size % slots == 0 && isPow2(size / slots), s"session table $name: $slots sessions a bucket, so its size is a power of two times $slots")
    sized(size / slots)
  }
  def keyConfig: matcha.table.SessionKeyConfig = memoryConfig.getOrElse(config)
  /** A clock to take the inputs, the table's latency, a clock to write the result. */
  def stageLatency: Int = memoryConfig.map(_.timing.latency).getOrElse(config.latency) + 2
  /** Refuses fields wider than the inputs they feed, and a `learn` or `applyIf` that is
    * not one bit. */
  def check(layout: PhvLayout): Unit = {
    for ((input, k, w) <- inputs; f <- k.fields)
      require(layout(f).width <= w, s"session table $name: $input field $f is ${layout(f).width} bits, the input $w")
    for (f <- learn +: Condition.fields(applyIf))
      require(layout(f).width == 1, s"session table $name: $f is not a 1-bit field")
  }

  /** The inputs in the order of layout.json's "fields", with their widths in the table. */
  def inputs: Seq[(String, KeyField, Int)] = Seq(
    ("zone", zone, keyConfig.zoneWidth), ("protocol", protocol, 8), ("srcAddr", srcAddr, keyConfig.addrWidth),
    ("dstAddr", dstAddr, keyConfig.addrWidth), ("srcPort", srcPort, 16), ("dstPort", dstPort, 16), ("tcpFlags", tcpFlags, 8))
}

object SessionSpec {
  /** The PHV fields the session stage writes (docs/packet-path.md). */
  val resultFields = Seq("meta.sessionHit", "meta.sessionReply", "meta.sessionState", "meta.sessionLearned",
    "meta.sessionFailed")
}

/** An array of `size` meters (a power of two), RFC 2697 / 2698 (docs/tables.md, "Meters"). */
case class MeterSpec(name: String, size: Int) {
  require(size >= 2 && (size & (size - 1)) == 0, s"meter array $name: 2 or more meters, a power of two")
  def indexWidth: Int = Integer.numberOfTrailingZeros(size)
  def config = matcha.table.MeterTableConfig(meters = size)
}

/** A match kind: everything the generator needs of a table of the kind, in one place
  * (docs/architecture.md, "A table kind"). Each kind's object sits next to its unit
  * (`matcha.table.ExactKind`, …) and has one line in `MatchKind.all`. */
abstract class MatchKind(val code: Int) {
  /** The kind's name in layout.json and the tools. */
  def label: String = matcha.table.TableKind.names(code)
  /** Clocks from a key of `keyWidth` bits to its result. */
  def latency(t: TableSpec, keyWidth: Int): Int
  /** The table's unit for a key of `keyWidth` bits. */
  def unit(t: TableSpec, keyWidth: Int): MatchUnit
  /** The table's unit for a key whose fields (t.key, first most significant) have these
    * widths; kinds that treat fields differently (ternary range fields) override it. */
  def unit(t: TableSpec, fieldWidths: Seq[Int]): MatchUnit = unit(t, fieldWidths.sum)
  /** The table's unit, fed by `lookup`, with its control window on `bus` and attached. */
  def build(t: TableSpec, fieldWidths: Seq[Int], bus: ControlBus, features: WindowFeatures, lookup: Flow[Bits]): BuiltTable = {
    val u = unit(t, fieldWidths)
    val window = u.addWindow(bus, t.name, features)
    u.attach(window)
    u.lookup << lookup
    BuiltTable(u.result, window, u.entries, u.late, u.memories)
  }
  /** Members layout.json gives a table of the kind beyond the common ones. */
  def json(t: TableSpec): Seq[(String, ujson.Value)] = Nil
}

/** What a stage needs of a built table: its results, its window, how many entries its
  * per-entry counters count; for a memory-backed table, whether a result came too late
  * (MatchUnit.late) and its memory ports. */
case class BuiltTable(result: Flow[LookupResult], window: TableWindow, entries: Int, late: Option[spinal.core.Bool],
    memories: Seq[spinal.lib.bus.amba4.axi.Axi4])

object MatchKind {
  val Exact: MatchKind = matcha.table.ExactKind
  val Lpm: MatchKind = matcha.table.LpmKind
  val Ternary: MatchKind = matcha.table.TernaryKind
  val Direct: MatchKind = matcha.table.DirectKind
  val MemExact: MatchKind = matcha.table.MemExactKind
  /** Every match kind: a kind's code names it in the self-describing block. */
  val all: Seq[MatchKind] = Seq(Exact, Lpm, Ternary, Direct, MemExact)
  require(all.map(_.code).distinct.size == all.size, "two match kinds share a code")
}

/** Where a memory-backed table keeps its entries (docs/tables.md, "Memory-backed exact
  * tables"): buckets of `bucketBeats` beats of the AXI4 master `axi` (the pipeline's
  * `m_axi_<table>` port), from `baseAddress` on; results `latency` clocks after the key,
  * for a memory that answers in `memoryLatency` clocks with up to `outstanding` reads out.
  * A lookup whose bucket does not come back in time punts the frame with `lateReason`.
  * An LPM table's levels in memory take a node a beat (`bucketBeats` 1). `stash`: a
  * mem_exact table's on-chip entries for keys whose bucket is full (MemExactTableConfig). */
case class TableMemory(lateReason: Int, latency: Int = 512, memoryLatency: Int = 320,
    axi: spinal.lib.bus.amba4.axi.Axi4Config = matcha.table.MemExactTableConfig.corundumAxi, baseAddress: BigInt = 0,
    outstanding: Int = 512, bucketBeats: Int = 1, stash: Int = 0) {
  require(lateReason >= 0x10 && lateReason < 256, "late reasons are 0x10..0xff (parse errors own 1..15)")
  require(bucketBeats >= 1 && isPow2(bucketBeats), "a bucket is a power of two of the port's beats")
  /** The bus the table itself sees: a bucket a beat. */
  def bucketAxi: spinal.lib.bus.amba4.axi.Axi4Config = axi.copy(dataWidth = axi.dataWidth * bucketBeats)
  def bucketBytes: Int = bucketAxi.dataWidth / 8
}

object TableMemory {
  /** The AXI4 masters of a unit in memory that has `count` of them, named after `port`:
    * `port` itself, or with several (an LPM table's levels in memory, the highest first)
    * `port_0`, `port_1`, and so on. */
  def portNames(port: String, count: Int): Seq[String] =
    if (count == 1) Seq(port) else (0 until count).map(j => s"${port}_$j")
}

/** Where a session table keeps its sessions in memory: the port, timing and late reason of
  * `table`; a frame whose session change finds no room to be written (docs/sessions.md,
  * "Exact under reads in flight") is punted with `busyReason`; `writesTracked` buckets
  * are held on chip. */
case class SessionMemory(table: TableMemory, busyReason: Int, writesTracked: Int = 128) {
  require(busyReason >= 0x10 && busyReason < 256, "busy reasons are 0x10..0xff (parse errors own 1..15)")
}

/** One key field: a PHV field, or the first of several same-width fields whose header is
  * valid. A field of a header that is not valid reads as 0. `range`: in a ternary table,
  * an entry gives the field a range lo..hi instead of a value and mask (docs/tables.md,
  * "Range fields"). */
case class KeyField(fields: Seq[String], range: Boolean = false) {
  require(fields.nonEmpty)
  /** The same field matched as a range. */
  def asRange: KeyField = copy(range = true)
}
object KeyField {
  def apply(field: String): KeyField = KeyField(Seq(field))
  def firstValid(fields: String*): KeyField = KeyField(fields)
}

case class Param(name: String, width: Int)

sealed trait Op {
  def writes: Seq[String]
  /** PHV fields the op reads when it applies. */
  def reads: Seq[String] = Nil
}
object Op {
  case class SetField(field: String, param: String) extends Op { def writes = Seq(field) }
  case class SetConst(field: String, value: BigInt) extends Op { def writes = Seq(field) }
  case class Decrement(field: String) extends Op { def writes = Seq(field) }
  /** The field takes the value of another of the same width, as a key reads it (0 when its
    * header is not valid). */
  case class Copy(field: String, from: String) extends Op {
    def writes = Seq(field)
    override def reads = Seq(from)
  }
  /** A forwarding check of a routed header (docs/pipeline.md, "Forwarding checks"): `field`
    * is what `check` reads of the header (`hdr.ipv4.ttl`, `hdr.ipv4.checksumOk`, ...). A
    * header that fails it punts or drops the frame (`fate`) with the check's reason, and the
    * action's other ops do not apply. */
  case class Check(check: IpCheck, field: String, fate: Fate) extends Op {
    require(check.fields.exists(field.endsWith), s"check ${check.label} reads ${check.fields.mkString(" or ")}, not $field")
    def header: String = field.substring(0, field.lastIndexOf('.'))
    def writes = Seq(fate.flag, "meta.reason")
    override def reads = Seq(field)
  }
  case class Drop(reason: Int) extends Op { def writes = Seq("meta.drop", "meta.reason") }
  case class Punt(reason: Int) extends Op { def writes = Seq("meta.punt", "meta.reason") }
  /** Meter `param` of array `meter` colours the packet: meta.color (colour-aware meters
    * take the colour it had) becomes the meter's colour. */
  case class Meter(meter: String, param: String) extends Op { def writes = Seq("meta.color") }
}

/** What a program does with a frame that fails a forwarding check. */
sealed abstract class Fate(val label: String, val flag: String)
object Fate {
  case object Punt extends Fate("punt", "meta.punt")
  case object Drop extends Fate("drop", "meta.drop")
}

/** The checks a router makes of the IP header of a frame it forwards (RFC 1812 5.2.2 and
  * 5.3.1), in the order they are made: each has a reason code of the packet path's own
  * (below 0x10, after the parse errors) and reads one field of the header. */
sealed abstract class IpCheck(val code: Int, val label: String, val fields: Seq[String])
object IpCheck {
  /** IPv4 options: a router must process them (RFC 1812 5.2.4), which Matcha leaves to the
    * host; first, since the checksum below is verified over the fixed part only. */
  case object Options extends IpCheck(10, "IPV4_OPTIONS", Seq(".ihl"))
  /** The header checksum is wrong (the parser's verdict on the fixed part). */
  case object Checksum extends IpCheck(11, "IPV4_CHECKSUM", Seq(".checksumOk"))
  /** The length field says more bytes than the frame holds, or (IPv4) fewer than the header. */
  case object Length extends IpCheck(12, "IP_LENGTH", Seq(".lengthOk"))
  /** TTL or hop limit 0 or 1: it would reach 0 (RFC 1812 5.3.1); time-exceeded is the host's. */
  case object Ttl extends IpCheck(13, "TTL_EXPIRED", Seq(".ttl", ".hopLimit"))
  val all: Seq[IpCheck] = Seq(Options, Checksum, Length, Ttl)
  require(all.forall(c => c.code > matcha.ParseError.all.map(_.code).max && c.code < 0x10), "check reasons sit between the parse errors and 0x10")

  /** The check ops of a frame routed on `header` (`hdr.ipv4`, `hdr.inner_ipv6`), for the
    * checks `fates` names, in check order: IPv6 has no checksum and no options. */
  def ops(header: String, ipv6: Boolean, fates: Map[IpCheck, Fate]): Seq[Op] = all.filter(fates.contains).flatMap {
    case Checksum | Options if ipv6 => None
    case Ttl => Some(Op.Check(Ttl, s"$header.${if (ipv6) "hopLimit" else "ttl"}", fates(Ttl)))
    case c => Some(Op.Check(c, header + c.fields.head, fates(c)))
  }
}

case class Action(name: String, params: Seq[Param] = Nil, ops: Seq[Op] = Nil) {
  require(ops.dropWhile(_.isInstanceOf[Op.Check]).forall(!_.isInstanceOf[Op.Check]), s"action $name: its checks come before its other ops")
  def dataWidth: Int = params.map(_.width).sum
  /** Lowest bit of each parameter in the action data: first parameter most significant. */
  def offsets: Map[String, Int] = params.zip(params.scanRight(0)(_.width + _).tail).map { case (p, o) => p.name -> o }.toMap
}

/** One table. `size` is entries (exact, ternary) or prefixes (LPM). */
case class TableSpec(
    name: String,
    kind: MatchKind,
    key: Seq[KeyField],
    size: Int,
    actions: Seq[Action],
    default: String,
    defaultData: BigInt = 0,
    applyIf: Seq[String] = Nil,
    counters: Boolean = true,
    ways: Int = 4,
    /** LPM: slots of a B+tree node; (fanout * (key bits + 17)) must fit the 512-bit DATA. */
    lpmFanout: Int = 7,
    rangeSlots: Int = 64,
    /** Entries the table holds whatever their keys, where that is fewer than its `size`
      * slots: an exact table with headroom (OverlayScale.exactHeadroom). P4Info's size. */
    promised: Option[Int] = None,
    /** A memory-backed table's port and timing: a MemExact table's entries, or the lowest
      * `lpmMemoryLevels` levels of an LPM table's tree. */
    memory: Option[TableMemory] = None,
    lpmMemoryLevels: Int = 0
) {
  require(actions.nonEmpty && actions.size <= 256, s"table $name: 1 to 256 actions")
  require(actions.map(_.name).distinct.size == actions.size, s"table $name: action names must be unique")
  require(actions.exists(_.name == default), s"table $name: default action $default is not one of its actions")
  require(!key.exists(_.range) || kind == MatchKind.Ternary, s"table $name: only ternary tables have range fields")
  require(meters.size <= 1, s"table $name: its meter ops all execute one meter array")
  for (a <- actions; op <- a.ops) op match {
    case Op.SetField(f, p) => require(a.params.exists(_.name == p), s"table $name, action ${a.name}: no parameter $p for $f")
    case Op.Drop(r) => require(r >= 0x10 && r < 256, s"table $name: reasons are 0x10..0xff (parse errors own 1..15)")
    case Op.Punt(r) => require(r >= 0x10 && r < 256, s"table $name: reasons are 0x10..0xff (parse errors own 1..15)")
    case Op.Meter(m, p) =>
      require(a.params.exists(_.name == p), s"table $name, action ${a.name}: no parameter $p for meter $m")
      require(a.ops.count(_.isInstanceOf[Op.Meter]) == 1, s"table $name, action ${a.name}: one meter op per action")
    case _ =>
  }
  require(promised.forall(n => n >= 1 && n <= size), s"table $name: it cannot promise more entries than its slots")
  require(memory.isDefined == (kind == MatchKind.MemExact || lpmMemoryLevels > 0),
    s"table $name: a memory port is for a mem_exact table, which needs one, or an LPM table with levels in memory")
  require(lpmMemoryLevels == 0 || kind == MatchKind.Lpm, s"table $name: only an LPM table has levels in memory")
  require(memory.forall(_.stash == 0) || kind == MatchKind.MemExact, s"table $name: only a mem_exact table has a stash")
  require(memory.isEmpty || !counters, s"table $name: a memory-backed table has no per-entry counters")
  def dataWidth: Int = actions.map(_.dataWidth).max max 1
  def entries: Int = promised.getOrElse(size)
  def actionId(action: String): Int = actions.indexWhere(_.name == action)
  /** What the actions write, and the punt and reason of a lookup that came back late. */
  def writes: Set[String] = actions.flatMap(_.ops.flatMap(_.writes)).toSet ++
    memory.toSeq.flatMap(_ => Seq("meta.punt", "meta.reason"))
  /** The meter arrays the actions execute. */
  def meters: Set[String] = actions.flatMap(_.ops.collect { case Op.Meter(m, _) => m }).toSet
  /** Every PHV field the key, the condition and the ops read, valid bits included; a
    * meter reads the colour so far. A table that copies a field an earlier table of its
    * stage writes thus starts a new stage, and its copy reads the stage's input. */
  def reads: Set[String] = {
    val fields = key.flatMap(_.fields) ++ Condition.fields(applyIf) ++ (if (meters.nonEmpty) Seq("meta.color") else Nil) ++
      opReads
    (fields ++ fields.map(Stage.validOf)).toSet
  }
  /** The fields the ops read when the actions apply, valid bits included. */
  def opReads: Set[String] = {
    val fields = actions.flatMap(_.ops.flatMap(_.reads))
    (fields ++ fields.map(Stage.validOf)).toSet
  }
}

object Programs {
  val egress = "meta.egressPort"
  /** What the built-in and the overlay program do with a routed frame that fails a
    * forwarding check: a header a router must discard is dropped (RFC 1812 5.2.2); one the
    * host answers (ICMP time exceeded) or must process (options) is punted. */
  val routerChecks: Map[IpCheck, Fate] =
    Map(IpCheck.Checksum -> Fate.Drop, IpCheck.Length -> Fate.Drop, IpCheck.Options -> Fate.Punt, IpCheck.Ttl -> Fate.Punt)

  /** L2 forwarding on the destination MAC, IPv4 routing by LPM, a 5-tuple ACL
    * (docs/pipeline.md, "The built-in program"). */
  val l2l3 = Program("l2l3", Seq(
    TableSpec("l2_fwd", MatchKind.Exact, Seq(KeyField("hdr.eth.dst")), size = 64,
      actions = Seq(
        Action("no_op"),
        Action("forward", Seq(Param("port", 4)), Seq(Op.SetField(egress, "port"))),
        Action("drop", ops = Seq(Op.Drop(0x20)))),
      default = "no_op"),
    TableSpec("ipv4_lpm", MatchKind.Lpm, Seq(KeyField("hdr.ipv4.dst")), size = 64,
      applyIf = Seq("hdr.ipv4.valid"), lpmFanout = 10,
      actions = Seq(
        Action("route", Seq(Param("port", 4), Param("dmac", 48), Param("smac", 48)),
          IpCheck.ops("hdr.ipv4", ipv6 = false, routerChecks) ++ Seq(
          Op.SetField(egress, "port"), Op.SetField("hdr.eth.dst", "dmac"), Op.SetField("hdr.eth.src", "smac"),
          Op.Decrement("hdr.ipv4.ttl"))),
        Action("drop", ops = Seq(Op.Drop(0x21))),
        Action("no_route", ops = Seq(Op.Punt(0x22)))),
      default = "no_route"),
    TableSpec("acl", MatchKind.Ternary,
      Seq(KeyField("hdr.ipv4.src"), KeyField("hdr.ipv4.dst"), KeyField("hdr.ipv4.protocol"),
        KeyField.firstValid("hdr.tcp.srcPort", "hdr.udp.srcPort"), KeyField.firstValid("hdr.tcp.dstPort", "hdr.udp.dstPort")),
      size = 64, applyIf = Seq("hdr.ipv4.valid"),
      actions = Seq(
        Action("permit"),
        Action("deny", ops = Seq(Op.Drop(0x23))),
        Action("to_host", ops = Seq(Op.Punt(0x24)))),
      default = "permit")
  ))

  /** Per-source policing (docs/pipeline.md, "The policer program"): a meter per source
    * MAC, then the colour's action: pass, mark (DSCP) or drop. */
  val policer = Program("policer", Seq(
    TableSpec("police", MatchKind.Exact, Seq(KeyField("hdr.eth.src")), size = 64,
      actions = Seq(
        Action("no_op"),
        Action("police", Seq(Param("meter", 6)), Seq(Op.Meter("policers", "meter")))),
      default = "no_op"),
    TableSpec("by_colour", MatchKind.Exact, Seq(KeyField("meta.color")), size = 8, ways = 2,
      actions = Seq(
        Action("pass"),
        Action("mark", Seq(Param("dscp", 6)), Seq(Op.SetField("hdr.ipv4.dscp", "dscp"))),
        Action("drop", ops = Seq(Op.Drop(0x25)))),
      default = "pass")
  ), meters = Seq(MeterSpec("policers", 64)))

  /** Connection tracking (docs/pipeline.md, "The conntrack program"): a 5-tuple ACL whose
    * `permit` lets a frame start a session, the session stage, then a table keyed on the
    * ingress port and the session result that drops (or punts) frames of no session. */
  val conntrack = Program("conntrack", Seq(
    TableSpec("acl", MatchKind.Ternary,
      Seq(KeyField("hdr.ipv4.src"), KeyField("hdr.ipv4.dst"), KeyField("hdr.ipv4.protocol"),
        KeyField.firstValid("hdr.tcp.srcPort", "hdr.udp.srcPort"), KeyField.firstValid("hdr.tcp.dstPort", "hdr.udp.dstPort")),
      size = 64, applyIf = Seq("hdr.ipv4.valid"),
      actions = Seq(
        Action("pass"),
        Action("permit", ops = Seq(Op.SetConst("meta.learn", 1))),
        Action("deny", ops = Seq(Op.Drop(0x26)))),
      default = "pass"),
    TableSpec("by_session", MatchKind.Exact,
      Seq(KeyField("meta.ingressPort"), KeyField("meta.sessionHit"), KeyField("meta.sessionLearned")),
      // A frame the ACL denied or the session stage refused keeps that reason.
      size = 16, applyIf = Seq("hdr.ipv4.valid", "!meta.drop", "!meta.punt"),
      actions = Seq(
        Action("pass"),
        Action("drop", ops = Seq(Op.Drop(0x28))),
        Action("to_host", ops = Seq(Op.Punt(0x29)))),
      default = "pass")
  ), session = Some(SessionSpec("sessions", size = 64, after = "acl", reason = 0x27)))

  /** The cloud overlay (VNET-to-VNET) pipeline with stateful security (docs/overlay.md),
    * after SONiC DASH: VXLAN frames from hosts (outbound) and from the underlay (inbound),
    * each decapsulated and, once its ENI's policy admits it, encapsulated again; its table
    * sizes are those of `scale`. With `mappingMemory`, `overlay_mem`: the CA→PA mappings in
    * the card's memory (Overlay.MappingMemory), in buckets at most a sixth full; with
    * `sessionMemory` the sessions, and with `routeMemory` the route table's lowest
    * Overlay.RouteMemoryLevels levels, there too. */
  def overlay(scale: OverlayScale, mappingMemory: Option[TableMemory] = None, sessionMemory: Option[SessionMemory] = None,
      routeMemory: Option[TableMemory] = None): Program = {
    import Overlay._
    val decap = Seq("eth", "vlan", "vlan2", "ipv4", "udp", "vxlan").map(h => Op.SetConst(s"hdr.$h.valid", 0))
    val fiveTuple = Seq(KeyField("hdr.inner_ipv4.src"), KeyField("hdr.inner_ipv4.dst"), KeyField("hdr.inner_ipv4.protocol"),
      KeyField.firstValid("hdr.inner_tcp.srcPort", "hdr.inner_udp.srcPort"),
      KeyField.firstValid("hdr.inner_tcp.dstPort", "hdr.inner_udp.dstPort"))
    val live = "!meta.drop"
    // The route table routes the inner frame from one VNET to another (the outer headers
    // are the tunnel's, terminated here): it checks the inner IPv4 header as a router and
    // decrements its TTL. A frame a check punts goes to the host as it came: no later
    // table meters or encapsulates it.
    val checks = IpCheck.ops("hdr.inner_ipv4", ipv6 = false, routerChecks)
    val hop = Op.Decrement("hdr.inner_ipv4.ttl")
    val notPunted = "!meta.punt"
    // On chip, a cuckoo table with the scale's headroom that promises its mappings; in
    // memory, 128 bytes of buckets a mapping (a power of two of them), that promise nothing.
    val (mappingKind, mappingSize, mappingPromise) = mappingMemory match {
      case None => (MatchKind.Exact, scale.exactSlots(scale.mappings), Some(scale.mappings))
      case Some(m) => (MatchKind.MemExact, slots(m, MappingBytes) * ((1 << log2Up(scale.mappings)) * 128 / m.bucketBytes), None)
    }
    val mappingMem = mappingMemory.map(_.copy(stash = mappingStash(scale.mappings)))
    // In memory, 32 bytes of buckets a session.
    val sessions = sessionMemory.map(m => slots(m.table, SessionBytes) * (scale.sessions.toLong * 32 / m.table.bucketBytes).toInt)
      .getOrElse(scale.sessions)
    Program(if (mappingMemory.isDefined || sessionMemory.isDefined || routeMemory.isDefined) "overlay_mem" else "overlay", Seq(
      // VXLAN with an inner IPv4 frame is the overlay's; anything else is the host's (the
      // default) or dropped, as the entry at its index says.
      TableSpec("frame_class", MatchKind.Direct, Seq(KeyField("hdr.vxlan.valid"), KeyField("hdr.inner_ipv4.valid")), size = 4,
        actions = Seq(
          Action("overlay", ops = Seq(Op.SetConst("meta.overlay", 1))),
          Action("drop", ops = Seq(Op.Drop(NotOverlayDrop))),
          Action("to_host", ops = Seq(Op.Punt(NotOverlay)))),
        default = "to_host", counters = false),
      TableSpec("vip", MatchKind.Exact, Seq(KeyField("hdr.ipv4.dst")), size = 16, applyIf = Seq("meta.overlay"),
        // `table_set_default vip to_host` sends frames to unknown VIPs to the host instead.
        actions = Seq(Action("accept"), Action("drop", ops = Seq(Op.Drop(VipMiss))), Action("to_host", ops = Seq(Op.Punt(VipMiss)))),
        default = "drop"),
      TableSpec("direction", MatchKind.Exact, Seq(KeyField("hdr.vxlan.vni")), size = 64, applyIf = Seq("meta.overlay"),
        actions = Seq(
          Action("outbound", ops = Seq(Op.SetConst("meta.outbound", 1))),
          Action("inbound", ops = Seq(Op.SetConst("meta.inbound", 1)))),
        default = "inbound", counters = false),
      TableSpec("eni_out", MatchKind.Exact, Seq(KeyField("hdr.inner_eth.src")), size = scale.exactSlots(scale.enis), promised = Some(scale.enis), applyIf = Seq("meta.outbound", live),
        actions = Seq(Action("set_eni", Seq(Param("eni", EniWidth)), Seq(Op.SetField("meta.eni", "eni"))),
          Action("drop", ops = Seq(Op.Drop(EniMiss)))), default = "drop"),
      TableSpec("eni_in", MatchKind.Exact, Seq(KeyField("hdr.inner_eth.dst")), size = scale.exactSlots(scale.enis), promised = Some(scale.enis), applyIf = Seq("meta.inbound", live),
        actions = Seq(Action("set_eni", Seq(Param("eni", EniWidth)), Seq(Op.SetField("meta.eni", "eni"))),
          Action("drop", ops = Seq(Op.Drop(EniMiss)))), default = "drop"),
      // The ENI's attributes; an ENI with no entry is down.
      TableSpec("eni", MatchKind.Direct, Seq(KeyField("meta.eni")), size = scale.enis, applyIf = Seq("meta.overlay", live),
        actions = Seq(
          Action("set_eni_attrs", Seq(Param("routing_group", GroupWidth), Param("vm_underlay_ip", 32), Param("vm_vni", 24),
            Param("yellow_drop", 1)), Seq(
            Op.SetField("meta.routingGroup", "routing_group"), Op.SetField("push.ipv4.dst", "vm_underlay_ip"),
            Op.SetField("push.vxlan.vni", "vm_vni"), Op.SetField("meta.yellowDrop", "yellow_drop"))),
          Action("admin_down", ops = Seq(Op.Drop(EniDown)))),
        default = "admin_down", counters = false),
      TableSpec("inbound_routing", MatchKind.Ternary, Seq(KeyField("meta.eni"), KeyField("hdr.vxlan.vni"), KeyField("hdr.ipv4.src")),
        size = 64, applyIf = Seq("meta.inbound", live),
        actions = Seq(
          Action("decap"),
          Action("decap_pa_validate", Seq(Param("src_vnet", VnetWidth)), Seq(
            Op.SetField("meta.srcVnet", "src_vnet"), Op.SetConst("meta.paValidate", 1))),
          Action("drop", ops = Seq(Op.Drop(InboundRouteMiss)))),
        default = "drop"),
      TableSpec("pa_validation", MatchKind.Exact, Seq(KeyField("meta.srcVnet"), KeyField("hdr.ipv4.src")), size = scale.exactSlots(scale.enis), promised = Some(scale.enis),
        applyIf = Seq("meta.paValidate", live),
        actions = Seq(Action("permit"), Action("drop", ops = Seq(Op.Drop(PaValidationMiss)))), default = "drop"),
      // The ENI's ACL of each direction decides new flows: a permit may learn the session.
      // The ports are range fields: a port range is one entry, not its prefixes.
      TableSpec("acl", MatchKind.Ternary, Seq(KeyField("meta.outbound"), KeyField("meta.eni")) ++ fiveTuple.take(3) ++
        fiveTuple.drop(3).map(_.asRange), size = scale.aclRules,
        applyIf = Seq("meta.overlay", live),
        actions = Seq(
          Action("permit", ops = Seq(Op.SetConst("meta.aclVerdict", AclPermit), Op.SetConst("meta.learn", 1))),
          Action("deny", ops = Seq(Op.SetConst("meta.aclVerdict", AclDeny))),
          Action("to_host", ops = Seq(Op.SetConst("meta.aclVerdict", AclToHost)))),
        default = "deny"),
      // A frame of a known session passes whatever the ACL said; any other takes its verdict.
      TableSpec("verdict", MatchKind.Direct, Seq(KeyField("meta.sessionHit"), KeyField("meta.aclVerdict")), size = 8,
        applyIf = Seq("meta.overlay", live, "!meta.punt"),
        actions = Seq(
          Action("admit", ops = Seq(Op.SetConst("meta.admit", 1))),
          Action("deny", ops = Seq(Op.Drop(AclDenied))),
          Action("to_host", ops = Seq(Op.Punt(AclToHostReason)))),
        default = "deny", counters = false),
      TableSpec("route", MatchKind.Lpm, Seq(KeyField("meta.routingGroup"), KeyField("hdr.inner_ipv4.dst")), size = scale.routes,
        applyIf = Seq("meta.outbound", "meta.admit"), lpmFanout = 7, memory = routeMemory,
        lpmMemoryLevels = if (routeMemory.isDefined) RouteMemoryLevels else 0, counters = routeMemory.isEmpty,
        actions = Seq(
          Action("route_vnet", Seq(Param("dst_vnet", VnetWidth)), checks ++ Seq(
            Op.SetField("meta.dstVnet", "dst_vnet"), Op.SetConst("meta.routed", 1), hop)),
          Action("route_direct", ops = checks ++ decap ++ Seq(Op.SetConst("meta.direct", 1), hop)),
          Action("drop", ops = Seq(Op.Drop(RouteDrop))),
          Action("miss", ops = Seq(Op.Drop(RouteMiss)))),
        default = "miss"),
      TableSpec("policer", MatchKind.Direct, Seq(KeyField("meta.eni")), size = scale.enis, applyIf = Seq("meta.admit", live, notPunted),
        actions = Seq(Action("no_op"), Action("police", Seq(Param("meter", log2Up(scale.enis))), Seq(Op.Meter("policers", "meter")))),
        default = "no_op", counters = false),
      TableSpec("colour", MatchKind.Direct, Seq(KeyField("meta.color"), KeyField("meta.yellowDrop")), size = 8,
        applyIf = Seq("meta.admit", live, notPunted),
        actions = Seq(
          Action("pass"),
          Action("mark", Seq(Param("dscp", 6)), Seq(Op.SetField("push.ipv4.dscp", "dscp"))),
          Action("drop_red", ops = Seq(Op.Drop(PolicedRed))),
          Action("drop_yellow", ops = Seq(Op.Drop(PolicedYellow)))),
        default = "pass", counters = false),
      TableSpec("mapping", mappingKind, Seq(KeyField("meta.dstVnet"), KeyField("hdr.inner_ipv4.dst")), size = mappingSize,
        promised = mappingPromise, memory = mappingMem, counters = mappingMemory.isEmpty,
        applyIf = Seq("meta.routed", live),
        actions = Seq(
          Action("set_mapping", Seq(Param("underlay_ip", 32), Param("overlay_dmac", 48)), Seq(
            Op.SetField("push.ipv4.dst", "underlay_ip"), Op.SetField("hdr.inner_eth.dst", "overlay_dmac"))),
          Action("drop", ops = Seq(Op.Drop(MappingMiss)))),
        default = "drop"),
      TableSpec("vnet", MatchKind.Direct, Seq(KeyField("meta.dstVnet")), size = scale.vnets, applyIf = Seq("meta.routed", live),
        actions = Seq(
          Action("set_vni", Seq(Param("vni", 24)), Seq(Op.SetField("push.vxlan.vni", "vni"))),
          Action("drop", ops = Seq(Op.Drop(VnetMiss)))),
        default = "drop", counters = false),
      // The new outer headers: the underlay MACs are the default action's data (set once,
      // like DASH's appliance MACs), the source the VIP the frame came to.
      TableSpec("encap", MatchKind.Direct, Seq(KeyField("meta.outbound")), size = 2,
        applyIf = Seq("meta.admit", live, notPunted, "!meta.direct"),
        actions = Seq(Action("vxlan_encap", Seq(Param("underlay_smac", 48), Param("underlay_dmac", 48)),
          Seq(Op.Copy("push.ipv4.src", "hdr.ipv4.dst")) ++ decap ++ Seq(
            Op.SetConst("push.eth.valid", 1), Op.SetField("push.eth.src", "underlay_smac"),
            Op.SetField("push.eth.dst", "underlay_dmac"), Op.SetConst("push.eth.etherType", 0x0800),
            Op.SetConst("push.ipv4.valid", 1), Op.SetConst("push.ipv4.identification", 1), Op.SetConst("push.ipv4.ttl", 64),
            Op.SetConst("push.ipv4.protocol", 17),
            Op.SetConst("push.udp.valid", 1), Op.SetConst("push.udp.dstPort", 4789),
            Op.SetConst("push.vxlan.valid", 1), Op.SetConst("push.vxlan.flags", 0x08)))),
        default = "vxlan_encap", counters = false)
    ),
      meters = Seq(MeterSpec("policers", scale.enis)),
      session = Some(SessionSpec("sessions", size = sessions, after = "acl", reason = SessionFull, zone = KeyField("meta.eni"),
        protocol = KeyField("hdr.inner_ipv4.protocol"), srcAddr = KeyField("hdr.inner_ipv4.src"),
        dstAddr = KeyField("hdr.inner_ipv4.dst"), srcPort = KeyField.firstValid("hdr.inner_tcp.srcPort", "hdr.inner_udp.srcPort"),
        dstPort = KeyField.firstValid("hdr.inner_tcp.dstPort", "hdr.inner_udp.dstPort"), tcpFlags = KeyField("hdr.inner_tcp.flags"),
        applyIf = Seq("meta.overlay", live), memory = sessionMemory)),
      metadata = Seq("meta.overlay" -> 1, "meta.outbound" -> 1, "meta.inbound" -> 1, "meta.eni" -> EniWidth,
        "meta.routingGroup" -> GroupWidth, "meta.yellowDrop" -> 1, "meta.srcVnet" -> VnetWidth, "meta.paValidate" -> 1,
        "meta.aclVerdict" -> 2, "meta.admit" -> 1, "meta.dstVnet" -> VnetWidth, "meta.routed" -> 1, "meta.direct" -> 1))
  }

  /** The overlay with its mappings, its sessions and its routes' lowest levels in the card's
    * memory, at the board's scale. */
  val overlayMem: Program = overlay(Overlay.Board, Some(Overlay.MappingMemory), Some(Overlay.SessionMemory),
    Some(Overlay.RouteMemory))

  /** The overlay at the Corundum card's scale with its mappings and sessions in the card's
    * memory, the 512-bit build's `overlay_mem`: its 32,768 routes stay on chip (a route
    * level in memory takes a read of the port a lookup, and one port serves one lookup
    * every two clocks: docs/tables.md, "LPM levels in memory"). Its buckets are one 64-byte
    * beat: the Corundum shell joins both tables on one channel, and at a 64-byte frame every
    * two clocks their two lookups take every beat that channel's port carries. */
  val overlayMemCorundum: Program = overlay(Overlay.Corundum, Some(Overlay.MappingMemory.copy(bucketBeats = 1)),
    Some(Overlay.SessionMemory.copy(table = Overlay.SessionMemory.table.copy(bucketBeats = 1))))

  val all = Seq(l2l3, policer, conntrack) ++ Overlay.scales.map(overlay(_)) :+ overlayMem :+ overlayMemCorundum
}

/** The sizes of the overlay program's tables on one kind of target (docs/overlay.md,
  * "Scale"): `enis` ENIs (each direction's MAC table, attributes, PA validation entries,
  * policers), `vnets` VNETs, CA→PA mappings, route prefixes, ACL rules (both directions),
  * sessions. ENI and VNET numbers are EniWidth and VnetWidth bits whatever the scale.
  *
  * The exact tables keyed by what the user chooses (ENI MACs, PA validation, mappings) get
  * `exactHeadroom` times their entries in slots: a 4-way cuckoo table with one slot a way
  * does not fill whole (about 97 % in theory, less with the driver's bounded move search;
  * the Corundum scale's 8,192 mappings stopped at 8,103 of 8,192 slots), so a scale that
  * promises N entries whatever their keys needs more than N slots. */
case class OverlayScale(name: String, enis: Int, vnets: Int, mappings: Int, routes: Int, aclRules: Int, sessions: Int,
                        exactHeadroom: Int) {
  require(enis <= (1 << Overlay.EniWidth) && isPow2(enis) && vnets <= (1 << Overlay.VnetWidth), s"overlay scale $name")
  def exactSlots(entries: Int): Int = entries * exactHeadroom
}

/** The overlay program's widths, reasons and scales (docs/overlay.md). */
object Overlay {
  val EniWidth = 10
  val VnetWidth = 10
  val GroupWidth = 16
  /** The Corundum 512-bit build: the scale of the VPP study, on chip. */
  val Corundum = OverlayScale("corundum", enis = 1024, vnets = 1024, mappings = 8192, routes = 32768, aclRules = 6144,
    sessions = 65536, exactHeadroom = 2)
  /** 64-bit builds (the test models, matcha-sim's w64): a board's sizes, exact tables
    * without headroom. The Versa board's LFE5UM5G-45F holds the program at no size
    * (docs/overlay.md, "Scale"). */
  val Board = OverlayScale("board", enis = 256, vnets = 256, mappings = 256, routes = 256, aclRules = 64, sessions = 1024,
    exactHeadroom = 1)
  val scales = Seq(Corundum, Board)
  /** The smallest tables the resource study builds the pipeline with (ProgramUnits): 4
    * slots a way in the exact and session tables, 16 ENIs, VNETs, mappings and routes, 8
    * ACL rules; what the program's logic takes whatever its tables hold. */
  val Least = OverlayScale("least", enis = 16, vnets = 16, mappings = 16, routes = 16, aclRules = 8, sessions = 16,
    exactHeadroom = 1)
  /** A configuration's scale: a 512-bit build is the Corundum card's. */
  def scaleOf(cfg: matcha.MatchaConfig): OverlayScale = if (cfg.dataWidth >= 512) Corundum else Board
  /** meta.aclVerdict: what the ACL said (0: the ACL did not apply). */
  val AclPermit = 1
  val AclDeny = 2
  val AclToHost = 3
  val NotOverlay = 0x30
  val NotOverlayDrop = 0x31
  val VipMiss = 0x32
  val EniMiss = 0x33
  val EniDown = 0x34
  val InboundRouteMiss = 0x35
  val PaValidationMiss = 0x36
  val AclDenied = 0x37
  val AclToHostReason = 0x38
  val SessionFull = 0x39
  val PolicedRed = 0x3A
  val PolicedYellow = 0x3B
  val RouteMiss = 0x3C
  val RouteDrop = 0x3D
  val MappingMiss = 0x3E
  val VnetMiss = 0x3F
  val MappingLate = 0x40
  /** Each table's region of the memory, so that the three can share one channel (the
    * Corundum build's memory core: ip/corundum/README.md, "Tables in the card's memory"):
    * sessions from 0, mappings from 1 GiB and routes from 1.5 GiB: room for 2^23 session
    * buckets of 128 bytes (32M sessions fill them to 67 %; at a sixth full they take 2^25,
    * 4 GiB: docs/overlay.md), 2^22 mapping buckets of 128 bytes (8M mappings fill a third)
    * and 2^20 routes' lowest levels (32 MB). */
  val MemoryRegions: Map[String, BigInt] = Map("sessions" -> BigInt(0), "mapping" -> (BigInt(1) << 30),
    "route" -> (BigInt(3) << 29))
  /** Read and write ids of a table's port: 6 bits, so that the crossbar joining three ports
    * adds 2 and the shared port has Corundum's 8 (AXI_DDR_ID_WIDTH). The tables use ids 0 to 3. */
  val MemoryIdWidth = 6
  /** The mapping table in memory (Programs.overlay): a DDR4 channel's port as Corundum's
    * Alveo targets give the application block (AXI_DDR_DATA_WIDTH 512, AXI_DDR_ID_WIDTH 8),
    * whose buckets of two 64-byte beats hold six mappings of `MappingBytes`, three in
    * each beat (BucketLayout); a result 512 clocks after its key, for
    * reads answered in 320. Two beats of one row cost a DRAM about what one does, and a
    * bucket of six refuses far fewer keys than one of three at the same memory a key
    * (docs/tables.md, "Load factor").
    * Addresses of 31 bits: the regions end below 2 GiB, and every memory channel Corundum
    * gives has at least that many (AXI_DDR_ADDR_WIDTH 31 to 34 by board,
    * AXI_HBM_ADDR_WIDTH 33 on the U280 and U50). */
  val MappingMemory = TableMemory(lateReason = MappingLate, axi = spinal.lib.bus.amba4.axi.Axi4Config(addressWidth = 31,
    dataWidth = 512, idWidth = MemoryIdWidth, useRegion = false), baseAddress = MemoryRegions("mapping"), bucketBeats = 2)
  /** The on-chip stash of a mapping table in memory for `mappings` mappings: 4 ways of
    * 2^-14 of them each (at least 4): 0.024 % of them, where the buckets refuse 0.009 %
    * (bench/results/mapping_load.md), so that the stash stays under half full (docs/tables.md,
    * "The stash"). */
  def mappingStash(mappings: Int): Int = 4 * ((1 << log2Up(mappings)) >> 14).max(4)
  /** A mapping's bytes in memory: flags and action, VNET and address, underlay address and
    * MAC (docs/tables.md, "Layout and hash"). */
  val MappingBytes = 2 + 6 + 10
  val SessionLate = 0x41
  val SessionBusy = 0x42
  /** The sessions in memory (Programs.overlay): the same port's shape, buckets of two beats
    * holding six sessions of `SessionBytes` (docs/sessions.md, "Sessions in memory");
    * results as the mapping table's. */
  val SessionMemory = matcha.program.SessionMemory(MappingMemory.copy(lateReason = SessionLate,
    baseAddress = MemoryRegions("sessions")), busyReason = SessionBusy)
  /** An IPv4 session's bytes in memory: flags, tick and the 16-byte key. */
  val SessionBytes = 3 + 16
  /** Entries of `entryBytes` a bucket of `m` holds. */
  def slots(m: TableMemory, entryBytes: Int): Int = matcha.table.BucketLayout(m.bucketBytes, m.bucketBeats, entryBytes).slots
  val RouteLate = 0x43
  /** The route table's lowest levels in memory (Programs.overlay; docs/tables.md, "LPM
    * levels in memory"): a port, a 455-bit node of 7 slots to a 64-byte beat,
    * each level given the mapping table's time. */
  val RouteMemory = MappingMemory.copy(lateReason = RouteLate, baseAddress = MemoryRegions("route"), bucketBeats = 1)
  val RouteMemoryLevels = 2
}

/** The "program" section of layout.json (docs/pipeline.md). Every table's descriptor index
  * and latency are those of the descriptor its control bus registered (`objects`), so the
  * file cannot disagree with the hardware. */
object ProgramJson {
  /** A JSON number for an integer the file carries: exact only up to 2^53. */
  def number(v: BigInt, what: String): ujson.Num = {
    require(v.abs < (BigInt(1) << 53), s"$what = $v does not fit a JSON number exactly")
    ujson.Num(v.toDouble)
  }

  private def op(o: Op): ujson.Obj = o match {
    case Op.SetField(f, p) => ujson.Obj("op" -> "set", "field" -> f, "param" -> p)
    case Op.SetConst(f, v) => ujson.Obj("op" -> "setConst", "field" -> f, "value" -> number(v, s"the constant for $f"))
    case Op.Decrement(f) => ujson.Obj("op" -> "decrement", "field" -> f)
    case Op.Copy(f, from) => ujson.Obj("op" -> "copy", "field" -> f, "from" -> from)
    case Op.Drop(r) => ujson.Obj("op" -> "drop", "reason" -> r)
    case Op.Punt(r) => ujson.Obj("op" -> "punt", "reason" -> r)
    case Op.Check(c, f, fate) => ujson.Obj("op" -> "check", "check" -> c.label, "field" -> f, "fate" -> fate.label, "reason" -> c.code)
    case Op.Meter(m, p) => ujson.Obj("op" -> "meter", "meter" -> m, "param" -> p)
  }


  private def table(t: TableSpec, d: ObjectDescriptor, layout: PhvLayout): ujson.Obj = {
    val json = ujson.Obj(
      "name" -> t.name, "index" -> d.index, "kind" -> t.kind.label, "size" -> t.size, "entries" -> t.entries,
      "keyWidth" -> d.keyWidth, "dataWidth" -> d.dataWidth, "latency" -> d.latency, "counters" -> t.counters,
      "applyIf" -> t.applyIf)
    for ((k, v) <- t.kind.json(t)) json(k) = v
    json("key") = t.key.map { k =>
      val field = ujson.Obj("fields" -> k.fields, "width" -> layout(k.fields.head).width)
      if (k.range) field("range") = true
      field
    }
    json("actions") = t.actions.zipWithIndex.map { case (a, id) =>
      ujson.Obj("name" -> a.name, "id" -> id,
        "params" -> a.params.map(p => ujson.Obj("name" -> p.name, "width" -> p.width, "offset" -> a.offsets(p.name))),
        "ops" -> a.ops.map(op))
    }
    json("default") = ujson.Obj("action" -> t.default, "data" -> number(t.defaultData, s"table ${t.name}'s default data"))
    json
  }

  /** "ways": a key's candidate slots (in memory, those of its bucket). */
  private def session(s: SessionSpec, d: ObjectDescriptor): ujson.Obj = {
    val json = ujson.Obj(
      "name" -> s.name, "index" -> d.index, "size" -> d.size, "ways" -> d.geometry, "keyWidth" -> d.keyWidth,
      "latency" -> d.latency, "after" -> s.after, "applyIf" -> s.applyIf, "learn" -> s.learn, "reason" -> s.reason,
      "fields" -> ujson.Obj.from(s.inputs.map { case (n, k, w) => n -> ujson.Obj("fields" -> k.fields, "width" -> w) }),
      "result" -> ujson.Obj.from(Seq("hit", "reply", "state", "learned", "insertFailed").zip(SessionSpec.resultFields)
        .map { case (k, f) => k -> ujson.Str(f) }))
    for (m <- s.memory) {
      val memory = memoryJson(s.name, 1, m.table)
      memory("busyReason") = m.busyReason
      json("memory") = memory
    }
    json
  }

  /** A memory-backed table's `ports` ports and their timing, as layout.json's "memory"
    * member gives them. */
  def memoryJson(name: String, ports: Int, m: TableMemory): ujson.Obj = ujson.Obj(
    "ports" -> ujson.Arr(TableMemory.portNames(s"m_axi_$name", ports).map(ujson.Str(_)): _*), "dataWidth" -> m.axi.dataWidth,
    "bucketBytes" -> m.bucketBytes,
    "addressWidth" -> m.axi.addressWidth, "idWidth" -> m.axi.idWidth, "baseAddress" -> number(m.baseAddress, s"table $name's base address"),
    "memoryLatency" -> m.memoryLatency, "lateReason" -> m.lateReason)

  /** The section, with `objects` the descriptors the program's control bus registered. */
  def apply(p: Program, layout: PhvLayout, objects: Seq[ObjectDescriptor]): ujson.Obj = {
    val byName = objects.map(d => d.name -> d).toMap
    def descriptor(name: String): ObjectDescriptor =
      byName.getOrElse(name, throw new IllegalStateException(s"program ${p.name}: no descriptor for $name"))
    ujson.Obj(
      "name" -> p.name,
      "latency" -> p.latency(layout),
      "metadata" -> p.metadata.map { case (f, w) => ujson.Obj("name" -> f, "width" -> w) },
      "stages" -> p.stages.map(s => s.map(t => descriptor(t.name).index)),
      "tables" -> p.tables.map(t => table(t, descriptor(t.name), layout)),
      "meters" -> p.meters.map { m =>
        val d = descriptor(m.name)
        ujson.Obj("name" -> m.name, "index" -> d.index, "size" -> d.size, "latency" -> d.latency)
      },
      "sessions" -> p.session.toSeq.map(s => session(s, descriptor(s.name))))
  }
}
