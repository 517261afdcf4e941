// SPDX-License-Identifier: Apache-2.0
package matcha

import scala.collection.mutable

/** A header field: `bitOffset` counts from the first bit on the wire (network order). */
case class FieldSpec(name: String, bitOffset: Int, width: Int, writable: Boolean = false)

/** Header length taken from a field: `field * unitBytes` bytes; a value below the fixed part
  * is malformed and reported as `tooShortError`. */
case class LengthField(field: String, unitBytes: Int, tooShortError: ParseError)

/** The length of the datagram an IP header starts: `field + fixedBytes` bytes (IPv4's total
  * length counts its own header, IPv6's payload length does not count the 40 bytes). */
case class DatagramLength(field: String, fixedBytes: Int)

/** A header format. `bytes` is the fixed part the parser extracts; `length`, when present,
  * makes the header longer (options are skipped, not extracted). `checksum`: the header
  * carries an Internet checksum over its fixed part, which the parser verifies
  * (`hdr.<instance>.checksumOk`); `datagram`: the header gives its datagram's length, which
  * the parser checks against the frame (`hdr.<instance>.lengthOk`). */
case class HeaderType(
    name: String,
    bytes: Int,
    fields: Seq[FieldSpec],
    length: Option[LengthField] = None,
    version: Option[(String, Int)] = None,
    checksum: Option[String] = None,
    datagram: Option[DatagramLength] = None
) {
  def field(n: String): FieldSpec = fields.find(_.name == n).getOrElse(sys.error(s"$name has no field $n"))
  def writableFields: Seq[FieldSpec] = fields.filter(_.writable)
  /** Every byte length this header can have. */
  def possibleLengths: Seq[Int] = length match {
    case None => Seq(bytes)
    case Some(l) =>
      val maxValue = (1 << field(l.field).width) - 1
      (bytes / l.unitBytes to maxValue).map(_ * l.unitBytes)
  }
  def maxBytes: Int = possibleLengths.max
}

/** A parse-graph edge set: when the key fields equal one of the case values, go to `next`.
  * An empty key with a single case is an unconditional transition. */
case class ParseSelect(key: Seq[String], cases: Seq[(Seq[BigInt], String)])

case class HeaderInstance(name: String, htype: HeaderType)

sealed abstract class ParseError(val code: Int, val label: String)
object ParseError {
  case object Runt extends ParseError(1, "RUNT")
  case object Truncated extends ParseError(2, "TRUNCATED")
  case object Ipv4Ihl extends ParseError(3, "IPV4_IHL")
  case object BadFrame extends ParseError(4, "BAD_FRAME")
  case object TooDeep extends ParseError(5, "TOO_DEEP")
  case object IpVersion extends ParseError(6, "IP_VERSION")
  case object Oversize extends ParseError(7, "OVERSIZE")
  case object Empty extends ParseError(8, "EMPTY")
  case object TcpOffset extends ParseError(9, "TCP_OFFSET")
  val all: Seq[ParseError] = Seq(Runt, Truncated, Ipv4Ihl, BadFrame, TooDeep, IpVersion, Oversize, Empty, TcpOffset)
  /** Errors whose frames are dropped; every other error punts the frame to the host. */
  val dropped: Set[ParseError] = Set(BadFrame, Oversize, Empty)
}

/** A parse graph: header instances in topological order (root first) and their transitions. */
case class ParseGraph(instances: Seq[HeaderInstance], transitions: Map[String, ParseSelect]) {
  val root: HeaderInstance = instances.head
  def instance(n: String): HeaderInstance = instances.find(_.name == n).getOrElse(sys.error(s"no instance $n"))
  def successors(n: String): Seq[String] = transitions.get(n).toSeq.flatMap(_.cases.map(_._2)).distinct
  def predecessors(n: String): Seq[String] = instances.map(_.name).filter(p => successors(p).contains(n))

  instances.zipWithIndex.foreach { case (i, idx) =>
    successors(i.name).foreach { s =>
      require(instances.indexWhere(_.name == s) > idx, s"parse graph: ${i.name} -> $s breaks topological order")
    }
    transitions.get(i.name).foreach(_.key.foreach(i.htype.field))
  }

  /** Parser level of each instance: the longest path from the root. */
  val level: Map[String, Int] = {
    val m = mutable.LinkedHashMap[String, Int]()
    instances.foreach { i =>
      m(i.name) = (predecessors(i.name).map(m(_) + 1) :+ 0).max
    }
    m.toMap
  }
  def levels: Int = level.values.max + 1

  /** Byte offsets at which each instance can start, limited to those where its fixed part fits
    * in a window of `windowBytes` (anything further is reported as TOO_DEEP, never extracted). */
  def possibleOffsets(windowBytes: Int): Map[String, Seq[Int]] = {
    val m = mutable.LinkedHashMap[String, Set[Int]]()
    instances.foreach { i =>
      val all =
        if (i == root) Set(0)
        else predecessors(i.name).flatMap(p => for (o <- m(p); l <- instance(p).htype.possibleLengths) yield o + l).toSet
      m(i.name) = all.filter(_ + i.htype.bytes <= windowBytes)
    }
    m.map { case (k, v) => k -> v.toSeq.sorted }.toMap
  }
}

/** The headers Matcha knows and the graph of the overlay pipeline (docs/packet-path.md). */
object Headers {
  private def f(n: String, o: Int, w: Int) = FieldSpec(n, o, w)
  private def wf(n: String, o: Int, w: Int) = FieldSpec(n, o, w, writable = true)

  val ethernet = HeaderType("ethernet", 14, Seq(wf("dst", 0, 48), wf("src", 48, 48), f("etherType", 96, 16)))
  val vlan = HeaderType("vlan", 4, Seq(wf("pcp", 0, 3), wf("dei", 3, 1), wf("vid", 4, 12), f("etherType", 16, 16)))
  val ipv4 = HeaderType(
    "ipv4", 20,
    Seq(
      f("version", 0, 4), f("ihl", 4, 4), wf("dscp", 8, 6), wf("ecn", 14, 2), f("totalLen", 16, 16),
      f("identification", 32, 16), f("flags", 48, 3), f("fragOffset", 51, 13), wf("ttl", 64, 8),
      f("protocol", 72, 8), f("hdrChecksum", 80, 16), f("src", 96, 32), f("dst", 128, 32)
    ),
    length = Some(LengthField("ihl", 4, ParseError.Ipv4Ihl)),
    version = Some(("version", 4)),
    checksum = Some("hdrChecksum"),
    datagram = Some(DatagramLength("totalLen", 0))
  )
  val ipv6 = HeaderType(
    "ipv6", 40,
    Seq(
      f("version", 0, 4), wf("trafficClass", 4, 8), f("flowLabel", 12, 20), f("payloadLen", 32, 16),
      f("nextHeader", 48, 8), wf("hopLimit", 56, 8), f("src", 64, 128), f("dst", 192, 128)
    ),
    version = Some(("version", 6)),
    datagram = Some(DatagramLength("payloadLen", 40))
  )
  val udp = HeaderType("udp", 8, Seq(f("srcPort", 0, 16), f("dstPort", 16, 16), f("length", 32, 16), f("checksum", 48, 16)))
  val tcp = HeaderType(
    "tcp", 20,
    Seq(
      f("srcPort", 0, 16), f("dstPort", 16, 16), f("seqNo", 32, 32), f("ackNo", 64, 32), f("dataOffset", 96, 4),
      f("flags", 104, 8), f("window", 112, 16), f("checksum", 128, 16), f("urgentPtr", 144, 16)
    ),
    length = Some(LengthField("dataOffset", 4, ParseError.TcpOffset))
  )
  val vxlan = HeaderType("vxlan", 8, Seq(f("flags", 0, 8), f("vni", 32, 24)))

  val EtherTypeVlan = BigInt(0x8100)
  /** IEEE 802.1ad: the service tag (S-tag) in front of a customer's 802.1Q tag. */
  val EtherTypeQinq = BigInt(0x88a8)
  val EtherTypeIpv4 = BigInt(0x0800)
  val EtherTypeIpv6 = BigInt(0x86dd)
  val VxlanPort = BigInt(4789)

  private def l3(prefix: String) = Seq(EtherTypeIpv4) -> s"${prefix}ipv4"
  private def l3v6(prefix: String) = Seq(EtherTypeIpv6) -> s"${prefix}ipv6"
  private def l4FromV4(prefix: String) =
    ParseSelect(Seq("fragOffset", "protocol"), Seq(Seq(BigInt(0), BigInt(17)) -> s"${prefix}udp", Seq(BigInt(0), BigInt(6)) -> s"${prefix}tcp"))
  private def l4FromV6(prefix: String) =
    ParseSelect(Seq("nextHeader"), Seq(Seq(BigInt(17)) -> s"${prefix}udp", Seq(BigInt(6)) -> s"${prefix}tcp"))

  /** `vlan` is a frame's first tag, an 802.1ad S-tag (0x88A8) or an 802.1Q tag (0x8100);
    * `vlan2` the second tag of a QinQ stack, an 802.1Q tag behind either. */
  private def stack(p: String) = Seq(
    HeaderInstance(s"${p}eth", ethernet), HeaderInstance(s"${p}vlan", vlan), HeaderInstance(s"${p}vlan2", vlan),
    HeaderInstance(s"${p}ipv4", ipv4),
    HeaderInstance(s"${p}ipv6", ipv6), HeaderInstance(s"${p}udp", udp), HeaderInstance(s"${p}tcp", tcp)
  )
  private def stackTransitions(p: String) = Map(
    s"${p}eth" -> ParseSelect(Seq("etherType"),
      Seq(Seq(EtherTypeVlan) -> s"${p}vlan", Seq(EtherTypeQinq) -> s"${p}vlan", l3(p), l3v6(p))),
    s"${p}vlan" -> ParseSelect(Seq("etherType"), Seq(Seq(EtherTypeVlan) -> s"${p}vlan2", l3(p), l3v6(p))),
    s"${p}vlan2" -> ParseSelect(Seq("etherType"), Seq(l3(p), l3v6(p))),
    s"${p}ipv4" -> l4FromV4(p),
    s"${p}ipv6" -> l4FromV6(p)
  )

  /** Ethernet / 802.1ad or 802.1Q, up to two tags / IPv4 / IPv6 / UDP / TCP, and VXLAN on UDP 4789 with the same stack inside. */
  val overlayGraph: ParseGraph = {
    val outer = stack("")
    ParseGraph(
      outer ++ Seq(HeaderInstance("vxlan", vxlan)) ++ stack("inner_"),
      stackTransitions("") ++ stackTransitions("inner_") ++ Map(
        "udp" -> ParseSelect(Seq("dstPort"), Seq(Seq(VxlanPort) -> "vxlan")),
        "vxlan" -> ParseSelect(Nil, Seq(Nil -> "inner_eth"))
      )
    )
  }

  /** Headers a stage may push in front of the frame, emitted in this order (VXLAN encap). */
  val pushHeaders: Seq[HeaderInstance] =
    Seq(HeaderInstance("eth", ethernet), HeaderInstance("ipv4", ipv4), HeaderInstance("udp", udp), HeaderInstance("vxlan", vxlan))
}
