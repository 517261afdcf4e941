// SPDX-License-Identifier: Apache-2.0
package matcha.table

import org.scalatest.funsuite.AnyFunSuite

class BucketLayoutSpec extends AnyFunSuite {
  /** Buckets of 1 to 4 beats of 16 to 128 bytes, entries of 4 to 40 bytes. */
  val layouts = for {
    beatBytes <- Seq(16, 32, 64, 128)
    beats <- Seq(1, 2, 4)
    entryBytes <- 4 to 40
    if entryBytes <= beatBytes
  } yield BucketLayout(beatBytes * beats, beats, entryBytes)

  test("every entry lies in one beat, apart from the others, inside its bucket") {
    for (l <- layouts; s <- 0 until l.slots) {
      val first = l.offset(s)
      val last = first + l.entryBytes - 1
      assert(first / l.beatBytes == last / l.beatBytes, s"$l: entry $s crosses a beat")
      assert(last < l.bucketBytes, s"$l: entry $s leaves the bucket")
      for (t <- 0 until s)
        assert(l.offset(t) + l.entryBytes <= first, s"$l: entries $t and $s overlap")
      assert(l.strobes(s) == (first to last).map(BigInt(1) << _).sum, s"$l: entry $s's strobes")
    }
  }

  /** Entries laid one after another from byte 0, one that would cross a beat moved to the
    * next beat's start, until the bucket ends. */
  def packed(l: BucketLayout): Int = {
    var (at, count) = (0, 0)
    while (at + l.entryBytes <= l.bucketBytes) {
      if (at / l.beatBytes == (at + l.entryBytes - 1) / l.beatBytes) { count += 1; at += l.entryBytes }
      else at = (at / l.beatBytes + 1) * l.beatBytes
    }
    count
  }

  test("a bucket holds as many entries as fit its beats whole, at most MAX_SLOTS") {
    for (l <- layouts)
      assert(l.slots == (packed(l) min MemExactEncoding.MaxSlots), l.toString)
    // The overlay's: two 64-byte beats, six mappings of 18 bytes (seven would cross a beat)
    // and six sessions of 19.
    assert(BucketLayout(128, 2, 18).slots == 6 && BucketLayout(128, 2, 19).slots == 6)
    assert((0 until 6).map(BucketLayout(128, 2, 18).offset) == Seq(0, 18, 36, 64, 82, 100))
  }
}
