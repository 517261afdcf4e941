// SPDX-License-Identifier: Apache-2.0
package matcha.table

import org.scalatest.funsuite.AnyFunSuite
import spinal.core._
import spinal.lib.bus.amba4.axi.Axi4Config

class LpmTableSpec extends AnyFunSuite {
  test("a table of 2^20 prefixes, as many results as INDEX numbers, elaborates with its window") {
    // The lowest two of 9-slot IPv4 levels in memory, as a full Internet table's (docs/tables.md).
    val c = LpmTableConfig(32, 32, fanout = 9, results = 1 << LpmEncoding.LevelShift, memory = Some(LpmMemory(2,
      MemoryTiming(latency = 512, memoryLatency = 320, outstanding = 512),
      Axi4Config(addressWidth = 34, dataWidth = 512, idWidth = 8, useRegion = false))))
    assert(c.pointerBits == 20)
    val unit = SpinalConfig(targetDirectory = "target/elaboration")
      .generateVerilog(LpmTableUnit(c, "matcha_lpm32_million")).toplevel
    assert(unit.definitionName == "matcha_lpm32_million")
    assert(unit.table.results.wordCount == c.results)
  }
}
