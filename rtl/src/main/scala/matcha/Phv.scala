// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._

/** Generator parameters of the packet path. */
case class MatchaConfig(
    name: String,
    dataWidth: Int,
    headerBytes: Int = 128,
    portWidth: Int = 4,
    runtBytes: Int = 60,
    maxFrameBytes: Int = 9216,
    bufferBytes: Int = 16384,
    graph: ParseGraph = Headers.overlayGraph,
    pushHeaders: Seq[HeaderInstance] = Headers.pushHeaders
) {
  require(isPow2(dataWidth) && dataWidth >= 64, "data width must be a power of two, at least 64")
  require(headerBytes % 2 == 0 && headerBytes < 256, "header window must be even and below 256 bytes")
  require(maxFrameBytes + dataWidth / 8 <= bufferBytes, "the packet buffer must hold a maximum-size frame")
  def dataBytes: Int = dataWidth / 8
  def keepCountWidth: Int = log2Up(dataBytes + 1)
  def offsetWidth: Int = 8
  def frameLenWidth: Int = 16
  def inUserWidth: Int = 1 + portWidth
  def outUserWidth: Int = 1 + portWidth + 8
  val layout: PhvLayout = PhvLayout(this)
}

case class PhvField(name: String, offset: Int, width: Int)

/** A field a PHV does not carry because its value there is known (PhvPlan). */
case class PhvConstant(width: Int, value: BigInt)

/** The packet header vector as a flat bit vector: header fields, valid bits and metadata at
  * fixed offsets, packed from bit 0 in the order given. The whole PHV (`PhvLayout(cfg)`,
  * the layout the generator also writes to layout.json) holds every field; between two
  * stages the PHV holds only the fields live there, and `constants` names the live fields
  * it leaves out because their value is known (program.PhvPlan). */
case class PhvLayout(fields: Seq[PhvField], constants: Map[String, PhvConstant] = Map.empty) {
  require(fields.forall(f => !constants.contains(f.name)), "a field is either carried or constant")
  val width: Int = fields.map(_.width).sum
  private val byName = fields.map(f => f.name -> f).toMap
  /** A field the PHV carries. */
  def apply(name: String): PhvField = byName.getOrElse(name, sys.error(s"PHV has no field $name"))
  def carries(name: String): Boolean = byName.contains(name)
  /** The width of a field carried or constant here. */
  def widthOf(name: String): Int = byName.get(name).map(_.width).orElse(constants.get(name).map(_.width))
    .getOrElse(sys.error(s"PHV has no field $name"))

  /** The carried fields `keep` accepts, in this layout's order, repacked from bit 0; among
    * them, those in `known` become constants instead. */
  def select(keep: String => Boolean, known: Map[String, PhvConstant] = Map.empty): PhvLayout = {
    val kept = fields.filter(f => keep(f.name))
    PhvLayout.pack(kept.filterNot(f => known.contains(f.name)).map(f => f.name -> f.width),
      known.filter { case (n, _) => kept.exists(_.name == n) })
  }
}

object PhvLayout {
  def pack(named: Seq[(String, Int)], constants: Map[String, PhvConstant] = Map.empty): PhvLayout =
    PhvLayout(named.scanLeft(0)(_ + _._2).zip(named).map { case (off, (n, w)) => PhvField(n, off, w) }, constants)

  /** The whole PHV of a configuration (docs/packet-path.md, "PHV"). */
  def apply(cfg: MatchaConfig): PhvLayout = {
    val named = Seq.newBuilder[(String, Int)]
    cfg.graph.instances.foreach { i =>
      val p = s"hdr.${i.name}"
      named += s"$p.valid" -> 1
      named += s"$p.offset" -> cfg.offsetWidth
      i.htype.fields.foreach(f => named += s"$p.${f.name}" -> f.width)
      if (i.htype.checksum.isDefined) i.htype.writableFields.foreach(f => named += s"$p.${f.name}Orig" -> f.width)
      if (i.htype.checksum.isDefined) named += s"$p.checksumOk" -> 1
      if (i.htype.datagram.isDefined) named += s"$p.lengthOk" -> 1
    }
    cfg.pushHeaders.foreach { i =>
      named += s"push.${i.name}.valid" -> 1
      i.htype.fields.foreach(f => named += s"push.${i.name}.${f.name}" -> f.width)
    }
    named ++= Seq(
      "meta.ingressPort" -> cfg.portWidth, "meta.egressPort" -> cfg.portWidth, "meta.drop" -> 1, "meta.punt" -> 1,
      "meta.reason" -> 8, "meta.parseError" -> 8, "meta.frameLen" -> cfg.frameLenWidth,
      "meta.payloadOffset" -> cfg.offsetWidth, "meta.color" -> 2,
      "meta.learn" -> 1, "meta.sessionHit" -> 1, "meta.sessionReply" -> 1, "meta.sessionState" -> 3,
      "meta.sessionLearned" -> 1, "meta.sessionFailed" -> 1
    )
    pack(named.result())
  }

  /** `bits`, laid out as `from`, laid out as `to`: each field `to` carries comes from `from`'s
    * bits or is `from`'s constant. */
  def convert(bits: Bits, from: PhvLayout, to: PhvLayout): Bits = {
    val in = new PhvAccess(bits, from)
    Cat(to.fields.map(f => in(f.name)))
  }
}

/** Typed access to the fields of a PHV signal; a field constant in its layout reads as that
  * constant. */
class PhvAccess(val bits: Bits, val layout: PhvLayout) {
  def apply(name: String): Bits =
    if (layout.carries(name)) { val f = layout(name); bits(f.offset, f.width bits) }
    else layout.constants.get(name).map(c => B(c.value, c.width bits)).getOrElse(sys.error(s"PHV has no field $name"))
  def u(name: String): UInt = apply(name).asUInt
  def bool(name: String): Bool = apply(name)(0)
  def width(name: String): Int = layout.widthOf(name)
}
