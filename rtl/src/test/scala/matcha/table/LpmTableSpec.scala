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

  test("the fullest tree of any N prefixes fits beside the empty tree's path (a load, docs/tables.md)") {
    // The driver's load builds the tree of B <= 2N+1 boundaries in fresh nodes, each level's
    // slots spread evenly over the fewest nodes, while the empty tree keeps one node of every
    // level; level 0 (one node) is the one it rewrites. Every level below the root level
    // then needs a node fewer than it has.
    def ceil(a: Int, b: Int) = (a + b - 1) / b
    for {
      fanout <- 3 to 16
      results <- (1 to 3000) ++ (12 to LpmEncoding.LevelShift).map(1 << _)
      // Small nodes of many prefixes need more than the 2^20 nodes a level holds.
      geometry <- scala.util.Try(LpmGeometry(fanout, results)).toOption
      boundaries <- Seq(geometry.boundaries, geometry.boundaries - 1, geometry.boundaries / 2, fanout + 1, 1)
      if boundaries >= 1 && boundaries <= geometry.boundaries
    } {
      val levels = geometry.levels
      val built = Iterator.iterate(ceil(boundaries, fanout))(ceil(_, fanout)).take(levels).toSeq.reverse
      val root = built.lastIndexWhere(_ == 1) max 0
      assert(built.head == 1, s"F=$fanout N=$results B=$boundaries: ${built.head} nodes at the root level")
      for (level <- 1 until levels) {
        val need = if (level < root) 1 else built(level)
        assert(need < geometry.nodes(level), s"F=$fanout N=$results B=$boundaries: level $level needs $need fresh nodes of ${geometry.nodes(level)}")
      }
    }
  }
}
