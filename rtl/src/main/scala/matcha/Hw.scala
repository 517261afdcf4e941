// SPDX-License-Identifier: Apache-2.0
package matcha

import spinal.core._

object Hw {
  /** Concatenation with the first element in the most significant bits (network order);
    * SpinalHDL's `Cat` puts its first argument in the least significant bits. */
  def msbFirst(parts: Seq[Bits]): Bits = Cat(parts.reverse)

  /** `m`, in block RAM if it is deeper than 512 words. Why: Yosys 0.23 chose UltraScale+
    * LUT RAM for the bus-only stores of the Corundum-scale ACL (6,144 words) and route
    * table (4,096), which its own mapping file cannot build past 512 words
    * (lutrams_xc5v_map.v: "invalid OPTION_ABITS/WIDTH combination"); a memory that deep
    * belongs in block RAM on any target. */
  def blockRamWhenDeep[T <: Data](m: Mem[T]): Mem[T] = {
    if (m.wordCount > 512) m.addAttribute("ram_style", "block")
    m
  }

  def min(a: UInt, b: UInt): UInt = (a < b) ? a.resize(a.getWidth max b.getWidth) | b.resize(a.getWidth max b.getWidth)
}
