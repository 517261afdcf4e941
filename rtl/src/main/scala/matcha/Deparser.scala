// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._
import spinal.lib._

/** Per-frame facts the deparser derives from the PHV and carries along with the frame's beats. */
case class DeparseContext(cfg: MatchaConfig) extends Bundle {
  val popLen = UInt(cfg.offsetWidth bits)
  val pushLen = UInt(log2Up(Deparser.maxPush(cfg) + 1) bits)
  val pushLanes = Bits(Deparser.maxPush(cfg) * 8 bits)
  val bodyEmpty = Bool()
  val user = OutUser(cfg)
}

case class DeparseBeat(cfg: MatchaConfig) extends Bundle {
  val data = Bits(cfg.dataWidth bits)
  val count = UInt(cfg.keepCountWidth bits)
  val beatIndex = UInt(log2Up(Deparser.windowBeats(cfg) + 1) bits)
  val last = Bool()
  val ctx = DeparseContext(cfg)
}

/** Bytes `[start, start + count)` of `data`, the next piece of an output frame. */
case class Chunk(cfg: MatchaConfig) extends Bundle {
  val data = Bits(cfg.dataWidth bits)
  val start = UInt(log2Up(cfg.dataBytes) bits)
  val count = UInt(cfg.keepCountWidth bits)
  val last = Bool()
  val user = OutUser(cfg)
}

object Deparser {
  def maxPush(cfg: MatchaConfig): Int = cfg.pushHeaders.map(_.htype.bytes).sum
  def windowBeats(cfg: MatchaConfig): Int = (cfg.headerBytes + cfg.dataBytes - 1) / cfg.dataBytes

  /** 16-bit one's-complement sum with end-around carry. */
  def onesSum(words: Seq[UInt]): UInt = {
    val wide = words.map(_.resize(16 + log2Up(words.size + 1))).reduce(_ + _)
    val once = wide(15 downto 0).resize(17) + wide(wide.getWidth - 1 downto 16).resize(17)
    (once(15 downto 0) + once(16 downto 16).resize(16))
  }

  /** A header's fixed part in network order (first wire bit at the MSB) built from `value`. */
  def image(t: HeaderType, value: FieldSpec => Bits): Bits = {
    val bits = B(0, t.bytes * 8 bits)
    val top = t.bytes * 8 - 1
    val img = Bits(t.bytes * 8 bits)
    img := bits
    t.fields.foreach(f => img(top - f.bitOffset downto top - f.bitOffset - f.width + 1) := value(f))
    img
  }
  def imageByte(img: Bits, b: Int): Bits = img(img.getWidth - 1 - 8 * b downto img.getWidth - 8 - 8 * b)

  /** Whether the deparser computes popLen from the valid bits and offsets: only when one of
    * them, or the payload offset, may differ from the parse (`changed`). Otherwise popLen is
    * 0: the parser's first valid header is the root, which starts the frame, and with no
    * valid header the payload offset is 0. */
  def pops(cfg: MatchaConfig, changed: String => Boolean): Boolean =
    popFields(cfg).exists(changed)
  private def popFields(cfg: MatchaConfig): Seq[String] =
    cfg.graph.instances.flatMap(i => Seq(s"hdr.${i.name}.valid", s"hdr.${i.name}.offset")) :+ "meta.payloadOffset"

  /** A header instance the write-back patches: its writable fields that may differ from the
    * frame's bytes (`fields`; the others are emitted from the frame as received), and for a
    * type with a checksum every field in the 16-bit words of its writable fields, which the
    * RFC 1624 update sums (`words`). */
  case class Patched(instance: HeaderInstance, fields: Seq[FieldSpec], words: Seq[Int]) {
    val t: HeaderType = instance.htype
    def prefix: String = s"hdr.${instance.name}"
    /** The fields whose values the patch reads. */
    def reads: Seq[FieldSpec] =
      (fields ++ t.checksum.map(t.field) ++ t.fields.filter(f => words.exists(w => f.bitOffset < 16 * w + 16 && f.bitOffset + f.width > 16 * w))).distinct
  }
  def patched(cfg: MatchaConfig, changed: String => Boolean): Seq[Patched] = cfg.graph.instances.flatMap { inst =>
    val t = inst.htype
    val fields = t.writableFields.filter(f => changed(s"hdr.${inst.name}.${f.name}") || changed(s"hdr.${inst.name}.${f.name}Orig"))
    val words = if (t.checksum.isDefined) t.writableFields.map(_.bitOffset / 16).distinct else Nil
    if (fields.isEmpty) None else Some(Patched(inst, fields, words))
  }

  /** The PHV fields a deparser reads when only the fields `changed` accepts may differ from
    * what the parser made of the frame. */
  def reads(cfg: MatchaConfig, changed: String => Boolean): Set[String] = {
    val pop = if (pops(cfg, changed)) popFields(cfg) else Nil
    val patches = patched(cfg, changed).flatMap { p =>
      Seq(s"${p.prefix}.valid", s"${p.prefix}.offset") ++ p.reads.map(f => s"${p.prefix}.${f.name}") ++
        (if (p.words.nonEmpty) p.fields.map(f => s"${p.prefix}.${f.name}Orig") else Nil)
    }
    val push = cfg.pushHeaders.flatMap { h =>
      s"push.${h.name}.valid" +: h.htype.fields.filterNot(f => filled(h.htype).contains(f.name)).map(f => s"push.${h.name}.${f.name}")
    }
    (pop ++ patches ++ push ++ Seq("meta.frameLen", "meta.drop", "meta.punt", "meta.reason", "meta.egressPort")).toSet
  }

  /** The fields of a pushed header the deparser fills in itself (docs/packet-path.md). */
  def filled(t: HeaderType): Set[String] =
    if (t == Headers.ipv4) Set("version", "ihl", "totalLen", "hdrChecksum")
    else if (t == Headers.udp) Set("length", "checksum")
    else Set()
}

/** Rebuilds each frame from its PHV: writes modified fields back in place (with an RFC 1624
  * checksum update), removes the popped leading headers, prepends pushed headers, drops what
  * the PHV says to drop, and packs the result into full beats with tkeep contiguous from bit 0.
  * Every byte it does not write back or push comes from the frame as buffered.
  *
  * `layout` is the PHV it receives; `changed` says which fields may differ from what the
  * parser made of the frame (all of them for the deparser alone). Writable fields that
  * cannot have changed equal the frame's bytes, so they are not written back, and the PHV
  * need not carry them (`Deparser.reads`).
  *
  * Three steps, each a registered stream stage: `front` joins PHV and frame and does the
  * write-back; `chunker` turns pushed headers and the kept part of every beat into chunks;
  * `packer` lays chunks end to end. A frame that neither pushes nor pops passes at one beat
  * per clock. */
class Deparser(cfg: MatchaConfig, layout: PhvLayout, changed: String => Boolean) extends Component {
  def this(cfg: MatchaConfig) = this(cfg, cfg.layout, _ => true)
  setDefinitionName("matcha_deparser")
  val io = new Bundle {
    val phv = slave(Stream(Bits(layout.width bits)))
    val frames = slave(Axis(cfg.dataBytes, 0))
    val out = master(Axis(cfg.dataBytes, cfg.outUserWidth))
    val drop = master(Flow(UInt(8 bits)))
    /** One pulse per frame, in frame order, when the frame's first beat enters: whether it
      * is dropped. A wrapper that carries per-frame state beside the path learns each frame's
      * fate here, before any of its bytes can reach `out`. */
    val decision = master(Flow(Bool()))
  }
  noIoPrefix()
  io.phv.setName("s_phv")
  io.drop.setName("drop")
  io.decision.setName("decision")
  Axis.renameToSpec(io.frames, "s_axis")
  Axis.renameToSpec(io.out, "m_axis")

  val lanes = cfg.dataBytes
  val graph = cfg.graph
  val windowBeats = Deparser.windowBeats(cfg)
  val maxPush = Deparser.maxPush(cfg)

  val context = new Area {
    val phv = new PhvAccess(io.phv.payload, layout)
    val frameLen = phv.u("meta.frameLen")
    val popLen = UInt(cfg.offsetWidth bits)
    if (Deparser.pops(cfg, changed)) {
      popLen := phv.u("meta.payloadOffset")
      graph.instances.reverse.foreach { i =>
        when(phv.bool(s"hdr.${i.name}.valid")) { popLen := phv.u(s"hdr.${i.name}.offset") }
      }
    } else popLen := 0
    val bodyLen = frameLen - popLen

    // Pushed headers: each starts where the valid ones before it end.
    val pushOffsets = cfg.pushHeaders.indices.map { q =>
      cfg.pushHeaders.take(q).foldLeft(Set(0)) { (acc, h) => acc ++ acc.map(_ + h.htype.bytes) }.toSeq.sorted
    }
    val pushValid = cfg.pushHeaders.map(h => phv.bool(s"push.${h.name}.valid"))
    val pushStart = cfg.pushHeaders.indices.map { q =>
      cfg.pushHeaders.take(q).zip(pushValid).map { case (h, v) => v ? U(h.htype.bytes, 8 bits) | U(0, 8 bits) }
        .foldLeft(U(0, 8 bits))(_ + _)
    }
    val pushLen = UInt(log2Up(maxPush + 1) bits)
    pushLen := cfg.pushHeaders.zip(pushValid).map { case (h, v) => v ? U(h.htype.bytes, 8 bits) | U(0, 8 bits) }
      .foldLeft(U(0, 8 bits))(_ + _).resized
    val pushImages = cfg.pushHeaders.zipWithIndex.map { case (h, q) =>
      val t = h.htype
      val lengthFromHere = (pushLen - pushStart(q)).resize(16) + bodyLen
      def given(f: FieldSpec) = phv(s"push.${h.name}.${f.name}")
      if (t == Headers.ipv4) {
        val filled = (f: FieldSpec) => f.name match {
          case "version"     => B(4, 4 bits)
          case "ihl"         => B(5, 4 bits)
          case "totalLen"    => lengthFromHere.asBits
          case "hdrChecksum" => B(0, 16 bits)
          case _             => given(f)
        }
        val noChecksum = Deparser.image(t, filled)
        val sum = Deparser.onesSum((0 until t.bytes / 2).map(w => noChecksum(t.bytes * 8 - 1 - 16 * w downto t.bytes * 8 - 16 - 16 * w).asUInt))
        Deparser.image(t, f => if (f.name == "hdrChecksum") (~sum).asBits else filled(f))
      } else if (t == Headers.udp) {
        Deparser.image(t, f => f.name match {
          case "length"   => lengthFromHere.asBits
          case "checksum" => B(0, 16 bits)
          case _          => given(f)
        })
      } else Deparser.image(t, given)
    }
    val pushLanes = Bits(maxPush * 8 bits)
    for (b <- 0 until maxPush) {
      val terms = cfg.pushHeaders.indices.flatMap { q =>
        val bytes = cfg.pushHeaders(q).htype.bytes
        pushOffsets(q).filter(o => b - o >= 0 && b - o < bytes).map { o =>
          (pushValid(q) && pushStart(q) === o) ? Deparser.imageByte(pushImages(q), b - o) | B(0, 8 bits)
        }
      }
      pushLanes(b * 8, 8 bits) := terms.foldLeft(B(0, 8 bits))(_ | _)
    }

    val empty = pushLen === 0 && bodyLen === 0
    val drop = phv.bool("meta.drop") || empty
    val reason = Bits(8 bits)
    reason := phv("meta.reason")
    when(empty && !phv.bool("meta.drop")) { reason := ParseError.Empty.code }

    val ctx = DeparseContext(cfg)
    ctx.popLen := popLen
    ctx.pushLen := pushLen
    ctx.pushLanes := pushLanes
    ctx.bodyEmpty := bodyLen === 0
    ctx.user.punt := phv.bool("meta.punt")
    ctx.user.egressPort := phv("meta.egressPort")
    ctx.user.reason := reason
  }

  /** Writable fields that may have changed, of every valid parsed header, placed back where
    * they were parsed from. */
  val writeBack = new Area {
    val phv = context.phv
    val beatIndex = Reg(UInt(log2Up(windowBeats + 1) bits)) init 0
    val offsetsOf = graph.possibleOffsets(cfg.headerBytes)
    case class Patch(instance: HeaderInstance, image: Bits, mask: BigInt)
    val patches = Deparser.patched(cfg, changed).map { pd =>
      val inst = pd.instance
      val t = inst.htype
      val p = pd.prefix
      // Bits the image does not need (outside the patch and the checksum's words) are 0.
      def current(f: FieldSpec) = if (pd.reads.contains(f)) phv(s"$p.${f.name}") else B(0, f.width bits)
      // A writable field that cannot have changed still holds its parsed value.
      def orig(f: FieldSpec) = if (pd.fields.contains(f)) phv(s"$p.${f.name}Orig") else current(f)
      val checksumField = t.checksum.map(t.field)
      val patchFields = pd.fields ++ checksumField
      val top = t.bytes * 8 - 1
      val mask = patchFields.map(f => ((BigInt(1) << f.width) - 1) << (top - f.bitOffset - f.width + 1)).reduce(_ | _)
      val image = checksumField match {
        case None => Deparser.image(t, current)
        case Some(cf) =>
          // RFC 1624 eqn. 3 over the 16-bit words that hold writable fields.
          val original = Deparser.image(t, f => if (f.writable) orig(f) else current(f))
          val updated = Deparser.image(t, current)
          val words = pd.words
          def word(img: Bits, w: Int) = img(top - 16 * w downto top - 16 * w - 15).asUInt
          val differs = pd.fields.map(f => current(f) =/= orig(f)).reduce(_ || _)
          val parsed = current(cf).asUInt
          val sum = Deparser.onesSum(Seq(~parsed) ++ words.map(w => ~word(original, w)) ++ words.map(w => word(updated, w)))
          val checksum = differs ? (~sum).asBits | parsed.asBits
          Deparser.image(t, f => if (f == cf) checksum else current(f))
      }
      Patch(inst, image, mask)
    }
    val hit = patches.map { pt =>
      val valid = phv.bool(s"hdr.${pt.instance.name}.valid")
      val offset = phv.u(s"hdr.${pt.instance.name}.offset")
      offsetsOf(pt.instance.name).map(o => o -> (valid && offset === o)).toMap
    }
    val data = Bits(cfg.dataWidth bits)
    for (lane <- 0 until lanes) {
      val orig = io.frames.payload.fragment.data(lane * 8, 8 bits)
      val terms = for {
        k <- 0 until windowBeats
        (pt, pi) <- patches.zipWithIndex
        t = pt.instance.htype
        o <- offsetsOf(pt.instance.name)
        b = k * lanes + lane - o
        if b >= 0 && b < t.bytes
        m = (pt.mask >> (8 * (t.bytes - 1 - b))) & 0xff
        if m != 0
      } yield (hit(pi)(o) && beatIndex === k, Deparser.imageByte(pt.image, b), B(m, 8 bits))
      if (terms.isEmpty) data(lane * 8, 8 bits) := orig
      else {
        val mask = terms.map { case (c, _, m) => c ? m | B(0, 8 bits) }.reduce(_ | _)
        val value = terms.map { case (c, v, m) => c ? (v & m) | B(0, 8 bits) }.reduce(_ | _)
        data(lane * 8, 8 bits) := (orig & ~mask) | value
      }
    }
  }

  val front = new Area {
    val beats = Stream(DeparseBeat(cfg))
    val both = io.phv.valid && io.frames.valid
    val drop = context.drop
    val last = io.frames.payload.last
    beats.valid := both && !drop
    beats.data := writeBack.data
    beats.count := Axis.keepCount(io.frames.payload.fragment.keep)
    beats.beatIndex := writeBack.beatIndex
    beats.last := last
    beats.ctx := context.ctx
    io.frames.ready := io.phv.valid && (drop || beats.ready)
    io.phv.ready := io.frames.valid && last && (drop || beats.ready)
    when(io.frames.fire) {
      when(writeBack.beatIndex =/= windowBeats) { writeBack.beatIndex := writeBack.beatIndex + 1 }
      when(last) { writeBack.beatIndex := 0 }
    }
    io.drop.valid := io.phv.fire && drop
    io.drop.payload := context.reason.asUInt
    io.decision.valid := io.frames.fire && writeBack.beatIndex === 0
    io.decision.payload := drop
  }

  /** Pushed headers first (as chunks of up to lanes bytes), then the part of each beat past popLen. */
  val chunker = new Area {
    val in = front.beats.m2sPipe()
    val out = Stream(Chunk(cfg))
    val ctx = in.ctx

    val beatStart = in.beatIndex.resize(cfg.offsetWidth + log2Up(lanes) + 1) << log2Up(lanes)
    val skip = (ctx.popLen > beatStart) ? Hw.min(ctx.popLen - beatStart, in.count.resize(beatStart.getWidth)) | U(0, beatStart.getWidth bits)
    val kept = in.count - skip.resize(cfg.keepCountWidth)

    out.user := ctx.user
    out.valid := in.valid && kept =/= 0
    out.data := in.data
    out.start := skip.resized
    out.count := kept
    out.last := in.last
    in.ready := out.ready || kept === 0

    // A configuration that pushes no headers (maxPush 0) has no pushing state at all.
    val push = (maxPush > 0) generate new Area {
      val pushBeats = (maxPush + lanes - 1) / lanes
      val pushIndex = Reg(UInt(log2Up(pushBeats + 1) bits)) init 0
      val pushChunks = ((ctx.pushLen.resize(ctx.pushLen.getWidth + 1) + (lanes - 1)) >> log2Up(lanes)).resize(pushIndex.getWidth)
      val pushing = in.beatIndex === 0 && pushIndex < pushChunks
      val pushed = (pushIndex.resize(ctx.pushLen.getWidth + 1) << log2Up(lanes)).resize(ctx.pushLen.getWidth + 1)
      val pushLeft = ctx.pushLen.resize(pushed.getWidth) - pushed
      val pushSlices = (0 until pushBeats).map(c => ctx.pushLanes.resize(pushBeats * lanes * 8)(c * lanes * 8, lanes * 8 bits))
      val pushSlice = if (pushBeats == 1) pushSlices.head else Vec(pushSlices)(pushIndex.resize(log2Up(pushBeats)))
      // The last pushed chunk ends where the first beat's kept bytes begin (a header popped
      // and one as long pushed, as in re-encapsulation): one chunk carries both, and the
      // frame takes no more clocks than it has beats.
      val merge = pushIndex === pushChunks - 1 && !ctx.bodyEmpty && pushLeft === skip.resize(pushLeft.getWidth)
      when(pushing) {
        out.valid := in.valid
        out.data := pushSlice
        out.start := 0
        out.count := Hw.min(pushLeft, U(lanes)).resized
        out.last := ctx.bodyEmpty && pushIndex === pushChunks - 1
        in.ready := False
        when(merge) {
          for (lane <- 0 until lanes) when(pushLeft <= lane) { out.data(lane * 8, 8 bits) := in.data(lane * 8, 8 bits) }
          out.count := (pushLeft + kept.resize(pushLeft.getWidth)).resized
          out.last := in.last
          in.ready := out.ready
        }
        when(out.fire) { pushIndex := pushIndex + 1 }
      }
      when(in.fire && in.last) { pushIndex := 0 }
    }
  }

  /** Lays chunks end to end in full beats; the bytes of a chunk that do not fit wait in `held`. */
  val packer = new Area {
    val in = chunker.out.m2sPipe()
    val out = Axis(lanes, cfg.outUserWidth)
    val held = Reg(Bits(cfg.dataWidth bits))
    val heldCount = Reg(UInt(log2Up(lanes) bits)) init 0
    val flushing = Reg(Bool()) init False
    val user = Reg(OutUser(cfg))

    val laneBits = log2Up(lanes)
    val rotation = (heldCount - in.start).resize(laneBits)
    val rotated = in.data.rotateLeft(rotation << 3)
    val total = heldCount.resize(laneBits + 2) + in.count
    val merged = Bits(cfg.dataWidth bits)
    for (lane <- 0 until lanes) {
      merged(lane * 8, 8 bits) := (heldCount > lane) ? held(lane * 8, 8 bits) | rotated(lane * 8, 8 bits)
    }
    val full = total >= lanes

    out.payload.fragment.user := (flushing ? user | in.user).asBits
    when(flushing) {
      out.valid := True
      out.payload.fragment.data := held
      out.payload.fragment.keep := Axis.keepMask(heldCount, lanes)
      out.payload.last := True
      in.ready := False
      when(out.ready) { flushing := False; heldCount := 0 }
    } otherwise {
      out.valid := in.valid && (full || in.last)
      out.payload.fragment.data := merged
      out.payload.fragment.keep := Axis.keepMask(Hw.min(total, U(lanes)), lanes)
      out.payload.last := in.last && total <= lanes
      in.ready := out.ready || !(full || in.last)
      when(in.fire) {
        user := in.user
        when(full) {
          held := rotated
          heldCount := (total - lanes).resized
          when(in.last && total =/= lanes) { flushing := True }
        } otherwise {
          held := merged
          heldCount := total.resized
        }
        when(in.last && total <= lanes) { heldCount := 0 }
      }
    }
  }
  io.out << packer.out
}
