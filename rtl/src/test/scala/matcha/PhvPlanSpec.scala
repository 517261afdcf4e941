// SPDX-License-Identifier: Apache-2.0
package matcha

import matcha.program._
import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class PhvPlanSpec extends AnyFunSuite {
  val cfg = MatchaConfig("w64", 64)

  test("the built-in program's stage carries past its keys only what it writes and the deparser needs") {
    val plan = PhvPlan(cfg, Programs.l2l3.steps)
    val Seq(in, out) = plan.boundaries
    val carried = plan.stepPhv.head.carried
    // The ACL's keys enter the stage and are not carried past the key clock: nothing after
    // reads them and the deparser emits them from the frame.
    for (f <- Seq("hdr.ipv4.src", "hdr.ipv4.dst", "hdr.tcp.srcPort", "hdr.udp.dstPort", "meta.parseError")) {
      assert(in.carries(f), f)
      assert(!carried.carries(f) && !out.carries(f), f)
    }
    // Written fields the deparser writes back, the TTL's checksum update and the output's metadata.
    for (f <- Seq("hdr.eth.dst", "hdr.eth.src", "hdr.eth.valid", "hdr.ipv4.ttl", "hdr.ipv4.ttlOrig", "hdr.ipv4.hdrChecksum",
        "hdr.ipv4.protocol", "hdr.ipv4.valid", "hdr.ipv4.offset", "meta.egressPort", "meta.drop", "meta.punt", "meta.reason",
        "meta.frameLen"))
      assert(out.carries(f), f)
    // Parsed and never read or written: carried nowhere.
    for (f <- Seq("hdr.tcp.seqNo", "hdr.inner_ipv6.src", "hdr.vlan.vid", "hdr.inner_eth.dst", "hdr.ipv4.dscpOrig", "meta.ingressPort"))
      assert(plan.boundaries.forall(!_.carries(f)), f)
    // The root starts the frame and nothing pushes: constants, not bits.
    for (b <- plan.boundaries; f <- Seq("push.ipv4.valid", "push.vxlan.vni", "hdr.eth.offset"))
      assert(!b.carries(f), f)
    assert(out.constants.contains("push.eth.valid"))
    assert(out.width < cfg.layout.width / 10, s"${out.width} bits reach the deparser")
  }

  test("a field an action writes is carried from that stage to the one that reads it, and no further") {
    val plan = PhvPlan(cfg, Programs.conntrack.steps) // acl, sessions, by_session
    val b = plan.boundaries
    assert(b(0).constants.contains("meta.learn") && !b(0).carries("meta.learn"))
    assert(b(1).carries("meta.learn")) // acl's permit sets it, the session stage reads it
    assert(!b(2).carries("meta.learn") && !b(3).carries("meta.learn"))
    assert(b(2).carries("meta.sessionHit") && b(2).carries("meta.sessionLearned")) // by_session's key
    assert(Seq(0, 1).forall(i => b(i).constants.contains("meta.sessionHit")))
    assert(b.forall(!_.carries("meta.sessionState"))) // written, read by nothing
    assert(!b(3).carries("meta.sessionHit"))
    assert(!b(2).carries("hdr.ipv4.src") && b(1).carries("hdr.ipv4.src")) // the session stage's input
  }

  test("a meter reads the colour and length after the lookups; the next stage reads the colour") {
    val plan = PhvPlan(cfg, Programs.policer.steps) // police, by_colour
    assert(plan.stepPhv(0).carried.carries("meta.frameLen"))
    assert(plan.stepPhv(0).in.constants.contains("meta.color"))
    assert(plan.boundaries(1).carries("meta.color"))
    assert(!plan.boundaries(2).carries("meta.color"))
    assert(plan.boundaries(2).carries("hdr.ipv4.dscp") && plan.boundaries(2).carries("hdr.ipv4.dscpOrig"))
    // The checksum update sums the words of every writable field; only dscp has an Orig.
    assert(plan.boundaries(2).carries("hdr.ipv4.ecn") && plan.boundaries(2).carries("hdr.ipv4.ttl"))
    assert(!plan.boundaries(2).carries("hdr.ipv4.ttlOrig") && !plan.boundaries(2).carries("hdr.ipv4.src"))
  }

  test("the deparser alone reads every writable field; behind no program it reads no header") {
    val all = Deparser.reads(cfg, _ => true)
    for (i <- cfg.graph.instances; f <- i.htype.writableFields) assert(all(s"hdr.${i.name}.${f.name}"))
    val none = Deparser.reads(cfg, _ => false)
    assert(!none.exists(_.startsWith("hdr.")), none.filter(_.startsWith("hdr.")))
  }

  test("the packet path is built as the plan says") {
    for (p <- Programs.all) {
      val top = Generate.spinal("target/elaboration").generateVerilog(new PacketPath(cfg, Some(p))).toplevel
      val plan = PhvPlan(cfg, p)
      assert(top.phvFifo.io.push.payload.getWidth == plan.deparser.width, p.name)
      for ((stage, phv) <- top.stages.zip(plan.stepPhv)) {
        assert(stage.input.payload.getWidth == phv.in.width, p.name)
        assert(stage.output.payload.getWidth == phv.out.width, p.name)
        val line = stage match {
          case s: MatchStage => s.delayLine
          case s: SessionStage => s.delayLine
        }
        assert(line.input.payload.getWidth == phv.carried.width, p.name)
      }
    }
  }
}
