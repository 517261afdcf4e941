// SPDX-License-Identifier: Apache-2.0
package matcha.table

import spinal.core._

/** CRC-64/XZ of a key, as docs/tables.md specifies it bit-exactly: the key zero-extended to
  * whole bytes, big-endian; polynomial 0x42F0E1EBA9EA3693 reflected, init and final XOR all
  * ones. For a fixed key width the CRC is affine in the key bits, so hardware is one XOR tree
  * per output bit, derived here from the software definition. */
object Crc64 {
  private val poly = BigInt("C96C5795D7870F42", 16) // 0x42F0E1EBA9EA3693 bit-reversed
  private val ones = (BigInt(1) << 64) - 1

  def software(bytes: Seq[Int]): BigInt = {
    var crc = ones
    for (b <- bytes) {
      crc ^= BigInt(b & 0xff)
      for (_ <- 0 until 8) crc = if (crc.testBit(0)) (crc >> 1) ^ poly else crc >> 1
    }
    crc ^ ones
  }

  def keyBytes(key: BigInt, keyWidth: Int): Seq[Int] = {
    val n = (keyWidth + 7) / 8
    (0 until n).map(i => ((key >> (8 * (n - 1 - i))) & 0xff).toInt)
  }

  def ofKey(key: BigInt, keyWidth: Int): BigInt = software(keyBytes(key, keyWidth))

  /** Way `way`'s slot index for `key`: bits 16*way upward of the CRC. */
  def index(key: BigInt, keyWidth: Int, way: Int, slots: Int): Int =
    ((ofKey(key, keyWidth) >> (16 * way)) & (slots - 1)).toInt

  /** The session table's slot hash (docs/sessions.md, "Slots"): the CRC through one round of
    * PRESENT's substitution (its S-box on each nibble) and bit permutation, so that a way's
    * index bits are not linear in the key. A linear index gave keys that differ in a
    * counted-up field only half of some way's slots (bench/results/session_fill.md). */
  val presentSbox: Seq[Int] = Seq(0xC, 0x5, 0x6, 0xB, 0x9, 0x0, 0xA, 0xD, 0x3, 0xE, 0xF, 0x8, 0x4, 0x7, 0x1, 0x2)
  /** Where PRESENT's permutation takes bit `i` of 64. */
  def presentBit(i: Int): Int = if (i == 63) 63 else 16 * i % 63

  def sessionMix(h: BigInt): BigInt = {
    val substituted = (0 until 16).foldLeft(BigInt(0)) { (acc, n) =>
      acc | (BigInt(presentSbox(((h >> (4 * n)) & 0xF).toInt)) << (4 * n))
    }
    (0 until 64).filter(substituted.testBit).foldLeft(BigInt(0))((acc, i) => acc.setBit(presentBit(i)))
  }

  /** Way `way`'s slot of `key` in a session table of `slots` slots a way. */
  def sessionIndex(key: BigInt, keyWidth: Int, way: Int, slots: Int): Int =
    ((sessionMix(ofKey(key, keyWidth)) >> (16 * way)) & (slots - 1)).toInt

  /** sessionMix in hardware: each output bit a 4-input function of one nibble (a LUT4). */
  def sessionMixHardware(h: Bits): Bits = {
    require(h.getWidth == 64)
    val mixed = Bits(64 bits)
    for (n <- 0 until 16; b <- 0 until 4) {
      val truth = (0 until 16).filter(x => (presentSbox(x) >> b & 1) == 1).foldLeft(BigInt(0))(_.setBit(_))
      mixed(presentBit(4 * n + b)) := B(truth, 16 bits)(h(4 * n, 4 bits).asUInt)
    }
    mixed
  }

  /** The CRC bits `bits` of a key signal: each the parity of the key under a constant mask,
    * written as one masked reduction per bit rather than a chain of two-input XORs, so the
    * Verilog holds one expression per bit (a chain gave every tap a wire of its own, the
    * bulk of a table's Verilog and of its simulator's compile time). */
  def hardware(key: Bits, bits: Range): Bits = {
    val w = key.getWidth
    val constant = ofKey(0, w)
    val columns = (0 until w).map(j => ofKey(BigInt(1) << j, w) ^ constant)
    Cat(bits.map { b =>
      val mask = (0 until w).filter(j => columns(j).testBit(b)).foldLeft(BigInt(0))(_.setBit(_))
      val parity = (key & B(mask, w bits)).xorR
      if (constant.testBit(b)) !parity else parity
    })
  }
}
