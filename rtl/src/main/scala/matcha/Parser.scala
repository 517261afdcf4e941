// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._
import spinal.lib._

/** What travels between parser levels. */
case class ParserState(cfg: MatchaConfig) extends Bundle {
  val record = HeaderRecord(cfg)
  val phv = Bits(cfg.layout.width bits)
  val reach = Bits(cfg.graph.instances.size bits)
  val offsets = Vec.fill(cfg.graph.instances.size)(UInt(cfg.offsetWidth bits))
  val headerError = UInt(8 bits)
}

object Parser {
  /** The PHV fields the parser sets to the same value in every PHV: the push headers, the
    * colour (green) and the session stage's input and result, which nothing is parsed
    * into, and the root header's offset (it starts the frame). The stage chain carries
    * none of them before a stage writes it (program.PhvPlan). */
  def constants(cfg: MatchaConfig): Map[String, PhvConstant] = {
    val layout = cfg.layout
    val names = cfg.pushHeaders.flatMap(i => s"push.${i.name}.valid" +: i.htype.fields.map(f => s"push.${i.name}.${f.name}")) ++
      Seq(s"hdr.${cfg.graph.root.name}.offset", "meta.color", "meta.learn") ++ program.SessionSpec.resultFields
    names.map(n => n -> PhvConstant(layout(n).width, 0)).toMap
  }
}

/** The programmable parser: one pipeline level per depth of the parse graph, so a new frame
  * enters every clock and leaves `latency` clocks later.
  *
  * The generator walks the graph once to learn every byte offset each header can start at;
  * a header's fixed part is then a one-hot choice among those window slices, so the hardware
  * holds no general barrel shifter. Transitions compare key fields with constants and hand
  * the next header its start offset (this header's end). */
class Parser(cfg: MatchaConfig) extends Component {
  setDefinitionName("matcha_parser")
  val io = new Bundle {
    val record = slave(Flow(HeaderRecord(cfg)))
    val phv = master(Flow(Bits(cfg.layout.width bits)))
  }
  io.record.setName("in")
  io.phv.setName("out")

  val graph = cfg.graph
  val layout = cfg.layout
  val H = cfg.headerBytes
  val offsetsOf = graph.possibleOffsets(H)
  val index = graph.instances.map(_.name).zipWithIndex.toMap
  def windowByte(w: Bits, b: Int): Bits = w(b * 8, 8 bits)

  val start = ParserState(cfg)
  start.record := io.record.payload
  start.phv := 0
  start.reach := 0
  start.reach(index(graph.root.name)) := True
  start.offsets.foreach(_ := 0)
  start.headerError := 0

  /** One parse-graph level: extract, check and branch for every instance at `lvl`. */
  def parseLevel(lvl: Int, s: ParserState): ParserState = {
    val n = ParserState(cfg)
    n := s
    n.flatten.foreach(_.allowOverride())
    val phv = new PhvAccess(n.phv, layout)
    val frameLen = s.record.frameLen.resize(cfg.frameLenWidth + 1)
    val edges = scala.collection.mutable.ArrayBuffer[(Int, Bool, UInt)]()
    val errors = scala.collection.mutable.ArrayBuffer[UInt]()
    for (inst <- graph.instances if graph.level(inst.name) == lvl) new Area {
      setName(s"parse_${inst.name}")
      val t = inst.htype
      val idx = index(inst.name)
      val reach = s.reach(idx)
      val offset = s.offsets(idx)
      val fixedBits = t.bytes * 8
      val header = offsetsOf(inst.name)
        .map(o => (offset === o) ? Hw.msbFirst((o until o + t.bytes).map(windowByte(s.record.window, _))) | B(0, fixedBits bits))
        .foldLeft(B(0, fixedBits bits))(_ | _)
      def field(name: String): Bits = {
        val f = t.field(name)
        header(fixedBits - 1 - f.bitOffset downto fixedBits - f.bitOffset - f.width)
      }
      val wideOffset = offset.resize(cfg.frameLenWidth + 1)
      val fixedEnd = wideOffset + t.bytes
      val length = t.length match {
        case Some(l) => (field(l.field).asUInt * U(l.unitBytes)).resize(cfg.offsetWidth + 1)
        case None    => U(t.bytes, cfg.offsetWidth + 1 bits)
      }
      val end = wideOffset + length
      val checks = Seq(
        (fixedEnd > frameLen) -> ParseError.Truncated,
        (fixedEnd > H) -> ParseError.TooDeep
      ) ++ t.version.map { case (fn, v) => (field(fn).asUInt =/= v) -> ParseError.IpVersion } ++
        t.length.toSeq.flatMap(l =>
          Seq((length < t.bytes) -> l.tooShortError, (end > frameLen) -> ParseError.Truncated, (end > H) -> ParseError.TooDeep)
        )
      val error = UInt(8 bits)
      error := 0
      checks.reverse.foreach { case (c, e) => when(c) { error := e.code } }
      val valid = reach && error === 0
      errors += (reach ? error | U(0, 8 bits))

      val prefix = s"hdr.${inst.name}"
      phv(s"$prefix.valid") := valid.asBits
      phv(s"$prefix.offset") := offset.asBits
      t.fields.foreach(f => phv(s"$prefix.${f.name}") := field(f.name))
      if (t.checksum.isDefined) t.writableFields.foreach(f => phv(s"$prefix.${f.name}Orig") := field(f.name))
      // RFC 1071: the one's complement sum of the fixed part's 16-bit words, checksum
      // included, is 0xFFFF when the checksum is right. Ten words need two end-around folds.
      if (t.checksum.isDefined) {
        val words = (0 until t.bytes / 2).map(w => header(fixedBits - 1 - 16 * w downto fixedBits - 16 - 16 * w).asUInt.resize(20))
        val once = words.reduceBalancedTree(_ + _)
        val twice = once(15 downto 0).resize(17) + once(19 downto 16)
        val folded = twice(15 downto 0) + twice(16).asUInt
        phv(s"$prefix.checksumOk") := (folded === 0xFFFF).asBits
      }
      // RFC 1812 5.2.2: the datagram holds at least its own header and fits in the frame.
      t.datagram.foreach { d =>
        val datagram = field(d.field).asUInt.resize(cfg.frameLenWidth + 1) + d.fixedBytes
        phv(s"$prefix.lengthOk") := (datagram >= length && wideOffset + datagram <= frameLen).asBits
      }

      graph.transitions.get(inst.name).toSeq.foreach { sel =>
        sel.cases.foreach { case (values, next) =>
          val key = if (sel.key.isEmpty) True else Cat(sel.key.map(field)) === Cat(sel.key.zip(values).map { case (k, v) =>
            B(v, t.field(k).width bits)
          })
          val go = valid && key
          edges += ((index(next), go, end.resize(cfg.offsetWidth)))
        }
      }
      // The payload starts after the deepest valid header: a later level overrides this.
      when(valid) { phv("meta.payloadOffset") := end.resize(cfg.offsetWidth).asBits }
    }
    // A header is reached along one path only, so or-ing what its predecessors offer is exact.
    n.headerError := errors.foldLeft(s.headerError)(_ | _)
    edges.groupBy(_._1).foreach { case (ni, es) =>
      n.reach(ni) := es.map(_._2).foldLeft(s.reach(ni))(_ || _)
      n.offsets(ni) := es.map { case (_, go, end) => go ? end | U(0, cfg.offsetWidth bits) }.foldLeft(s.offsets(ni))(_ | _)
    }
    n
  }

  var state = start
  var valid: Bool = io.record.valid
  for (lvl <- 0 until graph.levels) {
    val next = parseLevel(lvl, state)
    state = RegNext(next).setName(s"level$lvl")
    valid = RegNext(valid).init(False).setName(s"level${lvl}_valid")
  }

  val result = new Area {
    val s = state
    val out = Bits(layout.width bits)
    out := s.phv
    val phv = new PhvAccess(out, layout)
    val r = s.record
    val error = UInt(8 bits)
    error := s.headerError
    when(r.frameLen < cfg.runtBytes) { error := ParseError.Runt.code }
    when(r.oversize) { error := ParseError.Oversize.code }
    when(r.badFrame) { error := ParseError.BadFrame.code }
    val drop = ParseError.dropped.map(e => error === e.code).reduce(_ || _)
    phv("meta.ingressPort") := r.ingressPort
    phv("meta.egressPort") := r.ingressPort
    phv("meta.frameLen") := r.frameLen.asBits
    phv("meta.parseError") := error.asBits
    phv("meta.reason") := error.asBits
    phv("meta.drop") := drop.asBits
    phv("meta.punt") := (error =/= 0 && !drop).asBits
    for ((name, c) <- Parser.constants(cfg)) phv(name) := B(c.value, c.width bits)
  }
  io.phv.valid := RegNext(valid) init False
  io.phv.payload := RegNext(result.out)

  /** Clocks from a record on `in` to its PHV on `out`. */
  def latency: Int = graph.levels + 1
}
