// SPDX-License-Identifier: Apache-2.0
package matcha

import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class ParseGraphSpec extends AnyFunSuite {
  val graph = Headers.overlayGraph

  test("levels follow the longest path from Ethernet") {
    assert(graph.level("eth") == 0)
    assert(graph.level("vlan") == 1)
    assert(graph.level("vlan2") == 2)
    assert(graph.level("ipv4") == 3)
    assert(graph.level("udp") == 4)
    assert(graph.level("vxlan") == 5)
    assert(graph.level("inner_tcp") == 10)
    assert(graph.levels == 11)
  }

  test("QinQ: an 802.1ad or 802.1Q tag is the first, an 802.1Q tag behind it the second") {
    val tags = graph.transitions("eth").cases.collect { case (Seq(t), "vlan") => t }
    assert(tags.toSet == Set(BigInt(0x8100), BigInt(0x88a8)))
    assert(graph.transitions("vlan").cases.collect { case (Seq(t), "vlan2") => t } == Seq(BigInt(0x8100)))
    assert(!graph.successors("vlan2").contains("vlan2"))
  }

  test("possible offsets come from the graph, IPv4 options included") {
    val offsets = graph.possibleOffsets(128)
    assert(offsets("ipv4") == Seq(14, 18, 22))
    assert(offsets("ipv6") == Seq(14, 18, 22))
    assert(offsets("udp") == ((34 to 82 by 4) ++ Seq(54, 58, 62)).distinct.sorted)
    assert(offsets("inner_eth").min == 50)
    // Nothing is ever extracted from beyond the window.
    offsets.foreach { case (n, os) => assert(os.forall(_ + graph.instance(n).htype.bytes <= 128), n) }
  }

  test("a transition against topological order is refused") {
    val e = HeaderInstance("eth", Headers.ethernet)
    val v = HeaderInstance("vlan", Headers.vlan)
    intercept[IllegalArgumentException] {
      ParseGraph(Seq(e, v), Map("vlan" -> ParseSelect(Seq("etherType"), Seq(Seq(BigInt(1)) -> "eth"))))
    }
  }

  test("IPv4 length runs from 20 to 60 bytes") {
    assert(Headers.ipv4.possibleLengths == (20 to 60 by 4))
  }
}

class PhvLayoutSpec extends AnyFunSuite {
  test("fields are packed without overlap and the width is their sum") {
    val layout = MatchaConfig("t", 64).layout
    val sorted = layout.fields.sortBy(_.offset)
    sorted.sliding(2).foreach { case Seq(a, b) => assert(a.offset + a.width == b.offset, s"${a.name} / ${b.name}") }
    assert(layout.width == layout.fields.map(_.width).sum)
    assert(layout("hdr.ipv4.ttlOrig").width == 8)
    assert(layout("push.vxlan.vni").width == 24)
  }
}

class ElaborationSpec extends AnyFunSuite {
  def elaborate[T <: Component](c: => T): SpinalReport[T] =
    SpinalConfig(targetDirectory = "target/elaboration").generateVerilog(c)

  for (width <- Seq(64, 128, 256, 512)) {
    test(s"packet path elaborates at $width bits with its ports named") {
      val report = elaborate(new PacketPath(MatchaConfig(s"w$width", width)))
      val names = report.toplevel.getAllIo.map(_.getName()).toSet
      Seq("s_axis_tdata", "s_axis_tkeep", "s_axis_tuser", "m_axis_tdata", "m_axis_tuser", "drop_valid").foreach { n =>
        assert(names.contains(n), s"$n missing from ${names.toSeq.sorted.mkString(", ")}")
      }
      assert(report.toplevel.inputStage.getName() == "inputStage")
      assert(report.toplevel.getAllIo.find(_.getName() == "s_axis_tdata").get.getBitsWidth == width)
    }
  }

  test("a header window of 64 bytes elaborates") {
    elaborate(new Parser(MatchaConfig("small", 64, headerBytes = 64)))
  }

  test("parser latency is one clock per graph level plus the result register") {
    val report = elaborate(new Parser(MatchaConfig("t", 64)))
    assert(report.toplevel.latency == Headers.overlayGraph.levels + 1)
  }
}

class Crc64Spec extends AnyFunSuite {
  import matcha.table.Crc64

  test("CRC-64/XZ gives the catalogued check value") {
    assert(Crc64.software("123456789".map(_.toInt)) == BigInt("995DC9BBDF1939FA", 16))
  }

  test("the hashes agree with the shared test vectors") {
    val file = new java.io.File("../tb/model/vectors/hash_vectors.json")
    assert(file.exists(), s"$file is missing")
    val text = scala.io.Source.fromFile(file).mkString
    val vector = """\{\s*"keyBits":\s*(\d+),\s*"key":\s*"([0-9a-fA-F]*)",\s*"crc64":\s*"([0-9a-fA-Fx]+)",\s*"index":\s*\{\s*"slots":\s*(\d+),\s*"ways":\s*\[([0-9,\s]+)\]\},\s*"session":\s*\{\s*"slots":\s*(\d+),\s*"ways":\s*\[([0-9,\s]+)\]""".r
    val found = vector.findAllMatchIn(text).toSeq
    assert(found.size >= 10, "too few vectors recognised")
    for (m <- found) {
      val bits = m.group(1).toInt
      val key = if (m.group(2).isEmpty) BigInt(0) else BigInt(m.group(2), 16)
      val crc = BigInt(m.group(3).stripPrefix("0x"), 16)
      val slots = m.group(4).toInt
      val ways = m.group(5).split(",").map(_.trim.toInt)
      assert(Crc64.ofKey(key, bits) == crc, s"key ${m.group(2)}")
      ways.zipWithIndex.foreach { case (idx, w) => assert(Crc64.index(key, bits, w, slots) == idx) }
      val sessionSlots = m.group(6).toInt
      m.group(7).split(",").map(_.trim.toInt).zipWithIndex.foreach { case (idx, w) =>
        assert(Crc64.sessionIndex(key, bits, w, sessionSlots) == idx, s"key ${m.group(2)} session way $w")
      }
    }
  }
}
