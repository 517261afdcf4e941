// SPDX-License-Identifier: Apache-2.0
package matcha.table

import matcha.program.Overlay
import org.scalatest.funsuite.AnyFunSuite

class MemExactStashSpec extends AnyFunSuite {
  /** The keys that n keys thrown at random into n buckets of `slots` leave without room:
    * n times the expected excess of a Poisson(1) count over `slots`. */
  def refused(n: Long, slots: Int): Double = {
    val p = Iterator.iterate((0, math.exp(-1.0))) { case (k, pk) => (k + 1, pk / (k + 1)) }.take(60).toSeq
    n * p.collect { case (k, pk) if k > slots => (k - slots) * pk }.sum
  }

  test("the overlay's mapping stash holds twice the keys its buckets of six refuse, at every size") {
    for (bits <- 8 to 23) {
      val mappings = 1 << bits
      val stash = Overlay.mappingStash(mappings)
      assert(stash >= 2 * refused(mappings, 6), s"$mappings mappings: a stash of $stash for ${refused(mappings, 6)} refused keys")
      assert(stash % MemExactEncoding.StashWays == 0 && Integer.bitCount(stash / MemExactEncoding.StashWays) == 1)
    }
    assert(Overlay.mappingStash(1 << 23) == 2048 && Overlay.mappingStash(1 << 20) == 256 && Overlay.mappingStash(256) == 16)
  }

  test("a stash is 4 ways of a power of two entries, and its INDEX follows the buckets'") {
    def config(stash: Int) = MemExactTableConfig(keyWidth = 32, dataWidth = 16, buckets = 1024, stash = stash)
    for (bad <- Seq(1, 6, 12, 20, 4 * 65536 * 2)) intercept[IllegalArgumentException](config(bad))
    val c = config(16)
    assert(c.stashBase == BigInt(1024) << MemExactEncoding.SlotBits)
    assert(c.indexWidth == 10 + MemExactEncoding.SlotBits + 1 && (BigInt(1) << c.indexWidth) >= c.stashBase + c.stash)
    assert(config(0).indexWidth == 10 + MemExactEncoding.SlotBits)
  }
}
