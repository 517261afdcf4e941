// SPDX-License-Identifier: Apache-2.0
package matcha.table

import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class SessionTableSpec extends AnyFunSuite {
  def elaborate[T <: Component](c: => T): SpinalReport[T] =
    SpinalConfig(targetDirectory = "target/elaboration").generateVerilog(c)

  test("the IPv4 key is zone, protocol and two (address, port) pairs: 128 bits") {
    assert(SessionTableConfig(size = 64).keyWidth == 24 + 8 + 2 * (32 + 16))
    assert(SessionTableConfig(size = 64, addrWidth = 128).keyWidth == 24 + 8 + 2 * (128 + 16))
  }

  test("every state has a timeout register and a reset value that ages") {
    for (s <- SessionState.all) {
      val t = SessionState.defaultTimeouts(s)
      assert(t >= 1 && t < (1 << SessionTable.stampWidth) - 1, s"state $s")
    }
    val offsets = SessionState.all.map(SessionTable.Register.timeout)
    assert(offsets.distinct.size == offsets.size && offsets.forall(o => o >= 0x220 && o < 0x240))
  }

  for (c <- Seq(SessionTableConfig(size = 64), SessionTableConfig(size = 1024, ways = 2))) {
    test(s"a ${c.size}-entry, ${c.ways}-way unit elaborates with one RAM of size/ways slots per way") {
      val unit = elaborate(new SessionTableUnit(c)).toplevel
      assert(unit.definitionName == "matcha_session_table")
      assert(unit.table.ways.size == c.ways)
      unit.table.ways.foreach(m => assert(m.wordCount == c.slots))
      assert(unit.table.counters.memory.wordCount == c.size)
      val names = unit.getAllIo.map(_.getName()).toSet
      Seq("s_axil_awaddr", "packet_valid", "packet_payload_learn", "result_payload_learned", "result_payload_index")
        .foreach(n => assert(names.contains(n), s"$n missing"))
      assert(unit.getAllIo.find(_.getName() == "result_payload_index").get.getBitsWidth == c.indexWidth)
    }
  }
}
