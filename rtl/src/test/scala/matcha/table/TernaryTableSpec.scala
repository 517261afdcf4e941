// SPDX-License-Identifier: Apache-2.0
package matcha.table

import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class TernaryTableSpec extends AnyFunSuite {
  def elaborate[T <: Component](c: => T): SpinalReport[T] =
    SpinalConfig(targetDirectory = "target/elaboration").generateVerilog(c)

  test("the priority encoder's blocks cover every entry") {
    for (size <- 4 to 4096 by 4) {
      val c = TernaryTableConfig(32, 32, size)
      assert(isPow2(c.blockSize) && c.blocks * c.blockSize >= size && (c.blocks - 1) * c.blockSize < size, s"size $size")
      assert(log2Up(c.blocks) + log2Up(c.blockSize) >= c.indexWidth, s"size $size")
    }
  }

  test("a WRITE outlasts the distance from a lookup's row read to its action read") {
    // Rows are read in the clock after the key register, the action 4 clocks later; the
    // action copy changes in the WRITE's last clock, at least that long after the entry
    // was invalidated.
    val c = TernaryTableConfig(104, 32, 64)
    assert(c.writeClocks - 1 > 4)
  }

  for (c <- Seq(TernaryTableConfig(30, 8, 4), TernaryTableConfig(104, 32, 64), TernaryTableConfig(128, 32, 256))) {
    test(s"a ${c.size} x ${c.keyWidth}-bit unit elaborates with one 16-row memory per 4-bit chunk") {
      val report = elaborate(TernaryTableUnit(c))
      val unit = report.toplevel
      assert(unit.definitionName == "matcha_ternary_table")
      assert(unit.table.rows.size == (c.keyWidth + 3) / 4)
      unit.table.rows.foreach { case (_, m) => assert(m.depth == 16 && m.width == c.size) }
      assert(unit.table.store.wordCount == c.size && unit.table.actions.wordCount == c.size)
      val names = unit.getAllIo.map(_.getName()).toSet
      Seq("s_axil_awaddr", "lookup_valid", "lookup_payload", "result_payload_hit", "result_payload_entryIndex")
        .foreach(n => assert(names.contains(n), s"$n missing"))
      assert(unit.getAllIo.find(_.getName() == "result_payload_entryIndex").get.getBitsWidth == c.indexWidth)
    }
  }
}
