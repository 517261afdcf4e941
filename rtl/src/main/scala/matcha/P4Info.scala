// SPDX-License-Identifier: Apache-2.0
package matcha

import matcha.program.{MatchKind, Program}

/** A program's P4Info (p4runtime's p4info.proto) for the P4Runtime server `matcha-p4rt`
  * (docs/p4runtime.md), written from the same `Program` as layout.json.
  *
  * Written as the proto3 JSON mapping of the P4Info message: ujson writes it as it writes
  * layout.json, and no library on the Maven side carries p4info.proto's classes (the
  * `p4runtime` Python package does). `tools/p4info_text.py` parses the JSON into the
  * package's P4Info class, which refuses any field the message does not have, and writes the
  * text format P4Runtime clients load beside it.
  *
  * Names are qualified as p4c qualifies a v1model program's, by the control they are in:
  * tables `ingress.<table>`, actions `ingress.<table>.<action>` (an action belongs to its
  * table here, and two tables' `drop` drop with different reasons), meter arrays
  * `ingress.<meter>`, a table's per-entry counters `ingress.<table>.counter`. Aliases are the
  * shortest suffix of whole name components no other name ends with, as p4c makes them.
  */
object P4Info {
  /** `pkg_info.arch`: the Matcha architecture (docs/pipeline.md), not v1model or PSA. */
  val Arch = "matcha"
  val Control = "ingress"

  /** P4Ids.Prefix of p4info.proto: the top byte of an id names the kind of entity. */
  object Prefix {
    val Action = 0x01
    val Table = 0x02
    val ControllerHeader = 0x04
    val DirectCounter = 0x13
    val Meter = 0x14
  }

  /** Bob Jenkins' one-at-a-time hash of the name's bytes, the hash p4c's
    * P4RuntimeSymbolTable gives resource names. */
  def jenkins(name: String): Int = {
    var h = 0
    for (b <- name.getBytes("UTF-8")) {
      h += b
      h += h << 10
      h ^= h >>> 6
    }
    h += h << 3
    h ^= h >>> 11
    h + (h << 15)
  }

  /** Ids as p4c assigns them: per kind, names in sorted order, each `prefix << 24 | hash`'s
    * low 24 bits, and on a collision the next free value (linear probing). */
  def ids(symbols: Seq[(Int, String)]): Map[(Int, String), Long] = {
    val assigned = scala.collection.mutable.LinkedHashMap.empty[(Int, String), Long]
    val taken = scala.collection.mutable.Set.empty[Long]
    for ((prefix, name) <- symbols.distinct.sortBy(s => (s._1, s._2))) {
      var value = jenkins(name)
      def id = (prefix.toLong << 24) | (value & 0xffffff).toLong
      val start = value
      while (taken.contains(id)) {
        value += 1
        require(value != start, s"no P4Runtime id left for $name")
      }
      taken += id
      assigned((prefix, name)) = id
    }
    assigned.toMap
  }

  /** Each name's alias: its shortest suffix of whole components that is the suffix of no
    * other name. */
  def aliases(names: Seq[String]): Map[String, String] = names.map { n =>
    val parts = n.split('.')
    val alias = (1 to parts.length).map(k => parts.takeRight(k).mkString(".")).find(s =>
      names.forall(o => o == n || !(o == s || o.endsWith("." + s)))).getOrElse(n)
    n -> alias
  }.toMap

  /** A value as P4Runtime's canonical byte string (the fewest bytes, zero as one zero
    * byte), base64 as the proto3 JSON mapping writes `bytes`. */
  def bytes(v: BigInt): String = {
    val raw = v.toByteArray.dropWhile(_ == 0)
    java.util.Base64.getEncoder.encodeToString(if (raw.isEmpty) Array[Byte](0) else raw)
  }

  /** The P4Info of `program` on `cfg`, for the pipeline whose BUILD_ID is `buildId`
    * (`pkg_info.version`, which the server checks against the device it opens). */
  def apply(cfg: MatchaConfig, program: Program, buildId: Long): ujson.Obj = {
    val phv = program.phv(cfg)
    def table(t: String) = s"$Control.$t"
    def action(t: String, a: String) = s"$Control.$t.$a"
    def counter(t: String) = s"$Control.$t.counter"
    def meter(m: String) = s"$Control.$m"
    val symbols =
      program.tables.map(t => Prefix.Table -> table(t.name)) ++
      program.tables.flatMap(t => t.actions.map(a => Prefix.Action -> action(t.name, a.name))) ++
      program.tables.filter(_.counters).map(t => Prefix.DirectCounter -> counter(t.name)) ++
      program.meters.map(m => Prefix.Meter -> meter(m.name)) ++
      Seq(Prefix.ControllerHeader -> "packet_in", Prefix.ControllerHeader -> "packet_out")
    val id = ids(symbols)
    val alias = aliases(symbols.map(_._2))
    def preamble(prefix: Int, name: String, doc: String = "") = {
      val p = ujson.Obj("id" -> id((prefix, name)).toDouble, "name" -> name, "alias" -> alias(name))
      if (doc.nonEmpty) p("doc") = ujson.Obj("brief" -> doc)
      p
    }
    def param(pid: Int, name: String, width: Int) = ujson.Obj("id" -> pid, "name" -> name, "bitwidth" -> width)

    val tables = program.tables.map { t =>
      val last = t.key.size - 1
      val fields = t.key.zipWithIndex.map { case (k, i) =>
        val kind =
          if (t.kind == MatchKind.Ternary) (if (k.range) "RANGE" else "TERNARY")
          // An LPM table's fields form one prefix: the last is the LPM field, those before exact.
          else if (t.kind == MatchKind.Lpm && i == last) "LPM"
          else "EXACT"
        ujson.Obj("id" -> (i + 1), "name" -> k.fields.mkString("|"), "bitwidth" -> phv(k.fields.head).width,
          "matchType" -> kind)
      }
      val default = t.actions(t.actionId(t.default))
      val offsets = default.offsets
      val initial = ujson.Obj("actionId" -> id((Prefix.Action, action(t.name, t.default))).toDouble)
      if (default.params.nonEmpty)
        initial("arguments") = default.params.zipWithIndex.map { case (p, i) =>
          ujson.Obj("paramId" -> (i + 1), "value" -> bytes((t.defaultData >> offsets(p.name)) & ((BigInt(1) << p.width) - 1)))
        }
      val json = ujson.Obj(
        "preamble" -> preamble(Prefix.Table, table(t.name), s"${t.kind.label} table"),
        "matchFields" -> fields,
        "actionRefs" -> t.actions.map(a => ujson.Obj("id" -> id((Prefix.Action, action(t.name, a.name))).toDouble)),
        "initialDefaultAction" -> initial,
        "size" -> t.entries)
      if (t.counters) json("directResourceIds") = Seq(ujson.Num(id((Prefix.DirectCounter, counter(t.name))).toDouble))
      json
    }
    val actions = program.tables.flatMap(t => t.actions.map { a =>
      val json = ujson.Obj("preamble" -> preamble(Prefix.Action, action(t.name, a.name)))
      if (a.params.nonEmpty) json("params") = a.params.zipWithIndex.map { case (p, i) => param(i + 1, p.name, p.width) }
      json
    })
    val directCounters = program.tables.filter(_.counters).map(t => ujson.Obj(
      "preamble" -> preamble(Prefix.DirectCounter, counter(t.name), "packets and bytes of each entry"),
      "spec" -> ujson.Obj("unit" -> "BOTH"),
      "directTableId" -> id((Prefix.Table, table(t.name))).toDouble))
    val meters = program.meters.map(m => ujson.Obj(
      "preamble" -> preamble(Prefix.Meter, meter(m.name), "RFC 2698 two-rate three-colour markers (docs/tables.md, \"Meters\")"),
      "spec" -> ujson.Obj("unit" -> "BYTES", "type" -> "TWO_RATE_THREE_COLOR"),
      "size" -> m.size))
    val packetIn = ujson.Obj(
      "preamble" -> preamble(Prefix.ControllerHeader, "packet_in", "a punted frame"),
      "metadata" -> Seq(param(1, "ingress_port", phv("meta.ingressPort").width), param(2, "reason", phv("meta.reason").width)))
    // A packet-out leaves by egress_port as it is, as a NIC's host frames do; with
    // submit_to_ingress 1 it enters the pipeline instead, as a frame received on ingress_port
    // (the pipeline has no port of its own for the controller's frames). The field names are
    // those of the SAI P4 programs' packet_out header, the third is Matcha's.
    val packetOut = ujson.Obj(
      "preamble" -> preamble(Prefix.ControllerHeader, "packet_out",
        "a frame from the controller: out of egress_port, or into the pipeline on ingress_port"),
      "metadata" -> Seq(param(1, "egress_port", phv("meta.egressPort").width), param(2, "submit_to_ingress", 1),
        param(3, "ingress_port", phv("meta.ingressPort").width)))
    val info = ujson.Obj(
      "pkgInfo" -> ujson.Obj("name" -> program.name, "version" -> f"0x$buildId%08x", "arch" -> Arch,
        "doc" -> ujson.Obj("brief" -> f"Matcha ${program.name} program, ${cfg.name} configuration, build id 0x$buildId%08x")),
      "tables" -> tables,
      "actions" -> actions,
      "controllerPacketMetadata" -> Seq(packetIn, packetOut))
    if (directCounters.nonEmpty) info("directCounters") = directCounters
    if (meters.nonEmpty) info("meters") = meters
    info
  }

  /** The file name beside a layout: layout.json's is p4info.json, layout-<p>.json's
    * p4info-<p>.json. */
  def fileFor(layoutFile: String): String = layoutFile.replaceFirst("^layout", "p4info")
}
