// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._

object Hw {
  /** Concatenation with the first element in the most significant bits (network order);
    * SpinalHDL's `Cat` puts its first argument in the least significant bits. */
  def msbFirst(parts: Seq[Bits]): Bits = Cat(parts.reverse)

  def min(a: UInt, b: UInt): UInt = (a < b) ? a.resize(a.getWidth max b.getWidth) | b.resize(a.getWidth max b.getWidth)
}
