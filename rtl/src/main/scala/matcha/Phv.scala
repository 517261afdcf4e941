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

/** The packet header vector as a flat bit vector: header fields, valid bits and metadata at
  * fixed offsets (the layout the generator also writes to layout.json). */
case class PhvLayout(cfg: MatchaConfig) {
  val fields: Seq[PhvField] = {
    val named = Seq.newBuilder[(String, Int)]
    cfg.graph.instances.foreach { i =>
      val p = s"hdr.${i.name}"
      named += s"$p.valid" -> 1
      named += s"$p.offset" -> cfg.offsetWidth
      i.htype.fields.foreach(f => named += s"$p.${f.name}" -> f.width)
      if (i.htype.checksum.isDefined) i.htype.writableFields.foreach(f => named += s"$p.${f.name}Orig" -> f.width)
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
    val list = named.result()
    list.scanLeft(0)(_ + _._2).zip(list).map { case (off, (n, w)) => PhvField(n, off, w) }
  }
  val width: Int = fields.map(f => f.offset + f.width).max
  private val byName = fields.map(f => f.name -> f).toMap
  def apply(name: String): PhvField = byName.getOrElse(name, sys.error(s"PHV has no field $name"))
}

/** Typed access to the fields of a PHV signal. */
class PhvAccess(val bits: Bits, val layout: PhvLayout) {
  def apply(name: String): Bits = { val f = layout(name); bits(f.offset, f.width bits) }
  def u(name: String): UInt = apply(name).asUInt
  def bool(name: String): Bool = apply(name)(0)
}
