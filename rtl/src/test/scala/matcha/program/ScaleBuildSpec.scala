// SPDX-License-Identifier: Apache-2.0
package matcha.program

import org.scalatest.funsuite.AnyFunSuite

class ScaleBuildSpec extends AnyFunSuite {
  test("the DASH build holds 32M sessions and 8M mappings a sixth full, 1M routes, and its stash") {
    val p = ScaleBuild.programs(Seq("--dash"), ScaleBuild.Dpu.sessions).head
    // 2^25 session buckets and 2^23 mapping buckets of six (docs/tables.md, "Capacity at DPU scale").
    assert(p.session.get.size == 6 * (1 << 25))
    val mapping = p.tables.find(_.name == "mapping").get
    assert(mapping.size == 6 * (1 << 23))
    assert(mapping.memory.get.stash == 2048)
    assert(p.tables.find(_.name == "route").get.size == 1 << 20)
  }
}
