package matcha.program

import matcha.PhvLayout
import matcha.table.{ExactTableConfig, LpmTableConfig, TernaryTableConfig}

/** A pipeline program as data (docs/pipeline.md): tables in the order they apply, the
  * meter arrays their actions' `meter` ops execute, and the session table extern with the
  * place it takes among the tables. */
case class Program(name: String, tables: Seq[TableSpec], meters: Seq[MeterSpec] = Nil, session: Option[SessionSpec] = None) {
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
  def steps: Seq[Either[Seq[TableSpec], SessionSpec]] =
    stages.flatMap(s => Left(s) +: session.filter(_.after == s.last.name).map(Right(_)).toSeq)

  /** Descriptor indexes: the tables in stage order, the meter arrays, the session table. */
  def tableIndex: Map[String, Int] = stages.flatten.zipWithIndex.map { case (t, i) => t.name -> i }.toMap
  def sessionIndex: Int = tables.size + meters.size

  /** Clocks from the parser's PHV to the last stage's. */
  def latency(layout: PhvLayout): Int =
    stages.map(Stage.latency(_, layout)).sum + session.map(_.stageLatency).getOrElse(0)
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
    applyIf: Option[String] = Some("hdr.ipv4.valid")
) {
  require(reason >= 0x10 && reason < 256, s"session table $name: reasons are 0x10..0xff (parse errors own 1..15)")
  def config = matcha.table.SessionTableConfig(size, ways)
  /** A clock to take the inputs, the table's latency, a clock to write the result. */
  def stageLatency: Int = config.latency + 2
  /** Refuses fields wider than the inputs they feed, and a `learn` or `applyIf` that is
    * not one bit. */
  def check(layout: PhvLayout): Unit = {
    for ((input, k, w) <- inputs; f <- k.fields)
      require(layout(f).width <= w, s"session table $name: $input field $f is ${layout(f).width} bits, the input $w")
    for (f <- learn +: applyIf.toSeq)
      require(layout(f).width == 1, s"session table $name: $f is not a 1-bit field")
  }

  /** The inputs in the order of layout.json's "fields", with their widths in the table. */
  def inputs: Seq[(String, KeyField, Int)] = Seq(
    ("zone", zone, config.zoneWidth), ("protocol", protocol, 8), ("srcAddr", srcAddr, config.addrWidth),
    ("dstAddr", dstAddr, config.addrWidth), ("srcPort", srcPort, 16), ("dstPort", dstPort, 16), ("tcpFlags", tcpFlags, 8))
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

sealed trait MatchKind { def label: String }
object MatchKind {
  case object Exact extends MatchKind { val label = "exact" }
  case object Lpm extends MatchKind { val label = "lpm" }
  case object Ternary extends MatchKind { val label = "ternary" }
}

/** One key field: a PHV field, or the first of several same-width fields whose header is
  * valid. A field of a header that is not valid reads as 0. */
case class KeyField(fields: Seq[String]) {
  require(fields.nonEmpty)
}
object KeyField {
  def apply(field: String): KeyField = KeyField(Seq(field))
  def firstValid(fields: String*): KeyField = KeyField(fields)
}

case class Param(name: String, width: Int)

sealed trait Op { def writes: Seq[String] }
object Op {
  case class SetField(field: String, param: String) extends Op { def writes = Seq(field) }
  case class SetConst(field: String, value: BigInt) extends Op { def writes = Seq(field) }
  case class Decrement(field: String) extends Op { def writes = Seq(field) }
  case class Drop(reason: Int) extends Op { def writes = Seq("meta.drop", "meta.reason") }
  case class Punt(reason: Int) extends Op { def writes = Seq("meta.punt", "meta.reason") }
  /** Meter `param` of array `meter` colours the packet: meta.color (colour-aware meters
    * take the colour it had) becomes the meter's colour. */
  case class Meter(meter: String, param: String) extends Op { def writes = Seq("meta.color") }
}

case class Action(name: String, params: Seq[Param] = Nil, ops: Seq[Op] = Nil) {
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
    applyIf: Option[String] = None,
    counters: Boolean = true,
    ways: Int = 4,
    lpmLevels: Int = 4,
    lpmNodes: Int = 16
) {
  require(actions.nonEmpty && actions.size <= 256, s"table $name: 1 to 256 actions")
  require(actions.map(_.name).distinct.size == actions.size, s"table $name: action names must be unique")
  require(actions.exists(_.name == default), s"table $name: default action $default is not one of its actions")
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
  def dataWidth: Int = actions.map(_.dataWidth).max max 1
  def actionId(action: String): Int = actions.indexWhere(_.name == action)
  def writes: Set[String] = actions.flatMap(_.ops.flatMap(_.writes)).toSet
  /** The meter arrays the actions execute. */
  def meters: Set[String] = actions.flatMap(_.ops.collect { case Op.Meter(m, _) => m }).toSet
  /** Every PHV field the key and the condition read, valid bits included; a meter reads
    * the colour so far. */
  def reads: Set[String] = {
    val fields = key.flatMap(_.fields) ++ applyIf ++ (if (meters.nonEmpty) Seq("meta.color") else Nil)
    (fields ++ fields.map(Stage.validOf)).toSet
  }
  def exactConfig(keyWidth: Int) = ExactTableConfig(keyWidth, dataWidth, size, ways)
  def lpmConfig(keyWidth: Int) = LpmTableConfig(keyWidth, dataWidth, lpmLevels, lpmNodes, size)
  def ternaryConfig(keyWidth: Int) = TernaryTableConfig(keyWidth, dataWidth, size)
}

object Programs {
  val egress = "meta.egressPort"

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
      applyIf = Some("hdr.ipv4.valid"),
      actions = Seq(
        Action("route", Seq(Param("port", 4), Param("dmac", 48), Param("smac", 48)), Seq(
          Op.SetField(egress, "port"), Op.SetField("hdr.eth.dst", "dmac"), Op.SetField("hdr.eth.src", "smac"),
          Op.Decrement("hdr.ipv4.ttl"))),
        Action("drop", ops = Seq(Op.Drop(0x21))),
        Action("no_route", ops = Seq(Op.Punt(0x22)))),
      default = "no_route"),
    TableSpec("acl", MatchKind.Ternary,
      Seq(KeyField("hdr.ipv4.src"), KeyField("hdr.ipv4.dst"), KeyField("hdr.ipv4.protocol"),
        KeyField.firstValid("hdr.tcp.srcPort", "hdr.udp.srcPort"), KeyField.firstValid("hdr.tcp.dstPort", "hdr.udp.dstPort")),
      size = 64, applyIf = Some("hdr.ipv4.valid"),
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
      size = 64, applyIf = Some("hdr.ipv4.valid"),
      actions = Seq(
        Action("pass"),
        Action("permit", ops = Seq(Op.SetConst("meta.learn", 1))),
        Action("deny", ops = Seq(Op.Drop(0x26)))),
      default = "pass"),
    TableSpec("by_session", MatchKind.Exact,
      Seq(KeyField("meta.ingressPort"), KeyField("meta.sessionHit"), KeyField("meta.sessionLearned")),
      size = 16, applyIf = Some("hdr.ipv4.valid"),
      actions = Seq(
        Action("pass"),
        Action("drop", ops = Seq(Op.Drop(0x28))),
        Action("to_host", ops = Seq(Op.Punt(0x29)))),
      default = "pass")
  ), session = Some(SessionSpec("sessions", size = 64, after = "acl", reason = 0x27)))

  val all = Seq(l2l3, policer, conntrack)
}

/** The "program" section of layout.json (docs/pipeline.md). */
object ProgramJson {
  private def q(s: String) = "\"" + s + "\""

  private def op(o: Op): String = o match {
    case Op.SetField(f, p) => s"""{"op": "set", "field": ${q(f)}, "param": ${q(p)}}"""
    case Op.SetConst(f, v) => s"""{"op": "setConst", "field": ${q(f)}, "value": $v}"""
    case Op.Decrement(f) => s"""{"op": "decrement", "field": ${q(f)}}"""
    case Op.Drop(r) => s"""{"op": "drop", "reason": $r}"""
    case Op.Punt(r) => s"""{"op": "punt", "reason": $r}"""
    case Op.Meter(m, p) => s"""{"op": "meter", "meter": ${q(m)}, "param": ${q(p)}}"""
  }

  private def table(t: TableSpec, index: Int, layout: PhvLayout): String = {
    val key = t.key.map(k => s"""{"fields": [${k.fields.map(q).mkString(", ")}], "width": ${layout(k.fields.head).width}}""")
    val actions = t.actions.zipWithIndex.map { case (a, id) =>
      val params = a.params.map(p => s"""{"name": ${q(p.name)}, "width": ${p.width}, "offset": ${a.offsets(p.name)}}""")
      s"""        {"name": ${q(a.name)}, "id": $id, "params": [${params.mkString(", ")}], "ops": [${a.ops.map(op).mkString(", ")}]}"""
    }
    val geometry = t.kind match {
      case MatchKind.Exact => s""", "ways": ${t.ways}"""
      case MatchKind.Lpm => s""", "lpm": {"levels": ${t.lpmLevels}, "nodes": ${t.lpmNodes}}"""
      case MatchKind.Ternary => ""
    }
    s"""    {
      "name": ${q(t.name)}, "index": $index, "kind": ${q(t.kind.label)}, "size": ${t.size},
      "keyWidth": ${Stage.keyWidth(t, layout)}, "dataWidth": ${t.dataWidth}, "latency": ${Stage.tableLatency(t, layout)}, "counters": ${t.counters},
      "applyIf": ${t.applyIf.map(q).getOrElse("null")}$geometry,
      "key": [${key.mkString(", ")}],
      "actions": [
${actions.mkString(",\n")}
      ],
      "default": {"action": ${q(t.default)}, "data": ${t.defaultData}}
    }"""
  }

  private def session(s: SessionSpec, index: Int, layout: PhvLayout): String = {
    val c = s.config
    val fields = s.inputs.map { case (n, k, w) => s"""${q(n)}: {"fields": [${k.fields.map(q).mkString(", ")}], "width": $w}""" }
    s"""
      {
        "name": ${q(s.name)}, "index": $index, "size": ${c.size}, "ways": ${c.ways}, "keyWidth": ${c.keyWidth},
        "latency": ${c.latency}, "after": ${q(s.after)}, "applyIf": ${s.applyIf.map(q).getOrElse("null")},
        "learn": ${q(s.learn)}, "reason": ${s.reason},
        "fields": {${fields.mkString(", ")}},
        "result": {${Seq("hit", "reply", "state", "learned", "insertFailed").zip(SessionSpec.resultFields).map { case (k, f) => s"${q(k)}: ${q(f)}" }.mkString(", ")}}
      }
    """
  }

  def apply(p: Program, layout: PhvLayout): String = {
    val index = p.tableIndex
    val stages = p.stages.map(s => s.map(t => index(t.name)).mkString("[", ", ", "]"))
    // Meter arrays' windows follow the tables'.
    val meters = p.meters.zipWithIndex.map { case (m, i) =>
      s"""      {"name": ${q(m.name)}, "index": ${p.tables.size + i}, "size": ${m.size}, "latency": ${m.config.latency}}"""
    }
    s"""{
    "name": ${q(p.name)},
    "latency": ${p.latency(layout)},
    "stages": [${stages.mkString(", ")}],
    "tables": [
${p.tables.map(t => table(t, index(t.name), layout)).mkString(",\n")}
    ],
    "meters": [${if (meters.isEmpty) "" else meters.mkString("\n", ",\n", "\n    ")}],
    "sessions": [${p.session.map(s => session(s, p.sessionIndex, layout)).mkString}]
  }"""
  }
}
