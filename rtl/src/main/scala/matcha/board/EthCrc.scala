// SPDX-License-Identifier: Apache-2.0
package matcha.board

import spinal.core._

/** The Ethernet FCS (IEEE 802.3 clause 3.2.9): CRC-32, polynomial 0x04C11DB7 processed
  * least significant bit first (register polynomial 0xEDB88320), register preset to all
  * ones, the FCS is the complemented register sent least significant byte first. */
object EthCrc {
  val Init = BigInt("FFFFFFFF", 16)
  /** The register after a frame and its correct FCS have both been fed through it. */
  val Residue = BigInt("DEBB20E3", 16)

  /** The register after one more byte, bits taken least significant first. */
  def nextByte(crc: Bits, byte: Bits): Bits = {
    var c = crc ^ byte.resize(32)
    for (_ <- 0 until 8) c = (c |>> 1) ^ (c(0) ? B("xEDB88320") | B(0, 32 bits))
    c
  }
}
