// SPDX-License-Identifier: Apache-2.0
package matcha.table

import org.scalatest.funsuite.AnyFunSuite
import spinal.core._

class MeterTableSpec extends AnyFunSuite {
  def elaborate[T <: Component](c: => T): SpinalReport[T] =
    SpinalConfig(targetDirectory = "target/elaboration").generateVerilog(c)

  test("configurations the control window cannot describe are refused") {
    def refused(reason: String)(c: => MeterTableConfig): Unit = {
      val e = intercept[IllegalArgumentException](c)
      assert(e.getMessage.contains(reason), e.getMessage)
    }
    refused("a power of two")(MeterTableConfig(meters = 100))
    refused("a rate is one 32-bit register")(MeterTableConfig(meters = 256, rateWidth = 33))
    refused("bursts and levels are two 32-bit registers")(MeterTableConfig(meters = 256, levelWidth = 61))
    // The time base must outlast a sweep of every meter.
    refused("outlast a sweep of every meter")(MeterTableConfig(meters = 256, timestampWidth = 9))
    refused("clocks per tick")(MeterTableConfig(meters = 16, tickClocks = 0))
  }

  test("the descriptor's geometry word holds the three widths") {
    val c = MeterTableConfig(meters = 16, rateWidth = 20, levelWidth = 36, timestampWidth = 12)
    assert(c.geometry == (20 | 36 << 8 | 12 << 16))
    // READ hands back 12 DATA words: mode, CIR, PIR, two bursts and two levels of two words, time.
    assert(c.dataWidth == 12 * 32)
  }

  for (c <- Seq(MeterTableConfig(meters = 2, timestampWidth = 3), MeterTableConfig(meters = 256),
      MeterTableConfig(meters = 16, timestampWidth = 10, tickClocks = 3))) {
    test(s"${c.meters} meters elaborate with four RAMs of one word per meter") {
      val unit = elaborate(new MeterTableUnit(c)).toplevel
      assert(unit.definitionName == "matcha_meter_table")
      val m = unit.meters
      for (ram <- Seq(m.rates, m.bursts, m.levels, m.stamps)) assert(ram.wordCount == c.meters)
      assert(m.levels.width == 2 * c.levelWidth && m.bursts.width == 2 * c.levelWidth)
      assert(m.stamps.width == c.timestampWidth)
      val names = unit.getAllIo.map(_.getName()).toSet
      Seq("s_axil_awaddr", "request_valid", "request_payload_index", "request_payload_bytes",
        "request_payload_colour", "result_valid", "result_payload_colour", "now").foreach(n => assert(names.contains(n), s"$n missing"))
    }
  }
}
