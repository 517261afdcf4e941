package matcha

import spinal.core._

object Hw {
  def min(a: UInt, b: UInt): UInt = (a < b) ? a.resize(a.getWidth max b.getWidth) | b.resize(a.getWidth max b.getWidth)
}
